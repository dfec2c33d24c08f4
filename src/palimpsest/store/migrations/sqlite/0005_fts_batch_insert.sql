-- Full-text rows are written by `insert_messages`, one INSERT … SELECT per batch, instead of
-- by AFTER INSERT triggers: FTS5 flushes its pending terms at every trigger sub-statement,
-- so row-by-row triggers made bulk ingest about four times slower (bench/ingest.py).
-- Deletes still go through the triggers (rare: the instant-session sweep).
DROP TRIGGER messages_ai;
DROP TRIGGER messages_tri_ai;
