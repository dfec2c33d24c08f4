"""`palimpsest doctor` in each state it reports, and capture refused while writes are off
(issue 19): every problem comes with the command that fixes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.capture import CaptureClient, Spool, setup
from palimpsest.capture.doctor import Doctor
from palimpsest.server.run import ServerThread
from palimpsest.store import NewJob
from test_capture import batch, free_port
from test_setup import EXE


def checks(home: Path, user: Path, url: str) -> dict[str, dict[str, str]]:
    settings = Settings.load(env={}, home=str(home), embedder="none", url=url)
    return {c.name: c.to_dict() for c in Doctor(settings, {"HOME": str(user)}).run()}


def install(user: Path, binary: str) -> None:
    env = {"HOME": str(user)}
    setup.apply(setup.plan("claude-code", setup.Command(binary), env), user / ".palimpsest")


@pytest.fixture
def user(tmp_path: Path) -> Path:
    (tmp_path / "user" / ".claude").mkdir(parents=True)
    return tmp_path / "user"


def served(home: Path, write: bool, capture_loopback: bool = True) -> Memory:
    return Memory(home, settings=Settings.load(env={}, embedder="none", enable_write=write, capture_loopback=capture_loopback))


def test_all_well(tmp_path: Path, user: Path) -> None:
    install(user, str(EXE))
    memory = served(tmp_path / "h", write=True)
    with ServerThread(memory) as url:
        found = checks(tmp_path / "h", user, url)
    memory.close()
    assert {n: c["state"] for n, c in found.items()} == {
        "server": "ok", "capture": "ok", "hooks claude-code": "ok", "embedder": "warn", "jobs": "ok",
        "quarantine": "ok", "last capture": "warn", "dead letters": "ok", "spool": "ok"}
    assert "/panel" in found["server"]["detail"]
    assert "PALIMPSEST_EMBEDDER" in found["embedder"]["fix"]


def test_server_down(tmp_path: Path, user: Path) -> None:
    port = free_port()
    found = checks(tmp_path / "h", user, f"http://127.0.0.1:{port}")
    # the command that serves the address the hooks name (it said `palimpsest serve`, which listens on 8765)
    assert found["server"]["state"] == "problem" and f"`palimpsest serve --port {port}`" in found["server"]["fix"]
    assert "capture" not in found


def test_a_server_whose_store_is_away_is_a_problem_and_warns_once(tmp_path: Path, user: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """Found by a team's ops engineer: with PostgreSQL stopped, /readyz answered 503 (and logged a warning
    per probe, 78 in one outage) while doctor said the server was ok and exited 0."""
    import httpx

    from palimpsest.errors import StoreUnavailable

    memory = served(tmp_path / "h", write=True)
    away = {"now": True}

    def check_store() -> None:  # the database at the other end of the connection is down
        if away["now"]:
            raise StoreUnavailable("connection refused")

    memory.check_store = check_store  # type: ignore[method-assign]
    with caplog.at_level("DEBUG", logger="palimpsest.http"), ServerThread(memory) as url:
        found = checks(tmp_path / "h", user, url)
        for _ in range(5):
            assert httpx.get(f"{url}/readyz").status_code == 503
        away["now"] = False
        assert httpx.get(f"{url}/readyz").status_code == 200
        healthy = checks(tmp_path / "h", user, url)
    memory.close()
    assert found["store"]["state"] == "problem" and "PostgreSQL" in found["store"]["fix"]
    assert "store" not in healthy
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING" and r.name == "palimpsest.http"]
    assert sum(m.startswith("not ready") for m in warnings) == 1 and "ready again: the store answers" in warnings


def test_writes_refused(tmp_path: Path, user: Path) -> None:
    memory = served(tmp_path / "h", write=False, capture_loopback=False)
    with ServerThread(memory) as url:
        found = checks(tmp_path / "h", user, url)
    memory.close()
    assert found["capture"]["state"] == "problem" and "PALIMPSEST_ENABLE_WRITE=1" in found["capture"]["fix"]


def test_a_default_server_takes_the_owners_capture_with_writes_off(tmp_path: Path, user: Path) -> None:
    """`make run` as it is (writes off): the harness on this machine captures; the write
    tools stay off."""
    import httpx

    memory = served(tmp_path / "h", write=False)
    with ServerThread(memory) as url:
        found = checks(tmp_path / "h", user, url)
        client = CaptureClient(url, tmp_path / "client")
        report = client.send([batch("s", ["remember the blue door"])])
        client.close()
        refused = httpx.post(f"{url}/api/memory/tool/memory_append", json={"session": "s", "role": "user", "content": "x"})
    assert found["capture"]["state"] == "ok"
    assert (report.refused, report.spooled, report.dead) == (0, 0, 0)
    assert [m.content for m in memory.browse(session="s")] == ["text remember the blue door"]
    assert refused.status_code == 404
    memory.close()


def test_hook_missing_and_binary_moved(tmp_path: Path, user: Path) -> None:
    found = checks(tmp_path / "h", user, f"http://127.0.0.1:{free_port()}")
    assert found["hooks claude-code"]["state"] == "problem" and found["hooks claude-code"]["fix"] == "palimpsest setup claude-code"
    install(user, str(tmp_path / "moved" / "palimpsest"))
    found = checks(tmp_path / "h", user, f"http://127.0.0.1:{free_port()}")
    assert found["hooks claude-code"]["state"] == "problem" and "binary is missing" in found["hooks claude-code"]["detail"]


def test_backlog_and_failed_jobs(tmp_path: Path, user: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("palimpsest.capture.doctor.BACKLOG_WARN", 2)
    with served(tmp_path / "h", write=True) as memory:
        memory.store.enqueue([NewJob("embed", {"ids": [str(i)]}, job_key=f"k{i}") for i in range(3)])
    found = checks(tmp_path / "h", user, f"http://127.0.0.1:{free_port()}")
    assert found["jobs"]["state"] == "warn" and found["jobs"]["detail"].startswith("3 waiting")


def test_dead_letters_and_spool(tmp_path: Path, user: Path) -> None:
    spool = Spool(tmp_path / "h")
    spool.set_aside(spool.put(batch("s", ["a"])), spool.dead, "server refused the batch with 400: bad role")
    spool.put(batch("s", ["b"]))
    found = checks(tmp_path / "h", user, f"http://127.0.0.1:{free_port()}")
    assert found["dead letters"]["state"] == "problem" and "bad role" in found["dead letters"]["detail"]
    assert "--requeue-dead" in found["dead letters"]["fix"]
    assert found["spool"]["state"] == "warn" and found["spool"]["detail"].startswith("1 batches")


def test_quarantined_events_are_reported_with_the_server_up_or_down(tmp_path: Path, user: Path) -> None:
    from test_index_faults import POISON, _write_raw

    with served(tmp_path / "h", write=True) as memory:
        _write_raw(memory, "poisoned", [POISON["not json"]("poisoned", 1)])
        memory.catch_up()
    found = checks(tmp_path / "h", user, f"http://127.0.0.1:{free_port()}")  # server down: read from the home
    assert found["quarantine"]["state"] == "warn" and found["quarantine"]["detail"].startswith("1 journal events")
    assert "session poisoned line 1" in found["quarantine"]["detail"]
    assert "palimpsest retry-quarantined" in found["quarantine"]["fix"]
    memory = served(tmp_path / "h", write=True)
    with ServerThread(memory) as url:
        assert checks(tmp_path / "h", user, url)["quarantine"]["detail"] == found["quarantine"]["detail"]
    memory.close()
    from test_setup import palimpsest

    done = palimpsest(user, "retry-quarantined", "--home", str(tmp_path / "h"), "--json")
    assert done.returncode == 0 and json.loads(done.stdout) == {"retried": 1, "indexed": 0, "quarantined": 1}


def test_the_doctor_command_prints_one_screen_and_exits_1_on_a_problem(tmp_path: Path, user: Path) -> None:
    from test_setup import palimpsest

    done = palimpsest(user, "doctor", "--url", f"http://127.0.0.1:{free_port()}", "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["ok"] is False
    done = palimpsest(user, "doctor", "--url", f"http://127.0.0.1:{free_port()}")
    assert done.returncode == 1 and "palimpsest serve" in done.stdout and len(done.stdout.splitlines()) < 40


def test_capture_while_writes_are_off_is_spooled_and_says_what_to_set(tmp_path: Path) -> None:
    memory = served(tmp_path / "h", write=False, capture_loopback=False)
    with ServerThread(memory) as url:
        client = CaptureClient(url, tmp_path / "client")
        report = client.send([batch("s", ["a"])])
        client.close()
        assert (report.refused, report.spooled, report.dead) == (1, 1, 0)
        assert "PALIMPSEST_ENABLE_WRITE=1" in report.errors[0]
        from test_setup import palimpsest

        hook = json.dumps({"session_id": "s2", "prompt": "remember the blue door", "hook_event_name": "UserPromptSubmit"})
        done = palimpsest(tmp_path, "capture", "--url", url, stdin=hook)
        assert done.returncode == 1 and "PALIMPSEST_ENABLE_WRITE=1" in done.stderr  # the harness shows stderr for 1
    memory.close()
    memory = served(tmp_path / "h", write=True)
    with ServerThread(memory) as url:  # writes on: the spooled batch replays
        client = CaptureClient(url, tmp_path / "client")
        assert client.replay(report := type(report)()) and report.replayed == 1
        client.close()
    memory.close()


def test_capture_without_the_servers_token_is_spooled_says_what_to_set_and_replays(tmp_path: Path, user: Path) -> None:
    """Found by a platform engineer with a shared server that wants a token: with PALIMPSEST_TOKEN empty or wrong the
    hook said `dead 1 … note: server refused the batch with 401: {…"unauthorized"…}`, the next capture `dead 0`, exit 0,
    and nothing named PALIMPSEST_TOKEN or `--requeue-dead`: the turns waited in dead/ for someone to find them. A token
    is the client's configuration, not the batch's fault: spooled like writes off, replayed once the token is set."""
    token = "the-team-token-123456"
    settings = Settings.load(env={}, embedder="none", enable_write=True, token=token)
    with Memory(tmp_path / "h", settings=settings) as memory, ServerThread(memory) as url:
        for sent in ("", "a-wrong-token-000000"):
            client = CaptureClient(url, tmp_path / "client", token=sent)
            report = client.send([batch("s", [f"k{len(sent)}"])])
            client.close()
            assert (report.refused, report.spooled, report.dead) == (1, 1, 0), report.errors
            assert "PALIMPSEST_TOKEN" in report.errors[0]
        found = checks(tmp_path / "client", user, url)
        assert found["spool"]["state"] == "problem" and "PALIMPSEST_TOKEN" in found["spool"]["detail"]
        client = CaptureClient(url, tmp_path / "client", token=token)
        report = client.send([])
        client.close()
        assert (report.replayed, report.refused) == (2, 0)
        assert [e.event_key for e in memory.journal.read("s") if e.type == "message"] == ["k0", "k20"]
    assert checks(tmp_path / "client", user, f"http://127.0.0.1:{free_port()}")["spool"]["detail"] == "empty"


def test_the_server_refusal_names_the_setting(tmp_path: Path) -> None:
    import httpx

    settings = Settings.load(env={}, embedder="none", capture_loopback=False)
    with Memory(tmp_path, settings=settings) as memory, ServerThread(memory) as url:
        r = httpx.post(f"{url}/api/capture", json={"session": "s", "events": []})
    assert r.status_code == 404 and "PALIMPSEST_ENABLE_WRITE=1" in r.json()["error"]["message"]



def test_the_llm_endpoint_is_asked_when_one_is_configured(tmp_path: Path, user: Path) -> None:
    """Found by a new user: with a wrong URL, a refused key or an HTML page, every job fell back
    to the local rules and `doctor` said all was well (it had no LLM row)."""
    from fakeopenai import FakeOpenAI

    def llm_check(url: str, model: str = "m") -> dict[str, str]:
        settings = Settings.load(env={}, home=str(tmp_path / "h"), embedder="none", url=f"http://127.0.0.1:{free_port()}",
                                 llm_url=url, llm_model=model)
        return {c.name: c.to_dict() for c in Doctor(settings, {"HOME": str(user)}).run()}["llm"]

    with FakeOpenAI() as fake:
        assert llm_check(fake.url)["state"] == "ok"
        assert llm_check(fake.url, "gpt-9")["state"] == "warn" and "does not list the model 'gpt-9'" in llm_check(fake.url, "gpt-9")["detail"]
        fake.models_status = 401
        found = llm_check(fake.url)
        assert found["state"] == "problem" and "refuses the key" in found["detail"] and "PALIMPSEST_LLM_API_KEY" in found["fix"]
    gone = llm_check(f"http://127.0.0.1:{free_port()}/v1")
    assert gone["state"] == "problem" and "does not answer" in gone["detail"]
    settings = Settings.load(env={}, home=str(tmp_path / "h"), embedder="none", url=f"http://127.0.0.1:{free_port()}")
    assert "llm" not in {c.name for c in Doctor(settings, {"HOME": str(user)}).run()}  # none configured: no row


def test_doctor_weighs_the_llm_replies_not_only_its_model_list(tmp_path: Path, user: Path) -> None:
    """Found by a user with an LLM configured: an endpoint that answered prose to every call (22 of 22
    replies invalid) was "ok" while every job fell back to the local rules."""
    from fakeopenai import FakeOpenAI, Reply
    from palimpsest import Memory
    from palimpsest.llm import InvalidReply

    with FakeOpenAI(responder=lambda body: Reply.text("Sure! Here is a summary of the turn.")) as fake:
        settings = Settings.load(env={}, home=str(tmp_path / "h"), embedder="none", url=f"http://127.0.0.1:{free_port()}",
                                 llm_url=fake.url, llm_model="m", llm_backoff="0,0,0", llm_structured="json_schema")
        with Memory(settings=settings) as memory:
            for i in range(6):
                memory.append(f"s{i}", "user", f"We deploy service {i} to Fly.io.")
                with pytest.raises(InvalidReply):  # parked; the job would be retried, then the local rules
                    memory.distiller.last_turn(f"s{i}", use_llm=True)
        found = {c.name: c.to_dict() for c in Doctor(settings, {"HOME": str(user)}).run()}["llm"]
        assert found["state"] == "warn" and "broke the schema" in found["detail"] and "llm parked" in found["fix"], found


def test_doctor_asks_the_server_the_hooks_were_set_up_for(tmp_path: Path, user: Path) -> None:
    """Found by a new user: `setup claude-code --url …:18777` made hooks that worked, and
    `doctor` checked PALIMPSEST_URL's default server and reported "server PROBLEM"."""
    memory = served(tmp_path / "h", write=True)
    with ServerThread(memory) as url:
        setup.apply(setup.plan("claude-code", setup.Command(str(EXE), url=url), {"HOME": str(user)}), user / ".palimpsest")
        found = checks(tmp_path / "h", user, f"http://127.0.0.1:{free_port()}")  # the settings' URL: nobody there
    memory.close()
    assert found["server"]["state"] == "ok" and url in found["server"]["detail"]


