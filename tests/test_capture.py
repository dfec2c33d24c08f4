"""Capture from harness hooks: spool when the server is away, replay, dead letters, transcripts."""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from palimpsest import Memory, Settings
from palimpsest.capture import CaptureClient, Spool, capture_hook, project_of, split
from palimpsest.capture import notify as notify_module
from palimpsest.importers import import_file
from palimpsest.server.run import ServerThread


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    m = Memory(home / "server", settings=Settings.load(env={}, embedder="none", enable_write=True))
    yield m
    m.close()


@pytest.fixture
def served(home: Path, store_url: str) -> Iterator[Memory]:
    """The server's memory on each backend (SQLite, PostgreSQL)."""
    m = Memory(home / "server", store_url, settings=Settings.load(env={}, embedder="none", enable_write=True))
    yield m
    m.close()


def batch(session: str, keys: list[str]) -> dict[str, Any]:
    return {"session": session, "events": [{"role": "user", "content": f"text {k}", "event_key": k} for k in keys]}


def keys_in(memory: Memory, session: str) -> list[str]:
    return [e.event_key for e in memory.journal.read(session) if e.type == "message"]


def test_server_down_spools_then_replays_in_order_nothing_lost_nothing_doubled(home: Path, memory: Memory) -> None:
    port = free_port()
    client = CaptureClient(f"http://127.0.0.1:{port}", home / "client", timeout=2)
    first = client.send([batch("s", ["a", "b"]), batch("s", ["c"])])
    assert (first.spooled, first.posted) == (2, 0)
    spooled = client.spool.oldest()
    assert len(spooled) == 2
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in spooled)
    assert stat.S_IMODE(client.spool.root.stat().st_mode) == 0o700
    with ServerThread(memory, port=port):
        second = client.send([batch("s", ["c", "d"])])  # "c" was spooled already: the server drops the copy
    assert (second.replayed, second.posted, second.spooled) == (2, 3, 0)
    assert keys_in(memory, "s") == ["a", "b", "c", "d"]
    assert second.duplicates == 1
    assert client.spool.pending() == 0
    client.close()


def test_replay_takes_at_most_the_50_oldest_before_the_next_write(home: Path, memory: Memory) -> None:
    port = free_port()
    client = CaptureClient(f"http://127.0.0.1:{port}", home / "client", timeout=2)
    client.send([batch("s", [f"k{i}"]) for i in range(60)])
    assert client.spool.pending() == 60
    with ServerThread(memory, port=port):
        report = client.send([batch("s", ["new"])])
        assert (report.replayed, client.spool.pending()) == (50, 10)
        report = client.send([])
        assert (report.replayed, client.spool.pending()) == (10, 0)
    assert keys_in(memory, "s") == [f"k{i}" for i in range(50)] + ["new"] + [f"k{i}" for i in range(50, 60)]
    client.close()


def _fake(status: int, body: dict[str, Any]) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(status, json=body)))


def test_5xx_spools_and_4xx_goes_to_dead_with_the_reason(home: Path) -> None:
    down = CaptureClient("http://palimpsest.invalid", home, http=_fake(503, {"ok": False, "error": {"code": "store_unavailable", "message": "x"}}))
    assert down.send([batch("s", ["a"])]).spooled == 1
    refusing = CaptureClient("http://palimpsest.invalid", home, http=_fake(400, {"ok": False, "error": {"code": "invalid_input", "message": "role"}}))
    report = refusing.send([batch("s", ["b"])])
    assert (report.dead, report.spooled, report.replayed) == (2, 0, 0)  # the spooled one was replayed into a 400 too
    dead = sorted(refusing.spool.dead.glob("*.json"))
    assert len(dead) == 2 and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in dead)
    assert "400" in dead[0].with_name(dead[0].name + ".reason").read_text()
    assert refusing.spool.pending() == 0
    assert Spool(home).requeue_dead() == 2 and refusing.spool.pending() == 2


def test_too_many_requests_spools_rather_than_goes_to_dead(home: Path) -> None:
    """Found by a team's ops engineer: a batch answered 429 (the server's wrong-token limit, which
    says to retry later) went to dead/ and waited for `--requeue-dead`."""
    busy = CaptureClient("http://palimpsest.invalid", home, http=_fake(429, {"ok": False, "error": {"code": "rate_limited", "message": "x"}}))
    report = busy.send([batch("s", ["a"])])
    assert (report.spooled, report.dead) == (1, 0) and busy.spool.pending() == 1


