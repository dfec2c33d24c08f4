-- A document chunk's keyword-only words (`segment.keyword_words`, as a message's search
-- context holds them): the character bigrams of its Chinese and Japanese text, its words in
-- compatibility forms as a query reads them, its emoji by name. A chunk's 酵母 was found by no
-- query: the query asks for bigrams, the chunk's text is one unbroken run to the tokenizer.
-- Chunks indexed before hold none until their document is read again (`palimpsest index --full`).
ALTER TABLE document_chunks ADD COLUMN keywords TEXT NOT NULL DEFAULT '';
DROP TRIGGER document_chunks_ai;
DROP TRIGGER document_chunks_ad;
DROP TABLE document_chunks_fts;
CREATE VIRTUAL TABLE document_chunks_fts USING fts5(
    heading_path, text, keywords,
    content='document_chunks', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER document_chunks_ai AFTER INSERT ON document_chunks BEGIN
    INSERT INTO document_chunks_fts(rowid, heading_path, text, keywords) VALUES (new.rowid, new.heading_path, new.text, new.keywords);
END;
CREATE TRIGGER document_chunks_ad AFTER DELETE ON document_chunks BEGIN
    INSERT INTO document_chunks_fts(document_chunks_fts, rowid, heading_path, text, keywords)
    VALUES ('delete', old.rowid, old.heading_path, old.text, old.keywords);
END;
INSERT INTO document_chunks_fts(document_chunks_fts) VALUES ('rebuild');
