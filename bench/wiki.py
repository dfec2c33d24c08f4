"""The topic wiki on LoCoMo dev, local fallback only (no LLM, no embedder).

    python bench/wiki.py ../shared/eval/locomo-dev.json [--write]

Every conversation goes into a fresh SQLite memory (the importer's sessions), is compacted
(`compact(final=True)`, extractive leaves), and every leaf's `extract-wiki` job runs.
Reported: pages per kind (one per speaker, one per recurring subject), statements, how many
are traceable to a message whose text holds them, mining time per leaf; then the same
leaves mined again at the same version (`force=True`: patches written must be 0), and the
pipeline version raised (the backfill must re-mine each leaf exactly once). Last, what a
page hit brings to recall: for each question (categories 1–4), `recall_items` (top 3
pages, their best statements) — the share of questions where a statement's message is
one of the question's evidence turns, and the statements returned per question.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from common import machine, write_section
from retrieval import load

import palimpsest.wiki as wiki_mod
from palimpsest import Memory, Settings
from palimpsest.importers import import_data
from palimpsest.wiki import text as tx


def run(path: str) -> dict[str, Any]:
    out: dict[str, Any] = {"conversations": 0, "leaves": 0, "person": 0, "subject": 0, "other": 0, "statements": 0,
                           "traceable": 0, "mine_s": 0.0, "rerun_patches": 0, "remined": 0, "backfill_s": 0.0}
    hit, per_q = [], []
    for conv in load(path):
        with tempfile.TemporaryDirectory() as home:
            settings = Settings.load(env={}, home=home, embedder="none", distill=False, tool_synth=False, compact_after=0,
                                     tags_suggest=False, wiki_backfill_delay=0.0)
            memory = Memory(settings=settings)
            import_data(memory, {**conv, "qa": []}, "locomo")
            for s in memory.sessions(limit=1000):
                memory.summaries.compact(s.id, final=True)
            leaves = [leaf for s in memory.sessions(limit=1000) for leaf in memory.store.session_summaries(s.id, 0)]
            t0 = time.perf_counter()
            memory.worker(tasks=["extract-wiki"]).drain()
            out["mine_s"] += time.perf_counter() - t0
            w = memory.wiki
            _pages(memory, w, out)
            out["rerun_patches"] += sum(int(w.mine(leaf.id, force=True)["patches"]) for leaf in leaves)
            wiki_mod.WIKI_PIPELINE_VERSION += 1
            try:
                t0 = time.perf_counter()
                w.queue_backfill()
                before = w.stats()["leaves_mined"]
                memory.worker().drain()
                out["backfill_s"] += time.perf_counter() - t0
                marks = memory.store.wiki_leaf_marks([x.id for x in leaves])
                out["remined"] += sum(1 for m in marks.values() if m.version == wiki_mod.WIKI_PIPELINE_VERSION)
                assert before == len(leaves) and not w.stale()
            finally:
                wiki_mod.WIKI_PIPELINE_VERSION -= 1
            dia = {m.id: (m.metadata or {}).get("dia_id") for s in memory.sessions(limit=1000) for m in memory.browse(session=s.id, limit=1000)}
            for qa in conv["qa"]:
                if qa.get("category") == 5 or not qa.get("evidence"):
                    continue
                items = memory.wiki.recall_items(None, qa["question"])
                got = {dia.get(mid) for it in items for mid in it["sources"]}
                hit.append(bool(got & set(qa["evidence"])))
                per_q.append(len(items))
            out["leaves"] += len(leaves)
            out["conversations"] += 1
            memory.close()
    out["questions"] = len(hit)
    out["evidence_hit"] = round(statistics.fmean(hit), 4) if hit else 0.0
    out["statements_per_question"] = round(statistics.fmean(per_q), 2) if per_q else 0.0
    return out


def _pages(memory: Memory, w: Any, out: dict[str, Any]) -> None:
    for t in w.list(limit=1000):
        out[t["kind"] if t["kind"] in ("person", "subject") else "other"] += 1
        for s in memory.store.wiki_statements([t["id"]]):
            out["statements"] += 1
            msgs = memory.store.get_messages(s.messages)
            out["traceable"] += any(tx.norm(s.text) in tx.norm(m.content or "") for m in msgs)


def report(r: dict[str, Any]) -> str:
    per_leaf = 1000 * r["mine_s"] / max(1, r["leaves"])
    return f"""`python bench/wiki.py ../shared/eval/locomo-dev.json --write` — {machine()}; local fallback (extractive
leaves, deterministic patches), no LLM, no embedder, SQLite; settings at their defaults
(`wiki_min_leaves` 2, `wiki_statements_per_leaf` 3).

| | value |
|---|---|
| conversations / leaves mined | {r['conversations']} / {r['leaves']} |
| pages: person / recurring subject / other | {r['person']} / {r['subject']} / {r['other']} |
| statements (traceable to a message that holds them) | {r['statements']} ({r['traceable']}) |
| mining time per leaf | {per_leaf:.1f} ms |
| patches written when every leaf is mined again at the same version | {r['rerun_patches']} |
| leaves re-mined after the version was raised (each once) | {r['remined']} of {r['leaves']} ({r['backfill_s']:.1f} s) |
| questions where a recalled page statement cites an evidence turn | {r['evidence_hit']:.1%} of {r['questions']} ({r['statements_per_question']} statements per question) |

One person page per speaker (10 speakers in 5 conversations). Subjects are names (not
sentence-initial capitals) that at least two leaves mention; in casual conversation these
are mostly people and places around the speakers. Statements are sentences as said, with
their speaker, time, leaf and message ids — the fallback does not paraphrase. The last row
is what `recall_items` adds to a recall block: a page's best statements by keyword overlap
with the question; it is a supplement to message search (evidence recall@10 in
"Keyword search"), not a replacement."""


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("path")
    p.add_argument("--write", action="store_true")
    args = p.parse_args()
    r = run(args.path)
    print(r)
    if args.write:
        write_section("Wiki", report(r))


if __name__ == "__main__":
    main()
