"""From a harness hook's JSON to capture batches.

`palimpsest capture` reads a harness hook's JSON from stdin (Claude Code: `session_id`,
`transcript_path`, `cwd`, `hook_event_name`; Codex hooks alike, or its `notify` payload).
Decision: when the hook names a transcript, the client sends the transcript's new complete
lines since its last capture (`transcript.py`), one event per message, tool call and tool
result, read by the same harness reader as the importers (keyed by the harness's own
record ids: Claude's `uuid`; a Codex line's number and hash), so the whole conversation
lands — tool outputs included — whichever hook fires, importing the file later adds
nothing, and a lost cursor only causes duplicates the server drops. Claude Code sub-agent
transcripts (`<session>/subagents/*.jsonl`) join the same session; Codex's `notify`
payload names no transcript, so its rollout file is found by thread id under
`CODEX_HOME` (not found, the payload is held: `notify.py`). Without a transcript the client posts what the hook itself carries (a
prompt, a tool call and its response). The session's settings get `cwd`, `project` and the
rule tag `project:<repo>` (`project.py`; a transcript's session, as an import reads it).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..harness import claude_code, codex
from ..harness.common import repaired_fields
from ..harness.project import project_of, project_of_session
from ..records import session_id_of
from ..settings import loopback
from . import notify
from .client import BATCH_BYTES, CaptureClient, Report, split
from .transcript import Transcript


def _event(role: str, content: str = "", key: str = "", **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "event_key": key, **{k: v for k, v in extra.items() if v is not None}}


def hook_events(hook: dict[str, Any]) -> list[dict[str, Any]]:
    """Events from what a hook itself carries (no transcript to read): none from a hook that says nothing. (Its JSON,
    journaled as a record, never searched, had made a session of its own: a Stop hook naming no transcript, or one not
    there, was listed first by `palimpsest sessions`, with no message and no title — found by a Claude Code user.)"""
    key = "hook:" + hashlib.sha256(json.dumps(hook, sort_keys=True, default=str).encode()).hexdigest()[:24]
    if isinstance(hook.get("prompt"), str) and hook["prompt"]:
        return [_event("user", hook["prompt"], key)]
    if hook.get("tool_name"):
        result = hook.get("tool_response")
        return [_event("tool", "", key, tool_name=str(hook["tool_name"]), tool_args=hook.get("tool_input"),
                       tool_result=result if isinstance(result, str) or result is None else json.dumps(result, ensure_ascii=False))]
    if isinstance(hook.get("input-messages"), list):  # Codex `notify`
        turn = str(hook.get("turn-id") or key)
        out = [_event("user", str(m), f"codex-notify:{turn}:{i}") for i, m in enumerate(hook["input-messages"]) if m]
        if hook.get("last-assistant-message"):
            out.append(_event("assistant", str(hook["last-assistant-message"]), f"codex-notify:{turn}:assistant"))
        return out
    return []


def codex_rollout(thread_id: str, codex_home: Path) -> Path | None:
    """The rollout file of a Codex session (`sessions/YYYY/MM/DD/rollout-…-<id>.jsonl`), newest first."""
    if not thread_id or not re.fullmatch(r"[A-Za-z0-9-]{8,64}", thread_id):
        return None
    found = sorted((codex_home / "sessions").glob(f"*/*/*/rollout-*{thread_id}.jsonl"), reverse=True)
    return found[0] if found else None


def capture_hook(hook: Any, client: CaptureClient, home: Path, agent: str | None = None, codex_home: Path | None = None,
                 env: dict[str, str] | None = None) -> Report:
    """Turn one hook payload into batches, send them (or spool them), advance the cursor.

    Codex's `notify` payload names no transcript; its rollout file is found by thread id.
    OpenCode's session is read from its database (`capture/opencode.py`)."""
    if not isinstance(hook, dict):
        raise InvalidInput("the hook input must be a JSON object")
    hook = repaired_fields(hook)
    if isinstance(hook.get("input-messages"), list) and not any(hook.get(k) for k in ("thread-id", "session_id", "sessionId")):
        hook = notify.named(hook, codex_home)  # an older Codex's notify: the session of the rollout holding its turn
    head = _head(hook)
    if agent == "opencode" or "opencode_db" in hook:
        from . import opencode

        return opencode.capture(hook, head, client, home, env or {})
    report = _capture(hook, head, client, home, agent, codex_home)
    report.merge(notify.settle(client, home))  # (after: a rollout read now drops what notify held of it)
    return report


