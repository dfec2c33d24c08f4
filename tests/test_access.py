"""Access counts of search hits are batched (access.py) but always seen up to date."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.access import AccessLog
from palimpsest.errors import StoreUnavailable


def stored_count(memory: Memory, mid: str) -> int:
    (m,) = memory.store.get_messages([mid])
    return m.access_count


def test_pending_accesses_show_before_they_are_written(memory: Memory) -> None:
    memory.accesses.flush_s = 3600  # nothing is written by the interval during the test
    mid = memory.append("s1", "user", "zebra crossing")["id"]
    first = memory.search("zebra").hits[0].message
    second = memory.search("zebra").hits[0].message
    assert (first.access_count, second.access_count) == (0, 1)
    assert stored_count(memory, mid) == 0  # not written yet
    (browsed,) = memory.browse()
    assert browsed.access_count == 2 and browsed.last_accessed_at is not None
    assert memory.get_full(mid)["access_count"] == 2
    memory.accesses.flush()
    assert stored_count(memory, mid) == 2
    assert memory.browse()[0].access_count == 2  # flushed counts are not added twice


def test_written_after_the_interval_and_on_close(home: Path, store_url: str) -> None:
    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder="none"))
    mid = memory.append("s1", "user", "zebra crossing")["id"]
    memory.accesses.flush_s = 0  # every search writes
    memory.search("zebra")
    assert stored_count(memory, mid) == 1
    memory.accesses.flush_s = 3600
    memory.search("zebra")
    assert stored_count(memory, mid) == 1
    memory.close()
    again = Memory(home, store_url, settings=Settings.load(env={}, embedder="none"))
    try:
        assert stored_count(again, mid) == 2
    finally:
        again.close()


def test_a_failed_write_keeps_the_counts_for_the_next_flush(sqlite_memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    mid = sqlite_memory.append("s1", "user", "zebra crossing")["id"]
    log = AccessLog(sqlite_memory.store, flush_s=3600)
    log.add([mid], "2026-01-01T00:00:00Z")
    log.add([mid], "2026-01-01T00:00:01Z")
    real = sqlite_memory.store.touch

    def down(ids: list[str], at: str) -> None:
        raise StoreUnavailable("store is down")

    monkeypatch.setattr(sqlite_memory.store, "touch", down)
    with pytest.raises(StoreUnavailable):
        log.flush()
    monkeypatch.setattr(sqlite_memory.store, "touch", real)
    log.flush()
    (m,) = sqlite_memory.store.get_messages([mid])
    assert (m.access_count, m.last_accessed_at) == (2, "2026-01-01T00:00:01Z")
