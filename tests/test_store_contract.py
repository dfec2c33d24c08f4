"""The Store contract, held to both backends (SQLite and PostgreSQL) by one suite.

Every test takes the `store_url` fixture, which runs it once per backend; the last
part holds what only PostgreSQL has to answer for (connections, extensions, many
processes migrating at once).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from palimpsest.errors import InvalidInput, ModelMismatch, StoreUnavailable
from palimpsest.records import Message, Session, iso, parse_time, utcnow
from palimpsest.store import Filters, NewJob, Store, open_store

T0 = "2026-03-01T10:00:00.000000Z"
HOSTILE = [
    '"', "'", '""', "\"unbalanced", "NEAR", "NEAR(a b)", "*", "a*", "-", "-x", "(", ")", "((", "a OR b", "AND", "NOT",
    "'; DROP TABLE messages; --", "%", "_", "%_%", "\\", "\\\\", "back\\slash", ":", "^", "col:val", "{}", "[x]",
    "🙂", "日本語", "café", "x\u200by", "a&b|c!d", "<->", "a:*", "!!", "&", "|",
]


def at(seconds: float) -> str:
    return iso(parse_time(T0) + timedelta(seconds=seconds))


def msg(n: int, session: str = "s1", content: str = "", role: str = "user", **kw: Any) -> Message:
    return Message(id=f"evt_{session}_{n:04d}", session=session, role=role, content=content or f"message number {n}",
                   created_at=kw.pop("created_at", at(n)), event_key=kw.pop("event_key", f"key-{session}-{n}"), **kw)


def session(sid: str, agent: str | None = "agent-a", channel: str | None = "cli", kind: str = "normal",
            created: str = T0, updated: str = T0, **kw: Any) -> Session:
    return Session(id=sid, agent=agent, channel=channel, kind=kind, created_at=created, updated_at=updated, **kw)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = open_store(store_url)
    yield s
    s.close()


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def seed(store: Store) -> None:
    """Two agents, three sessions, varied roles and times."""
    store.upsert_session(session("s1", agent="agent-a", channel="cli"))
    store.upsert_session(session("s2", agent="agent-b", channel="web"))
    store.upsert_session(session("s3", agent="agent-a", channel="web"))
    store.insert_messages("s1", [
        msg(1, "s1", "the retry cap matches the upstream timeout"),
        msg(2, "s1", "we deploy on Fridays after the retro", role="assistant"),
        msg(3, "s1", "retries are capped at five", role="user"),
    ], (3, 300))
    store.insert_messages("s2", [
        msg(4, "s2", "the upstream timeout is thirty seconds"),
        msg(5, "s2", "ran the tests", role="tool", tool_name="pytest", tool_result="42 passed, 100% green in 3.1s"),
    ], (2, 200))
    store.insert_messages("s3", [msg(6, "s3", "nothing to see here", role="assistant")], (1, 100))


# -- sessions ----------------------------------------------------------------

def test_upsert_session_inserts_then_merges(store: Store) -> None:
    store.upsert_session(session("s1", title="first", settings={"cwd": "/a", "deep": {"x": 1}}, updated=at(10)))
    store.upsert_session(Session(id="s1", key="k1", kind="instant", settings={"deep": {"y": 2}, "extra": True},
                                 created_at=at(-5), updated_at=at(5)))
    s = store.get_session("s1")
    assert s is not None
    assert (s.key, s.agent, s.channel, s.title, s.kind) == ("k1", "agent-a", "cli", "first", "instant")
    assert s.settings == {"cwd": "/a", "deep": {"x": 1, "y": 2}, "extra": True}
    assert (s.created_at, s.updated_at) == (at(-5), at(10))
    assert store.get_session("nope") is None


def test_list_sessions_filters_order_and_paging(store: Store) -> None:
    for i, (agent, channel) in enumerate([("a", "cli"), ("b", "web"), ("a", "web"), ("a", "cli")]):
        store.upsert_session(session(f"s{i}", agent=agent, channel=channel, updated=at(i)))
    assert [s.id for s in store.list_sessions(Filters())] == ["s3", "s2", "s1", "s0"]
    assert [s.id for s in store.list_sessions(Filters(agent="a"))] == ["s3", "s2", "s0"]
    assert [s.id for s in store.list_sessions(Filters(agent="a", channel="cli"))] == ["s3", "s0"]
    assert [s.id for s in store.list_sessions(Filters(session="s1"))] == ["s1"]
    assert [s.id for s in store.list_sessions(Filters(), limit=2, offset=1)] == ["s2", "s1"]


def test_idle_instant_sessions(store: Store) -> None:
    store.upsert_session(session("old-instant", kind="instant", updated=at(0)))
    store.upsert_session(session("new-instant", kind="instant", updated=at(1000)))
    store.upsert_session(session("old-normal", updated=at(0)))
    store.upsert_session(session("empty-instant", kind="instant", updated=at(0)))
    for sid in ("old-instant", "new-instant", "old-normal"):
        store.insert_messages(sid, [msg(1, sid)], None)
    assert store.idle_instant_sessions(at(500)) == ["old-instant"]
    store.drop_session_index("old-instant")
    assert store.idle_instant_sessions(at(500)) == []


def test_projects_of_folder_in_one_query(store: Store) -> None:
    """The projects sessions of one working folder have, newest first, each once: an import asked every project-tagged
    session's settings one by one for every session it imported (found in review: quadratic on a large import)."""
    at_folder = {"cwd": "/home/mei/code/docsnap-vit"}
    store.upsert_session(session("old", updated=at(0), settings={**at_folder, "project": "docsnap-vit"}))
    store.upsert_session(session("new", updated=at(20), settings={**at_folder, "project": "mei-lab/docsnap-vit"}))
    store.upsert_session(session("again", updated=at(10), settings={**at_folder, "project": "mei-lab/docsnap-vit"}))
    store.upsert_session(session("elsewhere", settings={"cwd": "/srv/docsnap-vit", "project": "docsnap-vit"}))
    store.upsert_session(session("no-project", settings=at_folder))
    store.upsert_session(session("quoted", settings={"cwd": "/it's/%_", "project": "q"}))
    assert store.projects_of_folder("/home/mei/code/docsnap-vit") == ["mei-lab/docsnap-vit", "docsnap-vit"]
    assert store.projects_of_folder("/it's/%_") == ["q"]
    assert store.projects_of_folder("/it's/%") == []


