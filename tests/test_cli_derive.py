"""The CLI alone gets the full memory (issue 19): after a CLI write with no server running,
the embeddings are computed in the same command and the output says how the rest runs;
with a server answering, the jobs are left to it; `--no-derive` leaves them queued."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from palimpsest import Memory, Settings
from palimpsest.server.run import ServerThread
from test_capture import free_port
from test_setup import EXE, env_for


def cli(tmp_path: Path, url: str, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**env_for(tmp_path), "PALIMPSEST_HOME": str(tmp_path / "h"), "PALIMPSEST_EMBEDDER": "hash", "PALIMPSEST_URL": url}
    return subprocess.run([str(EXE), *argv], input=stdin, capture_output=True, text=True, env=env, timeout=120, check=False)


def vectors(tmp_path: Path) -> dict[str, Any]:
    with Memory(tmp_path / "h", settings=Settings.load(env={}, embedder="hash")) as m:
        return m.stats()["embeddings"]


def test_without_a_server_the_write_is_embedded_in_the_same_command(tmp_path: Path) -> None:
    done = cli(tmp_path, f"http://127.0.0.1:{free_port()}", "append", "s1", "user", "the blue door is on the left")
    assert done.returncode == 0 and done.stdout.endswith("stored\n")
    assert "embedded 1 messages here" in done.stderr and "palimpsest jobs run" in done.stderr
    e = vectors(tmp_path)
    assert e["queued"] == 0 and list(e["coverage"].values()) == [1.0]
    transcript = "\n".join(json.dumps({"role": "user", "content": f"line {i} about the garden"}) for i in range(5))
    done = cli(tmp_path, f"http://127.0.0.1:{free_port()}", "ingest", "s2", "-", stdin=transcript)
    assert done.returncode == 0 and "embedded 5 messages here" in done.stderr
    assert [m["count"] for m in vectors(tmp_path)["models"].values()] == [6]


def test_no_derive_leaves_the_jobs_queued_and_says_how_to_run_them(tmp_path: Path) -> None:
    done = cli(tmp_path, f"http://127.0.0.1:{free_port()}", "append", "s1", "user", "queued for later", "--no-derive")
    assert done.returncode == 0 and "embed 1" in done.stderr and "palimpsest serve" in done.stderr
    assert vectors(tmp_path)["queued"] == 1
    done = cli(tmp_path, f"http://127.0.0.1:{free_port()}", "jobs", "run", "--json")
    assert vectors(tmp_path)["queued"] == 0


def test_jobs_run_says_what_waits_until_later(tmp_path: Path) -> None:
    """A user message queues its session's compaction and the distillation of its last turn a
    minute on: `jobs run` right after ran none of them and said only "ran 0 jobs"."""
    url = f"http://127.0.0.1:{free_port()}"
    assert cli(tmp_path, url, "append", "s1", "user", "We deploy the docs to Netlify.").returncode == 0
    done = cli(tmp_path, url, "jobs", "run", "--json")
    report = json.loads(done.stdout)
    assert report["waiting"] >= 2 and report["next_run"] > "2000"  # compact, distill (and tags)
    done = cli(tmp_path, url, "jobs", "run")
    assert done.stdout.startswith("ran 0 jobs; ") and "the first until" in done.stdout and "palimpsest serve" in done.stdout
    assert "compact 1" in done.stdout and report["queued"]["compact"] == 1  # which jobs wait, by task (not always compaction)
    status = json.loads(cli(tmp_path, url, "jobs", "status", "--json").stdout)
    compact = json.loads(cli(tmp_path, url, "jobs", "run", "--task", "compact", "--json").stdout)
    assert compact["waiting"] == status["tasks"]["compact"]["queued"] and compact["next_run"] == status["next_runs"]["compact"]
    nothing = json.loads(cli(tmp_path, url, "jobs", "run", "--task", "wiki", "--json").stdout)
    assert nothing == {"ran": 0, "curated": 0, "waiting": 0, "queued": {}, "next_run": None, "running": {}}  # of the tasks asked for


def test_jobs_run_says_what_another_worker_holds(tmp_path: Path) -> None:
    """Found by an SRE: after a worker was killed, `jobs run` answered at once and said nothing of the jobs it still held
    (marked running until its lease ends): a user took embeddings and facts for complete."""
    from palimpsest.records import iso, utcnow

    url = f"http://127.0.0.1:{free_port()}"
    assert cli(tmp_path, url, "append", "s1", "user", "queued for later", "--no-derive").returncode == 0
    with Memory(tmp_path / "h", settings=Settings.load(env={}, embedder="hash")) as m:
        now = utcnow()
        assert m.store.claim_jobs("killed-worker", ["embed"], 10, iso(now), iso(now))  # its lease runs on
    report = json.loads(cli(tmp_path, url, "jobs", "run", "--task", "embed", "--json").stdout)
    assert report["running"] == {"embed": 1} and report["ran"] == 0
    done = cli(tmp_path, url, "jobs", "run", "--task", "embed")
    assert "1 held by another worker (embed 1)" in done.stdout and "lease" in done.stdout


def test_with_a_server_of_this_store_answering_the_jobs_are_left_to_it(tmp_path: Path) -> None:
    with Memory(tmp_path / "h", settings=Settings.load(env={}, embedder="none")) as served, ServerThread(served) as url:
        done = cli(tmp_path, url, "append", "s1", "user", "the server embeds this")
    assert done.returncode == 0 and f"the server at {url} runs them" in done.stderr
    assert vectors(tmp_path)["queued"] == 1


def test_a_server_of_another_store_is_no_server_here(tmp_path: Path) -> None:
    """Found by a new user: an import into a second home, with a server of the first home
    answering at PALIMPSEST_URL, left its embeddings to that server, which never saw them
    (its queue is its own store's): the second home stayed keyword-only."""
    with Memory(tmp_path / "other", settings=Settings.load(env={}, embedder="none")) as served, ServerThread(served) as url:
        done = cli(tmp_path, url, "append", "s1", "user", "embedded here, not by the other home's server")
    assert done.returncode == 0 and "embedded 1 messages here" in done.stderr
    assert vectors(tmp_path)["queued"] == 0


def test_json_output_is_unchanged_and_stderr_quiet(tmp_path: Path) -> None:
    done = cli(tmp_path, f"http://127.0.0.1:{free_port()}", "append", "s1", "user", "quiet", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["stored"] is True and done.stderr == ""
    assert vectors(tmp_path)["queued"] == 0


def test_rebuild_computes_the_vectors_it_dropped(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    cli(tmp_path, url, "append", "s1", "user", "the blue door is on the left")
    done = cli(tmp_path, url, "rebuild")
    assert done.returncode == 0 and "rebuilt: 1 messages" in done.stdout and "embedded 1 messages here" in done.stderr
    assert vectors(tmp_path)["queued"] == 0
    done = cli(tmp_path, url, "rebuild", "--no-derive", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["derived"]["queued"]["embed"] == 1
    assert vectors(tmp_path)["queued"] == 1


def test_a_rebuild_gives_tool_calls_their_sentence_and_summaries_back(tmp_path: Path) -> None:
    """Found by a data steward: after `rebuild` every tool call's text was blank (no search
    found "Called Bash") until `jobs run`, and a database deleted and rebuilt lost its
    summaries, which `compact` then made again under new ids."""
    url = f"http://127.0.0.1:{free_port()}"
    cli(tmp_path, url, "append", "s1", "tool", "", "--tool-name", "Bash", "--tool-args", '{"cmd": "ls"}', "--tool-result", "a.txt b.txt")
    for i in range(6):
        cli(tmp_path, url, "append", "s1", "user", f"note {i}: the cache warms up in the morning")
    cli(tmp_path, url, "jobs", "run")
    with Memory(tmp_path / "h", settings=Settings.load(env={}, embedder="hash")) as m:
        m.summaries.compact("s1", final=True, use_llm=False)
        leaves = sorted(s.id for s in m.summaries.tree("s1")["summaries"])
    assert leaves
    for db in (tmp_path / "h").glob("palimpsest.db*"):
        db.unlink()
    done = cli(tmp_path, url, "rebuild")
    assert done.returncode == 0, done.stderr
    with Memory(tmp_path / "h", settings=Settings.load(env={}, embedder="hash")) as m:
        assert [h.message.tool_name for h in m.search("Called Bash", mode="substring").hits] == ["Bash"]
        assert sorted(s.id for s in m.summaries.tree("s1")["summaries"]) == leaves


def test_jobs_status_says_a_job_due_in_the_past_is_due_now(tmp_path: Path) -> None:
    """A bot's developer backdated his messages: `jobs status` said "the first queued job is due at 2026-08-01T10:30:00Z",
    a date long gone, as though it waited for it."""
    url = f"http://127.0.0.1:{free_port()}"
    done = cli(tmp_path, url, "append", "c1", "user", "I moved to Porto last week.", "--created-at", "2024-08-01T10:00:00Z")
    assert done.returncode == 0
    status = cli(tmp_path, url, "jobs", "status")
    assert "due at 2024" not in status.stdout and "due now" in status.stdout, status.stdout
    assert "palimpsest jobs run" in status.stdout  # what runs it with no server


def test_a_write_embeds_what_it_wrote_and_leaves_the_backlog(tmp_path: Path) -> None:
    """Found by a sysadmin: `import --no-derive big.jsonl`, then `append note-1 user "one small note: pihole gravity
    updated"` said "embedded 51 messages here" and ran twenty minutes, embedding the whole backlog it had not written."""
    url = f"http://127.0.0.1:{free_port()}"
    backlog = "\n".join(json.dumps({"role": "user", "content": f"log line {i} from the import"}) for i in range(5))
    assert cli(tmp_path, url, "ingest", "big", "-", "--no-derive", stdin=backlog).returncode == 0
    done = cli(tmp_path, url, "append", "note-1", "user", "one small note: pihole gravity updated")
    assert done.returncode == 0 and "embedded 1 messages here" in done.stderr and "embed 1" in done.stderr  # (a job: 5 messages)
    e = vectors(tmp_path)
    assert e["queued"] == 1 and [m["count"] for m in e["models"].values()] == [1]
    done = cli(tmp_path, url, "ingest", "s2", "-", stdin=backlog)
    assert "embedded 5 messages here" in done.stderr and vectors(tmp_path)["queued"] == 1
