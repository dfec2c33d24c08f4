"""Keyword search latency at 100,000 messages (issue 2 benchmark).

Loads N synthetic messages (bench/common.py) through `Memory.ingest_session`, then runs
200 varied keyword queries (1–6 words, common and rare, some with stop words and
punctuation; a fifth with a session or role filter) through `Memory.search` with no
embedder — BM25 keyword ranking, the all-words → any-word fallback, access counting —
and reports p50/p95. Each query is run once untimed first, so the figures are for a warm
page cache, as in a running server; the queries run once as the load left the index and
again after the full-text merging a server does in its idle passes (`compact_index`).

    .venv/bin/python bench/search.py                      # 100,000 messages, writes bench/RESULTS.md
    .venv/bin/python bench/search.py --messages 20000 --no-write
    .venv/bin/python bench/search.py --home /tmp/bench-home   # load once, then re-use

Target: p95 <= 10 ms.

With `--vectors`, every message also gets a 384-dimension vector under the local model's
id and the same queries run through the hybrid search (keyword + exact vector search +
time + importance), the query embedded by the real local model each time (no cache).
The stored vectors are random unit vectors — embedding 100,000 synthetic messages with
the real model would take most of an hour here and tells nothing more about latency.
Baseline in the same run: the keyword-only search on the same store. Targets: p95 <= 50 ms
at 100,000 messages, <= 250 ms at 1,000,000.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Corpus, Timer, machine, summary_ms, table, write_section
from ingest import batches

from palimpsest import Memory, Settings
from palimpsest.service import compact_index


def load(memory: Memory, n: int) -> float:
    if memory.stats()["messages"] >= n:
        return 0.0
    with Timer() as t:
        for session, msgs in batches(Corpus(), n, 1000):
            memory.ingest_session(session, msgs)
    return t.seconds


def add_vectors(memory: Memory, model: str, dim: int = 384, batch: int = 5000) -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    while todo := memory.store.messages_without_vectors(model, batch):
        vectors = rng.standard_normal((len(todo), dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        memory.store.put_vectors(model, [(m.id, v) for m, v in zip(todo, vectors)])


def compact(memory: Memory) -> float:
    """All the merging a server's idle passes would do, timed."""
    with Timer() as t:
        compact_index(memory, float("inf"))
    return t.seconds


def warm_graph(memory: Memory) -> float | None:
    """Start the HNSW graph (built in the background past `ann_threshold`, as in a running
    server) and wait for it, so the timed queries are the steady state. Its build time."""
    cache = getattr(memory.store, "_vectors", None)
    if cache is None or memory.stats()["messages"] <= memory.settings.ann_threshold:
        return None
    with Timer() as t:
        memory.search("warm up the graph", limit=1, touch=False)
        cache.wait_for_graph(memory.embedder.model_id, 1800)
    return t.seconds


def run(memory: Memory, queries: list[str]) -> dict[str, Any]:
    samples, fallbacks, empty, hits = [], 0, 0, 0
    for i, q in enumerate(queries):
        filters: dict[str, Any] = {}
        if i % 5 == 1:
            filters = {"session": f"bench-{i % 8}"}
        elif i % 5 == 3:
            filters = {"role": "assistant"}
        memory.search(q, limit=10, touch=False, **filters)  # warm-up
        with Timer() as t:
            result = memory.search(q, limit=10, **filters)
        samples.append(t.seconds)
        fallbacks += result.match == "any"
        empty += not result.hits
        hits += len(result.hits)
    return {**summary_ms(samples), "max_ms": max(samples) * 1000, "fallbacks": fallbacks, "empty": empty, "hits": hits}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--home", help="keep the loaded store here (re-used when it already holds enough)")
    parser.add_argument("--no-write", action="store_true", help="do not update bench/RESULTS.md")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--vectors", action="store_true", help="also measure hybrid search with a vector per message")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="palimpsest-bench-") as tmp:
        home = Path(args.home or tmp) / "home"
        with Memory(settings=Settings.load(env={}, home=str(home), embedder="none")) as memory:
            load_s = load(memory, args.messages)
            # as the writers left the full-text index, then after the merging a server's
            # idle passes do (store.compact_index, palimpsest/service.py)
            loaded = run(memory, Corpus(seed=99).queries(args.queries)) if load_s else None
            compact_s = compact(memory)
            result = run(memory, Corpus(seed=99).queries(args.queries))
            count = memory.stats()["messages"]
        hybrid, graph_s = None, None
        if args.vectors:
            settings = Settings.load(env={}, home=str(home), embedder="local", embed_cache="off")
            with Memory(settings=settings) as memory:
                add_vectors(memory, memory.embedder.model_id)
                graph_s = warm_graph(memory)
                hybrid = run(memory, Corpus(seed=99).queries(args.queries))
    rows = [(f"Memory.search, keyword, limit 10 ({args.queries} queries)", f"{result['p50_ms']:.2f}",
             f"{result['p95_ms']:.2f}", f"{result['max_ms']:.2f}")]
    if loaded:
        rows.append(("the same, just loaded (before the server's index compaction)", f"{loaded['p50_ms']:.2f}",
                     f"{loaded['p95_ms']:.2f}", f"{loaded['max_ms']:.2f}"))
    if hybrid:
        rows.append(("Memory.search, hybrid with vectors, query embedded (local model)", f"{hybrid['p50_ms']:.2f}",
                     f"{hybrid['p95_ms']:.2f}", f"{hybrid['max_ms']:.2f}"))
    lines = [
        f"{count:,} messages indexed; {machine()}. Reproduce: `.venv/bin/python bench/search.py --messages {args.messages}"
        f"{' --vectors' if args.vectors else ''}`.",
        "",
        table(rows, ("query", "p50 ms", "p95 ms", "max ms")),
        "",
        f"- target p95 <= 10 ms (keyword): **{'met' if result['p95_ms'] <= 10 else 'missed'}**"
        + (f"; just loaded: **{'met' if loaded['p95_ms'] <= 10 else 'missed'}**" if loaded else ""),
        (f"- writers merge full-text segments only at sixteen a level (migration 0014); a server's idle passes merge the "
         f"rest: here {compact_s:.1f} s of `compact_index` after the load"),
        (f"- {result['fallbacks']} queries fell back from all words to any word; {result['empty']} returned nothing; "
        f"{result['hits']:,} hits in all; a fifth of the queries filter by session, a fifth by role"),
        f"- access counts are updated on every timed query (as in use); load time {load_s:.0f} s (0 when re-used)",
    ]
    if hybrid:
        target = 50 if count <= 200_000 else 250
        if graph_s is not None:
            lines.append(f"- unfiltered vector search from the HNSW graph (past `ann_threshold`), built in the background in {graph_s:.0f} s "
                         "before the timed queries; filtered ones exact")
        lines.append(f"- hybrid p95 {hybrid['p95_ms']:.1f} ms, {hybrid['p95_ms'] / max(result['p95_ms'], 1e-9):.1f}× the keyword p95; "
                     f"target p95 <= {target} ms: **{'met' if hybrid['p95_ms'] <= target else 'missed'}**")
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section("Hybrid search" if args.vectors else "Keyword search", body)
    if args.json:
        print(json.dumps({"messages": count, **result, "loaded": loaded, "compact_s": compact_s, "hybrid": hybrid}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
