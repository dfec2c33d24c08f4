"""Substring search over a store of long messages (`search/literal.substring_past_cap`): the
time of one search that reads every message the index holds cut whole from its journal,
beside the index's search alone (the path before, which read the first `field_cap`
characters) in the same run — a ratio, not an absolute time: these machines are noisy —
and whether the fragment at the end of the last message was found.

    PYTHONPATH=src .venv/bin/python bench/substring_long.py [--messages 300] [--store URL]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sized
from pathlib import Path

from palimpsest import Memory, Settings

ROW = "{d:03d}NOV LH 506 FRA GRU 22:20 seat {s}A ticket 220-{t}\n"


def paste(n: int) -> str:
    """A ~38 KB pasted itinerary, its booking code on its last line."""
    rows = "".join(ROW.format(d=d, s=d % 30, t=4711000 + d) for d in range(1, 700))
    return f"pasting itinerary {n}\n{rows}Hotel Fasano — reservation code FSP-{n:05d}Q7\n"


def timed(search: Callable[[], Sized], runs: int = 5) -> tuple[float, int]:
    best, hits = float("inf"), 0
    for _ in range(runs):
        started = time.perf_counter()
        hits = len(search())
        best = min(best, time.perf_counter() - started)
    return best, hits


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--store", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, \
            Memory(Path(home), args.store, settings=Settings.load(env={}, embedder="none")) as m:
        for n in range(args.messages):
            m.append(f"trip-{n % 20}", "user", paste(n), created_at=f"2026-10-{1 + n % 28:02d}T10:00:00Z")
        m.worker().drain()
        needle = "FSP-00000Q7"  # the first paste's code: every long message is read before the scan ends
        search = m.messages
        scope = m.finder.filters()
        old, old_hits = timed(lambda: search.store.substring_search(needle, scope, 10))
        new, new_hits = timed(lambda: m.search(needle, mode="substring").hits)
        print(f"{args.messages} messages of {len(paste(0)):,} characters ({m.store.count_cut(scope)} held cut)")
        print("| path | s | hits |\n|---|---|---|")
        print(f"| the index's copy alone (before) | {old:.3f} | {old_hits} |")
        print(f"| and the cut messages whole (after) | {new:.3f} | {new_hits} |")
        print(f"ratio after / before: {new / old:.1f}×")


if __name__ == "__main__":
    main()
