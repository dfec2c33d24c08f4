-- A harness's record ids are unique across its sessions (Claude Code's uuids): a resumed
-- session repeats the lines of the one it resumes, which the writer recognises by their
-- keys in any session (`Store.keys_elsewhere`). The unique (session_id, event_key) index
-- cannot answer a lookup by key alone.
CREATE INDEX IF NOT EXISTS messages_event_key ON messages (event_key);
