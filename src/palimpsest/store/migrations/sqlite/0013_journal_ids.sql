-- One cursor per (journal, session): several homes (servers on different machines) may
-- index into one store, each reading its own journal files; keyed by session alone, each
-- read the other's byte offset. Cursors from before belong to the journal id "" (a home
-- that already had journals keeps that id: palimpsest/journal.py).
CREATE TABLE journal_cursors_new (
    journal_id TEXT NOT NULL DEFAULT '',
    session_id TEXT NOT NULL,
    line INTEGER NOT NULL,
    byte_offset INTEGER NOT NULL,
    PRIMARY KEY (journal_id, session_id)
);
INSERT INTO journal_cursors_new (journal_id, session_id, line, byte_offset)
SELECT '', session_id, line, byte_offset FROM journal_cursors;
DROP TABLE journal_cursors;
ALTER TABLE journal_cursors_new RENAME TO journal_cursors;
