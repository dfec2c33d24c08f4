"""Message vectors on PostgreSQL with pgvector.

The `embedding` column has no fixed dimension, because the dimension is known only when
the first model's vectors arrive. Once a model holds `hnsw_threshold` vectors (10,000) a
partial HNSW index on `(embedding::vector(dim)) WHERE dim = <dim>` is built (`hnsw.py`);
below that an exact scan takes a few milliseconds, and inserting into an HNSW graph
costs ~2.5 ms per vector on a 2-core machine, while building it over existing rows is
several times faster (`build_vector_index()` after a bulk load). Only one model may hold
vectors at a time (ModelMismatch otherwise), so one such index is in use. Unfiltered
queries use it (approximate, `hnsw.ef_search` raised to the limit). A filter that leaves
at most 5,000 messages is searched exactly over their vectors, so a rare filter is never
crowded out by a global top-k; a broader one uses the index with pgvector's iterative
scan (0.8+), which keeps walking the graph until enough rows pass the filter.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import psycopg

from ...errors import InvalidInput, ModelMismatch
from ...records import Message
from ..base import Filters
from ..sql.messages import M
from .connection import PostgresConnection
from .hnsw import BUILD_MEMORY_MB, BUILD_WORKERS, build_hnsw, index_exists
from .rows import _row_to_message, _vector_text, filter_sql

_VECTOR_LOCK = "palimpsest:vectors"


_EXACT_MAX = 5_000  # filtered vector search is exact up to this many candidate messages


class PostgresVectorsMixin(PostgresConnection):
    # set by the store
    hnsw_threshold: int
    index_build_memory_mb: int
    index_build_workers: int
    _pgvector_version: tuple[int, int] | None = None

    # -- vectors -------------------------------------------------------------
    def put_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        if not rows:
            return
        dims = {int(np.asarray(v).shape[0]) for _, v in rows}
        with self._tx() as conn:
            # One writer of vectors at a time, so two models can never slip in together.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (_VECTOR_LOCK,))
            for other, dim in conn.execute("SELECT model, dim FROM vector_counts"):
                if other != model:
                    raise ModelMismatch(
                        f"the index holds vectors of {other!r}; refusing to mix in {model!r}. "
                        "Run `palimpsest reindex` after a model change."
                    )
                dims.add(dim)
            if len(dims) != 1:
                raise InvalidInput(f"vectors of {model!r} must all have one dimension, got {sorted(dims)}")
            dim = dims.pop()
            # One statement for the batch: the vectors travel as text ('[x,y,…]', parsed in C).
            conn.execute(
                """INSERT INTO vectors (message_rowid, model, dim, embedding)
                   SELECT m.rowid, %s, %s, u.v::vector FROM unnest(%s::text[], %s::text[]) AS u(id, v)
                   JOIN messages m ON m.id = u.id
                   ON CONFLICT (model, message_rowid) DO UPDATE SET dim = excluded.dim, embedding = excluded.embedding""",
                (model, dim, [i for i, _ in rows], [_vector_text(v) for _, v in rows]),
            )
            count = conn.execute("SELECT count FROM vector_counts WHERE model = %s", (model,)).fetchone()
            if count and count[0] >= self.hnsw_threshold:
                self._ensure_vector_index(conn, dim, self.index_build_memory_mb, self.index_build_workers)

    def build_vector_index(self) -> None:
        """Build the HNSW index now, whatever the count (after a bulk load, say)."""
        with self._tx() as conn:
            for (dim,) in conn.execute("SELECT dim FROM vector_counts").fetchall():
                self._ensure_vector_index(conn, dim, self.index_build_memory_mb, self.index_build_workers)

    @staticmethod
    def _ensure_vector_index(conn: psycopg.Connection[Any], dim: int, memory_cap_mb: int = BUILD_MEMORY_MB,
                             workers: int = BUILD_WORKERS) -> None:
        """Build the partial HNSW index of `dim` if it is missing (sized as `hnsw.py` says)."""
        if not index_exists(conn, "vectors", f"vectors_hnsw_{dim}"):
            rows = conn.execute("SELECT coalesce(sum(count), 0) FROM vector_counts WHERE dim = %s", (dim,)).fetchone()
            build_hnsw(conn, "vectors", f"vectors_hnsw_{dim}", dim, int(rows[0]) if rows else 0, memory_cap_mb, workers)

    def vector_search(self, model: str, query: np.ndarray, filters: Filters, limit: int) -> list[tuple[str, float]]:
        info = self.vector_models().get(model)
        if info is None or limit <= 0:
            return []
        dim = info["dim"]
        q = np.asarray(query, dtype=np.float32)
        if q.shape != (dim,):
            raise InvalidInput(f"query vector has shape {q.shape}; {model!r} vectors have {dim} dimensions")
        where, params = filter_sql(filters)
        with self._tx() as conn:
            if filters != Filters() and self._few_rows(conn, where, params):
                # Exact over the filtered messages' vectors, fetched one by one through the
                # primary key (a join would read every vector of the model; OFFSET 0 keeps
                # the planner from flattening the lateral subquery into one).
                sql = f"""SELECT c.id, 1 - d.dist FROM (SELECT m.rowid, m.id FROM messages m WHERE {where}) c
                          CROSS JOIN LATERAL (SELECT v.embedding <=> %s AS dist FROM vectors v
                                              WHERE v.model = %s AND v.message_rowid = c.rowid OFFSET 0) d
                          ORDER BY d.dist LIMIT %s"""
                rows = conn.execute(sql, (*params, q, model, limit)).fetchall()
                return [(r[0], float(r[1])) for r in rows]
            # The partial HNSW index's own expression, so the planner can use it; with a
            # filter, pgvector's iterative scan walks on until enough rows pass it.
            distance = f"v.embedding::vector({dim}) <=> %s::vector({dim})"
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(limit, 1000))}")
            if filters != Filters() and self._iterative_scan(conn):
                conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
                conn.execute("SET LOCAL hnsw.max_scan_tuples = 100000")
            sql = f"""SELECT m.id, 1 - ({distance}) FROM vectors v JOIN messages m ON m.rowid = v.message_rowid
                      WHERE v.model = %s AND v.dim = {dim} AND {where} ORDER BY {distance} LIMIT %s"""
            rows = conn.execute(sql, (q, model, *params, q, limit)).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    @staticmethod
    def _few_rows(conn: psycopg.Connection[Any], where: str, params: list[Any]) -> bool:
        """Whether the filter leaves at most `_EXACT_MAX` messages: then an exact scan of their
        vectors is fast and never misses; above it, the HNSW index with an iterative scan."""
        row = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM messages m WHERE {where} LIMIT {_EXACT_MAX + 1}) c",
                           params).fetchone()
        return bool(row and row[0] <= _EXACT_MAX)

    def _iterative_scan(self, conn: psycopg.Connection[Any]) -> bool:
        """pgvector 0.8 and later filter inside the HNSW scan (`hnsw.iterative_scan`)."""
        if self._pgvector_version is None:
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
            parts = [int(x) for x in re.findall(r"\d+", row[0] if row else "0")[:2]] + [0, 0]
            self._pgvector_version = (parts[0], parts[1])
        return self._pgvector_version >= (0, 8)

    def get_vectors(self, model: str, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        rows = self._all(
            """SELECT m.id, v.embedding FROM vectors v JOIN messages m ON m.rowid = v.message_rowid
               WHERE v.model = %s AND m.id = ANY(%s)""",
            (model, list(ids)),
        )
        return {i: np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=np.float32) for i, v in rows}

    def vector_models(self) -> dict[str, dict[str, int]]:
        rows = self._all("SELECT model, dim, count FROM vector_counts ORDER BY model")
        return {m: {"dim": d, "count": n} for m, d, n in rows}

    def messages_without_vectors(self, model: str, limit: int) -> list[Message]:
        sql = f"""SELECT {M} FROM messages m WHERE NOT EXISTS
                  (SELECT 1 FROM vectors v WHERE v.model = %s AND v.message_rowid = m.rowid) ORDER BY m.rowid LIMIT %s"""
        return [_row_to_message(r) for r in self._all(sql, (model, limit))]

    def drop_vectors(self, model: str | None = None) -> int:
        with self._tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (_VECTOR_LOCK,))
            if model is None:
                n = conn.execute("DELETE FROM vectors").rowcount
            else:
                n = conn.execute("DELETE FROM vectors WHERE model = %s", (model,)).rowcount
            live = {r[0] for r in conn.execute("SELECT dim FROM vector_counts")}
            for (name,) in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'vectors' AND indexname LIKE 'vectors_hnsw_%%'"
            ).fetchall():
                if int(name.rsplit("_", 1)[1]) not in live:
                    conn.execute(f"DROP INDEX IF EXISTS {name}")
        return n