def test_drop_session_index_keeps_cursor_and_removes_vectors(store: Store) -> None:
    seed(store)
    store.put_vectors("m", [(f"evt_s1_{i:04d}", _unit(4, i)) for i in (1, 2, 3)] + [("evt_s2_0004", _unit(4, 0))])
    assert store.drop_session_index("s1") == 3
    assert store.drop_session_index("s1") == 0
    assert store.cursor("s1") == (3, 300)
    assert store.browse(Filters(session="s1"), 10, 0) == []
    assert store.get_session("s1") is not None
    assert store.vector_models() == {"m": {"dim": 4, "count": 1}}
    # the cursor did not move, so re-inserting is the indexer's choice, and it works
    assert store.insert_messages("s1", [msg(1, "s1", "back")], None) == ["evt_s1_0001"]


# -- messages ----------------------------------------------------------------

def test_insert_messages_is_idempotent_and_sets_cursor(store: Store) -> None:
    store.upsert_session(session("s1"))
    batch = [msg(1), msg(2), msg(3)]
    assert store.insert_messages("s1", batch, (3, 120)) == ["evt_s1_0001", "evt_s1_0002", "evt_s1_0003"]
    assert store.cursor("s1") == (3, 120)
    assert store.insert_messages("s1", batch, (3, 120)) == []
    # same event key under a new id is the same event; a new key with equal content is a true repeat
    again = msg(9, event_key="key-s1-1")
    repeat = msg(10, content="message number 1", event_key="other")
    assert store.insert_messages("s1", [again, repeat, repeat], (5, 200)) == [repeat.id]
    assert store.cursor("s1") == (5, 200)
    assert store.insert_messages("s1", [msg(11)], None) == [msg(11).id]
    assert store.cursor("s1") == (5, 200)
    assert store.cursor("unknown") == (0, 0)
    assert store.cursors() == {"s1": (5, 200)}
    assert store.insert_messages("s1", [], (6, 210)) == []
    assert store.cursor("s1") == (6, 210)


def test_insert_messages_is_atomic_with_cursor(store: Store) -> None:
    store.upsert_session(session("s1"))
    store.insert_messages("s1", [msg(1)], (1, 10))
    bad = msg(3)
    bad.importance = object()  # type: ignore[assignment]  # cannot be stored: fails mid-batch
    with pytest.raises(Exception):
        store.insert_messages("s1", [msg(2), bad], (3, 30))
    assert store.cursor("s1") == (1, 10)
    assert ids(store.browse(Filters(), 10, 0)) == ["evt_s1_0001"]


def test_message_fields_round_trip(store: Store) -> None:
    store.upsert_session(session("s1"))
    m = msg(1, content="héllo 🙂 日本語 \\ ' \"", role="tool", tool_name="grep", tool_args={"b": [1, 2], "a": {"x": None}},
            tool_result="out\nput", metadata={"source_path": "/x", "n": 1.5}, importance=0.9, truncated=True,
            full_content_length=20000, full_tool_result_length=None, journal_path="/j/events.jsonl", journal_line=7,
            journal_offset=1234, type="message", journal_id="j0123")
    store.insert_messages("s1", [m], None)
    [got] = store.get_messages([m.id])
    assert got == m


def test_get_messages_in_order_asked(store: Store) -> None:
    seed(store)
    assert ids(store.get_messages(["evt_s2_0004", "missing", "evt_s1_0001"])) == ["evt_s2_0004", "evt_s1_0001"]
    assert store.get_messages([]) == []


def test_browse_order_paging_and_filters(store: Store) -> None:
    seed(store)
    everything = ["evt_s1_0001", "evt_s1_0002", "evt_s1_0003", "evt_s2_0004", "evt_s2_0005", "evt_s3_0006"]
    assert ids(store.browse(Filters(), 100, 0)) == everything
    assert ids(store.browse(Filters(), 100, 0, newest_first=True)) == everything[::-1]
    assert ids(store.browse(Filters(), 2, 2)) == everything[2:4]
    assert ids(store.browse(Filters(session="s2"), 10, 0)) == everything[3:5]
    assert ids(store.browse(Filters(sessions=["s1", "s3"]), 10, 0)) == everything[:3] + everything[5:]
    assert ids(store.browse(Filters(agent="agent-a"), 10, 0)) == everything[:3] + everything[5:]
    assert ids(store.browse(Filters(channel="web"), 10, 0)) == everything[3:]
    assert ids(store.browse(Filters(agent="agent-a", channel="web"), 10, 0)) == everything[5:]
    assert ids(store.browse(Filters(role="assistant"), 10, 0)) == ["evt_s1_0002", "evt_s3_0006"]
    assert ids(store.browse(Filters(since=at(3), until=at(5)), 10, 0)) == ["evt_s1_0003", "evt_s2_0004"]
    assert store.browse(Filters(agent="nobody"), 10, 0) == []


def test_browse_ties_break_by_id(store: Store) -> None:
    store.upsert_session(session("s1"))
    store.insert_messages("s1", [msg(i, created_at=T0) for i in (3, 1, 2)], None)
    assert ids(store.browse(Filters(), 10, 0)) == ["evt_s1_0001", "evt_s1_0002", "evt_s1_0003"]
    assert ids(store.browse(Filters(), 10, 0, newest_first=True)) == ["evt_s1_0003", "evt_s1_0002", "evt_s1_0001"]


# -- keyword search ----------------------------------------------------------

def test_keyword_all_and_any(store: Store) -> None:
    seed(store)
    hits = store.keyword_search(["upstream", "timeout"], Filters(), 10, match_all=True)
    assert sorted(m.id for m, _ in hits) == ["evt_s1_0001", "evt_s2_0004"]
    assert store.keyword_search(["upstream", "fridays"], Filters(), 10, match_all=True) == []
    anyhits = store.keyword_search(["upstream", "fridays"], Filters(), 10, match_all=False)
    assert sorted(m.id for m, _ in anyhits) == ["evt_s1_0001", "evt_s1_0002", "evt_s2_0004"]
    assert store.keyword_search([], Filters(), 10, match_all=True) == []


def test_count_matches_counts_all_word_matches_up_to_the_cap(store: Store) -> None:
    seed(store)
    assert store.count_matches(["upstream", "timeout"], Filters(), 10) == 2
    assert store.count_matches(["upstream", "timeout"], Filters(), 1) == 1
    assert store.count_matches(["upstream", "timeout"], Filters(session="s2"), 10) == 1
    assert store.count_matches(["upstream", "fridays"], Filters(), 10) == 0
    assert store.count_matches(['"upstream', "NEAR(x"], Filters(), 10) == 0


