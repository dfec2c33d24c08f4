-- The sessions an operator erased (`palimpsest erase`), by the SHA-256 of their ids, where every home on the store
-- sees them: the erasure journal is one home's, and another home on the same store still held the session's journal,
-- whose next catch-up indexed it again from offset 0. The indexer skips these sessions and writers refuse them.
CREATE TABLE erased_sessions (
    digest TEXT PRIMARY KEY,
    erased_at TEXT NOT NULL
);
