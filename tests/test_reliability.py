"""Reliability: writers killed with SIGKILL at random moments, and writers racing.

The crash trials are `bench/crash.py`'s (one implementation; the bench runs many more):
a real writer process is killed -9 while appending or bulk-ingesting; after a restart
every event it acknowledged must be in the journal and the index, with no duplicates
and any torn tail moved aside. Runs two trials at a time to keep the suite quick.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from palimpsest import Memory, Settings
from palimpsest.journal import event_number

ROOT = Path(__file__).resolve().parent.parent


def _load_crash() -> ModuleType:
    spec = importlib.util.spec_from_file_location("palimpsest_bench_crash", ROOT / "bench" / "crash.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


crash = _load_crash()

# 21 trials: single appends, bulk ingests, and bulk ingests on a slow disk (so the kill
# often lands inside a group commit and leaves a torn tail). Every other trial re-uses
# the home of the one before: a crashed home must take new writes after its repair.
TRIALS = [(mode, seed) for seed in range(7) for mode in ("append", "ingest", "ingest-slow")]


def test_kill_9_loses_nothing_acknowledged(tmp_path: Path) -> None:
    def run(i: int) -> object:
        mode, seed = TRIALS[i]
        home = tmp_path / f"{mode}-{seed // 2}"
        return crash.trial(home, mode, 1000 + i, max_delay=0.3)

    with ThreadPoolExecutor(2) as pool:
        # homes shared by two trials must not run at once: even trials first, then odd
        outcomes = list(pool.map(run, [i for i in range(len(TRIALS)) if TRIALS[i][1] % 2 == 0]))
        outcomes += list(pool.map(run, [i for i in range(len(TRIALS)) if TRIALS[i][1] % 2 == 1]))
    problems = [f"{o.mode}: {p}" for o in outcomes for p in o.problems]
    assert problems == []
    assert len(outcomes) >= 20
    assert sum(o.acked for o in outcomes) > 0


@pytest.mark.parametrize("mode", ["capture", "import", "rebuild"])
def test_kill_9_during_capture_import_and_rebuild(tmp_path: Path, mode: str) -> None:
    """The server's capture path, an import (then imported again) and a rebuild, each killed
    twice at random (the second time in the home the first left)."""
    outcomes = [crash.trial(tmp_path / mode, mode, 2000 + i, max_delay=0.5) for i in range(2)]
    assert [p for o in outcomes for p in o.problems] == []
    assert all(o.journal_events > 0 for o in outcomes)


WRITER = textwrap.dedent(
    """
    import sys
    from palimpsest import Memory, Settings
    home, session, who, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    memory = Memory(home, settings=Settings.load(env={}, embedder="none"))
    sys.stdin.readline()  # start together
    for i in range(n):
        r = memory.append(session, "user", f"writer {who} message {i}", event_key=f"{who}:{i}")
        print(r["id"], f"{who}:{i}", r["stored"], flush=True)
    memory.close()
    """
)


def test_four_processes_appending_to_one_session(tmp_path: Path) -> None:
    home, n = tmp_path / "home", 500
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(home), "shared", f"w{w}", str(n)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
        for w in range(4)
    ]
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    acked: dict[str, str] = {}
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        for line in out.splitlines():
            event_id, key, stored = line.split()
            assert stored == "True"
            acked[event_id] = key
    assert len(acked) == 4 * n

    events = [json.loads(line) for line in (home / "sessions" / "shared" / "events.jsonl").read_text().splitlines()]
    assert len(events) == 4 * n
    assert {e["id"]: e["event_key"] for e in events} == acked  # nothing lost, nothing doubled
    numbers = [event_number(e["id"]) for e in events]
    assert all(a < b for a, b in itertools.pairwise(numbers)), "ids must strictly increase in journal order"
    for w in range(4):  # each writer's own messages are in its order
        mine = [e["event_key"] for e in events if e["event_key"].startswith(f"w{w}:")]
        assert mine == [f"w{w}:{i}" for i in range(n)]

    m = Memory(home, settings=Settings.load(env={}, embedder="none"))
    try:
        assert m.catch_up() == 0  # the writers indexed everything themselves
        assert m.stats()["messages"] == 4 * n
        rows = m.browse(session="shared", limit=1000) + m.browse(session="shared", limit=1000, offset=1000)
        assert sorted(r.id for r in rows) == sorted(acked)
        assert m.stats()["index_lag_bytes"] == 0
    finally:
        m.close()


@pytest.mark.parametrize("threads", [4])
def test_threads_of_one_process_share_a_session(tmp_path: Path, threads: int) -> None:
    m = Memory(tmp_path / "home", settings=Settings.load(env={}, embedder="none"))

    def write(t: int) -> list[str]:
        return [m.append("s", "user", f"thread {t} item {i}")["id"] for i in range(50)]

    with ThreadPoolExecutor(threads) as pool:
        ids = [i for chunk in pool.map(write, range(threads)) for i in chunk]
    journal_ids = [e.id for e in m.journal.read("s")]
    assert sorted(ids) == sorted(journal_ids) == journal_ids and len(set(ids)) == threads * 50
    assert m.stats()["messages"] == threads * 50
    m.close()


class _Racing:
    """A connection whose WAL switch loses a race `losses` times (SQLite answers the loser
    "database is locked" at once, without its busy handler) — the process boundary."""

    def __init__(self, losses: int, message: str = "database is locked") -> None:
        self.losses, self.message, self.calls = losses, message, 0

    def execute(self, sql: str) -> Any:
        self.calls += 1
        if self.calls <= self.losses:
            raise sqlite3.OperationalError(self.message)
        return sqlite3.connect(":memory:").execute("SELECT 'wal'")


def test_opening_a_new_database_retries_a_lost_wal_race() -> None:
    from palimpsest.store.sqlite import use_wal

    racing = _Racing(losses=3)
    use_wal(racing, patience=5)  # type: ignore[arg-type]
    assert racing.calls == 4
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        use_wal(_Racing(losses=10_000), patience=0.2)  # type: ignore[arg-type]
    other = _Racing(losses=1, message="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        use_wal(other, patience=5)  # type: ignore[arg-type]
    assert other.calls == 1  # only a lost race is retried
