"""Valid time of distilled facts on imported history (issue 20, finding 2).

    python bench/valid_time.py [../shared/eval/locomo-dev.json] [--write]

Each LoCoMo dev conversation is imported (its messages dated 2023) and every closed turn
distilled by the local fallback (no LLM). For each fact (every status): is its valid time
its source message's time, or the date the statement names resolved against that time,
and is its attestation heard at the message's time? The baseline, measured in the same
run, is the rule before the fix: a fact naming no date held from when the job ran.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import machine, table, write_section

from palimpsest import Memory, Settings
from palimpsest.facts.local import named_start
from palimpsest.importers import import_data

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo-dev.json"


@contextmanager
def distilled(conv: dict, embedder: str = "none") -> Iterator[tuple[Memory, list[dict]]]:
    """One LoCoMo conversation imported into a fresh memory, every closed turn distilled by the
    local fallback (no LLM): the open memory and its fact records (every status)."""
    with tempfile.TemporaryDirectory() as home, \
            Memory(home, settings=Settings.load(env={}, embedder=embedder, llm_url="", timezone="UTC")) as memory:
        import_data(memory, {**conv, "qa": []}, "locomo")
        memory.worker(tasks=["distill"]).drain()
        yield memory, [f for f in map(json.loads, memory.facts.export_lines()) if f["record"] == "fact"]


def conversation(conv: dict) -> dict[str, int]:
    out = {"facts": 0, "from_message": 0, "from_named_date": 0, "other": 0, "heard_when_said": 0, "baseline_dated_at_run": 0}
    with distilled(conv) as (memory, facts):
        said = {m.id: m for m in memory.store.get_messages([f["attestations"][0]["source"] for f in facts])}
        for f in facts:
            m = said[f["attestations"][0]["source"]]
            named = named_start(f["text"], m.created_at) if f["kind"] != "task" else None
            out["facts"] += 1
            out["from_named_date" if named and f["valid_from"] == named else "from_message" if f["valid_from"] == m.created_at else "other"] += 1
            out["heard_when_said"] += f["attestations"][0]["at"] == m.created_at
            out["baseline_dated_at_run"] += named is None
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path", nargs="?", default=str(DEFAULT))
    p.add_argument("--write", action="store_true", help="record the figures in bench/RESULTS.md")
    args = p.parse_args(argv)
    rows = [(c.get("sample_id", str(i)), conversation(c)) for i, c in enumerate(json.loads(Path(args.path).read_text()))]
    total = {k: sum(r[k] for _, r in rows) for k in rows[0][1]}
    cols = ("facts", "from_message", "from_named_date", "other", "heard_when_said", "baseline_dated_at_run")
    text = table([(name, *(str(r[k]) for k in cols)) for name, r in rows + [("all", total)]],
                 ("conversation", "facts", "valid from its message", "valid from the date it names", "neither",
                  "heard at its message's time", "baseline: dated when the job ran"))
    print(text)
    if args.write:
        write_section("Distilled facts: valid time on imported history (LoCoMo, local fallback)",
                      f"{machine()}\n\n`python bench/valid_time.py {args.path} --write`\n\n{text}")
    return 0 if total["other"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