def test_keyword_scores_higher_is_better(store: Store) -> None:
    store.upsert_session(session("s1"))
    store.insert_messages("s1", [
        msg(1, content="timeout"),
        msg(2, content="a long message about many unrelated things that mentions timeout once among a lot of other words"),
        msg(3, content="nothing relevant"),
    ], None)
    hits = store.keyword_search(["timeout"], Filters(), 10, match_all=True)
    assert [m.id for m, _ in hits] == ["evt_s1_0001", "evt_s1_0002"]
    scores = [s for _, s in hits]
    assert all(s > 0 for s in scores) and scores[0] > scores[1]


def test_keyword_stems_and_folds_case_and_accents(store: Store) -> None:
    seed(store)
    assert {m.id for m, _ in store.keyword_search(["retry"], Filters(), 10, True)} == {"evt_s1_0001", "evt_s1_0003"}
    assert {m.id for m, _ in store.keyword_search(["TIMEOUT"], Filters(), 10, True)} == {"evt_s1_0001", "evt_s2_0004"}
    store.insert_messages("s1", [msg(20, content="un café crème")], None)
    assert [m.id for m, _ in store.keyword_search(["cafe"], Filters(), 10, True)] == ["evt_s1_0020"]


def test_keyword_matches_tool_fields_and_filters(store: Store) -> None:
    seed(store)
    assert [m.id for m, _ in store.keyword_search(["passed"], Filters(), 10, True)] == ["evt_s2_0005"]
    assert [m.id for m, _ in store.keyword_search(["pytest"], Filters(), 10, True)] == ["evt_s2_0005"]
    f = Filters(agent="agent-a")
    assert [m.id for m, _ in store.keyword_search(["timeout"], f, 10, True)] == ["evt_s1_0001"]
    assert [m.id for m, _ in store.keyword_search(["timeout"], Filters(role="assistant"), 10, True)] == []
    assert [m.id for m, _ in store.keyword_search(["timeout"], Filters(since=at(2)), 10, True)] == ["evt_s2_0004"]
    assert len(store.keyword_search(["the"], Filters(), 1, True)) == 1


def test_keyword_any_prefers_rare_terms(store_url: str, store: Store) -> None:
    store.upsert_session(session("s1"))
    store.insert_messages("s1", [msg(i, content=f"common words in message {i}") for i in range(40)]
                          + [msg(99, content="a rare zebra appears in the long grass by the river bank today", created_at=at(-100))], None)
    if store_url.startswith("postgresql"):  # PostgreSQL's term frequencies come from ANALYZE
        import psycopg

        with psycopg.connect(store_url, autocommit=True) as conn:
            conn.execute("ANALYZE messages")
    hits = store.keyword_search(["common", "zebra"], Filters(), 5, match_all=False)
    assert hits[0][0].id == msg(99).id and len(hits) == 5


@pytest.mark.parametrize("match_all", [True, False])
def test_keyword_hostile_terms_are_just_text(store: Store, match_all: bool) -> None:
    seed(store)
    hostile = [msg(100 + i, content=f"literal {t} marker") for i, t in enumerate(HOSTILE)]
    store.insert_messages("s1", hostile, None)
    for term in HOSTILE:
        for terms in ([term], [term, "marker"], ["marker", term, "timeout"]):
            hits = store.keyword_search(terms, Filters(), 50, match_all)
            assert all(isinstance(s, float) for _, s in hits)
    assert store.browse(Filters(), 1, 0)  # the table survived
    # words inside hostile strings are still found, as words
    assert [m.id for m, _ in store.keyword_search(["drop", "table"], Filters(), 10, True)] == [hostile[16].id]
    assert {m.id for m, _ in store.keyword_search(["near"], Filters(), 10, True)} == {hostile[4].id, hostile[5].id}
    assert {m.id for m, _ in store.keyword_search(["日本語"], Filters(), 10, True)} == {hostile[HOSTILE.index("日本語")].id}


# -- substring, scan, touch, stats, reset ----------------------------------------

def test_substring_search(store: Store) -> None:
    seed(store)
    extra = [msg(10, content="path /usr/lib/x_y.py and 50% done"), msg(11, content="C:\\Users\\me"),
             msg(12, content="xay and 50 percent"), msg(13, content="Ünïcode CAFÉ")]
    store.insert_messages("s1", extra, None)
    assert ids(store.substring_search("UPSTREAM TIME", Filters(), 10)) == ["evt_s2_0004", "evt_s1_0001"]
    assert ids(store.substring_search("100% green", Filters(), 10)) == ["evt_s2_0005"]  # tool result
    assert ids(store.substring_search("x_y", Filters(), 10)) == ["evt_s1_0010"]
    assert ids(store.substring_search("50%", Filters(), 10)) == ["evt_s1_0010"]
    assert ids(store.substring_search("%", Filters(), 10)) == ["evt_s1_0010", "evt_s2_0005"]
    assert ids(store.substring_search("_", Filters(), 10)) == ["evt_s1_0010"]
    assert ids(store.substring_search("\\users\\", Filters(), 10)) == ["evt_s1_0011"]
    assert ids(store.substring_search("xa", Filters(), 10)) == ["evt_s1_0012"]  # capped: short fragment
    for short in ("Ü", "É", "FÉ", "Ün"):  # a short non-ASCII fragment, as written (SQLite folds ASCII only)
        assert ids(store.substring_search(short, Filters(), 10)) == ["evt_s1_0013"], short
    assert ids(store.substring_search("timeout", Filters(session="s1"), 10)) == ["evt_s1_0001"]
    assert ids(store.substring_search("timeout", Filters(), 1)) == ["evt_s2_0004"]
    assert store.substring_search("'; DROP TABLE messages; --", Filters(), 10) == []
    assert store.substring_search("no such fragment", Filters(), 10) == []


def test_scan_pages_by_rowid(store: Store) -> None:
    seed(store)
    first = store.scan(Filters(), 4)
    assert [m.id for _, m in first] == ["evt_s1_0001", "evt_s1_0002", "evt_s1_0003", "evt_s2_0004"]
    rowids = [r for r, _ in first]
    assert rowids == sorted(rowids)
    rest = store.scan(Filters(), 10, after_rowid=rowids[-1])
    assert [m.id for _, m in rest] == ["evt_s2_0005", "evt_s3_0006"]
    assert [m.id for _, m in store.scan(Filters(role="assistant"), 10)] == ["evt_s1_0002", "evt_s3_0006"]


