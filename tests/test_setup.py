"""`palimpsest setup` end to end (issue 19): setup into a temporary HOME, then the configured
hook commands run exactly as the harness runs them (the hook's JSON on stdin, the configured
command line) against a real server — the turn is captured, the next prompt's hook answers
with a recall block that holds it, `--undo` gives the original files back byte for byte —
and the same with the server stopped: the hook answers in time with nothing, capture
spools, and the spool replays when the server is back."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory, Settings
from palimpsest.capture import Spool
from palimpsest.server.run import ServerThread
from test_capture import claude_lines, free_port, write_lines

EXE = shutil.which("palimpsest", path=str(Path(sys.executable).parent)) or shutil.which("palimpsest")
pytestmark = pytest.mark.skipif(EXE is None, reason="needs the palimpsest console script")

CLAUDE_SETTINGS = b'{"model": "opus",\n "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}'
CODEX_CONFIG = b'model = "o3"  # mine\n\n[profiles.fast]\nmodel = "o4-mini"\n'


def env_for(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PALIMPSEST_", "CLAUDE_", "CODEX_"))}
    return {**keep, "HOME": str(home)}


def palimpsest(home: Path, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), *argv], input=stdin, capture_output=True, text=True, env=env_for(home), timeout=120, check=False)


def hook_commands(path: Path) -> dict[str, str]:
    doc = json.loads(path.read_bytes())
    return {event: groups[-1]["hooks"][0]["command"] for event, groups in doc["hooks"].items() if "palimpsest" in json.dumps(groups)}


def run_hook(home: Path, command: str, payload: dict[str, Any]) -> tuple[subprocess.CompletedProcess[str], float]:
    """As the harness runs it: the configured command line, the hook's JSON on stdin."""
    started = time.monotonic()
    done = subprocess.run(shlex.split(command), input=json.dumps(payload), capture_output=True, text=True, env=env_for(home),
                          timeout=60, check=False)
    return done, time.monotonic() - started


@pytest.fixture
def server_memory(tmp_path: Path) -> Memory:
    m = Memory(tmp_path / "server", settings=Settings.load(env={}, embedder="none", enable_write=True))
    yield m  # type: ignore[misc]
    m.close()


def roundtrip(home: Path, memory: Memory, hooks: dict[str, str], transcript: Path, port: int) -> None:
    """The turn captured, recalled in another session's prompt; then the same with the server stopped."""
    stop, prompt = hooks["Stop"], hooks["UserPromptSubmit"]
    write_lines(transcript, claude_lines("turn-1"))
    with ServerThread(memory, port=port):
        done, _ = run_hook(home, stop, {"session_id": "turn-1", "transcript_path": str(transcript), "cwd": str(home),
                                        "hook_event_name": "Stop"})
        assert done.returncode == 0, done.stderr
        assert any("retry cap" in (m.tool_result or "") for m in memory.browse(session="turn-1"))
        done, _ = run_hook(home, prompt, {"session_id": "turn-2", "prompt": "what was that retry cap problem?",
                                          "hook_event_name": "UserPromptSubmit", "cwd": str(home)})
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)["hookSpecificOutput"]
        assert answer["hookEventName"] == "UserPromptSubmit"
        assert "<system-reminder>" in answer["additionalContext"] and "retry cap is below the upstream timeout" in answer["additionalContext"]
    # the server is stopped: the prompt hook answers nothing, in time; capture spools
    done, took = run_hook(home, prompt, {"session_id": "turn-2", "prompt": "the retry cap again", "hook_event_name": "UserPromptSubmit"})
    assert (done.returncode, done.stdout) == (0, "") and took < 6, (done.stderr, took)
    write_lines(transcript, [{"type": "user", "uuid": "u9", "message": {"role": "user", "content": "raise the cap to 8"}}], mode="a")
    done, _ = run_hook(home, stop, {"session_id": "turn-1", "transcript_path": str(transcript), "hook_event_name": "Stop"})
    assert done.returncode == 0, done.stderr
    spool = Spool(home / ".palimpsest")
    assert spool.pending() == 1
    with ServerThread(memory, port=port):
        done = palimpsest(home, "capture", "--replay", "--json")  # as doctor says it: to the server the hooks name, not the default port
        assert done.returncode == 0, done.stderr
    assert spool.pending() == 0
    assert "raise the cap to 8" in [m.content for m in memory.browse(session="turn-1")]


