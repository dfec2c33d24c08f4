"""PostgreSQL's keyword ranking is SQLite's: FTS5's bm25() recomputed from the tsvector
(same IDF, k1, b, column weights, phrase counts, document lengths), so the two backends
give the same scores and the same order on the same messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest.records import Message, Session
from palimpsest.store import Filters, open_store
from palimpsest.store.base import Store

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
         "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"]


def _messages() -> list[Message]:
    """Plain words only (both tokenizers count them alike): lengths, repeats, tool fields,
    context and a possessive, so tf, |D|, the column weights and phrases all matter."""
    out = []
    for i in range(48):
        words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(3 + i % 9)]
        if i % 5 == 0:
            words += ["zulu"] * (1 + i % 3)
        if i % 11 == 0:
            words += ["melanie's", "kids"]
        if i % 13 == 0:
            words += ["melanie", "said"]
        out.append(Message(
            id=f"evt_{i:04d}", session="s1", role="user" if i % 2 else "assistant", content=" ".join(words),
            tool_name="search" if i % 7 == 0 else None, tool_result="zulu found in golf" if i % 7 == 0 else None,
            context="melanie asked about zulu" if i % 6 == 0 else "", created_at=f"2025-01-01T00:{i:02d}:00.000000Z",
            event_key=f"k{i}",
        ))
    return out


def _load(store: Store) -> None:
    store.upsert_session(Session(id="s1", agent="a", channel="c", created_at="2025-01-01T00:00:00.000000Z",
                                 updated_at="2025-01-01T01:00:00.000000Z"))
    store.insert_messages("s1", _messages(), None)


QUERIES = [
    (["zulu"], True),
    (["zulu", "golf"], False),
    (["zulu", "golf"], True),
    (["alpha", "zulu", "found"], False),
    (["melanie's", "kids"], False),
    (["melanie", "tango", "search"], False),
]


@pytest.mark.parametrize("terms,match_all", QUERIES)
def test_postgres_keyword_scores_are_fts5_bm25(tmp_path: Path, terms: list[str], match_all: bool) -> None:
    from pg import fresh_database_url

    sqlite = open_store(f"sqlite:///{tmp_path / 'p.db'}")
    postgres = open_store(fresh_database_url())
    try:
        _load(sqlite)
        _load(postgres)
        want = sqlite.keyword_search(terms, Filters(), 20, match_all)
        got = postgres.keyword_search(terms, Filters(), 20, match_all)
        assert want, "the query should match something"
        assert [m.id for m, _ in got] == [m.id for m, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-4)
    finally:
        sqlite.close()
        postgres.close()


def test_postgres_stems_like_fts5_porter() -> None:
    """The original Porter stemmer, as FTS5's `porter`: Porter2 (`english`) would stem
    "dying" to "die" and "skies" to "sky", which FTS5 does not, so the two backends
    would match different messages for those words."""
    from pg import fresh_database_url

    store = open_store(fresh_database_url())
    try:
        store.upsert_session(Session(id="s1", created_at="2025-01-01T00:00:00.000000Z", updated_at="2025-01-01T00:00:00.000000Z"))
        store.insert_messages("s1", [Message(id="evt_1", session="s1", role="user", content="the plants are dying",
                                             created_at="2025-01-01T00:00:00.000000Z", event_key="k1")], None)
        assert [m.id for m, _ in store.keyword_search(["dy"], Filters(), 5, True)] == ["evt_1"]  # porter: dying → dy
        assert store.keyword_search(["die"], Filters(), 5, True) == []  # porter2 would have matched
    finally:
        store.close()


def test_postgres_any_word_windows_common_terms_but_finds_rare_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unfiltered any-word search ranks every match of the rare terms, however old, and of
    the common ones only about the newest window (as SQLite's keyword_search)."""
    import random

    import palimpsest.store.postgres.keyword as pgstore
    from pg import fresh_database_url

    monkeypatch.setattr(pgstore, "_RARE_MATCHES", 100)
    monkeypatch.setattr(pgstore, "_BM25_WINDOW", 50)
    store = open_store(fresh_database_url())
    rng = random.Random(5)
    try:
        store.upsert_session(Session(id="s1", created_at="2025-01-01T00:00:00.000000Z", updated_at="2025-01-01T00:00:00.000000Z"))
        msgs = []
        for n in range(3000):
            # `common` twice in the older half: those would outrank the newer ones without the window
            words = rng.sample(WORDS, 6) + (["common"] * (2 if n < 1500 else 1) if n % 6 == 0 else [])
            words += ["rare"] if n in (7, 400, 900) else []
            msgs.append(Message(id=f"evt_{n:05d}", session="s1", role="user", content=" ".join(words),
                                created_at=f"2025-01-01T00:00:00.{n:06d}Z", event_key=f"k{n}"))
        store.insert_messages("s1", msgs, None)
        hits = store.keyword_search(["common", "rare"], Filters(), 40, match_all=False)
        ids = [m.id for m, _ in hits]
        assert set(ids[:3]) == {"evt_00007", "evt_00400", "evt_00900"}  # rare: found however old
        assert len(ids) == 40
        # the rest hold `common` alone, from about the newest 50 of its 500 matches (the
        # newest 300 messages), not from the whole table
        assert all(int(i[4:]) >= 2600 for i in ids[3:])
    finally:
        store.close()
