-- SQLite's FTS5 (`unicode61`) cuts words at every mark that is not a letter or a digit: the path
-- src/palimpsest/search/messages.py is the words src, palimpsest, search, messages, py, and
-- "messages.py", "test_module_17" or "fly.io" find it. PostgreSQL's parser reads a path, a host, an
-- e-mail address or a version as one token of its own ('src/palimpsest/search/messages.py'), so on
-- PostgreSQL a message naming a path was found by the whole path only. The marks that join such
-- tokens become spaces before parsing (`palimpsest_words`), and each query term is cut the same
-- way (store/postgres/rows.py `_words`). As in 0011, each generated column is dropped and re-added
-- (one table rewrite each), with its GIN index.
CREATE FUNCTION palimpsest_words(text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT translate($1, '/._:@=+~#\?&%|-', '               ') $$;

ALTER TABLE messages DROP COLUMN fts;
ALTER TABLE messages ADD COLUMN fts tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('palimpsest', palimpsest_words(content)), 'A')
    || setweight(to_tsvector('palimpsest', palimpsest_words(coalesce(tool_name, ''))), 'B')
    || setweight(to_tsvector('palimpsest', palimpsest_words(coalesce(tool_result, ''))), 'B')
    || setweight(to_tsvector('palimpsest', palimpsest_words(context)), 'C')
) STORED;
CREATE INDEX messages_fts ON messages USING gin (fts);

ALTER TABLE facts DROP COLUMN fts;
ALTER TABLE facts ADD COLUMN fts tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('palimpsest', palimpsest_words(text)), 'A')
    || setweight(to_tsvector('palimpsest', palimpsest_words(entities::text)), 'B')
) STORED;
CREATE INDEX facts_fts ON facts USING gin (fts);

ALTER TABLE summaries DROP COLUMN fts;
ALTER TABLE summaries ADD COLUMN fts tsvector GENERATED ALWAYS AS (to_tsvector('palimpsest', palimpsest_words(content))) STORED;
CREATE INDEX summaries_fts ON summaries USING gin (fts);

ALTER TABLE document_chunks DROP COLUMN fts;
ALTER TABLE document_chunks ADD COLUMN fts tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('palimpsest', palimpsest_words(heading_path)), 'B')
    || setweight(to_tsvector('palimpsest', palimpsest_words(text)), 'A')
) STORED;
CREATE INDEX document_chunks_fts ON document_chunks USING gin (fts);
