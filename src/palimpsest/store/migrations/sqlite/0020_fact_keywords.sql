-- A fact's keyword-only words (`segment.keyword_words`, as a document chunk's hold them since
-- 0019): the character bigrams of its Chinese and Japanese text, its words in compatibility forms
-- as a query reads them, its emoji by name. "主人公の名前はソラ。" is one unbroken run to the
-- tokenizer, so "主人公の名前は？" (asking for bigrams) found it only by its cosine — and the English
-- model puts any two Japanese or Chinese texts 0.5–0.8 apart, so every such fact came back for every
-- such question. Facts written before are given theirs at open (`migrations.fact_keywords`).
ALTER TABLE facts ADD COLUMN keywords TEXT NOT NULL DEFAULT '';
DROP TRIGGER facts_ai;
DROP TABLE facts_fts;
CREATE VIRTUAL TABLE facts_fts USING fts5(
    text, entities, keywords,
    content='facts', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, text, entities, keywords) VALUES (new.rowid, new.text, new.entities, new.keywords);
END;
CREATE TRIGGER facts_au AFTER UPDATE OF keywords ON facts BEGIN
    INSERT INTO facts_fts(facts_fts, rowid, text, entities, keywords) VALUES ('delete', old.rowid, old.text, old.entities, old.keywords);
    INSERT INTO facts_fts(rowid, text, entities, keywords) VALUES (new.rowid, new.text, new.entities, new.keywords);
END;
INSERT INTO facts_fts(facts_fts) VALUES ('rebuild');
