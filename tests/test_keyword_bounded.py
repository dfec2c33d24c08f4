"""Keyword search with bounded scoring work (SQLite): the rare / common split gives the
plain any-word BM25, rare words are found however old, and a filter never hides matches."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

import palimpsest.store.sqlite.keyword as sqlite_store
from palimpsest import Memory, Settings
from palimpsest.store import Filters


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    """3,000 messages in six sessions written in turn, 500 at a time: `common` in a sixth of
    them, `middling` in a twentieth, `rare` in three of the oldest (each word is also in
    the search context of the message after it, so twice as many match)."""
    home: Path = tmp_path_factory.mktemp("big") / "home"
    rng = random.Random(5)
    filler = [f"w{i}" for i in range(400)]
    memory = Memory(home, settings=Settings.load(env={}, embedder="none"))
    n = 0
    for block in range(6):
        msgs = []
        for _ in range(500):
            words = rng.sample(filler, 8)
            if n % 6 == 0:
                words += ["common"] * rng.randint(1, 3)
            if n % 20 == 0:
                words.append("middling")
            if n in (7, 400, 900):
                words.append("rare")
            rng.shuffle(words)
            msgs.append({"role": "user" if n % 2 else "assistant", "content": " ".join(words)})
            n += 1
        memory.ingest_session(f"s{block}", msgs)
    yield memory
    memory.close()


def plain_or(memory: Memory, terms: list[str], where: str = "1", params: tuple = ()) -> list[tuple[str, float]]:
    """Every match scored: the reference any-word BM25."""
    match = " OR ".join(f'"{t}"' for t in terms)
    sql = f"""SELECT m.id, -bm25(messages_fts, 1.0, 0.5, 0.5, {sqlite_store.CONTEXT_WEIGHT}) AS s
              FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid
              WHERE messages_fts MATCH ? AND {where} ORDER BY s DESC, messages_fts.rowid DESC"""
    return [(r[0], r[1]) for r in memory.store._reader.execute(sql, (match, *params))]  # type: ignore[attr-defined]


def test_split_scores_equal_the_plain_any_word_query(big: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_store, "RARE_MATCHES", 400)  # rare + middling (~300 matches) exact; common split off
    monkeypatch.setattr(sqlite_store, "BM25_WINDOW", 100_000)  # no window: the split alone must be exact
    terms = ["rare", "middling", "common"]
    got = big.store.keyword_search(terms, Filters(), 50, match_all=False)
    want = plain_or(big, terms)[:50]
    assert [m.id for m, _ in got] == [i for i, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want])


def test_rare_words_are_found_beyond_the_window(big: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_store, "RARE_MATCHES", 50)
    monkeypatch.setattr(sqlite_store, "BM25_WINDOW", 60)  # only the newest 60 `common` matches scored
    got = big.store.keyword_search(["common", "rare"], Filters(), 200, match_all=False)
    contents = [m.content.split() for m, _ in got]
    assert sum("rare" in c for c in contents) == 3  # the three oldest, far outside the window
    assert all("rare" in c for c in contents[:3])  # and, holding the rarest word, ranked first
    # every score is still the plain query's score of that message
    reference = dict(plain_or(big, ["common", "rare"]))
    assert all(s == pytest.approx(reference[m.id]) for m, s in got)


def test_a_filter_on_an_old_session_still_finds_its_matches(big: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite_store, "BM25_WINDOW", 60)
    monkeypatch.setattr(sqlite_store, "FILTERED_WINDOW", 60)  # the window holds only s5's matches
    got = big.store.keyword_search(["common"], Filters(session="s0"), 50, match_all=True)
    want = plain_or(big, ["common"], "m.session_id = ?", ("s0",))[:50]
    assert len(got) == 50 and {m.session for m, _ in got} == {"s0"}
    assert [m.id for m, _ in got] == [i for i, _ in want]


def test_words_in_most_messages_are_not_scored_but_still_match(big: Memory) -> None:
    got = big.store.keyword_search(["w1", "w2", "w3", "common"], Filters(), 10, match_all=False)
    assert len(got) == 10


@pytest.mark.parametrize("query", ['"common', "common*", "NEAR(common rare)", "rare OR", "-common", "(rare", "common'); DROP TABLE messages; --"])
def test_hostile_queries_on_the_split_path(big: Memory, query: str) -> None:
    result = big.search(query, limit=5, touch=False)
    assert result.hits and big.stats()["messages"] == 3000
