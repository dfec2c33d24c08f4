"""The journal on its own: group commits, dedupe by key, torn tails, reading back, and
what happens when the disk refuses a write (simulated at the `os.write` boundary)."""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from palimpsest import JournalError, Memory, NotFound, Settings
from palimpsest import journal as journal_module
from palimpsest.journal import Journal, event_number


def ev(content: str, key: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": content, "created_at": "2024-01-01T00:00:00.000000Z",
            "event_key": key or f"k:{content}", **extra}


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "home")


def test_append_and_read_back_by_line(journal: Journal) -> None:
    pairs = journal.append("s", [ev("a"), ev("b"), ev("c")])
    assert [stored for _, stored in pairs] == [True, True, True]
    assert [(e.line, e.content) for e, _ in pairs] == [(1, "a"), (2, "b"), (3, "c")]
    events = list(journal.read("s"))
    assert [e.id for e in events] == [e.id for e, _ in pairs]
    assert journal.get("s", 2).content == "b"
    assert journal.get("s", 3, events[2].offset).content == "c"
    with pytest.raises(NotFound):
        journal.get("s", 4)


def test_group_commit_is_one_write_and_one_fsync(journal: Journal, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_write, real_fsync = os.write, os.fsync

    def write(fd: int, data: Any) -> int:
        calls.append("write")
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        calls.append("fsync")
        real_fsync(fd)

    journal.append("s", [ev("warm")])  # creates the directory (its own fsync)
    calls.clear()
    monkeypatch.setattr(journal_module.os, "write", write)
    monkeypatch.setattr(journal_module.os, "fsync", fsync)
    journal.append("s", [ev(str(i)) for i in range(100)])
    assert calls == ["write", "fsync"]


def test_keys_dedupe_within_a_batch_and_across_instances(tmp_path: Path) -> None:
    j1, j2 = Journal(tmp_path), Journal(tmp_path)
    first = j1.append("s", [ev("a"), ev("a"), ev("b")])
    assert [s for _, s in first] == [True, False, True] and first[0][0].id == first[1][0].id
    # another writer (another process, here another instance) sees j1's keys under the lock
    second = j2.append("s", [ev("b"), ev("c")])
    assert [s for _, s in second] == [False, True]
    assert second[0][0].id == first[2][0].id
    assert [e.content for e in j1.read("s")] == ["a", "b", "c"]


def test_ids_stay_monotonic_when_the_clock_goes_back(journal: Journal, monkeypatch: pytest.MonkeyPatch) -> None:
    a = journal.append("s", [ev("a")])[0][0]
    monkeypatch.setattr(journal_module.time, "time_ns", lambda: 1_000_000_000)
    b = journal.append("s", [ev("b"), ev("c")])
    numbers = [event_number(a.id)] + [event_number(e.id) for e, _ in b]
    assert numbers == sorted(numbers) and len(set(numbers)) == 3


def test_torn_tail_is_moved_aside(journal: Journal) -> None:
    journal.append("s", [ev("a"), ev("b")])
    path = journal.path("s")
    with open(path, "ab") as f:
        f.write(b'{"id":"evt_123","content":"half a li')
    assert [e.content for e in Journal(path.parents[2]).read("s")] == ["a", "b"]  # readers skip it
    fresh = Journal(path.parents[2])
    fresh.append("s", [ev("c")])
    assert [e.content for e in fresh.read("s")] == ["a", "b", "c"]
    assert path.with_name("events.jsonl.torn").read_bytes() == b'{"id":"evt_123","content":"half a li\n'
    assert all(json.loads(line) for line in path.read_bytes().splitlines())


def test_repair_without_append(journal: Journal) -> None:
    journal.append("s", [ev("a")])
    path = journal.path("s")
    size = path.stat().st_size
    with open(path, "ab") as f:
        f.write(b'{"torn')
    Journal(path.parents[2]).repair("s")
    assert path.stat().st_size == size and path.with_name("events.jsonl.torn").exists()


def test_unreadable_complete_line_is_kept_and_skipped(tmp_path: Path) -> None:
    m = Memory(tmp_path, settings=Settings.load(env={}, embedder="none"))
    m.append("s", "user", "before")
    with open(m.journal.path("s"), "ab") as f:
        f.write(b"this is not json\n")
    m.append("s", "user", "after")
    m.rebuild()
    assert [x.content for x in m.browse()] == ["before", "after"]
    assert b"this is not json\n" in m.journal.path("s").read_bytes()
    m.close()


def _failing_write(after_bytes: int, code: int = errno.ENOSPC) -> Any:
    """`os.write` that writes `after_bytes` of a journal write, then fails like a full disk."""
    real_write = os.write
    budget = [after_bytes]

    def write(fd: int, data: Any) -> int:
        if not os.readlink(f"/proc/self/fd/{fd}").endswith("events.jsonl"):
            return real_write(fd, data)
        if budget[0]:  # a short write first, as a filling disk does
            n = real_write(fd, bytes(data[: budget[0]]))
            budget[0] = 0
            return n
        raise OSError(code, os.strerror(code))

    return write


@pytest.mark.parametrize("partial", [0, 10])
def test_full_disk_truncates_back_and_acknowledges_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, partial: int) -> None:
    m = Memory(tmp_path, settings=Settings.load(env={}, embedder="none"))
    m.append("s", "user", "kept")
    before = m.journal.path("s").read_bytes()
    monkeypatch.setattr(journal_module.os, "write", _failing_write(partial))
    with pytest.raises(JournalError, match="disk is full"):
        m.ingest_session("s", [{"role": "user", "content": f"lost {i}"} for i in range(20)])
    with pytest.raises(JournalError, match="disk is full"):
        m.append("s", "user", "lost too")
    assert m.journal.path("s").read_bytes() == before
    assert [x.content for x in m.browse()] == ["kept"]
    monkeypatch.undo()  # space is back: the same writes succeed, nothing was remembered as stored
    assert m.append("s", "user", "lost too")["stored"]
    assert m.ingest_session("s", [{"role": "user", "content": f"lost {i}"} for i in range(20)])["stored"] == 20
    assert len(m.browse(limit=100)) == 22
    m.close()


