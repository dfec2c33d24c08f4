"""Validation of incoming messages: the one place that says what a message may be."""

from __future__ import annotations

import json
from typing import Any

from ..errors import InvalidInput
from ..records import ROLE_RE, check_text, content_hash, iso, parse_time, utcnow

ALLOWED_FIELDS = {
    "role", "content", "tool_name", "tool_args", "tool_result", "metadata", "created_at", "event_key", "type",
}
SESSION_FIELDS = ("key", "agent", "channel", "title", "kind", "settings")
KINDS = ("normal", "instant")
# journal event types with a meaning of their own; a caller's message may not claim them
RESERVED_TYPES = frozenset({"session"})


def _text(value: Any, where: str, name: str) -> str | None:
    """`check_text` with the field's label made only for an error: this runs four times
    for every message written (bench/ingest.py)."""
    if value is None or (type(value) is str and value.isascii()):
        return value
    return check_text(value, f"{where}: {name}")


def normalise_message(raw: Any, where: str = "message") -> dict[str, Any]:
    """A journal-ready dict from a caller's message, or `InvalidInput` naming the field."""
    if not isinstance(raw, dict):
        raise InvalidInput(f"{where}: expected an object, got {type(raw).__name__}")
    get = raw.get
    role = get("role")
    if role is None or role == "":
        raise InvalidInput(f"{where}: role is required (user, assistant, system, tool, …)")
    if not isinstance(role, str) or not ROLE_RE.match(role):
        raise InvalidInput(f"{where}: role must be a short name such as user or assistant, got {str(role)[:40]!r}")
    content = get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        if isinstance(content, list):  # OpenAI-style content parts
            content = "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
        else:
            raise InvalidInput(f"{where}: content must be a string, got {type(content).__name__}")
    _text(content, where, "content")
    tool_name = _text(get("tool_name"), where, "tool_name")
    tool_result = get("tool_result")
    if tool_result is not None and not isinstance(tool_result, str):
        tool_result = json.dumps(tool_result, ensure_ascii=False)
    _text(tool_result, where, "tool_result")
    if content == "" and tool_name is None and tool_result is None:
        raise InvalidInput(f"{where}: content is empty; only a tool-call message (tool_name or tool_result) may have no content")
    metadata = get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InvalidInput(f"{where}: metadata must be an object")
    tool_args = get("tool_args")
    try:  # (nothing to check for the usual message without either)
        # allow_nan=False: NaN / Infinity are not JSON, and PostgreSQL's jsonb refuses them
        if tool_args is not None or metadata:
            json.dumps([tool_args, metadata], ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise InvalidInput(f"{where}: tool_args/metadata must be JSON with valid Unicode: {exc}") from None
    created = get("created_at")
    created = iso(parse_time(created, f"{where}: created_at")) if created not in (None, "") else iso(utcnow())
    key = get("event_key")
    if key is not None and (not isinstance(key, str) or not key or len(key) > 512):
        raise InvalidInput(f"{where}: event_key must be a non-empty string of at most 512 characters")
    _text(key, where, "event_key")
    mtype = get("type") or "message"
    if mtype != "message":
        if not isinstance(mtype, str):
            raise InvalidInput(f"{where}: type must be a string")
        if mtype in RESERVED_TYPES or not ROLE_RE.match(mtype):
            raise InvalidInput(f"{where}: type {mtype[:40]!r} is not allowed for a message (use message, or a short name other than session)")
    return {
        "type": mtype, "role": role, "content": content, "tool_name": tool_name, "tool_args": tool_args,
        "tool_result": tool_result, "metadata": metadata, "created_at": created, "event_key": key,
    }


def default_key(m: dict[str, Any], ordinal: int | None = None) -> str:
    """Content-hash key: identical appends collapse; with an ordinal (bulk ingest),
    identical lines at different positions of one transcript both stay."""
    h = content_hash(m["role"], m["content"], m["tool_name"], m["tool_args"], m["tool_result"])
    return f"h:{h}" if ordinal is None else f"i:{ordinal}:{h}"


def session_event(attrs: dict[str, Any]) -> dict[str, Any] | None:
    """A `session` journal event carrying the attributes given (agent, channel, kind, …)."""
    given = {k: attrs[k] for k in SESSION_FIELDS if attrs.get(k) is not None}
    if not given:
        return None
    for k in ("key", "agent", "channel", "title"):
        if k in given:
            check_text(given[k], k)
            if not isinstance(given[k], str):
                raise InvalidInput(f"{k} must be a string")
    if "kind" in given and given["kind"] not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}")
    if "settings" in given and not isinstance(given["settings"], dict):
        raise InvalidInput("settings must be an object")
    return {
        "type": "session", "role": None, "content": "", "tool_name": None, "tool_args": None, "tool_result": None,
        "metadata": given, "created_at": iso(utcnow()), "event_key": "session:" + content_hash(given),
    }
