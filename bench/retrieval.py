"""Retrieval quality on the public conversational-memory benchmarks (../shared/eval/).

    python bench/retrieval.py locomo ../shared/eval/locomo-dev.json [--json]
    python bench/retrieval.py longmemeval ../shared/eval/longmemeval-s-dev.jsonl.gz [--json]
    python bench/retrieval.py locomo ../shared/eval/locomo-dev.json --split a   # one half

`--split a|b`: one half of the dev set, so a tuned constant is chosen on one half and
reported on the other (and on the full set): LoCoMo is split by conversation (a: the 1st,
3rd, 5th …; b: the 2nd, 4th …), LongMemEval by question (a: even positions in the file,
b: odd).

Runs the protocols of `shared/eval/README.md` against Palimpsest's own ingest and search:
a fresh memory per conversation (LoCoMo) or per question (LongMemEval), every turn a
message with its session's date as `created_at`, then `Memory.search` with the question.
With `--json` the last line is one JSON object: recall@5/10/20, per_category, p50_ms,
p95_ms, questions (and the dataset-specific extras; LongMemEval's turn_recall@10 is the
mean over the `turn_questions` that have evidence turns, abstention questions have none). Embeddings are cached by content
hash in bench/.cache/embed-cache.sqlite, so only the first run pays for the model.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from palimpsest import Memory, Settings
from palimpsest.embed import EmbeddingCache, get_embedder

CACHE = Path(__file__).parent / ".cache" / "embed-cache.sqlite"
KS = (5, 10, 20)
TOP10: list[list[Any]] = []  # each question's top-10 evidence ids, in run order (for --postgres)


def load(path: str) -> Any:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read()
    text = text.strip()
    if text.startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def locomo_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' → UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def lme_time(text: str) -> datetime:
    """'2023/05/20 (Sat) 15:08' → UTC datetime."""
    return datetime.strptime(re.sub(r"\s*\(\w+\)\s*", " ", text).strip(), "%Y/%m/%d %H:%M").replace(tzinfo=UTC)


def locomo_sessions(conv: dict[str, Any]) -> Iterator[tuple[str, datetime, list[dict[str, Any]]]]:
    c = conv["conversation"]
    n = 1
    while f"session_{n}" in c:
        start = locomo_time(c[f"session_{n}_date_time"])
        turns = []
        for i, t in enumerate(c[f"session_{n}"]):
            text = t.get("text", "")
            if t.get("blip_caption"):
                text = f"{text} [shares a photo: {t['blip_caption']}]"
            role = "user" if t["speaker"] == c["speaker_a"] else "assistant"
            turns.append({"role": role, "content": text, "created_at": (start + timedelta(seconds=i)).isoformat(),
                          "metadata": {"speaker": t["speaker"], "dia_id": t["dia_id"]}})
        yield f"{conv['sample_id']}-s{n}", start, turns
        n += 1


def _database(server: str) -> str:
    """A fresh database on the PostgreSQL server at `server` (for --postgres)."""
    import psycopg

    name = f"palimpsest_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server.rsplit("/", 1)[0] + "/" + name


def lme_sessions(q: dict[str, Any]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A LongMemEval question's haystack as (session id, messages): the session's date as
    `created_at` (one second per turn, so order survives), `has_answer` in metadata."""
    for sid, date, turns in zip(q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"]):
        start = lme_time(date)
        yield _safe(sid), [{"role": t["role"], "content": t["content"] or "(empty)", "created_at": (start + timedelta(seconds=i)).isoformat(),
                            "metadata": {"has_answer": bool(t.get("has_answer"))}} for i, t in enumerate(turns)]


def open_memory(home: str, args: argparse.Namespace, embedder: Any, cache: Any) -> Memory:
    overrides = {k: getattr(args, k) for k in ("w_fts", "w_semantic", "w_temporal", "w_importance", "w_session", "w_reply", "w_speaker", "w_when", "w_dated", "w_answer", "w_follow", "w_topic", "w_seed", "session_cap", "recipe", "decay_clock",
                                       "floor_similarity", "floor_unknown", "floor_stranger") if getattr(args, k, None) is not None}
    if getattr(args, "store_server", None):
        overrides["store"] = _database(args.store_server)
    settings = Settings.load(env={}, home=home, embedder="none" if embedder is None else "local", timezone="UTC", **overrides)
    memory = Memory(settings=settings)
    if embedder is not None:
        memory.use_embedder(embedder, cache)
    return memory


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def split(items: list[Any], half: str | None) -> list[Any]:
    """One half of a dev set by position (a: even, b: odd), or all of it."""
    if half is None:
        return items
    return items[0 if half == "a" else 1::2]


def run_locomo(data: list[Any], args: argparse.Namespace, embedder: Any, cache: Any) -> dict[str, Any]:
    recall: dict[int, list[float]] = {k: [] for k in KS}
    full: dict[int, list[float]] = {k: [] for k in KS}
    per_cat: dict[str, dict[int, list[float]]] = defaultdict(lambda: {k: [] for k in KS})
    latencies: list[float] = []
    for conv in split(data, args.split):
        with tempfile.TemporaryDirectory() as home:
            memory = open_memory(home, args, embedder, cache)
            last = datetime(1970, 1, 1, tzinfo=UTC)
            for session, start, turns in locomo_sessions(conv):
                memory.ingest_session(session, turns)
                last = max(last, start)
            if embedder is not None:
                memory.reindex()
            for qa in conv["qa"][: args.max_questions]:
                if qa.get("category") == 5 or not qa.get("evidence"):
                    continue
                t0 = time.perf_counter()
                hits = memory.search(qa["question"], limit=max(KS), touch=False, now=last + timedelta(days=1)).hits
                latencies.append((time.perf_counter() - t0) * 1000)
                ranked = [h.message.metadata.get("dia_id") for h in hits]
                TOP10.append(ranked[:10])
                evidence = set(qa["evidence"])
                if args.show_misses and evidence - set(ranked[:10]):
                    print(f"MISS locomo cat {qa['category']} {qa['question']!r}: "
                          + ", ".join(f"{e} at {ranked.index(e) + 1 if e in ranked else '>' + str(max(KS))}" for e in sorted(evidence - set(ranked[:10]))))
                for k in KS:
                    got = len(evidence & set(ranked[:k])) / len(evidence)
                    recall[k].append(got)
                    full[k].append(1.0 if got == 1.0 else 0.0)
                    per_cat[str(qa["category"])][k].append(got)
            memory.close()
    mean = lambda xs: round(statistics.fmean(xs), 4) if xs else 0.0
    return {
        "dataset": "locomo",
        **{f"recall@{k}": mean(recall[k]) for k in KS},
        **{f"all@{k}": mean(full[k]) for k in KS},
        "per_category": {c: {f"recall@{k}": mean(v[k]) for k in KS} | {"n": len(v[10])} for c, v in sorted(per_cat.items())},
        "p50_ms": round(percentile(latencies, 50), 2),
        "p95_ms": round(percentile(latencies, 95), 2),
        "questions": len(recall[10]),
    }


def run_longmemeval(data: list[Any], args: argparse.Namespace, embedder: Any, cache: Any) -> dict[str, Any]:
    rows: dict[str, list[float]] = defaultdict(list)
    per_type: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    latencies: list[float] = []
    chosen = [q for q in split(data, args.split) if not args.types or q["question_type"] in args.types]
    for q in chosen[: args.max_questions]:
        with tempfile.TemporaryDirectory() as home:
            memory = open_memory(home, args, embedder, cache)
            for session, msgs in lme_sessions(q):
                memory.ingest_session(session, msgs)
            if embedder is not None:
                memory.reindex()
            t0 = time.perf_counter()
            hits = memory.search(q["question"], limit=200, touch=False, now=lme_time(q["question_date"])).hits
            latencies.append((time.perf_counter() - t0) * 1000)
            memory.close()
        answer = {_safe(s) for s in q["answer_session_ids"]}
        sessions: list[str] = []
        for h in hits:
            if h.message.session not in sessions:
                sessions.append(h.message.session)
        answer_turns = [h for h in hits[:10] if h.message.metadata.get("has_answer")]
        total_answer_turns = sum(1 for s in q["haystack_sessions"] for t in s if t.get("has_answer"))
        row = {}
        for k in (5, 10):
            found = answer & set(sessions[:k])
            row[f"recall@{k}"] = len(found) / len(answer)
            row[f"recall_any@{k}"] = 1.0 if found else 0.0
            row[f"recall_all@{k}"] = 1.0 if found == answer else 0.0
        found20 = answer & set(sessions[:20])
        row["recall@20"] = len(found20) / len(answer)
        if args.show_misses and total_answer_turns and len(answer_turns) < min(10, total_answer_turns):
            ranks = [i + 1 for i, h in enumerate(hits) if h.message.metadata.get("has_answer")]
            print(f"MISS longmemeval {q['question_type']} {q['question']!r}: answer turns at {ranks[:12]} of {total_answer_turns}")
        if total_answer_turns:  # abstention questions (`_abs`) have no evidence turn: left out, as in eval/README's BM25 figure
            row["turn_recall@10"] = len(answer_turns) / min(10, total_answer_turns)
        for key, value in row.items():
            rows[key].append(value)
            per_type[q["question_type"]][key].append(value)
    mean = lambda xs: round(statistics.fmean(xs), 4) if xs else 0.0
    return {
        "dataset": "longmemeval",
        **{k: mean(v) for k, v in rows.items()},
        "per_category": {t: {k: mean(v) for k, v in d.items()} | {"n": len(d["recall@5"])} for t, d in sorted(per_type.items())},
        "p50_ms": round(percentile(latencies, 50), 2),
        "p95_ms": round(percentile(latencies, 95), 2),
        "questions": len(rows["recall@5"]),
        "turn_questions": len(rows["turn_recall@10"]),
    }


def _safe(session_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._:@+=-]", "_", session_id).lstrip("._:@+=-") or "s"


def print_table(result: dict[str, Any]) -> None:
    print(f"\n{result['dataset']}: {result['questions']} questions, p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms")
    keys = [k for k in result if "@" in k]
    print("overall  " + "  ".join(f"{k}={result[k]:.3f}" for k in keys))
    for cat, vals in result["per_category"].items():
        print(f"  {cat:<28} n={vals['n']:<4}" + "  ".join(f"{k}={v:.3f}" for k, v in vals.items() if k != "n"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dataset", choices=["locomo", "longmemeval"])
    p.add_argument("path")
    p.add_argument("--json", action="store_true")
    p.add_argument("--embedder", default="local", choices=["local", "hash", "none"])
    p.add_argument("--recipe", choices=["hybrid", "rrf"])
    p.add_argument("--decay-clock", choices=["created", "accessed"])
    for w in ("fts", "semantic", "temporal", "importance", "session", "reply", "speaker", "when", "dated", "answer", "follow", "topic", "seed"):
        p.add_argument(f"--w-{w}", type=float)
    p.add_argument("--show-misses", action="store_true", help="print each question whose evidence is not all in the top 10, with its ranks")
    p.add_argument("--session-cap", type=int, help="aggregation questions: hits of one session before the others' (0: off)")
    p.add_argument("--floor-similarity", help="relevance floor: auto, off or a cosine")
    p.add_argument("--floor-unknown", help="relevance floor for queries naming only what is not stored: auto, off or a cosine")
    p.add_argument("--floor-stranger", help="the same for queries about a third party: auto, off or a cosine")
    p.add_argument("--max-questions", type=int, default=None)
    p.add_argument("--split", choices=["a", "b"], help="one half of the dev set (LoCoMo by conversation, LongMemEval by question)")
    p.add_argument("--types", nargs="*", help="LongMemEval: only these question types")
    p.add_argument("--postgres", help="also run on PostgreSQL (a server URL; a fresh database per memory) and report the top-10 overlap")
    args = p.parse_args(argv)
    embedder = get_embedder(args.embedder) if args.embedder != "none" else None
    cache = EmbeddingCache(CACHE) if embedder is not None else None
    data = load(args.path)
    started = time.time()
    run = run_locomo if args.dataset == "locomo" else run_longmemeval
    result = run(data, args, embedder, cache)
    if args.postgres:
        sqlite_top = list(TOP10)
        TOP10.clear()
        args.store_server = args.postgres
        result["postgres"] = run(data, args, embedder, cache)
        pairs = list(zip(sqlite_top, TOP10))
        # the share of SQLite's top-10 that PostgreSQL's top-10 also holds (LoCoMo: by dia_id)
        result["top10_overlap"] = round(statistics.fmean(len(set(a) & set(b)) / max(1, len(a), len(b)) for a, b in pairs), 4) if pairs else None
    result["seconds"] = round(time.time() - started, 1)
    result["config"] = {k: v for k, v in vars(args).items() if k not in ("path", "json") and v is not None}
    if not args.json:
        print_table(result)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