def test_claude_code_setup_recall_capture_and_undo(tmp_path: Path, server_memory: Memory) -> None:
    home, port = tmp_path / "user", free_port()
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_bytes(CLAUDE_SETTINGS)
    url = f"http://127.0.0.1:{port}"
    done = palimpsest(home, "setup", "claude-code", "--url", url, "--print")
    assert done.returncode == 0 and "recall --hook" in done.stdout and settings.read_bytes() == CLAUDE_SETTINGS
    done = palimpsest(home, "setup", "claude-code", "--url", url)
    assert done.returncode == 0, done.stderr
    doc = json.loads(settings.read_bytes())
    assert doc["model"] == "opus" and doc["hooks"]["Stop"][0]["hooks"][0]["command"] == "say done"  # the user's own kept
    hooks = hook_commands(settings)
    assert set(hooks) == {"Stop", "UserPromptSubmit", "SessionEnd", "SessionStart"}
    assert all(shlex.split(c)[0] == str(Path(EXE).absolute()) for c in hooks.values())
    assert hooks["SessionEnd"] == hooks["SessionStart"] == hooks["Stop"] and doc["hooks"]["SessionStart"][-1]["matcher"] == "compact"
    mcp = json.loads((home / ".claude.json").read_bytes())["mcpServers"]["palimpsest"]
    assert mcp["command"] == str(Path(EXE).absolute()) and mcp["args"] == ["mcp"]
    assert mcp["env"] == {"PALIMPSEST_AGENT": "claude-code", "PALIMPSEST_URL": url}  # the server setup was told of, for MCP too
    assert (settings.parent / "settings.json.before-palimpsest").read_bytes() == CLAUDE_SETTINGS
    written = settings.read_bytes()
    assert palimpsest(home, "setup", "claude-code", "--url", url).returncode == 0
    assert settings.read_bytes() == written  # idempotent
    # run again without --url (as doctor's fix for a moved binary says): the hooks keep their server (they had gone back to 8765)
    assert palimpsest(home, "setup", "claude-code").returncode == 0
    assert settings.read_bytes() == written
    roundtrip(home, server_memory, hooks, tmp_path / "t.jsonl", port)
    # a turn interrupted, then /exit: no Stop fires, SessionEnd does (found by a Claude Code user: its words were never stored)
    write_lines(tmp_path / "t.jsonl", [{"type": "user", "uuid": "u10", "message": {"role": "user", "content":
                                        "from now on every component needs a Storybook story"}}], mode="a")
    with ServerThread(server_memory, port=port):
        done, _ = run_hook(home, hooks["SessionEnd"], {"session_id": "turn-1", "transcript_path": str(tmp_path / "t.jsonl"),
                                                        "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
    assert done.returncode == 0 and done.stdout == "", done.stderr  # (the same command as SessionStart's, whose stdout would reach the model)
    assert "from now on every component needs a Storybook story" in [m.content for m in server_memory.browse(session="turn-1")]
    done = palimpsest(home, "setup", "claude-code", "--undo")
    assert done.returncode == 0, done.stderr
    assert settings.read_bytes() == CLAUDE_SETTINGS and not (home / ".claude.json").exists()
    assert not (settings.parent / "settings.json.before-palimpsest").exists()


@pytest.mark.parametrize("harness", ["claude-code", "codex", "mcp-client"])
def test_a_server_on_another_machine_gets_a_remote_mcp_entry(tmp_path: Path, harness: str) -> None:
    """Found by a team's ops engineer: with `--url http://server:8765` the MCP entry ran `palimpsest mcp`,
    which served this machine's empty home; a loopback URL is this machine's server and stays local."""
    for url, remote in (("http://10.1.2.3:8765", True), ("http://[::1]:8765", False), ("http://localhost:9000", False)):
        home = tmp_path / f"{harness}-{remote}-{url.rsplit(':', 1)[1]}"
        (home / ".claude").mkdir(parents=True)
        (home / ".codex").mkdir(parents=True)
        extra = ["--file", str(home / "client.json")] if harness == "mcp-client" else []
        done = palimpsest(home, "setup", harness, "--url", url, *extra)
        assert done.returncode == 0, done.stderr
        if harness == "codex":
            entry = tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["palimpsest"]
        else:
            entry = json.loads((home / (".claude.json" if harness == "claude-code" else "client.json")).read_bytes())["mcpServers"]["palimpsest"]
        assert entry["args"] == (["mcp", "--remote"] if remote else ["mcp"]) and entry["env"]["PALIMPSEST_URL"] == url
    done = palimpsest(tmp_path / "noscheme", "setup", harness, "--url", "127.0.0.1:8765")  # (read as another machine)
    assert done.returncode == 2 and "http://" in done.stderr


def test_codex_setup_recall_capture_and_undo(tmp_path: Path, server_memory: Memory) -> None:
    home, port = tmp_path / "user", free_port()
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_bytes(CODEX_CONFIG)
    done = palimpsest(home, "setup", "codex", "--url", f"http://127.0.0.1:{port}")
    assert done.returncode == 0, done.stderr
    parsed = tomllib.loads(config.read_text())
    assert parsed["model"] == "o3" and parsed["profiles"]["fast"]["model"] == "o4-mini"
    assert parsed["mcp_servers"]["palimpsest"] == {"command": str(Path(EXE).absolute()), "args": ["mcp"],
                                                   "env": {"PALIMPSEST_AGENT": "codex", "PALIMPSEST_URL": f"http://127.0.0.1:{port}"}}
    # (MCP writes name the harness; MCP asks the server setup was told of, not the default port, before running a worker)
    assert parsed["features"]["codex_hooks"] is True
    written = config.read_bytes()
    assert palimpsest(home, "setup", "codex", "--url", f"http://127.0.0.1:{port}").returncode == 0
    assert config.read_bytes() == written  # idempotent
    hooks = hook_commands(home / ".codex" / "hooks.json")
    roundtrip(home, server_memory, hooks, tmp_path / "t.jsonl", port)
    assert palimpsest(home, "setup", "codex", "--undo").returncode == 0
    assert config.read_bytes() == CODEX_CONFIG and not (home / ".codex" / "hooks.json").exists()


def test_undo_after_the_user_edited_the_file_removes_only_ours(tmp_path: Path) -> None:
    home = tmp_path / "user"
    assert palimpsest(home, "setup", "claude-code").returncode == 0
    settings = home / ".claude" / "settings.json"
    doc = json.loads(settings.read_bytes())
    doc["theme"] = "dark"
    settings.write_text(json.dumps(doc))
    assert palimpsest(home, "setup", "claude-code", "--undo").returncode == 0
    assert json.loads(settings.read_bytes()) == {"theme": "dark"}


def test_mcp_client_setup_says_there_is_no_injection_point(tmp_path: Path) -> None:
    home = tmp_path / "user"
    client = tmp_path / "client.json"
    client.write_text('{"mcpServers": {"other": {"command": "x"}}}')
    done = palimpsest(home, "setup", "mcp-client", "--file", str(client), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert any("memory_recall" in n for n in result["notes"])
    assert set(json.loads(client.read_text())["mcpServers"]) == {"other", "palimpsest"}
    assert palimpsest(home, "setup", "mcp-client", "--file", str(client), "--undo").returncode == 0
    assert client.read_text() == '{"mcpServers": {"other": {"command": "x"}}}'


def test_a_config_that_is_not_json_is_refused_and_left_alone(tmp_path: Path) -> None:
    home = tmp_path / "user"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{not json")
    done = palimpsest(home, "setup", "claude-code")
    assert done.returncode == 2 and "not valid JSON" in done.stderr and settings.read_text() == "{not json"


def test_the_recall_hook_answers_nothing_on_bad_input(tmp_path: Path) -> None:
    home = tmp_path / "user"
    for stdin in ("", "not json", "[]", '{"session_id": "x"}', '{"prompt": "   "}'):
        done = palimpsest(home, "recall", "--hook", "--url", f"http://127.0.0.1:{free_port()}", stdin=stdin)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), stdin


def test_the_recall_hook_gives_up_in_time_on_a_server_that_never_answers(tmp_path: Path) -> None:
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # connections are queued, never answered
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        done = palimpsest(tmp_path, "recall", "--hook", "--url", url, "--timeout", "1",
                          stdin=json.dumps({"session_id": "s", "prompt": "hello", "hook_event_name": "UserPromptSubmit"}))
        took = time.monotonic() - started
    assert (done.returncode, done.stdout) == (0, "") and took < 5, (done.stderr, took)


@pytest.mark.parametrize(("features", "said"), [
    ("[features]\ncodex_hooks = false\n", "set codex_hooks = true there"),  # it said "set hooks = true" (the wrong key)
    ("[features]\nweb_search = true\n", "add codex_hooks = true to it"),  # it said nothing, and older Codex never ran the hooks
])
def test_codex_setup_names_the_hook_flag_to_set(tmp_path: Path, features: str, said: str) -> None:
    home = tmp_path / "user"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(features)
    done = palimpsest(home, "setup", "codex")
    assert done.returncode == 0 and said in done.stdout + done.stderr, done.stdout + done.stderr


def test_an_exported_home_and_url_are_written_into_the_hooks(tmp_path: Path) -> None:
    """Found by a Claude Code user: with PALIMPSEST_HOME and PALIMPSEST_URL exported, setup wrote neither; the MCP process
    then served ~/.palimpsest, an empty memory."""
    home = tmp_path / "user"
    env = {**env_for(home), "PALIMPSEST_HOME": str(tmp_path / "mem"), "PALIMPSEST_URL": "http://127.0.0.1:18110"}
    done = subprocess.run([str(EXE), "setup", "claude-code"], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    hooks = hook_commands(home / ".claude" / "settings.json")
    assert all("--url http://127.0.0.1:18110" in c and str(tmp_path / "mem") in c for c in hooks.values())
    (tmp_path / "repo").mkdir()
    done = subprocess.run([str(EXE), "setup", "claude-code", "--home", "./rel"], capture_output=True, text=True, env=env_for(home),
                          cwd=tmp_path / "repo", timeout=120, check=False)
    assert done.returncode == 0, done.stderr  # a relative home is written absolute (hooks run in every repository's folder)
    assert all(f"--home {tmp_path / 'repo' / 'rel'}" in c for c in hook_commands(home / ".claude" / "settings.json").values())


def test_the_backup_of_a_private_file_stays_private_and_the_home_is_made_0700(tmp_path: Path) -> None:
    """Found by a Claude Code user: `~/.claude.json` (its MCP servers' tokens) was 0600, its backup 0644; and setup made
    `~/.palimpsest` 0755 (every other command makes it 0700)."""
    home = tmp_path / "user"
    (home / ".claude").mkdir(parents=True)
    for private in (home / ".claude.json", home / ".claude" / "settings.json"):
        private.write_bytes(b'{"mcpServers": {"other": {"env": {"TOKEN": "s3cret"}}}}' if private.name == ".claude.json" else CLAUDE_SETTINGS)
        private.chmod(0o600)
    assert palimpsest(home, "setup", "claude-code").returncode == 0
    for private in (home / ".claude.json", home / ".claude" / "settings.json"):
        backup = private.with_name(private.name + ".before-palimpsest")
        assert backup.exists() and (private.stat().st_mode & 0o777, backup.stat().st_mode & 0o777) == (0o600, 0o600)
    assert (home / ".palimpsest").stat().st_mode & 0o777 == 0o700


def test_memory_files_put_outside_the_home_are_private(tmp_path: Path) -> None:
    """Found by a security review: an index at `--store sqlite:///…`, an embedding cache at PALIMPSEST_EMBED_CACHE and a
    `facts snapshot --path` outside the home were 0644 (the home's 0700 had kept them private); exports are 0600."""
    import stat

    shared = tmp_path / "shared"
    shared.mkdir()
    old = os.umask(0o022)
    try:
        settings = Settings.load(env={}, embedder="hash", embed_cache=str(shared / "cache.sqlite"))
        with Memory(tmp_path / "home", f"sqlite:///{shared / 'pal.db'}", settings=settings) as memory:
            memory.append("s1", "user", "the db password is hunter2")
            memory.worker().drain()
            memory.facts.write("The db password rotates weekly.")
            memory.facts.snapshot(shared / "facts.jsonl")
        made = sorted(p.name for p in shared.iterdir() if not p.name.endswith(".lock"))
        assert "pal.db" in made and "facts.jsonl" in made
        assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in shared.iterdir() if not p.name.endswith(".lock")} == \
            {name: oct(0o600) for name in made}
    finally:
        os.umask(old)


@pytest.mark.parametrize("harness", ["claude-code", "codex", "qwen-code", "opencode"])
def test_the_recall_hooks_own_bound_is_just_under_what_the_harness_allows(tmp_path: Path, harness: str) -> None:
    """Found by an SRE using Codex: `setup codex` wrote `"timeout": 10` but the hook gave up at its default 2 s, and it
    returned nothing on 2 of 5 turns while the server embedded an import's backlog, though Codex would have waited."""
    import re as regex

    from palimpsest.capture import setup as setup_module

    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config")}
    changes = setup_module.plan(harness, setup_module.Command("/bin/palimpsest", url="http://127.0.0.1:1"), env).changes
    text = changes[0].after.decode()
    if harness == "opencode":
        bound = json.loads(regex.search(r"const RECALL = (.*)", text).group(1))
        allowed = int(regex.search(r"const RECALL_WAIT_MS = (\d+)", text).group(1)) / 1000
    else:
        (entry,) = json.loads(text)["hooks"]["UserPromptSubmit"][0]["hooks"]
        bound, allowed = shlex.split(entry["command"]), entry["timeout"] / (1000 if harness == "qwen-code" else 1)
    hook_timeout = float(bound[bound.index("--timeout") + 1])
    assert 0 < allowed - hook_timeout <= 1, (hook_timeout, allowed)
