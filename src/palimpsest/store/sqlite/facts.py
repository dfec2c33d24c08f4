"""Facts on SQLite: a mixin of `SQLiteStore` (it uses the store's `_tx()` and `_reader`).

Vectors of facts are searched exactly in numpy: fact vaults are small next to
transcripts (thousands of rows, not millions), so no ANN index is kept.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from ...errors import Conflict, InvalidInput, ModelMismatch, NotFound
from ...records import iso, utcnow
from ..facts_base import END_COLUMNS, Attestation, FactChange, FactLink, FactQuery, FactRow, FactStoreContract, FactUpdate, FactVault
from .rows import fts_phrase

_FACT_COLUMNS = (
    "id, vault, text, norm, kind, entities, salience, base_confidence, valid_from, recorded_at, valid_to, ended_at, "
    "invalidated_at, expired_at, supersedes, superseded_by, metadata"
)
_F = ", ".join(f"f.{c.strip()}" for c in _FACT_COLUMNS.split(","))
_BELIEVED = "f.expired_at IS NULL AND f.invalidated_at IS NULL"


class SQLiteFactsMixin(FactStoreContract):
    # provided by SQLiteStore
    _reader: sqlite3.Connection
    _tx: Callable[[], AbstractContextManager[sqlite3.Connection]]

    # -- writing -------------------------------------------------------------
    def apply_fact_change(self, change: FactChange) -> bool:
        with self._tx() as conn:
            if change.op_key is not None:
                if conn.execute("SELECT 1 FROM fact_ops WHERE op_key = ?", (change.op_key,)).fetchone():
                    return False
                conn.execute("INSERT INTO fact_ops VALUES (?, ?)", (change.op_key, iso(utcnow())))
            for v in change.vaults:
                conn.execute("INSERT OR IGNORE INTO fact_vaults (name, type, description, created_at) VALUES (?, ?, ?, ?)",
                             (v.name, v.type, v.description, v.created_at))
            for f in change.facts:
                self._insert_fact(conn, f)
            for u in change.updates:
                self._update_fact(conn, u)
            for a in change.attestations:
                self._need_fact(conn, a.fact_id)
                conn.execute("INSERT OR IGNORE INTO fact_attestations VALUES (?, ?, ?, ?, ?, ?)",
                             (a.fact_id, a.source_type, a.source, a.at, a.recorded_at, a.note))
            for x in change.links:
                self._need_fact(conn, x.src)
                self._need_fact(conn, x.dst)
                conn.execute("INSERT OR IGNORE INTO fact_links VALUES (?, ?, ?, ?, ?, ?)",
                             (x.src, x.dst, x.type, x.recorded_at, x.review, x.reviewed_at))
            for r in change.reviews:
                n = conn.execute("UPDATE fact_links SET review = ?, reviewed_at = ? WHERE src = ? AND dst = ? AND type = ? AND review = 'pending'",
                                 (r.review, r.reviewed_at, r.src, r.dst, r.type)).rowcount
                if not n:
                    raise Conflict(f"no pending review links {r.src} and {r.dst} (already settled?)")
        return True

    def _insert_fact(self, conn: sqlite3.Connection, f: FactRow) -> None:
        if not conn.execute("SELECT 1 FROM fact_vaults WHERE name = ?", (f.vault,)).fetchone():
            raise NotFound(f"no fact vault named {f.vault!r}")
        try:
            cur = conn.execute(
                f"INSERT INTO facts ({_FACT_COLUMNS}) VALUES ({', '.join('?' * 17)})",
                (f.id, f.vault, f.text, f.norm, f.kind, json.dumps(f.entities, ensure_ascii=False), f.salience,
                 f.base_confidence, f.valid_from, f.recorded_at, f.valid_to, f.ended_at, f.invalidated_at, f.expired_at,
                 f.supersedes, f.superseded_by, json.dumps(f.metadata, ensure_ascii=False, sort_keys=True)),
            )
        except sqlite3.IntegrityError:
            raise Conflict(f"a fact with id {f.id!r} already exists") from None
        conn.executemany("INSERT OR IGNORE INTO fact_entities VALUES (?, ?)", [(cur.lastrowid, e.lower()) for e in f.entities])

    def _update_fact(self, conn: sqlite3.Connection, u: FactUpdate) -> None:
        cols = set(u.set) | set(u.require_null)
        if not cols <= set(END_COLUMNS):
            raise InvalidInput(f"fact updates may only set {END_COLUMNS}")
        sets = ", ".join(f"{c} = ?" for c in u.set) or "id = id"
        guard = "".join(f" AND {c} IS NULL" for c in sorted(cols))
        n = conn.execute(f"UPDATE facts SET {sets} WHERE id = ?{guard}", (*u.set.values(), u.fact_id)).rowcount
        if not n:
            row = conn.execute(f"SELECT {', '.join(END_COLUMNS)} FROM facts WHERE id = ?", (u.fact_id,)).fetchone()
            if row is None:
                raise NotFound(f"no fact with id {u.fact_id!r}")
            state = {c: v for c, v in zip(END_COLUMNS, row) if v is not None and c in cols}
            raise Conflict(f"fact {u.fact_id} changed meanwhile: {state}")

    @staticmethod
    def _need_fact(conn: sqlite3.Connection, fact_id: str) -> None:
        if not conn.execute("SELECT 1 FROM facts WHERE id = ?", (fact_id,)).fetchone():
            raise NotFound(f"no fact with id {fact_id!r}")

    # -- reading -------------------------------------------------------------
    def fact_vaults(self) -> list[FactVault]:
        rows = self._reader.execute("SELECT name, type, created_at, description FROM fact_vaults ORDER BY name").fetchall()
        return [FactVault(*r) for r in rows]

    def get_facts(self, ids: list[str]) -> list[FactRow]:
        if not ids:
            return []
        by_id = {f.id: f for f in self.query_facts(FactQuery(ids=ids))}
        return [by_id[i] for i in ids if i in by_id]

    def query_facts(self, q: FactQuery) -> list[FactRow]:
        where, params = self._fact_where(q)
        sql = f"SELECT {_F} FROM facts f WHERE {where} ORDER BY f.vault, f.id"
        if q.limit is not None:
            sql += f" LIMIT {int(q.limit)}"
        rows = [self._row(r) for r in self._reader.execute(sql, params)]
        self._attach(rows)
        return rows

    def _fact_where(self, q: FactQuery) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        for column, values in (("vault", q.vaults), ("id", q.ids)):
            if values is not None:
                clauses.append(f"f.{column} IN (SELECT value FROM json_each(?))")
                params.append(json.dumps(values))
        for column, value in (("kind", q.kind), ("norm", q.norm)):
            if value is not None:
                clauses.append(f"f.{column} = ?")
                params.append(value)
        if q.entity is not None:
            clauses.append("f.rowid IN (SELECT fact_rowid FROM fact_entities WHERE entity = ?)")
            params.append(q.entity.lower())
        if q.source is not None:
            clauses.append("f.id IN (SELECT fact_id FROM fact_attestations WHERE source = ?)")
            params.append(q.source)
        if q.recorded_by is not None:
            clauses.append("f.recorded_at <= ?")
            params.append(q.recorded_by)
        if q.believed:
            clauses.append(_BELIEVED)
        if q.open_at is not None:
            clauses.append("f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?)")
            params += [q.open_at, q.open_at]
        return " AND ".join(clauses) or "1", params

    @staticmethod
    def _row(r: tuple[Any, ...]) -> FactRow:
        return FactRow(
            id=r[0], vault=r[1], text=r[2], norm=r[3], kind=r[4], entities=json.loads(r[5]), salience=r[6],
            base_confidence=r[7], valid_from=r[8], recorded_at=r[9], valid_to=r[10], ended_at=r[11],
            invalidated_at=r[12], expired_at=r[13], supersedes=r[14], superseded_by=r[15], metadata=json.loads(r[16]),
        )

    def _attach(self, rows: list[FactRow]) -> None:
        if not rows:
            return
        by_id = {f.id: f for f in rows}
        ids = json.dumps(list(by_id))
        for r in self._reader.execute(
            "SELECT * FROM fact_attestations WHERE fact_id IN (SELECT value FROM json_each(?)) ORDER BY at, recorded_at, source_type, source", (ids,)
        ):
            by_id[r[0]].attestations.append(Attestation(*r))
        for r in self._reader.execute(
            """SELECT * FROM fact_links WHERE src IN (SELECT value FROM json_each(?)) OR dst IN (SELECT value FROM json_each(?))
               ORDER BY recorded_at, src, dst, type""", (ids, ids)
        ):
            link = FactLink(*r)
            for end in {link.src, link.dst}:
                if end in by_id:
                    by_id[end].links.append(link)

    def pending_reviews(self, vault: str | None) -> list[FactLink]:
        sql = """SELECT l.* FROM fact_links l JOIN facts f ON f.id = l.src WHERE l.review = 'pending'
                 AND (? IS NULL OR f.vault = ?) ORDER BY l.recorded_at, l.src"""
        return [FactLink(*r) for r in self._reader.execute(sql, (vault, vault))]

    def fact_keyword_search(self, terms: list[str], q: FactQuery, limit: int, match_all: bool) -> list[tuple[str, float]]:
        if not terms:
            return []
        match = (" " if match_all else " OR ").join(fts_phrase(t) for t in terms)
        where, params = self._fact_where(q)
        sql = f"""SELECT f.id, bm25(facts_fts, 1.0, 0.5) AS rank FROM facts_fts JOIN facts f ON f.rowid = facts_fts.rowid
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

    def facts_without_vectors(self, model: str, limit: int) -> list[tuple[str, str]]:
        sql = f"""SELECT f.id, f.text FROM facts f WHERE {_BELIEVED} AND NOT EXISTS
                  (SELECT 1 FROM fact_vectors v WHERE v.model = ? AND v.fact_rowid = f.rowid) ORDER BY f.rowid LIMIT ?"""
        return [(r[0], r[1]) for r in self._reader.execute(sql, (model, limit))]

    def fact_ops_applied(self) -> set[str]:
        return {r[0] for r in self._reader.execute("SELECT op_key FROM fact_ops")}

    def fact_stats(self) -> dict[str, Any]:
        r = self._reader
        total, live = r.execute(f"SELECT count(*), sum(CASE WHEN {_BELIEVED} AND f.valid_to IS NULL THEN 1 ELSE 0 END) FROM facts f").fetchone()
        return {
            "vaults": r.execute("SELECT count(*) FROM fact_vaults").fetchone()[0],
            "facts": total,
            "open": live or 0,
            "attestations": r.execute("SELECT count(*) FROM fact_attestations").fetchone()[0],
            "pending_reviews": r.execute("SELECT count(*) FROM fact_links WHERE review = 'pending'").fetchone()[0],
        }
