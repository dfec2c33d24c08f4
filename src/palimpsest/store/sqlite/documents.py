"""Vaults on SQLite: writing documents and skills, FTS5 and chunk vectors (the registry and
the reads are `store/sql/documents.py`).

Chunk vectors are searched exactly in numpy over a matrix cached in memory. The cache is
keyed by a generation row bumped in every transaction that changes vectors (so another
process's writes are noticed too); after a change only the rows that appeared are read,
and rows that disappeared are masked — re-indexing one document does not reload 100,000
vectors. Access and attachment filters become a set of allowed vault codes, applied
before the top-k is taken, so a small readable vault is never crowded out.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any

import numpy as np

from ..documents_base import ChunkQuery, ChunkRow, DocumentRow, Reader, SkillRow
from ..sql.documents import DOC_COLUMNS, SKILL_COLUMNS, SQLDocumentsMixin
from .connection import SQLiteConnection
from .rows import fts_phrase

COMMON_TERM = 2000  # an any-word match leaves out words in this many chunks or more
BM25_WINDOW = 5000  # keyword matches ranked at most (the most recently indexed)


def visible(reader: Reader, alias: str = "v") -> tuple[str, list[Any]]:
    """SQL condition on a `vaults` row: may `reader` see it?"""
    if reader.owner:
        return "1", []
    return (f"({alias}.access = 'public' OR {alias}.name IN (SELECT vault FROM vault_readers WHERE agent = ?))", [reader.agent or ""])


def vault_filter(reader: Reader, names: list[str] | None, attached_to: list[tuple[str, str]] | None) -> tuple[str, list[Any]]:
    """SQL selecting the names of the vaults a reader may see, narrowed by name and attachment."""
    cond, params = visible(reader)
    if names is not None:
        cond += " AND v.name IN (SELECT value FROM json_each(?))"
        params.append(json.dumps(names))
    if attached_to is not None:
        cond += " AND v.name IN (SELECT a.vault FROM vault_attachments a WHERE a.kind || char(31) || a.target IN (SELECT value FROM json_each(?)))"
        params.append(json.dumps([f"{k}\x1f{t}" for k, t in attached_to]))
    return f"SELECT v.name FROM vaults v WHERE {cond}", params


class SQLiteDocumentsMixin(SQLDocumentsMixin, SQLiteConnection):
    _vault_filter = staticmethod(vault_filter)

    # -- documents -----------------------------------------------------------
    def replace_document(self, doc: DocumentRow, chunks: list[ChunkRow], model: str | None) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM documents WHERE vault = ? AND path = ?", (doc.vault, doc.path))
            cur = conn.execute(
                f"INSERT INTO documents ({DOC_COLUMNS}) VALUES ({', '.join('?' * 11)})",
                (doc.vault, doc.path, doc.sha256, doc.mtime, doc.size, doc.indexed_at, doc.title,
                 json.dumps(doc.metadata, ensure_ascii=False, sort_keys=True), doc.error, len(chunks), doc.pages))
            conn.executemany(
                """INSERT INTO document_chunks (id, document_rowid, vault, ordinal, heading_path, text, keywords, token_count, metadata,
                                                model, dim, vector)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [(c.id, cur.lastrowid, doc.vault, c.ordinal, c.heading_path, c.text, c.keywords, c.token_count,
                  json.dumps(c.metadata, ensure_ascii=False), *self._vector_params(model, c.vector)) for c in chunks])
            self._bump(conn)

    @staticmethod
    def _vector_params(model: str | None, v: np.ndarray | None) -> tuple[Any, Any, Any]:
        if model is None or v is None:
            return None, None, None
        return model, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()

    @staticmethod
    def _bump(conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE document_generation SET n = n + 1 WHERE id = 1")

    def remove_documents(self, vault: str, paths: list[str]) -> int:
        if not paths:
            return 0
        with self._tx() as conn:
            n = conn.execute("DELETE FROM documents WHERE vault = ? AND path IN (SELECT value FROM json_each(?))",
                             (vault, json.dumps(paths))).rowcount
            self._bump(conn)
        return n

    def chunk_keyword_search(self, terms: list[str], q: ChunkQuery, limit: int, match_all: bool) -> list[tuple[str, float]]:
        if not match_all:
            terms = self._rare_terms(terms)
        if not terms:
            return []
        match = (" " if match_all else " OR ").join(fts_phrase(t) for t in terms)
        sql, params = vault_filter(q.reader, q.vaults, q.attached_to)
        allowed = {r[0] for r in self._reader.execute(sql, params)}
        if not allowed:
            return []
        # BM25 costs a few µs a match (a word in 20,000 of 100,000 chunks: 40 ms), so past
        # BM25_WINDOW matches only the most recently indexed BM25_WINDOW are ranked; the
        # window is found by reading matches in rowid order, without scoring them. Ranking
        # happens in FTS alone (joining every match to its row to check its vault cost 10x),
        # best first, and the vault is checked on the ranked rows; when too few pass, more
        # are ranked — and a window that left a readable vault short is dropped.
        edge = self._reader.execute("SELECT rowid FROM document_chunks_fts WHERE document_chunks_fts MATCH ? ORDER BY rowid DESC "
                                    "LIMIT 1 OFFSET ?", (match, BM25_WINDOW)).fetchone()
        found = self._ranked(match, allowed, limit, int(edge[0]) if edge else None)
        if len(found) < limit and edge:
            found = self._ranked(match, allowed, limit, None)
        return found

    def _ranked(self, match: str, allowed: set[str], limit: int, above: int | None) -> list[tuple[str, float]]:
        window = f" AND rowid > {above}" if above is not None else ""
        n = max(limit * 4, 200)
        while True:
            rows = self._reader.execute(
                f"""SELECT c.id, r.rank, c.vault FROM (SELECT rowid, bm25(document_chunks_fts, 0.5, 1.0, 1.0) AS rank FROM document_chunks_fts
                    WHERE document_chunks_fts MATCH ?{window} ORDER BY rank LIMIT ?) r
                    JOIN document_chunks c ON c.rowid = r.rowid ORDER BY r.rank, c.rowid""", (match, n)).fetchall()
            found = [(r[0], -float(r[1])) for r in rows if r[2] in allowed][:limit]
            if len(found) >= limit or len(rows) < n:
                return found
            n *= 8

    def _rare_terms(self, terms: list[str]) -> list[str]:
        """For an any-word match: the terms in fewer than `COMMON_TERM` chunks (or the
        rarest one). Scoring an OR of a common word means scoring most of the index (0.5 s
        at 100k chunks); such a word adds almost nothing to BM25 (its IDF is near 0), and
        the chunks it alone would bring are what the vector side is for."""
        if len(terms) < 2:
            return terms
        counts = {}
        for term in terms:
            sql = "SELECT count(*) FROM (SELECT 1 FROM document_chunks_fts WHERE document_chunks_fts MATCH ? LIMIT ?)"
            counts[term] = self._reader.execute(sql, (fts_phrase(term), COMMON_TERM)).fetchone()[0]
        rare = [t for t in terms if counts[t] < COMMON_TERM]
        return rare or [min(terms, key=lambda t: counts[t])]

    def chunk_vector_search(self, model: str, query: np.ndarray, q: ChunkQuery, limit: int) -> list[tuple[str, float]]:
        entry = self._chunk_matrix(model)
        if entry["matrix"] is None or limit <= 0:
            return []
        vaults, params = vault_filter(q.reader, q.vaults, q.attached_to)
        codes = [entry["codes"][n] for (n,) in self._reader.execute(vaults, params) if n in entry["codes"]]
        if not codes:
            return []
        # einsum, not `@`: a matrix-vector product gains nothing from OpenBLAS's threads, and
        # on a loaded machine their spinning made it 10-30x slower (25 ms vs 2 ms at 5k x 384)
        scores = np.einsum("ij,j->i", entry["matrix"], np.asarray(query, dtype=np.float32))
        mask = entry["alive"] & np.isin(entry["vault"], np.asarray(codes, dtype=np.int32))
        scores = np.where(mask, scores, -np.inf)
        k = min(limit, int(mask.sum()))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(entry["ids"][i], float(scores[i])) for i in top]

    def _chunk_matrix(self, model: str) -> dict[str, Any]:
        """Every chunk vector of `model`, cached; after a change, rows that appeared are
        read and rows that disappeared are masked (the matrix is rebuilt when a third of
        it is dead)."""
        lock = self.__dict__.setdefault("_chunk_lock", threading.Lock())
        cache: dict[str, Any] = self.__dict__.setdefault("_chunk_cache", {})
        with lock:
            gen = self._reader.execute("SELECT n FROM document_generation WHERE id = 1").fetchone()[0]
            entry = cache.get(model)
            if entry is not None and entry["gen"] == gen:
                return entry
            if entry is None or entry["dead"] * 3 > len(entry["ids"]):
                entry = {"rowids": np.zeros(0, np.int64), "ids": [], "vault": np.zeros(0, np.int32), "matrix": None,
                         "alive": np.zeros(0, bool), "codes": {}, "dead": 0}
            current = np.fromiter((r[0] for r in self._reader.execute(
                "SELECT rowid FROM document_chunks WHERE model = ? ORDER BY rowid", (model,))), dtype=np.int64)
            entry["alive"] = np.isin(entry["rowids"], current)
            entry["dead"] = int((~entry["alive"]).sum())
            new = current[~np.isin(current, entry["rowids"])] if len(entry["rowids"]) else current
            if len(new):
                self._append_rows(entry, model, new)
            entry["gen"] = gen
            cache[model] = entry
            return entry

    def _append_rows(self, entry: dict[str, Any], model: str, rowids: np.ndarray) -> None:
        rows = []
        for start in range(0, len(rowids), 50_000):
            part = json.dumps([int(r) for r in rowids[start:start + 50_000]])
            rows += self._reader.execute(
                "SELECT rowid, id, vault, vector FROM document_chunks WHERE rowid IN (SELECT value FROM json_each(?)) AND model = ? ORDER BY rowid",
                (part, model)).fetchall()
        if not rows:
            return
        codes = entry["codes"]
        for r in rows:
            codes.setdefault(r[2], len(codes))
        matrix = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        entry["rowids"] = np.concatenate([entry["rowids"], np.fromiter((r[0] for r in rows), np.int64, len(rows))])
        entry["ids"] = entry["ids"] + [r[1] for r in rows]
        entry["vault"] = np.concatenate([entry["vault"], np.fromiter((codes[r[2]] for r in rows), np.int32, len(rows))])
        entry["alive"] = np.concatenate([entry["alive"], np.ones(len(rows), bool)])
        entry["matrix"] = matrix if entry["matrix"] is None else np.vstack([entry["matrix"], matrix])

    def chunk_vectors(self, model: str, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        rows = self._reader.execute("SELECT id, vector FROM document_chunks WHERE model = ? AND id IN (SELECT value FROM json_each(?))",
                                    (model, json.dumps(ids))).fetchall()
        return {i: np.frombuffer(b, dtype=np.float32) for i, b in rows}

    def put_chunk_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        if not rows:
            return
        with self._tx() as conn:
            conn.executemany("UPDATE document_chunks SET model = ?, dim = ?, vector = ? WHERE id = ?",
                             [(*self._vector_params(model, v), i) for i, v in rows])
            self._bump(conn)

    # -- skills --------------------------------------------------------------
    def replace_skills(self, vault: str, skills: list[SkillRow], remove_paths: list[str]) -> None:
        with self._tx() as conn:
            conn.execute("DELETE FROM skills WHERE vault = ? AND path IN (SELECT value FROM json_each(?))",
                         (vault, json.dumps(remove_paths + [s.path for s in skills])))
            conn.executemany(
                f"INSERT OR REPLACE INTO skills ({SKILL_COLUMNS}) VALUES ({', '.join('?' * 11)})",
                [(s.vault, s.name, s.description, json.dumps(s.triggers, ensure_ascii=False),
                  json.dumps(s.metadata, ensure_ascii=False, sort_keys=True, default=str), s.path, s.body, s.sha256, s.mtime,
                  s.size, s.indexed_at) for s in skills])
