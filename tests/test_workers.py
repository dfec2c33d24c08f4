"""Several processes on one store: `palimpsest worker`, `serve --no-worker`, and servers
that share a home (journals) and a database, on both backends."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.service import run_background

HASH = Settings.load(env={}, embedder="hash")


def _palimpsest() -> list[str]:
    exe = shutil.which("palimpsest", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "palimpsest"]


def _seed(memory: Memory, n: int = 150) -> None:
    memory.ingest_session("s1", [{"role": "user" if i % 2 else "assistant", "content": f"note {i} about the deploy cursor"}
                                 for i in range(n)])


def _embed_state(memory: Memory) -> dict[str, int]:
    return memory.store.job_status()["tasks"].get("embed", {})


def test_worker_command_runs_the_queue_then_stops_on_sigterm(home: Path, store_url: str) -> None:
    with Memory(home, store_url, settings=HASH) as memory:
        _seed(memory)
        queued = _embed_state(memory)
        assert queued.get("queued", 0) >= 3 and "done" not in queued
        model = memory.embedder.model_id  # type: ignore[union-attr]
        assert len(memory.store.messages_without_vectors(model, 1000)) == 150
    env = {**os.environ, "PALIMPSEST_EMBEDDER": "hash"}
    proc = subprocess.Popen([*_palimpsest(), "--home", str(home), "--store", store_url, "worker"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("Palimpsest worker "), line + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        with Memory(home, store_url, settings=HASH) as memory:
            deadline = time.monotonic() + 60
            while _embed_state(memory) != {"done": queued["queued"]} and time.monotonic() < deadline:
                time.sleep(0.2)
            assert _embed_state(memory) == {"done": queued["queued"]}
            assert memory.store.messages_without_vectors(model, 1000) == []
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def _long_messages(n: int = 64) -> list[dict[str, str]]:
    """`n` distinct messages of ~8,000 tokens each: one embed job, minutes of the local model on this 2-core machine."""
    words = ("the", "boiler", "technician", "replaced", "a", "valve", "and", "said", "pressure", "was", "fine", "after",
             "repair", "cost", "euros")
    return [{"role": "user" if i % 2 else "assistant",
             "content": f"message {i}: " + " ".join(words[(i * j * 7 + j) % len(words)] for j in range(8000))} for i in range(n)]


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_sigterm_while_the_local_model_embeds_exits_0_and_leaves_no_job_running(home: Path, store_url: str, tmp_path: Path,
                                                                               command: str) -> None:
    """Found by a new user: `serve` told to stop while it embedded long messages logged "stopped", then died inside
    the ONNX runtime ("terminate called without an active exception", exit 134): its worker's join gave up after 30 s
    and the interpreter exited while the model ran on its daemon thread; the claimed jobs stayed `running` for their
    five-minute lease. `worker` waited for the whole job (minutes). Both now stop between the model's calls, hand the
    job back, and exit 0 once no call runs."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local", embed_cache="off")) as memory:
        memory.ingest_session("s1", _long_messages())
        assert _embed_state(memory) == {"queued": 1}
    env = {**os.environ, "PALIMPSEST_EMBEDDER": "local", "PALIMPSEST_EMBED_CACHE": "off"}
    args = ["serve", "--port", "0", "--interval", "0.2"] if command == "serve" else ["worker"]
    with open(tmp_path / "stderr.log", "w+") as err:
        proc = subprocess.Popen([*_palimpsest(), "--home", str(home), "--store", store_url, *args], stdout=subprocess.PIPE,
                                stderr=err, env=env, text=True)
        try:
            line = proc.stdout.readline() if proc.stdout else ""
            assert line.startswith(f"Palimpsest {'serving' if command == 'serve' else 'worker'}"), line
            with Memory(home, store_url, settings=HASH) as memory:
                deadline = time.monotonic() + 60
                while "running" not in _embed_state(memory) and time.monotonic() < deadline:
                    time.sleep(0.2)
                assert _embed_state(memory) == {"running": 1}
            time.sleep(3)  # inside the model
            proc.send_signal(signal.SIGTERM)
            started = time.monotonic()
            code = proc.wait(timeout=90)
            err.seek(0)
            assert code == 0, err.read()[-3000:]
            assert time.monotonic() - started < 30
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    with Memory(home, store_url, settings=HASH) as memory:
        assert _embed_state(memory) == {"queued": 1}  # handed back, its attempt returned: the next worker runs it


