"""Dataclasses of the data model (see DESIGN.md, "Data model").

Times are timezone-aware UTC `datetime`s inside the library and ISO 8601 strings
(`2026-03-04T10:15:00.000000Z`) on the wire, in the journal and in SQLite.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from functools import lru_cache
from typing import Any

from .errors import InvalidInput
from .ids import SESSION_ID_PATTERN, check_session_id, session_id_of  # noqa: F401 — re-exported: their home is ids.py

SESSION_ID_RE = re.compile(SESSION_ID_PATTERN)

ROLES_HINT = "user, assistant, system, tool (or any short name)"
ROLE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(dt: datetime) -> str:
    """The one textual form of a time: UTC, microseconds, `Z` (sorts lexically)."""
    if dt.tzinfo is not UTC:
        dt = dt.astimezone(UTC)
    return dt.isoformat(timespec="microseconds")[:-6] + "Z"  # (-6: "+00:00"; strftime was 3× slower)


def parse_time(value: Any, field_name: str = "created_at") -> datetime:
    """Accept an ISO 8601 string (naive means UTC), epoch seconds, or a datetime."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            dt = datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError):
            raise InvalidInput(f"{field_name}: {value!r} seconds is no time between the years 1 and 9999") from None
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        if text.endswith("Z") or text.endswith("z"):
            text = text[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            raise InvalidInput(f"{field_name}: not an ISO 8601 time: {value[:60]!r}") from None
    else:
        raise InvalidInput(f"{field_name}: expected an ISO 8601 string, got {type(value).__name__}")
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    try:
        return dt if dt.tzinfo is UTC else dt.astimezone(UTC)
    except OverflowError:  # "0001-01-01T00:00:00+14:00" is before the year 1 in UTC: a 500 on every surface
        raise InvalidInput(f"{field_name}: {str(value)[:60]!r} is outside the years 1 to 9999 in UTC") from None


OFFSET_KEY = "utc_offset"  # metadata: the speaker's wall clock against UTC when it was said ("-08:00"); absent: UTC
_OFFSET = re.compile(r"^([+-])(\d{2}):(\d{2})$")


def given_offset(value: Any) -> str | None:
    """The UTC offset an ISO 8601 time string was written with ("+02:00"), or None for
    one in UTC ("Z", "+00:00"), one without ("2023-05-08T13:56:00": a wall time as
    given) and anything that is not a string."""
    if not isinstance(value, str) or value[-1:] in ("Z", "z"):
        return None
    m = re.search(r"[+-]\d{2}:?\d{2}$", value.strip())
    if m is None or "T" not in value and " " not in value.strip():
        return None
    text = m.group()
    text = text if ":" in text else f"{text[:3]}:{text[3:]}"
    return None if text in ("+00:00", "-00:00") else text


def _offset_minutes(value: Any) -> int | None:
    """A `utc_offset` ("+HH:MM" / "-HH:MM", within ±23:59) in minutes, or None when it is not one."""
    m = _OFFSET.fullmatch(value) if isinstance(value, str) else None
    if m is None or int(m.group(2)) > 23 or int(m.group(3)) > 59:
        return None
    return (int(m.group(2)) * 60 + int(m.group(3))) * (-1 if m.group(1) == "-" else 1)


def check_offset(value: Any, label: str) -> str:
    """A `utc_offset` as metadata may carry it: "+HH:MM" / "-HH:MM", within ±23:59."""
    if _offset_minutes(value) is None:
        raise InvalidInput(f"{label} must be a UTC offset such as +02:00 or -08:00, got {str(value)[:40]!r}")
    return value


def offset_of(zone: tzinfo | None, at: datetime) -> str | None:
    """`zone`'s offset at `at` as "+HH:MM" (None: UTC); `zone` None is this machine's."""
    if zone is UTC:
        return None
    return _offset_at(zone, int(at.timestamp() // 900))


@lru_cache(maxsize=1024)
def _offset_at(zone: tzinfo | None, quarter: int) -> str | None:
    """Memoised per quarter of an hour: zones change their offset on a quarter hour
    (a bulk import would otherwise ask the C library's localtime per message)."""
    at = datetime.fromtimestamp(quarter * 900, UTC)
    delta = _moved(at, zone).utcoffset()
    if not delta:
        return None
    minutes = round(delta.total_seconds() / 60)
    sign, minutes = ("+", minutes) if minutes >= 0 else ("-", -minutes)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


_NAIVE = re.compile(r"[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$|^\d{4}-\d{2}-\d{2}$")


def speaker_offset(created: Any, moment: datetime, zone: tzinfo | None) -> str | None:
    """The `utc_offset` a message said at `moment` keeps (`normalise_message`), given
    the `created_at` it came with (None: now) and the writer's `zone` (None: this
    machine's): the offset `created` was written with; for a time in UTC or none,
    `zone`'s then; for a wall time written without an offset, none ("+00:00" where
    `zone`'s is another, so a second pass over the stored UTC stamp reads it the same).
    None where the offset is zero: no offset reads as UTC."""
    given = given_offset(created)
    if given is not None:
        return given
    offset = offset_of(zone, moment)
    if offset and isinstance(created, str) and _NAIVE.search(created.strip()):
        return "+00:00"
    return offset


def wall_clock(stamp: str | datetime, metadata: dict[str, Any] | None = None) -> datetime:
    """When a message was said on its speaker's clock: its time (UTC, as stored) moved by
    its metadata's `utc_offset` ("yesterday" said at 20:00 in California is the day
    before California's, not UTC's). Without one, or with one that cannot be read, UTC."""
    dt = parse_time(stamp)
    minutes = _offset_minutes(metadata.get(OFFSET_KEY)) if metadata else None
    return _moved(dt, timezone(timedelta(minutes=minutes))) if minutes else dt


def _moved(dt: datetime, zone: tzinfo | None) -> datetime:
    """`dt` on `zone`'s clock (None: this machine's), or in UTC where that clock would pass the
    year 9999 or come before the year 1 (a message dated 9999-12-31T23:59Z read at +14:00
    broke the panel and `sessions` for good)."""
    try:
        return dt.astimezone(zone)
    except OverflowError:
        return dt


def clock_of(value: Any, moment: datetime, zone: tzinfo | None) -> datetime:
    """`moment` on the clock of whoever gave `value` (a query's `now`): the offset `value`
    was written with; a wall time written without one as it is; else `zone`'s (None: this
    machine's), so "yesterday" asked at 20:00 in California is California's yesterday."""
    given = given_offset(value)
    if given is not None:
        return wall_clock(moment, {OFFSET_KEY: given})
    if isinstance(value, str) and _NAIVE.search(value.strip()):
        return moment
    return _moved(moment, zone)


def local_minute(stamp: Any, zone: tzinfo | None) -> str:
    """A stored time to the minute on the reader's clock, as listings show it
    ("2026-12-03 09:49" in `zone`; None: this machine's); text that is no time, as it is."""
    if stamp is None or stamp == "":
        return ""
    try:
        dt = parse_time(stamp)
    except InvalidInput:
        return str(stamp)[:16].replace("T", " ")
    if zone is not UTC:
        dt = _moved(dt, zone)
    return dt.strftime("%Y-%m-%d %H:%M")


def said_day(stamp: str, metadata: dict[str, Any] | None = None) -> str:
    """The day (YYYY-MM-DD) a message was said on its speaker's calendar (`wall_clock`);
    a stored stamp's first ten characters when it carries no offset."""
    offset = metadata.get(OFFSET_KEY) if metadata else None
    if not isinstance(offset, str):
        return stamp[:10]
    return _said_day(stamp[:16], offset)


@lru_cache(maxsize=4096)
def _said_day(minute: str, offset: str) -> str:
    """Memoised by the minute (offsets are whole minutes): the indexer asks twice a message."""
    try:
        return wall_clock(minute, {OFFSET_KEY: offset}).date().isoformat()
    except InvalidInput:
        return minute[:10]


def check_text(value: Any, field_name: str, *, allow_none: bool = True) -> str | None:
    """Strings must be encodable as UTF-8: a lone surrogate is refused, not mangled."""
    if value is None:
        if allow_none:
            return None
        raise InvalidInput(f"{field_name} is required")
    if not isinstance(value, str):
        raise InvalidInput(f"{field_name} must be a string, got {type(value).__name__}")
    if value.isascii():  # nothing to check, and far cheaper than encoding
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{field_name} holds a lone surrogate at position {exc.start}; send valid Unicode") from None
    return value


# = json.dumps(..., ensure_ascii=False, sort_keys=True, default=str), made once: the bytes
# hashed must never change (stored idempotency keys are made of them)
_HASH_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)


def content_hash(*parts: Any) -> str:
    blob = _HASH_JSON.encode(parts)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


@dataclass
class Session:
    id: str
    key: str | None = None
    agent: str | None = None
    channel: str | None = None
    title: str | None = None
    kind: str = "normal"
    settings: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    updated_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Event:
    """One journal line. `line` / `offset` are where it sits in its session's journal."""

    id: str
    session: str
    role: str | None
    content: str = ""
    type: str = "message"
    tool_name: str | None = None
    tool_args: Any = None
    tool_result: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    event_key: str = ""
    line: int = 0
    offset: int = 0
    nbytes: int = 0

    @classmethod
    def from_json(cls, d: dict[str, Any], line: int = 0, offset: int = 0, nbytes: int = 0) -> Event:
        """An event from its journal line; absent or null fields take their defaults (a
        line without `id` or `session` is not an event: TypeError). Spelt out field by
        field: it runs for every message written and read."""
        get = d.get
        if get("id") is None or get("session") is None:
            raise TypeError("a journal event needs an id and a session")
        mtype, created, key = get("type"), get("created_at"), get("event_key")
        return cls(
            id=d["id"], session=d["session"], role=get("role"), content=get("content") or "",
            type="message" if mtype is None else mtype, tool_name=get("tool_name"), tool_args=get("tool_args"),
            tool_result=get("tool_result"), metadata=get("metadata") or {}, created_at="" if created is None else created,
            event_key="" if key is None else key, line=line, offset=offset, nbytes=nbytes,
        )


SPEAKER_KEYS = ("speaker", "name", "author", "sender")  # the metadata that names who said a message, first found


def speaker_in(metadata: dict[str, Any] | None, role: str | None = None) -> str:
    """Who said a message, as its metadata names them (`SPEAKER_KEYS`, whitespace folded),
    or "": a tool's output has no speaker (OpenAI's `name` on it is the function's)."""
    if not metadata or role == "tool":
        return ""
    for k in SPEAKER_KEYS:
        value = metadata.get(k)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())[:120]
    return ""


@dataclass
class Message:
    """The index row of an event: the event's fields plus what scoring needs."""

    id: str
    session: str
    role: str | None
    content: str
    created_at: str
    type: str = "message"
    tool_name: str | None = None
    tool_args: Any = None
    tool_result: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    event_key: str = ""
    importance: float = 0.5
    access_count: int = 0
    last_accessed_at: str | None = None
    truncated: bool = False
    full_content_length: int | None = None
    full_tool_result_length: int | None = None
    journal_path: str = ""
    journal_line: int = 0
    journal_offset: int = 0
    context: str = ""  # indexed with the message, never shown: speaker, date, previous turn
    journal_id: str | None = None  # the writing home's journal id (`Journal.wrote`); None: indexed before rows said

    @property
    def speaker(self) -> str:
        """Who said it, when its metadata names them ("Caroline"), else ""."""
        return speaker_in(self.metadata, self.role)

    @property
    def alternate(self) -> bool:
        """A branch the conversation left (`metadata.branch`: an imported ChatGPT conversation's edited prompt's first
        wording, a regenerated answer's draft): kept and found, never what was last said nor a statement to distill."""
        return (self.metadata or {}).get("branch") == "alternate"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        del d["context"], d["journal_id"]
        return d


@dataclass
class Hit:
    """One search result: the message and the parts of its score."""

    message: Message
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    session_tags: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = self.message.to_dict()
        d["score"] = round(self.score, 6)
        d["score_parts"] = {k: round(v, 6) for k, v in self.parts.items()}
        d["session_tags"] = list(self.session_tags)
        return d

    @property
    def copies(self) -> int:
        """The hits folded into this one: its exact copies (`search.diversity.fold_copies`); a template's repeats are moved, not folded."""
        return int(self.parts.get("copies", 0))


def more_like_it(hit: Hit) -> str:
    """What a line shows of the copies folded into its hit ("and 6 more like it"; nothing without any)."""
    return f"and {hit.copies} more like it" if hit.copies else ""


# -- content parts ------------------------------------------------------------------
def content_text(value: Any, label: str = "content") -> str:
    """A message's `content` as text: a string, a list of content parts (`text_of`), or nothing (""); anything else
    is `InvalidInput`, on every surface that reads one: an OpenAI import had stored `"content": 42` as '42' while the
    same line of a messages JSONL was refused (a paralegal's)."""
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list):  # OpenAI-style parts; one not text named with where it is ("[image_url: https://…]":
        return text_of(value)    # its address had been dropped, found by an importer of a year of chats)
    raise InvalidInput(f"{label} must be a string, got {type(value).__name__}")


