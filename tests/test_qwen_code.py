"""qwen-code (issue 19): its chat records read by the harness reader the importer and capture
share, and `palimpsest setup qwen-code` end to end — setup into a temporary HOME, the
configured hook command lines run as qwen-code runs them against a real server (the turn
captured under agent qwen-code, the next prompt's recall holding it), `--undo` restoring
the original file byte for byte."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from palimpsest import Memory, Settings
from palimpsest.harness import Context, Reader, detect, qwen_code
from palimpsest.server.run import ServerThread
from test_capture import free_port, write_lines
from test_setup import EXE, palimpsest, run_hook

SESSION = "7f1c2a9e-5b1d-4c3e-9a77-0d2f7e3b1c44"
QWEN_SETTINGS = b'{\n  "model": {"name": "qwen3-coder-plus"},\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}\n}\n'


def record(n: int, rtype: str, role: str | None, parts: list[dict[str, Any]] | None, **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {"uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n > 1 else None, "sessionId": SESSION,
                           "timestamp": f"2026-03-04T10:00:{n:02d}.000Z", "type": rtype, "cwd": "/src/app",
                           "version": "0.9.1", "gitBranch": "main", **extra}
    if parts is not None:
        rec["message"] = {"role": role, "parts": parts}
    return rec


def qwen_lines() -> list[dict[str, Any]]:
    return [
        record(1, "system", None, None, subtype="session_model", systemPayload={"model": "qwen3-coder-plus"}),
        record(2, "user", "user", [{"text": "why does the retry loop give up so early?"}]),
        record(3, "assistant", "model", [{"text": "Checking the limits first.", "thought": True},
                                         {"text": "Let me read the config."},
                                         {"functionCall": {"id": "call-1", "name": "read_file", "args": {"path": "retry.toml"}}}],
               model="qwen3-coder-plus"),
        record(4, "tool_result", "user", [{"functionResponse": {"id": "call-1", "name": "read_file",
                                                                "response": {"output": "max_retries = 3  # the retry cap is below the upstream timeout"}}}]),
        record(5, "assistant", "model", [{"text": "The retry cap (3) is below the upstream timeout; raise it."}]),
    ]


def test_records_become_messages_tool_calls_results_and_kept_records() -> None:
    lines = qwen_lines()
    assert [detect(r) for r in lines] == ["qwen-code"] * 5
    from test_capture import claude_lines

    assert "qwen-code" not in {detect(r) for r in claude_lines("s")}  # Claude Code's records are not taken for qwen-code's
    reader = Reader(Context("/x/chats/s.jsonl"))
    events = [e for n, r in enumerate(lines, 1) for e in reader.read(r, n, b"")]
    shown = [(e["type"], e["role"], e.get("tool_name"), e["event_key"]) for e in events]
    assert shown == [("source_record", "source", None, "qw:u1"), ("message", "user", None, "qw:u2"),
                     ("message", "assistant", None, "qw:u3"), ("message", "assistant", None, "qw:u3:0"),
                     ("message", "assistant", "read_file", "qw:u3:2"), ("message", "tool", "read_file", "qw:u4:0"),
                     ("message", "assistant", None, "qw:u5")]
    assert events[3]["metadata"]["thinking"] is True and events[2]["content"] == "Let me read the config."
    assert events[4]["tool_args"] == {"path": "retry.toml"} and "retry cap" in events[5]["tool_result"]
    assert reader.context.session_id == SESSION and reader.context.settings["git_branch"] == "main"
    assert qwen_code.looks_like(lines[0]) and not qwen_code.looks_like({"type": "system", "subtype": "x", "userType": "external",
                                                                         "sessionId": "s", "uuid": "u"})


def test_the_context_a_prompt_hook_added_is_kept_but_not_indexed() -> None:
    """qwen-code (0.24) appends a UserPromptSubmit hook's additionalContext to the user's
    record as a wrapped text part with `<` and `>` escaped, so our own recall block would
    come back unrecognised by the echo filter: it is journaled apart, not read as the user's words."""
    block = "&lt;system-reminder&gt;\n## Recalled memory (auto, system-owned)\n- [evt_000001 · 2026-03-01] user: the retry cap is 3\n&lt;/system-reminder&gt;"
    wrapped = f"{qwen_code.HOOK_CONTEXT_OPEN}\n{block}\n{qwen_code.HOOK_CONTEXT_CLOSE}"
    rec = record(2, "user", "user", [{"text": "what was the retry cap?"}, {"text": wrapped}], provenance="real_user",
                 systemPayload={"displayText": "what was the retry cap?", "hookContext": block})
    events = Reader(Context("/x/chats/s.jsonl")).read(rec, 2, b"")
    assert [(e["type"], e["event_key"]) for e in events] == [("message", "qw:u2"), ("source_record", "qw:u2:1")]
    assert events[0]["content"] == "what was the retry cap?"
    assert events[1]["metadata"]["record_type"] == "hook_context" and "retry cap is 3" in events[1]["content"]


