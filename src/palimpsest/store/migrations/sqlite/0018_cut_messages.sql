-- The messages the index holds cut at `field_cap` (`Store.count_cut`): a literal scan that
-- finds fewer than it may show says how many were read in part. Few messages are cut, so a
-- partial index answers the count without reading every row (content and all).
CREATE INDEX IF NOT EXISTS messages_cut ON messages (session_id) WHERE truncated;
