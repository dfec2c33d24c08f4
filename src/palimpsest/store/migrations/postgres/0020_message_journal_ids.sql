-- The journal id of the home that wrote each message (`Journal.wrote`): its path alone named
-- the folder the home was in, so a home copied or moved to a new laptop took its own rows for
-- another home's (its export warned of sessions "written through other homes", get-full read
-- the old folder's journal). A session one journal indexed is that journal's; the rows of a
-- session several homes wrote keep NULL and are told apart by path, as before.
ALTER TABLE messages ADD COLUMN journal_id text;
UPDATE messages SET journal_id = one.journal_id
FROM (SELECT session_id, min(journal_id) AS journal_id FROM journal_cursors GROUP BY session_id HAVING count(*) = 1) AS one
WHERE one.session_id = messages.session_id;
