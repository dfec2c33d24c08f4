-- The trigram index (substring mode) is brought up to date by the first substring search
-- after a write, not by every write: it cost twice the word index at ingest, for a mode
-- most users call rarely. `trigram_cursor.upto` is the highest message rowid it holds.
CREATE TABLE trigram_cursor (id INTEGER PRIMARY KEY CHECK (id = 1), upto INTEGER NOT NULL);
INSERT INTO trigram_cursor VALUES (1, (SELECT coalesce(max(rowid), 0) FROM messages));
DROP TRIGGER messages_tri_ad;
CREATE TRIGGER messages_tri_ad AFTER DELETE ON messages
WHEN old.rowid <= (SELECT upto FROM trigram_cursor) BEGIN
    INSERT INTO messages_tri(messages_tri, rowid, content, tool_result)
    VALUES ('delete', old.rowid, old.content, old.tool_result);
END;
