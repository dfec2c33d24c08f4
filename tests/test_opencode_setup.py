"""`palimpsest setup opencode` (issue 19) end to end: setup into a temporary HOME, then the
plugin file it wrote loaded in node and its hooks called with inputs shaped as
`@opencode-ai/plugin` 1.18 declares them, against a real server — `session.idle` captures
the turn from OpenCode's database, the next `chat.message` + `experimental.chat.system.transform`
put a recall block holding it into the system prompt; with the server stopped the prompt
is left as it was, in time, and capture spools; `--undo` restores `opencode.json` byte for
byte and removes the plugin; `doctor` checks the plugin."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.server.run import ServerThread
from test_capture import free_port
from test_opencode import SESSION, make_db, message, part
from test_setup import EXE, env_for, palimpsest

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None or EXE is None, reason="needs node and the palimpsest console script")
CONFIG = b'{\n  "$schema": "https://opencode.ai/config.json",\n  "model": "anthropic/claude-sonnet-4",\n  "mcp": {"fs": {"type": "local", "command": ["mcp-fs"]}}\n}\n'

# Loads the plugin as OpenCode does (an ES module, every export a plugin function) and calls
# one hook; prints what the hook left in its output. Node keeps running until the plugin's
# children (capture) exit.
DRIVER = r"""
const [file, step, session, prompt] = process.argv.slice(-4)
const mod = await import(file)
const plugins = Object.values(mod)
if (plugins.length !== 1 || typeof plugins[0] !== "function") throw new Error("expected one plugin function")
const hooks = await plugins[0]({ directory: "/src/app", worktree: "/src/app", project: { id: "p1" }, client: {}, $: undefined })
if (step === "idle") {
  await hooks.event({ event: { type: "session.idle", properties: { sessionID: session } } })
  console.log(JSON.stringify({ ok: true }))
} else {
  const parts = [{ id: "prt_9", sessionID: session, messageID: "msg_9", type: "text", text: prompt }]
  await hooks["chat.message"]({ sessionID: session, agent: "build", model: { providerID: "x", modelID: "y" }, messageID: "msg_9" },
                              { message: { id: "msg_9", sessionID: session, role: "user" }, parts })
  const output = { system: ["You are OpenCode."] }
  await hooks["experimental.chat.system.transform"]({ sessionID: session, model: { id: "y", providerID: "x" } }, output)
  console.log(JSON.stringify(output))
}
"""


def env(home: Path) -> dict[str, str]:
    return {**env_for(home), "PALIMPSEST_HOME": str(home / ".palimpsest")}


def drive(home: Path, plugin: Path, step: str, session: str, prompt: str = "") -> tuple[dict[str, object], float]:
    started = time.monotonic()
    done = subprocess.run([str(NODE), "--experimental-detect-module", "--input-type=module", "-e", DRIVER, "--",
                           plugin.as_uri(), step, session, prompt], capture_output=True, text=True, env=env(home),
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), time.monotonic() - started


def test_opencode_setup_plugin_captures_recalls_and_undoes(tmp_path: Path) -> None:
    home, port = tmp_path / "user", free_port()
    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    config.write_bytes(CONFIG)
    url = f"http://127.0.0.1:{port}"
    done = palimpsest(home, "setup", "opencode", "--url", url)
    assert done.returncode == 0, done.stderr
    assert "memory_recall" in done.stdout  # the fallback where the system-prompt hook is missing
    plugin = config.parent / "plugin" / "palimpsest.js"
    doc = json.loads(config.read_bytes())
    assert doc["model"] == "anthropic/claude-sonnet-4" and doc["mcp"]["fs"] == {"type": "local", "command": ["mcp-fs"]}
    assert doc["mcp"]["palimpsest"] == {"type": "local", "command": [str(Path(EXE).absolute()), "mcp"],
                                        "environment": {"PALIMPSEST_AGENT": "opencode", "PALIMPSEST_URL": url}, "enabled": True}
    assert f'"{Path(EXE).absolute()}", "recall", "--hook", "--timeout", "9", "--format", "text", "--url", "{url}"' in plugin.read_text()
    written = (plugin.read_bytes(), config.read_bytes())
    assert palimpsest(home, "setup", "opencode", "--url", url).returncode == 0
    assert (plugin.read_bytes(), config.read_bytes()) == written  # idempotent
    db = home / ".local" / "share" / "opencode" / "opencode.db"  # where OpenCode keeps it by default
    db.parent.mkdir(parents=True)
    make_db(db).close()

    server = Settings.load(env={}, embedder="none", enable_write=True)
    with Memory(tmp_path / "server", settings=server) as memory, ServerThread(memory, port=port):
        drive(home, plugin, "idle", SESSION)
        rows = memory.browse(limit=50)
        assert memory.sessions()[0].agent == "opencode" and any("retry cap" in (r.tool_result or r.content or "") for r in rows)
        out, _ = drive(home, plugin, "prompt", "ses_next", "what was the retry cap problem?")
        system = out["system"]
        assert isinstance(system, list) and system[0] == "You are OpenCode." and len(system) == 2
        assert system[1].startswith("<system-reminder>") and "retry cap" in system[1]
        checks = {c["name"]: c for c in json.loads(palimpsest(home, "doctor", "--json", "--url", url).stdout)["checks"]}
        assert checks["hooks opencode"]["state"] == "ok", checks["hooks opencode"]

    out, took = drive(home, plugin, "prompt", "ses_next", "what was the retry cap problem?")  # the server is down
    assert out["system"] == ["You are OpenCode."] and took < 10
    conn = sqlite3.connect(db)  # the next turn, captured while the server is down: spooled for later
    message(conn, "msg_3", {"role": "user"}, 6)
    part(conn, "prt_6", "msg_3", {"type": "text", "text": "and the backoff?"}, 6)
    conn.commit()
    conn.close()
    drive(home, plugin, "idle", SESSION)
    assert list((home / ".palimpsest" / "capture-spool").glob("*.json"))
    done = palimpsest(home, "setup", "opencode", "--undo")
    assert done.returncode == 0, done.stderr
    assert config.read_bytes() == CONFIG and not plugin.exists() and not (config.parent / "opencode.json.before-palimpsest").exists()
    assert not plugin.parent.exists() and config.parent.is_dir()  # the plugin folder setup made is gone, the user's stays


def test_doctor_names_a_missing_plugin_and_a_moved_binary(tmp_path: Path) -> None:
    home = tmp_path / "user"
    (home / ".config" / "opencode").mkdir(parents=True)
    def hooks_check() -> dict[str, str]:
        report = json.loads(palimpsest(home, "doctor", "--json", "--url", f"http://127.0.0.1:{free_port()}").stdout)
        return next(c for c in report["checks"] if c["name"] == "hooks opencode")
    missing = hooks_check()
    assert missing["state"] == "problem" and missing["fix"] == "palimpsest setup opencode"
    assert palimpsest(home, "setup", "opencode", "--binary", str(tmp_path / "gone" / "palimpsest")).returncode == 0
    moved = hooks_check()
    assert moved["state"] == "problem" and "binary is missing" in moved["detail"]
