"""Facts on SQLite: entities in `fact_entities`, FTS5 and vectors (the rest is `store/sql/facts.py`).

Vectors of facts are searched exactly in numpy: fact vaults are small next to
transcripts (thousands of rows, not millions), so no ANN index is kept.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import numpy as np

from ...errors import Conflict, ModelMismatch
from ...segment import keyword_words
from ..facts_base import FactQuery, FactRow
from ..sql.dialect import Runner
from ..sql.facts import FACT_COLUMNS, SQLFactsMixin
from .connection import SQLiteConnection
from .rows import fts_phrase


class SQLiteFactsMixin(SQLFactsMixin, SQLiteConnection):
    _ENTITY_MATCH = ("(f.rowid IN (SELECT fact_rowid FROM fact_entities WHERE entity = ?) "
                     "OR f.rowid IN (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?))")

    @staticmethod
    def _entity_phrase(entity: str) -> str:
        return fts_phrase(entity)

    def _insert_fact(self, run: Runner, f: FactRow) -> None:
        try:
            cur = run.conn.execute(
                f"INSERT INTO facts ({FACT_COLUMNS}, keywords) VALUES ({', '.join('?' * 18)})",
                (f.id, f.vault, f.text, f.norm, f.kind, json.dumps(f.entities, ensure_ascii=False), f.salience,
                 f.base_confidence, f.valid_from, f.recorded_at, f.valid_to, f.ended_at, f.invalidated_at, f.expired_at,
                 f.supersedes, f.superseded_by, json.dumps(f.metadata, ensure_ascii=False, sort_keys=True), keyword_words(f.text)),
            )
        except sqlite3.IntegrityError:
            raise Conflict(f"a fact with id {f.id!r} already exists") from None
        run.many("INSERT OR IGNORE INTO fact_entities VALUES (?, ?)", [(cur.lastrowid, e.lower()) for e in f.entities])

    def fact_keyword_search(self, terms: list[str], q: FactQuery, limit: int, match_all: bool) -> list[tuple[str, float]]:
        if not terms:
            return []
        match = (" " if match_all else " OR ").join(fts_phrase(t) for t in terms)
        where, params = self._fact_where(q)
        sql = f"""SELECT f.id, bm25(facts_fts, 1.0, 0.5, 1.0) AS rank FROM facts_fts JOIN facts f ON f.rowid = facts_fts.rowid
                  WHERE facts_fts MATCH ? AND {where} ORDER BY rank LIMIT ?"""
        return [(r[0], -float(r[1])) for r in self._reader.execute(sql, (match, *params, limit))]

    # -- vectors -------------------------------------------------------------
    def put_fact_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        if not rows:
            return
        dims = {int(v.shape[0]) for _, v in rows}
        known = self._reader.execute("SELECT max(dim) FROM fact_vectors WHERE model = ?", (model,)).fetchone()[0]
        if len(dims) > 1 or (known is not None and known not in dims):
            raise ModelMismatch(f"fact vectors of {model!r} have dimension {known}; refusing {sorted(dims)}")
        with self._tx() as conn:
            for fact_id, v in rows:
                conn.execute(
                    """INSERT OR REPLACE INTO fact_vectors SELECT rowid, ?, ?, ? FROM facts WHERE id = ?""",
                    (model, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes(), fact_id),
                )

    def fact_vector_search(self, model: str, query: np.ndarray, q: FactQuery, limit: int) -> list[tuple[str, float]]:
        rowids, ids, matrix = self._fact_matrix(model)
        if matrix is None or limit <= 0:
            return []
        if matrix.shape[1] != query.shape[0]:
            raise ModelMismatch(f"fact vectors of {model!r} have dimension {matrix.shape[1]}, the query {query.shape[0]}")
        scores = matrix @ query.astype(np.float32)
        order = np.argsort(-scores, kind="stable")
        where, params = self._fact_where(q)
        found: list[tuple[str, float]] = []
        start, width = 0, max(limit * 4, 64)
        # Best first, filters checked in SQL on growing slices: old versions are few, so
        # the first slice almost always suffices, and a rare filter is never crowded out.
        while len(found) < limit and start < len(order):
            chunk = order[start:start + width]
            ok = {r[0] for r in self._reader.execute(
                f"SELECT f.rowid FROM facts f WHERE f.rowid IN (SELECT value FROM json_each(?)) AND {where}",
                (json.dumps([int(rowids[i]) for i in chunk]), *params))}
            found += [(ids[i], float(scores[i])) for i in chunk if int(rowids[i]) in ok]
            start, width = start + width, width * 4
        return found[:limit]

    def _fact_matrix(self, model: str) -> tuple[np.ndarray, list[str], np.ndarray | None]:
        """Every fact vector of `model`, cached and extended as rows arrive. Fact vectors
        are only ever added (a fact is embedded once per model), so the count and the
        highest rowid tell whether the cache is current."""
        cache: dict[str, Any] = self.__dict__.setdefault("_fact_vectors_cache", {})
        count, top = self._reader.execute("SELECT count(*), max(fact_rowid) FROM fact_vectors WHERE model = ?", (model,)).fetchone()
        entry = cache.get(model)
        if entry is not None and (entry["count"], entry["top"]) == (count, top):
            return entry["rowids"], entry["ids"], entry["matrix"]
        prev: dict[str, Any] | None = None
        if entry is not None and entry["matrix"] is not None and entry["count"] < count and entry["top"] < top:
            prev = entry  # only new rows to load
        rows = self._reader.execute(
            """SELECT v.fact_rowid, f.id, v.vector FROM fact_vectors v JOIN facts f ON f.rowid = v.fact_rowid
               WHERE v.model = ? AND v.fact_rowid > ? ORDER BY v.fact_rowid""", (model, prev["top"] if prev else 0)).fetchall()
        rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        ids = [r[1] for r in rows]
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1) if rows else None
        if prev is not None and matrix is not None:
            rowids, ids, matrix = np.concatenate([prev["rowids"], rowids]), prev["ids"] + ids, np.vstack([prev["matrix"], matrix])
        if prev is not None and len(ids) != count:  # a row arrived below the top (another writer): start over
            cache.pop(model)
            return self._fact_matrix(model)
        cache[model] = {"count": count, "top": top, "rowids": rowids, "ids": ids, "matrix": matrix}
        return rowids, ids, matrix