def test_failed_fsync_is_not_acknowledged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = Memory(tmp_path, settings=Settings.load(env={}, embedder="none"))
    m.append("s", "user", "kept")

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(journal_module.os, "fsync", fsync)
    with pytest.raises(JournalError):
        m.append("s", "user", "not durable")
    monkeypatch.undo()
    assert [e.content for e in m.journal.read("s")] == ["kept"]
    m.close()


def test_indexer_never_reads_a_batch_that_is_still_being_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An indexer in another process (here: another Memory) catching up while a group
    commit is half on disk must not index lines that the failed write then takes back."""
    writer = Memory(tmp_path, settings=Settings.load(env={}, embedder="none"))
    indexer = Memory(tmp_path, settings=Settings.load(env={}, embedder="none"))
    writer.append("s", "user", "kept")
    real_write = os.write

    def write(fd: int, data: Any) -> int:
        if not os.readlink(f"/proc/self/fd/{fd}").endswith("events.jsonl"):
            return real_write(fd, data)
        real_write(fd, bytes(data[: len(data) // 2]))  # some complete lines are on disk now
        other.start()  # the other indexer runs meanwhile: it must wait for the lock, or skip the batch
        other.join(0.5)
        monkeypatch.setattr(journal_module.os, "write", real_write)
        raise OSError(errno.ENOSPC, "No space left on device")

    # what another writer process does after its own append: index the session from its cursor
    other = threading.Thread(target=indexer.indexer.index_session, args=("s",))
    monkeypatch.setattr(journal_module.os, "write", write)
    with pytest.raises(JournalError):
        writer.ingest_session("s", [{"role": "user", "content": f"phantom {i}"} for i in range(50)])
    other.join(10)
    indexer.catch_up()
    assert [m.content for m in indexer.browse(limit=100)] == ["kept"]
    writer.append("s", "user", "next")
    indexer.catch_up()
    assert [m.content for m in indexer.browse(limit=100)] == ["kept", "next"]
    writer.close()
    indexer.close()


def test_retried_large_ingest_is_fast(tmp_path: Path) -> None:
    """Each duplicate used to re-scan the whole journal (quadratic); now a key lookup."""
    m = Memory(tmp_path, settings=Settings.load(env={}, embedder="none"))
    msgs = [{"role": "user", "content": f"message number {i}"} for i in range(2000)]
    first = m.ingest_session("s", msgs)
    started = time.perf_counter()
    again = Memory(tmp_path, settings=Settings.load(env={}, embedder="none")).ingest_session("s", msgs)
    assert (again["stored"], again["duplicates"], again["ids"]) == (0, 2000, first["ids"])
    assert time.perf_counter() - started < 5
    m.close()


def test_journal_id_is_made_once_and_kept(tmp_path: Path) -> None:
    first = Journal(tmp_path)
    first.append("s1", [{"role": "user", "content": "hello", "event_key": "k1"}])
    assert first.id.startswith("j") and len(first.id) == 17
    assert Journal(tmp_path).id == first.id  # read back, not made again
    assert Journal(tmp_path / "other").id not in ("", first.id)


def test_a_home_with_journals_from_before_ids_keeps_the_id_its_cursors_have(tmp_path: Path) -> None:
    old = Journal(tmp_path)
    old.append("s1", [{"role": "user", "content": "hello", "event_key": "k1"}])
    (tmp_path / "sessions" / ".journal-id").unlink()  # as a home written before journal ids
    assert Journal(tmp_path).id == ""
    assert Journal(tmp_path).id == ""


def test_an_unreadable_journal_id_is_an_error_not_a_new_id(tmp_path: Path) -> None:
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / ".journal-id").write_text("{not json")
    with pytest.raises(JournalError):
        _ = Journal(tmp_path).id


def test_lines_are_the_json_the_standard_library_writes(journal: Journal) -> None:
    """Journal lines are encoded by msgspec; they must read back as the standard library
    reads them, field for field, whatever the text holds."""
    tricky = "quote \" backslash \\ newline \n tab \t nul \x00 del \x7f é 日本 🙂 \u2028 </script>"
    pairs = journal.append("s", [ev(tricky, tool_args={"n": [1.5, 1e16, -0.0, 10**20, True, None]}, metadata={"k": "v"})])
    raw = journal.path("s").read_bytes()
    assert raw.count(b"\n") == 1
    line = json.loads(raw)
    assert line["content"] == tricky
    assert line["tool_args"] == {"n": [1.5, 1e16, -0.0, 10**20, True, None]}
    assert list(line)[:2] == ["id", "session"]  # id first, as before
    assert journal.get("s", 1).content == tricky
    assert pairs[0][0].nbytes == len(raw)


def test_values_msgspec_refuses_or_would_change_are_written_by_the_standard_library(journal: Journal) -> None:
    journal.append("s", [ev("odd keys", metadata={None: "x", True: "y"})])  # msgspec refuses these keys
    journal.append("s", [ev("not finite", tool_args={"a": [1.0, float("nan")], "b": float("inf")})])  # msgspec: null
    lines = [json.loads(raw) for raw in journal.path("s").read_bytes().splitlines()]
    assert lines[0]["metadata"] == {"null": "x", "true": "y"}
    assert lines[1]["tool_args"]["a"][1] != lines[1]["tool_args"]["a"][1] and lines[1]["tool_args"]["b"] == float("inf")
    again = list(Journal(journal.root.parent).read("s"))[1]
    assert again.tool_args["b"] == float("inf")  # read back as written


def test_lines_from_before_with_nan_or_lone_surrogate_escapes_still_read(tmp_path: Path) -> None:
    """Older writers used json.dumps, which can write NaN and \\ud800 escapes: msgspec
    refuses both, the standard library reads them."""
    journal = Journal(tmp_path / "home")
    journal.append("s", [ev("first")])
    with open(journal.path("s"), "ab") as f:
        f.write(b'{"id":"evt_9000000000000000000aaaa","session":"s","role":"user","content":"x \\ud800",'
                b'"metadata":{"score":NaN},"created_at":"2024-01-01T00:00:00.000000Z","event_key":"old"}\n')
    events = list(Journal(tmp_path / "home").read("s"))
    assert [e.content for e in events] == ["first", "x \ud800"]
    assert events[1].metadata["score"] != events[1].metadata["score"]  # NaN
    # the key of the old line is known to a new writer: a retry of it is a duplicate
    assert Journal(tmp_path / "home").append("s", [ev("again", key="old")])[0][1] is False


def test_a_torn_tail_is_kept_as_privately_as_the_journal(journal: Journal) -> None:
    journal.append("s1", [ev("whole")])
    path = journal.path("s1")
    with open(path, "ab") as f:
        f.write(b'{"id":"evt_1","content":"half')
    journal.repair("s1")
    assert (path.with_name("events.jsonl.torn").stat().st_mode & 0o777) == 0o600 == (path.stat().st_mode & 0o777)


def test_an_event_over_the_limit_leaves_no_empty_journal(tmp_path: Path) -> None:
    from palimpsest import PayloadTooLarge

    memory = Memory(tmp_path / "home", settings=Settings.load(env={}, embedder="none", max_event_bytes=1000))
    with pytest.raises(PayloadTooLarge):
        memory.append("s1", "user", "x" * 2000)
    with pytest.raises(PayloadTooLarge):
        memory.capture("s2", [{"role": "user", "content": "fine"}, {"role": "user", "content": "x" * 2000}], agent="a")
    assert memory.journal.sessions() == [] and not (memory.journal.root / "s1").exists()
    memory.append("s1", "user", "x" * 500)  # within the limit: stored as ever
    assert memory.journal.sessions() == ["s1"]
    memory.close()
