-- Tags (key:value) on sessions and summaries, the reviewed vocabulary, and applied tag ops.
-- `session_id` is the session the target belongs to (itself, or a summary's session):
-- filters and counts join on it. See palimpsest/tags.py.
CREATE TABLE tags (
    target_type text NOT NULL,          -- session | summary
    target_id text NOT NULL,
    session_id text NOT NULL,
    key text NOT NULL,
    value text NOT NULL,
    state text NOT NULL,                -- suggested | accepted | rejected
    origin text NOT NULL,               -- rule | model | person
    source text,                        -- what the suggestion was drawn from (a leaf summary id, …)
    note text,
    created_at text NOT NULL,
    decided_at text,
    PRIMARY KEY (target_type, target_id, key, value)
);
CREATE INDEX tags_kv ON tags (key, value, state, session_id);
CREATE INDEX tags_session ON tags (session_id, state);
CREATE INDEX tags_state ON tags (state, created_at);

-- merged_into: this value is an alias of (key, merged_into).
CREATE TABLE tag_taxonomy (
    key text NOT NULL,
    value text NOT NULL,
    state text NOT NULL,                -- suggested | accepted | rejected | merged
    origin text NOT NULL,
    description text,
    merged_into text,
    created_at text NOT NULL,
    decided_at text,
    PRIMARY KEY (key, value)
);

CREATE TABLE tag_ops (
    op_key text PRIMARY KEY,
    applied_at text NOT NULL
);
