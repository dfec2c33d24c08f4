"""Summaries count their accesses like messages (issue 20, finding 7): a search that returns
a summary counts one more access on it (pending accesses show at once, written in a
batch), the count reinforces its temporal score, and the schema migrates an old store.
Both backends."""

from __future__ import annotations

from pathlib import Path

from palimpsest import Memory, Settings


def open_memory(home: Path, store_url: str, **kw: object) -> Memory:
    opts: dict = {"embedder": "none", "distill": False, "summary_leaf_tokens": 400, "summary_max_tokens": 150,
                  "compact_after": 10_000, "tags_suggest": False, "wiki_extract": False, **kw}
    return Memory(home, store_url, settings=Settings.load(env={}, **opts))


def leaf_of(memory: Memory, session: str, topic: str) -> str:
    memory.ingest_session(session, [{"role": "user", "content": f"{topic} step {i}: the {topic} rollout went fine",
                                     "created_at": f"2026-03-04T10:{i:02d}:00Z"} for i in range(6)])
    memory.summaries.compact(session, final=True, use_llm=False)
    return memory.store.session_summaries(session, 0)[0].id


def test_a_summary_hit_counts_an_access(home: Path, store_url: str) -> None:
    with open_memory(home, store_url) as memory:
        memory.accesses.flush_s = 3600  # written by flush() below, not by the interval
        leaf = leaf_of(memory, "s", "zeppelin")
        assert memory.summaries.get(leaf).access_count == 0
        found = memory.search("zeppelin rollout", now="2026-03-05T00:00:00Z")
        assert leaf in [s["id"] for s in found.summaries]
        assert memory.summaries.get(leaf).access_count == 1  # pending, shown at once
        memory.search("zeppelin rollout", touch=False)
        assert memory.summaries.get(leaf).access_count == 1  # touch=False counts nothing
        memory.accesses.flush()
        row = memory.store.get_summaries([leaf])[0]
        assert row.access_count == 1 and row.last_accessed_at is not None
        hit = next(s for s in memory.search("zeppelin rollout").summaries if s["id"] == leaf)
        assert hit["access_count"] == 1  # as the hit was read, before this access
        memory.accesses.flush()
        assert memory.store.get_summaries([leaf])[0].access_count == 2


def test_accesses_reinforce_a_summarys_temporal_score(home: Path, store_url: str) -> None:
    with open_memory(home, store_url) as memory:
        a, b = leaf_of(memory, "a", "zeppelin"), leaf_of(memory, "b", "zeppelin")
        now = "2026-04-04T00:00:00Z"  # a month later: decay leaves room for the boost
        parts = {s["id"]: s["score_parts"]["temporal"] for s in memory.search("zeppelin rollout", now=now, touch=False).summaries}
        assert abs(parts[a] - parts[b]) < 1e-3
        memory.store.touch_summaries([a], "2026-03-05T00:00:00Z")
        memory.store.touch_summaries([a], "2026-03-05T00:00:00Z")
        parts = {s["id"]: s["score_parts"]["temporal"] for s in memory.search("zeppelin rollout", now=now, touch=False).summaries}
        assert parts[a] > parts[b] * 1.03  # two accesses: (1 + 0.02·2)


def test_an_older_sqlite_store_migrates(home: Path) -> None:
    import sqlite3

    url = f"sqlite:///{home / 'palimpsest.db'}"
    with open_memory(home, url) as memory:
        leaf = leaf_of(memory, "s", "zeppelin")
    db = sqlite3.connect(home / "palimpsest.db")  # the schema as it was before 0016
    db.execute("ALTER TABLE summaries DROP COLUMN access_count")
    db.execute("ALTER TABLE summaries DROP COLUMN last_accessed_at")
    db.execute("DELETE FROM schema_migrations WHERE version = 16")
    db.commit()
    db.close()
    with open_memory(home, url) as memory:
        assert memory.store.get_summaries([leaf])[0].access_count == 0
        memory.search("zeppelin rollout")
        memory.accesses.flush()
        assert memory.store.get_summaries([leaf])[0].access_count == 1
