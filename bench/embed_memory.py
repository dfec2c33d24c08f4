"""Peak memory and time of the local embedder on long texts, per batch budget.

    python bench/embed_memory.py [--texts 256] [--budgets 8192 4096 2048]

Each budget runs in its own process (onnxruntime's arena keeps a process's largest batch):
256 texts of 150–230 words (full 256-token windows, as document chunks and long messages are)
and 512 short ones, embedded with `LocalEmbedder._run(windows, 32, budget)`. Prints seconds and
peak RSS per budget, and each as a ratio to the first budget (measured in the same run:
these machines are noisy). 8192 tokens is 32 full windows, the batch before the budget.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time


def child(budget: int, n: int) -> None:
    from palimpsest.embed import LocalEmbedder

    e = LocalEmbedder()
    run = e._run
    e._run = lambda windows: run(windows, 32, budget)  # type: ignore[method-assign]
    rng = random.Random(0)
    words = ["the", "of", "memory", "agent", "session", "vector", "store", "index", "journal", "retrieval", "fact", "summary", "window", "token", "chunk", "budget"]
    long = [" ".join(rng.choice(words) for _ in range(rng.randint(150, 230))) for _ in range(n)]
    short = [" ".join(rng.choice(words) for _ in range(rng.randint(5, 30))) for _ in range(2 * n)]
    t = time.perf_counter()
    e.embed_batch(long)
    t_long = time.perf_counter() - t
    t = time.perf_counter()
    e.embed_batch(short)
    t_short = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(json.dumps({"budget": budget, "long_s": round(t_long, 2), "short_s": round(t_short, 2), "peak_mb": peak}))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--texts", type=int, default=256)
    p.add_argument("--budgets", type=int, nargs="+", default=[8192, 4096, 2048])
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args.child, args.texts)
    rows = []
    for budget in args.budgets:
        out = subprocess.run([sys.executable, __file__, "--child", str(budget), "--texts", str(args.texts)],
                             check=True, capture_output=True, text=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    base = rows[0]
    print(f"{'budget':>7} {'long s':>7} {'short s':>8} {'peak MB':>8}   ratios to {base['budget']}")
    for r in rows:
        print(f"{r['budget']:>7} {r['long_s']:>7} {r['short_s']:>8} {r['peak_mb']:>8}   time {r['long_s'] / base['long_s']:.2f}, "
              f"short {r['short_s'] / base['short_s']:.2f}, memory {r['peak_mb'] / base['peak_mb']:.2f}")


if __name__ == "__main__":
    main()
