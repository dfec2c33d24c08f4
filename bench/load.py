"""Load on one server: 16 clients posting captures and 16 searching, for --seconds (default 60).

    python bench/load.py [--seconds 60] [--writers 16] [--readers 16] [--seed-messages 5000] [--no-write]
    python bench/load.py --postgres start|URL [--servers 4] [--workers 4] [--embedder hash] [--seconds 45]

The server is `palimpsest serve` in its own process on a free loopback port (embedded SQLite
store, writes enabled, embedder `none` unless --embedder says otherwise), driven by client
threads in this process, each with its own keep-alive connection (httpx). Reported: requests/s, p50/p95/p99 latency per kind, errors
(target: zero), and whether every acknowledged event is in the journal exactly once and in
the index afterwards. Baseline in the same run: the same workload against the library called
directly (threads in one process, `capture.store_batch` and `Memory.search`).

PostgreSQL mode (--postgres: an admin URL, or `start` for a throwaway server from
scripts/postgres.sh, stopped at the end): the same clients against N `palimpsest serve
--no-worker` processes and W `palimpsest worker` processes sharing one home (the journals:
several processes append to one session's journal under its flock) and one database; run
first with 1 server, then with N, both times with W workers, each on a fresh database of
the same server, so the baseline is in the same run and only the number of servers
changes. Capture clients are spread so that the two clients of each session write through
different servers, and every 5th batch is resent at once to another server (a client
retrying elsewhere): its answer must say duplicate, with the ids of the first. The embedder
defaults to `hash` so every new message queues an embed job (and every closed turn a
distill job, whose facts the curator dedupes); after the load the workers drain what was
due (up to --drain-timeout), then the report checks each acknowledged event is in the
journal once and in the index, each job ran once (`attempts` = 1) and is done, every
message has its vector, and no statement is an open fact twice.

Separate homes per server are not measured here (the checks read one home's journals);
tests/test_workers.py checks that two homes on one store index every event (cursors are
kept per journal id and session).

Results go to stdout and, unless --no-write, into bench/RESULTS.md under "Server load"
(the PostgreSQL run as its own sub-section, so either mode keeps the other's figures).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from palimpsest import Memory, Settings
from palimpsest.server.capture import store_batch

WORDS = ["retry", "cap", "upstream", "timeout", "deploy", "friday", "database", "migration", "index", "cursor", "journal", "fsync", "token", "budget", "recall", "summary", "vector", "embedding", "search", "ranking", "session", "agent", "channel", "harness", "capture", "spool", "replay", "server", "client", "latency", "error", "queue", "worker", "lock", "batch", "event", "key", "schema", "grammar", "fact", "correction", "preference", "decision"]
BATCH = 10
SESSIONS = 8  # writers w and w + 8 share session load-<w % 8>
RETRY_EVERY = 5  # PostgreSQL mode: every 5th batch is resent to another server
ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).with_name("RESULTS.md")
PG_HEADING = "### PostgreSQL: several servers and workers on one database"


def sentence(rng: random.Random, n: int = 14) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


# PostgreSQL mode: the first event of every batch is one of these, said by the user, so the
# workers' distill jobs hand the curator the same few statements over and over, from many
# turns at once: each must end as one open fact, however many workers curate it.
DECISIONS = [f"We decided to {verb} the {thing}." for verb, thing in
             [("cap", "retries at five"), ("deploy", "server on friday"), ("replay", "spool before each write"),
              ("rank", "facts before messages"), ("batch", "embeddings by sixty-four"), ("fsync", "journal on every commit"),
              ("drop", "upstream timeout"), ("index", "tool results in full"), ("keep", "recall budget at four thousand tokens"),
              ("lock", "session before every insert")]]


def make_batch(rng: random.Random, writer: int, seq: int, decisions: bool = False) -> dict[str, Any]:
    events = [{"role": rng.choice(("user", "assistant")), "content": sentence(rng), "event_key": f"w{writer}-{seq}-{j}"}
              for j in range(BATCH)]
    if decisions:
        events[0].update(role="user", content=rng.choice(DECISIONS))
    return {"session": f"load-{writer % SESSIONS}", "agent": "load", "events": events}


class Tally:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.acked: dict[str, str] = {}  # event_key -> id
        self.retries = 0
        self.retry_mismatches = 0  # a resent batch not answered "duplicate" with the first answer's ids
        self.error_samples: list[str] = []  # the first few failures, for the report
        self.lock = threading.Lock()

    def failed(self, kind: str, why: str) -> None:
        """Count an error (the caller holds the lock)."""
        self.errors[kind] += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(f"{kind}: {why}")

    def summary(self, seconds: float) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kind in ("capture", "retry", "search"):
            values = self.latency.get(kind, [])
            if not values and kind == "retry":
                continue
            q = statistics.quantiles(values, n=100) if len(values) >= 2 else [float("nan")] * 99
            out[kind] = {"requests": len(values), "rps": len(values) / seconds, "p50": q[49] * 1000, "p95": q[94] * 1000,
                         "p99": q[98] * 1000, "errors": self.errors[kind]}
        out["events_acked"] = len(self.acked)
        return out


# -- against the server -------------------------------------------------------------
# One thread and one keep-alive connection per client and server: httpx's AsyncClient pool,
# shared by 32 tasks, tops out near 130 requests/s here and would measure itself rather than the server.
def _post(client: httpx.Client, path: str, body: dict[str, Any]) -> httpx.Response | str:
    """The 200 response, or why there was none."""
    try:
        r = client.post(path, json=body)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"
    return r if r.status_code == 200 else f"HTTP {r.status_code}: {r.text[:300]}"


def http_writer(urls: list[str], writer: int, until: float, tally: Tally, retry_every: int = 0) -> None:
    """Capture batches through urls[0]; every `retry_every`-th batch is sent again through urls[-1]
    (and, in that mode, each batch starts with a decision the curator will see many times)."""
    rng, seq = random.Random(writer), 0
    # The resend opens a connection of its own, as a client retrying elsewhere would: a kept-alive
    # one, idle ~5 s between resends, races the server closing it (uvicorn's keep-alive timeout
    # is 5 s, httpx's keep-alive expiry too) and a POST on it is not retried by httpx.
    first = httpx.Client(base_url=urls[0], timeout=60, trust_env=False)
    other = httpx.Client(base_url=urls[-1], timeout=60, trust_env=False, limits=httpx.Limits(max_keepalive_connections=0))
    clients = [first, other]
    try:
        while time.monotonic() < until:
            body = make_batch(rng, writer, seq, decisions=bool(retry_every))
            seq += 1
            started = time.perf_counter()
            r = _post(first, "/api/capture", body)
            with tally.lock:
                tally.latency["capture"].append(time.perf_counter() - started)
                if isinstance(r, str):
                    tally.failed("capture", r)
                    continue
                answer = {e["event_key"]: e["id"] for e in r.json()["result"]["events"]}
                tally.acked.update(answer)
            if retry_every and seq % retry_every == 0:
                started = time.perf_counter()
                again = _post(other, "/api/capture", body)
                with tally.lock:
                    tally.latency["retry"].append(time.perf_counter() - started)
                    tally.retries += 1
                    if isinstance(again, str):
                        tally.failed("retry", again)
                    elif {e["event_key"]: e["id"] for e in again.json()["result"]["events"] if e["status"] == "duplicate"} != answer:
                        tally.retry_mismatches += 1
    finally:
        for c in clients:
            c.close()


def http_reader(url: str, reader: int, until: float, tally: Tally) -> None:
    rng = random.Random(1000 + reader)
    with httpx.Client(base_url=url, timeout=60, trust_env=False) as client:
        while time.monotonic() < until:
            started = time.perf_counter()
            r = _post(client, "/api/memory/tool/memory_search", {"query": sentence(rng, 3), "limit": 10})
            with tally.lock:
                tally.latency["search"].append(time.perf_counter() - started)
                if isinstance(r, str):
                    tally.failed("search", r)


def writer_urls(urls: list[str], writer: int) -> list[str]:
    """The server a writer posts to, then the one it resends to: the two writers of a session
    (w and w + 8) go through different servers whenever there are several."""
    home = (writer + writer // SESSIONS) % len(urls)
    return [urls[home], urls[(home + 1) % len(urls)]]


def drive_server(urls: list[str], seconds: float, writers: int, readers: int, retry_every: int = 0) -> Tally:
    tally = Tally()
    until = time.monotonic() + seconds
    run_threads([(http_writer, (writer_urls(urls, i), i, until, tally, retry_every)) for i in range(writers)]
                + [(http_reader, (urls[i % len(urls)], i, until, tally)) for i in range(readers)])
    return tally


def run_threads(jobs: list[tuple[Any, tuple[Any, ...]]]) -> None:
    threads = [threading.Thread(target=f, args=a) for f, a in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _command() -> list[str]:
    exe = Path(sys.executable).with_name("palimpsest")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "palimpsest"]


def start_process(args: list[str], env: dict[str, str], ready: str, log: Path | None = None) -> tuple[subprocess.Popen[str], str]:
    """Start `palimpsest ARGS` (stderr to `log`, or nowhere); returns it and its first stdout
    line, which must contain `ready`."""
    with open(log, "a") if log else open(os.devnull, "w") as err:  # the child keeps its own copy of the descriptor
        proc = subprocess.Popen([*_command(), *args], stdout=subprocess.PIPE, stderr=err, env=env, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if ready not in line:
        proc.kill()
        raise SystemExit(f"`palimpsest {' '.join(args)}` did not start: {line!r}")
    return proc, line


def start_server(home: Path, embedder: str, store: str | None = None, worker: bool = True,
                 log: Path | None = None) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PALIMPSEST_HOME": str(home), "PALIMPSEST_ENABLE_WRITE": "1", "PALIMPSEST_EMBEDDER": embedder}
    if store:
        env["PALIMPSEST_STORE"] = store
    proc, line = start_process(["serve", "--port", "0", *([] if worker else ["--no-worker"])], env, " at http://", log)
    return proc, re.search(r"at (http://\S+)", line).group(1)  # type: ignore[union-attr]


def stop_processes(procs: list[subprocess.Popen[str]]) -> bool:
    """SIGTERM all, wait; True when every one exited 0."""
    for p in procs:
        p.send_signal(signal.SIGTERM)
    return all(p.wait(timeout=90) == 0 for p in procs)


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
            except Exception:
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
            except Exception:
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
            "missing_from_index": len(ids) - indexed, "journal_events": sum(1 for k in seen if not k.startswith("session:"))}


def table(label: str, s: dict[str, Any]) -> list[str]:
    rows = []
    for kind in ("capture", "retry", "search"):
        if kind in s:
            k = s[kind]
            rows.append(f"| {label} | {kind} | {k['requests']:,} | {k['rps']:.0f} | {k['p50']:.1f} | {k['p95']:.1f} | {k['p99']:.1f} | {k['errors']} |")
    return rows


def write_results(text: str, part: str) -> None:
    """Replace one part of the "Server load" section: `sqlite` (the top) or `postgres` (its sub-section)."""
    from common import write_section

    current = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    found = re.search(r"^## Server load\n(.*?)(?=^## |\Z)", current, re.DOTALL | re.MULTILINE)
    body = found.group(1) if found else ""
    top, heading, pg = body.partition(PG_HEADING)
    top, pg = top.strip(), (heading + pg).strip()
    if part == "sqlite":
        top = text.strip()
    else:
        pg = PG_HEADING + "\n\n" + text.strip()
    write_section("Server load", "\n\n".join(p for p in (top, pg) if p))


def main_sqlite(args: argparse.Namespace) -> None:
    embedder = args.embedder or "none"
    settings = Settings.load(env={}, embedder=embedder, enable_write=True)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "server"
        with Memory(home, settings=settings) as memory:
            seed(memory, args.seed_messages)
        proc, url = start_server(home, embedder)
        try:
            served = drive_server([url], args.seconds, args.writers, args.readers)
        finally:
            clean_exit = stop_processes([proc])
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
        f"(SQLite, embedder {embedder}, {args.seed_messages:,} messages seeded); baseline: the same workload on the "
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
        write_results(text, "sqlite")


# -- PostgreSQL: N servers and W workers on one database ---------------------------------
def create_database(admin: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(admin)._replace(path="/" + name))


def drop_database(admin: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def sql(url: str, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The bench's own look at the tables (job attempts, counts) — not a product code path."""
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(query, params).fetchall()


