"""Summaries on PostgreSQL: a mixin of `PostgresStore` (it uses the store's `_tx()` / `_read()`).

Full text is a generated `tsvector` ranked with `ts_rank_cd`, each term its own
`phraseto_tsquery` as for messages; vectors use pgvector's exact cosine distance.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg import errors as pgerrors

from ...errors import Conflict, ModelMismatch
from ...records import Message, iso
from ..base import Filters
from ..summaries_base import Summary, SummaryStoreContract
from .rows import _M, _row_to_message, filter_sql

_S = "s.id, s.session_id, s.depth, s.content, s.message_count, s.earliest_at, s.latest_at, s.model, s.created_at, s.superseded_by"
_USAGE = ("calls", "prompt_tokens", "completion_tokens", "failures", "invalid")


def _ts(v: datetime | str) -> str:
    return iso(v) if isinstance(v, datetime) else v


class PostgresSummariesMixin(SummaryStoreContract):
    _tx: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
    _read: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
    _all: Callable[..., list[tuple[Any, ...]]]

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

    def _rows(self, sql: str, params: Any = ()) -> list[Summary]:
        out = [Summary(id=r[0], session_id=r[1], depth=r[2], content=r[3], message_count=r[4], earliest_at=_ts(r[5]),
                       latest_at=_ts(r[6]), model=r[7], created_at=_ts(r[8]), superseded_by=r[9]) for r in self._all(sql, params)]
        if not out:
            return out
        ids = [s.id for s in out]
        sources: dict[str, list[str]] = {}
        for sid, src in self._all("SELECT summary_id, source_id FROM summary_sources WHERE summary_id = ANY(%s) ORDER BY ordinal", (ids,)):
            sources.setdefault(sid, []).append(src)
        parents = dict(self._all(  # type: ignore[arg-type]
            """SELECT ss.source_id, ss.summary_id FROM summary_sources ss JOIN summaries p ON p.id = ss.summary_id
               WHERE ss.source_id = ANY(%s) AND p.superseded_by IS NULL""", (ids,)))
        for s in out:
            s.sources, s.parent_id = sources.get(s.id, []), parents.get(s.id)
        return out

    def get_summaries(self, ids: list[str]) -> list[Summary]:
        if not ids:
            return []
        by_id = {s.id: s for s in self._rows(f"SELECT {_S} FROM summaries s WHERE s.id = ANY(%s)", (list(ids),))}
        return [by_id[i] for i in ids if i in by_id]

    def session_summaries(self, session_id: str, depth: int | None = None, *, orphans: bool = False, live: bool = True) -> list[Summary]:
        clauses, params = ["s.session_id = %s"], [session_id]
        if depth is not None:
            clauses.append("s.depth = %s")
            params.append(depth)  # type: ignore[arg-type]
        if live:
            clauses.append("s.superseded_by IS NULL")
        if orphans:
            clauses.append("""NOT EXISTS (SELECT 1 FROM summary_sources ss JOIN summaries p ON p.id = ss.summary_id
                              WHERE ss.source_id = s.id AND p.superseded_by IS NULL)""")
        return self._rows(f"SELECT {_S} FROM summaries s WHERE {' AND '.join(clauses)} ORDER BY s.depth, s.earliest_at, s.rowid", params)

    def unsummarised(self, session_id: str, limit: int, after: tuple[str, str] | None = None) -> list[Message]:
        past = "AND (m.created_at, m.id) > (%s::timestamptz, %s)" if after else ""
        sql = f"""SELECT {_M} FROM messages m WHERE m.session_id = %s {past} AND NOT EXISTS
                  (SELECT 1 FROM summary_sources ss WHERE ss.source_id = m.id AND ss.kind = 'message')
                  ORDER BY m.created_at, m.id LIMIT %s"""
        params = (session_id, after[0], after[1], limit) if after else (session_id, limit)
        return [_row_to_message(r) for r in self._all(sql, params)]

    def count_unsummarised(self, session_id: str) -> int:
        total = self._all("SELECT count(*) FROM messages WHERE session_id = %s", (session_id,))[0][0]
        done = self._all("""SELECT count(*) FROM summary_sources ss JOIN messages m ON m.id = ss.source_id
                              WHERE ss.session_id = %s AND ss.kind = 'message'""", (session_id,))[0][0]
        return int(total - done)

    def sessions_with_unsummarised(self, minimum: int, limit: int) -> list[tuple[str, int]]:
        sql = """SELECT session_id, n FROM (SELECT m.session_id, count(*) - coalesce((SELECT count(*) FROM summary_sources ss
                 WHERE ss.session_id = m.session_id AND ss.kind = 'message'), 0) AS n FROM messages m GROUP BY m.session_id) t
                 WHERE n >= %s ORDER BY n DESC, session_id LIMIT %s"""
        return [(r[0], int(r[1])) for r in self._all(sql, (minimum, limit))]

    def _summary_where(self, f: Any) -> tuple[str, list[Any]]:
        if f is None:
            return "true", []
        where, params = filter_sql(Filters(session=f.session, sessions=f.sessions, agent=f.agent, channel=f.channel), "s")
        if f.since is not None:
            where += " AND s.latest_at >= %s::timestamptz"
            params.append(f.since)
        if f.until is not None:
            where += " AND s.earliest_at < %s::timestamptz"
            params.append(f.until)
        return where, params

    def summary_keyword_search(self, terms: list[str], filters: Any, limit: int, match_all: bool) -> list[tuple[str, float]]:
        terms = [t.replace("\x00", "") for t in terms if t.strip()]
        if not terms:
            return []
        where, params = self._summary_where(filters)
        query = (" && " if match_all else " || ").join(["phraseto_tsquery('palimpsest', %s)"] * len(terms))
        sql = f"""WITH q AS (SELECT {query} AS q) SELECT s.id, ts_rank_cd(s.fts, q.q, 1) AS rank FROM summaries s, q
                  WHERE s.fts @@ q.q AND s.superseded_by IS NULL AND {where} ORDER BY rank DESC, s.id LIMIT %s"""
        return [(r[0], float(r[1])) for r in self._all(sql, (*terms, *params, limit))]

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
        dims = self._all("SELECT DISTINCT dim FROM summary_vectors WHERE model = %s", (model,))
        if not dims:
            return []
        if dims[0][0] != vec.shape[0]:
            raise ModelMismatch(f"summary vectors of {model!r} have dimension {dims[0][0]}, the query {vec.shape[0]}")
        sql = f"""SELECT s.id, 1 - (v.embedding <=> %s) FROM summary_vectors v JOIN summaries s ON s.rowid = v.summary_rowid
                  WHERE v.model = %s AND s.superseded_by IS NULL AND {where} ORDER BY v.embedding <=> %s, s.id LIMIT %s"""
        return [(r[0], float(r[1])) for r in self._all(sql, (vec, model, *params, vec, limit))]

    def summaries_without_vectors(self, model: str, limit: int) -> list[Summary]:
        return self._rows(f"""SELECT {_S} FROM summaries s WHERE NOT EXISTS (SELECT 1 FROM summary_vectors v
                              WHERE v.model = %s AND v.summary_rowid = s.rowid) ORDER BY s.rowid LIMIT %s""", (model, limit))

    def summary_stats(self) -> dict[str, Any]:
        rows = self._all("SELECT depth, count(*) FROM summaries WHERE superseded_by IS NULL GROUP BY depth")
        covered = self._all("SELECT count(*) FROM summary_sources WHERE kind = 'message'")[0][0]
        return {"leaf": 0, "branch": 0, "root": 0, **{("leaf", "branch", "root")[d]: n for d, n in rows if d in (0, 1, 2)},
                "messages_summarised": covered}

    def add_llm_usage(self, task: str, calls: int = 0, prompt_tokens: int = 0, completion_tokens: int = 0,
                      failures: int = 0, invalid: int = 0) -> None:
        with self._tx() as conn:
            conn.execute(
                """INSERT INTO llm_usage AS u VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (task) DO UPDATE SET
                   calls = u.calls + excluded.calls, prompt_tokens = u.prompt_tokens + excluded.prompt_tokens,
                   completion_tokens = u.completion_tokens + excluded.completion_tokens,
                   failures = u.failures + excluded.failures, invalid = u.invalid + excluded.invalid""",
                (task, calls, prompt_tokens, completion_tokens, failures, invalid))

    def llm_usage(self) -> dict[str, dict[str, int]]:
        rows = self._all(f"SELECT task, {', '.join(_USAGE)} FROM llm_usage ORDER BY task")
        return {r[0]: {k: int(v) for k, v in zip(_USAGE, r[1:])} for r in rows}

    def set_synthesized_content(self, message_id: str, content: str) -> bool:
        with self._tx() as conn:
            row = conn.execute("UPDATE messages SET content = %s WHERE id = %s AND content = '' RETURNING 1",
                               (content.replace("\x00", "\ufffd"), message_id)).fetchone()
        return row is not None

    def empty_tool_messages(self, after_rowid: int, limit: int) -> list[tuple[int, Message]]:
        sql = f"""SELECT m.rowid, {_M} FROM messages m WHERE m.rowid > %s AND m.tool_name IS NOT NULL AND m.tool_name <> ''
                  AND m.content = '' ORDER BY m.rowid LIMIT %s"""
        return [(int(r[0]), _row_to_message(r[1:])) for r in self._all(sql, (after_rowid, limit))]
