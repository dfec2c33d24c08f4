-- A fact's keyword-only words (`segment.keyword_words`, as a document chunk's hold them since
-- 0018): the character bigrams of its Chinese and Japanese text, its words in compatibility forms
-- as a query reads them, its emoji by name. "主人公の名前はソラ。" is one unbroken run to the
-- parser, so "主人公の名前は？" (asking for bigrams) found it only by its cosine — and the English
-- model puts any two Japanese or Chinese texts 0.5–0.8 apart, so every such fact came back for every
-- such question. Facts written before are given theirs at open (`migrations.fact_keywords`).
ALTER TABLE facts ADD COLUMN keywords text NOT NULL DEFAULT '';
ALTER TABLE facts DROP COLUMN fts;
ALTER TABLE facts ADD COLUMN fts tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('palimpsest', palimpsest_words(text)), 'A')
    || setweight(to_tsvector('palimpsest', palimpsest_words(entities::text)), 'B')
    || setweight(to_tsvector('palimpsest', palimpsest_words(keywords)), 'A')
) STORED;
CREATE INDEX facts_fts ON facts USING gin (fts);
