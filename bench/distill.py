"""Distillation fallback: precision and recall of extracted facts and corrections on
hand-written turns.

    python bench/distill.py [--json]

Each turn below is labelled with what a careful reader would keep: facts (with their kind:
preference, decision, event, fact), corrections and tasks. A predicted item counts as right
when it has the labelled category and kind and its words overlap the label's (Dice of
lower-cased word sets ≥ 0.6). Negative turns (small talk, questions, hypotheticals,
reported speech, the assistant's suggestions) are labelled with nothing. The local
fallback (`palimpsest.distill.local_distill`) is deterministic, so one run is the result.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from palimpsest.distill import local_distill
from palimpsest.records import Message

T = "2026-03-04T10:15:00Z"  # a Wednesday
U, A = "user", "assistant"

# (turn messages, gold items: (category, kind, text))
TURNS: list[tuple[list[tuple[str, str]], list[tuple[str, str, str]]]] = [
    ([(U, "I prefer dark mode in every editor.")], [("fact", "preference", "I prefer dark mode in every editor.")]),
    ([(U, "Please always answer in British English.")], [("fact", "preference", "Please always answer in British English.")]),
    ([(U, "I really dislike long meetings. Can we keep them short?")], [("fact", "preference", "I really dislike long meetings.")]),
    ([(U, "My favourite language is Rust.")], [("fact", "preference", "My favourite language is Rust.")]),
    ([(U, "I'd rather use pnpm than npm for this repo.")], [("fact", "preference", "I'd rather use pnpm than npm for this repo.")]),
    ([(U, "We decided to deploy on Fly.io instead of Heroku."), (A, "Great, I'll update the config.")],
     [("fact", "decision", "We decided to deploy on Fly.io instead of Heroku.")]),
    ([(U, "Let's go with PostgreSQL 16 for the new cluster.")], [("fact", "decision", "Let's go with PostgreSQL 16 for the new cluster.")]),
    ([(U, "Should we use Kafka?"), (A, "We agreed last week to use NATS for the event bus.")],
     [("fact", "decision", "We agreed last week to use NATS for the event bus.")]),
    ([(U, "After the review we settled on weekly releases.")], [("fact", "decision", "After the review we settled on weekly releases.")]),
    ([(U, "My sister Ana lives in Lisbon.")], [("fact", "fact", "My sister Ana lives in Lisbon.")]),
    ([(U, "I work at Contoso as a data engineer.")], [("fact", "fact", "I work at Contoso as a data engineer.")]),
    ([(U, "I'm a vegetarian, by the way.")], [("fact", "fact", "I'm a vegetarian, by the way.")]),
    ([(U, "Our staging database is on db-stage-2.")], [("fact", "fact", "Our staging database is on db-stage-2.")]),
    ([(U, "I moved to Porto last year.")], [("fact", "fact", "I moved to Porto last year.")]),
    ([(U, "I'm flying to Berlin next Friday for the conference.")], [("fact", "event", "I'm flying to Berlin next Friday for the conference.")]),
    ([(U, "My dentist appointment is on 12 March.")], [("fact", "event", "My dentist appointment is on 12 March.")]),
    ([(U, "We launched the beta on 2026-02-20 and it went well.")], [("fact", "event", "We launched the beta on 2026-02-20 and it went well.")]),
    ([(U, "I started the new job yesterday.")], [("fact", "event", "I started the new job yesterday.")]),
    ([(U, "Actually, the meeting is on Thursday, not Friday.")], [("correction", "correction", "The meeting is on Thursday, not Friday.")]),
    ([(U, "Correction: my flight lands at 18:40.")], [("correction", "correction", "My flight lands at 18:40.")]),
    ([(U, "Sorry, I meant the staging cluster, not production.")], [("correction", "correction", "The staging cluster, not production.")]),
    ([(U, "No, actually my manager is Priya now.")], [("correction", "correction", "My manager is Priya now.")]),
    ([(U, "Scratch that, we're keeping the old logo.")], [("correction", "correction", "We're keeping the old logo.")]),
    ([(U, "I need to renew my passport before June.")], [("task", "task", "I need to renew my passport before June.")]),
    ([(U, "TODO: rotate the API keys on the billing service.")], [("task", "task", "TODO: rotate the API keys on the billing service.")]),
    ([(U, "Remind me to call the landlord about the heating.")], [("task", "task", "Remind me to call the landlord about the heating.")]),
    ([(U, "We should add retries to the webhook handler.")], [("task", "task", "We should add retries to the webhook handler.")]),
    ([(U, "I prefer tea in the morning. Actually, my office moved to the third floor. I need to update my badge.")],
     [("fact", "preference", "I prefer tea in the morning."), ("correction", "correction", "My office moved to the third floor."),
      ("task", "task", "I need to update my badge.")]),
    ([(U, "We decided to freeze the API on 1 April. I'll go with semantic versioning from then on.")],
     [("fact", "decision", "We decided to freeze the API on 1 April."), ("fact", "decision", "I'll go with semantic versioning from then on.")]),
    # harder: no explicit marker (written to challenge the rules, labelled before running them)
    ([(U, "The deadline moved to Monday the 9th.")], [("correction", "correction", "The deadline moved to Monday the 9th.")]),
    ([(U, "Going forward, use UTC in all the logs.")], [("fact", "preference", "Going forward, use UTC in all the logs.")]),
    ([(U, "I can't eat gluten.")], [("fact", "fact", "I can't eat gluten.")]),
    ([(U, "We've switched from Jenkins to GitHub Actions.")], [("fact", "decision", "We've switched from Jenkins to GitHub Actions.")]),
    ([(U, "Ana and I got married in June 2019.")], [("fact", "event", "Ana and I got married in June 2019.")]),
    ([(U, "Tom is now the tech lead of the payments team.")], [("fact", "fact", "Tom is now the tech lead of the payments team.")]),
    ([(U, "Don't ever push directly to main.")], [("fact", "preference", "Don't ever push directly to main.")]),
    ([(U, "The repo uses a monorepo layout with Bazel; the CI budget is 20 minutes.")],
     [("fact", "fact", "The repo uses a monorepo layout with Bazel; the CI budget is 20 minutes.")]),
    ([(U, "I actually enjoyed the book you recommended.")], [("fact", "preference", "I actually enjoyed the book you recommended.")]),
    ([(U, "I have to admit, I never liked that design.")], [("fact", "preference", "I have to admit, I never liked that design.")]),
    # negatives: nothing to keep
    ([(U, "Hi! How are you today?"), (A, "Doing well, thanks!")], []),
    ([(U, "Do you prefer tabs or spaces?")], []),
    ([(U, "What would happen if we decided to drop Python 3.10?")], []),
    ([(U, "Thanks, that was helpful."), (A, "Glad to help.")], []),
    ([(U, "Can you summarise the article?"), (A, "The article argues that remote work improves focus.")], []),
    ([(U, "ok"), (A, "Let me know if you need anything else.")], []),
    ([(U, "The weather is nice."), (A, "You could go for a walk on Saturday.")], []),
    ([(A, "I prefer to double-check before deleting files.")], []),
    ([(U, "Is the build green?"), (A, "Yes, all 412 tests passed.")], []),
    ([(U, "My colleague said she likes the new dashboard.")], []),
    ([(U, "lol that's funny")], []),
]


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


def score(gold: list[tuple[str, str, str]], pred: list[tuple[str, str, str]]) -> tuple[int, int, int]:
    """(true positives, predicted, gold) with one-to-one matching."""
    left = list(gold)
    tp = 0
    for p in pred:
        match = next((g for g in left if g[0] == p[0] and g[1] == p[1] and dice(g[2], p[2]) >= 0.6), None)
        if match is not None:
            left.remove(match)
            tp += 1
    return tp, len(pred), len(gold)


HARD = {i for i, (turn, _) in enumerate(TURNS) if turn[0][1].startswith((
    "The deadline moved", "Going forward", "I can't eat", "We've switched", "Ana and I", "Tom is now", "Don't ever",
    "The repo uses", "I actually enjoyed", "I have to admit"))}


def run(subset: set[int] | None = None) -> dict[str, Any]:
    per: dict[str, list[int]] = {c: [0, 0, 0] for c in ("fact", "correction", "task")}
    wrong: list[str] = []
    turns = [x for i, x in enumerate(TURNS) if subset is None or i in subset]
    for turn, gold in turns:
        msgs = [Message(id=f"evt_{i:023d}", session="b", role=r, content=c, created_at=T) for i, (r, c) in enumerate(turn)]
        pred = predicted(local_distill(msgs))
        for cat in per:
            tp, np_, ng = score([g for g in gold if g[0] == cat], [p for p in pred if p[0] == cat])
            per[cat] = [per[cat][0] + tp, per[cat][1] + np_, per[cat][2] + ng]
        if score(gold, pred)[0] != len(gold) or len(pred) != len(gold):
            wrong.append(f"{turn[0][1][:50]!r}: got {[(p[1], p[2][:40]) for p in pred]}")
    total = [sum(v[i] for v in per.values()) for i in range(3)]
    rows = {cat: {"precision": round(tp / np_, 3) if np_ else 1.0, "recall": round(tp / ng, 3) if ng else 1.0, "predicted": np_, "gold": ng}
            for cat, (tp, np_, ng) in {**per, "all": total}.items()}
    return {"turns": len(turns), "negative_turns": sum(1 for _, g in turns if not g), "rows": rows, "wrong": wrong}


def markdown(r: dict[str, Any]) -> str:
    lines = ["`python bench/distill.py` (protocol in its docstring): the deterministic fallback of turn-close distillation",
             f"(`local_distill`, no LLM) on {r['turns']} hand-written turns ({r['negative_turns']} with nothing worth keeping).", "",
             "| category | precision | recall | predicted | labelled |", "|---|---|---|---|---|"]
    for cat, v in r["rows"].items():
        lines.append(f"| {cat} | {v['precision']:.2f} | {v['recall']:.2f} | {v['predicted']} | {v['gold']} |")
    hard = r["harder"]["rows"]["all"]
    lines += ["", (f"The first {r['turns'] - len(HARD)} turns were written together with the rules (an optimistic bound); "
              f"{len(HARD)} harder turns, without explicit markers, were written and labelled afterwards and not tuned on: on those "
              f"alone precision {hard['precision']:.2f}, recall {hard['recall']:.2f} ({hard['predicted']} predicted, {hard['gold']} labelled).")]
    lines += ["", f"Turns not exactly right: {len(r['wrong'])}."]
    lines += [f"- {w}" for w in r["wrong"]]
    lines += ["", ("The fallback keeps sentences as said and recognises explicit markers only; it does not paraphrase, resolve "
              "pronouns or catch facts stated without a marker — the LLM path does that.")]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", action="store_true")
    p.add_argument("--write", action="store_true", help="write the section of bench/RESULTS.md")
    args = p.parse_args(argv)
    r = run()
    r["harder"] = run(HARD)
    if args.write:
        sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
        from common import write_section

        write_section("Distillation", markdown(r))
    print(json.dumps(r) if args.json else markdown(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
