"""Vaults on PostgreSQL: writing documents and skills, full text and chunk vectors (the
registry and the reads are `store/sql/documents.py`).

Chunk vectors live in a dimensionless `vector` column. Once a dimension holds
`hnsw_threshold` chunk vectors (10,000, the store's), a partial HNSW index on
`(embedding::vector(dim)) WHERE dim = <dim>` is built (as for messages, `hnsw.py`);
a query whose readable vaults hold at most 5,000 chunks of its model is exact (pgvector's
`<=>` over them, through `document_chunks_vault`), a broader one walks the index with
pgvector's iterative scan (0.8+), which goes on until enough chunks pass the vault and
model filter (at 100,000 chunks the exact scan took ~1 s). Full text is a generated, weighted
`tsvector` (text A, heading path B) ranked with `ts_rank_cd`; each user term is its own
`phraseto_tsquery`, so user text is never query syntax.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import psycopg

from ..documents_base import ChunkQuery, ChunkRow, DocumentRow, Reader, SkillRow
from ..sql.documents import DOC_COLUMNS, SKILL_COLUMNS, SQLDocumentsMixin
from .connection import PostgresConnection
from .hnsw import build_hnsw, index_exists
from .rows import _text, _words

_CHUNK_EXACT_MAX = 5_000  # a vector query over at most this many chunks is exact
COMMON_TERM = 2000  # an any-word match leaves out words in this many chunks or more (as on SQLite)


def _json(value: Any) -> str:
    return _text(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)) or "{}"


def vault_filter(reader: Reader, names: list[str] | None, attached_to: list[tuple[str, str]] | None) -> tuple[str, list[Any]]:
    """SQL selecting the names of the vaults a reader may see, narrowed by name and attachment."""
    clauses: list[str] = []
    params: list[Any] = []
    if not reader.owner:
        clauses.append("(v.access = 'public' OR v.name IN (SELECT vault FROM vault_readers WHERE agent = %s))")
        params.append(reader.agent or "")
    if names is not None:
        clauses.append("v.name = ANY(%s)")
        params.append(list(names))
    if attached_to is not None:
        clauses.append("v.name IN (SELECT a.vault FROM vault_attachments a WHERE (a.kind, a.target) IN "
                       "(SELECT * FROM unnest(%s::text[], %s::text[])))")
        params += [[k for k, _ in attached_to], [t for _, t in attached_to]]
    return f"SELECT v.name FROM vaults v WHERE {' AND '.join(clauses) or 'TRUE'}", params


class PostgresDocumentsMixin(SQLDocumentsMixin, PostgresConnection):
    # from the other mixins and the store
    _iterative_scan: Callable[[psycopg.Connection[Any]], bool]
    hnsw_threshold: int
    index_build_memory_mb: int
    index_build_workers: int

    _vault_filter = staticmethod(vault_filter)

    # -- documents -----------------------------------------------------------
    def replace_document(self, doc: DocumentRow, chunks: list[ChunkRow], model: str | None) -> None:
        with self._tx() as conn:
            # two indexers of one file: the second waits, then replaces (without the lock its
            # DELETE would miss the first one's new row and its INSERT break the unique key)
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"palimpsest:doc:{doc.vault}/{_text(doc.path)}",))
            conn.execute("DELETE FROM documents WHERE vault = %s AND path = %s", (doc.vault, _text(doc.path)))
            rowid = conn.execute(
                f"INSERT INTO documents ({DOC_COLUMNS}) VALUES ({', '.join(['%s'] * 11)}) RETURNING rowid",
                (doc.vault, _text(doc.path), doc.sha256, doc.mtime, doc.size, doc.indexed_at, _text(doc.title), _json(doc.metadata),
                 _text(doc.error), len(chunks), doc.pages)).fetchone()[0]  # type: ignore[index]
            with conn.cursor() as cur:
                cur.executemany(
                    """INSERT INTO document_chunks (id, document_rowid, vault, ordinal, heading_path, text, keywords, token_count, metadata,
                                                    model, dim, embedding)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
                    [(c.id, rowid, doc.vault, c.ordinal, _text(c.heading_path), _text(c.text), _text(c.keywords),
                      c.token_count, _json(c.metadata),
                      *_vector(model, c.vector)) for c in chunks])
            if model is not None:
                self._ensure_chunk_index(conn, {int(np.asarray(c.vector).shape[0]) for c in chunks if c.vector is not None})

    def remove_documents(self, vault: str, paths: list[str]) -> int:
        if not paths:
            return 0
        with self._tx() as conn:
            return conn.execute("DELETE FROM documents WHERE vault = %s AND path = ANY(%s)", (vault, [_text(p) for p in paths])).rowcount

    def chunk_keyword_search(self, terms: list[str], q: ChunkQuery, limit: int, match_all: bool) -> list[tuple[str, float]]:
        terms = _words(terms)
        if not match_all and len(terms) > 1:
            terms = self._rare_terms(terms)
        if not terms:
            return []
        tsq = (" && " if match_all else " || ").join(["phraseto_tsquery('palimpsest', %s)"] * len(terms))
        vaults, params = vault_filter(q.reader, q.vaults, q.attached_to)
        sql = f"""WITH q AS (SELECT {tsq} AS q)
                  SELECT c.id, ts_rank_cd('{{0.1, 0.2, 0.5, 1.0}}', c.fts, q.q, 1) AS rank FROM document_chunks c, q
                  WHERE numnode(q.q) > 0 AND c.fts @@ q.q AND c.vault IN ({vaults}) ORDER BY rank DESC, c.id LIMIT %s"""
        return [(r[0], float(r[1])) for r in self._all(sql, (*terms, *params, limit))]

    def _rare_terms(self, terms: list[str]) -> list[str]:
        """For an any-word match, the terms in fewer than COMMON_TERM chunks (or the rarest):
        ranking an OR of a common word ranks most of the index for almost no BM25 weight."""
        sql = "SELECT count(*) FROM (SELECT 1 FROM document_chunks WHERE fts @@ phraseto_tsquery('palimpsest', %s) LIMIT %s) x"
        counts = {t: self._all(sql, (t, COMMON_TERM))[0][0] for t in terms}
        rare = [t for t in terms if counts[t] < COMMON_TERM]
        return rare or [min(terms, key=lambda t: counts[t])]

    def chunk_vector_search(self, model: str, query: np.ndarray, q: ChunkQuery, limit: int) -> list[tuple[str, float]]:
        vec = np.asarray(query, dtype=np.float32)
        dim = int(vec.shape[0])
        vaults, params = vault_filter(q.reader, q.vaults, q.attached_to)
        # the readable vaults as a list first: as a subquery the planner guessed one row of
        # it matched a few hundred chunks and sorted every chunk exactly instead of using
        # the index (630 ms at 100,000 chunks against 17 ms)
        where = f"c.model = %s AND c.dim = {dim} AND c.vault = ANY(%s)"
        with self._tx() as conn:
            names = [r[0] for r in conn.execute(vaults, params).fetchall()]
            few = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM document_chunks c WHERE {where} LIMIT {_CHUNK_EXACT_MAX + 1}) x",
                               (model, names)).fetchone()[0] <= _CHUNK_EXACT_MAX  # type: ignore[index]
            if few or not index_exists(conn, "document_chunks", f"document_chunks_hnsw_{dim}"):
                sql = f"""SELECT c.id, 1 - (c.embedding <=> %s) FROM document_chunks c
                          WHERE {where} ORDER BY c.embedding <=> %s, c.id LIMIT %s"""
                rows = conn.execute(sql, (vec, model, names, vec, limit)).fetchall()
                return [(r[0], float(r[1])) for r in rows]
            # the partial index's own expression, so the planner can use it; the iterative
            # scan walks on until `limit` chunks pass the vault and model filter
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(limit, 1000))}")
            if self._iterative_scan(conn):
                conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
                conn.execute("SET LOCAL hnsw.max_scan_tuples = 100000")
            distance = f"c.embedding::vector({dim}) <=> %s::vector({dim})"
            sql = f"SELECT c.id, 1 - ({distance}) FROM document_chunks c WHERE {where} ORDER BY {distance} LIMIT %s"
            rows = conn.execute(sql, (vec, model, names, vec, limit)).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    def _ensure_chunk_index(self, conn: psycopg.Connection[Any], dims: set[int]) -> None:
        """Build the HNSW index of each dimension that holds `hnsw_threshold` chunk vectors."""
        for dim in dims:
            name = f"document_chunks_hnsw_{dim}"
            if index_exists(conn, "document_chunks", name):
                continue
            n = conn.execute("SELECT count(*) FROM (SELECT 1 FROM document_chunks WHERE dim = %s LIMIT %s) x",
                             (dim, self.hnsw_threshold)).fetchone()[0]  # type: ignore[index]
            if n >= self.hnsw_threshold:
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"palimpsest:{name}",))  # one builder
                total = conn.execute("SELECT count(*) FROM document_chunks WHERE dim = %s", (dim,)).fetchone()[0]  # type: ignore[index]
                build_hnsw(conn, "document_chunks", name, dim, int(total), self.index_build_memory_mb, self.index_build_workers)

    def chunk_vectors(self, model: str, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        rows = self._all("SELECT id, embedding FROM document_chunks WHERE model = %s AND id = ANY(%s)", (model, list(ids)))
        return {i: np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=np.float32) for i, v in rows}

    def put_chunk_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        if not rows:
            return
        with self._tx() as conn, conn.cursor() as cur:
            cur.executemany("UPDATE document_chunks SET model = %s, dim = %s, embedding = %s WHERE id = %s",
                            [(*_vector(model, v), i) for i, v in rows])
            self._ensure_chunk_index(conn, {int(np.asarray(v).shape[0]) for _, v in rows})

    # -- skills --------------------------------------------------------------
    def replace_skills(self, vault: str, skills: list[SkillRow], remove_paths: list[str]) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM skills WHERE vault = %s AND (path = ANY(%s) OR name = ANY(%s))",
                         (vault, [_text(p) for p in remove_paths + [s.path for s in skills]], [_text(s.name) for s in skills]))
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO skills ({SKILL_COLUMNS}) VALUES ({', '.join(['%s'] * 11)})",
                    [(s.vault, _text(s.name), _text(s.description), _json(s.triggers), _json(s.metadata), _text(s.path), _text(s.body),
                      s.sha256, s.mtime, s.size, s.indexed_at) for s in skills])


def _vector(model: str | None, v: np.ndarray | None) -> tuple[Any, Any, Any]:
    if model is None or v is None:
        return None, None, None
    return model, int(v.shape[0]), np.asarray(v, dtype=np.float32)
