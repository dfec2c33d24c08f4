-- FTS5 merges its segment b-trees as it writes: by default (automerge 4) every write that
-- leaves four segments on a level rewrites them into one, so bulk ingest rewrote each
-- posting list several times as the index grew. With 16 a writer merges a quarter as
-- often (bulk ingest: the store's insert ~20 % faster, bench/ingest.py); the merging it
-- leaves is done by `compact_index` in the server's idle passes (palimpsest/service.py),
-- so a running server's index keeps the shape it had with 4.
INSERT INTO messages_fts(messages_fts, rank) VALUES ('automerge', 16);
