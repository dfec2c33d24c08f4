"""Compaction on LoCoMo dev with the local (extractive) fallback, and a 100,000-message session.

    python bench/compaction.py ../shared/eval/locomo-dev.json [--embedder none|local] [--write]
    python bench/compaction.py --big 100000 [--write]

LoCoMo: every conversation goes into a fresh memory as in `bench/retrieval.py` (one
Palimpsest session per LoCoMo session), then `summaries.compact(session, final=True)` with
no LLM. Checked: every message is in exactly one leaf, and every session's tree is complete
(no orphan leaf or branch, one live root). Evidence recall@10 is then measured twice:
messages only (`Memory.search`), and messages with summaries — the top 3 summary hits
(`search_summaries`) are expanded (`expand`) and each of their messages gets a bonus of
`b × the summary's score` on top of its hybrid score in the message search (top 10); three
policies: `lift_0.2` (only messages the search returned get the bonus: it can reorder them,
never push one out), `add_0.1` and `add_0.5` (expanded messages the search did not return
become candidates too, with the bonus alone).

Big: one session of N synthetic messages (bench/common.py corpus), routine compaction
until nothing is left above the keep threshold, then final; reports time, leaves written,
the largest batch and the peak traced Python memory (bounded batches: it must not grow
with N).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from common import Corpus, machine, write_section
from retrieval import CACHE, load, locomo_sessions

from palimpsest import Memory, Settings
from palimpsest.summaries import LEAF_MAX_MESSAGES

BONUS = 0.2
TOP_SUMMARIES = 3


def open_memory(home: str, embedder: Any, cache: Any, **kw: Any) -> Memory:
    opts = {"distill": False, "tool_synth": False, "compact_after": 0, **kw}
    settings = Settings.load(env={}, home=home, embedder="none" if embedder is None else "local", **opts)
    memory = Memory(settings=settings)
    if embedder is not None:
        memory.use_embedder(embedder, cache)
    return memory


def merged(memory: Memory, question: str, now: datetime, k: int = 10, bonus: float = BONUS, new: bool = False) -> list[Any]:
    """Message hits re-ranked with the summaries that match: each message of an expanded
    summary hit gets `bonus × the summary's score`; `new`: messages the message search did
    not return become candidates too (with the bonus alone)."""
    # the message hits of the same search as "messages only" (Memory.search's top 10 depends on its limit)
    hits = memory.search(question, limit=k, touch=False, now=now).hits
    scores = {h.message.id: h.score for h in hits}
    by_id = {h.message.id: h.message for h in hits}
    for sh in memory.summaries.search(question, None, TOP_SUMMARIES, now=now):
        for m in memory.summaries.expand(sh.summary.id, limit=500)["messages"]:
            if m.id not in by_id and not new:
                continue
            by_id.setdefault(m.id, m)
            scores[m.id] = scores.get(m.id, 0.0) + bonus * sh.score
    return [by_id[i] for i in sorted(scores, key=lambda i: -scores[i])[:k]]


VARIANTS = {"lift_0.2": {"bonus": 0.2, "new": False}, "add_0.1": {"bonus": 0.1, "new": True},
            "add_0.5": {"bonus": 0.5, "new": True}}


def run_locomo(path: str, embedder: Any, cache: Any) -> dict[str, Any]:
    data = load(path)
    out: dict[str, Any] = {"conversations": len(data), "messages": 0, "sessions": 0, "leaves": 0, "branches": 0, "roots": 0,
                           "covered_once": 0, "covered_twice_or_more": 0, "uncovered": 0, "complete_trees": 0, "seconds": 0.0}
    recall: dict[str, list[float]] = {"messages": [], **{v: [] for v in VARIANTS}}
    for conv in data:
        with tempfile.TemporaryDirectory() as home:
            memory = open_memory(home, embedder, cache)
            last = datetime(1970, 1, 1, tzinfo=UTC)
            sessions = []
            for session, start, turns in locomo_sessions(conv):
                memory.ingest_session(session, turns)
                sessions.append(session)
                last = max(last, start)
            if embedder is not None:
                memory.reindex()
            t0 = time.perf_counter()
            for s in sessions:
                written = memory.summaries.compact(s, final=True)
                for level in ("leaf", "branch", "root"):
                    out[{"leaf": "leaves", "branch": "branches", "root": "roots"}[level]] += written[level]
            out["seconds"] += time.perf_counter() - t0
            _coverage(memory, sessions, out)
            now = last + timedelta(days=1)
            for qa in conv["qa"]:
                if qa.get("category") == 5 or not qa.get("evidence"):
                    continue
                evidence = set(qa["evidence"])
                plain = [h.message.metadata.get("dia_id") for h in memory.search(qa["question"], limit=10, touch=False, now=now).hits]
                recall["messages"].append(len(evidence & set(plain)) / len(evidence))
                for name, opts in VARIANTS.items():
                    rich = [m.metadata.get("dia_id") for m in merged(memory, qa["question"], now, **opts)]
                    recall[name].append(len(evidence & set(rich)) / len(evidence))
            memory.close()
    out["recall@10"] = {k: round(statistics.fmean(v), 4) for k, v in recall.items()}
    out["questions"] = len(recall["messages"])
    out["seconds"] = round(out["seconds"], 1)
    return out


def _coverage(memory: Memory, sessions: list[str], out: dict[str, Any]) -> None:
    for s in sessions:
        ids = [m.id for m in memory.browse(session=s, limit=1000)]
        counts = dict.fromkeys(ids, 0)
        for leaf in memory.store.session_summaries(s, 0, live=False):
            for mid in leaf.sources:
                counts[mid] = counts.get(mid, 0) + 1
        out["messages"] += len(ids)
        out["sessions"] += 1
        out["covered_once"] += sum(1 for n in counts.values() if n == 1)
        out["covered_twice_or_more"] += sum(1 for n in counts.values() if n > 1)
        out["uncovered"] += sum(1 for n in counts.values() if n == 0)
        out["complete_trees"] += bool(memory.summaries.check_tree(s)["complete"])


def run_big(n: int) -> dict[str, Any]:
    corpus = Corpus(seed=5, sessions=1)
    with tempfile.TemporaryDirectory() as home:
        memory = open_memory(home, None, None)
        batch: list[dict[str, Any]] = []
        t0 = time.perf_counter()
        for _, m in corpus.messages(n):
            batch.append(m)
            if len(batch) == 1000:
                memory.ingest_session("big", batch)
                batch = []
        if batch:
            memory.ingest_session("big", batch)
        load_s = time.perf_counter() - t0
        memory = open_memory(home, None, None, compact_after=200, compact_keep=50)
        tracemalloc.start()
        t0 = time.perf_counter()
        routine = memory.summaries.compact("big")
        final = memory.summaries.compact("big", final=True)
        took = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        leaves = memory.store.session_summaries("big", 0)
        result = {"messages": n, "load_seconds": round(load_s, 1), "compact_seconds": round(took, 1),
                  "leaves": len(leaves), "branches": routine["branch"] + final["branch"], "roots_written": routine["root"] + final["root"],
                  "largest_leaf": max(len(x.sources) for x in leaves), "leaf_cap": LEAF_MAX_MESSAGES,
                  "peak_traced_mb": round(peak / 1e6, 1), "complete": memory.summaries.check_tree("big")["complete"]}
        memory.close()
    return result


def markdown(loco: dict[str, Any] | None, big: dict[str, Any] | None, embedder: str) -> str:
    lines = [f"`python bench/compaction.py` (protocol in its docstring); local extractive fallback, no LLM; {machine()}.", ""]
    if loco:
        r = loco
        lines += [(f"LoCoMo dev: {r['conversations']} conversations, {r['sessions']} sessions, {r['messages']} messages; "
                  f"{r['leaves']} leaves, {r['branches']} branches, {r['roots']} roots written in {r['seconds']} s."), "",
                  "| check | result |", "|---|---|",
                  f"| messages in exactly one leaf | {r['covered_once']} / {r['messages']} |",
                  f"| messages in no leaf / in several | {r['uncovered']} / {r['covered_twice_or_more']} |",
                  f"| complete trees (no orphan, one root) | {r['complete_trees']} / {r['sessions']} |", "",
                  f"Evidence recall@10 over {r['questions']} questions (embedder: {embedder}):", "",
                  "| search | recall@10 |", "|---|---|",
                  f"| messages only | {r['recall@10']['messages']:.4f} |",
                  *[f"| messages + summaries, {v} | {r['recall@10'][v]:.4f} |" for v in VARIANTS], ""]
    if big:
        b = big
        lines += [(f"One session of {b['messages']:,} synthetic messages: compacted in {b['compact_seconds']} s "
                  f"({b['leaves']} leaves, {b['branches']} branches, {b['roots_written']} roots written as it grew; tree complete: "
                  f"{b['complete']}); largest leaf {b['largest_leaf']} messages (cap {b['leaf_cap']}); "
                  f"peak traced Python memory {b['peak_traced_mb']} MB. Load took {b['load_seconds']} s."), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path", nargs="?")
    p.add_argument("--embedder", default="none", choices=["none", "local"])
    p.add_argument("--big", type=int, default=0)
    p.add_argument("--write", action="store_true")
    args = p.parse_args(argv)
    embedder = cache = None
    if args.embedder == "local":
        from palimpsest.embed import EmbeddingCache, get_embedder

        embedder, cache = get_embedder("local"), EmbeddingCache(CACHE)
    loco = run_locomo(args.path, embedder, cache) if args.path else None
    big = run_big(args.big) if args.big else None
    print(json.dumps({"locomo": loco, "big": big}))
    if args.write:
        write_section("Compaction", markdown(loco, big, args.embedder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
