-- A message's search context (speaker, date, the turn before it), indexed with the
-- message at a lower weight (C), as SQLite's fts5 column `context` (bm25 weight 0.5).
-- A generated column's expression cannot be altered in PostgreSQL 15: drop and re-add.
ALTER TABLE messages ADD COLUMN context text NOT NULL DEFAULT '';
ALTER TABLE messages DROP COLUMN fts;
ALTER TABLE messages ADD COLUMN fts tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('palimpsest', content), 'A')
    || setweight(to_tsvector('palimpsest', coalesce(tool_name, '')), 'B')
    || setweight(to_tsvector('palimpsest', coalesce(tool_result, '')), 'B')
    || setweight(to_tsvector('palimpsest', context), 'C')
) STORED;
CREATE INDEX messages_fts ON messages USING gin (fts);
