"""The server's background pass (palimpsest/service.py): what it leaves done."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.service import background_pass, compact_index

NOW = "2030-01-01T00:00:00Z"  # scores decay with time: one moment for both searches


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(tmp_path, settings=Settings.load(env={}, embedder="none"))
    yield m
    m.close()


def _many_small_batches(memory: Memory, n: int = 40) -> None:
    for i in range(n):
        memory.ingest_session("s", [{"role": "user", "content": f"upstream timeout number {i} retry cap {j}"} for j in range(5)],
                              start=i * 5)


def test_a_pass_merges_the_full_text_segments_writers_left(memory: Memory) -> None:
    _many_small_batches(memory)
    before = [(h.message.id, round(h.score, 9)) for h in memory.search("upstream retry 7", touch=False, now=NOW).hits]
    background_pass(memory, time.monotonic())
    assert memory.store.compact_index() is False  # nothing left after one pass
    assert [(h.message.id, round(h.score, 9)) for h in memory.search("upstream retry 7", touch=False, now=NOW).hits] == before


def test_a_failing_compaction_is_logged_and_the_pass_goes_on(memory: Memory, monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    _many_small_batches(memory, 3)
    memory.search("upstream")  # an access count waiting to be written

    def broken(budget: int = 500) -> bool:
        raise RuntimeError("disk I/O error")

    monkeypatch.setattr(memory.store, "compact_index", broken)
    with caplog.at_level(logging.WARNING, logger="palimpsest.serve"):
        background_pass(memory, time.monotonic())
    assert "index compaction deferred: disk I/O error" in caplog.text
    assert memory.accesses._pending == {}  # the rest of the pass ran: access counts written


def test_cli_bulk_loads_leave_the_index_merged(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """`palimpsest import` (and ingest, rebuild) have no idle passes after them: they merge
    what their writes left before they exit, so a CLI-only user searches a merged index."""
    from palimpsest.cli import main

    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
    home = tmp_path / "home"
    lines = [json.dumps({"session": f"s{i}", "role": "user", "content": f"upstream timeout {i} line {j}"})
             for i in range(40) for j in range(3)]  # one group commit, so one full-text segment, per session
    (tmp_path / "bulk.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["--home", str(home), "import", str(tmp_path / "bulk.jsonl"), "--json"]) == 0
    capsys.readouterr()
    with Memory(home, settings=Settings.load(env={}, embedder="none")) as m:
        assert m.stats()["messages"] == 120
        assert m.store.compact_index() is False  # nothing left
    assert main(["--home", str(home), "rebuild", "--json"]) == 0
    with Memory(home, settings=Settings.load(env={}, embedder="none")) as m:
        assert m.store.compact_index() is False


def test_compact_index_is_bounded_in_time(memory: Memory) -> None:
    _many_small_batches(memory)
    assert compact_index(memory, 0) is False  # one slice, then out of time: more is left
    assert compact_index(memory, 10) is True


def test_embeddings_run_in_a_lane_of_their_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a new user: behind a slow model's jobs in the worker's one batch, a new
    message waited 136 s for its vector. `serve` runs embeddings beside the other jobs."""
    import threading

    from palimpsest.distill import Distiller
    from palimpsest.service import run_background
    from palimpsest.store import NewJob

    monkeypatch.setattr(Distiller, "run_job", lambda self, job: time.sleep(5))  # a slow model's job
    with Memory(tmp_path / "h", settings=Settings.load(env={}, embedder="hash", embed_cache="off")) as m:
        m.store.enqueue([NewJob("distill", {"session": "s", "tail": True}, job_key=f"slow-{i}") for i in range(1)])
        stop = threading.Event()
        runner = threading.Thread(target=run_background, args=(m, stop), kwargs={"interval": 0.2})
        runner.start()
        try:
            time.sleep(0.5)  # the slow jobs are claimed first
            m.append("s", "user", "the vector of this should not wait for the model")
            deadline = time.monotonic() + 3.5
            while time.monotonic() < deadline and m.stats()["embeddings"]["queued"]:
                time.sleep(0.1)
            assert m.stats()["embeddings"]["queued"] == 0  # embedded while a slow job still runs
            assert m.store.job_status()["tasks"]["distill"].get("done", 0) == 0
        finally:
            stop.set()
            runner.join(timeout=60)


def test_a_stopping_server_closes_the_model_call_in_flight(tmp_path: Path) -> None:
    """Found by a user with an LLM: SIGTERM during a hung distill call waited the join's 30 s,
    and the job stayed `running` until its five-minute lease ran out after a restart."""
    import threading

    from fakeopenai import FakeOpenAI, Reply
    from palimpsest.service import run_background

    with FakeOpenAI(responder=lambda body: Reply.hang_forever()) as fake:
        settings = Settings.load(env={}, embedder="none", llm_url=fake.url, llm_model="m", llm_timeout=120.0,
                                 llm_structured="json_schema", llm_backoff="0")
        with Memory(tmp_path / "h", settings=settings) as m:
            m.append("s", "user", "I live in Porto.")
            m.append("s", "assistant", "Noted.")
            m.append("s", "user", "And I prefer window seats.")  # the first turn closes: its distill job is due
            stop = threading.Event()
            runner = threading.Thread(target=run_background, args=(m, stop), kwargs={"interval": 0.2})
            runner.start()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not fake.requests:
                time.sleep(0.05)
            assert fake.requests, "the distill call never started"
            started = time.monotonic()
            stop.set()
            runner.join(timeout=60)
            assert time.monotonic() - started < 10
            assert "running" not in m.store.job_status()["tasks"]["distill"]
