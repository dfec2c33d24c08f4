"""Supersessions on friend chat: what the curator retires among facts distilled from LoCoMo (issue 20).

    .venv/bin/python bench/supersessions.py [../shared/eval/locomo-dev.json] [--embedder none|local]

Each LoCoMo dev conversation is imported and every closed turn distilled by the local
fallback (no LLM), as `bench/valid_time.py` does; then every superseded fact is printed with
the fact that replaced it, and counted. The curator's rules were never written from these
conversations, so each supersession here is a check on rules made elsewhere: read them, a
true update ("I got a new job at …" after "I work at …") or a true statement retired.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from valid_time import DEFAULT, distilled


def supersessions(conv: dict, embedder: str) -> tuple[int, list[tuple[str, str]]]:
    """(facts distilled, [(retired text, replacing text)]) of one conversation."""
    with distilled(conv, embedder) as (_, facts):
        by_id = {f["id"]: f for f in facts}
        pairs = [(f["text"], by_id[f["superseded_by"]]["text"]) for f in facts if f.get("superseded_by") in by_id]
        return len(facts), pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", default=str(DEFAULT))
    ap.add_argument("--embedder", default="none", choices=["none", "local"])
    args = ap.parse_args()
    convs = json.loads(Path(args.path).read_text(encoding="utf-8"))
    total_facts = total = 0
    for conv in convs:
        n, pairs = supersessions(conv, args.embedder)
        total_facts, total = total_facts + n, total + len(pairs)
        for old, new in pairs:
            print(f"[{conv.get('sample_id', '?')}] {old!r} → {new!r}")
    print(f"{total} supersessions among {total_facts} facts distilled from {len(convs)} conversations (embedder {args.embedder})")


if __name__ == "__main__":
    main()
