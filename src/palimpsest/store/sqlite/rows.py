"""The messages' and sessions' columns on SQLite, how rows convert, and `Filters` as SQL:
what the other modules of the backend share."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from ...records import Message
from ..base import Filters

_FTS_COLUMNS = "content, tool_name, tool_result, context"  # messages_fts (migration 0004)


_TRI_COLUMNS = "content, tool_result"  # messages_tri (migration 0002)


def fts_phrase(term: str) -> str:
    """A user term as one FTS5 phrase: never parsed as query syntax."""
    return '"' + term.replace('"', '""') + '"'


def row_to_message(row: tuple[Any, ...]) -> Message:
    return Message(
        id=row[0], session=row[1], type=row[2], role=row[3], content=row[4], tool_name=row[5],
        tool_args=json.loads(row[6]) if row[6] is not None else None, tool_result=row[7],
        metadata=json.loads(row[8]) if row[8] else {}, created_at=row[9], event_key=row[10],
        importance=row[11], access_count=row[12], last_accessed_at=row[13], truncated=bool(row[14]),
        full_content_length=row[15], full_tool_result_length=row[16], journal_path=row[17],
        journal_line=row[18], journal_offset=row[19], context=row[20], journal_id=row[21],
    )


def message_params(m: Message) -> tuple[Any, ...]:
    return (
        m.id, m.session, m.type, m.role, m.content, m.tool_name,
        json.dumps(m.tool_args, ensure_ascii=False, allow_nan=False) if m.tool_args is not None else None,
        m.tool_result, json.dumps(m.metadata, ensure_ascii=False, allow_nan=False) if m.metadata else "{}", m.created_at, m.event_key,
        m.importance, m.access_count, m.last_accessed_at, int(m.truncated), m.full_content_length,
        m.full_tool_result_length, m.journal_path, m.journal_line, m.journal_offset, m.context, m.journal_id,
    )


@lru_cache(maxsize=4)
def _listed(ids: tuple[str, ...]) -> str:
    """`ids` as the JSON `json_each` reads, once per list: a recall's search asks for it about fifteen times, and with
    20,000 sessions of other repositories left out each had cost 3 ms (found in review)."""
    return json.dumps(ids)


def filter_sql(f: Filters, alias: str = "m") -> tuple[str, list[Any]]:
    """`f` as SQL over the messages (or any rows with a session_id) aliased `alias`, and its parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if f.session is not None:
        clauses.append(f"{alias}.session_id = ?")
        params.append(f.session)
    if f.sessions is not None:
        clauses.append(f"{alias}.session_id IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(f.sessions))
    if f.apart:
        clauses.append(f"{alias}.session_id NOT IN (SELECT value FROM json_each(?))")
        params.append(_listed(tuple(f.apart)))
    if f.role is not None:
        clauses.append(f"{alias}.role = ?")
        params.append(f.role)
    if f.since is not None:
        clauses.append(f"{alias}.created_at >= ?")
        params.append(f.since)
    if f.until is not None:
        clauses.append(f"{alias}.created_at < ?")
        params.append(f.until)
    for column, value in (("agent", f.agent), ("channel", f.channel)):
        if value is not None:
            clauses.append(f"{alias}.session_id IN (SELECT id FROM sessions WHERE {column} = ?)")
            params.append(value)
    if f.tag is not None:
        clauses.append(f"{alias}.session_id IN (SELECT session_id FROM tags WHERE key = ? AND value = ? AND state = 'accepted')")
        params.extend(f.tag.split(":", 1))
    return (" AND ".join(clauses) or "1"), params
