-- Tags (key:value) on sessions and summaries, the reviewed vocabulary, and applied tag ops.
-- `session_id` is the session the target belongs to (itself, or a summary's session):
-- filters and counts join on it. See palimpsest/tags.py.
CREATE TABLE tags (
    target_type TEXT NOT NULL,          -- session | summary
    target_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    state TEXT NOT NULL,                -- suggested | accepted | rejected
    origin TEXT NOT NULL,               -- rule | model | person
    source TEXT,                        -- what the suggestion was drawn from (a leaf summary id, …)
    note TEXT,
    created_at TEXT NOT NULL,
    decided_at TEXT,
    PRIMARY KEY (target_type, target_id, key, value)
);
CREATE INDEX tags_kv ON tags (key, value, state, session_id);
CREATE INDEX tags_session ON tags (session_id, state);
CREATE INDEX tags_state ON tags (state, created_at);

-- merged_into: this value is an alias of (key, merged_into).
CREATE TABLE tag_taxonomy (
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    state TEXT NOT NULL,                -- suggested | accepted | rejected | merged
    origin TEXT NOT NULL,
    description TEXT,
    merged_into TEXT,
    created_at TEXT NOT NULL,
    decided_at TEXT,
    PRIMARY KEY (key, value)
);

CREATE TABLE tag_ops (
    op_key TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
);