class _Waf:
    """A web application firewall on loopback in front of the real server: a batch holding `objects_to` is answered 403
    with its own HTML page, any other is passed on as it came."""

    def __init__(self, upstream: str, objects_to: bytes) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if objects_to in body:
                    self._answer(403, "text/html", b"<html><body><h1>403 Forbidden</h1>Request blocked by rule 942100</body></html>")
                    return
                r = httpx.post(upstream + self.path, content=body, headers={"Content-Type": self.headers["Content-Type"]})
                self._answer(r.status_code, r.headers["content-type"], r.content)

            def _answer(self, status: int, kind: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_403_from_something_in_front_of_the_server_sets_that_batch_aside_and_the_rest_replay(home: Path, memory: Memory) -> None:
    """Found in review: every 403 was read as the server refusing this client (spooled, counted refused), and the replay
    stops at a refused batch: one transcript a WAF objects to (`DROP TABLE` in a tool output) held every later batch in
    the spool for good. Only our server's own refusals of the client (401, 403 `write_disabled`) are the client's
    settings; another 403 is about that batch: it goes to dead/ with the answer, and the rest are stored."""
    port = free_port()
    client = CaptureClient(f"http://127.0.0.1:{port}", home / "client", timeout=2)
    client.send([batch("s", ["a"]), {"session": "s", "events": [{"role": "tool", "content": "DROP TABLE users;", "event_key": "waf"}]},
                 batch("s", ["b"])])  # the server down: all three spooled
    assert client.spool.pending() == 3
    client.close()
    with ServerThread(memory) as upstream, _Waf(upstream, b"DROP TABLE") as url:
        client = CaptureClient(url, home / "client", timeout=5)
        report = client.send([batch("s", ["c"])])
        client.close()
    assert (report.replayed, report.dead, report.refused, report.spooled) == (2, 1, 0, 0), report.errors
    assert keys_in(memory, "s") == ["a", "b", "c"]
    dead = list(client.spool.dead.glob("*.json"))
    assert len(dead) == 1 and "Request blocked" in dead[0].with_name(dead[0].name + ".reason").read_text()
    assert client.spool.pending() == 0 and client.spool.refusal() is None


def test_a_corrupt_spool_file_is_reported_and_set_aside(home: Path, memory: Memory) -> None:
    spool = Spool(home / "client")
    spool.put(batch("s", ["good"]))
    spool.root.joinpath("00000000000000000001-dead.json").write_bytes(b"{not json")
    spool.root.joinpath("00000000000000000002-odd.json").write_text('{"session": 3}')
    with ServerThread(memory) as url:
        client = CaptureClient(url, home / "client")
        report = client.send([])
    assert sorted(report.corrupt) == ["00000000000000000001-dead.json", "00000000000000000002-odd.json"]
    assert report.replayed == 1 and keys_in(memory, "s") == ["good"]
    assert sorted(p.name for p in spool.corrupt.glob("*.json")) == sorted(report.corrupt)
    client.close()


def test_split_bounds_batches() -> None:
    big = batch("s", [str(i) for i in range(1200)])
    parts = split(big, max_events=500)
    assert [len(p["events"]) for p in parts] == [500, 500, 200]
    assert split(batch("s", [])) == []


# -- hooks and transcripts ---------------------------------------------------------
def claude_lines(session: str) -> list[dict[str, Any]]:
    return [
        {"type": "user", "uuid": "u1", "sessionId": session, "timestamp": "2026-03-04T10:00:00Z",
         "message": {"role": "user", "content": "why does the deploy fail?"}},
        {"type": "assistant", "uuid": "a1", "timestamp": "2026-03-04T10:00:05Z", "message": {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "look at the logs"},
            {"type": "text", "text": "Let me read the log."},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "deploy.log"}}]}},
        {"type": "user", "uuid": "u2", "timestamp": "2026-03-04T10:00:06Z", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ERROR: the retry cap is below the upstream timeout"}]}},
        {"type": "file-history-snapshot", "messageId": "x"},
    ]


def _captured(memory: Memory, home: Path, hook: dict[str, Any]) -> Any:
    """One Stop hook's capture of `hook` into `memory`, through a server on loopback: its report."""
    with ServerThread(memory) as url:
        client = CaptureClient(url, home / "client")
        report = capture_hook(hook, client, home / "client")
        client.close()
    return report


def write_lines(path: Path, records: list[dict[str, Any]], mode: str = "w") -> None:
    with open(path, mode, encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)


