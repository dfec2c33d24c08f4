"""The messages' and sessions' columns on PostgreSQL, how rows and values convert (times,
NUL bytes), and `Filters` as SQL: what the other modules of the backend share."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from ...records import Message, iso
from ..base import Filters


def _text(value: str | None) -> str | None:
    """PostgreSQL text cannot hold NUL; the indexer already replaces it, this is the backstop."""
    return value.replace("\x00", "\ufffd") if value and "\x00" in value else value


_MARKS = str.maketrans({c: " " for c in "/._:@=+~#\\?&%|-"})  # as migration 0015's palimpsest_words


def _words(terms: list[str]) -> list[str]:
    """Query terms cut as the index cuts its text (`palimpsest_words`, migration 0015): the
    marks that join a path, host or version into one token are spaces, so "messages.py" is
    the phrase messages py, as in SQLite's FTS5. Empty terms are dropped."""
    out = [(_text(t) or "").translate(_MARKS) for t in terms]
    return [t for t in out if t.strip()]


def _clean(value: Any) -> Any:
    """A JSON value without NUL in any string: jsonb refuses `\\u0000`."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _ts(value: datetime | None) -> str | None:
    return iso(value) if value is not None else None


def _row_to_message(row: tuple[Any, ...]) -> Message:
    return Message(
        id=row[0], session=row[1], type=row[2], role=row[3], content=row[4], tool_name=row[5],
        tool_args=json.loads(row[6]) if row[6] is not None else None, tool_result=row[7],
        metadata=json.loads(row[8]) if row[8] else {}, created_at=iso(row[9]), event_key=row[10],
        importance=row[11], access_count=row[12], last_accessed_at=_ts(row[13]), truncated=bool(row[14]),
        full_content_length=row[15], full_tool_result_length=row[16], journal_path=row[17],
        journal_line=row[18], journal_offset=row[19], context=row[20], journal_id=row[21],
    )


def _message_params(m: Message) -> tuple[Any, ...]:
    return (
        m.id, m.session, m.type, m.role, _text(m.content) or "", _text(m.tool_name),
        _text(json.dumps(m.tool_args, ensure_ascii=False, allow_nan=False)) if m.tool_args is not None else None,
        _text(m.tool_result), _text(json.dumps(m.metadata, ensure_ascii=False, allow_nan=False)), m.created_at, m.event_key,
        m.importance, m.access_count, m.last_accessed_at, bool(m.truncated), m.full_content_length,
        m.full_tool_result_length, m.journal_path, m.journal_line, m.journal_offset, _text(m.context) or "", m.journal_id,
    )


def _like_pattern(fragment: str) -> str:
    """`fragment` as an ILIKE pattern matching it anywhere, with no wildcard of its own."""
    escaped = fragment.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _vector_text(v: np.ndarray) -> str:
    return "[" + ",".join(map(repr, np.asarray(v, dtype=np.float32).tolist())) + "]"


def _lock_session(conn: psycopg.Connection[Any], session_id: str) -> None:
    """Serialise the writers of one session, across processes and machines, until commit."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (session_id,))


def filter_sql(f: Filters, alias: str = "m") -> tuple[str, list[Any]]:
    """`f` as SQL over the messages (or any rows with a session_id) aliased `alias`, and its parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    for test, value in (
        (f"{alias}.session_id = %s", f.session),
        (f"{alias}.session_id = ANY(%s)", f.sessions),
        (f"NOT ({alias}.session_id = ANY(%s))", list(f.apart) if f.apart else None),
        (f"{alias}.role = %s", f.role),
        (f"{alias}.created_at >= %s::timestamptz", f.since),
        (f"{alias}.created_at < %s::timestamptz", f.until),
        (f"{alias}.session_id IN (SELECT id FROM sessions WHERE agent = %s)", f.agent),
        (f"{alias}.session_id IN (SELECT id FROM sessions WHERE channel = %s)", f.channel),
    ):
        if value is not None:
            clauses.append(test)
            params.append(value)
    if f.tag is not None:
        clauses.append(f"{alias}.session_id IN (SELECT session_id FROM tags WHERE key = %s AND value = %s AND state = 'accepted')")
        params.extend(f.tag.split(":", 1))
    return (" AND ".join(clauses) or "true"), params
