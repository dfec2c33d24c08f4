"""Vaults on PostgreSQL: a mixin of `PostgresStore` (it uses the store's `_tx()` / `_read()`).

Chunk vectors live in a dimensionless `vector` column. Once a dimension holds
`hnsw_threshold` chunk vectors (10,000, the store's), a partial HNSW index on
`(embedding::vector(dim)) WHERE dim = <dim>` is built (as for messages, postgres_hnsw.py);
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
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import psycopg

from ...errors import Conflict
from ...records import iso
from ..documents_base import ChunkQuery, ChunkRow, DocumentRow, DocumentStoreContract, Reader, SkillRow, VaultChange, VaultRow
from .hnsw import build_hnsw, index_exists
from .rows import _text

_DOC_COLUMNS = "vault, path, sha256, mtime, size, indexed_at, title, metadata, error, chunks, pages"
_SKILL_COLUMNS = "vault, name, description, triggers, metadata, path, body, sha256, mtime, size, indexed_at"
_CHUNK_READ = ("c.id, c.vault, d.path, c.ordinal, c.heading_path, c.text, c.token_count, c.metadata, "
               "d.title, d.metadata, d.indexed_at")


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


class PostgresDocumentsMixin(DocumentStoreContract):
    # provided by PostgresStore
    _tx: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
    _read: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
    _all: Callable[..., list[tuple[Any, ...]]]
    _iterative_scan: Callable[[psycopg.Connection[Any]], bool]
    hnsw_threshold: int
    index_build_memory_mb: int
    index_build_workers: int

    # -- registry ------------------------------------------------------------
    def apply_vault_change(self, change: VaultChange) -> bool:
        with self._tx() as conn:
            applied = "INSERT INTO vault_ops VALUES (%s, now()) ON CONFLICT DO NOTHING RETURNING 1"
            if change.op_key is not None and conn.execute(applied, (change.op_key,)).fetchone() is None:
                return False
            if change.vault is not None:
                self._put_vault(conn, change.vault)
            if change.attachment is not None:
                a = change.attachment
                if change.attach:
                    conn.execute("INSERT INTO vault_attachments VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                                 (a["vault"], a["kind"], _text(a["target"]), a["at"]))
                else:
                    conn.execute("DELETE FROM vault_attachments WHERE vault = %s AND kind = %s AND target = %s",
                                 (a["vault"], a["kind"], _text(a["target"])))
        return True

    @staticmethod
    def _put_vault(conn: psycopg.Connection[Any], v: VaultRow) -> None:
        row = conn.execute("SELECT type FROM vaults WHERE name = %s FOR UPDATE", (v.name,)).fetchone()
        if row is not None and row[0] != v.type:
            raise Conflict(f"vault {v.name!r} exists with type {row[0]!r}")
        conn.execute(
            """INSERT INTO vaults (name, type, path, access, description, created_at) VALUES (%s, %s, %s, %s, %s, %s)
               ON CONFLICT (name) DO UPDATE SET path = excluded.path, access = excluded.access, description = excluded.description""",
            (v.name, v.type, _text(v.path), v.access, _text(v.description), v.created_at))
        conn.execute("DELETE FROM vault_readers WHERE vault = %s", (v.name,))
        for agent in v.readers:
            conn.execute("INSERT INTO vault_readers VALUES (%s, %s) ON CONFLICT DO NOTHING", (v.name, _text(agent)))

    def vault_rows(self, reader: Reader, names: list[str] | None = None, types: list[str] | None = None) -> list[VaultRow]:
        sql, params = vault_filter(reader, names, None)
        if types is not None:
            sql += " AND v.type = ANY(%s)"
            params.append(list(types))
        rows = self._all(f"""SELECT name, type, path, access, description, created_at FROM vaults
                                  WHERE name IN ({sql}) ORDER BY name COLLATE "C\"""", params)
        out = {r[0]: VaultRow(r[0], r[1], r[2], r[3], [], r[4], iso(r[5])) for r in rows}
        if out:
            keys = list(out)
            for vault, agent in self._all("SELECT vault, agent FROM vault_readers WHERE vault = ANY(%s) ORDER BY agent COLLATE \"C\"", (keys,)):
                out[vault].readers.append(agent)
            for vault, kind, target, at in self._all(
                    "SELECT vault, kind, target, at FROM vault_attachments WHERE vault = ANY(%s) ORDER BY kind, target COLLATE \"C\"", (keys,)):
                out[vault].attachments.append({"kind": kind, "target": target, "at": iso(at)})
        return list(out.values())

    def vault_ops_applied(self) -> set[str]:
        return {r[0] for r in self._all("SELECT op_key FROM vault_ops")}

    # -- documents -----------------------------------------------------------
    def replace_document(self, doc: DocumentRow, chunks: list[ChunkRow], model: str | None) -> None:
        with self._tx() as conn:
            # two indexers of one file: the second waits, then replaces (without the lock its
            # DELETE would miss the first one's new row and its INSERT break the unique key)
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"palimpsest:doc:{doc.vault}/{_text(doc.path)}",))
            conn.execute("DELETE FROM documents WHERE vault = %s AND path = %s", (doc.vault, _text(doc.path)))
            rowid = conn.execute(
                f"INSERT INTO documents ({_DOC_COLUMNS}) VALUES ({', '.join(['%s'] * 11)}) RETURNING rowid",
                (doc.vault, _text(doc.path), doc.sha256, doc.mtime, doc.size, doc.indexed_at, _text(doc.title), _json(doc.metadata),
                 _text(doc.error), len(chunks), doc.pages)).fetchone()[0]  # type: ignore[index]
            with conn.cursor() as cur:
                cur.executemany(
                    """INSERT INTO document_chunks (id, document_rowid, vault, ordinal, heading_path, text, token_count, metadata, model, dim, embedding)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
                    [(c.id, rowid, doc.vault, c.ordinal, _text(c.heading_path), _text(c.text), c.token_count, _json(c.metadata),
                      *_vector(model, c.vector)) for c in chunks])
            if model is not None:
                self._ensure_chunk_index(conn, {int(np.asarray(c.vector).shape[0]) for c in chunks if c.vector is not None})

    def touch_document(self, vault: str, path: str, mtime: float, size: int) -> None:
        with self._tx() as conn:
            conn.execute("UPDATE documents SET mtime = %s, size = %s WHERE vault = %s AND path = %s", (mtime, size, vault, _text(path)))

    def remove_documents(self, vault: str, paths: list[str]) -> int:
        if not paths:
            return 0
        with self._tx() as conn:
            return conn.execute("DELETE FROM documents WHERE vault = %s AND path = ANY(%s)", (vault, [_text(p) for p in paths])).rowcount

    def document_rows(self, vault: str) -> list[DocumentRow]:
        rows = self._all(f"SELECT {_DOC_COLUMNS} FROM documents WHERE vault = %s ORDER BY path COLLATE \"C\"", (vault,))
        return [DocumentRow(r[0], r[1], r[2], r[3], r[4], iso(r[5]), r[6], dict(r[7]), r[8], r[9], r[10]) for r in rows]

    def get_chunks(self, ids: list[str]) -> list[ChunkRow]:
        if not ids:
            return []
        rows = self._all(f"""SELECT {_CHUNK_READ} FROM document_chunks c JOIN documents d ON d.rowid = c.document_rowid
                                  WHERE c.id = ANY(%s)""", (list(ids),))
        by_id = {r[0]: _chunk(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def chunk_keyword_search(self, terms: list[str], q: ChunkQuery, limit: int, match_all: bool) -> list[tuple[str, float]]:
        terms = [t for t in (_text(t) or "" for t in terms) if t.strip()]
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

    def chunks_without_vectors(self, model: str, vault: str, limit: int) -> list[ChunkRow]:
        rows = self._all(
            f"""SELECT {_CHUNK_READ} FROM document_chunks c JOIN documents d ON d.rowid = c.document_rowid
                WHERE c.vault = %s AND (c.model IS NULL OR c.model != %s) ORDER BY c.rowid LIMIT %s""", (vault, model, limit))
        return [_chunk(r) for r in rows]

    # -- skills --------------------------------------------------------------
    def replace_skills(self, vault: str, skills: list[SkillRow], remove_paths: list[str]) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM skills WHERE vault = %s AND (path = ANY(%s) OR name = ANY(%s))",
                         (vault, [_text(p) for p in remove_paths + [s.path for s in skills]], [_text(s.name) for s in skills]))
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO skills ({_SKILL_COLUMNS}) VALUES ({', '.join(['%s'] * 11)})",
                    [(s.vault, _text(s.name), _text(s.description), _json(s.triggers), _json(s.metadata), _text(s.path), _text(s.body),
                      s.sha256, s.mtime, s.size, s.indexed_at) for s in skills])

    def skill_rows(self, reader: Reader, vaults: list[str] | None = None, names: list[str] | None = None,
                   attached_to: list[tuple[str, str]] | None = None, with_triggers: bool = False) -> list[SkillRow]:
        allowed, params = vault_filter(reader, vaults, attached_to)
        sql = f"SELECT {_SKILL_COLUMNS} FROM skills WHERE vault IN ({allowed})"
        if names is not None:
            sql += " AND name = ANY(%s)"
            params.append(list(names))
        if with_triggers:
            sql += " AND triggers != '[]'::jsonb"
        rows = self._all(sql + " ORDER BY vault COLLATE \"C\", name COLLATE \"C\"", params)
        return [SkillRow(r[0], r[1], r[2], list(r[3]), dict(r[4]), r[5], r[6], r[7], r[8], r[9], iso(r[10])) for r in rows]

    def document_stats(self, vault: str) -> dict[str, int]:
        with self._read() as conn:
            docs, size, errors = conn.execute("SELECT count(*), coalesce(sum(size), 0), count(error) FROM documents WHERE vault = %s",
                                              (vault,)).fetchone()  # type: ignore[misc]
            chunks, embedded = conn.execute("SELECT count(*), count(model) FROM document_chunks WHERE vault = %s", (vault,)).fetchone()  # type: ignore[misc]
            skills, skill_bytes = conn.execute("SELECT count(*), coalesce(sum(size), 0) FROM skills WHERE vault = %s", (vault,)).fetchone()  # type: ignore[misc]
        return {"documents": docs, "chunks": chunks, "embedded": embedded, "bytes": int(size) + int(skill_bytes), "skills": skills,
                "errors": errors}


def _vector(model: str | None, v: np.ndarray | None) -> tuple[Any, Any, Any]:
    if model is None or v is None:
        return None, None, None
    return model, int(v.shape[0]), np.asarray(v, dtype=np.float32)


def _chunk(r: tuple[Any, ...]) -> ChunkRow:
    return ChunkRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], dict(r[7]), None, r[8], dict(r[9]), iso(r[10]))
