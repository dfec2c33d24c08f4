-- Summaries count their accesses like messages (issue 20, finding 7): the reinforcement
-- term of the temporal score and the `accessed` decay clock.
ALTER TABLE summaries ADD COLUMN access_count integer NOT NULL DEFAULT 0;
ALTER TABLE summaries ADD COLUMN last_accessed_at timestamptz;
