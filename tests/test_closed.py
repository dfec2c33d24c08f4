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


def test_a_search_after_close_is_closed_even_once_the_query_pool_ran(home: Path, store_url: str) -> None:
    """Found by a library user: after one search, a search after `close()` raised a bare RuntimeError ("cannot
    schedule new futures after shutdown"), not `Closed`; every documented error is importable from the package."""
    import palimpsest

    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder="hash", embed_cache="off"))
    with memory:
        memory.append("s", "user", "the retry cap is thirty seconds")
        memory.search("retry")
    with pytest.raises(palimpsest.Closed):
        memory.search("retry")
    documented = ["Closed", "Conflict", "DeadlineExceeded", "EmbedderError", "LLMError", "StoreCorrupt", "Interrupted"]
    assert all(isinstance(getattr(palimpsest, name), type) and name in palimpsest.__all__ for name in documented)
