-- Events the indexer could not index (the store refused them): recorded with the reason,
-- skipped by the cursor, retried by `rebuild` or `Memory.retry_quarantined`. Derived like
-- every index row: a rebuild empties it and re-records what still fails.
CREATE TABLE index_quarantine (
    journal_id text NOT NULL DEFAULT '',
    session_id text NOT NULL,
    line bigint NOT NULL,
    byte_offset bigint NOT NULL,
    end_offset bigint NOT NULL,
    event_id text,
    reason text NOT NULL,
    quarantined_at text NOT NULL,
    PRIMARY KEY (journal_id, session_id, byte_offset)
);
