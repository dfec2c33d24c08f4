"""Several homes on one store (several machines on one PostgreSQL): a message written through
one home is read whole from the other — from that home's journal when this machine can read
it, else the index's copy, saying so (it was `not_found`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.errors import NotFound

LONG = "the whole tool output " * 2000  # past a small field cap


def test_get_full_of_a_message_written_through_another_home(tmp_path: Path, store_url: str) -> None:
    settings = Settings.load(env={}, embedder="none", field_cap=1000)
    a, b = tmp_path / "a", tmp_path / "b"
    with Memory(a, store_url, settings=settings) as home_a:
        written = home_a.append("shared", "tool", "ran it", tool_name="bash", tool_result=LONG)
    with Memory(b, store_url, settings=settings) as home_b:
        full = home_b.get_full(written["id"])
        assert full["tool_result"] == LONG and "note" not in full  # a's journal, on this machine
        shutil.move(a, tmp_path / "elsewhere")  # a is another machine now
        full = home_b.get_full(written["id"])
        assert full["tool_result"] == LONG[: len(full["tool_result"])] and len(full["tool_result"]) < len(LONG)
        assert "written through another home" in full["note"] and "capped" in full["note"]
        own = home_b.append("shared", "user", "mine")
        (b / "sessions" / "shared" / "events.jsonl").write_text("")  # this home's own journal lost its line: still an error
        with pytest.raises(NotFound):
            home_b.get_full(own["id"])
