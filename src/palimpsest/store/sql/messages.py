"""Reading sessions, messages and journal cursors in SQL both backends run (`store/sql/dialect.py`).

Writing them, keyword and substring search, statistics and resets differ per backend
(locks, full-text rows, NUL bytes), and stay in `store/sqlite/` and `store/postgres/`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...records import Message, Session
from ..base import Filters
from .dialect import SQLBackend

MESSAGE_COLUMNS = (
    "id, session_id, type, role, content, tool_name, tool_args, tool_result, metadata, created_at, "
    "event_key, importance, access_count, last_accessed_at, truncated, full_content_length, "
    "full_tool_result_length, journal_path, journal_line, journal_offset, context, journal_id"
)
M = ", ".join(f"m.{c.strip()}" for c in MESSAGE_COLUMNS.split(","))  # the columns of messages `m`, in Message's order
SESSION_COLUMNS = "id, key, agent, channel, title, kind, settings, created_at, updated_at"


class SQLMessagesMixin(SQLBackend):
    _filter_sql: Callable[..., tuple[str, list[Any]]]  # the backend's Filters as SQL (`rows.filter_sql`)
    _message: Callable[[tuple[Any, ...]], Message]  # a row of `M` as a Message (`rows.row_to_message`)

    def _session(self, r: tuple[Any, ...]) -> Session:
        t = self.dialect.load_time
        return Session(id=r[0], key=r[1], agent=r[2], channel=r[3], title=r[4], kind=r[5],
                       settings=self.dialect.load_json(r[6]) if r[6] else {}, created_at=t(r[7]), updated_at=t(r[8]))

    def get_session(self, session_id: str) -> Session | None:
        rows = self._fetch(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,))
        return self._session(rows[0]) if rows else None

    def list_sessions(self, filters: Filters, limit: int = 100, offset: int = 0) -> list[Session]:
        clauses, params = [], []
        for column, value in (("id", filters.session), ("agent", filters.agent), ("channel", filters.channel)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        sql = f"""SELECT {SESSION_COLUMNS} FROM sessions WHERE {' AND '.join(clauses) or self.dialect.true}
                  ORDER BY updated_at DESC, id LIMIT ? OFFSET ?"""
        return [self._session(r) for r in self._fetch(sql, (*params, limit, offset))]

    def cursor(self, session_id: str, journal: str = "") -> tuple[int, int]:
        rows = self._fetch("SELECT line, byte_offset FROM journal_cursors WHERE journal_id = ? AND session_id = ?", (journal, session_id))
        return (rows[0][0], rows[0][1]) if rows else (0, 0)

    def forget_cursor(self, session_id: str, journal: str = "") -> None:
        """The one way a cursor goes back: to nothing, when its journal no longer holds what
        it points past (a journal torn after it was indexed); the session is indexed anew."""
        with self._writing() as run:
            run("DELETE FROM journal_cursors WHERE journal_id = ? AND session_id = ?", (journal, session_id))

    def cursors(self, journal: str = "") -> dict[str, tuple[int, int]]:
        sql = "SELECT session_id, line, byte_offset FROM journal_cursors WHERE journal_id = ?"
        return {r[0]: (r[1], r[2]) for r in self._fetch(sql, (journal,))}

    def get_messages(self, ids: list[str]) -> list[Message]:
        if not ids:
            return []
        where, param = self.dialect.in_list("m.id", list(ids))
        by_id = {r[0]: self._message(r) for r in self._fetch(f"SELECT {M} FROM messages m WHERE {where}", (param,))}
        return [by_id[i] for i in ids if i in by_id]

    def ids_by_key(self, session_id: str, keys: list[str]) -> dict[str, str]:
        if not keys:
            return {}
        where, param = self.dialect.in_list("event_key", list(keys))
        return {r[0]: r[1] for r in self._fetch(f"SELECT event_key, id FROM messages WHERE session_id = ? AND {where}",
                                                (session_id, param))}

    def keys_elsewhere(self, session_id: str, keys: list[str]) -> dict[str, str]:
        if not keys:
            return {}
        where, param = self.dialect.in_list("event_key", list(keys))
        rows = self._fetch(f"SELECT event_key, id FROM messages WHERE {where} AND session_id <> ? ORDER BY id", (param, session_id))
        return {k: i for k, i in reversed(rows)}  # the first written, where several sessions hold a key

    def journal_paths(self, session_id: str) -> list[tuple[str | None, str]]:
        return [(r[0], r[1]) for r in self._fetch("SELECT DISTINCT journal_id, journal_path FROM messages WHERE session_id = ? "
                                                  "AND journal_path IS NOT NULL AND journal_path <> ''", (session_id,))]

    def journal_sessions(self) -> list[tuple[str | None, str, str]]:
        return [(r[0], r[1], r[2]) for r in self._fetch("SELECT DISTINCT journal_id, journal_path, session_id FROM messages "
                                                        "WHERE journal_path IS NOT NULL AND journal_path <> '' ORDER BY 2, 3")]

    def ids_ending(self, tail: str, limit: int) -> list[str]:
        if not tail.isalnum():  # a short id is letters and digits: nothing for LIKE to read as a pattern
            return []
        return [r[0] for r in self._fetch("SELECT id FROM messages WHERE id LIKE ? ORDER BY id LIMIT ?", (f"evt_%{tail}", limit))]

    def browse(self, filters: Filters, limit: int, offset: int, newest_first: bool = False) -> list[Message]:
        where, params = self._filter_sql(filters)
        order = "DESC" if newest_first else "ASC"
        sql = f"SELECT {M} FROM messages m WHERE {where} ORDER BY m.created_at {order}, m.id {order} LIMIT ? OFFSET ?"
        return [self._message(r) for r in self._fetch(sql, (*params, limit, offset))]

    def admitted(self, ids: list[str], filters: Filters) -> set[str]:
        if not ids:
            return set()
        where, params = self._filter_sql(filters)
        among, param = self.dialect.in_list("m.id", list(ids))
        return {r[0] for r in self._fetch(f"SELECT m.id FROM messages m WHERE {among} AND {where}", (param, *params))}

    def count_cut(self, filters: Filters) -> int:
        where, params = self._filter_sql(filters)
        return int(self._fetch(f"SELECT count(*) FROM messages m WHERE m.truncated AND {where}", tuple(params))[0][0])

    def scan_cut(self, filters: Filters, limit: int, after_rowid: int = 0) -> list[tuple[int, Message]]:
        return self.scan(filters, limit, after_rowid, cut=True)

    def scan(self, filters: Filters, limit: int, after_rowid: int = 0, cut: bool = False) -> list[tuple[int, Message]]:
        where, params = self._filter_sql(filters)
        where = f"m.truncated AND {where}" if cut else where
        sql = f"SELECT m.rowid, {M} FROM messages m WHERE m.rowid > ? AND {where} ORDER BY m.rowid LIMIT ?"
        return [(r[0], self._message(r[1:])) for r in self._fetch(sql, (after_rowid, *params, limit))]
