-- Stem with the original Porter algorithm, as SQLite's FTS5 `porter` tokenizer does, not
-- Snowball's `english` (Porter2): the two disagree on words like dying (dy / die), skies
-- (ski / sky), news (new / news), generously (gener / generous), and the backends should
-- match the same messages for the same words. Still no stop-word list (FTS5 keeps every
-- word; the search layer drops stop words from queries).
-- The stored tsvectors were computed with the old stemmer, and a generated column's
-- expression cannot be re-evaluated in place in PostgreSQL 15: each is dropped and re-added
-- (one table rewrite each), with its GIN index.
CREATE TEXT SEARCH DICTIONARY palimpsest_porter (TEMPLATE = snowball, Language = porter);
ALTER TEXT SEARCH CONFIGURATION palimpsest
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
    WITH unaccent, palimpsest_porter;

ALTER TABLE messages DROP COLUMN fts;
ALTER TABLE messages ADD COLUMN fts tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('palimpsest', content), 'A')
    || setweight(to_tsvector('palimpsest', coalesce(tool_name, '')), 'B')
    || setweight(to_tsvector('palimpsest', coalesce(tool_result, '')), 'B')
    || setweight(to_tsvector('palimpsest', context), 'C')
) STORED;
CREATE INDEX messages_fts ON messages USING gin (fts);

ALTER TABLE facts DROP COLUMN fts;
ALTER TABLE facts ADD COLUMN fts tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('palimpsest', text), 'A')
    || setweight(to_tsvector('palimpsest', entities::text), 'B')
) STORED;
CREATE INDEX facts_fts ON facts USING gin (fts);

ALTER TABLE summaries DROP COLUMN fts;
ALTER TABLE summaries ADD COLUMN fts tsvector GENERATED ALWAYS AS (to_tsvector('palimpsest', content)) STORED;
CREATE INDEX summaries_fts ON summaries USING gin (fts);

ALTER TABLE document_chunks DROP COLUMN fts;
ALTER TABLE document_chunks ADD COLUMN fts tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('palimpsest', heading_path), 'B') || setweight(to_tsvector('palimpsest', text), 'A')
) STORED;
CREATE INDEX document_chunks_fts ON document_chunks USING gin (fts);
