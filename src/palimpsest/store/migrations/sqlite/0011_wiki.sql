-- The wiki: topic pages mined from leaf summaries, versioned by patches (palimpsest/wiki).
-- JSON lists are stored as text. `wiki_ops` records applied journaled changes (replay once).
CREATE TABLE wiki_topics (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    kind TEXT NOT NULL,                 -- person | project | system | subject | topic
    tag TEXT,                           -- the key:value tag that names it, if any
    entities TEXT NOT NULL DEFAULT '[]',
    aliases TEXT NOT NULL DEFAULT '[]',
    version INTEGER NOT NULL DEFAULT 0,
    merged_into TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX wiki_topics_title ON wiki_topics (title);

CREATE TABLE wiki_keys (
    key TEXT NOT NULL,                  -- a normalised title, alias or tag value
    topic_id TEXT NOT NULL,
    origin TEXT NOT NULL,               -- title | alias | tag
    PRIMARY KEY (key, topic_id)
);
CREATE INDEX wiki_keys_topic ON wiki_keys (topic_id);

CREATE TABLE wiki_statements (
    id TEXT PRIMARY KEY,
    topic_id TEXT NOT NULL,
    text TEXT NOT NULL,
    norm TEXT NOT NULL,
    state TEXT NOT NULL,                -- current | disputed | retired
    who TEXT,
    said_at TEXT,
    summaries TEXT NOT NULL DEFAULT '[]',
    messages TEXT NOT NULL DEFAULT '[]',
    facts TEXT NOT NULL DEFAULT '[]',
    disputed_with TEXT NOT NULL DEFAULT '[]',
    retired_by TEXT,                    -- the patch that retired it
    note TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX wiki_statements_topic ON wiki_statements (topic_id, state);

CREATE TABLE wiki_patches (
    id TEXT PRIMARY KEY,
    topic_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    summary_id TEXT,
    origin TEXT NOT NULL,               -- llm | fallback | person | tags
    pipeline_version INTEGER NOT NULL,
    ops TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (topic_id, version)
);

CREATE TABLE wiki_leaves (
    summary_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    version INTEGER NOT NULL,           -- WIKI_PIPELINE_VERSION it was mined at
    origin TEXT NOT NULL,
    topics TEXT NOT NULL DEFAULT '[]',
    mined_at TEXT NOT NULL
);
CREATE INDEX wiki_leaves_version ON wiki_leaves (version);

CREATE TABLE wiki_mentions (
    key TEXT NOT NULL,
    summary_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    title TEXT NOT NULL,
    kind TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (key, summary_id)
);

CREATE TABLE wiki_ops (
    op_key TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
);