def _capture(hook: dict[str, Any], head: dict[str, Any], client: CaptureClient, home: Path, agent: str | None,
             codex_home: Path | None) -> Report:
    path = hook.get("transcript_path")
    rollout = None
    if not path and codex_home is not None:  # `notify`'s thread id, or a Codex hook's session id with no transcript named
        rollout = codex_rollout(str(hook.get("thread-id") or hook.get("session_id") or ""), codex_home)
        path = str(rollout or "")
    if isinstance(path, str) and path and Path(path).expanduser().is_file():
        return _send_transcript(Path(path).expanduser(), client, home, head, agent or ("codex" if rollout else None))
    if isinstance(hook.get("input-messages"), list) and codex_home is not None:  # notify, its rollout not found
        return notify.hold(home, head, hook_events(hook), f"{codex_home}/sessions")
    events = hook_events(hook)
    report = _send(client, head, events, agent or ("codex" if "thread-id" in hook else "claude-code"))
    stored = "only the hook's own event was stored" if events else "nothing was stored"
    if path:  # named but not there: the turn itself was not captured, and the user should know
        report.errors.append(f"transcript_path {str(path)[:300]!r} is not a readable file: {stored}")
    elif hook.get("hook_event_name") in ("Stop", "SubagentStop", "SessionEnd", "PreCompact"):
        # a turn's end with no transcript to read (found by a Codex user: `stored 1`, and the turn was not there)
        report.errors.append("the hook names no transcript_path (and no Codex rollout of this session was found under "
                             f"codex_home): {stored}")
    return report


def _head(hook: dict[str, Any]) -> dict[str, Any]:
    """The batch's session and settings (`cwd`, `project`, the `project:<repo>` tag)."""
    raw_session = hook.get("session_id") or hook.get("thread-id") or hook.get("sessionId")
    if not raw_session:
        raise InvalidInput("the hook input has no session_id")
    cwd = hook.get("cwd") if isinstance(hook.get("cwd"), str) else None
    settings: dict[str, Any] = {"cwd": cwd} if cwd else {}
    project = project_of(cwd)
    if project:
        settings.update(project=project, tags=[f"project:{project}"])
    return {"session": session_id_of(raw_session), "settings": settings or None}


def _send_transcript(main: Path, client: CaptureClient, home: Path, head: dict[str, Any], agent: str | None) -> Report:
    report = Report()
    # Claude Code keeps sub-agent transcripts beside the main one (`claude_code.subagent_files`);
    # their records carry their own uuids, so they join the same session.
    for file in [main, *claude_code.subagent_files(main)]:
        with Transcript(file, home) as transcript:
            events, skipped = transcript.events()
            agent = agent or transcript.format or "claude-code"
            if file != main:
                for event in events:
                    event["metadata"] = {**event.get("metadata", {}), "subagent_file": file.name}
            shortened = _fit(events)
            if shortened:
                report.errors.append(f"{file.name}: {shortened} events larger than a batch shortened to fit ({_whole_in(file, client)})")
            if file == main:  # what the reader learned of the session, as an import keeps it (title, branch, version, model)
                ctx = transcript.reader.context
                head = {**head, "title": head.get("title") or ctx.title,
                        "settings": _attributed({**ctx.settings, **(head.get("settings") or {})}) or None}
            report.merge(_send(client, head, events, agent))
            transcript.commit()  # posted or spooled: either way it is safe on disk
            if file == main and transcript.format == codex.FORMAT:
                notify.rollout_read(home, head["session"])  # what notify held of this session is in it
        if skipped:
            report.errors.append(f"{file.name}: {skipped} unreadable transcript lines skipped")
        if transcript.repaired:
            report.errors.append(f"{file.name}: {transcript.repaired} characters cut in half (lone surrogates) kept as U+FFFD")
        if transcript.recoded:
            report.errors.append(f"{file.name}: {transcript.recoded} lines with bytes not UTF-8 kept with U+FFFD in their place")
    return report


def _whole_in(file: Path, client: CaptureClient) -> str:
    """Where a shortened payload's whole is. `get_full` reads the transcript from the server's disk, so only a server of
    this machine reads it back: a shared server's user was told it would."""
    if loopback(client.url):
        return "the whole payload stays in the transcript; get_full reads it back"
    return f"the rest stays in the transcript on this machine, at {file}"


def _attributed(settings: dict[str, Any]) -> dict[str, Any]:
    """A transcript's session settings with the project an import gives them (`project_of_session`) when the hook's
    folder named none: a Codex session whose folder was gone had no `project:` tag, though its rollout's session_meta
    names `git.repository_url` and an import of the same file gave `project:mira-lab/lmtrain` (found by a Codex user)."""
    if "project" in settings:
        return settings
    project = project_of_session(settings)
    return {**settings, "project": project, "tags": [f"project:{project}"]} if project else settings


def _fit(events: list[dict[str, Any]], limit: int = BATCH_BYTES) -> int:
    """Shorten each event too large for one batch (a 19 MB tool output), as `palimpsest
    import` does: its payload cut to fit, `metadata.source_truncated` set, and the whole of it
    left in the transcript it came from (`source_path`, `source_line`), from which
    `get_full` reads it back. How many were shortened."""
    from ..importers.base import shorten, too_big

    n = 0
    for event in events:
        if "source_path" not in event.get("metadata", {}):
            continue
        msg = {"content": "", "tool_result": None, "tool_args": None, **event}
        if not too_big(msg, limit):
            continue
        shorten(msg, limit)
        event.update({k: v for k, v in msg.items() if v is not None or k in event})
        n += 1
    return n


def _send(client: CaptureClient, head: dict[str, Any], events: list[dict[str, Any]], agent: str) -> Report:
    batch = {**{k: v for k, v in head.items() if v is not None}, "agent": agent, "events": events}
    return client.send(split(batch))
