"""Crash trials: kill -9 a writer at a random moment, then check nothing acknowledged is lost.

A trial starts a writer process (`crash.py writer MODE HOME SESSION SEED`) that appends
to one session — single `append` calls, or `ingest_session` batches — and prints one
`ack <id> <event_key>` line per event, flushed, only after the call has returned (so
only after the journal's fsync). The parent waits for the first acknowledgement, sleeps
a random while, sends SIGKILL, then re-opens the home the way a restart does
(`Memory(...)` + `catch_up()`, which repairs torn tails) and checks:

- every acknowledged event is in the journal, with its key, and in the index;
- no id and no event key appears twice, in the journal or in the index;
- every journal line is complete JSON, ids increase in journal order, and the index
  holds exactly the journal's messages (nothing unacknowledged-and-lost half-way);
- a torn tail, if the kill left one, was moved to `events.jsonl.torn`.

The test suite (`tests/test_reliability.py`) runs a handful of these; this script runs
as many as asked:

    .venv/bin/python bench/crash.py --trials 200 [--mode append|ingest|ingest-slow|all]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()


# -- the writer (runs in its own process) ----------------------------------------------
def run_writer(mode: str, home: str, session: str, seed: int) -> None:
    """`mode`: append, ingest, or ingest-slow (a disk that takes 4 KiB per write call and
    1 ms each, so the kill often lands in the middle of a group commit)."""
    from palimpsest import Memory, Settings

    if mode == "ingest-slow":
        _slow_disk()
    rng = random.Random(seed)
    memory = Memory(home, settings=Settings.load(env={}, embedder="none"))
    out = sys.stdout
    for n in range(10**9):
        if mode == "append":
            text = f"append {seed} {n} " + "lorem ipsum dolor " * rng.randint(1, 200)
            r = memory.append(session, "user", text, event_key=f"a:{seed}:{n}")
            out.write(f"ack {r['id']} a:{seed}:{n}\n")
        else:
            size = rng.randint(1, 400)
            batch = [{"role": rng.choice(["user", "assistant"]), "event_key": f"b:{seed}:{n}:{i}",
                      "content": f"batch {seed} {n} {i} " + "x" * rng.randint(0, 3000)} for i in range(size)]
            r = memory.ingest_session(session, batch)
            out.write("".join(f"ack {i} {m['event_key']}\n" for i, m in zip(r["ids"], batch)))
        out.flush()


def _slow_disk() -> None:
    from palimpsest import journal

    real_write = os.write

    def write(fd: int, data: Any) -> int:
        time.sleep(0.001)
        return real_write(fd, bytes(data[:4096]))

    journal.os.write = write  # type: ignore[assignment]  # the OS boundary, in the writer process only


# -- one trial (runs in the parent) ----------------------------------------------------
@dataclass
class Outcome:
    mode: str
    acked: int
    journal_events: int
    indexed: int
    torn_bytes: int
    killed_after_s: float
    problems: list[str] = field(default_factory=list)


def trial(home: Path, mode: str, seed: int, max_delay: float = 0.4, session: str = "crash") -> Outcome:
    """Start a writer, kill -9 it at a random moment, restart, verify."""
    rng = random.Random(seed)
    proc = subprocess.Popen(
        [sys.executable, str(HERE), "writer", mode, str(home), session, str(seed)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")},
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # the writer is running and has acknowledged something
    if not first:
        raise RuntimeError(f"writer died before writing: {proc.stderr.read().decode() if proc.stderr else ''}")
    started = time.monotonic()
    time.sleep(rng.uniform(0, max_delay))
    os.kill(proc.pid, signal.SIGKILL)
    rest, _ = proc.communicate()
    killed_after = time.monotonic() - started
    acks = _parse_acks(first + rest)
    return verify(home, session, mode, acks, killed_after)


def _parse_acks(stdout: bytes) -> list[tuple[str, str]]:
    acks = []
    for raw in stdout.split(b"\n")[:-1]:  # a last line without its newline was never fully printed
        parts = raw.decode().split(" ")
        if len(parts) == 3 and parts[0] == "ack":
            acks.append((parts[1], parts[2]))
    return acks


def verify(home: Path, session: str, mode: str, acks: list[tuple[str, str]], killed_after: float = 0.0) -> Outcome:
    from palimpsest import Memory, Settings

    journal_file = home / "sessions" / session / "events.jsonl"
    torn_file = journal_file.with_name("events.jsonl.torn")
    before = journal_file.read_bytes() if journal_file.exists() else b""
    left_torn = before[before.rfind(b"\n") + 1:]  # what the kill left half-written, if anything
    torn_before = torn_file.read_bytes() if torn_file.exists() else b""
    memory = Memory(home, settings=Settings.load(env={}, embedder="none"))
    try:
        memory.catch_up()  # what a restart does: repair torn tails, index what is behind
        problems: list[str] = []
        lines = journal_file.read_bytes().split(b"\n")
        if lines[-1] != b"":
            problems.append("the journal still ends in a torn line after restart")
        events = []
        for n, raw in enumerate(lines[:-1], 1):
            try:
                events.append(json.loads(raw))
            except ValueError:
                problems.append(f"journal line {n} is not JSON")
        messages = [e for e in events if e.get("type") == "message"]
        problems += _duplicates("journal id", [e["id"] for e in events]) + _duplicates("journal key", [e["event_key"] for e in events])
        if [e["id"] for e in events] != sorted(e["id"] for e in events):
            problems.append("journal ids are not increasing in journal order")
        by_id = {e["id"]: e for e in messages}
        for event_id, key in acks:
            if event_id not in by_id:
                problems.append(f"acknowledged {event_id} ({key}) is not in the journal")
            elif by_id[event_id]["event_key"] != key:
                problems.append(f"acknowledged {event_id} has key {by_id[event_id]['event_key']}, not {key}")
        rows = memory.browse(session=session, limit=1000)
        indexed: list[Any] = []
        while rows:
            indexed += rows
            rows = memory.browse(session=session, limit=1000, offset=len(indexed))
        problems += _duplicates("index id", [m.id for m in indexed]) + _duplicates("index key", [m.event_key for m in indexed])
        indexed_ids = {m.id for m in indexed}
        missing = [i for i, _ in acks if i not in indexed_ids]
        if missing:
            problems.append(f"{len(missing)} acknowledged events are not in the index after restart, e.g. {missing[0]}")
        if indexed_ids != set(by_id):
            problems.append(f"index holds {len(indexed_ids)} messages, the journal {len(by_id)}")
        stats = memory.stats()
        if stats["index_lag_bytes"]:
            problems.append(f"index lag after catch-up: {stats['index_lag_bytes']} bytes")
        torn_after = torn_file.read_bytes() if torn_file.exists() else b""
        if left_torn and torn_after != torn_before + left_torn + b"\n":
            problems.append(f"the torn tail ({len(left_torn)} bytes) was not moved to {torn_file.name}")
        return Outcome(mode, len(acks), len(messages), len(indexed), len(left_torn), killed_after, problems)
    finally:
        memory.close()


def _duplicates(what: str, values: list[str]) -> list[str]:
    seen: set[str] = set()
    dups = [v for v in values if v in seen or seen.add(v)]  # type: ignore[func-returns-value]
    return [f"{what} repeated: {dups[0]} ({len(dups)} repeats)"] if dups else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="kill -9 writers at random moments and check what survives")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--mode", choices=["append", "ingest", "ingest-slow", "all"], default="all")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--max-delay", type=float, default=0.5, help="kill within this many seconds of the first ack")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    modes = ["append", "ingest", "ingest-slow"] if args.mode == "all" else [args.mode]
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="palimpsest-crash-") as tmp:
        for t in range(args.trials):
            # half the trials reuse a home that already survived a crash: repair + append again
            home = Path(tmp) / (f"h{t}" if t % 2 == 0 else f"h{t - 1}")
            outcomes.append(trial(home, modes[t % len(modes)], args.seed + t, args.max_delay))
    failed = [o for o in outcomes if o.problems]
    summary = {
        "trials": len(outcomes), "failed": len(failed), "seed": args.seed,
        "acknowledged": sum(o.acked for o in outcomes), "torn_tails": sum(1 for o in outcomes if o.torn_bytes),
        "problems": [p for o in failed for p in o.problems][:20],
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{summary['trials']} trials ({', '.join(modes)}), seed {args.seed}: {summary['failed']} failed; "
              f"{summary['acknowledged']:,} events acknowledged, {summary['torn_tails']} homes with a torn tail moved aside")
        for p in summary["problems"]:
            print("  -", p)
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "writer":
        sys.path.insert(0, str(HERE.parent.parent / "src"))
        run_writer(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        sys.exit(main())