def test_a_qwen_code_file_is_imported_as_its_session(tmp_path: Path) -> None:
    path = tmp_path / f"{SESSION}.jsonl"
    write_lines(path, qwen_lines())
    with Memory(tmp_path / "h", settings=Settings.load(env={}, embedder="none")) as m:
        from palimpsest.importers import import_file

        report = import_file(m, str(path)).to_dict()
        assert report["format"] == "qwen-code" and report["stored"] == 7, report  # (the system record kept, not indexed)
        rows = m.browse(session=SESSION)
        assert m.sessions()[0].agent == "qwen-code" and any("retry cap" in (r.tool_result or "") for r in rows)
        assert import_file(m, str(path)).to_dict()["stored"] == 0  # again: nothing new


def test_qwen_code_setup_capture_recall_and_undo(tmp_path: Path) -> None:
    home, port = tmp_path / "user", free_port()
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_bytes(QWEN_SETTINGS)
    url = f"http://127.0.0.1:{port}"
    done = palimpsest(home, "setup", "qwen-code", "--url", url)
    assert done.returncode == 0, done.stderr
    doc = json.loads(settings.read_bytes())
    assert doc["model"] == {"name": "qwen3-coder-plus"} and doc["hooks"]["Stop"][0]["hooks"][0]["command"] == "say done"
    ours = {e: g[-1]["hooks"][0] for e, g in doc["hooks"].items()}
    assert ours["UserPromptSubmit"]["timeout"] == 10_000 and ours["Stop"]["timeout"] == 60_000  # milliseconds
    assert "--agent qwen-code" in ours["Stop"]["command"] and shlex.split(ours["Stop"]["command"])[0] == str(Path(EXE).absolute())
    assert doc["mcpServers"]["palimpsest"] == {"command": str(Path(EXE).absolute()), "args": ["mcp"],
                                               "env": {"PALIMPSEST_AGENT": "qwen-code", "PALIMPSEST_URL": url}}
    written = settings.read_bytes()
    assert palimpsest(home, "setup", "qwen-code", "--url", url).returncode == 0 and settings.read_bytes() == written
    transcript = home / ".qwen" / "projects" / "-src-app" / "chats" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    write_lines(transcript, qwen_lines())
    server = Settings.load(env={}, embedder="none", enable_write=True)
    with Memory(tmp_path / "server", settings=server) as memory, ServerThread(memory, port=port):
        done, _ = run_hook(home, ours["Stop"]["command"], {"session_id": SESSION, "transcript_path": str(transcript),
                                                           "cwd": "/src/app", "hook_event_name": "Stop"})
        assert done.returncode == 0, done.stderr
        assert memory.sessions()[0].agent == "qwen-code"
        done, _ = run_hook(home, ours["UserPromptSubmit"]["command"],
                           {"session_id": "next", "prompt": "what was the retry cap problem?", "hook_event_name": "UserPromptSubmit"})
        block = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "retry cap" in block and "<system-reminder>" in block
    done = palimpsest(home, "setup", "qwen-code", "--undo")
    assert done.returncode == 0, done.stderr
    assert settings.read_bytes() == QWEN_SETTINGS and not (settings.parent / "settings.json.before-palimpsest").exists()
