"""Journal → store. The index is derived: a cursor per journal says how far it got.

Indexing a session reads the complete lines after its cursor, turns each event into a
message row (capping long fields, keeping a pointer back to the journal line) and writes
the rows and the new cursor in one transaction, so a crash between the two cannot
duplicate or skip anything. If the store is down the cursor simply stays; the journal
keeps growing and the next pass resumes from the cursor. `rebuild` resets the store and
replays every journal.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from ..errors import InvalidInput
from ..journal import Journal
from ..records import Event, Message, Session, parse_time
from ..store import Filters, Store

log = logging.getLogger(__name__)

IMPORTANCE_BY_KIND = {"correction": 0.9, "preference": 0.8, "decision": 0.7, "fact": 0.6, "task": 0.5}
DEFAULT_IMPORTANCE = 0.5
INDEXED_TYPES = {"message"}
BATCH = 2000


def utf16_len(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def cap_utf16(text: str, cap: int) -> str:
    """The longest prefix of `text` within `cap` UTF-16 code units (never half a pair)."""
    if len(text) <= cap // 2 or utf16_len(text) <= cap:
        return text
    units = 0
    for i, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > cap:
            return text[:i]
    return text


def _index_text(text: str | None) -> str | None:
    # PostgreSQL text cannot hold NUL; the journal keeps it, the index shows U+FFFD.
    return text.replace("\x00", "\ufffd") if text and "\x00" in text else text


def importance_of(event: Event) -> float:
    meta = event.metadata
    if not meta:
        return DEFAULT_IMPORTANCE
    value = meta.get("importance")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    return IMPORTANCE_BY_KIND.get(str(meta.get("kind", "")).lower(), DEFAULT_IMPORTANCE)


CONTEXT_PREVIOUS_CHARS = 500


def search_context(event: Event, previous: str) -> str:
    """What a message is found by besides its own words: who said it, when, and the turn
    before it (a reply's subject is often named only in the question it answers)."""
    meta = event.metadata
    speaker = next((meta[k] for k in ("speaker", "name", "author") if isinstance(meta.get(k), str)), "") if meta else ""
    return " ".join(part for part in (speaker, _spoken_date(event.created_at), previous[:CONTEXT_PREVIOUS_CHARS]) if part)


@lru_cache(maxsize=4096)
def _day(stamp: str) -> str:
    try:
        return parse_time(stamp).strftime("%-d %B %Y %A")
    except InvalidInput:
        return ""


def _spoken_date(created_at: str) -> str:
    """"5 March 2024 Tuesday" (a message's time, searchable as words), memoised per day:
    stamps are stored in UTC, so the day is their first ten characters."""
    return _day(created_at[:10]) if len(created_at) >= 10 else _day(created_at)


def event_to_message(event: Event, journal_path: str, cap: int, previous: str = "") -> Message:
    content = _index_text(event.content) or ""
    result = _index_text(event.tool_result)
    meta = dict(event.metadata) if event.metadata else {}
    capped_content = cap_utf16(content, cap)
    capped_result = cap_utf16(result, cap) if result is not None else None
    truncated = capped_content is not content or capped_result is not result
    return Message(
        id=event.id, session=event.session, role=event.role, content=capped_content, created_at=event.created_at,
        type=event.type, tool_name=event.tool_name, tool_args=event.tool_args, tool_result=capped_result,
        metadata=meta, event_key=event.event_key, importance=importance_of(event), truncated=truncated,
        full_content_length=utf16_len(content) if capped_content is not content else None,
        full_tool_result_length=utf16_len(result) if result is not None and capped_result is not result else None,
        journal_path=journal_path, journal_line=event.line, journal_offset=event.offset,
        context=_index_text(search_context(event, previous)) or "",
    )


class Indexer:
    def __init__(self, journal: Journal, store: Store, field_cap: int = 16000,
                 on_indexed: Callable[[list[Message]], None] | None = None) -> None:
        self.journal = journal
        self.store = store
        self.field_cap = field_cap
        self.on_indexed = on_indexed

    def index_session(self, session: str) -> int:
        """Index what the journal has beyond the cursor. Returns rows inserted."""
        line, offset = self.store.cursor(session, self.journal.id)
        end = self.journal.committed_size(session)  # never a group commit still in flight
        if end <= offset:
            return 0
        return self.index_events(session, self.journal.read(session, offset, line, end), (line, offset))

    def index_events(self, session: str, events: Iterable[Event], start: tuple[int, int]) -> int:
        """Index events known to follow the cursor `start` directly (a fresh append)."""
        total = 0
        batch: list[Event] = []
        for event in events:
            batch.append(event)
            if len(batch) >= BATCH:
                total += self._write(session, batch)
                batch = []
        if batch:
            total += self._write(session, batch)
        return total

    def _write(self, session: str, events: list[Event]) -> int:
        path = str(self.journal.path(session))
        sessions: dict[str, Any] = {}
        messages = []
        previous = self._previous_text(session)
        for e in events:
            if e.type == "session":
                sessions.update({k: v for k, v in (e.metadata or {}).items() if v is not None})
            elif e.type in INDEXED_TYPES:
                messages.append(event_to_message(e, path, self.field_cap, previous))
                previous = messages[-1].content or previous
        times = [m.created_at for m in messages] or [e.created_at for e in events]
        settings = sessions.pop("settings", None) or {}
        info = {k: sessions.get(k) for k in ("key", "agent", "channel", "title")}
        self.store.upsert_session(
            Session(id=session, kind=sessions.get("kind") or self._kind(session), settings=settings,
                    created_at=min(times), updated_at=max(times), **info)
        )
        last = events[-1]
        end = (last.line, last.offset + last.nbytes)
        inserted = self.store.insert_messages(session, messages, end, self.journal.id)
        if inserted and self.on_indexed:
            new = set(inserted)
            self.on_indexed([m for m in messages if m.id in new])
        return len(inserted)

    def _previous_text(self, session: str) -> str:
        last = self.store.browse(Filters(session=session), 1, 0, newest_first=True)
        return last[0].content if last else ""

    def _kind(self, session: str) -> str:
        existing = self.store.get_session(session)
        return existing.kind if existing else "normal"

    def index_all(self) -> int:
        """Catch every journal up; a session whose store write fails is retried next pass."""
        total = 0
        for session in self.journal.sessions():
            self.journal.repair(session)
            total += self.index_session(session)
        return total

    def lag(self) -> dict[str, int]:
        """Bytes of journal not yet indexed, per session that has any."""
        sessions = self.journal.sessions()
        if not sessions:  # (and no journal id to ask about: a home never written to may have none)
            return {}
        cursors = self.store.cursors(self.journal.id)
        out = {}
        for session in sessions:
            behind = self.journal.size(session) - cursors.get(session, (0, 0))[1]
            if behind > 0:
                out[session] = behind
        return out

    def rebuild(self) -> int:
        """Drop the whole index and replay every journal."""
        self.store.reset()
        return self.index_all()

