-- Events the indexer could not index (the store refused them): recorded with the reason,
-- skipped by the cursor, retried by `rebuild` or `Memory.retry_quarantined`. Derived like
-- every index row: a rebuild empties it and re-records what still fails.
CREATE TABLE index_quarantine (
    journal_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL,
    line INTEGER NOT NULL,
    byte_offset INTEGER NOT NULL,
    end_offset INTEGER NOT NULL,
    event_id TEXT,
    reason TEXT NOT NULL,
    quarantined_at TEXT NOT NULL,
    PRIMARY KEY (journal_id, session_id, byte_offset)
);
