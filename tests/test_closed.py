"""A `Memory` used after `close()` says so and writes nothing (found by a library user: an
append after close was journaled, then quarantined by the closed index, and missing from
search until `retry-quarantined`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.errors import Closed


def test_every_call_after_close_raises_closed_and_nothing_is_journaled(home: Path, store_url: str) -> None:
    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder="none"))
    with memory:
        memory.append("s", "user", "hello there")
    journal = home / "sessions" / "s" / "events.jsonl"
    size = journal.stat().st_size
    with pytest.raises(Closed, match="closed"):
        memory.append("s", "user", "after close")
    with pytest.raises(Closed):
        memory.facts.write("The deploy target is Fly.io.")
    with pytest.raises(Closed):
        memory.search("hello")
    with pytest.raises(Closed):
        memory.recall("s", "hello")
    memory.close()  # twice is fine
    assert journal.stat().st_size == size
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as again:
        assert [m.content for m in again.browse(session="s")] == ["hello there"]
        assert again.quarantine_stats()["count"] == 0
