"""Summaries on SQLite: the FTS5 row of each summary, the messages in no leaf, and vectors
(the rest is `store/sql/summaries.py`).

Summary vectors are searched exactly in numpy: there is one summary for tens of messages.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import numpy as np

from ...errors import Conflict, ModelMismatch
from ...records import Message
from ..sql.messages import M
from ..sql.summaries import SQLSummariesMixin
from ..summaries_base import Summary
from .connection import SQLiteConnection
from .rows import _FTS_COLUMNS, _TRI_COLUMNS, filter_sql, fts_phrase, row_to_message


class SQLiteSummariesMixin(SQLSummariesMixin, SQLiteConnection):
    _filter_sql = staticmethod(filter_sql)

    def put_summary(self, summary: Summary, supersedes: str | None = None) -> bool:
        s = summary
        kind = "message" if s.depth == 0 else "summary"
        with self._tx() as conn:
            if conn.execute("SELECT 1 FROM summaries WHERE id = ?", (s.id,)).fetchone():
                return False
            cur = conn.execute(
                "INSERT INTO summaries (id, session_id, depth, content, message_count, earliest_at, latest_at, model, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (s.id, s.session_id, s.depth, s.content, s.message_count, s.earliest_at, s.latest_at, s.model, s.created_at))
            conn.execute("INSERT INTO summaries_fts (rowid, content) VALUES (?, ?)", (cur.lastrowid, s.content))
            try:
                conn.executemany("INSERT INTO summary_sources VALUES (?, ?, ?, ?, ?)",
                                 [(s.id, src, kind, i, s.session_id) for i, src in enumerate(s.sources)])
            except sqlite3.IntegrityError:
                raise Conflict(f"a message of {s.id} is already in another leaf") from None
            if supersedes:
                conn.execute("UPDATE summaries SET superseded_by = ? WHERE id = ? AND superseded_by IS NULL", (s.id, supersedes))
        return True

    def unsummarised(self, session_id: str, limit: int, after: tuple[str, str] | None = None) -> list[Message]:
        past = "AND (m.created_at > ? OR (m.created_at = ? AND m.id > ?))" if after else ""
        sql = f"""SELECT {M} FROM messages m WHERE m.session_id = ? {past} AND NOT EXISTS
                  (SELECT 1 FROM summary_sources ss WHERE ss.source_id = m.id AND ss.kind = 'message')
                  ORDER BY m.created_at, m.id LIMIT ?"""
        params = (session_id, after[0], after[0], after[1], limit) if after else (session_id, limit)
        return [row_to_message(r) for r in self._reader.execute(sql, params)]

    def sessions_with_unsummarised(self, minimum: int, limit: int) -> list[tuple[str, int]]:
        sql = """SELECT m.session_id, count(*) - coalesce((SELECT count(*) FROM summary_sources ss
                 WHERE ss.session_id = m.session_id AND ss.kind = 'message'), 0) AS n
                 FROM messages m GROUP BY m.session_id HAVING n >= ? ORDER BY n DESC, m.session_id LIMIT ?"""
        return [(r[0], int(r[1])) for r in self._reader.execute(sql, (minimum, limit))]

    def summary_keyword_search(self, terms: list[str], filters: Any, limit: int, match_all: bool) -> list[tuple[str, float]]:
        if not terms:
            return []
        match = (" " if match_all else " OR ").join(fts_phrase(t) for t in terms)
        where, params = self._summary_where(filters)
        sql = f"""SELECT s.id, bm25(summaries_fts) AS rank FROM summaries_fts JOIN summaries s ON s.rowid = summaries_fts.rowid
                  WHERE summaries_fts MATCH ? AND s.superseded_by IS NULL AND {where} ORDER BY rank LIMIT ?"""
        return [(r[0], -float(r[1])) for r in self._reader.execute(sql, (match, *params, limit))]

    def put_summary_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        if not rows:
            return
        with self._tx() as conn:
            known = conn.execute("SELECT max(dim) FROM summary_vectors WHERE model = ?", (model,)).fetchone()[0]
            dims = {int(v.shape[0]) for _, v in rows}
            if len(dims) > 1 or (known is not None and known not in dims):
                raise ModelMismatch(f"summary vectors of {model!r} have dimension {known}; refusing {sorted(dims)}")
            rowids = dict(conn.execute("SELECT id, rowid FROM summaries WHERE id IN (SELECT value FROM json_each(?))",
                                       (json.dumps([i for i, _ in rows]),)).fetchall())
            conn.executemany("INSERT OR REPLACE INTO summary_vectors VALUES (?, ?, ?, ?)",
                             [(rowids[i], model, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for i, v in rows if i in rowids])

    def summary_vector_search(self, model: str, query: np.ndarray, filters: Any, limit: int) -> list[tuple[str, float]]:
        where, params = self._summary_where(filters)
        rows = self._reader.execute(
            f"""SELECT s.id, v.vector FROM summary_vectors v JOIN summaries s ON s.rowid = v.summary_rowid
                WHERE v.model = ? AND s.superseded_by IS NULL AND {where}""", (model, *params)).fetchall()
        if not rows:
            return []
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        if matrix.shape[1] != query.shape[0]:
            raise ModelMismatch(f"summary vectors of {model!r} have dimension {matrix.shape[1]}, the query {query.shape[0]}")
        scores = matrix @ np.asarray(query, dtype=np.float32)
        order = np.argsort(-scores)[:limit]
        return [(rows[i][0], float(scores[i])) for i in order]

    def set_synthesized_content(self, message_id: str, content: str) -> bool:
        with self._tx() as conn:
            row = conn.execute(f"SELECT rowid, {_FTS_COLUMNS} FROM messages WHERE id = ? AND content = ''", (message_id,)).fetchone()
            if row is None:
                return False
            # the trigram index holds rows up to its cursor only (migration 0009); later ones it
            # reads when it catches up, new content included
            in_tri = conn.execute("SELECT ? <= upto FROM trigram_cursor", (row[0],)).fetchone()[0]
            conn.execute(f"INSERT INTO messages_fts (messages_fts, rowid, {_FTS_COLUMNS}) VALUES ('delete', ?, ?, ?, ?, ?)", row)
            if in_tri:
                conn.execute(f"INSERT INTO messages_tri (messages_tri, rowid, {_TRI_COLUMNS}) VALUES ('delete', ?, ?, ?)", (row[0], row[1], row[3]))
            conn.execute("UPDATE messages SET content = ? WHERE rowid = ?", (content, row[0]))
            conn.execute(f"INSERT INTO messages_fts (rowid, {_FTS_COLUMNS}) SELECT rowid, {_FTS_COLUMNS} FROM messages WHERE rowid = ?", (row[0],))
            if in_tri:
                conn.execute(f"INSERT INTO messages_tri (rowid, {_TRI_COLUMNS}) SELECT rowid, {_TRI_COLUMNS} FROM messages WHERE rowid = ?", (row[0],))
        return True

    def empty_tool_messages(self, after_rowid: int, limit: int) -> list[tuple[int, Message]]:
        sql = f"""SELECT m.rowid, {M} FROM messages m WHERE m.rowid > ? AND m.tool_name IS NOT NULL AND m.tool_name != ''
                  AND m.content = '' ORDER BY m.rowid LIMIT ?"""
        return [(r[0], row_to_message(r[1:])) for r in self._reader.execute(sql, (after_rowid, limit))]
