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

Three more writers, each killed the same way:

- `capture`: a real server (in the writer's process) takes `POST /api/capture` batches from
  a client thread; an event is acknowledged when its batch answered 200. The checks above.
- `import`: `palimpsest import` of a Claude Code transcript, killed part-way; the parent
  then imports the file again (what a user does) and checks the session holds exactly the
  events a clean import gives, each once.
- `rebuild`: `rebuild` of a home of several indexed sessions, over and over; after the kill
  the index must hold exactly the journals' messages before any catch-up (the old index
  serves until the new one commits) and a search still finds them.

The test suite (`tests/test_reliability.py`) runs a handful of these; this script runs
as many as asked:

    .venv/bin/python bench/crash.py --trials 100 [--mode append|ingest|ingest-slow|capture|import|rebuild|all]
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
    memory = Memory(home, settings=Settings.load(env={}, embedder="none", enable_write=mode == "capture"))
    out = sys.stdout
    if mode in EXTRA_WRITERS:
        EXTRA_WRITERS[mode](memory, Path(home), session, rng, out)
        return
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


def _capture_writer(memory: Any, home: Path, session: str, rng: random.Random, out: Any) -> None:
    import httpx

    from palimpsest.server.run import ServerThread

    with ServerThread(memory) as url, httpx.Client(timeout=30) as client:
        for n in range(10**9):
            batch = [{"role": rng.choice(["user", "assistant"]), "event_key": f"c:{n}:{i}",
                      "content": f"capture {n} {i} " + "y" * rng.randint(0, 2000)} for i in range(rng.randint(1, 60))]
            r = client.post(f"{url}/api/capture", json={"session": session, "events": batch})
            r.raise_for_status()
            out.write("".join(f"ack {e['id']} {e['event_key']}\n" for e in r.json()["result"]["events"]))
            out.flush()


def transcript(home: Path, session: str) -> Path:
    """A Claude Code transcript of 3,000 lines (prompts, replies, tool calls and results)."""
    path = home.parent / f"{home.name}-{session}.jsonl"
    if not path.exists():
        rng, lines = random.Random(session), []
        for n in range(1000):
            at = f"2026-03-04T{10 + n // 3600 % 10:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"
            lines += [
                {"type": "user", "uuid": f"u{n}", "sessionId": session, "timestamp": at,
                 "message": {"role": "user", "content": f"question {n}: " + "why " * rng.randint(1, 300)}},
                {"type": "assistant", "uuid": f"a{n}", "timestamp": at, "message": {"role": "assistant", "content": [
                    {"type": "text", "text": f"answer {n} " + "because " * rng.randint(1, 300)},
                    {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"path": f"f{n}.py"}}]}},
                {"type": "user", "uuid": f"r{n}", "timestamp": at, "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"t{n}", "content": f"contents of f{n}.py " + "z" * rng.randint(0, 4000)}]}},
            ]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _import_writer(memory: Any, home: Path, session: str, rng: random.Random, out: Any) -> None:
    from palimpsest.importers import import_file

    path = transcript(home, session)
    out.write("ack - started\n")
    out.flush()
    import_file(memory, path)
    out.write("ack - done\n")
    out.flush()


REBUILD_SESSIONS = 4
SLOWER = {"import": 5}  # an import of the transcript takes ~2 s: the kill lands anywhere in it


def _rebuild_writer(memory: Any, home: Path, session: str, rng: random.Random, out: Any) -> None:
    if not (home / "sessions" / f"{session}-0").exists():
        for s in range(REBUILD_SESSIONS):
            memory.ingest_session(f"{session}-{s}", [{"role": "user", "content": f"rebuilt {s} {n} " + "w" * rng.randint(0, 800)}
                                                     for n in range(1500)])
    for n in range(10**9):
        memory.rebuild()
        out.write(f"ack {n} rebuilt\n")
        out.flush()


EXTRA_WRITERS = {"capture": _capture_writer, "import": _import_writer, "rebuild": _rebuild_writer}


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
    time.sleep(rng.uniform(0, max_delay * SLOWER.get(mode, 1)))
    os.kill(proc.pid, signal.SIGKILL)
    rest, _ = proc.communicate()
    killed_after = time.monotonic() - started
    acks = _parse_acks(first + rest)
    if mode == "import":
        return verify_import(home, session, killed_after)
    if mode == "rebuild":
        return verify_rebuild(home, session, len(acks), killed_after)
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
        events, problems = _journal_problems(journal_file)
        messages = [e for e in events if e.get("type") == "message"]
        by_id = {e["id"]: e for e in messages}
        for event_id, key in acks:
            if event_id not in by_id:
                problems.append(f"acknowledged {event_id} ({key}) is not in the journal")
            elif by_id[event_id]["event_key"] != key:
                problems.append(f"acknowledged {event_id} has key {by_id[event_id]['event_key']}, not {key}")
        indexed = _indexed(memory, session)
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