def test_serve_without_worker_indexes_but_leaves_the_jobs(home: Path, store_url: str) -> None:
    with Memory(home, store_url, settings=HASH) as memory:
        memory.journal.append("s1", [{"role": "user", "content": "journaled while no server ran", "event_key": "k1",
                                      "created_at": "2026-01-01T00:00:00.000000Z"}])
        run_background(memory, threading.Event(), once=True, worker=False)
        assert [m.event_key for m in memory.browse(session="s1")] == ["k1"]
        assert _embed_state(memory) == {"queued": 1}
        run_background(memory, threading.Event(), once=True)
        assert _embed_state(memory) == {"done": 1}


def test_two_servers_on_one_home_capture_one_session_once(home: Path, store_url: str) -> None:
    """Two processes' worth of state (two `Memory`, two journals objects, two pools) on one home
    and one store, capturing one session at once, each batch also resent through the other:
    every key is journaled and indexed once, and both answers give the same id."""
    settings = Settings.load(env={}, embedder="none", distill=False)
    servers = [Memory(home, store_url, settings=settings), Memory(home, store_url, settings=settings)]
    answers: list[dict[str, str]] = [{}, {}]
    errors: list[BaseException] = []

    def client(c: int) -> None:
        try:
            for seq in range(15):
                batch = [{"role": "user", "content": f"client {c} batch {seq} event {j}", "event_key": f"c{c}-{seq}-{j}"} for j in range(5)]
                first, second = servers[c % 2], servers[(c + 1) % 2]
                for side, server in enumerate((first, second)):  # the retry goes to the other server
                    answers[side].update((e.event_key, e.id) for e, _ in server.capture("shared", batch)["events"])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert answers[0] == answers[1] and len(answers[0]) == 4 * 15 * 5
        keys = [e.event_key for e in servers[0].journal.read("shared") if e.type == "message"]
        assert sorted(keys) == sorted(answers[0])
        servers[1].catch_up()
        indexed = servers[0].browse(session="shared", limit=1000)
        assert sorted(m.event_key for m in indexed) == sorted(answers[0])
        assert {m.event_key: m.id for m in indexed} == answers[0]
    finally:
        for m in servers:
            m.close()


def test_two_homes_on_one_store_index_every_event(tmp_path: Path, store_url: str) -> None:
    settings = Settings.load(env={}, embedder="none", distill=False)
    a, b = Memory(tmp_path / "a", store_url, settings=settings), Memory(tmp_path / "b", store_url, settings=settings)
    try:
        acked = {}
        for i in range(6):
            server = (a, b)[i % 2]
            for e, _ in server.capture("shared", [{"role": "user", "content": f"message {i} " * (i + 1), "event_key": f"k{i}"}])["events"]:
                acked[e.event_key] = e.id
        a.catch_up()
        b.catch_up()
        assert {m.event_key: m.id for m in a.browse(session="shared")} == acked
    finally:
        a.close()
        b.close()


def test_two_workers_curating_one_statement_at_once_keep_one_fact(home: Path, store_url: str) -> None:
    """Both workers look for the statement before either has written it (a barrier holds them
    there; with curation serialised the first to look times out of the barrier, writes, and
    the second finds its fact): one open fact, confirmed, not two."""
    workers = [Memory(home, store_url, settings=HASH), Memory(home, store_url, settings=HASH)]
    barrier = threading.Barrier(2, timeout=3)
    for memory in workers:
        curator = memory.facts.curator
        look = curator.neighbours

        def look_then_meet(candidate: object, look: object = look) -> object:
            found = look(candidate)  # type: ignore[operator]
            try:
                barrier.wait()
            except threading.BrokenBarrierError:
                pass
            return found

        curator.neighbours = look_then_meet
    threads = [threading.Thread(target=m.facts.curator.write, args=("We decided to deploy the server on friday.",)) for m in workers]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [f.text for f in workers[0].facts.query()] == ["We decided to deploy the server on friday."]
    finally:
        for m in workers:
            m.close()