def due_unfinished(url: str, after_id: int, due_by: Any) -> int:
    return sql(url, "SELECT count(*) FROM jobs WHERE id > %s AND state IN ('queued', 'running') AND run_at <= %s",
               (after_id, due_by))[0][0]


def warm_up(urls: list[str]) -> None:
    """One capture and one search through each server before the clock starts (first-request costs)."""
    for i, u in enumerate(urls):
        with httpx.Client(base_url=u, timeout=60, trust_env=False) as client:
            for path, body in (("/api/capture", {"session": f"warmup-{i}", "events": [{"role": "user", "content": "warm up"}]}),
                               ("/api/memory/tool/memory_search", {"query": "warm up"})):
                r = _post(client, path, body)
                if isinstance(r, str):
                    raise SystemExit(f"warm-up through {u} failed: {r}")


def run_cluster(admin: str, servers: int, workers: int, args: argparse.Namespace, embedder: str) -> dict[str, Any]:
    """Seed a fresh database, start the processes on one home, drive them, drain the due jobs, check."""
    name = f"palimpsest_load_{servers}s{workers}w_{os.getpid()}"
    url = create_database(admin, name)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp) / "home"
            quiet = Settings.load(env={}, embedder=embedder, distill=False, compact_after=0, tags_suggest=False)
            with Memory(home, url, settings=quiet) as memory:  # the seed: indexed and embedded before the load
                seed(memory, args.seed_messages)
                memory.worker().drain()
                model = memory.embedder.model_id if memory.embedder else None
            env = {**os.environ, "PALIMPSEST_HOME": str(home), "PALIMPSEST_STORE": url, "PALIMPSEST_EMBEDDER": embedder}
            procs: list[subprocess.Popen[str]] = []
            try:
                urls = []
                logs = Path(args.logs) / f"{servers}s{workers}w" if args.logs else None
                if logs:
                    logs.mkdir(parents=True, exist_ok=True)
                for i in range(servers):
                    proc, server_url = start_server(home, embedder, url, worker=False, log=logs / f"server-{i}.log" if logs else None)
                    procs.append(proc)
                    urls.append(server_url)
                for i in range(workers):
                    procs.append(start_process(["worker"], env, "Palimpsest worker", logs / f"worker-{i}.log" if logs else None)[0])
                warm_up(urls)
                first_job = sql(url, "SELECT coalesce(max(id), 0) FROM jobs")[0][0]
                load_before = os.getloadavg()[0]
                tally = drive_server(urls, args.seconds, args.writers, args.readers, RETRY_EVERY)
                load_end, done_in_load, queued_in_load = sql(
                    url, "SELECT now(), count(*) FILTER (WHERE state = 'done'), count(*) FROM jobs WHERE id > %s", (first_job,))[0]
                load_avg = os.getloadavg()
                started = time.monotonic()
                while due_unfinished(url, first_job, load_end) and time.monotonic() - started < args.drain_timeout:
                    time.sleep(0.5)
                drain_s = time.monotonic() - started
                left = due_unfinished(url, first_job, load_end)
            finally:
                clean_exit = stop_processes(procs)
            with Memory(home, url, settings=Settings.load(env={}, embedder=embedder)) as memory:
                check = verify(memory, tally.acked)
                unvectored = len(memory.store.messages_without_vectors(model, 10**7)) if model else None
                total_messages = memory.store.stats()["messages"]
            index_rows = sql(url, "SELECT count(*) FROM messages WHERE session_id LIKE 'load-%%'")[0][0]
            jobs = sql(url, """SELECT task, state, count(*), count(*) FILTER (WHERE attempts > 1) FROM jobs
                               WHERE id > %s GROUP BY task, state ORDER BY task, state""", (first_job,))
            facts, distinct = sql(url, """SELECT count(*), count(DISTINCT (vault, norm)) FROM facts
                                          WHERE expired_at IS NULL AND invalidated_at IS NULL""")[0]
    finally:
        drop_database(admin, name)
    return {"servers": servers, "workers": workers, "seconds": args.seconds, "summary": tally.summary(args.seconds), "check": check,
            "retries": tally.retries, "retry_mismatches": tally.retry_mismatches, "index_rows": index_rows,
            "messages": total_messages, "unvectored": unvectored, "jobs": jobs, "drain_s": drain_s, "left": left,
            "clean_exit": clean_exit, "load_avg": load_avg, "facts": facts, "fact_statements": distinct,
            "error_samples": tally.error_samples,
            "done_in_load": done_in_load, "queued_in_load": queued_in_load,
            "load_before": load_before}


