"""Facts on PostgreSQL: a mixin of `PostgresStore` (it uses the store's `_tx()` / `_read()`).

Guarded updates are plain `UPDATE … WHERE <column> IS NULL`: under READ COMMITTED a
second writer blocks on the row lock and, once the first commits, re-checks the WHERE
against the new row, matches nothing and gets `Conflict` — one supersession wins.
Times are `timestamptz`, ISO strings on the contract surface as everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
from psycopg import errors as pgerrors

from ...errors import Conflict, InvalidInput, ModelMismatch, NotFound
from ...records import iso
from ..facts_base import END_COLUMNS, Attestation, FactChange, FactLink, FactQuery, FactRow, FactStoreContract, FactUpdate, FactVault
from .rows import _text, _ts

_FACT_COLUMNS = (
    "id, vault, text, norm, kind, entities, salience, base_confidence, valid_from, recorded_at, valid_to, ended_at, "
    "invalidated_at, expired_at, supersedes, superseded_by, metadata"
)
_F = ", ".join(f"f.{c.strip()}" for c in _FACT_COLUMNS.split(","))
_BELIEVED = "f.expired_at IS NULL AND f.invalidated_at IS NULL"


class PostgresFactsMixin(FactStoreContract):
    # provided by PostgresStore
    _tx: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
    _read: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
    _all: Callable[..., list[tuple[Any, ...]]]

    # -- writing -------------------------------------------------------------
    def apply_fact_change(self, change: FactChange) -> bool:
        try:
            with self._tx() as conn:
                if change.op_key is not None:
                    row = conn.execute("INSERT INTO fact_ops VALUES (%s, now()) ON CONFLICT DO NOTHING RETURNING 1",
                                       (change.op_key,)).fetchone()
                    if row is None:
                        return False
                for v in change.vaults:
                    conn.execute("INSERT INTO fact_vaults (name, type, description, created_at) VALUES (%s, %s, %s, %s) "
                                 "ON CONFLICT DO NOTHING", (v.name, v.type, _text(v.description), v.created_at))
                for f in change.facts:
                    self._insert_fact(conn, f)
                for u in change.updates:
                    self._update_fact(conn, u)
                for a in change.attestations:
                    self._need_fact(conn, a.fact_id)
                    conn.execute("INSERT INTO fact_attestations VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                                 (a.fact_id, a.source_type, _text(a.source), a.at, a.recorded_at, _text(a.note)))
                for x in change.links:
                    self._need_fact(conn, x.src)
                    self._need_fact(conn, x.dst)
                    conn.execute("INSERT INTO fact_links VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                                 (x.src, x.dst, x.type, x.recorded_at, x.review, x.reviewed_at))
                for r in change.reviews:
                    n = conn.execute("UPDATE fact_links SET review = %s, reviewed_at = %s WHERE src = %s AND dst = %s "
                                     "AND type = %s AND review = 'pending'", (r.review, r.reviewed_at, r.src, r.dst, r.type)).rowcount
                    if not n:
                        raise Conflict(f"no pending review links {r.src} and {r.dst} (already settled?)")
        except pgerrors.SerializationFailure as exc:
            raise Conflict(f"a concurrent change won: {exc}") from exc
        return True

    @staticmethod
    def _insert_fact(conn: psycopg.Connection[Any], f: FactRow) -> None:
        if conn.execute("SELECT 1 FROM fact_vaults WHERE name = %s", (f.vault,)).fetchone() is None:
            raise NotFound(f"no fact vault named {f.vault!r}")
        row = conn.execute(
            f"""INSERT INTO facts ({_FACT_COLUMNS}, entity_keys) VALUES ({', '.join(['%s'] * 18)})
                ON CONFLICT (id) DO NOTHING RETURNING 1""",
            (f.id, f.vault, _text(f.text), _text(f.norm), f.kind, json.dumps([_text(e) for e in f.entities], ensure_ascii=False),
             f.salience, f.base_confidence, f.valid_from, f.recorded_at, f.valid_to, f.ended_at, f.invalidated_at,
             f.expired_at, f.supersedes, f.superseded_by, _text(json.dumps(f.metadata, ensure_ascii=False, sort_keys=True)),
             [(_text(e) or "").lower() for e in f.entities]),
        ).fetchone()
        if row is None:
            raise Conflict(f"a fact with id {f.id!r} already exists")

    def _update_fact(self, conn: psycopg.Connection[Any], u: FactUpdate) -> None:
        cols = set(u.set) | set(u.require_null)
        if not cols <= set(END_COLUMNS):
            raise InvalidInput(f"fact updates may only set {END_COLUMNS}")
        sets = ", ".join(f"{c} = %s" for c in u.set) or "id = id"
        guard = "".join(f" AND {c} IS NULL" for c in sorted(cols))
        n = conn.execute(f"UPDATE facts SET {sets} WHERE id = %s{guard}", (*u.set.values(), u.fact_id)).rowcount
        if not n:
            row = conn.execute(f"SELECT {', '.join(END_COLUMNS)} FROM facts WHERE id = %s", (u.fact_id,)).fetchone()
            if row is None:
                raise NotFound(f"no fact with id {u.fact_id!r}")
            state = {c: (iso(v) if isinstance(v, datetime) else v) for c, v in zip(END_COLUMNS, row) if v is not None and c in cols}
            raise Conflict(f"fact {u.fact_id} changed meanwhile: {state}")

    @staticmethod
    def _need_fact(conn: psycopg.Connection[Any], fact_id: str) -> None:
        if conn.execute("SELECT 1 FROM facts WHERE id = %s", (fact_id,)).fetchone() is None:
            raise NotFound(f"no fact with id {fact_id!r}")

    # -- reading -------------------------------------------------------------
    def fact_vaults(self) -> list[FactVault]:
        rows = self._all("SELECT name, type, created_at, description FROM fact_vaults ORDER BY name")
        return [FactVault(r[0], r[1], iso(r[2]), r[3]) for r in rows]

    def get_facts(self, ids: list[str]) -> list[FactRow]:
        if not ids:
            return []
        by_id = {f.id: f for f in self.query_facts(FactQuery(ids=ids))}
        return [by_id[i] for i in ids if i in by_id]

    def query_facts(self, q: FactQuery) -> list[FactRow]:
        where, params = self._fact_where(q)
        sql = f"SELECT {_F} FROM facts f WHERE {where} ORDER BY f.vault COLLATE \"C\", f.id COLLATE \"C\""
        if q.limit is not None:
            sql += f" LIMIT {int(q.limit)}"
        rows = [self._row(r) for r in self._all(sql, params)]
        self._attach(rows)
        return rows

    @staticmethod
    def _fact_where(q: FactQuery) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        for column, values in (("vault", q.vaults), ("id", q.ids)):
            if values is not None:
                clauses.append(f"f.{column} = ANY(%s)")
                params.append(list(values))
        for column, value in (("kind", q.kind), ("norm", q.norm)):
            if value is not None:
                clauses.append(f"f.{column} = %s")
                params.append(value)
        if q.entity is not None:
            clauses.append("f.entity_keys @> ARRAY[%s]::text[]")
            params.append(q.entity.lower())
        if q.source is not None:
            clauses.append("f.id IN (SELECT fact_id FROM fact_attestations WHERE source = %s)")
            params.append(q.source)
        if q.recorded_by is not None:
            clauses.append("f.recorded_at <= %s")
            params.append(q.recorded_by)
        if q.believed:
            clauses.append(_BELIEVED)
        if q.open_at is not None:
            clauses.append("f.valid_from <= %s AND (f.valid_to IS NULL OR f.valid_to > %s)")
            params += [q.open_at, q.open_at]
        return " AND ".join(clauses) or "TRUE", params

    @staticmethod
    def _row(r: tuple[Any, ...]) -> FactRow:
        return FactRow(
            id=r[0], vault=r[1], text=r[2], norm=r[3], kind=r[4], entities=list(r[5]), salience=r[6],
            base_confidence=r[7], valid_from=iso(r[8]), recorded_at=iso(r[9]), valid_to=_ts(r[10]), ended_at=_ts(r[11]),
            invalidated_at=_ts(r[12]), expired_at=_ts(r[13]), supersedes=r[14], superseded_by=r[15], metadata=dict(r[16]),
        )

    def _attach(self, rows: list[FactRow]) -> None:
        if not rows:
            return
        by_id = {f.id: f for f in rows}
        ids = list(by_id)
        atts = self._all(
            """SELECT * FROM fact_attestations WHERE fact_id = ANY(%s)
               ORDER BY at, recorded_at, source_type COLLATE "C", source COLLATE "C\"""", (ids,))
        for r in atts:
            by_id[r[0]].attestations.append(Attestation(r[0], r[1], r[2], iso(r[3]), iso(r[4]), r[5]))
        links = self._all(
            """SELECT * FROM fact_links WHERE src = ANY(%s) OR dst = ANY(%s)
               ORDER BY recorded_at, src COLLATE "C", dst COLLATE "C", type COLLATE "C\"""", (ids, ids))
        for r in links:
            link = FactLink(r[0], r[1], r[2], iso(r[3]), r[4], _ts(r[5]))
            for end in {link.src, link.dst}:
                if end in by_id:
                    by_id[end].links.append(link)

    def pending_reviews(self, vault: str | None) -> list[FactLink]:
        rows = self._all(
            """SELECT l.* FROM fact_links l JOIN facts f ON f.id = l.src WHERE l.review = 'pending'
               AND (%s::text IS NULL OR f.vault = %s) ORDER BY l.recorded_at, l.src COLLATE "C\"""", (vault, vault))
        return [FactLink(r[0], r[1], r[2], iso(r[3]), r[4], _ts(r[5])) for r in rows]

    def fact_keyword_search(self, terms: list[str], q: FactQuery, limit: int, match_all: bool) -> list[tuple[str, float]]:
        terms = [t for t in (_text(t) or "" for t in terms) if t.strip()]
        if not terms:
            return []
        op = " && " if match_all else " || "
        tsq = op.join(["phraseto_tsquery('palimpsest', %s)"] * len(terms))
        where, params = self._fact_where(q)
        sql = f"""WITH q AS (SELECT {tsq} AS q)
                  SELECT f.id, ts_rank_cd('{{0.1, 0.2, 0.5, 1.0}}', f.fts, q.q, 1) AS rank
                  FROM facts f, q WHERE numnode(q.q) > 0 AND f.fts @@ q.q AND {where}
                  ORDER BY rank DESC, f.id LIMIT %s"""
        return [(r[0], float(r[1])) for r in self._all(sql, (*terms, *params, limit))]

    # -- vectors -------------------------------------------------------------
    def put_fact_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        if not rows:
            return
        dims = {int(np.asarray(v).shape[0]) for _, v in rows}
        with self._tx() as conn:
            known = conn.execute("SELECT max(dim) FROM fact_vectors WHERE model = %s", (model,)).fetchone()
            if len(dims) > 1 or (known and known[0] is not None and known[0] not in dims):
                raise ModelMismatch(f"fact vectors of {model!r} have dimension {known[0] if known else None}; refusing {sorted(dims)}")
            with conn.cursor() as cur:
                cur.executemany(
                    """INSERT INTO fact_vectors (fact_rowid, model, dim, embedding)
                       SELECT rowid, %s, %s, %s FROM facts WHERE id = %s
                       ON CONFLICT (model, fact_rowid) DO UPDATE SET dim = excluded.dim, embedding = excluded.embedding""",
                    [(model, int(np.asarray(v).shape[0]), np.asarray(v, dtype=np.float32), i) for i, v in rows],
                )

    def fact_vector_search(self, model: str, query: np.ndarray, q: FactQuery, limit: int) -> list[tuple[str, float]]:
        where, params = self._fact_where(q)
        vec = np.asarray(query, dtype=np.float32)
        dims = self._all("SELECT DISTINCT dim FROM fact_vectors WHERE model = %s", (model,))
        if not dims:
            return []
        if dims[0][0] != vec.shape[0]:
            raise ModelMismatch(f"fact vectors of {model!r} have dimension {dims[0][0]}, the query {vec.shape[0]}")
        sql = f"""SELECT f.id, 1 - (v.embedding <=> %s) FROM fact_vectors v JOIN facts f ON f.rowid = v.fact_rowid
                  WHERE v.model = %s AND {where} ORDER BY v.embedding <=> %s, f.id LIMIT %s"""
        return [(r[0], float(r[1])) for r in self._all(sql, (vec, model, *params, vec, limit))]

    def facts_without_vectors(self, model: str, limit: int) -> list[tuple[str, str]]:
        sql = f"""SELECT f.id, f.text FROM facts f WHERE {_BELIEVED} AND NOT EXISTS
                  (SELECT 1 FROM fact_vectors v WHERE v.model = %s AND v.fact_rowid = f.rowid) ORDER BY f.rowid LIMIT %s"""
        return [(r[0], r[1]) for r in self._all(sql, (model, limit))]

    def fact_ops_applied(self) -> set[str]:
        return {r[0] for r in self._all("SELECT op_key FROM fact_ops")}

    def fact_stats(self) -> dict[str, Any]:
        with self._read() as conn:
            total, live = conn.execute(
                f"SELECT count(*), count(*) FILTER (WHERE {_BELIEVED} AND f.valid_to IS NULL) FROM facts f").fetchone()  # type: ignore[misc]
            return {
                "vaults": conn.execute("SELECT count(*) FROM fact_vaults").fetchone()[0],  # type: ignore[index]
                "facts": total,
                "open": live,
                "attestations": conn.execute("SELECT count(*) FROM fact_attestations").fetchone()[0],  # type: ignore[index]
                "pending_reviews": conn.execute("SELECT count(*) FROM fact_links WHERE review = 'pending'").fetchone()[0],  # type: ignore[index]
            }
