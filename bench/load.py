"""Load on one server: 16 clients posting captures and 16 searching, for --seconds (default 60).

    python bench/load.py [--seconds 60] [--writers 16] [--readers 16] [--seed-messages 5000] [--no-write]

The server is `palimpsest serve` in its own process on a free loopback port (embedded SQLite
store, writes enabled, embedder `none` unless --embedder says otherwise), driven by client
threads in this process, each with its own keep-alive connection (httpx). Reported: requests/s, p50/p95/p99 latency per kind, errors
(target: zero), and whether every acknowledged event is in the journal exactly once and in
the index afterwards. Baseline in the same run: the same workload against the library called
directly (threads in one process, `capture.store_batch` and `Memory.search`).

Results go to stdout and, unless --no-write, into bench/RESULTS.md under "Server load".
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from palimpsest import Memory, Settings
from palimpsest.capture import store_batch

WORDS = ["retry", "cap", "upstream", "timeout", "deploy", "friday", "database", "migration", "index", "cursor", "journal", "fsync", "token", "budget", "recall", "summary", "vector", "embedding", "search", "ranking", "session", "agent", "channel", "harness", "capture", "spool", "replay", "server", "client", "latency", "error", "queue", "worker", "lock", "batch", "event", "key", "schema", "grammar", "fact", "correction", "preference", "decision"]
BATCH = 10
RESULTS = Path(__file__).with_name("RESULTS.md")


def sentence(rng: random.Random, n: int = 14) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def make_batch(rng: random.Random, writer: int, seq: int) -> dict[str, Any]:
    return {"session": f"load-{writer % 8}", "agent": "load",
            "events": [{"role": rng.choice(("user", "assistant")), "content": sentence(rng), "event_key": f"w{writer}-{seq}-{j}"}
                       for j in range(BATCH)]}


class Tally:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = {"capture": [], "search": []}
        self.errors: dict[str, int] = {"capture": 0, "search": 0}
        self.acked: dict[str, str] = {}  # event_key -> id
        self.lock = threading.Lock()

    def summary(self, seconds: float) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kind, values in self.latency.items():
            q = statistics.quantiles(values, n=100) if len(values) >= 2 else [float("nan")] * 99
            out[kind] = {"requests": len(values), "rps": len(values) / seconds, "p50": q[49] * 1000, "p95": q[94] * 1000,
                         "p99": q[98] * 1000, "errors": self.errors[kind]}
        out["events_acked"] = len(self.acked)
        return out


# -- against the server -------------------------------------------------------------
# One thread and one keep-alive connection per client: httpx's AsyncClient pool, shared by 32
# tasks, tops out near 130 requests/s here and would measure itself rather than the server.
def http_writer(url: str, writer: int, until: float, tally: Tally) -> None:
    rng, seq = random.Random(writer), 0
    with httpx.Client(base_url=url, timeout=60, trust_env=False) as client:
        while time.monotonic() < until:
            body = make_batch(rng, writer, seq)
            seq += 1
            started = time.perf_counter()
            try:
                r = client.post("/api/capture", json=body)
                ok = r.status_code == 200
            except httpx.HTTPError:
                ok = False
            with tally.lock:
                tally.latency["capture"].append(time.perf_counter() - started)
                if not ok:
                    tally.errors["capture"] += 1
                else:
                    tally.acked.update((e["event_key"], e["id"]) for e in r.json()["result"]["events"])


def http_reader(url: str, reader: int, until: float, tally: Tally) -> None:
    rng = random.Random(1000 + reader)
    with httpx.Client(base_url=url, timeout=60, trust_env=False) as client:
        while time.monotonic() < until:
            started = time.perf_counter()
            try:
                ok = client.post("/api/memory/tool/memory_search", json={"query": sentence(rng, 3), "limit": 10}).status_code == 200
            except httpx.HTTPError:
                ok = False
            with tally.lock:
                tally.latency["search"].append(time.perf_counter() - started)
                if not ok:
                    tally.errors["search"] += 1


def drive_server(url: str, seconds: float, writers: int, readers: int) -> Tally:
    tally = Tally()
    until = time.monotonic() + seconds
    run_threads([(http_writer, (url, i, until, tally)) for i in range(writers)] + [(http_reader, (url, i, until, tally)) for i in range(readers)])
    return tally


def run_threads(jobs: list[tuple[Any, tuple[Any, ...]]]) -> None:
    threads = [threading.Thread(target=f, args=a) for f, a in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def start_server(home: Path, embedder: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PALIMPSEST_HOME": str(home), "PALIMPSEST_ENABLE_WRITE": "1", "PALIMPSEST_EMBEDDER": embedder}
    exe = Path(sys.executable).with_name("palimpsest")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "palimpsest"]
    proc = subprocess.Popen([*command, "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    found = re.search(r"at (http://\S+)", line)
    if not found:
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return proc, found.group(1)


# -- the library directly (baseline) ---------------------------------------------------
def drive_library(memory: Memory, seconds: float, writers: int, readers: int) -> Tally:
    tally = Tally()
    until = time.monotonic() + seconds

    def writer(i: int) -> None:
        rng, seq = random.Random(i), 0
        while time.monotonic() < until:
            body = make_batch(rng, i, seq)
            seq += 1
            started = time.perf_counter()
            try:
                result = store_batch(memory, body)
            except Exception:  # noqa: BLE001 -- counted as an error, the run goes on
                with tally.lock:
                    tally.errors["capture"] += 1
                continue
            with tally.lock:
                tally.latency["capture"].append(time.perf_counter() - started)
                tally.acked.update((e["event_key"], e["id"]) for e in result["events"])

    def reader(i: int) -> None:
        rng = random.Random(1000 + i)
        while time.monotonic() < until:
            started = time.perf_counter()
            try:
                memory.search(sentence(rng, 3), limit=10)
            except Exception:  # noqa: BLE001 -- counted as an error, the run goes on
                with tally.lock:
                    tally.errors["search"] += 1
                continue
            with tally.lock:
                tally.latency["search"].append(time.perf_counter() - started)

    run_threads([(writer, (i,)) for i in range(writers)] + [(reader, (i,)) for i in range(readers)])
    return tally


# -- checks and report ---------------------------------------------------------------
def seed(memory: Memory, n: int) -> None:
    rng = random.Random(7)
    for start in range(0, n, 1000):
        memory.ingest_session(f"seed-{start // 1000}", [{"role": "user", "content": sentence(rng)} for _ in range(min(1000, n - start))])


def verify(memory: Memory, acked: dict[str, str]) -> dict[str, Any]:
    """Every acknowledged event in the journal exactly once, and in the index."""
    memory.catch_up()
    seen: dict[str, int] = {}
    for session in memory.journal.sessions():
        if session.startswith("load-"):
            for event in memory.journal.read(session):
                seen[event.event_key] = seen.get(event.event_key, 0) + 1
    missing_journal = [k for k in acked if k not in seen]
    doubled = [k for k, c in seen.items() if c > 1 and not k.startswith("session:")]
    ids = list(acked.values())
    indexed = sum(len(memory.store.get_messages(ids[i:i + 500])) for i in range(0, len(ids), 500))
    return {"acked": len(acked), "missing_from_journal": len(missing_journal), "doubled": len(doubled),
            "missing_from_index": len(ids) - indexed}


def table(label: str, s: dict[str, Any]) -> list[str]:
    rows = []
    for kind in ("capture", "search"):
        k = s[kind]
        rows.append(f"| {label} | {kind} | {k['requests']:,} | {k['rps']:.0f} | {k['p50']:.1f} | {k['p95']:.1f} | {k['p99']:.1f} | {k['errors']} |")
    return rows


def write_results(text: str) -> None:
    current = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Benchmark results\n"
    section = "## Server load\n\n" + text.strip() + "\n"
    pattern = re.compile(r"^## Server load\n.*?(?=^## |\Z)", re.DOTALL | re.MULTILINE)
    if pattern.search(current):
        current = pattern.sub(lambda _: section + "\n", current).rstrip() + "\n"
    else:
        current = current.rstrip() + "\n\n" + section
    RESULTS.write_text(current, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--readers", type=int, default=16)
    ap.add_argument("--seed-messages", type=int, default=5000)
    ap.add_argument("--embedder", default="none")
    ap.add_argument("--no-write", action="store_true", help="do not update bench/RESULTS.md")
    args = ap.parse_args()
    settings = Settings.load(env={}, embedder=args.embedder, enable_write=True)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "server"
        with Memory(home, settings=settings) as memory:
            seed(memory, args.seed_messages)
        proc, url = start_server(home, args.embedder)
        try:
            served = drive_server(url, args.seconds, args.writers, args.readers)
        finally:
            proc.terminate()
            clean_exit = proc.wait(timeout=60) == 0
        with Memory(home, settings=settings) as memory:
            server_check = verify(memory, served.acked)
        lib_home = Path(tmp) / "library"
        with Memory(lib_home, settings=settings) as memory:
            seed(memory, args.seed_messages)
            direct = drive_library(memory, args.seconds, args.writers, args.readers)
            library_check = verify(memory, direct.acked)
    s, d = served.summary(args.seconds), direct.summary(args.seconds)
    lines = [
        (f"`python bench/load.py --seconds {args.seconds:g}` — {args.writers} capture clients (batches of {BATCH} events, "
        f"two clients per session) and {args.readers} search clients for {args.seconds:g} s against one `palimpsest serve` "
        f"(SQLite, embedder {args.embedder}, {args.seed_messages:,} messages seeded); baseline: the same workload on the "
        f"library directly (threads in one process). Machine: {os.cpu_count()} cores, load average "
         f"{os.getloadavg()[0]:.1f} at the end (other work on the machine counts in)."),
        "",
        "| target | kind | requests | req/s | p50 ms | p95 ms | p99 ms | errors |",
        "|---|---|---|---|---|---|---|---|",
        *table("server (HTTP)", s), *table("library (direct)", d),
        "",
        (f"- server: {server_check['acked']:,} events acknowledged; missing from journal {server_check['missing_from_journal']}, "
        f"doubled {server_check['doubled']}, missing from index {server_check['missing_from_index']}; "
        f"clean exit on SIGTERM: {'yes' if clean_exit else 'no'}"),
        (f"- library: {library_check['acked']:,} events acknowledged; missing from journal {library_check['missing_from_journal']}, "
        f"doubled {library_check['doubled']}, missing from index {library_check['missing_from_index']}"),
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_results(text)


if __name__ == "__main__":
    main()
