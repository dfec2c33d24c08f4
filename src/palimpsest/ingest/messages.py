"""Validation of incoming messages: the one place that says what a message may be.

Every writer — HTTP append and ingest, `/api/capture`, MCP, the CLI, import — hands its
values to `normalise_message` and `session_event` (through `ingest.Writer`), or, for an
export's journal lines, to `check_event_fields`; the same rules hold for every field on
every path. Three kinds of value:

- names (role, type, event_key, tool_name, session key, agent, channel): valid Unicode
  without control characters — a NUL or a trailing newline in a name makes a row that
  PostgreSQL refuses or that no URL can name;
- text (content, tool_result, title): valid Unicode (a NUL is kept in the journal and
  shown as U+FFFD in the index);
- JSON (tool_args, metadata, settings): standard JSON as PostgreSQL's jsonb takes it —
  no NaN or Infinity, no lone surrogate, nothing `json` cannot encode.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, timedelta, tzinfo
from typing import Any

from .. import envelope
from ..errors import InvalidInput
from ..records import (
    OFFSET_KEY,
    ROLE_RE,
    check_offset,
    check_text,
    content_hash,
    content_text,
    iso,
    parse_time,
    speaker_in,
    speaker_offset,
    utcnow,
)

ALLOWED_FIELDS = {
    "role", "content", "tool_name", "tool_args", "tool_result", "metadata", "created_at", "event_key", "type",
}
SESSION_FIELDS = ("key", "agent", "channel", "title", "kind", "settings")
KINDS = ("normal", "instant")
# journal event types with a meaning of their own; a caller's message may not claim them
RESERVED_TYPES = frozenset({"session"})
MAX_KEY = 512
# C0 and C1 controls: no name holds one (NUL stalls PostgreSQL, a newline splits a URL or a log line)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def check_name(value: Any, label: str) -> str | None:
    """A name (None passes): a string of valid Unicode without control characters."""
    if value is None:
        return None
    check_text(value, label)
    found = _CONTROL.search(value)
    if found:
        raise InvalidInput(f"{label} holds a control character ({found.group()!r}) at position {found.start()}")
    return value


def check_role(value: Any, label: str) -> str:
    """A role or event type: a short name such as user or assistant."""
    # fullmatch: ROLE_RE is also a JSON-schema pattern, where `$` never matches before a final newline
    if not isinstance(value, str) or not ROLE_RE.fullmatch(value):
        raise InvalidInput(f"{label} must be a short name such as user or assistant, got {str(value)[:40]!r}")
    # "User" is the user: stored as given, it was nobody's turn to distill, recall or close
    return value.lower() if value.lower() in KNOWN_ROLES else value


KNOWN_ROLES = frozenset(["user", "assistant", "system", "tool", "developer"])


def check_event_key(value: Any, label: str) -> str | None:
    if value is not None and (not isinstance(value, str) or not value or len(value) > MAX_KEY):
        raise InvalidInput(f"{label} must be a non-empty string of at most {MAX_KEY} characters")
    return check_name(value, label)


def check_json(value: Any, label: str) -> Any:
    """`value`, if it is standard JSON with valid Unicode (what PostgreSQL's jsonb stores)."""
    try:  # allow_nan=False: NaN / Infinity are not JSON, and PostgreSQL's jsonb refuses them
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
        raise InvalidInput(f"{label} must be JSON with valid Unicode: {exc}") from None
    return value


def _text(value: Any, where: str, name: str) -> str | None:
    """`check_text` with the field's label made only for an error: this runs four times
    for every message written (bench/ingest.py)."""
    if value is None or (type(value) is str and value.isascii()):
        return value
    return check_text(value, f"{where}: {name}")


def normalise_message(raw: Any, where: str = "message", zone: tzinfo | None = UTC) -> dict[str, Any]:
    """A journal-ready dict from a caller's message, or `InvalidInput` naming the field.

    `zone`: the writer's time zone (`Settings.zone`; None: this machine's), for the
    speaker's wall clock (`records.wall_clock`): a message keeps the UTC offset it was
    said at in `metadata.utc_offset` when that is not zero — the offset its `created_at`
    was written with, else `zone`'s at that moment. A time written without an offset is a
    wall time as given: none is added (but "+00:00" where `zone` would add another, so a
    second pass over the stored, UTC, stamp reads it the same)."""
    if not isinstance(raw, dict):
        raise InvalidInput(f"{where}: expected an object, got {type(raw).__name__}")
    get = raw.get
    role = get("role")
    if role is None or role == "":
        raise InvalidInput(f"{where}: role is required (user, assistant, system, tool, …)")
    role = check_role(role, f"{where}: role")
    content = content_text(get("content"), f"{where}: content")
    _text(content, where, "content")
    tool_name = get("tool_name")
    if tool_name is not None and not (type(tool_name) is str and tool_name.isascii() and tool_name.isprintable()):
        check_name(tool_name, f"{where}: tool_name")
    tool_result = get("tool_result")
    if tool_result is not None and not isinstance(tool_result, str):
        tool_result = json.dumps(tool_result, ensure_ascii=False)
    _text(tool_result, where, "tool_result")
    content, echoed = envelope.without_recall_blocks(content)
    if tool_result is not None:
        tool_result, more = envelope.without_recall_blocks(tool_result)
        echoed += more
    if content == "" and tool_name is None and tool_result is None:
        raise InvalidInput(f"{where}: content is empty; only a tool-call message (tool_name or tool_result) may have no content")
    metadata = get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InvalidInput(f"{where}: metadata must be an object")
    if echoed:  # our own recall block came back (see `envelope.without_recall_blocks`)
        metadata = {**metadata, "recall_blocks_omitted": echoed}
        if content.strip() == envelope.OMITTED and tool_result is None:
            metadata.setdefault("importance", 0.1)
    tool_args = get("tool_args")
    if tool_args is not None or metadata:  # (nothing to check for the usual message without either)
        check_json([tool_args, metadata], f"{where}: tool_args/metadata")
    created = get("created_at")
    moment = parse_time(created, f"{where}: created_at") if created not in (None, "") else utcnow()
    if moment - utcnow() > AHEAD:  # (found by an MCP user: a message "of" 9999-12-31 topped every list for good)
        raise InvalidInput(f"{where}: created_at {created} is in the future; a message is stored when it was said "
                           f"(a clock up to {AHEAD.days} day ahead is allowed)")
    if metadata and OFFSET_KEY in metadata:
        check_offset(metadata[OFFSET_KEY], f"{where}: metadata.{OFFSET_KEY}")
    elif offset := speaker_offset(created, moment, zone):
        metadata = {**metadata, OFFSET_KEY: offset}
    created = iso(moment)
    key = check_event_key(get("event_key"), f"{where}: event_key")
    mtype = get("type") or "message"
    if mtype != "message":
        if not isinstance(mtype, str):
            raise InvalidInput(f"{where}: type must be a string")
        if mtype in RESERVED_TYPES or not ROLE_RE.fullmatch(mtype):
            raise InvalidInput(f"{where}: type {mtype[:40]!r} is not allowed for a message (use message, or a short name other than session)")
    return {
        "type": mtype, "role": role, "content": content, "tool_name": tool_name, "tool_args": tool_args,
        "tool_result": tool_result, "metadata": metadata, "created_at": created, "event_key": key,
    }


AHEAD = timedelta(days=1)  # how far a message's time may be ahead of this machine's clock (clocks and zones drift)


def default_key(m: dict[str, Any], ordinal: int | None = None, said: Any = None) -> str:
    """Content-hash key: identical appends collapse; with an ordinal (bulk ingest),
    identical lines at different positions of one transcript both stay; with the time the
    writer said it was said (`said`), identical lines said at different times both stay ("OK."
    on Monday and on Friday), and a retry of one append, the same time again, collapses.
    Without an ordinal, the speaker its metadata names (`said_by`) is part of the key: the same
    words from two people are two messages, never a retry."""
    h = words_hash(m)
    if ordinal is not None:  # (the position tells two speakers' lines apart, and keeps a transcript's keys as they were)
        return f"i:{ordinal}:{h}"
    who = said_by(m)
    if who:  # (no one named: the key as before, so a retry sent across an upgrade still collapses)
        h = content_hash(h, who)
    return f"h:{h}" if said is None else f"t:{content_hash(h, m['created_at'])}"


def words_hash(m: dict[str, Any]) -> str:
    """What a message says, hashed: its role, words and tool call — not its time, key or metadata."""
    return content_hash(m["role"], m["content"], m["tool_name"], m["tool_args"], m["tool_result"])


def said_by(m: dict[str, Any]) -> str:
    """Who said a message, as the message itself names them: its speaker (`records.speaker_in`).
    (Found by a family assistant's builder: in a shared session Mark's "ok sounds good" after Ana's
    was answered as a duplicate under her id, and lost.) The agent and channel given with an append
    are the session's, not the message's: a client often sends them on its first call only, and its
    retry without them is the same message."""
    return speaker_in(m.get("metadata"), m["role"])


def session_event(attrs: dict[str, Any]) -> dict[str, Any] | None:
    """A `session` journal event carrying the attributes given (agent, channel, kind, …)."""
    given = {k: attrs[k] for k in SESSION_FIELDS if attrs.get(k) is not None}
    if not given:
        return None
    check_session_attrs(given)
    tags = given.get("settings", {}).get("tags")
    if tags is not None and not (isinstance(tags, list) and all(isinstance(t, str) and _TAG.fullmatch(t.strip()) for t in tags)):
        # (a string, or "gus" with no key, made no tag and said nothing: a bot's user scoping silently did nothing)
        raise InvalidInput(f"settings.tags must be a list of key:value strings (user:alice), got {str(tags)[:80]!r}")
    return {
        "type": "session", "role": None, "content": "", "tool_name": None, "tool_args": None, "tool_result": None,
        "metadata": given, "created_at": iso(utcnow()), "event_key": "session:" + content_hash(given),
    }


_TAG = re.compile(r"[A-Za-z0-9][\w.-]{0,63}\s*[:：]\s*\S.*")


def check_session_attrs(given: dict[str, Any]) -> None:
    """The attributes of a `session` event, as a writer gives them or an export holds them."""
    for k in ("key", "agent", "channel"):
        check_name(given.get(k), k)
    check_text(given.get("title"), "title")
    if "kind" in given and given["kind"] not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}")
    if "settings" in given:
        if not isinstance(given["settings"], dict):
            raise InvalidInput("settings must be an object")
        check_json(given["settings"], "settings")
