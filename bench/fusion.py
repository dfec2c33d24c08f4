"""A keyword/vector split that adapts per query, measured on the halves of both dev sets (issue 18).

    python bench/fusion.py locomo ../shared/eval/locomo-dev.json
    python bench/fusion.py longmemeval ../shared/eval/longmemeval-s-dev.jsonl.gz --betas 0.25 --ks 5

The issue asks whether a fusion that follows how confident each side is in one query can beat
the fixed pair (0.3 / 0.3) on both datasets. This script answers without touching the
library: it wraps the ranking `MessageSearch.ranked` calls (`search.messages.rank`) and
re-scores its candidates with per-query weights before the conversation stages run, so
every stage after it sees the adapted order. Each memory is ingested once and every
setting is searched on it, so a grid costs one ingest.

A side's confidence is how far its best stand out: 1 − the k-th best of its part on [0, 1]
(`fts`, BM25 over the query's best; `semantic`, the cosine stretched over the candidates).
The pair's fixed sum is split by `ck / (ck + cv)`, blended with the fixed split by β
(0: today's ranking). Signals: `gap` (both sides so), `raw` (the vector side's gap on the
raw cosine, over its best), `agree` (the vector side as sure as its top-k agrees with the
keyword side's).

Prints r@5 / r@10 / r@20 (LoCoMo) or r@5 / turn r@10 (LongMemEval) per half and overall,
and per category (LoCoMo) or type (LongMemEval) per half.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import retrieval as R

from palimpsest.embed import EmbeddingCache, get_embedder
from palimpsest.search import messages
from palimpsest.search.hybrid import Ranking

SETTING: dict[str, Any] = {"beta": 0.0, "signal": "gap", "k": 10}
_rank = messages.rank


def confidence(scores: list[float], k: int) -> float:
    """1 − the k-th best of one side's part (missing counts 0); 0 with no candidate."""
    ranked = sorted(scores, reverse=True)
    return (1.0 - (ranked[k - 1] if len(ranked) >= k else 0.0)) if ranked else 0.0


def split_for(hits: list[Any], cosines: dict[str, float], fixed: float) -> float:
    """The keyword side's share of the pair's weight for this query."""
    beta, k = SETTING["beta"], SETTING["k"]
    fts = {h.id: h.parts.get("fts", 0.0) for h in hits if h.parts.get("fts", 0.0) > 0}
    sem = {h.id: h.parts.get("semantic", 0.0) for h in hits}
    if beta <= 0 or not fts or not cosines:
        return fixed
    ck = confidence(list(fts.values()), k)
    if SETTING["signal"] == "raw":
        top = sorted(cosines.values(), reverse=True)
        cv = (top[0] - (top[k - 1] if len(top) >= k else 0.0)) / max(1e-9, top[0])
    elif SETTING["signal"] == "agree":
        kt = set(sorted(fts, key=lambda i: -fts[i])[:k])
        vt = set(sorted(sem, key=lambda i: -sem[i])[:k])
        agree = len(kt & vt) / k
        cv = confidence(list(sem.values()), k) * (1 - agree) + 0.5 * agree
    else:
        cv = confidence(list(sem.values()), k)
    if ck + cv <= 1e-9:
        return fixed
    return (1 - beta) * fixed + beta * ck / (ck + cv)


def adaptive_rank(source: Any, query: str, weights: Any, **kw: Any) -> Ranking:
    ranking = _rank(source, query, weights, **kw)
    if kw.get("recipe", "hybrid") != "hybrid" or SETTING["beta"] <= 0:
        return ranking
    total = weights.fts + weights.semantic
    share = split_for(ranking.hits, ranking.cosines, weights.fts / total if total else 0.5)
    for h in ranking.hits:
        p = h.parts
        h.score = (total * share * p.get("fts", 0.0) + total * (1 - share) * p.get("semantic", 0.0)
                   + weights.temporal * p.get("temporal", 0.0) + weights.importance * p.get("importance", 0.0))
    ranking.hits.sort(key=lambda h: (-h.score, *source.tiebreak(h.row)))
    return ranking


messages.rank = adaptive_rank


def grid(signals: list[str], betas: list[float], ks: list[int]) -> list[tuple[str, float, str, int]]:
    return [("fixed", 0.0, "gap", 10)] + [(f"{s} b{b} k{k}", b, s, k) for s in signals for b in betas for k in ks]


