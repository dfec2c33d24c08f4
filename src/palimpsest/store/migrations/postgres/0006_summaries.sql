-- The summary DAG (leaf 0 → branch 1 → root 2), its sources, LLM token accounting.
CREATE TABLE summaries (
    rowid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    session_id text NOT NULL,
    depth integer NOT NULL,
    content text NOT NULL,
    message_count integer NOT NULL,
    earliest_at timestamptz NOT NULL,
    latest_at timestamptz NOT NULL,
    model text NOT NULL,
    created_at timestamptz NOT NULL,
    superseded_by text,
    fts tsvector GENERATED ALWAYS AS (to_tsvector('palimpsest', content)) STORED
);
CREATE INDEX summaries_session ON summaries (session_id, depth, earliest_at);
CREATE INDEX summaries_fts ON summaries USING gin (fts);

-- kind: 'message' (a leaf's messages) or 'summary' (a branch's or root's children).
CREATE TABLE summary_sources (
    summary_id text NOT NULL,
    source_id text NOT NULL,
    kind text NOT NULL,
    ordinal integer NOT NULL,
    session_id text NOT NULL,
    PRIMARY KEY (summary_id, source_id)
);
CREATE INDEX summary_sources_source ON summary_sources (source_id);
CREATE UNIQUE INDEX summary_sources_one_leaf ON summary_sources (source_id) WHERE kind = 'message';
CREATE INDEX summary_sources_session ON summary_sources (session_id, kind);

CREATE TABLE summary_vectors (
    summary_rowid bigint NOT NULL REFERENCES summaries (rowid),
    model text NOT NULL,
    dim integer NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (model, summary_rowid)
);

CREATE TABLE llm_usage (
    task text PRIMARY KEY,
    calls bigint NOT NULL DEFAULT 0,
    prompt_tokens bigint NOT NULL DEFAULT 0,
    completion_tokens bigint NOT NULL DEFAULT 0,
    failures bigint NOT NULL DEFAULT 0,
    invalid bigint NOT NULL DEFAULT 0
);
