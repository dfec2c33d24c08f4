"""A transcript captured live and the same transcript imported later give identical events.

Capture reads a transcript a few lines per hook call, through a real server; the
importer reads the whole file at once. Both go through the one harness reader, so the
journal and the index of the two homes hold the same events: same keys with the same
meaning (thinking, tool results named after calls made in an earlier capture,
boilerplate, kept records).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory, Settings
from palimpsest.capture import CaptureClient, Transcript, capture_hook
from palimpsest.importers import import_file
from palimpsest.server.run import ServerThread

FIXTURES = Path(__file__).parent / "fixtures"
CC_SESSION = "7f3c2a10-1b2c-4d5e-8f90-123456789abc"
CODEX_SESSION = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
FIELDS = ("type", "role", "content", "tool_name", "tool_args", "tool_result", "event_key", "created_at", "metadata")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(tmp_path / "server", settings=Settings.load(env={}, embedder="none", enable_write=True))
    yield m
    m.close()


@pytest.fixture
def imported(tmp_path: Path) -> Iterator[Memory]:
    m = Memory(tmp_path / "imported", settings=Settings.load(env={}, embedder="none"))
    yield m
    m.close()


def grow(source: Path, target: Path, cuts: list[int]) -> Iterator[None]:
    """Write `source` into `target` in steps: up to line `cut` for each cut, then the rest."""
    lines = source.read_bytes().split(b"\n")
    for cut in [*cuts, len(lines)]:
        target.write_bytes(b"\n".join(lines[:cut]) + (b"\n" if cut < len(lines) else b""))
        yield


def journal(memory: Memory, session: str) -> list[dict[str, Any]]:
    events = [e for e in memory.journal.read(session) if e.type in ("message", "source_record")]
    return [{k: getattr(e, k) for k in FIELDS} for e in events]


def indexed(memory: Memory, session: str) -> list[dict[str, Any]]:
    return [{k: getattr(m, k) for k in (*FIELDS, "importance")} for m in memory.browse(session=session, limit=1000)]


def test_claude_code_captured_live_then_imported_gives_the_same_events(served: Memory, imported: Memory, tmp_path: Path) -> None:
    transcript = tmp_path / "projects" / f"{CC_SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    hook = {"session_id": CC_SESSION, "transcript_path": str(transcript), "hook_event_name": "Stop"}
    with ServerThread(served) as url:
        client = CaptureClient(url, tmp_path / "client")
        # line 6 calls Read and line 8 Bash; their results (7, 9) come in the next capture
        for _ in grow(FIXTURES / "claude_code.jsonl", transcript, [2, 6, 8, 12]):
            report = capture_hook(hook, client, tmp_path / "client")
            assert report.dead == report.spooled == 0, report
        client.close()
    import_file(imported, transcript)
    live, later = journal(served, CC_SESSION), journal(imported, CC_SESSION)
    # the two records before the first timestamp: the importer dates them by the file's
    # time, capture by its arrival; nothing in the transcript says when they were written
    untimed = [e for e in later if e["metadata"]["source_line"] < 3]
    assert [e["type"] for e in untimed] == ["source_record", "source_record"]
    for e in live + later:
        if e["metadata"]["source_line"] < 3:
            e["created_at"] = None
    assert live == later and len(live) == 18
    assert indexed(served, CC_SESSION) == indexed(imported, CC_SESSION)
    rows = served.browse(session=CC_SESSION, limit=1000)
    assert [m.tool_name for m in rows if m.role == "tool"] == ["Read", "Bash"]
    assert any(m.metadata.get("thinking") and m.importance == 0.3 for m in rows)


def test_codex_captured_live_then_imported_gives_the_same_events(served: Memory, imported: Memory, tmp_path: Path) -> None:
    codex_home = tmp_path / "codex"
    rollout = codex_home / "sessions" / "2026" / "01" / "20" / f"rollout-2026-01-20T14-00-00-{CODEX_SESSION}.jsonl"
    rollout.parent.mkdir(parents=True)
    notify = {"type": "agent-turn-complete", "thread-id": CODEX_SESSION, "turn-id": "t1", "input-messages": ["x"]}
    with ServerThread(served) as url:
        client = CaptureClient(url, tmp_path / "client")
        # line 8 calls shell, line 11 apply_patch; their outputs (9, 12) come in the next capture
        for _ in grow(FIXTURES / "codex.jsonl", rollout, [3, 8, 11]):
            report = capture_hook(notify, client, tmp_path / "client", codex_home=codex_home)
            assert report.dead == report.spooled == 0, report
        client.close()
    import_file(imported, rollout)
    live, later = journal(served, CODEX_SESSION), journal(imported, CODEX_SESSION)
    assert live == later and len(live) == 16
    assert indexed(served, CODEX_SESSION) == indexed(imported, CODEX_SESSION)
    rows = served.browse(session=CODEX_SESSION, limit=1000)
    assert [m.tool_name for m in rows if m.role == "tool"] == ["shell", "apply_patch"]
    assert sum(1 for m in rows if m.metadata.get("boilerplate")) == 2


def test_a_cursor_saved_without_the_reader_context_has_it_rebuilt(tmp_path: Path) -> None:
    """A result whose call came before the cursor is still named after it when the saved
    state holds only the cursor (as an older version wrote it)."""
    lines = (FIXTURES / "claude_code.jsonl").read_bytes().split(b"\n")
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(lines[:6]) + b"\n")  # up to the Read call
    with Transcript(path, tmp_path / "client") as t:
        t.events()
        t.commit()
    state = next((tmp_path / "client" / "capture-state").glob("*.json"))
    saved = json.loads(state.read_text())
    assert saved["context"]["tools"] == {"toolu_01": "Read"} and saved["format"] == "claude-code"
    state.write_text(json.dumps({k: saved[k] for k in ("path", "offset", "line")}))
    shutil.copyfile(FIXTURES / "claude_code.jsonl", path)
    with Transcript(path, tmp_path / "client") as t:
        events, _ = t.events()
    assert events[0]["event_key"].startswith("cc:a0000000-0000-4000-8000-000000000004")
    assert [e.get("tool_name") for e in events if e["role"] == "tool"] == ["Read", "Bash"]


def test_a_slash_commands_markup_is_boilerplate_not_speech() -> None:
    """Found by a new user: `/clear`'s echo and its empty stdout were user turns of importance
    0.5, found second and third for "No module named" ahead of what was said."""
    from palimpsest.harness import claude_code
    from palimpsest.harness.common import Context

    def user(content: str, n: int) -> dict:
        return {"type": "user", "uuid": f"u{n}", "sessionId": "s", "timestamp": "2026-03-04T10:00:0{n}Z",
                "message": {"role": "user", "content": content}}

    echo = "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>"
    ctx = Context("t.jsonl")
    (cmd,) = claude_code.convert(user(echo, 1), 1, ctx)
    (out,) = claude_code.convert(user("<local-command-stdout></local-command-stdout>", 2), 2, ctx)
    (said,) = claude_code.convert(user("Why does <command-name> show up in the log?", 3), 3, ctx)
    assert cmd["metadata"]["boilerplate"] and cmd["metadata"]["importance"] == 0.1 and out["metadata"]["importance"] == 0.1
    assert "boilerplate" not in said["metadata"]


def test_a_codex_shell_output_is_its_text_and_its_exit_code() -> None:
    """Found by a new user: Codex wraps a shell call's output as a JSON string; stored as it
    was, "\\n" matched "nsrc" and the exit code was never seen."""
    from palimpsest.harness import codex
    from palimpsest.harness.common import Context

    def output(out: str, n: int) -> dict:
        return {"timestamp": f"2026-03-04T10:00:0{n}Z", "type": "response_item",
                "payload": {"type": "function_call_output", "call_id": f"c{n}", "output": out}}

    ctx = Context("rollout.jsonl")
    wrapped = json.dumps({"output": "src/a.py\nsrc/b.py\n", "metadata": {"exit_code": 0, "duration_seconds": 0.1}})
    failed = json.dumps({"output": "FAILED tests/test_refund.py::test_round - AssertionError\n", "metadata": {"exit_code": 1}})
    (ok,) = codex.convert(output(wrapped, 1), 1, ctx)
    (bad,) = codex.convert(output(failed, 2), 2, ctx)
    (plain,) = codex.convert(output('{"not": "a wrapper"}', 3), 3, ctx)
    assert ok["tool_result"] == "src/a.py\nsrc/b.py\n" and ok["metadata"]["exit_code"] == 0 and "is_error" not in ok["metadata"]
    assert bad["tool_result"].startswith("FAILED") and bad["metadata"]["is_error"] is True
    assert plain["tool_result"] == '{"not": "a wrapper"}' and "exit_code" not in plain["metadata"]
    said = "Exit code: 2\nWall time: 1.3 seconds\nOutput:\nTraceback …\nRuntimeError: boom\n"  # the text form (exec_command)
    (text,) = codex.convert(output(said, 4), 4, ctx)
    assert text["tool_result"] == "Traceback …\nRuntimeError: boom\n" and text["metadata"]["exit_code"] == 2 and text["metadata"]["is_error"]
    (talk,) = codex.convert(output("Exit code: 2 is what the tool said.", 5), 5, ctx)
    assert talk["tool_result"] == "Exit code: 2 is what the tool said." and "exit_code" not in talk["metadata"]
