"""Summaries on PostgreSQL: writing a summary, the messages in no leaf, full text and
vectors (the rest is `store/sql/summaries.py`).

Full text is a generated `tsvector` ranked with `ts_rank_cd`, each term its own
`phraseto_tsquery` as for messages; vectors use pgvector's exact cosine distance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from psycopg import errors as pgerrors

from ...errors import Conflict, ModelMismatch
from ...records import Message
from ..sql.messages import M
from ..sql.summaries import SQLSummariesMixin
from ..summaries_base import Summary
from .connection import PostgresConnection
from .rows import _row_to_message, _words, filter_sql


class PostgresSummariesMixin(SQLSummariesMixin, PostgresConnection):
    _filter_sql = staticmethod(filter_sql)

    def put_summary(self, summary: Summary, supersedes: str | None = None) -> bool:
        s = summary
        kind = "message" if s.depth == 0 else "summary"
        try:
            with self._tx() as conn:
                row = conn.execute(
                    "INSERT INTO summaries (id, session_id, depth, content, message_count, earliest_at, latest_at, model, created_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING 1",
                    (s.id, s.session_id, s.depth, s.content.replace("\x00", "\ufffd"), s.message_count, s.earliest_at, s.latest_at,
                     s.model, s.created_at)).fetchone()
                if row is None:
                    return False
                with conn.cursor() as cur:
                    cur.executemany("INSERT INTO summary_sources VALUES (%s, %s, %s, %s, %s)",
                                    [(s.id, src, kind, i, s.session_id) for i, src in enumerate(s.sources)])
                if supersedes:
                    conn.execute("UPDATE summaries SET superseded_by = %s WHERE id = %s AND superseded_by IS NULL", (s.id, supersedes))
        except pgerrors.UniqueViolation:
            raise Conflict(f"a message of {s.id} is already in another leaf") from None
        return True

    def unsummarised(self, session_id: str, limit: int, after: tuple[str, str] | None = None) -> list[Message]:
        past = "AND (m.created_at, m.id) > (%s::timestamptz, %s)" if after else ""
        sql = f"""SELECT {M} FROM messages m WHERE m.session_id = %s {past} AND NOT EXISTS
                  (SELECT 1 FROM summary_sources ss WHERE ss.source_id = m.id AND ss.kind = 'message')
                  ORDER BY m.created_at, m.id LIMIT %s"""
        params = (session_id, after[0], after[1], limit) if after else (session_id, limit)
        return [_row_to_message(r) for r in self._all(sql, params)]

    def sessions_with_unsummarised(self, minimum: int, limit: int) -> list[tuple[str, int]]:
        sql = """SELECT session_id, n FROM (SELECT m.session_id, count(*) - coalesce((SELECT count(*) FROM summary_sources ss
                 WHERE ss.session_id = m.session_id AND ss.kind = 'message'), 0) AS n FROM messages m GROUP BY m.session_id) t
                 WHERE n >= %s ORDER BY n DESC, session_id LIMIT %s"""
        return [(r[0], int(r[1])) for r in self._all(sql, (minimum, limit))]

    def summary_keyword_search(self, terms: list[str], filters: Any, limit: int, match_all: bool) -> list[tuple[str, float]]:
        terms = _words(terms)
        if not terms:
            return []
        where, params = self._summary_where(filters)
        query = (" && " if match_all else " || ").join(["phraseto_tsquery('palimpsest', %s)"] * len(terms))
        sql = f"""WITH q AS (SELECT {query} AS q) SELECT s.id, ts_rank_cd(s.fts, q.q, 1) AS rank FROM summaries s, q
                  WHERE s.fts @@ q.q AND s.superseded_by IS NULL AND {where} ORDER BY rank DESC, s.id LIMIT %s"""
        return [(r[0], float(r[1])) for r in self._fetch(sql, (*terms, *params, limit))]

    def put_summary_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        if not rows:
            return
        dims = {int(np.asarray(v).shape[0]) for _, v in rows}
        with self._tx() as conn:
            known = conn.execute("SELECT max(dim) FROM summary_vectors WHERE model = %s", (model,)).fetchone()
            if len(dims) > 1 or (known and known[0] is not None and known[0] not in dims):
                raise ModelMismatch(f"summary vectors of {model!r} have dimension {known[0] if known else None}; refusing {sorted(dims)}")
            with conn.cursor() as cur:
                cur.executemany(
                    """INSERT INTO summary_vectors (summary_rowid, model, dim, embedding)
                       SELECT rowid, %s, %s, %s FROM summaries WHERE id = %s
                       ON CONFLICT (model, summary_rowid) DO UPDATE SET dim = excluded.dim, embedding = excluded.embedding""",
                    [(model, int(np.asarray(v).shape[0]), np.asarray(v, dtype=np.float32), i) for i, v in rows])

    def summary_vector_search(self, model: str, query: np.ndarray, filters: Any, limit: int) -> list[tuple[str, float]]:
        where, params = self._summary_where(filters)
        vec = np.asarray(query, dtype=np.float32)
        dims = self._fetch("SELECT DISTINCT dim FROM summary_vectors WHERE model = %s", (model,))
        if not dims:
            return []
        if dims[0][0] != vec.shape[0]:
            raise ModelMismatch(f"summary vectors of {model!r} have dimension {dims[0][0]}, the query {vec.shape[0]}")
        sql = f"""SELECT s.id, 1 - (v.embedding <=> %s) FROM summary_vectors v JOIN summaries s ON s.rowid = v.summary_rowid
                  WHERE v.model = %s AND s.superseded_by IS NULL AND {where} ORDER BY v.embedding <=> %s, s.id LIMIT %s"""
        return [(r[0], float(r[1])) for r in self._fetch(sql, (vec, model, *params, vec, limit))]

    def set_synthesized_content(self, message_id: str, content: str) -> bool:
        with self._tx() as conn:
            row = conn.execute("UPDATE messages SET content = %s WHERE id = %s AND content = '' RETURNING 1",
                               (content.replace("\x00", "\ufffd"), message_id)).fetchone()
        return row is not None

    def empty_tool_messages(self, after_rowid: int, limit: int) -> list[tuple[int, Message]]:
        sql = f"""SELECT m.rowid, {M} FROM messages m WHERE m.rowid > %s AND m.tool_name IS NOT NULL AND m.tool_name <> ''
                  AND m.content = '' ORDER BY m.rowid LIMIT %s"""
        return [(int(r[0]), _row_to_message(r[1:])) for r in self._all(sql, (after_rowid, limit))]
