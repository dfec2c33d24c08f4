"""Generic messages JSONL and OpenAI chat messages.

Generic JSONL: one message per line, `{session, role, content}` and optionally
`created_at`, `agent`, `channel`, `title`, `kind`, `tool_name`, `tool_args`,
`tool_result`, `event_key`, `metadata`; any other field is kept in `metadata`.
`--session` fills in (and overrides) the session of every line.

OpenAI: a JSON list, `{"messages": [...]}`, or JSONL of `{role, content, name?,
tool_calls?, tool_call_id?}`, each message read by `palimpsest.harness.openai` (a tool
call becomes its own message; a tool result is paired with its call's name; its time is
the first of `created_at`, `created`, `create_time`, `timestamp`, `time`, `date`; a file
with none is reported: its messages are dated at the import). The
session is `--session`, else the file name — and, when a session of that name was
imported from another file ("c/conv.json", then "d/conv.json"), the name with a short hash
of the path: two conversations, never one whose shared opening turns are dropped as repeats.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import InvalidInput
from ..harness.openai import TIME_KEYS, openai_message
from ..records import check_session_id
from .base import Plan, safe_session_id

MESSAGE_FIELDS = {"role", "content", "created_at", "tool_name", "tool_args", "tool_result", "event_key", "metadata", "type"}
SESSION_ATTRS = ("agent", "channel", "title", "kind")


def plan_messages(records: Iterable[tuple[int | None, Any]], session: str | None, agent: str | None) -> Plan:
    """`records`: (line, message) for JSONL, or (None, message) for a JSON list."""
    plan = Plan("messages", all_or_nothing=False)
    for i, (line, rec) in enumerate(records):
        where = f"line {line}" if line is not None else f"message {i}"
        if not isinstance(rec, dict):
            plan.problem(where, f"expected an object, got {type(rec).__name__}", line)
            continue
        sid = session or rec.get("session")
        if sid is None:
            plan.problem(where, "session is required (or pass --session)", line)
            continue
        try:
            sid = check_session_id(sid)
            attrs = _line_attrs(rec, agent)
        except InvalidInput as exc:
            plan.problem(where, str(exc), line)
            continue
        sp = plan.session(sid)
        for k, v in attrs.items():
            sp.attrs.setdefault(k, v)
        msg = {k: rec[k] for k in MESSAGE_FIELDS if k in rec}
        extra = {k: v for k, v in rec.items() if k not in MESSAGE_FIELDS and k not in SESSION_ATTRS and k != "session"}
        if extra:
            meta = msg.get("metadata")
            msg["metadata"] = {**extra, **meta} if isinstance(meta, dict) else msg.get("metadata", extra)
        sp.messages.append({**msg, "_where": where, "_line": line})
    return plan


def _line_attrs(rec: dict[str, Any], agent: str | None) -> dict[str, Any]:
    attrs = {k: rec[k] for k in SESSION_ATTRS if rec.get(k) is not None}
    for k, v in attrs.items():
        if not isinstance(v, str):
            raise InvalidInput(f"{k} must be a string, got {type(v).__name__}")
    if attrs.get("kind") not in (None, "normal", "instant"):
        raise InvalidInput("kind must be normal or instant")
    if agent:
        attrs["agent"] = agent
    return attrs


def plan_openai(records: Iterable[tuple[int | None, Any]], session: str | None, agent: str | None, name: str,
                path: str = "") -> Plan:
    """`records`: (line, message) for JSONL, or (None, message) for a JSON list."""
    plan = Plan("openai", all_or_nothing=False)
    sid = session or safe_session_id(name)
    sp = plan.session(sid)
    if agent:
        sp.attrs["agent"] = agent
    if path and not session:
        sp.attrs["settings"] = {"source_path": path}  # which file the session is (`import_file`: two files of one name)
    tools: dict[str, str] = {}
    for i, (line, rec) in enumerate(records):
        where = f"line {line}" if line is not None else f"message {i}"
        if not isinstance(rec, dict):
            plan.problem(where, f"expected an object, got {type(rec).__name__}", line)
            continue
        try:
            msgs = openai_message(rec, tools)
        except InvalidInput as exc:
            plan.problem(where, str(exc), line)
            continue
        for msg in msgs:
            sp.messages.append({**msg, "_where": where, "_line": line})
    _say_undated(plan, sp.messages)
    return plan


def _say_undated(plan: Plan, messages: list[dict[str, Any]]) -> None:
    """A file none of whose messages carries a time the reader knows is dated at the import, and
    the report says so: a year of logs all "today" answers no "when did I…" question."""
    if messages and not any(m.get("created_at") not in (None, "") for m in messages):
        plan.skipped[f"messages dated at the import: no line carries a time ({', '.join(TIME_KEYS)})"] += len(messages)
