-- Sessions, messages with full-text and trigram indexes, journal cursors.
-- The extensions (vector, pg_trgm, unaccent) are created by postgres.py before this
-- runs, so a missing one gets a clear error instead of a migration failure.

-- Full text: English stemming like SQLite's porter tokenizer, diacritics removed like
-- unicode61's remove_diacritics, and no stop-word list: the search layer already drops
-- stop words from queries, and keeps them when a query holds nothing else.
CREATE TEXT SEARCH DICTIONARY palimpsest_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION palimpsest (COPY = english);
ALTER TEXT SEARCH CONFIGURATION palimpsest
    ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
    WITH unaccent, palimpsest_stem;

CREATE TABLE sessions (
    id text PRIMARY KEY,
    key text,
    agent text,
    channel text,
    title text,
    kind text NOT NULL DEFAULT 'normal',
    settings jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX sessions_agent ON sessions (agent);
CREATE INDEX sessions_channel ON sessions (channel);
CREATE INDEX sessions_kind_updated ON sessions (kind, updated_at);

CREATE TABLE messages (
    rowid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    session_id text NOT NULL,
    type text NOT NULL DEFAULT 'message',
    role text,
    content text NOT NULL DEFAULT '',
    tool_name text,
    tool_args text,
    tool_result text,
    metadata text NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    event_key text NOT NULL,
    importance double precision NOT NULL DEFAULT 0.5,
    access_count integer NOT NULL DEFAULT 0,
    last_accessed_at timestamptz,
    truncated boolean NOT NULL DEFAULT false,
    full_content_length integer,
    full_tool_result_length integer,
    journal_path text NOT NULL DEFAULT '',
    journal_line bigint NOT NULL DEFAULT 0,
    journal_offset bigint NOT NULL DEFAULT 0,
    -- Weights mirror SQLite's bm25(messages_fts, 1.0, 0.5, 0.5): content A, tool fields B.
    fts tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('palimpsest', content), 'A')
        || setweight(to_tsvector('palimpsest', coalesce(tool_name, '')), 'B')
        || setweight(to_tsvector('palimpsest', coalesce(tool_result, '')), 'B')
    ) STORED,
    UNIQUE (session_id, event_key)
);
CREATE INDEX messages_session_time ON messages (session_id, created_at);
CREATE INDEX messages_time ON messages (created_at);
CREATE INDEX messages_fts ON messages USING gin (fts);
-- Substring mode: one trigram index per field, so a match never spans the two.
CREATE INDEX messages_content_trgm ON messages USING gin (content gin_trgm_ops);
CREATE INDEX messages_tool_result_trgm ON messages USING gin (tool_result gin_trgm_ops);

CREATE TABLE journal_cursors (
    session_id text PRIMARY KEY,
    line bigint NOT NULL,
    byte_offset bigint NOT NULL
);
