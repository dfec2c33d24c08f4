"""Generic messages JSONL and OpenAI chat messages.

Generic JSONL: one message per line, `{session, role, content}` and optionally
`created_at`, `agent`, `channel`, `title`, `kind`, `tool_name`, `tool_args`,
`tool_result`, `event_key`, `metadata`; any other field is kept in `metadata`.
`--session` fills in (and overrides) the session of every line.

OpenAI: a JSON list, `{"messages": [...]}`, or JSONL of `{role, content, name?,
tool_calls?, tool_call_id?}`. Each tool call becomes its own message (role `assistant`,
`tool_name`, `tool_args` parsed from the JSON string, `metadata.tool_call_id`); a `tool`
message becomes a tool-result message whose `tool_name` is found by pairing its
`tool_call_id` with the call. The session is `--session`, else the file name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import InvalidInput
from ..records import check_session_id
from .base import Plan, parse_args, safe_session_id, text_of

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


def plan_openai(records: Iterable[tuple[int | None, Any]], session: str | None, agent: str | None, name: str) -> Plan:
    """`records`: (line, message) for JSONL, or (None, message) for a JSON list."""
    plan = Plan("openai", all_or_nothing=False)
    sid = session or safe_session_id(name)
    sp = plan.session(sid)
    if agent:
        sp.attrs["agent"] = agent
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
    return plan


def openai_message(rec: dict[str, Any], tools: dict[str, str]) -> list[dict[str, Any]]:
    """The Palimpsest messages of one OpenAI chat message (a message with tool calls
    gives its text, if any, then one message per call). `tools` pairs call ids to names."""
    role = rec.get("role")
    meta = {k: rec[k] for k in ("name", "tool_call_id") if rec.get(k) is not None}
    base = {"created_at": rec.get("created_at"), "metadata": meta}
    calls = rec.get("tool_calls") or ([{"id": None, "function": rec["function_call"]}] if isinstance(rec.get("function_call"), dict) else [])
    text = text_of(rec.get("content"))
    if role in ("tool", "function"):
        name = tools.get(str(rec.get("tool_call_id"))) or rec.get("name")
        return [{**base, "role": "tool", "tool_name": name, "tool_result": text}]
    out = [{**base, "role": role, "content": text}] if text or not calls else []
    if not isinstance(calls, list):
        raise InvalidInput("tool_calls must be a list")
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise InvalidInput("each tool call needs function.name")
        call_id, name = call.get("id"), fn["name"]
        if call_id is not None:
            tools[str(call_id)] = name
        out.append({**base, "role": role, "content": "", "tool_name": name, "tool_args": parse_args(fn.get("arguments")),
                    "metadata": {**meta, "tool_call_id": call_id}})
    return out
