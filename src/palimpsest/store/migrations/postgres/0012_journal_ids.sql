-- One cursor per (journal, session): several homes (servers on different machines) may
-- index into one store, each reading its own journal files; keyed by session alone, each
-- read the other's byte offset. Cursors from before belong to the journal id "" (a home
-- that already had journals keeps that id: palimpsest/journal.py).
ALTER TABLE journal_cursors ADD COLUMN journal_id text NOT NULL DEFAULT '';
ALTER TABLE journal_cursors DROP CONSTRAINT journal_cursors_pkey;
ALTER TABLE journal_cursors ADD PRIMARY KEY (journal_id, session_id);
