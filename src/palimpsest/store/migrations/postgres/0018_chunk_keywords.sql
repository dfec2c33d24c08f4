-- A document chunk's keyword-only words (`segment.keyword_words`, as a message's search
-- context holds them): the character bigrams of its Chinese and Japanese text, its words in
-- compatibility forms as a query reads them, its emoji by name. A chunk's 酵母 was found by no
-- query: the query asks for bigrams, the chunk's text is one unbroken run to the parser.
-- Chunks indexed before hold none until their document is read again (`palimpsest index --full`).
ALTER TABLE document_chunks ADD COLUMN keywords text NOT NULL DEFAULT '';
ALTER TABLE document_chunks DROP COLUMN fts;
ALTER TABLE document_chunks ADD COLUMN fts tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('palimpsest', palimpsest_words(heading_path)), 'B')
    || setweight(to_tsvector('palimpsest', palimpsest_words(text)), 'A')
    || setweight(to_tsvector('palimpsest', palimpsest_words(keywords)), 'A')
) STORED;
CREATE INDEX document_chunks_fts ON document_chunks USING gin (fts);