def run_locomo(data: list[Any], settings: list[tuple[str, float, str, int]], embedder: Any, cache: Any) -> list[dict[str, Any]]:
    rows = []
    for ci, conv in enumerate(data):
        with tempfile.TemporaryDirectory() as home:
            memory = R.open_memory(home, argparse.Namespace(), embedder, cache)
            last = datetime(1970, 1, 1, tzinfo=UTC)
            for session, start, turns in R.locomo_sessions(conv):
                memory.ingest_session(session, turns)
                last = max(last, start)
            memory.reindex()
            for name, beta, signal, k in settings:
                SETTING.update(beta=beta, signal=signal, k=k)
                for qa in conv["qa"]:
                    if qa.get("category") == 5 or not qa.get("evidence"):
                        continue
                    hits = memory.search(qa["question"], limit=20, touch=False, now=last + timedelta(days=1)).hits
                    ranked = [h.message.metadata.get("dia_id") for h in hits]
                    evidence = set(qa["evidence"])
                    rows.append({"setting": name, "half": "ab"[ci % 2], "cat": str(qa["category"]),
                                 **{f"r@{n}": len(evidence & set(ranked[:n])) / len(evidence) for n in (5, 10, 20)}})
            memory.close()
    return rows


def run_longmemeval(data: list[Any], settings: list[tuple[str, float, str, int]], embedder: Any, cache: Any) -> list[dict[str, Any]]:
    rows = []
    for qi, q in enumerate(data):
        with tempfile.TemporaryDirectory() as home:
            memory = R.open_memory(home, argparse.Namespace(), embedder, cache)
            for session, msgs in R.lme_sessions(q):
                memory.ingest_session(session, msgs)
            memory.reindex()
            answer = {R._safe(s) for s in q["answer_session_ids"]}
            total = sum(1 for s in q["haystack_sessions"] for t in s if t.get("has_answer"))
            for name, beta, signal, k in settings:
                SETTING.update(beta=beta, signal=signal, k=k)
                hits = memory.search(q["question"], limit=200, touch=False, now=R.lme_time(q["question_date"])).hits
                sessions: list[str] = []
                for h in hits:
                    if h.message.session not in sessions:
                        sessions.append(h.message.session)
                row = {"setting": name, "half": "ab"[qi % 2], "cat": q["question_type"], "r@5": len(answer & set(sessions[:5])) / len(answer)}
                if total:
                    row["turn r@10"] = sum(1 for h in hits[:10] if h.message.metadata.get("has_answer")) / min(10, total)
                rows.append(row)
            memory.close()
    return rows


def report(rows: list[dict[str, Any]], keys: list[str], by_cat: str) -> None:
    groups: dict[str, dict[tuple[str, str], list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        for key in keys:
            if key in r:
                for half in (r["half"], "full"):
                    groups[r["setting"]][(half, key)].append(r[key])
                groups[r["setting"]][(r["half"] + ":" + r["cat"], key)].append(r[key])
    cats = sorted({r["cat"] for r in rows})
    mean = lambda xs: f"{statistics.fmean(xs):.4f}" if xs else "-"
    print(f"{'setting':<16} " + "  ".join(f"{h} {' / '.join(keys)}" for h in ("a", "b", "full")))
    for name, g in groups.items():
        print(f"{name:<16} " + "  ".join(" / ".join(mean(g[(h, k)]) for k in keys) for h in ("a", "b", "full")))
        print(" " * 17 + "  ".join(f"{c} {mean(g[('a:' + c, by_cat)])}·{mean(g[('b:' + c, by_cat)])}" for c in cats))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset", choices=["locomo", "longmemeval"])
    p.add_argument("path")
    p.add_argument("--signals", nargs="*", default=["gap", "raw", "agree"])
    p.add_argument("--betas", nargs="*", type=float, default=[0.25, 0.5, 0.75, 1.0])
    p.add_argument("--ks", nargs="*", type=int, default=[10])
    args = p.parse_args(argv)
    embedder, cache = get_embedder("local"), EmbeddingCache(R.CACHE)
    settings = grid(args.signals, args.betas, args.ks)
    if args.dataset == "locomo":
        report(run_locomo(R.load(args.path), settings, embedder, cache), ["r@5", "r@10", "r@20"], "r@10")
    else:
        report(run_longmemeval(R.load(args.path), settings, embedder, cache), ["r@5", "turn r@10"], "turn r@10")
    return 0


if __name__ == "__main__":
    sys.exit(main())
