"""What more hits cost a recall block: recall at 4,000 tokens asking search for 80 hits
(budget / 50, before short ids) and for 100 (budget / 35, capped), alternated query by
query in one process on one store, so a loaded machine weighs on both alike.

    .venv/bin/python bench/recall_hits.py [--messages 20000] [--queries 200]

Synthetic corpus (bench/common.py), hash embedder: the figures are recall's own work.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Corpus

from palimpsest import Memory, Settings

LIMITS = (80, 100)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=20_000)
    p.add_argument("--queries", type=int, default=200)
    args = p.parse_args(argv)
    corpus = Corpus(seed=5)
    with tempfile.TemporaryDirectory() as home:
        memory = Memory(settings=Settings.load(env={}, home=home, embedder="hash", embed_cache="off"))
        batch: dict[str, list[dict]] = {}
        for session, msg in corpus.messages(args.messages):
            batch.setdefault(session, []).append(msg)
        for session, msgs in batch.items():
            memory.ingest_session(session, msgs)
        memory.reindex()
        took: dict[int, list[float]] = {n: [] for n in LIMITS}
        for i, q in enumerate(corpus.queries(args.queries)):
            for limit in (LIMITS if i % 2 else LIMITS[::-1]):  # each side goes first half the time
                started = time.perf_counter()
                memory.recall(corpus.sessions[0], q, 4000, limit=limit)
                took[limit].append(time.perf_counter() - started)
        memory.close()
    for limit, samples in took.items():
        samples.sort()
        print(f"{limit} hits: p50 {statistics.median(samples) * 1000:.1f} ms, p95 {samples[int(len(samples) * 0.95)] * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
