-- Vaults (see docs/vaults.md and migrations/sqlite/0007_vaults.sql).
CREATE TABLE vaults (
    name text PRIMARY KEY,
    type text NOT NULL,
    path text,
    access text NOT NULL DEFAULT 'public',
    description text,
    created_at timestamptz NOT NULL
);

CREATE TABLE vault_readers (
    vault text NOT NULL REFERENCES vaults (name),
    agent text NOT NULL,
    PRIMARY KEY (agent, vault)
);

CREATE TABLE vault_attachments (
    vault text NOT NULL REFERENCES vaults (name),
    kind text NOT NULL,
    target text NOT NULL,
    at timestamptz NOT NULL,
    PRIMARY KEY (kind, target, vault)
);

CREATE TABLE vault_ops (
    op_key text PRIMARY KEY,
    applied_at timestamptz NOT NULL
);

CREATE TABLE documents (
    rowid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    vault text NOT NULL REFERENCES vaults (name),
    path text NOT NULL,
    sha256 text NOT NULL,
    mtime double precision NOT NULL,
    size bigint NOT NULL,
    indexed_at timestamptz NOT NULL,
    title text NOT NULL DEFAULT '',
    metadata jsonb NOT NULL DEFAULT '{}',
    error text,
    chunks integer NOT NULL DEFAULT 0,
    pages integer NOT NULL DEFAULT 0,
    UNIQUE (vault, path)
);

CREATE TABLE document_chunks (
    rowid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    document_rowid bigint NOT NULL REFERENCES documents (rowid) ON DELETE CASCADE,
    vault text NOT NULL,
    ordinal integer NOT NULL,
    heading_path text NOT NULL DEFAULT '',
    text text NOT NULL,
    token_count integer NOT NULL,
    metadata jsonb NOT NULL DEFAULT '{}',
    model text,
    dim integer,
    embedding vector,
    fts tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('palimpsest', heading_path), 'B') || setweight(to_tsvector('palimpsest', text), 'A')
    ) STORED
);
CREATE INDEX document_chunks_doc ON document_chunks (document_rowid, ordinal);
CREATE INDEX document_chunks_vault ON document_chunks (vault, model);
CREATE INDEX document_chunks_fts ON document_chunks USING gin (fts);

CREATE TABLE skills (
    vault text NOT NULL REFERENCES vaults (name),
    name text NOT NULL,
    description text NOT NULL DEFAULT '',
    triggers jsonb NOT NULL DEFAULT '[]',
    metadata jsonb NOT NULL DEFAULT '{}',
    path text NOT NULL,
    body text NOT NULL,
    sha256 text NOT NULL,
    mtime double precision NOT NULL,
    size bigint NOT NULL,
    indexed_at timestamptz NOT NULL,
    PRIMARY KEY (vault, name)
);
CREATE INDEX skills_path ON skills (vault, path);