def test_touch_counts_accesses(store: Store) -> None:
    seed(store)
    store.touch(["evt_s1_0001", "evt_s2_0004", "missing"], at(100))
    store.touch(["evt_s1_0001"], at(200))
    store.touch([], at(300))
    a, b, c = store.get_messages(["evt_s1_0001", "evt_s2_0004", "evt_s1_0002"])
    assert (a.access_count, a.last_accessed_at) == (2, at(200))
    assert (b.access_count, b.last_accessed_at) == (1, at(100))
    assert (c.access_count, c.last_accessed_at) == (0, None)


def test_stats(store: Store) -> None:
    seed(store)
    store.insert_messages("s1", [msg(9, truncated=True, full_content_length=20000)], None)
    st = store.stats()
    assert st["backend"] in ("sqlite", "postgresql")
    assert (st["sessions"], st["messages"], st["truncated"]) == (3, 7, 1)
    assert (st["oldest"], st["newest"]) == (at(1), at(9))
    assert st["per_agent"] == {"agent-a": {"sessions": 2, "messages": 5}, "agent-b": {"sessions": 1, "messages": 2}}
    assert st["database_bytes"] > 0 and st["schema_version"] >= 2


def test_reset_drops_every_derived_row(store: Store) -> None:
    seed(store)
    store.put_vectors("m", [("evt_s1_0001", _unit(4, 0))])
    store.enqueue([NewJob("embed", {"id": 1}, job_key="k")])
    store.reset()
    assert store.stats()["messages"] == 0 and store.list_sessions(Filters()) == []
    assert store.cursors() == {} and store.vector_models() == {} and store.job_status()["tasks"] == {}
    seed(store)
    assert store.stats()["messages"] == 6


# -- vectors -------------------------------------------------------------------

def _unit(dim: int, hot: int, noise: float = 0.0, seed: int = 0) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[hot % dim] = 1.0
    if noise:
        v += np.random.default_rng(seed).normal(0, noise, dim).astype(np.float32)
    return (v / np.linalg.norm(v)).astype(np.float32)


def test_vectors_put_search_and_filters(store: Store) -> None:
    seed(store)
    all_ids = ["evt_s1_0001", "evt_s1_0002", "evt_s1_0003", "evt_s2_0004", "evt_s2_0005", "evt_s3_0006"]
    store.put_vectors("mini", [(i, _unit(8, n, 0.1, n)) for n, i in enumerate(all_ids)] + [("not-a-message", _unit(8, 0))])
    assert store.vector_models() == {"mini": {"dim": 8, "count": 6}}
    hits = store.vector_search("mini", _unit(8, 3), Filters(), 3)
    assert hits[0][0] == "evt_s2_0004" and 0.9 < hits[0][1] <= 1.0001
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    filtered = store.vector_search("mini", _unit(8, 3), Filters(session="s1"), 10)
    assert {i for i, _ in filtered} == set(all_ids[:3])
    assert [i for i, _ in store.vector_search("mini", _unit(8, 3), Filters(role="assistant"), 1)] in (["evt_s1_0002"], ["evt_s3_0006"])
    assert store.vector_search("other", _unit(8, 3), Filters(), 3) == []
    got = store.get_vectors("mini", ["evt_s1_0001", "evt_s2_0004", "missing"])
    assert set(got) == {"evt_s1_0001", "evt_s2_0004"}
    assert np.allclose(got["evt_s1_0001"], _unit(8, 0, 0.1, 0), atol=1e-6)


@pytest.mark.parametrize("filters", [
    Filters(session="s1"), Filters(sessions=["s2", "s3"]), Filters(agent="agent-a"), Filters(channel="web"),
    Filters(role="assistant"), Filters(since=at(3)), Filters(until=at(3)), Filters(since=at(2), until=at(5), role="user"),
    Filters(agent="agent-a", channel="web"), Filters(session="s1", sessions=["s2"]), Filters(session="nope"), Filters(role="nobody"),
    # sessions left out (a project's recall leaves out other repositories'), in the SQL and in the vector cache's mask
    Filters(apart=["s1"]), Filters(apart=["s2", "nope"], role="user"), Filters(sessions=["s2", "s3"], apart=["s3"]),
])
def test_vector_filters_select_what_browse_selects(store: Store, filters: Filters) -> None:
    seed(store)
    ids = [m.id for m in store.browse(Filters(), 100, 0)]
    store.put_vectors("mini", [(i, _unit(8, n % 8)) for n, i in enumerate(ids)])
    assert store.vector_search("mini", _unit(8, 0), Filters(), 100)  # the cache is loaded before the new rows come
    store.insert_messages("s2", [msg(7, "s2", "later words", role="assistant"), msg(8, "s2", "more later words")], (4, 400))
    store.put_vectors("mini", [("evt_s2_0007", _unit(8, 1)), ("evt_s2_0008", _unit(8, 2))])
    want = {m.id for m in store.browse(filters, 100, 0)}
    assert {i for i, _ in store.vector_search("mini", _unit(8, 0), filters, 100)} == want
    if filters.apart:
        assert want and not any(m.session in filters.apart for m in store.get_messages(sorted(want)))


def test_vectors_replace_and_coverage(store: Store) -> None:
    seed(store)
    store.put_vectors("mini", [("evt_s1_0001", _unit(4, 0))])
    store.put_vectors("mini", [("evt_s1_0001", _unit(4, 1))])
    assert store.vector_models() == {"mini": {"dim": 4, "count": 1}}
    assert store.vector_search("mini", _unit(4, 1), Filters(), 1) == [("evt_s1_0001", pytest.approx(1.0, abs=1e-5))]
    missing = store.messages_without_vectors("mini", 10)
    assert ids(missing) == ["evt_s1_0002", "evt_s1_0003", "evt_s2_0004", "evt_s2_0005", "evt_s3_0006"]
    assert ids(store.messages_without_vectors("mini", 2)) == ["evt_s1_0002", "evt_s1_0003"]
    assert len(store.messages_without_vectors("other", 10)) == 6


def test_vectors_refuse_mixing_models_and_dims(store: Store) -> None:
    seed(store)
    store.put_vectors("mini", [("evt_s1_0001", _unit(4, 0))])
    with pytest.raises(ModelMismatch):
        store.put_vectors("other", [("evt_s1_0002", _unit(4, 0))])
    with pytest.raises(InvalidInput):
        store.put_vectors("mini", [("evt_s1_0002", _unit(5, 0))])
    with pytest.raises(InvalidInput):
        store.put_vectors("mini", [("evt_s1_0002", _unit(4, 0)), ("evt_s1_0003", _unit(6, 0))])
    assert store.vector_models() == {"mini": {"dim": 4, "count": 1}}
    assert store.drop_vectors("other") == 0
    assert store.drop_vectors("mini") == 1
    store.put_vectors("other", [("evt_s1_0002", _unit(6, 0))])  # after a drop, a new model (and dim) is fine
    assert store.vector_models() == {"other": {"dim": 6, "count": 1}}
    assert store.vector_search("other", _unit(6, 0), Filters(), 5) == [("evt_s1_0002", pytest.approx(1.0, abs=1e-5))]
    assert store.drop_vectors() == 1
    assert store.vector_models() == {}
    store.put_vectors("mini", [])  # nothing to do


