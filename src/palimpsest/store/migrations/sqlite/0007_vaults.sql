-- Vaults (see docs/vaults.md): the registry of document, skill and (listed alongside the
-- fact vaults) episodic vaults, their readers and attachments; document chunks with one
-- vector each; skills parsed from skill vaults.
CREATE TABLE vaults (
    name TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    path TEXT,
    access TEXT NOT NULL DEFAULT 'public',
    description TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE vault_readers (
    vault TEXT NOT NULL REFERENCES vaults(name),
    agent TEXT NOT NULL,
    PRIMARY KEY (agent, vault)
);

CREATE TABLE vault_attachments (
    vault TEXT NOT NULL REFERENCES vaults(name),
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (kind, target, vault)
);

CREATE TABLE vault_ops (
    op_key TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
);

CREATE TABLE documents (
    rowid INTEGER PRIMARY KEY,
    vault TEXT NOT NULL REFERENCES vaults(name),
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    mtime REAL NOT NULL,
    size INTEGER NOT NULL,
    indexed_at TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    metadata TEXT NOT NULL DEFAULT '{}',
    error TEXT,
    chunks INTEGER NOT NULL DEFAULT 0,
    pages INTEGER NOT NULL DEFAULT 0,
    UNIQUE (vault, path)
);

CREATE TABLE document_chunks (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    document_rowid INTEGER NOT NULL REFERENCES documents(rowid) ON DELETE CASCADE,
    vault TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    heading_path TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    token_count INTEGER NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    model TEXT,
    dim INTEGER,
    vector BLOB
);
CREATE INDEX document_chunks_doc ON document_chunks(document_rowid, ordinal);
CREATE INDEX document_chunks_vault ON document_chunks(vault, model);

CREATE VIRTUAL TABLE document_chunks_fts USING fts5(
    heading_path, text,
    content='document_chunks', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER document_chunks_ai AFTER INSERT ON document_chunks BEGIN
    INSERT INTO document_chunks_fts(rowid, heading_path, text) VALUES (new.rowid, new.heading_path, new.text);
END;
CREATE TRIGGER document_chunks_ad AFTER DELETE ON document_chunks BEGIN
    INSERT INTO document_chunks_fts(document_chunks_fts, rowid, heading_path, text) VALUES ('delete', old.rowid, old.heading_path, old.text);
END;

-- Bumped by every change of chunk vectors: a process's in-memory matrix is current while
-- this and its own count agree.
CREATE TABLE document_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n INTEGER NOT NULL
);
INSERT INTO document_generation VALUES (1, 0);

CREATE TABLE skills (
    vault TEXT NOT NULL REFERENCES vaults(name),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    triggers TEXT NOT NULL DEFAULT '[]',
    metadata TEXT NOT NULL DEFAULT '{}',
    path TEXT NOT NULL,
    body TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    mtime REAL NOT NULL,
    size INTEGER NOT NULL,
    indexed_at TEXT NOT NULL,
    PRIMARY KEY (vault, name)
);
CREATE INDEX skills_path ON skills(vault, path);
