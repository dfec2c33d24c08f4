"""Facts on PostgreSQL: entities in an array column, tsvector and pgvector (the rest is
`store/sql/facts.py`). Times are `timestamptz`, ISO strings on the contract surface as everywhere.
"""

from __future__ import annotations

import json

import numpy as np
from psycopg import errors as pgerrors

from ...errors import Conflict, ModelMismatch
from ...segment import keyword_words
from ..facts_base import FactQuery, FactRow
from ..sql.dialect import Runner
from ..sql.facts import FACT_COLUMNS, SQLFactsMixin
from .connection import PostgresConnection
from .rows import _text, _words


class PostgresFactsMixin(SQLFactsMixin, PostgresConnection):
    _ENTITY_MATCH = "(f.entity_keys @> ARRAY[?]::text[] OR f.fts @@ phraseto_tsquery('palimpsest', ?))"
    _CONCURRENT = (pgerrors.SerializationFailure,)

    @staticmethod
    def _entity_phrase(entity: str) -> str:
        return " ".join(_words([entity]))

    def _insert_fact(self, run: Runner, f: FactRow) -> None:
        row = run(
            f"""INSERT INTO facts ({FACT_COLUMNS}, entity_keys, keywords) VALUES ({', '.join(['?'] * 19)})
                ON CONFLICT (id) DO NOTHING RETURNING 1""",
            (f.id, f.vault, _text(f.text), _text(f.norm), f.kind, json.dumps([_text(e) for e in f.entities], ensure_ascii=False),
             f.salience, f.base_confidence, f.valid_from, f.recorded_at, f.valid_to, f.ended_at, f.invalidated_at,
             f.expired_at, f.supersedes, f.superseded_by, _text(json.dumps(f.metadata, ensure_ascii=False, sort_keys=True)),
             [(_text(e) or "").lower() for e in f.entities], _text(keyword_words(f.text))),
        )
        if not row:
            raise Conflict(f"a fact with id {f.id!r} already exists")

    def fact_keyword_search(self, terms: list[str], q: FactQuery, limit: int, match_all: bool) -> list[tuple[str, float]]:
        terms = _words(terms)
        if not terms:
            return []
        op = " && " if match_all else " || "
        tsq = op.join(["phraseto_tsquery('palimpsest', %s)"] * len(terms))
        where, params = self._fact_where(q)
        sql = f"""WITH q AS (SELECT {tsq} AS q)
                  SELECT f.id, ts_rank_cd('{{0.1, 0.2, 0.5, 1.0}}', f.fts, q.q, 1) AS rank
                  FROM facts f, q WHERE numnode(q.q) > 0 AND f.fts @@ q.q AND {where}
                  ORDER BY rank DESC, f.id LIMIT %s"""
        return [(r[0], float(r[1])) for r in self._fetch(sql, (*terms, *params, limit))]

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
        dims = self._fetch("SELECT DISTINCT dim FROM fact_vectors WHERE model = %s", (model,))
        if not dims:
            return []
        if dims[0][0] != vec.shape[0]:
            raise ModelMismatch(f"fact vectors of {model!r} have dimension {dims[0][0]}, the query {vec.shape[0]}")
        sql = f"""SELECT f.id, 1 - (v.embedding <=> %s) FROM fact_vectors v JOIN facts f ON f.rowid = v.fact_rowid
                  WHERE v.model = %s AND {where} ORDER BY v.embedding <=> %s, f.id LIMIT %s"""
        return [(r[0], float(r[1])) for r in self._fetch(sql, (vec, model, *params, vec, limit))]
