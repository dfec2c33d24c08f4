"""The vaults part of the Store contract in SQL both backends run (`store/sql/dialect.py`):
the registry, and reading documents, chunks and skills.

What differs stays with each backend: which vaults a reader may see (`_vault_filter`,
the SQL selecting their names), writing documents and skills (SQLite bumps the
generation its chunk-vector cache is keyed by; PostgreSQL serialises two indexers of one
file and builds HNSW indexes), full text and vectors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import Conflict
from ...records import iso, utcnow
from ..documents_base import ChunkRow, DocumentRow, DocumentStoreContract, Reader, SkillRow, VaultChange, VaultRow
from .dialect import Runner, SQLBackend

DOC_COLUMNS = "vault, path, sha256, mtime, size, indexed_at, title, metadata, error, chunks, pages"
SKILL_COLUMNS = "vault, name, description, triggers, metadata, path, body, sha256, mtime, size, indexed_at"
CHUNK_READ = ("c.id, c.vault, d.path, c.ordinal, c.heading_path, c.text, c.token_count, c.metadata, "
              "d.title, d.metadata, d.indexed_at")


class SQLDocumentsMixin(SQLBackend, DocumentStoreContract):
    # SQL selecting the names of the vaults a reader may see, narrowed by name and attachment
    _vault_filter: Callable[[Reader, list[str] | None, list[tuple[str, str]] | None], tuple[str, list[Any]]]

    # -- registry ------------------------------------------------------------
    def apply_vault_change(self, change: VaultChange) -> bool:
        c = self.dialect.clean
        with self._writing() as run:
            if change.op_key is not None and not run("INSERT INTO vault_ops VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING 1",
                                                     (change.op_key, iso(utcnow()))):
                return False
            if change.vault is not None:
                self._put_vault(run, change.vault)
            if change.attachment is not None:
                a = change.attachment
                if change.attach:
                    run("INSERT INTO vault_attachments VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", (a["vault"], a["kind"], c(a["target"]), a["at"]))
                else:
                    run("DELETE FROM vault_attachments WHERE vault = ? AND kind = ? AND target = ?", (a["vault"], a["kind"], c(a["target"])))
        return True

    def _put_vault(self, run: Runner, v: VaultRow) -> None:
        c = self.dialect.clean
        row = run(f"SELECT type FROM vaults WHERE name = ?{self.dialect.lock_rows}", (v.name,))
        if row and row[0][0] != v.type:
            raise Conflict(f"vault {v.name!r} exists with type {row[0][0]!r}")
        run("""INSERT INTO vaults (name, type, path, access, description, created_at) VALUES (?, ?, ?, ?, ?, ?)
               ON CONFLICT (name) DO UPDATE SET path = excluded.path, access = excluded.access, description = excluded.description""",
            (v.name, v.type, c(v.path), v.access, c(v.description), v.created_at))
        run("DELETE FROM vault_readers WHERE vault = ?", (v.name,))
        run.many("INSERT INTO vault_readers VALUES (?, ?) ON CONFLICT DO NOTHING", [(v.name, c(a)) for a in v.readers])

    def vault_rows(self, reader: Reader, names: list[str] | None = None, types: list[str] | None = None) -> list[VaultRow]:
        d, b, t = self.dialect, self.dialect.bytewise, self.dialect.load_time
        sql, params = self._vault_filter(reader, names, None)
        if types is not None:
            typed, param = d.in_list("v.type", types)
            sql += f" AND {typed}"
            params.append(param)
        rows = self._fetch(f"SELECT name, type, path, access, description, created_at FROM vaults WHERE name IN ({sql}) ORDER BY name{b}", params)
        out = {r[0]: VaultRow(r[0], r[1], r[2], r[3], [], r[4], t(r[5])) for r in rows}
        if out:
            vaults, keys = d.in_list("vault", list(out))
            for vault, agent in self._fetch(f"SELECT vault, agent FROM vault_readers WHERE {vaults} ORDER BY agent{b}", (keys,)):
                out[vault].readers.append(agent)
            for vault, kind, target, at in self._fetch(
                    f"SELECT vault, kind, target, at FROM vault_attachments WHERE {vaults} ORDER BY kind, target{b}", (keys,)):
                out[vault].attachments.append({"kind": kind, "target": target, "at": t(at)})
        return list(out.values())

    def vault_ops_applied(self) -> set[str]:
        return {r[0] for r in self._fetch("SELECT op_key FROM vault_ops")}

    # -- documents and chunks ------------------------------------------------
    def touch_document(self, vault: str, path: str, mtime: float, size: int) -> None:
        with self._writing() as run:
            run("UPDATE documents SET mtime = ?, size = ? WHERE vault = ? AND path = ?", (mtime, size, vault, self.dialect.clean(path)))

    def document_rows(self, vault: str) -> list[DocumentRow]:
        j, t = self.dialect.load_json, self.dialect.load_time
        rows = self._fetch(f"SELECT {DOC_COLUMNS} FROM documents WHERE vault = ? ORDER BY path{self.dialect.bytewise}", (vault,))
        return [DocumentRow(r[0], r[1], r[2], r[3], r[4], t(r[5]), r[6], dict(j(r[7])), r[8], r[9], r[10]) for r in rows]

    def _chunk(self, r: tuple[Any, ...]) -> ChunkRow:
        j = self.dialect.load_json
        return ChunkRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], dict(j(r[7])), None, r[8], dict(j(r[9])), self.dialect.load_time(r[10]))

    def get_chunks(self, ids: list[str]) -> list[ChunkRow]:
        if not ids:
            return []
        where, param = self.dialect.in_list("c.id", list(ids))
        rows = self._fetch(f"SELECT {CHUNK_READ} FROM document_chunks c JOIN documents d ON d.rowid = c.document_rowid WHERE {where}", (param,))
        by_id = {r[0]: self._chunk(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def chunks_without_vectors(self, model: str, vault: str, limit: int) -> list[ChunkRow]:
        rows = self._fetch(
            f"""SELECT {CHUNK_READ} FROM document_chunks c JOIN documents d ON d.rowid = c.document_rowid
                WHERE c.vault = ? AND (c.model IS NULL OR c.model != ?) ORDER BY c.rowid LIMIT ?""", (vault, model, limit))
        return [self._chunk(r) for r in rows]

    # -- skills --------------------------------------------------------------
    def skill_rows(self, reader: Reader, vaults: list[str] | None = None, names: list[str] | None = None,
                   attached_to: list[tuple[str, str]] | None = None, with_triggers: bool = False) -> list[SkillRow]:
        j, t, b = self.dialect.load_json, self.dialect.load_time, self.dialect.bytewise
        allowed, params = self._vault_filter(reader, vaults, attached_to)
        sql = f"SELECT {SKILL_COLUMNS} FROM skills WHERE vault IN ({allowed})"
        if names is not None:
            named, param = self.dialect.in_list("name", names)
            sql += f" AND {named}"
            params.append(param)
        if with_triggers:
            sql += " AND triggers != '[]'"
        rows = self._fetch(sql + f" ORDER BY vault{b}, name{b}", params)
        return [SkillRow(r[0], r[1], r[2], list(j(r[3])), dict(j(r[4])), r[5], r[6], r[7], r[8], r[9], t(r[10])) for r in rows]

    def document_stats(self, vault: str) -> dict[str, int]:
        docs, size, errors = self._fetch("SELECT count(*), coalesce(sum(size), 0), count(error) FROM documents WHERE vault = ?", (vault,))[0]
        chunks, embedded = self._fetch("SELECT count(*), count(model) FROM document_chunks WHERE vault = ?", (vault,))[0]
        skills, skill_bytes = self._fetch("SELECT count(*), coalesce(sum(size), 0) FROM skills WHERE vault = ?", (vault,))[0]
        return {"documents": docs, "chunks": chunks, "embedded": embedded, "bytes": int(size) + int(skill_bytes), "skills": skills,
                "errors": errors}
