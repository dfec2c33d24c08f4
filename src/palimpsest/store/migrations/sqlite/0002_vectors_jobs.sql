-- Vectors (one per message and model) and the durable job queue.
CREATE TABLE vectors (
    message_rowid INTEGER NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, message_rowid)
);

CREATE TABLE jobs (
    id INTEGER PRIMARY KEY,
    task TEXT NOT NULL,
    payload TEXT NOT NULL DEFAULT '{}',
    job_key TEXT,
    state TEXT NOT NULL DEFAULT 'queued',
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 5,
    last_error TEXT,
    run_at TEXT NOT NULL,
    locked_by TEXT,
    locked_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX jobs_due ON jobs(state, run_at);
CREATE UNIQUE INDEX jobs_live_key ON jobs(job_key) WHERE job_key IS NOT NULL AND state IN ('queued', 'running');

-- Substring mode: a trigram index over content and tool results.
CREATE VIRTUAL TABLE messages_tri USING fts5(
    content, tool_result,
    content='messages', content_rowid='rowid',
    tokenize='trigram case_sensitive 0'
);
INSERT INTO messages_tri(messages_tri) VALUES ('rebuild');
CREATE TRIGGER messages_tri_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_tri(rowid, content, tool_result) VALUES (new.rowid, new.content, new.tool_result);
END;
CREATE TRIGGER messages_tri_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_tri(messages_tri, rowid, content, tool_result)
    VALUES ('delete', old.rowid, old.content, old.tool_result);
END;
CREATE TRIGGER messages_vec_ad AFTER DELETE ON messages BEGIN
    DELETE FROM vectors WHERE message_rowid = old.rowid;
END;