# -- jobs --------------------------------------------------------------------------

def test_enqueue_dedupes_live_job_keys(store: Store) -> None:
    assert store.enqueue([NewJob("embed", {"n": 1}, job_key="a"), NewJob("embed", {"n": 2}, job_key="a"),
                          NewJob("embed", {"n": 3}), NewJob("embed", {"n": 3})]) == 3
    assert store.enqueue([NewJob("embed", {"n": 4}, job_key="a")]) == 0
    assert store.enqueue([]) == 0
    now, stale = iso(utcnow()), iso(utcnow() - timedelta(minutes=10))
    jobs = store.claim_jobs("w1", None, 10, now, stale)
    assert [j.payload for j in jobs] == [{"n": 1}, {"n": 3}, {"n": 3}]
    keyed = jobs[0]
    assert (keyed.job_key, keyed.state, keyed.attempts, keyed.locked_by) == ("a", "running", 1, "w1")
    assert store.enqueue([NewJob("embed", {"n": 5}, job_key="a")]) == 0  # running is live too
    store.finish_job(keyed.id)
    assert store.enqueue([NewJob("embed", {"n": 6}, job_key="a")]) == 1
    assert store.job_status()["tasks"] == {"embed": {"done": 1, "queued": 1, "running": 2}}


def test_claim_respects_run_at_tasks_and_limit(store: Store) -> None:
    now = utcnow() + timedelta(seconds=1)
    store.enqueue([NewJob("embed", {"n": 1}), NewJob("summarize", {"n": 2}),
                   NewJob("embed", {"n": 3}, run_at=iso(now + timedelta(hours=1)))])
    stale = iso(now - timedelta(minutes=10))
    assert store.claim_jobs("w", ["tag"], 10, iso(now), stale) == []
    assert [j.payload for j in store.claim_jobs("w", ["embed"], 10, iso(now), stale)] == [{"n": 1}]
    assert [j.payload for j in store.claim_jobs("w", None, 10, iso(now), stale)] == [{"n": 2}]
    later = now + timedelta(hours=2)
    assert [j.payload for j in store.claim_jobs("w", None, 1, iso(later), iso(later - timedelta(hours=3)))] == [{"n": 3}]


def test_claim_by_keys_takes_only_those_jobs(store: Store) -> None:
    """A CLI write runs the embed jobs it queued, not a backlog (an append had embedded an import's 51 messages)."""
    now = utcnow() + timedelta(seconds=1)
    store.enqueue([NewJob("embed", {"n": 1}, job_key="embed:a:1"), NewJob("embed", {"n": 2}, job_key="embed:b:1"), NewJob("embed", {"n": 3})])
    stale = iso(now - timedelta(minutes=10))
    assert store.claim_jobs("w", ["embed"], 10, iso(now), stale, keys=[]) == []
    assert [j.payload for j in store.claim_jobs("w", ["embed"], 10, iso(now), stale, keys=["embed:b:1", "embed:z:1"])] == [{"n": 2}]
    assert [j.payload for j in store.claim_jobs("w", None, 10, iso(now), stale)] == [{"n": 1}, {"n": 3}]


def test_concurrent_claims_never_share_a_job(store_url: str, store: Store) -> None:
    store.enqueue([NewJob("embed", {"n": i}) for i in range(200)])
    claimed: dict[str, list[int]] = {}
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        s = open_store(store_url)
        mine = claimed.setdefault(name, [])
        try:
            while True:
                now = utcnow()
                jobs = s.claim_jobs(name, None, 7, iso(now), iso(now - timedelta(minutes=10)))
                if not jobs:
                    return
                for j in jobs:
                    mine.append(j.id)
                    s.finish_job(j.id)
        except BaseException as exc:
            errors.append(exc)
        finally:
            s.close()

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    every = [j for jobs in claimed.values() for j in jobs]
    assert len(every) == 200 and len(set(every)) == 200
    assert store.job_status()["tasks"] == {"embed": {"done": 200}}


def test_stale_jobs_are_taken_over(store: Store) -> None:
    store.enqueue([NewJob("embed", {"n": 1}, job_key="k")])
    t0 = utcnow()
    [job] = store.claim_jobs("dead-worker", None, 5, iso(t0), iso(t0 - timedelta(minutes=10)))
    assert store.claim_jobs("w2", None, 5, iso(t0 + timedelta(minutes=1)), iso(t0 - timedelta(minutes=9))) == []
    t1 = t0 + timedelta(minutes=11)
    [again] = store.claim_jobs("w2", None, 5, iso(t1), iso(t1 - timedelta(minutes=10)))
    assert (again.id, again.locked_by, again.attempts, again.locked_at) == (job.id, "w2", 2, iso(t1))


def test_fail_retries_then_exhausts(store: Store) -> None:
    store.enqueue([NewJob("embed", {"n": 1}, max_attempts=2), NewJob("tag", {"n": 2})])
    t0 = utcnow()
    stale = iso(t0 - timedelta(hours=1))
    first = store.claim_jobs("w", ["embed"], 1, iso(t0), stale)[0]
    retry_at = iso(t0 + timedelta(seconds=30))
    store.fail_job(first.id, "embedder timed out", retry_at)
    assert store.claim_jobs("w", ["embed"], 1, iso(t0), stale) == []
    assert store.job_status()["sample_errors"] == {"embed": "embedder timed out"}  # waiting on its retry: why, said
    second = store.claim_jobs("w", ["embed"], 1, iso(t0 + timedelta(seconds=31)), stale)[0]
    assert (second.attempts, second.last_error, second.run_at) == (2, "embedder timed out", retry_at)
    store.fail_job(second.id, "embedder timed out again", iso(t0 + timedelta(seconds=60)))  # attempts exhausted
    tag = store.claim_jobs("w", ["tag"], 1, iso(t0), stale)[0]
    store.fail_job(tag.id, "bad\x00payload " + "x" * 5000, None)  # no retry: failed at once
    status = store.job_status()
    assert status["tasks"] == {"embed": {"failed": 1}, "tag": {"failed": 1}}
    assert status["sample_errors"]["embed"] == "embedder timed out again"
    assert len(status["sample_errors"]["tag"]) <= 2000
    assert store.claim_jobs("w", None, 5, iso(t0 + timedelta(hours=1)), stale) == []
    assert status["next_run"] is None  # nothing queued
    later, sooner = iso(t0 + timedelta(minutes=5)), iso(t0 + timedelta(minutes=1))
    store.enqueue([NewJob("compact", {}, run_at=later), NewJob("distill", {}, run_at=sooner)])
    assert store.job_status()["next_run"] == sooner  # when the first queued job is due
    assert store.job_status()["next_runs"] == {"compact": later, "distill": sooner}  # … and the first of each task


