"""The index under faults (issue 21): a poison event never stops it, a rebuild never makes
things worse, a journal torn after indexing is noticed, a damaged SQLite file is 503.

Poison events are forced past validation the way an outside writer would: written
straight into the journal file, so only the indexer and the store stand in their way.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory

STAMP = "2024-03-05T10:00:{:02d}Z"


def _line(session: str, n: int, **fields: Any) -> str:
    event = {"id": f"evt_{session}_{n:04d}", "session": session, "type": "message", "role": "user",
             "content": f"good {session} {n}", "created_at": STAMP.format(n % 60), "event_key": f"k{n}"}
    event.update(fields)
    return json.dumps(event, ensure_ascii=False) + "\n"


# Each kind a validator might miss, as the line an outside writer leaves in the journal.
POISON: dict[str, Any] = {
    "nan in session settings": lambda s, n: _line(s, n, type="session", role=None, content=None,
                                                     metadata={"settings": {"cwd": math.nan}}),
    "infinity in metadata": lambda s, n: _line(s, n, metadata={"score": math.inf}),
    "nul in event_key": lambda s, n: _line(s, n, event_key="a\x00b"),
    "lone surrogate in content": lambda s, n: _line(s, n).replace(f"good {s} {n}", "bad \\ud800 text"),
    "not json": lambda s, n: "{this is not json\n",
    "not an object": lambda s, n: "[1, 2, 3]\n",
}


def _write_raw(memory: Memory, session: str, lines: list[str]) -> None:
    path = memory.journal.path(session)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8", errors="surrogatepass") as f:
        f.writelines(lines)


def _searchable(memory: Memory, text: str) -> bool:
    return any(text == h.message.content for h in memory.search(text, limit=50, mode="substring").hits)


def _fail_session(memory: Memory, monkeypatch: pytest.MonkeyPatch, failing: str, exc: Exception) -> None:
    real = memory.indexer.index_session

    def index_session(session: str) -> int:
        if session == failing:
            raise exc
        return real(session)

    monkeypatch.setattr(memory.indexer, "index_session", index_session)


def test_a_poison_event_is_quarantined_and_the_index_goes_on(memory: Memory) -> None:
    memory.append("before", "user", "indexed before the poison")
    _write_raw(memory, "stalled", [_line("stalled", 1), POISON["nan in session settings"]("stalled", 2), _line("stalled", 3)])
    memory.append("after", "user", "a later session")
    memory.catch_up()
    stats = memory.stats()
    assert stats["messages"] == 4  # both good lines of the stalled session, and the sessions around it
    assert stats["index_lag_bytes"] == 0
    assert stats["quarantine"]["count"] == 1
    [q] = stats["quarantine"]["latest"]
    assert (q["session"], q["line"], q["event_id"]) == ("stalled", 2, "evt_stalled_0002")
    assert "JSON" in q["reason"] or "json" in q["reason"]
    memory.append("stalled", "user", "appended after the poison")
    assert _searchable(memory, "appended after the poison") and _searchable(memory, "good stalled 3")


def test_quarantined_events_are_retried_and_rebuild_records_them_again(memory: Memory) -> None:
    _write_raw(memory, "s", [_line("s", 1), POISON["infinity in metadata"]("s", 2), POISON["not json"]("s", 3)])
    memory.catch_up()
    assert memory.stats()["quarantine"]["count"] == 2
    assert memory.retry_quarantined() == {"retried": 2, "indexed": 0, "quarantined": 2}
    memory.rebuild()
    assert memory.stats()["quarantine"]["count"] == 2 and memory.stats()["messages"] == 1


def test_fault_injection_every_good_event_indexed_every_poison_one_reported(memory: Memory) -> None:
    kinds = list(POISON)
    # SQLite holds a NUL in a key; PostgreSQL's text cannot: there that event is poison too
    indexable = {"nul in event_key"} if memory.store.url.startswith("sqlite") else set()
    expected_good: list[str] = []
    poisoned = 0
    for s in range(4):
        session = f"fault-{s}"
        lines = []
        for n in range(1, 25):
            kind = kinds[(n // 4 + s) % len(kinds)]
            if n % 4 == 0:
                lines.append(POISON[kind](session, n))
                if kind in indexable:
                    expected_good.append(f"good {session} {n}")
                else:
                    poisoned += 1
            else:
                lines.append(_line(session, n))
                expected_good.append(f"good {session} {n}")
        _write_raw(memory, session, lines)
        memory.append(f"clean-{s}", "user", f"clean session {s}")  # interleaved with the faulty ones
        expected_good.append(f"clean session {s}")
    memory.catch_up()

    def check() -> None:
        stats = memory.stats()
        assert stats["messages"] == len(expected_good)
        assert stats["index_lag_bytes"] == 0
        assert stats["quarantine"]["count"] == poisoned
        assert all(q["reason"] for q in memory.quarantine_stats(latest=100)["latest"])
        indexed = {m.content for m in memory.browse(limit=500)}
        assert indexed == set(expected_good)

    check()
    assert memory.rebuild() == len(expected_good)
    check()


def test_indexing_a_stalled_session_never_holds_back_the_others(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even a failure the indexer does not quarantine (the store unavailable for one session)
    leaves the sessions after it indexed; the error is still raised."""
    from palimpsest.errors import StoreUnavailable

    _write_raw(memory, "a-stalls", [_line("a-stalls", 1)])
    _write_raw(memory, "b-follows", [_line("b-follows", 1)])
    _fail_session(memory, monkeypatch, "a-stalls", StoreUnavailable("down for this one"))
    with pytest.raises(StoreUnavailable):
        memory.catch_up()
    assert [m.content for m in memory.browse(limit=10)] == ["good b-follows 1"]