def _journal_problems(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The journal's events, and what is wrong with it: a torn last line, a line that is not
    JSON, a repeated id or key, ids out of order."""
    lines = path.read_bytes().split(b"\n") if path.exists() else [b""]
    problems = [] if lines[-1] == b"" else [f"{path.parent.name}: the journal still ends in a torn line after restart"]
    events = []
    for n, raw in enumerate(lines[:-1], 1):
        try:
            events.append(json.loads(raw))
        except ValueError:
            problems.append(f"{path.parent.name}: journal line {n} is not JSON")
    problems += _duplicates("journal id", [e["id"] for e in events]) + _duplicates("journal key", [e["event_key"] for e in events])
    if [e["id"] for e in events] != sorted(e["id"] for e in events):
        problems.append(f"{path.parent.name}: journal ids are not increasing in journal order")
    return events, problems


def _indexed(memory: Any, session: str) -> list[Any]:
    rows, out = memory.browse(session=session, limit=1000), []
    while rows:
        out += rows
        rows = memory.browse(session=session, limit=1000, offset=len(out))
    return out


def verify_import(home: Path, session: str, killed_after: float) -> Outcome:
    """After a kill during import: the journal is sound, and importing the file again gives
    exactly what a clean import gives — every event once, the index equal to the journal."""
    from palimpsest import Memory, Settings
    from palimpsest.importers import import_file

    path = transcript(home, session)
    settings = Settings.load(env={}, embedder="none")
    with tempfile.TemporaryDirectory(prefix="palimpsest-clean-") as clean:
        reference = Memory(clean, settings=settings)
        try:
            report = import_file(reference, path)
            expected = sorted(e["event_key"] for e in _journal_problems(Path(clean) / "sessions" / report.sessions[0] / "events.jsonl")[0])
        finally:
            reference.close()
    memory = Memory(home, settings=settings)
    try:
        memory.catch_up()
        journal = home / "sessions" / report.sessions[0] / "events.jsonl"
        before, problems = _journal_problems(journal)
        import_file(memory, path)
        events, more = _journal_problems(journal)
        problems += more
        if sorted(e["event_key"] for e in events) != expected:
            problems.append(f"after the second import the journal holds {len(events)} events, a clean import {len(expected)}")
        indexed = _indexed(memory, report.sessions[0])
        if {m.id for m in indexed} != {e["id"] for e in events if e.get("type") == "message"} or len(indexed) != len({m.id for m in indexed}):
            problems.append(f"index holds {len(indexed)} messages, the journal {sum(e.get('type') == 'message' for e in events)}")
        return Outcome("import", len(before), len(events), len(indexed), 0, killed_after, problems)
    finally:
        memory.close()


def verify_rebuild(home: Path, session: str, rebuilds: int, killed_after: float) -> Outcome:
    """After a kill during rebuild: before any catch-up the index holds exactly the journals'
    messages (the old index served until the new one committed), and search finds them."""
    from palimpsest import Memory, Settings

    memory = Memory(home, settings=Settings.load(env={}, embedder="none"))
    try:
        problems: list[str] = []
        journaled = indexed = 0
        for s in range(REBUILD_SESSIONS):
            name = f"{session}-{s}"
            events, more = _journal_problems(home / "sessions" / name / "events.jsonl")
            problems += more
            rows = _indexed(memory, name)
            journaled, indexed = journaled + len(events), indexed + len(rows)
            if {m.id for m in rows} != {e["id"] for e in events}:
                problems.append(f"{name}: the index holds {len(rows)} messages, the journal {len(events)} (before catch-up)")
            if not memory.search(f"rebuilt {s}", session=name, limit=5).hits:
                problems.append(f"{name}: search finds nothing after the kill")
        return Outcome("rebuild", rebuilds, journaled, indexed, 0, killed_after, problems)
    finally:
        memory.close()


def _duplicates(what: str, values: list[str]) -> list[str]:
    seen: set[str] = set()
    dups = [v for v in values if v in seen or seen.add(v)]  # type: ignore[func-returns-value]
    return [f"{what} repeated: {dups[0]} ({len(dups)} repeats)"] if dups else []


MODES = ["append", "ingest", "ingest-slow", "capture", "import", "rebuild"]
ACKED = {"import": "events journaled before the kill", "rebuild": "rebuilds completed before the kill"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="kill -9 writers at random moments and check what survives")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--mode", choices=[*MODES, "all"], default="all", help="writer to kill (all: each in turn)")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--max-delay", type=float, default=0.5, help="kill within this many seconds of the first ack")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    modes = MODES if args.mode == "all" else [args.mode]
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
              f"{summary['acknowledged']:,} acknowledged, {summary['torn_tails']} homes with a torn tail moved aside")
        for mode in modes:
            mine = [o for o in outcomes if o.mode == mode]
            print(f"  {mode:12} {len(mine):3} trials, {sum(bool(o.problems) for o in mine)} failed, "
                  f"{sum(o.acked for o in mine):,} {ACKED.get(mode, 'events acknowledged')}, "
                  f"{sum(o.journal_events for o in mine):,} journal events checked")
        for p in summary["problems"]:
            print("  -", p)
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "writer":
        sys.path.insert(0, str(HERE.parent.parent / "src"))
        run_writer(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        sys.exit(main())
