-- One live topic per (kind, title): two workers creating the same page at once collide
-- (the loser's job retries and finds it) instead of writing a duplicate. See palimpsest/wiki.
CREATE UNIQUE INDEX wiki_topics_kind_title ON wiki_topics (kind, title) WHERE merged_into IS NULL;
