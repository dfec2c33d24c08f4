"""Valid time from the source (issue 20, finding 2): a distilled fact holds from when its
message was said, or from the date the statement names, resolved against that moment;
its known time (`recorded_at`) is when Palimpsest learned it. Restore from the snapshot
and from the journal keep both. On both backends, with a real LoCoMo conversation."""

from __future__ import annotations

import json
from pathlib import Path

from palimpsest import Memory, Settings
from palimpsest.facts.local import named_start
from palimpsest.importers import import_data
from palimpsest.records import utcnow

LOCOMO = Path("/work/shared/eval/locomo-dev.json")


def other_url(store_url: str, tmp_path: Path) -> str:
    if store_url.startswith("sqlite"):
        return f"sqlite:///{tmp_path / 'restored.db'}"
    from pg import fresh_database_url

    return fresh_database_url()


def rows(memory: Memory) -> list[dict]:
    return [d for d in map(json.loads, memory.facts.export_lines()) if d["record"] == "fact"]


def test_distilled_facts_hold_from_their_messages_time(home: Path, store_url: str, tmp_path: Path) -> None:
    conversation = json.loads(LOCOMO.read_text())[0]
    started = utcnow().isoformat()[:10]
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none", llm_url="")) as memory:
        import_data(memory, conversation, "locomo")
        memory.worker(tasks=["distill"]).drain()
        facts = rows(memory)
        assert len(facts) >= 10
        said = {m.id: m for m in memory.store.get_messages([a["source"] for f in facts for a in f["attestations"]])}
        named = 0
        for f in facts:
            source = said[f["attestations"][0]["source"]]  # the message the statement was heard in
            assert f["text"].casefold() in " ".join(source.content.split()).casefold() or f["kind"] == "correction"
            expected = named_start(f["text"], source.created_at) if f["kind"] != "task" else None
            named += expected is not None
            assert f["valid_from"] == (expected or source.created_at), f["text"]
            assert f["attestations"][0]["at"] == source.created_at  # heard when it was said, whatever date it names
            assert source.created_at.startswith("2023")
            assert f["recorded_at"][:10] >= started  # known time: when Palimpsest learned it
        assert 0 < named < len(facts)  # some name a date; most hold from when they were said
        before = rows(memory)
        snapshot = memory.facts.snapshot(tmp_path / "facts.jsonl")
    # the snapshot into another home; the system journal into a new store of this home
    # (opening it may start replaying the journal already: either way, the same rows)
    for where, restore in ((tmp_path / "other", "snapshot"), (home, "journal")):
        with Memory(where, other_url(store_url, tmp_path / restore), settings=Settings.load(env={}, embedder="none")) as fresh:
            if restore == "snapshot":
                fresh.facts.restore_snapshot(snapshot)
            else:
                fresh.facts.replay()  # what `facts restore --journal` runs; idempotent
            after = rows(fresh)
            assert [(f["id"], f["valid_from"], f["recorded_at"]) for f in after] == [
                (f["id"], f["valid_from"], f["recorded_at"]) for f in before]