def start_postgres() -> tuple[str, str]:
    out = subprocess.run([str(ROOT / "scripts" / "postgres.sh"), "start"], stdout=subprocess.PIPE, text=True, check=True).stdout
    lines = out.strip().splitlines()
    pgdata = next(line.split("=", 1)[1] for line in lines if line.startswith("PGDATA="))
    return lines[-1], pgdata


def describe_jobs(rows: list[tuple[Any, ...]]) -> str:
    by_task: dict[str, dict[str, int]] = defaultdict(dict)
    for task, state, n, _ in rows:
        by_task[task][state] = n
    return "; ".join(f"{task} " + ", ".join(f"{n:,} {state}" for state, n in states.items()) for task, states in by_task.items()) or "none"


def cluster_lines(r: dict[str, Any]) -> list[str]:
    c = r["check"]
    again = sum(row[3] for row in r["jobs"])
    failed = sum(row[2] for row in r["jobs"] if row[1] == "failed")
    vectors = "no embedder" if r["unvectored"] is None else f"{r['unvectored']}"
    drained = (f"the due jobs drained {r['drain_s']:.0f} s after the load" if not r["left"]
               else f"{r['left']} due jobs still unfinished {r['drain_s']:.0f} s after the load")
    return [
        (f"- {r['servers']} + {r['workers']}: {c['acked']:,} events acknowledged; missing from journal {c['missing_from_journal']}, "
         f"doubled in journal {c['doubled']}, missing from index {c['missing_from_index']}; index rows of the load sessions "
         f"{r['index_rows']:,} for {c['journal_events']:,} journal events; resent batches {r['retries']:,}, answered other than "
         f"\"duplicate, same ids\" {r['retry_mismatches']}; clean exit on SIGTERM: {'yes' if r['clean_exit'] else 'no'}"),
        (f"  jobs: {r['done_in_load']:,} of {r['queued_in_load']:,} done by the end of the load ({r['done_in_load'] / r['seconds']:.0f}/s); "
         f"all queued by the load, at the end: {describe_jobs(r['jobs'])} — failed {failed}, claimed more than once {again}; "
         f"{drained}; messages without a vector {vectors} of {r['messages']:,}; open facts {r['facts']} for "
         f"{r['fact_statements']} distinct statements (duplicates {r['facts'] - r['fact_statements']}); load average (1 min) "
         f"{r['load_before']:.1f} before the load, {r['load_avg'][0]:.1f} at its end"),
        *(f"  error: {e}" for e in r["error_samples"]),
    ]