def test_claude_code_hook_sends_new_transcript_lines_once(home: Path, memory: Memory, tmp_path: Path) -> None:
    transcript = tmp_path / "abc.jsonl"
    write_lines(transcript, claude_lines("abc-123"))
    hook = {"session_id": "abc-123", "transcript_path": str(transcript), "cwd": str(tmp_path), "hook_event_name": "Stop"}
    with ServerThread(memory) as url:
        client = CaptureClient(url, home / "client")
        report = capture_hook(hook, client, home / "client")
        assert report.stored == 6 and report.posted == 1  # text, thinking, text, tool call, tool result, snapshot
        hits = memory.search("retry cap").hits
        assert hits and hits[0].message.role == "tool" and hits[0].message.session == "abc-123"
        session = memory.store.get_session("abc-123")
        assert session is not None and session.agent == "claude-code"
        assert session.settings["tags"] == [f"project:{tmp_path.resolve()}"]  # (a folder outside git: its path)
        assert capture_hook(hook, client, home / "client").posted == 0  # nothing new
        with open(transcript, "a", encoding="utf-8") as f:
            f.write(json.dumps({"type": "user", "uuid": "u3", "message": {"role": "user", "content": "thanks"}}) + "\n")
            f.write('{"type": "assistant", "uuid": "a3", "mess')  # still being written: not sent yet
        assert capture_hook(hook, client, home / "client").stored == 1
        for state in (home / "client" / "capture-state").glob("*.json"):
            state.unlink()  # a lost cursor resends everything; the server drops the copies
        again = capture_hook(hook, client, home / "client")
        assert (again.stored, again.duplicates) == (0, 7)
        client.close()
        sub = transcript.with_suffix("") / "subagents" / "agent-x1.jsonl"
        sub.parent.mkdir(parents=True)
        write_lines(sub, [{"type": "assistant", "uuid": "s1", "isSidechain": True,
                           "message": {"role": "assistant", "content": "the sub-agent found the flaky test"}}])
        assert capture_hook(hook, CaptureClient(url, home / "client"), home / "client").stored == 1
        assert memory.search("flaky").hits[0].message.metadata["subagent_file"] == "agent-x1.jsonl"
    tools = [m for m in memory.browse(session="abc-123") if m.tool_name]
    # the result is named after its call, as the importer names it
    assert [(m.role, m.tool_name, m.tool_args) for m in tools] == [("assistant", "Read", {"path": "deploy.log"}), ("tool", "Read", None)]


def test_a_character_cut_in_half_is_kept_as_a_replacement_not_a_crash(home: Path, memory: Memory, tmp_path: Path) -> None:
    """A JavaScript harness cuts a long output inside an emoji: an escaped lone surrogate,
    valid JSON that no UTF-8 request can carry. The capture crashed on it, at every later
    hook of the session; now the character is U+FFFD and the rest is stored."""
    transcript = tmp_path / "cut.jsonl"
    lines = claude_lines("cut-1")
    lines[2]["message"]["content"][0]["content"] = "ERROR: the retry cap is below the upstream timeout, truncated here: \ud83d"
    write_lines(transcript, lines)
    assert "\\ud83d" in transcript.read_text()
    hook = {"session_id": "cut-1", "transcript_path": str(transcript), "cwd": str(tmp_path), "hook_event_name": "Stop"}
    report = _captured(memory, home, hook)
    assert (report.stored, report.dead) == (6, 0)
    assert any("lone surrogates" in e for e in report.errors)
    result = [m for m in memory.browse(session="cut-1") if m.role == "tool"][0]
    assert result.tool_result == "ERROR: the retry cap is below the upstream timeout, truncated here: \ufffd"


def test_a_byte_not_utf8_costs_itself_not_its_line(home: Path, memory: Memory, tmp_path: Path) -> None:
    """Found by a Claude Code user: one raw byte 0xE9 in a turn (a Windows tool's output pasted) dropped the whole line
    ("2 unreadable transcript lines skipped", exit 0, the cursor past them: never read again)."""
    transcript = tmp_path / "win.jsonl"
    lines = claude_lines("win-1")
    lines[0]["message"]["content"] = "Pr\u00e9nom field: the WALRUS_ENCODING decision is cp1252 -> utf-8"
    write_lines(transcript, lines)
    transcript.write_bytes(transcript.read_bytes().replace(b"Pr\\u00e9nom", b"Pr\xe9nom"))
    hook = {"session_id": "win-1", "transcript_path": str(transcript), "cwd": str(tmp_path), "hook_event_name": "Stop"}
    report = _captured(memory, home, hook)
    assert (report.stored, report.dead) == (6, 0)
    assert any("1 lines with bytes not UTF-8" in e for e in report.errors)
    assert memory.search("WALRUS_ENCODING").hits[0].message.content == "Pr\ufffdnom field: the WALRUS_ENCODING decision is cp1252 -> utf-8"


def test_a_captured_session_has_the_title_and_details_an_import_gives_it(home: Path, memory: Memory, tmp_path: Path) -> None:
    """Found by a Claude Code user: a session captured by the hooks had no title, branch or version (an import of the
    same file had them all)."""
    transcript = tmp_path / "t.jsonl"
    lines = claude_lines("titled-1")
    lines[0].update(gitBranch="fix/retry-backoff", version="2.0.14", cwd=str(tmp_path))
    write_lines(transcript, [{"type": "summary", "summary": "Webhook retry backoff fix", "leafUuid": "a1"}, *lines])
    hook = {"session_id": "titled-1", "transcript_path": str(transcript), "cwd": str(tmp_path), "hook_event_name": "Stop"}
    with ServerThread(memory) as url:
        client = CaptureClient(url, home / "client")
        capture_hook(hook, client, home / "client")
        client.close()
    session = memory.store.get_session("titled-1")
    assert session is not None and session.title == "Webhook retry backoff fix"
    assert session.settings["git_branch"] == "fix/retry-backoff" and session.settings["cwd"] == str(tmp_path)


