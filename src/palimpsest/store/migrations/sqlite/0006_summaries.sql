-- The summary DAG (leaf 0 → branch 1 → root 2), its sources, LLM token accounting.
CREATE TABLE summaries (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    depth INTEGER NOT NULL,
    content TEXT NOT NULL,
    message_count INTEGER NOT NULL,
    earliest_at TEXT NOT NULL,
    latest_at TEXT NOT NULL,
    model TEXT NOT NULL,
    created_at TEXT NOT NULL,
    superseded_by TEXT
);
CREATE INDEX summaries_session ON summaries(session_id, depth, earliest_at);

-- kind: 'message' (a leaf's messages) or 'summary' (a branch's or root's children).
CREATE TABLE summary_sources (
    summary_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    PRIMARY KEY (summary_id, source_id)
);
CREATE INDEX summary_sources_source ON summary_sources(source_id);
CREATE UNIQUE INDEX summary_sources_one_leaf ON summary_sources(source_id) WHERE kind = 'message';
CREATE INDEX summary_sources_session ON summary_sources(session_id, kind);

CREATE VIRTUAL TABLE summaries_fts USING fts5(
    content,
    content='summaries', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TABLE summary_vectors (
    summary_rowid INTEGER NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, summary_rowid)
);

CREATE TABLE llm_usage (
    task TEXT PRIMARY KEY,
    calls INTEGER NOT NULL DEFAULT 0,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    invalid INTEGER NOT NULL DEFAULT 0
);
