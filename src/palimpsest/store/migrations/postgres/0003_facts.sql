-- Facts: curated, bi-temporal statements (see docs/facts.md and migrations/sqlite/0003_facts.sql).
-- A fact row is written once; each end column is set at most once by a guarded UPDATE.
CREATE TABLE fact_vaults (
    name text PRIMARY KEY,
    type text NOT NULL DEFAULT 'episodic',
    description text,
    created_at timestamptz NOT NULL
);

CREATE TABLE facts (
    rowid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    vault text NOT NULL REFERENCES fact_vaults (name),
    text text NOT NULL,
    norm text NOT NULL,
    kind text NOT NULL DEFAULT 'fact',
    entities jsonb NOT NULL DEFAULT '[]',
    salience double precision NOT NULL DEFAULT 0.5,
    base_confidence double precision NOT NULL DEFAULT 0.7,
    valid_from timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL,
    valid_to timestamptz,
    ended_at timestamptz,
    invalidated_at timestamptz,
    expired_at timestamptz,
    supersedes text,
    superseded_by text,
    metadata jsonb NOT NULL DEFAULT '{}',
    entity_keys text[] NOT NULL DEFAULT '{}',
    fts tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('palimpsest', text), 'A')
        || setweight(to_tsvector('palimpsest', entities::text), 'B')
    ) STORED
);
CREATE INDEX facts_vault_live ON facts (vault) WHERE expired_at IS NULL AND invalidated_at IS NULL;
CREATE INDEX facts_norm ON facts (vault, norm);
CREATE INDEX facts_kind ON facts (kind);
CREATE INDEX facts_entities ON facts USING gin (entity_keys);
CREATE INDEX facts_fts ON facts USING gin (fts);

CREATE TABLE fact_attestations (
    fact_id text NOT NULL REFERENCES facts (id),
    source_type text NOT NULL,
    source text NOT NULL,
    at timestamptz NOT NULL,
    recorded_at timestamptz NOT NULL,
    note text,
    PRIMARY KEY (fact_id, source_type, source, at)
);
CREATE INDEX fact_attestations_source ON fact_attestations (source);

CREATE TABLE fact_links (
    src text NOT NULL REFERENCES facts (id),
    dst text NOT NULL REFERENCES facts (id),
    type text NOT NULL,
    recorded_at timestamptz NOT NULL,
    review text,
    reviewed_at timestamptz,
    PRIMARY KEY (src, dst, type)
);
CREATE INDEX fact_links_dst ON fact_links (dst, type);
CREATE INDEX fact_links_review ON fact_links (review) WHERE review = 'pending';

CREATE TABLE fact_ops (
    op_key text PRIMARY KEY,
    applied_at timestamptz NOT NULL
);

CREATE TABLE fact_vectors (
    fact_rowid bigint NOT NULL REFERENCES facts (rowid),
    model text NOT NULL,
    dim integer NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (model, fact_rowid)
);