def test_doctor_says_when_the_hooks_talk_to_two_servers(tmp_path: Path, user: Path) -> None:
    (user / ".codex").mkdir()
    env = {"HOME": str(user)}
    setup.apply(setup.plan("claude-code", setup.Command(str(EXE), url="http://127.0.0.1:18888"), env), user / ".palimpsest")
    setup.apply(setup.plan("codex", setup.Command(str(EXE), url="http://127.0.0.1:18899"), env), user / ".palimpsest")
    found = checks(tmp_path / "h", user, f"http://127.0.0.1:{free_port()}")
    assert found["hooks"]["state"] == "warn" and "18888" in found["hooks"]["detail"] and "18899" in found["hooks"]["detail"]


def test_palimpsest_url_set_is_the_server_doctor_asks(tmp_path: Path, user: Path) -> None:
    """Found by a reader of the docs: with hooks set up for one server, `PALIMPSEST_URL=… palimpsest doctor` still
    checked the hooks' server and said all was well, though `--url`'s help says PALIMPSEST_URL is its default."""
    memory = served(tmp_path / "h", write=True)
    elsewhere = f"http://127.0.0.1:{free_port()}"
    with ServerThread(memory) as url:
        setup.apply(setup.plan("claude-code", setup.Command(str(EXE), url=url), {"HOME": str(user)}), user / ".palimpsest")
        settings = Settings.load(env={"PALIMPSEST_URL": elsewhere}, home=str(tmp_path / "h"), embedder="none")
        found = {c.name: c.to_dict() for c in Doctor(settings, {"HOME": str(user), "PALIMPSEST_URL": elsewhere}).run()}
    memory.close()
    assert found["server"]["state"] == "problem" and elsewhere in found["server"]["detail"]


