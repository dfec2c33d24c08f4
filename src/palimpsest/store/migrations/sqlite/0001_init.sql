-- Sessions, messages with FTS5, journal cursors.
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    key TEXT,
    agent TEXT,
    channel TEXT,
    title TEXT,
    kind TEXT NOT NULL DEFAULT 'normal',
    settings TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX sessions_agent ON sessions(agent);
CREATE INDEX sessions_kind_updated ON sessions(kind, updated_at);

CREATE TABLE messages (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    type TEXT NOT NULL DEFAULT 'message',
    role TEXT,
    content TEXT NOT NULL DEFAULT '',
    tool_name TEXT,
    tool_args TEXT,
    tool_result TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    event_key TEXT NOT NULL,
    importance REAL NOT NULL DEFAULT 0.5,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    truncated INTEGER NOT NULL DEFAULT 0,
    full_content_length INTEGER,
    full_tool_result_length INTEGER,
    journal_path TEXT NOT NULL DEFAULT '',
    journal_line INTEGER NOT NULL DEFAULT 0,
    journal_offset INTEGER NOT NULL DEFAULT 0,
    UNIQUE (session_id, event_key)
);
CREATE INDEX messages_session_time ON messages(session_id, created_at);
CREATE INDEX messages_time ON messages(created_at);

CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, tool_name, tool_result,
    content='messages', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content, tool_name, tool_result)
    VALUES (new.rowid, new.content, new.tool_name, new.tool_result);
END;
CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_result)
    VALUES ('delete', old.rowid, old.content, old.tool_name, old.tool_result);
END;

CREATE TABLE journal_cursors (
    session_id TEXT PRIMARY KEY,
    line INTEGER NOT NULL,
    byte_offset INTEGER NOT NULL
);
