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


def glued(text: str, known: Callable[[Any], Any]) -> tuple[list[tuple[dict[str, Any], str]], bool]:
    """The whole records of a line that is not one JSON object, each with its text, in order; and
    whether a fragment was left. Two writers leave such a line:
    - one that lost a line's newline: `{complete}{next}` (the first had been dropped: found by a Codex user);
    - a harness killed mid-write, then resumed: `{"type":"response_item","payload":{"role":"user","conte`
      and the resumed session's next line right after it, so the line is a fragment and whole records.
    The glued records are the longest tail of the line, from a `{"`, that parses as whole objects. A tail
    starting after `:`, `,` or `[` may be an object inside the fragment (a line missing only its last
    brace ends with its payload): it counts only when `known` says it is a harness's record — a torn
    `…,"payload":` followed by the resumed record had lost the record, the user's words with it."""
    heads, at = _objects(text, 0)
    if at == len(text.rstrip()):
        return heads, False
    failures, start = 0, text.find('{"', at + 1)
    while start != -1 and failures < 1000:  # (a long garbled line costs a bounded number of failed parses)
        tail, stop = _objects(text, start)
        inside = text[:start].rstrip()[-1:] in (":", "[", ",")
        if stop == len(text.rstrip()) and tail and (not inside or known(tail[0][0])):
            return heads + tail, True
        if tail:  # an object parsed whole and was followed by something else: nothing inside it ends the line
            start = text.find('{"', start + len(tail[0][1]))
            continue
        failures += 1
        start = text.find('{"', start + 1)
    return heads, True


def _objects(text: str, at: int) -> tuple[list[tuple[dict[str, Any], str]], int]:
    """The JSON objects written one after another from `at`, each with its text, and where they stop."""
    out: list[tuple[dict[str, Any], str]] = []
    while True:
        begin = at
        while begin < len(text) and text[begin] in " \t\r\n":
            begin += 1
        try:
            record, stop = _DECODER.raw_decode(text, begin)
        except ValueError:
            return out, at
        if not isinstance(record, dict):
            return out, at
        out.append((record, text[begin:stop]))
        at = stop


def keyed(records: list[tuple[dict[str, Any], str]], raw: bytes) -> list[tuple[dict[str, Any], bytes]]:
    """The bytes each record of one line is keyed by (a reader's `raw`): the last, the line's own, as the one
    record of a line always was (so a record read before keeps its key); each before it, its own text as
    the line it would have been."""
    last = len(records) - 1
    return [(rec, raw if i == last else text.encode("utf-8", "surrogatepass") + b"\n") for i, (rec, text) in enumerate(records)]


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


def repaired_fields(doc: dict[str, Any]) -> dict[str, Any]:
    """A hook's fields each `repaired`, as a transcript line's are: a prompt holding "\\ud800" had crashed capture in the
    spool (nothing stored) and got no recall, silently. A field nested past what the repair walks (a tool input 900 deep,
    which `json` reads) is left as it is."""
    out = {}
    for k, v in doc.items():
        try:
            out[k] = repaired(v)[0]
        except RecursionError:
            out[k] = v
    return out