def test_a_claude_code_setup_of_an_older_version_is_told_to_add_the_session_hooks(tmp_path: Path, user: Path) -> None:
    """Setup as it was (recall and Stop only): a turn ended by an interrupt and /exit was never captured."""
    import sys

    binary = str(Path(sys.executable).parent / "palimpsest")
    install(user, binary)
    path = user / ".claude" / "settings.json"
    doc = json.loads(path.read_text())
    for event in ("SessionEnd", "SessionStart"):
        del doc["hooks"][event]
    path.write_text(json.dumps(doc))
    found = checks(tmp_path / "h", user, f"http://127.0.0.1:{free_port()}")
    hooks = found["hooks claude-code"]
    assert hooks["state"] == "warn" and "SessionEnd" in hooks["detail"] and hooks["fix"] == "palimpsest setup claude-code"
    install(user, binary)
    assert checks(tmp_path / "h", user, f"http://127.0.0.1:{free_port()}")["hooks claude-code"]["state"] == "ok"


def test_on_a_client_machine_the_jobs_are_the_servers_and_no_home_is_made(tmp_path: Path, user: Path, memory: Memory) -> None:
    """Found by a platform engineer with one shared server and three machines (PALIMPSEST_URL): `doctor` on a client
    opened, and so created, its empty local home and said `jobs ok 0 waiting` while the server's queue held 18; on a
    machine with no home it said `no memory at …/.palimpsest yet`, fix `palimpsest serve` — a second server."""
    memory.store.enqueue([NewJob("embed", {"ids": [str(i)]}, job_key=f"k{i}") for i in range(3)])
    client = user / ".palimpsest"
    with ServerThread(memory) as url:
        found = checks(client, user, url)  # no home here at all
        assert found["jobs"]["detail"].startswith("3 waiting") and "palimpsest serve" not in found["jobs"]["fix"]
        install(user, str(EXE))  # setup keeps its record in the home: the folder exists, its store not
        found = checks(client, user, url)
    assert found["jobs"]["detail"].startswith("3 waiting") and not (client / "palimpsest.db").exists()


def test_a_client_whose_server_is_down_is_not_told_to_serve_here(tmp_path: Path, user: Path) -> None:
    found = checks(tmp_path / "h", user, "http://palimpsest.invalid:8765")
    assert found["jobs"]["state"] == "warn" and "palimpsest serve" not in found["jobs"]["fix"]
    assert "palimpsest.invalid" in found["jobs"]["detail"] and not (tmp_path / "h").exists()