def test_a_job_stopped_by_a_shutdown_runs_again_with_its_attempt_back(store: Store) -> None:
    from palimpsest.jobs import Worker
    from palimpsest.llm import Cancelled

    store.enqueue([NewJob("distill", {"n": 1}, job_key="d1", max_attempts=2)])
    ran: list[int] = []

    def stopped(job: Any) -> None:  # what a model's call closed by `LLM.stopping` raises
        ran.append(job.attempts)
        raise Cancelled("distill: cancelled")

    assert Worker(store, {"distill": stopped}).run_once() == 1
    assert Worker(store, {"distill": stopped}).run_once() == 1  # due again at once, not after a backoff
    assert ran == [1, 1]  # never counted: the last attempt (which takes the local fallback) is still ahead
    assert store.job_status()["tasks"] == {"distill": {"queued": 1}}
    assert store.job_status()["sample_errors"] == {}
    assert Worker(store, {"distill": lambda job: ran.append(job.attempts)}).run_once() == 1
    assert ran == [1, 1, 1] and store.job_status()["tasks"] == {"distill": {"done": 1}}


def test_a_batch_that_outlasts_its_lease_does_not_run_what_another_worker_took_over(store: Store) -> None:
    """Found on a shared PostgreSQL: a worker claimed 32 distill jobs at once; after five minutes of model calls another
    server took over the rest of the batch, and both ran them (a fact written twice)."""
    from palimpsest.jobs import LEASE, Worker

    store.enqueue([NewJob("distill", {"n": n}, job_key=f"d{n}") for n in (1, 2, 3)])
    ran: list[tuple[str, int]] = []

    def first(job: Any) -> None:
        ran.append(("w1", job.payload["n"]))
        if job.payload["n"] == 1:  # its lease runs out meanwhile: w2 takes over what is still `running`
            later = utcnow() + LEASE + timedelta(minutes=1)
            ran.extend(("w2", j.payload["n"]) for j in store.claim_jobs("w2", None, 5, iso(later), iso(later - LEASE)) if j.payload["n"] != 1)

    assert Worker(store, {"distill": first}, name="w1", batch=32).run_once() == 3
    assert sorted(ran) == [("w1", 1), ("w2", 2), ("w2", 3)]  # 2 and 3 run once, by the worker that holds them


def test_a_stopping_worker_gives_back_the_jobs_it_had_not_started(store: Store) -> None:
    import threading

    from palimpsest.jobs import Worker

    store.enqueue([NewJob("distill", {"n": n}, job_key=f"d{n}") for n in (1, 2, 3)])
    worker = Worker(store, {}, name="w1", batch=32)
    worker.stopping = threading.Event()
    worker.handlers = {"distill": lambda job: worker.stopping.set()}  # type: ignore[union-attr]
    assert worker.run_once() == 1
    assert store.job_status()["tasks"]["distill"] == {"done": 1, "queued": 2}  # not `running` for five minutes
    again = store.claim_jobs("w2", None, 5, iso(utcnow()), iso(utcnow() - timedelta(hours=1)))
    assert [j.attempts for j in again] == [1, 1]  # never started: no attempt spent
    store.release_job(again[0].id, "w1")  # w1 holds it no more (found in review: a stopping worker had freed w2's job)
    assert store.job_status()["tasks"]["distill"] == {"done": 1, "running": 2}


def test_retry_failed_dry_run_and_filters(store: Store) -> None:
    store.enqueue([NewJob("embed", {"n": i}) for i in range(3)] + [NewJob("tag", {"n": 9})])
    now = utcnow()
    for j in store.claim_jobs("w", None, 10, iso(now), iso(now - timedelta(hours=1))):
        store.fail_job(j.id, "connection refused" if j.payload["n"] < 2 else "bad output", None)
    assert store.retry_failed("embed", "refused", dry_run=True) == 2
    assert store.job_status()["tasks"]["embed"] == {"failed": 3}
    assert store.retry_failed("embed", "refused", dry_run=False) == 2
    assert store.job_status()["tasks"]["embed"] == {"failed": 1, "queued": 2}
    assert store.retry_failed(None, None, dry_run=False) == 2
    jobs = store.claim_jobs("w", None, 10, iso(utcnow() + timedelta(seconds=1)), iso(now - timedelta(hours=1)))
    assert len(jobs) == 4 and all(j.attempts == 1 for j in jobs)


def test_retry_failed_keeps_one_live_job_per_key_and_samples_the_newest_error(store: Store) -> None:
    now = utcnow()
    stale = iso(now - timedelta(hours=1))
    for error in ("first failure", "second failure"):
        store.enqueue([NewJob("embed", {}, job_key="k1")])
        (job,) = store.claim_jobs("w", None, 10, iso(utcnow()), stale)
        store.fail_job(job.id, error, None)
    assert store.job_status()["sample_errors"]["embed"] == "second failure"
    assert store.retry_failed(None, None, dry_run=True) == 1  # the newest of the two, once
    store.enqueue([NewJob("embed", {}, job_key="k1")])  # the key is live again
    assert store.retry_failed(None, None, dry_run=False) == 0  # no second live job with that key
    assert store.job_status()["tasks"]["embed"] == {"failed": 2, "queued": 1}


def test_a_message_without_its_key_is_refused_not_dropped(store: Store) -> None:
    store.upsert_session(session("s1"))
    bad = Message(**{**msg(1).__dict__, "event_key": None})  # type: ignore[arg-type]
    with pytest.raises(Exception):
        store.insert_messages("s1", [bad], None)
    assert store.browse(Filters(session="s1"), 10, 0) == []


# -- many writers ----------------------------------------------------------------------

