"""The server's background pass (palimpsest/service.py): what it leaves done."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.service import background_pass

NOW = "2030-01-01T00:00:00Z"  # scores decay with time: one moment for both searches


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(tmp_path, settings=Settings.load(env={}, embedder="none"))
    yield m
    m.close()


def _many_small_batches(memory: Memory, n: int = 40) -> None:
    for i in range(n):
        memory.ingest_session("s", [{"role": "user", "content": f"upstream timeout number {i} retry cap {j}"} for j in range(5)],
                              start=i * 5)


def test_a_pass_merges_the_full_text_segments_writers_left(memory: Memory) -> None:
    _many_small_batches(memory)
    before = [(h.message.id, round(h.score, 9)) for h in memory.search("upstream retry 7", touch=False, now=NOW).hits]
    background_pass(memory, time.monotonic())
    assert memory.store.compact_index() is False  # nothing left after one pass
    assert [(h.message.id, round(h.score, 9)) for h in memory.search("upstream retry 7", touch=False, now=NOW).hits] == before


def test_a_failing_compaction_is_logged_and_the_pass_goes_on(memory: Memory, monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    _many_small_batches(memory, 3)
    memory.search("upstream")  # an access count waiting to be written

    def broken(budget: int = 500) -> bool:
        raise RuntimeError("disk I/O error")

    monkeypatch.setattr(memory.store, "compact_index", broken)
    with caplog.at_level(logging.WARNING, logger="palimpsest.serve"):
        background_pass(memory, time.monotonic())
    assert "index compaction deferred: disk I/O error" in caplog.text
    assert memory.accesses._pending == {}  # the rest of the pass ran: access counts written