def test_import_keeps_a_character_cut_in_half_as_capture_does(memory: Memory, tmp_path: Path) -> None:
    """Found by a new user: capture kept such a message (with U+FFFD), `palimpsest import` of the
    same transcript dropped it and exited 2 — importing a ~/.claude history lost those turns."""
    transcript = tmp_path / "cut.jsonl"
    lines = claude_lines("cut-2")
    lines[2]["message"]["content"][0]["content"] = "ERROR: the retry cap is below the upstream timeout, truncated here: \ud83d"
    write_lines(transcript, lines)
    from palimpsest.importers import import_file

    report = import_file(memory, transcript)
    assert report.ok and report.stored == 6, report
    assert report.skipped["characters cut in half (lone surrogates) kept as U+FFFD"] == 1
    result = next(m for m in memory.browse(session="cut-2") if m.role == "tool")
    assert result.tool_result == "ERROR: the retry cap is below the upstream timeout, truncated here: \ufffd"
    whole = tmp_path / "emoji.jsonl"  # an escaped emoji is a whole pair: no repair said (it was, on 206 of 305 files)
    lines = claude_lines("emoji-1")
    lines[2]["message"]["content"][0]["content"] = "deployed \U0001f680"
    write_lines(whole, lines)
    assert "\\ud83d" in whole.read_text()
    assert not any("cut in half" in k for k in import_file(memory, whole).skipped)