def test_concurrent_writers_of_one_session_never_duplicate(store_url: str, store: Store) -> None:
    store.upsert_session(session("s1"))
    batch = [msg(i) for i in range(60)]
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        s = open_store(store_url)
        try:
            for start in range(0, 60, 10):
                # each writer re-sends overlapping batches under fresh ids: keys decide
                chunk = [Message(**{**m.__dict__, "id": f"{m.id}-w{k}"}) for m in batch[start:start + 15]]
                results.append(s.insert_messages("s1", chunk, (start + 15, (start + 15) * 10)))
        except BaseException as exc:
            errors.append(exc)
        finally:
            s.close()

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    inserted = [i for r in results for i in r]
    assert len(inserted) == 60
    stored = store.browse(Filters(session="s1"), 1000, 0)
    assert len(stored) == 60 and len({m.event_key for m in stored}) == 60
    assert store.cursor("s1") == (65, 650)


# -- PostgreSQL only: connections, extensions, migrations ---------------------------

@pytest.fixture
def pg_url() -> str:
    from pg import fresh_database_url

    return fresh_database_url()


def test_pg_refused_connection_retries_then_fails_clearly(pg_url: str) -> None:
    import socket

    from palimpsest.store.postgres import PostgresStore

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once closed
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match=r"cannot connect to PostgreSQL at postgresql://u:\*\*\*@127\.0\.0\.1"):
        PostgresStore(f"postgresql://u:secret@127.0.0.1:{port}/db", connect_attempts=3)
    assert time.monotonic() - started >= 0.7  # 0.25 + 0.5 of backoff


def test_pg_wrong_urls(pg_url: str) -> None:
    from pg import with_database

    with pytest.raises(StoreUnavailable, match="does not exist"):
        open_store(with_database(pg_url, "no_such_database_here"))
    with pytest.raises((InvalidInput, StoreUnavailable)):
        open_store("postgresql://127.0.0.1:notaport/x")
    with pytest.raises(InvalidInput):
        open_store("mysql://localhost/x")
    alias = open_store(pg_url.replace("postgresql://", "postgres://", 1))  # libpq's short scheme
    alias.close()


def test_pg_nul_bytes_never_reach_postgres(pg_url: str) -> None:
    store = open_store(pg_url)
    try:
        store.upsert_session(session("s1", title="a\x00b", settings={"cwd\x00": ["x\x00", {"y": "\x00"}]}))
        assert store.enqueue([NewJob("embed", {"id": "a\x00"})]) == 1
        store.insert_messages("s1", [msg(1, content="before\x00after", tool_result="x\x00y", metadata={"k": "v\x00"})], None)
        [m] = store.get_messages([msg(1).id])
        assert "\x00" not in m.content and m.content.startswith("before") and m.content.endswith("after")
        assert [h.id for h, _ in store.keyword_search(["after"], Filters(), 5, True)] == [m.id]
    finally:
        store.close()


def test_pg_missing_extension_says_how_to_install(pg_url: str) -> None:
    import psycopg

    from palimpsest.store.postgres import create_extension

    with psycopg.connect(pg_url, autocommit=True) as conn:
        with pytest.raises(StoreUnavailable, match="install") as info:
            create_extension(conn, "palimpsest_not_installed")
        assert "palimpsest_not_installed" in str(info.value)
        # what a user without the right to create extensions sees, on the real path
        conn.execute("CREATE ROLE palimpsest_plain LOGIN")
        try:
            url = pg_url.replace("postgresql://postgres@", "postgresql://palimpsest_plain@")
            if url == pg_url:
                pytest.skip("cannot build a URL for another role from this server URL")
            with pytest.raises(StoreUnavailable, match=r"superuser run `CREATE EXTENSION vector`"):
                open_store(url)
        finally:
            conn.execute("REVOKE ALL ON DATABASE " + pg_url.rsplit("/", 1)[1] + " FROM palimpsest_plain")
            conn.execute("DROP OWNED BY palimpsest_plain")
            conn.execute("DROP ROLE palimpsest_plain")


def test_an_index_a_newer_palimpsest_migrated_is_refused(store_url: str) -> None:
    """Found by a new user: a server of an older commit on a shared database indexed nothing
    (or missed words) and said nothing; it now refuses the store, saying why."""
    from palimpsest.errors import SchemaTooNew

    open_store(store_url).close()
    if store_url.startswith("sqlite"):
        import sqlite3

        with sqlite3.connect(store_url.removeprefix("sqlite:///")) as conn:
            conn.execute("INSERT INTO schema_migrations VALUES (999, datetime('now'))")
    else:
        import psycopg

        with psycopg.connect(store_url, autocommit=True) as conn:
            conn.execute("INSERT INTO schema_migrations VALUES (999, now())")
    with pytest.raises(SchemaTooNew, match="version 999, newer than this Palimpsest's"):
        open_store(store_url)


