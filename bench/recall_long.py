"""Recall over long pasted messages (12 of ~25 KB, 500 rows each, no embedder), the path as it is beside the path
without its two shortcuts in the same run (a ratio, not an absolute time: these machines are noisy): the snippet's
substring test before a line's words (`snippet.may_say`), and the journal read only where the index's copy lacks a
query word (`Recaller._whole`). Whether the reservation code asked about is in the block, on each path.

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


def timed(memory: Memory, query: str, runs: int = 3) -> tuple[float, str]:
    best, block = float("inf"), ""
    for _ in range(runs):
        started = time.perf_counter()
        block = memory.recall(None, query, 2000).block
        best = min(best, time.perf_counter() - started)
    return best, block


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


if __name__ == "__main__":
    main()
