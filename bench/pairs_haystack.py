"""What the curator decides on chat: every pair decision made while the LongMemEval dev knowledge-update haystacks
(or, given a LoCoMo file, its conversations) are distilled locally with the bundled embedder, counted by action and by
who decided (the rules or the pair model).

    .venv/bin/python bench/pairs_haystack.py ../shared/eval/longmemeval-s-dev.jsonl.gz [--show model|all]
    .venv/bin/python bench/pairs_haystack.py ../shared/eval/locomo-dev.json [--show all]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

import recall
import valid_time

from palimpsest.facts import curator


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--show", choices=["model", "all"], help="print the pair model's decisions (or all but new) to stderr")
    ap.add_argument("--max-questions", type=int, help="the first N questions (LongMemEval) or conversations (LoCoMo)")
    args = ap.parse_args()
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    inner = curator.decide

    def decide(s, later, candidate, existing, model):
        action, why = inner(s, later, candidate, existing, model)
        who = "model" if "pair model" in why else "rules"
        counts[(action, who)] += 1
        if args.show == "all" and action != "new" or args.show == "model" and who == "model" and action != "new":
            print(f"{action} ({who}) cos={s.semantic or 0:.2f} slot={s.slot} {existing!r} → {candidate!r}", file=sys.stderr)
        return action, why

    curator.decide = decide
    facts = 0
    if args.path.endswith(".json"):  # LoCoMo: each conversation imported and distilled (bench/valid_time.py)
        conversations = json.loads(Path(args.path).read_text(encoding="utf-8"))[: args.max_questions]
        for conv in conversations:
            with valid_time.distilled(conv, "local") as (_, records):
                facts += len(records)
        what = f"{len(conversations)} conversations"
    else:
        questions = [q for q in recall.load(args.path) if q["question_type"] == "knowledge-update"][: args.max_questions]
        for q in questions:
            with tempfile.TemporaryDirectory() as home:
                memory = recall._distilled(q, home, "local")
                facts += memory.facts.stats().get("facts", 0)
                memory.close()
        what = f"{len(questions)} haystacks"
    print(f"{what}, {facts} facts; decisions by action (rules / pair model):")
    for action in ("confirm", "supersede", "dispute", "related", "new"):
        print(f"  {action}: {counts[(action, 'rules')]} / {counts[(action, 'model')]}")


if __name__ == "__main__":
    main()
