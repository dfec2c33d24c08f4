"""Bulk ingest and single-append latency (issue 2 benchmark).

Bulk-ingests N synthetic messages (bench/common.py: realistic lengths, a few sessions)
through `Memory.ingest_session` in batches — journal (one fsync per batch) plus index
(SQLite, FTS5) — and reports messages/s; then times single `Memory.append` calls (one
fsync each) on the loaded store. Baseline in the same run: plain `sqlite3` inserts of the
same rows, in the same batches, into one FTS5 table (`porter unicode61`), WAL mode. The
two alternate `--repeat` times (3), each into fresh files, and the median run of each side
is reported (these machines are noisy: one run's ratio moved by ±0.04).

    .venv/bin/python bench/ingest.py                  # 100,000 messages, writes bench/RESULTS.md
    .venv/bin/python bench/ingest.py --messages 20000 --no-write

Targets: >= 5,000 messages/s and at least half the baseline's speed.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Corpus, Timer, machine, summary_ms, table, write_section

from palimpsest import Memory, Settings


def batches(corpus: Corpus, n: int, size: int) -> list[tuple[str, list[dict[str, Any]]]]:
    """The corpus cut into per-session batches, in the order a bulk import would send them."""
    pending: dict[str, list[dict[str, Any]]] = defaultdict(list)
    out = []
    for session, msg in corpus.messages(n):
        pending[session].append(msg)
        if len(pending[session]) >= size:
            out.append((session, pending.pop(session)))
    out += [(s, msgs) for s, msgs in pending.items() if msgs]
    return out


def run_palimpsest(home: Path, work: list[tuple[str, list[dict[str, Any]]]], appends: int) -> dict[str, Any]:
    settings = Settings.load(env={}, home=str(home))
    with Memory(settings=settings) as memory:
        stored = 0
        cpu = time.process_time()
        with Timer() as t:
            for session, msgs in work:
                stored += memory.ingest_session(session, msgs)["stored"]
        cpu = time.process_time() - cpu
        samples = []
        for i in range(appends):
            with Timer() as one:
                memory.append("bench-append", "user", f"single append number {i} about the retry cap and the upstream timeout")
            samples.append(one.seconds)
        stats = memory.stats()
    return {"stored": stored, "seconds": t.seconds, "cpu": cpu, "rate": stored / t.seconds, "append": summary_ms(samples),
            "indexed": stats["messages"], "journal_bytes": stats["journal_bytes"], "database_bytes": stats["database_bytes"]}


def run_baseline(path: Path, work: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE VIRTUAL TABLE messages USING fts5(content, tool_name, tool_result, tokenize='porter unicode61')")
    n = 0
    cpu = time.process_time()
    with Timer() as t:
        for _, msgs in work:
            conn.execute("BEGIN")
            conn.executemany("INSERT INTO messages (content, tool_name, tool_result) VALUES (?, ?, ?)",
                             [(m["content"], m.get("tool_name"), m.get("tool_result")) for m in msgs])
            conn.execute("COMMIT")
            n += len(msgs)
    cpu = time.process_time() - cpu
    conn.close()
    return {"rows": n, "seconds": t.seconds, "cpu": cpu, "rate": n / t.seconds}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000, help="messages to ingest (default 100,000)")
    parser.add_argument("--batch", type=int, default=1000, help="messages per ingest_session call")
    parser.add_argument("--appends", type=int, default=200, help="single appends to time (in the last run)")
    parser.add_argument("--repeat", type=int, default=3, help="alternating runs of each side; medians are reported")
    parser.add_argument("--no-write", action="store_true", help="do not update bench/RESULTS.md")
    parser.add_argument("--json", action="store_true", help="print one JSON object last")
    args = parser.parse_args(argv)

    work = batches(Corpus(), args.messages, args.batch)
    chars = sum(len(m["content"]) + len(m.get("tool_result") or "") for _, msgs in work for m in msgs)
    bases, runs = [], []
    for r in range(args.repeat):  # alternating, each into fresh files; the median run of each side counts
        with tempfile.TemporaryDirectory(prefix="palimpsest-bench-") as tmp:
            bases.append(run_baseline(Path(tmp) / "baseline.db", work))
            runs.append(run_palimpsest(Path(tmp) / "home", work, args.appends if r == args.repeat - 1 else 0))
    base = sorted(bases, key=lambda b: b["rate"])[len(bases) // 2]
    ours = {**sorted(runs, key=lambda o: o["rate"])[len(runs) // 2], "append": runs[-1]["append"]}
    ratio = ours["rate"] / base["rate"]
    # the same ratio in CPU seconds of this process: on a shared machine the wall-clock ratio
    # swings with other processes' load (±0.05 run to run), the CPU one much less
    cpu_ratios = sorted(b["cpu"] / o["cpu"] for o, b in zip(runs, bases, strict=True))
    cpu_ratio = cpu_ratios[len(cpu_ratios) // 2]
    ours_each = ", ".join(f"{o['rate']:,.0f}" for o in runs)
    base_each = ", ".join(f"{b['rate']:,.0f}" for b in bases)
    ratio_each = ", ".join(f"{o['rate'] / b['rate']:.2f}" for o, b in zip(runs, bases, strict=True))
    rows = [
        ("Palimpsest ingest_session (journal + index)", f"{ours['rate']:,.0f}", f"{ours['seconds']:.1f}"),
        ("baseline: sqlite3 into one FTS5 table", f"{base['rate']:,.0f}", f"{base['seconds']:.1f}"),
    ]
    body = "\n".join([
        (f"{args.messages:,} synthetic messages ({chars / 1e6:.0f} M characters, {len(work)} batches of up to {args.batch:,}, "
        f"8 sessions); {machine()}. Reproduce: `.venv/bin/python bench/ingest.py --messages {args.messages}`."),
        "",
        table(rows, ("write path", "messages/s", "seconds")),
        "",
        (f"- ratio to baseline: **{ratio:.2f}** (target >= 0.5); rate target >= 5,000 messages/s: "
        f"**{'met' if ours['rate'] >= 5000 else 'missed'}**"),
        f"- CPU-time ratio (this process's CPU seconds, baseline / Palimpsest; median): **{cpu_ratio:.2f}**",
        (f"- medians of {args.repeat} alternating runs; each run, messages/s: Palimpsest {ours_each}; "
         f"baseline {base_each}; ratio run by run {ratio_each}"),
        (f"- single `append` (fsync + index, {args.appends} calls on the loaded store): "
        f"p50 **{ours['append']['p50_ms']:.2f} ms**, p95 **{ours['append']['p95_ms']:.2f} ms**"),
        (f"- stored {ours['stored']:,}, indexed {ours['indexed']:,}; journal {ours['journal_bytes'] / 1e6:.0f} MB, "
        f"database {ours['database_bytes'] / 1e6:.0f} MB"),
        ("- the baseline keeps one porter FTS5 index; Palimpsest also writes the journal (fsynced per batch), "
        "the messages table with its keys and journal pointers, the search context column (speaker, date, the turn "
        "before) and the jobs derived work needs; the trigram index for substring search is caught up by the first "
        "substring search instead (migration 0009)"),
    ])
    print(body)
    if not args.no_write:
        write_section("Ingest", body)
    if args.json:
        print(json.dumps({"messages": args.messages, "rate": ours["rate"], "baseline_rate": base["rate"], "ratio": ratio, "cpu_ratio": cpu_ratio,
                          "rates": [o["rate"] for o in runs], "baseline_rates": [b["rate"] for b in bases],
                          "append_p50_ms": ours["append"]["p50_ms"], "append_p95_ms": ours["append"]["p95_ms"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
