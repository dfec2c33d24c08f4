"""What the harness readers share: the context a reader carries through one transcript,
and the small helpers that turn a record's pieces into event fields.

A reader turns one record into events; what it must remember from earlier records (a
tool call's name for the result that answers it, the last timestamp for a record without
one, the session's id, title and settings) lives in a `Context`. The importer keeps one
for a whole file; live capture reads a transcript a few lines per hook call, so it saves
the context beside its byte cursor (`state` / `from_state`) and a result whose call came
in an earlier capture is still paired with its tool's name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInput
from ..records import parse_time

BOILERPLATE_IMPORTANCE = 0.1
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REASONING_IMPORTANCE = 0.3


@dataclass
class Context:
    """What a reader learned so far from one transcript file (`path`)."""

    path: str | None
    last_ts: str | None = None
    tools: dict[str, str] = field(default_factory=dict)  # call id → tool name
    session_id: str | None = None
    title: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    def state(self) -> dict[str, Any]:
        """The context as JSON-ready data (everything but the path), to resume reading later."""
        return {"last_ts": self.last_ts, "tools": self.tools, "session_id": self.session_id, "title": self.title,
                "settings": self.settings}

    @classmethod
    def from_state(cls, path: str | None, state: Any) -> Context:
        """A context saved by `state`; what is missing or malformed starts empty."""
        s = state if isinstance(state, dict) else {}
        text = lambda k: s[k] if isinstance(s.get(k), str) else None
        tools, settings = s.get("tools"), s.get("settings")
        tools = tools if isinstance(tools, dict) else {}
        settings = settings if isinstance(settings, dict) else {}
        return cls(path, last_ts=text("last_ts"), tools={str(k): str(v) for k, v in tools.items()},
                   session_id=text("session_id"), title=text("title"), settings=dict(settings))


def learn_session(rec: dict[str, Any], ctx: Context) -> None:
    """The session's id and settings from a record that names them (Claude Code's and
    qwen-code's records both carry `sessionId`, `cwd`, `gitBranch`, `version`)."""
    if ctx.session_id is None and isinstance(rec.get("sessionId"), str):
        ctx.session_id = rec["sessionId"]
    for src, dst in (("cwd", "cwd"), ("gitBranch", "git_branch"), ("version", "version")):
        if isinstance(rec.get(src), str) and dst not in ctx.settings:
            ctx.settings[dst] = rec[src]


def source_record(record_type: str, raw: Any, source: dict[str, Any], created_at: str | None, key: str) -> dict[str, Any]:
    """A harness record kept as it is: journaled (type `source_record`) but never indexed."""
    text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    return {
        "type": "source_record", "role": "source", "content": text, "created_at": created_at, "event_key": key,
        "metadata": {**source, "record_type": record_type},
    }


def parse_args(arguments: Any) -> Any:
    """Tool-call arguments arrive as a JSON string; keep the string when it is not JSON."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    return arguments


def time_or(value: Any, fallback: str | None) -> str | None:
    """A record's timestamp when it is one, else `fallback` (the last one seen): a record
    with a garbled time keeps its place in the session instead of being refused."""
    if not isinstance(value, str) or not value.strip():
        return fallback
    try:
        parse_time(value)
    except InvalidInput:
        return fallback
    return value



_DECODER = json.JSONDecoder()


def decoded(raw: bytes) -> tuple[str, bool]:
    """A line (or file) as text, a byte that is not UTF-8 read as U+FFFD; and whether one was (one such byte, a Windows
    tool's output, had cost its whole line in import and capture alike)."""
    text = raw.decode("utf-8", "replace")
    return text, "\ufffd" in text and "\ufffd".encode() not in raw


def glued(text: str, known: Callable[[Any], Any]) -> dict[str, Any] | None:
    """The record a writer that resumed after a torn line glued onto it, or None: a harness
    killed mid-write leaves `{"type":"response_item","payload":{"role":"user","conte`, and the
    resumed session appends its next line right after it, so the line is a fragment and one
    whole object. The object is the longest tail of the line, from a `{"`, that parses whole
    (it had been lost, and the file refused by every import after). A tail starting after `:`,
    `,` or `[` may be an object inside the fragment (a line missing only its last brace ends with
    its payload): it counts only when `known` says it is a harness's record — a line cut right
    after `"payload":` with the resumed record written on it had lost the record, the user's
    words with it (found by a Codex user)."""
    end, failures = len(text.rstrip()), 0
    at = text.find('{"', 1)
    while at != -1 and failures < 1000:  # (a long garbled line costs a bounded number of failed parses)
        try:
            record, stop = _DECODER.raw_decode(text, at)
        except ValueError:
            failures += 1
            at = text.find('{"', at + 1)
            continue
        inside = text[:at].rstrip()[-1:] in (":", "[", ",")
        if stop == end and isinstance(record, dict) and (not inside or known(record)):
            return record
        # an object that parsed whole and ends before the line does: no object inside it ends the line
        at = text.find('{"', stop)
    return None


def repaired(value: Any) -> tuple[Any, int]:
    """`value` with every lone surrogate in its strings (and keys) replaced by U+FFFD, and how
    many were. A harness written in JavaScript can cut a long output inside an emoji and write
    half of it as an escaped lone surrogate (`"\\ud83d"`): valid JSON, but no text the index may
    store — capture and import both keep the rest of the message."""
    count = 0

    def fix(v: Any) -> Any:
        nonlocal count
        if isinstance(v, str):
            fixed, n = LONE_SURROGATE.subn("\ufffd", v)
            count += n
            return fixed
        if isinstance(v, dict):
            return {fix(k): fix(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v

    return fix(value), count
