"""Distillation fallback: precision and recall of extracted facts and corrections on
hand-written turns.

    python bench/distill.py [--set dev|test|all] [--json] [--write]

Turns are in `bench/data/distill-dev.json` (tuned on) and `distill-test.json` (written and
labelled once before tuning, never tuned on). Each turn is labelled with what a careful reader would keep: facts (with their kind:
preference, decision, event, fact), corrections and tasks. A predicted item counts as right
when it has the labelled category and kind and its words overlap the label's (Dice of
lower-cased word sets ≥ 0.6). Negative turns (small talk, questions, hypotheticals,
reported speech, the assistant's suggestions) are labelled with nothing. The local
distiller (`palimpsest.facts.local.local_distill`) is deterministic, so one run is the result.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from palimpsest.facts.local import local_distill
from palimpsest.records import Message

DATA = Path(__file__).resolve().parent / "data"
HELD_OUT = {"blind3", "chat-test"}  # turns no rule was designed on: figures only, never the turns they miss
Turn = tuple[list[tuple[str, str]], list[tuple[str, str, str]]]


def load(name: str) -> tuple[str, list[Turn]]:
    """(said_at, turns) of `bench/data/distill-<name>.json`."""
    d = json.loads((DATA / f"distill-{name}.json").read_text(encoding="utf-8"))
    turns = [([(r, c) for r, c in t["messages"]], [(g["category"], g["kind"], g["text"]) for g in t["gold"]]) for t in d["turns"]]
    return d["said_at"], turns


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+(?:['.:-][a-z0-9]+)*", text.lower()))


def dice(a: str, b: str) -> float:
    x, y = words(a), words(b)
    return 2 * len(x & y) / (len(x) + len(y)) if x or y else 1.0


def predicted(out: dict[str, Any]) -> list[tuple[str, str, str]]:
    items = [("fact", f["kind"], f["text"]) for f in out["facts"]]
    items += [("correction", "correction", c["text"]) for c in out["corrections"]]
    items += [("task", "task", t) for t in out["tasks"]]
    return items


def joined(gold: list[tuple[str, str, str]], pred: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """`pred` with the parts of one labelled sentence as one item: the distiller cuts "I live in Berlin and my
    wife works in Potsdam" into two facts (`local.conjuncts`), the labels keep the sentence whole. A part is
    a predicted item whose words all stand in one gold item of its category and kind."""
    out: list[tuple[str, str, str]] = []
    owner: dict[int, int] = {}  # gold index → its item in out
    for p in pred:
        g = next((i for i, g in enumerate(gold) if g[:2] == p[:2] and words(p[2]) <= words(g[2])
                  and dice(g[2], p[2]) < 0.95), None)
        if g is not None and g in owner:
            c, k, text = out[owner[g]]
            out[owner[g]] = (c, k, f"{text} {p[2]}")
            continue
        if g is not None:
            owner[g] = len(out)
        out.append(p)
    return out


def score(gold: list[tuple[str, str, str]], pred: list[tuple[str, str, str]]) -> tuple[int, int, int]:
    """(true positives, predicted, gold) with one-to-one matching, the parts of one labelled sentence one item (`joined`)."""
    pred = joined(gold, pred)
    left = list(gold)
    tp = 0
    for p in pred:
        match = next((g for g in left if g[0] == p[0] and g[1] == p[1] and dice(g[2], p[2]) >= 0.6), None)
        if match is not None:
            left.remove(match)
            tp += 1
    return tp, len(pred), len(gold)


def run(turns: list[Turn], said_at: str) -> dict[str, Any]:
    per: dict[str, list[int]] = {c: [0, 0, 0] for c in ("fact", "correction", "task")}
    any_kind = [0, 0, 0]  # the right sentences kept, whatever kind they were given (labellers differ on event / plan / fact)
    wrong: list[str] = []
    for turn, gold in turns:
        msgs = [Message(id=f"evt_{i:023d}", session="b", role=r, content=c, created_at=said_at) for i, (r, c) in enumerate(turn)]
        pred = predicted(local_distill(msgs))
        loose = score([(g[0], "", g[2]) for g in gold], [(p[0], "", p[2]) for p in pred])
        any_kind = [a + b for a, b in zip(any_kind, loose)]
        for cat in per:
            tp, np_, ng = score([g for g in gold if g[0] == cat], [p for p in pred if p[0] == cat])
            per[cat] = [per[cat][0] + tp, per[cat][1] + np_, per[cat][2] + ng]
        if score(gold, pred)[0] != len(gold) or len(pred) != len(gold):
            wrong.append(f"{turn[0][1][:60]!r}: expected {[(g[1], g[2][:40]) for g in gold]}, got {[(p[1], p[2][:40]) for p in pred]}")
    total = [sum(v[i] for v in per.values()) for i in range(3)]
    rows = {cat: {"precision": round(tp / np_, 3) if np_ else 1.0, "recall": round(tp / ng, 3) if ng else 1.0, "predicted": np_, "gold": ng}
            for cat, (tp, np_, ng) in {**per, "all": total, "all, any kind": any_kind}.items()}
    return {"turns": len(turns), "negative_turns": sum(1 for _, g in turns if not g), "rows": rows, "wrong": wrong}


def markdown(results: dict[str, dict[str, Any]]) -> str:
    lines = ["`python bench/distill.py` (protocol in its docstring): the local distiller (`palimpsest.facts.local`, no LLM) on the",
             ("development turns it was tuned on and the test turns written and labelled before tuning and never tuned on "
              "(`bench/data/distill-dev.json`, `distill-test.json`), and fresh turns written after the rules were frozen "
              "(`distill-fresh.json`)."), "",
             "| set | turns (nothing to keep) | category | precision | recall | predicted | labelled |", "|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        for cat, v in r["rows"].items():
            lines.append(f"| {name} | {r['turns']} ({r['negative_turns']}) | {cat} | {v['precision']:.2f} | {v['recall']:.2f} | "
                         f"{v['predicted']} | {v['gold']} |")
    lines += ["", ("How far to trust these: the test turns were labelled before the rules were written and first run when they were "
              "done (precision 1.00, recall 1.00, as now), but by the engineer who then wrote the rules, who had read them. The fresh "
              "turns, written after the rules were frozen and phrased unlike both, scored precision 0.78 and recall 0.75 on their first "
              "run (misses: a trailing 'now', 'replaced A as B', 'quit', 'I'd like', 'let's schedule', an unknown verb after 'I'; "
              "a 'Wow, that was quick.' taken for a fact); the rules were then widened for those, so the fresh figures above are "
              "tuned too. Expect unseen phrasing nearer the fresh first run than the test figures.")]
    for name, r in results.items():
        lines += ["", f"{name}: turns not exactly right: {len(r['wrong'])}."]
        lines += [f"- {w}" for w in r["wrong"]] if name not in HELD_OUT else ["(held out: which turns is not shown)"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--write", action="store_true", help="write the section of bench/RESULTS.md")
    p.add_argument("--set", choices=("dev", "test", "fresh", "blind", "blind2", "blind3", "chat-dev", "chat-test", "all"), default="all",
                   help="all: every set but the held-out blind3 and chat-test (asked for by name; their wrong turns are never "
                        "printed); chat-dev / chat-test: friend-to-friend chat, written and labelled blind (ninth session)")
    args = p.parse_args(argv)
    names = ["dev", "test", "fresh", "blind", "blind2", "chat-dev"] if args.set == "all" else [args.set]
    loaded = {n: load(n) for n in names}
    r = {n: run(turns, said_at) for n, (said_at, turns) in loaded.items()}
    if args.set == "all":
        r["dev + test"] = run(loaded["dev"][1] + loaded["test"][1], loaded["dev"][0])
    if args.write:
        sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
        from common import write_section

        write_section("Distillation", markdown(r))
    print(json.dumps(r) if args.json else markdown(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
