"""Recall over long pasted messages (12 of ~25 KB, 500 rows each, no embedder), the path as it is beside the path
without its two shortcuts in the same run (a ratio, not an absolute time: these machines are noisy): the snippet's
substring test before a line's words (`snippet.may_say`), and the journal read only where the index's copy lacks a
query word (`Recaller._whole`). Whether the reservation code asked about is in the block, on each path.

Then a support bot's customer (one turn saying her plan) with one pasted log of 0.5, 2.5 and 5 MB beside it: recall's
time against the same customer's without the log, in the same run (a 5 MB log had made every recall of hers fail at the
60 s deadline), and whether her plan is in the block.

    .venv/bin/python bench/recall_long.py
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path
from unittest import mock

from palimpsest import Memory
from palimpsest.recall import recaller, snippet
from palimpsest.settings import Settings

QUESTIONS = [("is FSP-0003Q7 the fasano code?", "FSP-0003Q7"), ("which hotel booking in lisbon?", "")]


def pasted(count: int) -> list[dict[str, str]]:
    rng = random.Random(1)
    words = ["flight", "hotel", "booking", "seat", "lisbon", "porto", "train", "coffee", "meeting", "budget", "invoice", "report"]
    return [{"role": "user", "content": "\n".join(f"row {j}: {rng.choice(words)} {rng.choice(words)} code X{i}Y{j} seat {j % 30}A"
                                                  f" 03NOV." for j in range(500)) + f"\nreservation FSP-{i:04d}Q7 for the fasano hotel"}
            for i in range(count)]


def timed(memory: Memory, query: str, budget: int = 2000, runs: int = 3, **scope: str) -> tuple[float, str]:
    best, block = float("inf"), ""
    for _ in range(runs):
        started = time.perf_counter()
        block = memory.recall(None, query, budget, **scope).block
        best = min(best, time.perf_counter() - started)
    return best, block


LOG_LINE = "2026-11-12T08:14:02Z ERROR upstream timeout on /api/v3/orders id=48213 retry=3\n"  # 80 characters


def customer(log_lines: int) -> Memory:
    """A customer's memory: her plan said in one turn and, when `log_lines`, a log of that many lines pasted in another."""
    memory = Memory(Path(tempfile.mkdtemp()), settings=Settings.load(env={}, embedder="none"))
    memory.append("big-1", "user", "we are on the Pro plan with 12 seats", channel="bigchan")
    if log_lines:
        memory.append("big-log", "user", LOG_LINE * log_lines, channel="bigchan")
    memory.worker().drain()
    return memory


def pasted_logs() -> None:
    base, _ = timed(customer(0), "what plan are we on?", 4000, channel="bigchan")
    print("\n| log pasted | recall s | without the log s | ratio | plan in block |")
    print("|---|---|---|---|---|")
    for lines in (6_500, 32_500, 65_000):
        took, block = timed(customer(lines), "what plan are we on?", 4000, channel="bigchan")
        print(f"| {lines * len(LOG_LINE) / 1e6:.1f} MB | {took:.2f} | {base:.2f} | {took / base:.1f} | {'Pro plan' in block} |")


def main() -> None:
    memory = Memory(Path(tempfile.mkdtemp()), settings=Settings.load(env={}, embedder="none"))
    memory.ingest_session("long", pasted(12))
    print("| question | new s | without the shortcuts s | ratio | code in block (new / without) |")
    print("|---|---|---|---|---|")
    for query, code in QUESTIONS:
        new, block = timed(memory, query)
        with mock.patch.object(snippet, "may_say", lambda text, words: True), \
                mock.patch.object(recaller.Recaller, "_whole", lambda self, m, words: self.kernel.whole(m)):
            old, old_block = timed(memory, query)
        said = f"{code in block} / {code in old_block}" if code else "—"
        print(f"| {query} | {new:.2f} | {old:.2f} | {new / old:.2f} | {said} |")
    pasted_logs()


if __name__ == "__main__":
    main()
