"""Bad input: each case gets a clear error, and nothing of it is stored half-way."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from palimpsest import InvalidInput, JournalError, Memory, PalimpsestError, PayloadTooLarge, Settings, StoreUnavailable
from palimpsest.search.query import MAX_QUERY_CHARS


@pytest.fixture
def local(home: Path) -> Iterator[Memory]:
    """SQLite only: for refusals that happen before any store is asked (validation, the
    journal's size limit), where running them again on PostgreSQL would only cost time."""
    m = Memory(home, settings=Settings.load(env={}, embedder="none"))
    yield m
    m.close()


def assert_nothing_stored(memory: Memory) -> None:
    assert memory.browse() == []
    assert memory.stats()["messages"] == 0
    assert all(memory.journal.size(s) == 0 for s in memory.journal.sessions())


@pytest.mark.parametrize(
    ("message", "error"),
    [
        ({"content": "hi"}, "role is required"),
        ({"role": "", "content": "hi"}, "role is required"),
        ({"role": 7, "content": "hi"}, "role must be"),
        ({"role": "user; drop table", "content": "hi"}, "role must be"),
        ({"role": "user", "content": 42}, "content must be a string"),
        ({"role": "user", "content": {"text": "hi"}}, "content must be a string"),
        ({"role": "user", "content": ""}, "content is empty"),
        ({"role": "user"}, "content is empty"),
        ({"role": "user", "content": "hi", "created_at": "yesterday"}, "not an ISO 8601 time"),
        ({"role": "user", "content": "hi", "created_at": ["2024"]}, "created_at"),
        ({"role": "user", "content": "hi", "metadata": ["a"]}, "metadata must be an object"),
        ({"role": "user", "content": "hi", "tool_args": {1, 2}}, "tool_args/metadata must be JSON"),
        ({"role": "user", "content": "hi", "tool_args": float("nan")}, "tool_args/metadata must be JSON"),
        ({"role": "user", "content": "hi", "tool_name": 5}, "tool_name must be a string"),
        ({"role": "user", "content": "hi", "event_key": ""}, "event_key"),
        ({"role": "user", "content": "hi", "event_key": 12}, "event_key"),
        ({"role": "user", "content": "hi", "event_key": "k" * 513}, "event_key"),
        ({"role": "user", "content": "hi", "type": 3}, "type must be a string"),
        ({"role": "user", "content": "hi", "type": "session"}, "type"),
        ({"role": "user", "content": "lone \ud800 surrogate"}, "lone surrogate"),
        ({"role": "user", "content": "hi", "tool_result": "\udfff"}, "lone surrogate"),
        ({"role": "user", "content": "hi", "metadata": {"k": "\ud83d"}}, "valid Unicode"),
        ({"role": "user", "content": "hi", "event_key": "\ud800"}, "event_key"),
        ("just a string", "expected an object"),
        (None, "expected an object"),
    ],
)
def test_invalid_message_in_a_batch_stores_nothing(local: Memory, message: Any, error: str) -> None:
    batch = [{"role": "user", "content": "fine"}, message, {"role": "assistant", "content": "also fine"}]
    with pytest.raises(InvalidInput, match=error) as info:
        local.ingest_session("s1", batch)
    assert "message 1" in str(info.value)
    assert_nothing_stored(local)


def test_messages_must_be_a_list(local: Memory) -> None:
    with pytest.raises(InvalidInput, match="must be a list"):
        local.ingest_session("s1", {"role": "user", "content": "hi"})  # type: ignore[arg-type]
    assert_nothing_stored(local)


@pytest.mark.parametrize(
    ("attrs", "error"),
    [({"agent": 5}, "agent"), ({"kind": "forever"}, "kind"), ({"settings": "cwd=/"}, "settings"),
     ({"colour": "red"}, "unknown session attributes"), ({"title": "\ud800"}, "surrogate")],
)
def test_invalid_session_attributes_store_nothing(local: Memory, attrs: dict[str, Any], error: str) -> None:
    with pytest.raises(InvalidInput, match=error):
        local.append("s1", "user", "hi", **attrs)
    assert_nothing_stored(local)


@pytest.mark.parametrize(
    "session",
    ["../escape", "a/b", "a\\b", "..", ".", ".hidden", "/abs", "a/../b", "", " ", "x" * 201, "nul\x00", "tab\there", "é", 5, None],
)
def test_session_ids_that_could_escape_are_refused(local: Memory, session: Any, tmp_path: Path) -> None:
    said = "session id" if session not in ("", None) else "session is required"  # (an empty one: required, not "'None' not allowed")
    with pytest.raises(InvalidInput, match=said):
        local.append(session, "user", "hi")
    with pytest.raises(InvalidInput, match=said):
        local.ingest_session(session, [{"role": "user", "content": "hi"}])
    assert_nothing_stored(local)
    assert [p.name for p in tmp_path.iterdir() if p.name != "home"] == []


def test_50_mb_message_is_refused_whole(local: Memory) -> None:
    local.append("s1", "user", "before")
    size = local.journal.size("s1")
    huge = "x" * (50 * 1024 * 1024)
    batch = [{"role": "user", "content": "small one"}, {"role": "tool", "content": huge}, {"role": "user", "content": "after"}]
    with pytest.raises(PayloadTooLarge, match="exceeds the limit") as info:
        local.ingest_session("s1", batch, agent="a")
    assert isinstance(info.value, InvalidInput) and info.value.to_dict()["code"] == "payload_too_large"
    with pytest.raises(PayloadTooLarge):
        local.append("s1", "user", huge)
    assert local.journal.size("s1") == size
    assert [m.content for m in local.browse()] == ["before"]


def test_nul_bytes_are_kept_verbatim_in_the_journal(memory: Memory) -> None:
    text = "before\x00after"
    r = memory.append("s1", "user", text, tool_name="t", tool_result="out\x00put")
    (event,) = [e for e in memory.journal.read("s1") if e.type == "message"]
    assert (event.content, event.tool_result) == (text, "out\x00put")
    (m,) = memory.browse()
    assert (m.content, m.tool_result) == ("before\ufffdafter", "out\ufffdput")
    full = memory.get_full(r["id"])
    assert (full["content"], full["tool_result"]) == (text, "out\x00put")
    assert [h.message.id for h in memory.search("after").hits] == [r["id"]]


QUERIES = ['"unbalanced', "NEAR(alpha beta)", "alpha*", "-alpha", "alpha AND OR NOT", "(((", ")", "alpha:beta", "^alpha",
           "'; DROP TABLE messages; --", "\" OR 1=1 --", "content:alpha", "{alpha beta}", "alpha + beta", "", "   ", "\x00", "*"]


def test_fts_syntax_and_sql_in_queries_are_just_text(memory: Memory) -> None:
    # a fixed day: the spoken date is searchable ("1 December 2026 Tuesday" matches "1 = 1")
    memory.append("s1", "user", "alpha beta gamma", created_at="2026-03-15T10:00:00Z")
    for query in QUERIES:
        result = memory.search(query, touch=False)
        expected = ["alpha beta gamma"] if "alpha" in query else []
        assert [h.message.content for h in result.hits] == expected, query
    assert memory.stats()["messages"] == 1  # and the table is still there


def test_query_of_wrong_type(local: Memory) -> None:
    with pytest.raises(InvalidInput, match="query must be a string"):
        local.search(["alpha"])  # type: ignore[arg-type]


def test_filters_with_bad_dates(local: Memory) -> None:
    with pytest.raises(InvalidInput, match="since"):
        local.browse(since="last tuesday")


# -- a home that cannot be written ----------------------------------------------------
def _sqlite_elsewhere(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'index' / 'palimpsest.db'}"


def test_home_under_a_file_is_a_clear_journal_error(tmp_path: Path) -> None:
    """A home that cannot hold folders (here: a path below a regular file; works as root too)."""
    (tmp_path / "file").write_text("not a folder")
    home = tmp_path / "file" / "home"
    m = Memory(home, _sqlite_elsewhere(tmp_path), settings=Settings.load(env={}, embedder="none"))
    with pytest.raises(JournalError, match="nothing was stored"):
        m.append("s1", "user", "hi")
    with pytest.raises(JournalError, match="nothing was stored"):
        m.ingest_session("s1", [{"role": "user", "content": "hi"}])
    assert m.browse() == [] and m.stats()["messages"] == 0
    m.close()


def test_default_store_in_an_unwritable_home_is_store_unavailable(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(StoreUnavailable, match="cannot open SQLite database"):
        Memory(tmp_path / "file" / "home", settings=Settings.load(env={}, embedder="none"))


def _chmod_stops_writes(folder: Path) -> bool:
    probe = folder / "probe"
    try:
        probe.write_text("x")
    except PermissionError:
        return True
    probe.unlink()
    return False


def test_read_only_home(tmp_path: Path) -> None:
    """A journal folder made read-only after it was created: appends fail with
    JournalError and nothing is indexed. As root, chmod does not stop writes; then the
    journal file is replaced by a folder's worth of refusal another way: an immutable
    path (a directory where the journal file should be)."""
    home = tmp_path / "home"
    m = Memory(home, _sqlite_elsewhere(tmp_path), settings=Settings.load(env={}, embedder="none"))
    m.append("s1", "user", "kept")
    sessions = home / "sessions"
    for p in (sessions / "s1" / "events.jsonl", sessions / "s1", sessions):
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        if _chmod_stops_writes(sessions):
            failing = ["s1", "s2"]
        else:  # root: make the journal of s2 unopenable for writing instead
            (sessions / "s2" / "events.jsonl").mkdir(parents=True)
            failing = ["s2"]
        for session in failing:
            with pytest.raises(JournalError, match="nothing was stored"):
                m.append(session, "user", "refused")
        assert [x.content for x in m.browse(limit=10)] == ["kept"]
        assert [e.content for e in m.journal.read("s1")] == ["kept"]
    finally:
        for p in (sessions, sessions / "s1", sessions / "s1" / "events.jsonl"):
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    m.close()


def test_every_refusal_is_a_palimpsest_error(local: Memory) -> None:
    for call in (lambda: local.append("s", "user", 5),  # type: ignore[arg-type]
                 lambda: local.browse(limit=-1), lambda: local.get_full("nope"), lambda: local.search("x", mode="fuzzy")):
        with pytest.raises(PalimpsestError):
            call()
    assert os.environ.get("PALIMPSEST_HOME") is None


def test_a_misspelt_filter_and_a_live_tail_of_the_wrong_type_are_refused_clearly(local: Memory) -> None:
    """Found by a library user: `search("x", sesion="s1")` raised a TypeError naming `Finder.filters`, and
    `recall(…, live_tail="3")` a TypeError from a comparison (-1 was taken)."""
    local.append("s1", "user", "the retry cap is 30 seconds")
    with pytest.raises(InvalidInput, match="unknown filter 'sesion'"):
        local.search("retry", sesion="s1")
    with pytest.raises(InvalidInput, match="unknown filter"):
        local.browse(sesion="s1")
    for bad in ("3", -1, 2.5, True):
        with pytest.raises(InvalidInput, match="live_tail must be a whole number"):
            local.recall("s1", "retry", live_tail=bad)


def test_a_query_of_megabytes_is_cut_said_and_never_echoed_whole(memory: Memory) -> None:
    """Found by a new user over HTTP: a 5 MB `memory_recall` query took 11.6 s and its answer was 5,022,848 bytes, the
    query echoed whole (`Recall.query`); search cut it silently. Both read its first `MAX_QUERY_CHARS` and say so."""
    memory.append("s1", "user", "PR 42 rejected: the migration drops a column")
    memory.worker().drain()
    query = "the reviewer rejected the migration " * 150_000  # 5.4 MB
    recalled = memory.recall("s1", query)
    assert len(recalled.query) == MAX_QUERY_CHARS and query.startswith(recalled.query)
    assert any(f"only its first {MAX_QUERY_CHARS:,}" in n for n in recalled.notes), recalled.notes
    assert "PR 42 rejected" in recalled.block
    found = memory.search(query)
    assert found.hits and any(f"only its first {MAX_QUERY_CHARS:,}" in n for n in found.notes), found.notes
    assert not any("only its first" in n for n in memory.search("the reviewer rejected the migration").notes)
