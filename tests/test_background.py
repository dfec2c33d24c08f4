"""`palimpsest.background(memory)`: a program that embeds `Memory` with no server runs the derived work
along with it (found by a library user: `worker().drain()` runs only the jobs due that moment, and
nothing said how a program runs the rest)."""

from __future__ import annotations

import time
from pathlib import Path

import palimpsest
from palimpsest import Memory, Settings


def test_background_runs_the_derived_work_while_the_block_lasts(home: Path, store_url: str) -> None:
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="hash")) as memory, palimpsest.background(memory, 0.2) as stop:
        memory.append("chat", "user", "We deploy the API to Fly.io.")
        memory.append("chat", "assistant", "Noted.")
        memory.append("chat", "user", "Thanks!")  # closes the first turn: its distill job is due now
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (memory.facts.query() and memory.stats()["embeddings"]["queued"] == 0):
            time.sleep(0.2)
        assert [f.text for f in memory.facts.query()] == ["We deploy the API to Fly.io."]
        assert memory.stats()["embeddings"]["queued"] == 0
        assert not stop.is_set()
    assert stop.is_set()


def test_closing_the_memory_inside_the_block_stops_its_background(home: Path, store_url: str) -> None:
    """Found by a library user: `memory.close()` with a background still running left its threads on, warning "store
    was closed" and starting an embed thread four seconds later."""
    import threading

    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder="hash"))
    with palimpsest.background(memory, 0.2) as stop:
        memory.append("chat", "user", "hello")
        memory.close()
        assert stop.is_set()
        # and its threads have ended when `close` returns: one still inside a statement when the store closed took a
        # test worker down (no traceback)
        assert not [t.name for t in threading.enumerate() if t.name in ("palimpsest-background", "palimpsest-embed", "palimpsest-jobs")]
    assert memory.stopping == []
