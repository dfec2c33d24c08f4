-- Facts: curated, bi-temporal statements (see docs/facts.md).
-- A fact row is written once; its end columns are set at most once each, so every past
-- state is recoverable: valid_to/ended_at (closed or superseded; ended_at is when the
-- system learned it), invalidated_at (retracted: never true), expired_at (replaced by a
-- revision or merged into another fact), superseded_by (the successor of either).
CREATE TABLE fact_vaults (
    name TEXT PRIMARY KEY,
    type TEXT NOT NULL DEFAULT 'episodic',
    description TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE facts (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    vault TEXT NOT NULL REFERENCES fact_vaults(name),
    text TEXT NOT NULL,
    norm TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'fact',
    entities TEXT NOT NULL DEFAULT '[]',
    salience REAL NOT NULL DEFAULT 0.5,
    base_confidence REAL NOT NULL DEFAULT 0.7,
    valid_from TEXT NOT NULL,
    valid_to TEXT,
    recorded_at TEXT NOT NULL,
    ended_at TEXT,
    invalidated_at TEXT,
    expired_at TEXT,
    supersedes TEXT,
    superseded_by TEXT,
    metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX facts_vault_live ON facts(vault, expired_at, invalidated_at, valid_to);
CREATE INDEX facts_norm ON facts(vault, norm);
CREATE INDEX facts_kind ON facts(kind);

CREATE TABLE fact_entities (
    fact_rowid INTEGER NOT NULL REFERENCES facts(rowid),
    entity TEXT NOT NULL,
    PRIMARY KEY (entity, fact_rowid)
);

CREATE TABLE fact_attestations (
    fact_id TEXT NOT NULL REFERENCES facts(id),
    source_type TEXT NOT NULL,
    source TEXT NOT NULL,
    at TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    note TEXT,
    PRIMARY KEY (fact_id, source_type, source, at)
);
CREATE INDEX fact_attestations_source ON fact_attestations(source_type, source);

CREATE TABLE fact_links (
    src TEXT NOT NULL REFERENCES facts(id),
    dst TEXT NOT NULL REFERENCES facts(id),
    type TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    review TEXT,
    reviewed_at TEXT,
    PRIMARY KEY (src, dst, type)
);
CREATE INDEX fact_links_dst ON fact_links(dst, type);
CREATE INDEX fact_links_review ON fact_links(review);

-- Journal keys of the decision events already applied: replay is idempotent.
CREATE TABLE fact_ops (
    op_key TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
);

CREATE TABLE fact_vectors (
    fact_rowid INTEGER NOT NULL REFERENCES facts(rowid),
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, fact_rowid)
);

CREATE VIRTUAL TABLE facts_fts USING fts5(
    text, entities,
    content='facts', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER facts_ai AFTER INSERT ON facts BEGIN
    INSERT INTO facts_fts(rowid, text, entities) VALUES (new.rowid, new.text, new.entities);
END;
