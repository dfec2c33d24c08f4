-- The wiki: topic pages mined from leaf summaries, versioned by patches (palimpsest/wiki).
-- JSON lists are stored as text. `wiki_ops` records applied journaled changes (replay once).
CREATE TABLE wiki_topics (
    id text PRIMARY KEY,
    title text NOT NULL,
    kind text NOT NULL,                 -- person | project | system | subject | topic
    tag text,                           -- the key:value tag that names it, if any
    entities text NOT NULL DEFAULT '[]',
    aliases text NOT NULL DEFAULT '[]',
    version integer NOT NULL DEFAULT 0,
    merged_into text,
    created_at text NOT NULL,
    updated_at text NOT NULL
);
CREATE INDEX wiki_topics_title ON wiki_topics (title);

CREATE TABLE wiki_keys (
    key text NOT NULL,                  -- a normalised title, alias or tag value
    topic_id text NOT NULL,
    origin text NOT NULL,               -- title | alias | tag
    PRIMARY KEY (key, topic_id)
);
CREATE INDEX wiki_keys_topic ON wiki_keys (topic_id);

CREATE TABLE wiki_statements (
    id text PRIMARY KEY,
    topic_id text NOT NULL,
    text text NOT NULL,
    norm text NOT NULL,
    state text NOT NULL,                -- current | disputed | retired
    who text,
    said_at text,
    summaries text NOT NULL DEFAULT '[]',
    messages text NOT NULL DEFAULT '[]',
    facts text NOT NULL DEFAULT '[]',
    disputed_with text NOT NULL DEFAULT '[]',
    retired_by text,                    -- the patch that retired it
    note text,
    created_at text NOT NULL,
    updated_at text NOT NULL
);
CREATE INDEX wiki_statements_topic ON wiki_statements (topic_id, state);

CREATE TABLE wiki_patches (
    id text PRIMARY KEY,
    topic_id text NOT NULL,
    version integer NOT NULL,
    summary_id text,
    origin text NOT NULL,               -- llm | fallback | person | tags
    pipeline_version integer NOT NULL,
    ops text NOT NULL,
    created_at text NOT NULL,
    UNIQUE (topic_id, version)
);

CREATE TABLE wiki_leaves (
    summary_id text PRIMARY KEY,
    session_id text NOT NULL,
    version integer NOT NULL,           -- WIKI_PIPELINE_VERSION it was mined at
    origin text NOT NULL,
    topics text NOT NULL DEFAULT '[]',
    mined_at text NOT NULL
);
CREATE INDEX wiki_leaves_version ON wiki_leaves (version);

CREATE TABLE wiki_mentions (
    key text NOT NULL,
    summary_id text NOT NULL,
    session_id text NOT NULL,
    title text NOT NULL,
    kind text NOT NULL,
    created_at text NOT NULL,
    PRIMARY KEY (key, summary_id)
);

CREATE TABLE wiki_ops (
    op_key text PRIMARY KEY,
    applied_at text NOT NULL
);