def test_export_of_a_home_with_poison_is_standard_json(memory: Memory, tmp_path: Path) -> None:
    _write_raw(memory, "s", [POISON["nan in session settings"]("s", 1), _line("s", 2)])
    memory.catch_up()
    for session in memory.sessions():
        json.dumps(session.settings, allow_nan=False)  # the index never holds NaN


def test_a_failed_rebuild_leaves_the_old_index_serving(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(5):
        memory.append(f"s{n}", "user", f"kept message {n}")
    _fail_session(memory, monkeypatch, "s3", RuntimeError("the machine fell over mid-rebuild"))
    with pytest.raises(RuntimeError):
        memory.rebuild()
    assert memory.stats()["messages"] == 5 and memory.stats()["index_lag_bytes"] == 0
    assert _searchable(memory, "kept message 3")
    monkeypatch.undo()
    assert memory.rebuild() == 5


def test_readers_see_the_old_index_while_a_rebuild_runs(memory: Memory, store_url: str, home: Path) -> None:
    from palimpsest import Settings

    for n in range(3):
        memory.append(f"s{n}", "user", f"visible {n}")
    other = Memory(home, store_url, settings=Settings.load(env={}, embedder="none"))
    seen: list[int] = []
    real = memory.indexer.index_session

    def watching(session: str) -> int:
        seen.append(other.count_messages())  # another connection, mid-rebuild
        return real(session)

    memory.indexer.index_session = watching  # type: ignore[method-assign]
    try:
        memory.rebuild()
    finally:
        other.close()
    assert seen == [3, 3, 3]


def _damage(db: Path, how: str) -> None:
    data = bytearray(db.read_bytes())
    if how == "bad header":
        data[:16] = b"not a database!!"
    elif how == "truncated":
        data = data[: len(data) // 3 + 100]
    else:  # garbage pages: the second half of the file overwritten (the schema pages stay readable)
        for start in range(len(data) // 8192 * 4096, len(data), 4096):
            data[start:start + 4096] = bytes([0xA5]) * min(4096, len(data) - start)
    db.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["bad header", "truncated", "garbage pages"])
def test_rebuild_starts_from_a_damaged_sqlite_file(home: Path, how: str, capsys: pytest.CaptureFixture[str]) -> None:
    from palimpsest import Settings
    from palimpsest.cli import main

    settings = Settings.load(env={}, embedder="none")
    with Memory(home, settings=settings) as m:
        for n in range(300):
            m.append(f"s{n % 7}", "user", f"message number {n} " + "padding " * 30)
        fact = m.facts.write("the deploy window is Tuesday")
        db = m.home / "palimpsest.db"
    _damage(db, how)
    assert main(["--home", str(home), "rebuild", "--json"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["messages"] == 300 and result["moved_aside"] and ".corrupt-" in result["moved_aside"]
    assert Path(result["moved_aside"]).exists()
    with Memory(home, settings=settings) as m:
        assert m.store.integrity() is None and m.count_messages() == 300
        assert m.facts.get(fact.id).text == "the deploy window is Tuesday"  # replayed from the decision log


def test_a_sqlite_file_with_garbage_pages_is_not_ready_and_answers_503(home: Path) -> None:
    import httpx

    from palimpsest import Settings
    from palimpsest.server.run import ServerThread

    settings = Settings.load(env={}, embedder="none")
    with Memory(home, settings=settings) as m:
        for n in range(300):
            m.append(f"s{n % 7}", "user", f"message number {n} " + "padding " * 30)
    _damage(home / "palimpsest.db", "garbage pages")
    memory = Memory(home, settings=settings)  # opens: the header and schema pages are intact
    try:
        with ServerThread(memory) as url:
            ready = httpx.get(f"{url}/readyz", timeout=30)
            assert ready.status_code == 503, ready.text
            search = httpx.post(f"{url}/api/memory/tool/memory_search", json={"query": "message number"}, timeout=30)
            assert search.status_code == 503, search.text
            stats = httpx.get(f"{url}/api/stats", timeout=30)
            assert stats.status_code == 503, stats.text
            assert stats.json()["error"]["code"] == "store_corrupt"
    finally:
        memory.close()


def test_a_journal_torn_after_indexing_is_found_and_reindexed(memory: Memory) -> None:
    """Issue 21, finding 2: the journal loses its last line from outside after it was
    indexed. Catching up (what a server does at start) finds the cursor past the journal's
    end, says so in stats, and indexes the session anew: the vanished event leaves the
    index and the next append is indexed."""
    for i in range(3):
        memory.append("s", "user", f"message number {i} about kites")
    memory.append("other", "user", "an untouched session about kites")
    path = memory.journal.path("s")
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # the newest event is gone
    memory.catch_up()
    assert memory.stats()["tails_repaired"] == ["s"] and memory.stats()["messages"] == 3
    assert "message number 2 about kites" not in [h.message.content for h in memory.search("kites", limit=10).hits]
    assert memory.append("s", "user", "a fourth message about kites")["indexed"]
    assert "a fourth message about kites" in [h.message.content for h in memory.search("fourth kites").hits]
    memory.catch_up()
    assert memory.stats()["messages"] == 4 and memory.stats()["tails_repaired"] == ["s"]  # checked once per open
    memory.tails_repaired, memory._tails_checked = [], False  # as a new open would start
    memory.catch_up()
    assert memory.stats()["tails_repaired"] == [] and memory.stats()["messages"] == 4


def test_a_store_away_is_one_warning_not_one_per_write(memory: Memory, monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """Found by a new user: PostgreSQL paused for 13 s wrote 2,032 warning lines, one per write
    and one per session each indexer pass. Now the first is said, the rest counted, and the
    recovery says how many there were; every write is still journaled and indexed later."""
    import logging

    from palimpsest.errors import StoreUnavailable

    real = memory.store.cursor

    def away(*args: Any) -> Any:
        raise StoreUnavailable("the store does not answer")

    monkeypatch.setattr(memory.store, "cursor", away)
    with caplog.at_level(logging.WARNING, logger="palimpsest.ingest"):
        for i in range(20):
            assert memory.append(f"s{i % 3}", "user", f"written while away {i}")["indexed"] is False
        with pytest.raises(StoreUnavailable):
            memory.indexer.index_all()
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1 and "deferred" in warnings[0] and "counted until it recovers" in warnings[0]
        monkeypatch.setattr(memory.store, "cursor", real)
        memory.indexer.index_all()
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 2 and warnings[1] == "indexing recovered after 23 failures"
    assert memory.stats()["messages"] == 20