def main_postgres(args: argparse.Namespace) -> None:
    embedder = args.embedder or "hash"
    admin, pgdata = start_postgres() if args.postgres == "start" else (args.postgres, "")
    try:
        runs = [run_cluster(admin, 1, args.workers, args, embedder), run_cluster(admin, args.servers, args.workers, args, embedder)]
    finally:
        if pgdata:
            subprocess.run([str(ROOT / "scripts" / "postgres.sh"), "stop", pgdata], check=False)
    base, many = runs
    ratio = {k: many["summary"][k]["rps"] / base["summary"][k]["rps"] for k in ("capture", "search") if base["summary"][k]["rps"]}
    command = (f"python bench/load.py --postgres {args.postgres if args.postgres == 'start' else 'URL'} --servers {args.servers} "
               f"--workers {args.workers} --seconds {args.seconds:g}" + (f" --embedder {args.embedder}" if args.embedder else ""))
    lines = [
        (f"`{command}` — the same {args.writers} capture clients (the two clients of a session write through two different "
         f"servers; every {RETRY_EVERY}th batch is resent at once to another server; each batch opens with one of "
         f"{len(DECISIONS)} decisions, so the curator meets each statement many times) and {args.readers} search clients for "
         f"{args.seconds:g} s, first against 1 `palimpsest serve --no-worker`, then against {args.servers}, each time with "
         f"{args.workers} `palimpsest worker` processes; all processes on one home (journals) and one fresh PostgreSQL 15 database of the "
         f"same server (embedder {embedder}: every message queues an embed job, every closed turn a distill job; "
         f"{args.seed_messages:,} messages seeded and embedded first). Machine: {os.cpu_count()} cores, shared with other work."),
        "",
        "| servers + workers | kind | requests | req/s | p50 ms | p95 ms | p99 ms | errors |",
        "|---|---|---|---|---|---|---|---|",
        *table(f"{base['servers']} + {base['workers']}", base["summary"]), *table(f"{many['servers']} + {many['workers']}", many["summary"]),
        "",
        f"Throughput {many['servers']} + {many['workers']} vs {base['servers']} + {base['workers']}: " + ", ".join(f"{k} ×{v:.2f}" for k, v in ratio.items()) + ".",
        "",
        *cluster_lines(base), *cluster_lines(many),
        "",
        ("Reading: the machine has 2 cores, so more processes bring no more CPU — the servers share the cores one server "
         "had, and the workers use them too — and throughput cannot rise here; the run shows that N servers and W workers "
         "on one database lose no event and double no event and no job. All processes share one home: any server appends to a "
         "session's journal under its flock, so the session's cursor in the database means the same to all (servers "
         "with homes of their own: tests/test_workers.py, cursors per journal id and session)."),
    ]
    if any(r["facts"] > r["fact_statements"] for r in runs):
        lines += ["", ("Duplicate open facts: two workers curated one statement at once and both wrote it — a defect: "
                       "curation is serialised per vault across processes (Store.exclusive, tests/test_workers.py).")]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write_results(text, "postgres")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--readers", type=int, default=16)
    ap.add_argument("--seed-messages", type=int, default=5000)
    ap.add_argument("--embedder", help="default: none (SQLite), hash (PostgreSQL: every message queues an embed job)")
    ap.add_argument("--postgres", metavar="URL|start", help="run N servers + W workers on PostgreSQL (an admin URL, or "
                    "`start` for a throwaway server from scripts/postgres.sh); baseline 1 + 1 in the same run")
    ap.add_argument("--servers", type=int, default=4, help="PostgreSQL mode: `palimpsest serve` processes")
    ap.add_argument("--workers", type=int, default=4, help="PostgreSQL mode: `palimpsest worker` processes")
    ap.add_argument("--drain-timeout", type=float, default=180, help="PostgreSQL mode: longest wait for the due jobs after the load")
    ap.add_argument("--logs", metavar="DIR", help="PostgreSQL mode: keep each process's stderr in DIR")
    ap.add_argument("--no-write", action="store_true", help="do not update bench/RESULTS.md")
    args = ap.parse_args()
    (main_postgres if args.postgres else main_sqlite)(args)


if __name__ == "__main__":
    main()