def text_of(value: Any) -> str:
    """Text of a content value: a string, or a list of text parts (other parts named in brackets; a part whose
    `text` is a number is that number's text: `{"type": "input_text", "text": 12345}` had been "[input_text]", the
    number lost, found by a Codex user)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for p in value:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict):
                t = p.get("text")
                parts.append(t if isinstance(t, str) else json.dumps(t) if isinstance(t, (int, float)) else _part(p))
        return "\n".join(x for x in parts if x)
    return json.dumps(value, ensure_ascii=False)


def _part(part: dict[str, Any]) -> str:
    """A part that is not text, named in brackets with where it is: an image's URL ("[image_url:
    https://cdn…/box.jpg]"), a data URL by its type and size, a file by its name (a claim photo's address had been lost,
    found by an importer of OpenAI logs)."""
    kind = str(part.get("type", "part"))
    inner = part.get(kind) if isinstance(part.get(kind), dict) else part
    where = inner.get("url") or inner.get("image_url") or inner.get("file_url") or inner.get("filename") or inner.get("file_id")
    if isinstance(where, dict):
        where = where.get("url")
    if not isinstance(where, str) or not where:
        return f"[{kind}]"
    if where.startswith("data:"):
        return f"[{kind}: {where[:where.find(',')] if ',' in where[:200] else 'data:'}, {len(where):,} characters]"
    return f"[{kind}: {where[:2000]}]"