def test_codex_transcript_and_a_hook_without_transcript(home: Path, memory: Memory, tmp_path: Path) -> None:
    thread = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    rollout = tmp_path / "codex" / "sessions" / "2026" / "03" / "04" / f"rollout-2026-03-04T10-00-00-{thread}.jsonl"
    rollout.parent.mkdir(parents=True)
    write_lines(rollout, [
        {"timestamp": "2026-03-04T10:00:00Z", "type": "session_meta", "payload": {"id": "cx-1", "cwd": "/x"}},
        {"timestamp": "2026-03-04T10:00:01Z", "type": "response_item", "payload": {"type": "message", "role": "user",
                                                                                 "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]}},
        {"timestamp": "2026-03-04T10:00:02Z", "type": "response_item", "payload": {"type": "message", "role": "user",
                                                                                 "content": [{"type": "input_text", "text": "rename the flag"}]}},
        {"timestamp": "2026-03-04T10:00:03Z", "type": "response_item", "payload": {"type": "function_call", "name": "shell",
                                                                                 "arguments": '{"cmd": ["rg", "flag"]}', "call_id": "c1"}},
        {"timestamp": "2026-03-04T10:00:04Z", "type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", "output": "src/flag.py"}},
    ])
    with ServerThread(memory) as url:
        client = CaptureClient(url, home / "client")
        notify = {"type": "agent-turn-complete", "thread-id": thread, "turn-id": "t1", "cwd": str(tmp_path),
                  "input-messages": ["rename the flag"], "last-assistant-message": "done"}
        stop = {"session_id": thread, "cwd": str(tmp_path), "hook_event_name": "Stop", "model": "gpt-5-codex"}
        report = capture_hook(stop, client, home / "client", codex_home=tmp_path / "codex")
        assert report.stored == 5 and not report.errors  # a Codex hook naming no transcript: its rollout, by session id
        report = capture_hook(notify, client, home / "client", codex_home=tmp_path / "codex")
        assert report.stored == 0  # the whole rollout, found by thread id (stored already)
        report = capture_hook({"session_id": "no-such-rollout", "hook_event_name": "Stop"}, client, home / "client",
                              codex_home=tmp_path / "codex")
        assert report.stored == 0 and "names no transcript_path" in report.errors[0]  # said, not silent
        report = capture_hook({"session_id": "bare", "hook_event_name": "UserPromptSubmit", "prompt": "remember the blue door"},
                              client, home / "client")
        assert report.stored == 1
        client.close()
    assert memory.store.get_session(thread).agent == "codex"  # type: ignore[union-attr]
    indexed = [m.content or m.tool_name for m in memory.browse(session=thread)]
    # as the importer reads it: the boilerplate indexed but marked, at low importance; the result named after its call
    assert indexed == ["<environment_context>cwd</environment_context>", "rename the flag", "shell", "shell"]
    boiler = memory.browse(session=thread)[0]
    assert boiler.metadata["boilerplate"] and boiler.importance == 0.1
    assert memory.search("blue door").hits[0].message.session == "bare"


def codex_turn(codex_home: Path, thread: str, cwd: Path) -> Path:
    """A Codex rollout of one turn under `codex_home`: the user's "rename the flag" and the reply "Renamed it."."""
    rollout = codex_home / "sessions" / "2026" / "03" / "04" / f"rollout-2026-03-04T10-00-00-{thread}.jsonl"
    rollout.parent.mkdir(parents=True)
    write_lines(rollout, [
        {"timestamp": "2026-03-04T10:00:00Z", "type": "session_meta", "payload": {"id": thread, "cwd": str(cwd)}},
        {"timestamp": "2026-03-04T10:00:02Z", "type": "response_item", "payload": {"type": "message", "role": "user",
                                                                                 "content": [{"type": "input_text", "text": "rename the flag"}]}},
        {"timestamp": "2026-03-04T10:00:09Z", "type": "response_item", "payload": {"type": "message", "role": "assistant",
                                                                                 "content": [{"type": "output_text", "text": "Renamed it."}]}},
    ])
    return rollout


def test_a_codex_session_whose_folder_is_gone_has_the_project_its_rollout_names(home: Path, served: Memory,
                                                                               tmp_path: Path) -> None:
    """Found by a Codex user: with the hook's folder gone, the captured session had no `project:` tag, though its
    rollout's session_meta names `git.repository_url` and importing the same file gave `project:mira-lab/lmtrain`."""
    thread = "0199aaaa-0000-7000-8000-00000000cafe"
    gone = tmp_path / "gone" / "lmtrain"
    rollout = codex_turn(tmp_path / "codex", thread, gone)
    lines = rollout.read_text().splitlines()
    meta = json.loads(lines[0])
    meta["payload"]["git"] = {"repository_url": "git@github.com:mira-lab/lmtrain.git", "branch": "main"}
    rollout.write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n")
    stop = {"session_id": thread, "cwd": str(gone), "hook_event_name": "Stop"}
    with ServerThread(served) as url:
        client = CaptureClient(url, home / "client")
        assert capture_hook(stop, client, home / "client", codex_home=tmp_path / "codex").stored == 3
        client.close()
    captured = served.store.get_session(thread)
    assert captured is not None and captured.settings.get("tags") == ["project:mira-lab/lmtrain"]
    assert captured.settings["project"] == "mira-lab/lmtrain"


def test_a_captured_session_named_by_its_folder_has_the_project_its_folder_has(home: Path, served: Memory,
                                                                             tmp_path: Path) -> None:
    """Found in review: an import of a rollout without Codex's `git` record took the project another session of its
    folder had (`project:mira-lab/lmtrain`), and capture of the same rollout stayed `project:lmtrain` — one repository,
    two tags, by which path the session came in. The server settles it, for capture as for import."""
    gone = tmp_path / "gone" / "lmtrain"
    named = codex_turn(tmp_path / "imported", "0199aaaa-0000-7000-8000-00000000beef", gone)
    lines = named.read_text().splitlines()
    meta = json.loads(lines[0])
    meta["payload"]["git"] = {"repository_url": "git@github.com:mira-lab/lmtrain.git"}
    named.write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n")
    import_file(served, named)
    thread = "0199aaaa-0000-7000-8000-00000000f01d"
    codex_turn(tmp_path / "codex", thread, gone)
    with ServerThread(served) as url:
        client = CaptureClient(url, home / "client")
        capture_hook({"session_id": thread, "cwd": str(gone), "hook_event_name": "Stop"}, client, home / "client",
                     codex_home=tmp_path / "codex")
        client.close()
    captured = served.store.get_session(thread)
    assert captured is not None and captured.settings.get("tags") == ["project:mira-lab/lmtrain"]


def test_a_codex_content_that_is_not_text_is_skipped_and_said_as_an_import_reports_it(home: Path, served: Memory,
                                                                                    tmp_path: Path) -> None:
    """Found by a Codex user: a rollout line `{"type":"message","role":"user","content":42}` was stored as the user's
    '42' (an import refuses it by line). Capture skips the line and says so; the rest of the turn is stored."""
    thread = "0199aaaa-0000-7000-8000-00000000c042"
    rollout = codex_turn(tmp_path / "codex", thread, tmp_path)
    write_lines(rollout, [{"timestamp": "2026-03-04T10:00:10Z", "type": "response_item",
                           "payload": {"type": "message", "role": "user", "content": 42}}], mode="a")
    stop = {"session_id": thread, "transcript_path": str(rollout), "cwd": str(tmp_path), "hook_event_name": "Stop"}
    report = _captured(served, home, stop)
    assert report.stored == 3 and report.errors == [f"{rollout.name}: 1 unreadable transcript lines skipped"]
    assert [m.content for m in served.browse(session=thread)] == ["rename the flag", "Renamed it."]


def said(memory: Memory, session: str) -> list[tuple[str, str]]:
    return [(m.content, m.created_at[:19]) for m in memory.browse(session=session, limit=100)]


def test_a_notify_whose_rollout_is_elsewhere_doubles_nothing_and_loses_nothing(home: Path, memory: Memory, tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a Codex user: with CODEX_HOME naming another home, `notify` found no rollout and posted its
    payload's words, which the Stop hook then stored again from the rollout — every word twice, the notify copy
    with the capture's time, and nothing said. The payload is held: a capture reading the rollout drops it; with
    no such capture (notify alone) it is stored after a while, with the time notify came."""
    thread = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    rollout = codex_turn(tmp_path / "codex", thread, tmp_path)
    notify = {"type": "agent-turn-complete", "thread-id": thread, "turn-id": "t1", "cwd": str(tmp_path),
              "input-messages": ["rename the flag"], "last-assistant-message": "Renamed it."}
    stop = {"session_id": thread, "transcript_path": str(rollout), "cwd": str(tmp_path), "hook_event_name": "Stop"}
    elsewhere = tmp_path / "elsewhere"
    with ServerThread(memory) as url:
        client = CaptureClient(url, home / "client")
        report = capture_hook(notify, client, home / "client", codex_home=elsewhere)
        assert report.stored == 0 and "is not under" in report.errors[0] and "held" in report.errors[0]  # said
        assert capture_hook(stop, client, home / "client", codex_home=elsewhere).stored == 3  # (session_meta kept too)
        assert said(memory, thread) == [("rename the flag", "2026-03-04T10:00:02"), ("Renamed it.", "2026-03-04T10:00:09")]
        assert capture_hook(notify, client, home / "client", codex_home=elsewhere).stored == 0  # the Stop hook came first
        monkeypatch.setattr(notify_module, "HOLD_S", 0)  # (what is held is old enough to store)
        assert capture_hook({"session_id": "other", "prompt": "hi"}, client, home / "client").stored == 1
        assert len(said(memory, thread)) == 2  # nothing doubled

        monkeypatch.setattr(notify_module, "HOLD_S", 120)
        alone = dict(notify, **{"thread-id": "0d2f7e3b-notify-only", "input-messages": ["pin numpy below 2"]})
        report = capture_hook(alone, client, home / "client", codex_home=elsewhere)  # notify alone: no hook reads it
        assert report.stored == 0 and memory.get_session("0d2f7e3b-notify-only") is None
        monkeypatch.setattr(notify_module, "HOLD_S", 0)
        assert capture_hook({"session_id": "other", "prompt": "hello"}, client, home / "client").stored == 3  # lost nothing
        assert [c for c, _ in said(memory, "0d2f7e3b-notify-only")] == ["pin numpy below 2", "Renamed it."]
        client.close()


def test_a_session_notifying_again_and_again_is_stored_once_what_it_held_first_is_old(home: Path, memory: Memory, tmp_path: Path,
                                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Found in review: the held file was aged by its modification time, which each notify of the session renews: a
    session that kept notifying (notify alone) was never stored."""
    notify = {"type": "agent-turn-complete", "thread-id": "0d2f7e3b-notify-only", "turn-id": "t1", "cwd": str(tmp_path),
              "input-messages": ["rename the flag"], "last-assistant-message": "Renamed it."}
    from datetime import timedelta

    now = notify_module.utcnow()
    with ServerThread(memory) as url:
        client = CaptureClient(url, home / "client")
        for i in range(4):  # notified 150, 100, 50 and 0 s ago (each renewing the held file's time)
            monkeypatch.setattr(notify_module, "utcnow", lambda i=i: now - timedelta(seconds=150 - 50 * i))
            monkeypatch.setattr(notify_module.time, "time", lambda i=i: now.timestamp() - (150 - 50 * i))
            turn = dict(notify, **{"turn-id": f"t{i}", "input-messages": [f"turn {i}"], "last-assistant-message": f"done {i}"})
            capture_hook(turn, client, home / "client", codex_home=tmp_path / "elsewhere")
        # the first turn was held 150 s ago: the fourth notify stores all of it
        assert [c for c, _ in said(memory, "0d2f7e3b-notify-only")] == ["turn 0", "done 0", "turn 1", "done 1", "turn 2", "done 2",
                                                                         "turn 3", "done 3"]
        client.close()


def test_an_older_notify_without_a_thread_id_is_read_from_the_rollout_holding_its_turn(home: Path, memory: Memory, tmp_path: Path,
                                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a Codex user: the notify of an older Codex, with no `thread-id` (the README says it is understood),
    was refused: "the hook input has no session_id". Its session is the rollout whose end holds its turn; with
    none, a session of its folder, held as a notify whose rollout is not found."""
    thread = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    codex_turn(tmp_path / "codex", thread, tmp_path)
    other = tmp_path / "codex" / "sessions" / "2026" / "03" / "05" / "rollout-2026-03-05T09-00-00-0d2f7e3b-1111-2222-3333-444455556666.jsonl"
    other.parent.mkdir(parents=True)
    write_lines(other, [{"timestamp": "2026-03-05T09:00:00Z", "type": "session_meta", "payload": {"id": "0d2f7e3b-1111-2222-3333-444455556666"}}])
    older = {"type": "agent-turn-complete", "turn-id": "t1", "input-messages": ["rename the flag"], "last-assistant-message": "Renamed it."}
    with ServerThread(memory) as url:
        client = CaptureClient(url, home / "client")
        report = capture_hook(older, client, home / "client", codex_home=tmp_path / "codex")
        assert report.stored == 3 and not report.errors
        assert said(memory, thread) == [("rename the flag", "2026-03-04T10:00:02"), ("Renamed it.", "2026-03-04T10:00:09")]
        assert memory.get_session(thread).agent == "codex"  # type: ignore[union-attr]
        unknown = dict(older, cwd=str(tmp_path), **{"input-messages": ["pin numpy below 2"], "last-assistant-message": "Pinned."})
        report = capture_hook(unknown, client, home / "client", codex_home=tmp_path / "codex")
        assert report.stored == 0 and "held" in report.errors[0]
        monkeypatch.setattr(notify_module, "HOLD_S", 0)  # (what is held is old enough to store)
        capture_hook({"session_id": "other", "prompt": "hi"}, client, home / "client")
        client.close()
    folder = [s.id for s in memory.store.list_sessions(memory.filters(), 100) if s.id.startswith("codex-")]
    assert len(folder) == 1 and [c for c, _ in said(memory, folder[0])] == ["pin numpy below 2", "Pinned."]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_project_tag_from_remote_root_worktree_or_folder(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    assert project_of(str(plain)) == str(plain.resolve())
    repo = tmp_path / "checkout"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q")
    assert project_of(str(repo / "src")) == str(repo.resolve())
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert project_of(str(tmp_path / "wt")) == str(repo.resolve())  # a worktree resolves to its main repository
    git(repo, "remote", "add", "origin", "git@github.com:acme/palimpsest.git")
    assert project_of(str(repo)) == "acme/palimpsest"
    assert project_of(str(tmp_path / "wt")) == "acme/palimpsest"
    assert project_of(None) is None


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_two_repositories_with_one_folder_name_are_two_projects(tmp_path: Path) -> None:
    """Found by a new user: acme's `api`, jdoe's `api` and a third `api` with no remote were all project `api`,
    and recall in one showed the others' conventions. A project is its remote's owner/name, else its root's path."""
    found = []
    for owner, url in (("acme", "git@github.com:acme/api.git"), ("jdoe", "https://github.com/jdoe/api"), ("mine", None)):
        repo = tmp_path / owner / "api"
        repo.mkdir(parents=True)
        git(repo, "init", "-q")
        if url:
            git(repo, "remote", "add", "origin", url)
        found.append(project_of(str(repo)))
    assert found == ["acme/api", "jdoe/api", str((tmp_path / "mine" / "api").resolve())]


def test_capture_command_reads_the_hook_from_stdin(home: Path, memory: Memory, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    write_lines(transcript, claude_lines("cli-1"))
    hook = json.dumps({"session_id": "cli-1", "transcript_path": str(transcript), "cwd": str(tmp_path), "hook_event_name": "Stop"})
    exe = shutil.which("palimpsest", path=str(Path(sys.executable).parent))
    command = [exe] if exe else [sys.executable, "-m", "palimpsest"]
    env = {**os.environ, "PALIMPSEST_HOME": str(home / "client")}
    with ServerThread(memory) as url:
        done = subprocess.run([*command, "capture", "--url", url, "--json"], input=hook, capture_output=True, text=True,
                              env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stored"] == 6



def test_capture_command_never_fails_its_harness(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from palimpsest.cli import main

    write_lines(tmp_path / "t2.jsonl", claude_lines("cli-2"))
    hook = json.dumps({"session_id": "cli-2", "transcript_path": str(tmp_path / "t2.jsonl"), "cwd": str(tmp_path)})
    client_home = str(home / "client")
    assert main(["--home", client_home, "capture", hook, "--url", f"http://127.0.0.1:{free_port()}", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["spooled"] == 1  # server down: spooled, exit 0
    monkeypatch.setattr("sys.stdin", io.StringIO("not json"))
    assert main(["--home", client_home, "capture"]) == 1  # never 2: Claude Code would block the prompt
    assert "hook" in capsys.readouterr().err


def test_a_transcript_path_that_is_not_there_is_said(home: Path, memory: Memory, tmp_path: Path) -> None:
    for path in (tmp_path / "nope" / "gone.jsonl", tmp_path):  # missing, and a folder
        hook = {"session_id": "gone-1", "transcript_path": str(path), "cwd": str(tmp_path), "hook_event_name": "Stop"}
        with ServerThread(memory) as url:
            client = CaptureClient(url, home / "client")
            report = capture_hook(hook, client, home / "client")
            client.close()
        assert report.dead == 0 and any("is not a readable file" in e for e in report.errors)


def test_a_hook_that_says_nothing_makes_no_session(home: Path, served: Memory, tmp_path: Path) -> None:
    """Found by a Claude Code user: a Stop hook with no transcript_path, with one that is not there, or with a
    5,000-character session_id answered `stored 1` and a note, and `palimpsest sessions` then listed those sessions
    first, with no message and no title (what was stored was the hook's own JSON, never searched). Nothing said,
    nothing stored: the note says so."""
    served.append("worked-1", "user", "the deploy uses blue-green", created_at="2026-03-01T10:00:00Z")
    hooks = [{"session_id": "no-path", "cwd": str(tmp_path), "hook_event_name": "Stop"},
             {"session_id": "missing", "transcript_path": str(tmp_path / "gone.jsonl"), "hook_event_name": "Stop"},
             {"session_id": "x" * 5000, "hook_event_name": "Stop"}]
    with ServerThread(served) as url:
        client = CaptureClient(url, home / "client")
        reports = [capture_hook(hook, client, home / "client") for hook in hooks]
        client.close()
    assert [(r.stored, r.dead) for r in reports] == [(0, 0)] * 3
    assert all(len(r.errors) == 1 and r.errors[0].endswith("nothing was stored") for r in reports)
    assert "is not a readable file" in reports[1].errors[0]
    assert [s.id for s in served.sessions()] == ["worked-1"]


def test_an_output_too_large_for_a_batch_is_shortened_and_read_back_whole(home: Path, memory: Memory, tmp_path: Path) -> None:
    """A tool output larger than a batch was sent to dead/ by capture (413), while import
    shortened it; now capture shortens it too, and get_full reads the whole from the transcript."""
    transcript = tmp_path / "big.jsonl"
    lines = claude_lines("big-1")
    output = "ERROR: the retry cap is below the upstream timeout\n" + "x" * (9 * 1024 * 1024)
    lines[2]["message"]["content"][0]["content"] = output
    write_lines(transcript, lines)
    hook = {"session_id": "big-1", "transcript_path": str(transcript), "cwd": str(tmp_path), "hook_event_name": "Stop"}
    report = _captured(memory, home, hook)
    assert (report.stored, report.dead) == (6, 0) and any("shortened to fit" in e for e in report.errors)
    result = [m for m in memory.browse(session="big-1") if m.role == "tool"][0]
    assert result.metadata["source_truncated"] is True
    assert memory.get_full(result.id)["tool_result"] == output


def test_the_stop_hook_parses_only_its_own_commands(tmp_path: Path) -> None:
    """A harness waits on `palimpsest capture` after every turn: it built the parser of every
    command (numpy, the store, the indexer: 0.3 s of its 0.4 s, 2–6 s on a loaded machine, a
    new user's). It imports none of them now, and its help and options are the same."""
    code = ("import sys; from palimpsest.cli import main; "
            "rc = main(['--home', sys.argv[1], 'capture', '--url', 'http://127.0.0.1:9', '--replay']); "
            "print(rc, sorted(m for m in ('numpy', 'palimpsest.store', 'palimpsest.ingest', 'palimpsest.cli.vaults') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60, check=False)
    assert out.stdout.split("\n")[-2] == "0 []", out.stdout + out.stderr
    from palimpsest.cli import build_parser

    full = build_parser().parse_args(["--home", "h", "capture", "--agent", "codex", "{}"])
    fast = build_parser("server").parse_args(["--home", "h", "capture", "--agent", "codex", "{}"])
    assert {k: v for k, v in vars(full).items() if k != "func"} == {k: v for k, v in vars(fast).items() if k != "func"}


def test_a_prompt_holding_a_lone_surrogate_is_captured_as_a_transcript_line_is(home: Path, served: Memory, tmp_path: Path) -> None:
    """Found in review of the recall hook's fix: a UserPromptSubmit hook carrying {"prompt": "Bad \\ud800 Heizung warm"}
    (no transcript) crashed `palimpsest capture` with a UnicodeEncodeError from the spool: exit 1, nothing stored. The
    prompt is kept with U+FFFD in place of the half character, as a transcript line's is."""
    hook = json.loads('{"session_id": "lone-1", "hook_event_name": "UserPromptSubmit", "prompt": "Bad \\ud800 Heizung warm",'
                      ' "tool_input": {"note": "x \\udc00"}}')
    with ServerThread(served) as url:
        client = CaptureClient(url, home / "client")
        report = capture_hook(hook, client, home / "client")
        client.close()
    assert (report.stored, report.dead) == (1, 0)
    assert [m.content for m in served.browse(session="lone-1")] == ["Bad \ufffd Heizung warm"]


def test_an_output_shortened_for_a_server_elsewhere_is_said_to_stay_on_this_machine(home: Path, tmp_path: Path) -> None:
    """Found by a platform engineer with a shared server: the note said "the whole payload stays in the transcript;
    get_full reads it back", true only for a server on the machine holding the transcript; another machine's reads
    its own disk."""
    transcript = tmp_path / "big.jsonl"
    lines = claude_lines("big-2")
    lines[2]["message"]["content"][0]["content"] = "x" * (9 * 1024 * 1024)
    write_lines(transcript, lines)
    hook = {"session_id": "big-2", "transcript_path": str(transcript), "cwd": str(tmp_path), "hook_event_name": "Stop"}
    client = CaptureClient("http://memory.example:8765", home / "client", http=_fake(200, {"ok": True, "result": {"stored": 6}}))
    report = capture_hook(hook, client, home / "client")
    note = next(e for e in report.errors if "shortened to fit" in e)
    assert f"stays in the transcript on this machine, at {transcript}" in note and "get_full" not in note