def test_pg_concurrent_migrations_from_two_processes(pg_url: str) -> None:
    code = (
        "import sys; from palimpsest.store import open_store; "
        "s = open_store(sys.argv[1]); print(s.schema_version()); s.close()"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, pg_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [e for _, e in outs]
    assert len({o.strip() for o, _ in outs}) == 1
    import psycopg

    with psycopg.connect(pg_url) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == sorted(set(versions)) and versions[0] == 1


def test_pg_migrates_from_each_older_schema(pg_url: str) -> None:
    from importlib import resources

    import psycopg

    from palimpsest.store.postgres import create_extension
    from pg import server_url, with_database

    folder = resources.files("palimpsest.store.migrations").joinpath("postgres")
    files = sorted((int(p.name.split("_")[0]), p) for p in folder.iterdir() if p.name.endswith(".sql"))
    admin_url = server_url()
    for upto in range(2, len(files)):  # from version 2 (messages and vectors exist) up
        name = f"palimpsest_migrate_{os.getpid()}_v{upto}"
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        url = with_database(admin_url, name)
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                for ext in ("vector", "pg_trgm", "unaccent"):
                    create_extension(conn, ext)
                conn.execute("CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)")
                for version, path in files[:upto]:
                    conn.execute(path.read_text())
                    conn.execute("INSERT INTO schema_migrations VALUES (%s, now())", (version,))
                conn.execute("INSERT INTO sessions (id, created_at, updated_at) VALUES ('old', now(), now())")
                conn.execute(
                    """INSERT INTO messages (id, session_id, role, content, created_at, event_key)
                       VALUES ('evt_old', 'old', 'user', 'the retry cap survives migrations', %s, 'k')""", (T0,))
            store = open_store(url)
            try:
                assert store.stats()["schema_version"] == files[-1][0]
                assert [m.id for m, _ in store.keyword_search(["retry", "cap"], Filters(), 5, True)] == ["evt_old"]
                assert ids(store.substring_search("survives", Filters(), 5)) == ["evt_old"]
                store.put_vectors("m", [("evt_old", _unit(4, 0))])
                assert store.vector_models() == {"m": {"dim": 4, "count": 1}}
            finally:
                store.close()
        finally:
            with psycopg.connect(admin_url, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_pg_hnsw_index_built_past_threshold(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    from palimpsest.store.postgres import PostgresStore

    store = PostgresStore(pg_url, hnsw_threshold=20)
    try:
        store.upsert_session(session("s1"))
        store.insert_messages("s1", [msg(i, role="user" if i % 2 else "assistant") for i in range(40)], None)

        def indexes() -> list[str]:
            with psycopg.connect(pg_url) as conn:
                return [r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'vectors_hnsw%'")]

        store.put_vectors("m", [(msg(i).id, _unit(16, i, 0.05, i)) for i in range(10)])
        assert indexes() == []
        store.put_vectors("m", [(msg(i).id, _unit(16, i, 0.05, i)) for i in range(10, 40)])
        assert indexes() == ["vectors_hnsw_16"]
        hits = store.vector_search("m", _unit(16, 5), Filters(), 3)
        assert {i for i, _ in hits} <= {msg(5).id, msg(21).id, msg(37).id} and hits[0][0] in {msg(5).id, msg(21).id, msg(37).id}
        # a broad filter goes through the index (iterative scan), a narrow one is exact
        import palimpsest.store.postgres.vectors as backend

        for exact_max in (5, 1000):
            monkeypatch.setattr(backend, "_EXACT_MAX", exact_max)
            found = store.vector_search("m", _unit(16, 5), Filters(role="user"), 3)
            assert found[0][0] in {msg(5).id, msg(21).id, msg(37).id}
            assert {m.role for m in store.get_messages([i for i, _ in found])} == {"user"}
        store.drop_vectors()
        assert indexes() == []
    finally:
        store.close()


def test_pg_server_gone_is_store_unavailable(pg_url: str) -> None:
    import psycopg

    store = open_store(pg_url)
    try:
        store.upsert_session(session("s1"))
        from pg import server_url

        dbname = pg_url.rsplit("/", 1)[1]
        with psycopg.connect(server_url(), autocommit=True) as admin:
            admin.execute("ALTER DATABASE " + dbname + " WITH ALLOW_CONNECTIONS false")
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                          (dbname,))
            try:
                with pytest.raises(StoreUnavailable):
                    store.insert_messages("s1", [msg(1)], (1, 10))
            finally:
                admin.execute("ALTER DATABASE " + dbname + " WITH ALLOW_CONNECTIONS true")
        deadline = time.monotonic() + 30
        while True:  # the pool reconnects with backoff
            try:
                assert store.insert_messages("s1", [msg(1)], (1, 10)) == ["evt_s1_0001"]
                break
            except StoreUnavailable:
                assert time.monotonic() < deadline, "the pool did not recover"
                time.sleep(0.5)
    finally:
        store.close()


def test_exclusive_holds_off_another_store_object_until_released(store_url: str, store: Store) -> None:
    import threading

    other = open_store(store_url)  # as another process would: its own connections
    order: list[str] = []
    try:
        with store.exclusive("curate:facts"):
            waiter_done = threading.Event()

            def wait() -> None:
                with other.exclusive("curate:facts"):
                    order.append("other got it")
                waiter_done.set()

            t = threading.Thread(target=wait)
            t.start()
            with other.exclusive("curate:other-vault"):  # another name is not held off
                order.append("other name")
            assert not waiter_done.wait(0.5)
            order.append("released")
        assert waiter_done.wait(10)
        t.join()
        assert order == ["other name", "released", "other got it"]
    finally:
        other.close()


def test_compact_index_merges_what_writers_left_and_changes_no_result(store_url: str, store: Store) -> None:
    """SQLite's writers merge full-text segments only at sixteen a level (migration 0014);
    `compact_index` does the rest in slices. PostgreSQL has nothing to do."""
    store.upsert_session(session("s1"))
    for batch in range(40):  # one transaction, so one full-text segment, each
        store.insert_messages("s1", [msg(batch * 5 + i, content=f"upstream timeout batch {batch} item {i}") for i in range(5)], None)
    before = store.keyword_search(["upstream", "item", "7"], Filters(), 20, match_all=False)
    calls = 1
    more = store.compact_index(budget=1)
    assert more is store_url.startswith("sqlite")  # (with FTS5's default automerge 4 nothing would be left)
    while more:
        calls += 1
        assert calls < 1000
        more = store.compact_index(budget=1)
    assert store.keyword_search(["upstream", "item", "7"], Filters(), 20, match_all=False) == before
    assert store.compact_index() is False


def test_sqlite_compaction_folds_a_large_wal_back_into_the_file(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages left in the WAL are read without the memory map; with nothing to merge,
    compact_index checkpoints a WAL past WAL_FOLD_BYTES (TRUNCATE: the file is emptied)."""
    from palimpsest.store.sqlite import keyword as sqlite_store

    store = open_store(f"sqlite:///{tmp_path}/p.db")
    try:
        store.upsert_session(session("s1"))
        store.insert_messages("s1", [msg(i, content=f"words {i} " * 50) for i in range(200)], None)
        wal = tmp_path / "p.db-wal"
        assert wal.stat().st_size > 100_000
        monkeypatch.setattr(sqlite_store, "WAL_FOLD_BYTES", 10 << 20)
        assert store.compact_index() is False and wal.stat().st_size > 100_000  # small: left alone
        monkeypatch.setattr(sqlite_store, "WAL_FOLD_BYTES", 0)
        # a reader in the middle of a long read (an old snapshot): the fold waits for it a
        # moment only, and writers are not held off meanwhile
        import sqlite3

        reader = sqlite3.connect(tmp_path / "p.db", isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM messages").fetchone()
        store.insert_messages("s1", [msg(1000, content="written after the reader began")], None)
        started = time.monotonic()
        assert store.compact_index() is False and wal.stat().st_size > 0
        assert time.monotonic() - started < 5
        store.insert_messages("s1", [msg(1001, content="and another")], None)  # the writer is free
        reader.execute("COMMIT")
        reader.close()
        assert store.compact_index() is False and wal.stat().st_size == 0
        assert len(store.keyword_search(["words"], Filters(), 500, match_all=True)) == 200
        assert store.get_messages(["evt_s1_1000", "evt_s1_1001"]) != []
    finally:
        store.close()
