"""What resolution reads about a repository, loaded all at once or on demand.

A first index (or `--full`, or a run where many files changed) resolves every edge, and
then one pass loading every symbol, binding and hint into dictionaries is fastest. A
re-index after editing one file resolves a few thousand edges at most; loading 70,000
symbols for that would cost more than the resolution itself, so `Tables(eager=False)`
fetches what a lookup needs with indexed queries and keeps it for the rest of the run.
Both modes answer the same questions the same way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")

SymRow = tuple[int, str, str, str | None]  # file_id, qnorm, kind, parent


class Tables:
    def __init__(self, db: sqlite3.Connection, repo_id: int, *, eager: bool) -> None:
        self.db, self.repo_id = db, repo_id
        self._sym: dict[int, SymRow | None] = {}
        self._ids: dict[str, list[int]] = {}
        self._members: dict[str, dict[str, list[int]]] = {}
        self._files: dict[int, tuple[str, str]] = {}  # file_id → (module, language)
        self._module_files: dict[str, list[int]] = {}
        self._bindings: dict[int, dict[str, list[str]]] = {}
        self._hints: dict[int, dict[str, list[str]]] = {}
        self._attrs: dict[str, list[tuple[int, int, str]]] = {}
        self.complete = False
        if eager:
            self._preload()
            self.complete = True

    # -- questions -------------------------------------------------------------------------

    def sym(self, sid: int) -> SymRow | None:
        return self._get(self._sym, sid, self._load_sym, None)

    def ids(self, q: str) -> list[int]:
        """Symbols whose qnorm is `q`, in id order."""
        return self._get(self._ids, q, self._load_ids, [])

    def members(self, parent: str) -> dict[str, list[int]]:
        """Symbols directly inside `parent` (a qnorm), by name."""
        return self._get(self._members, parent, self._load_members, {})

    def file(self, file_id: int) -> tuple[str, str]:
        return self._get(self._files, file_id, self._load_file, ("", ""))

    def module_files(self, module: str) -> list[int]:
        return self._get(self._module_files, module, self._load_module_files, [])

    def bindings(self, file_id: int) -> dict[str, list[str]]:
        return self._get(self._bindings, file_id, lambda f: self._grouped("SELECT alias, target FROM bindings WHERE file_id = ?", f), {})

    def hints(self, src: int) -> dict[str, list[str]]:
        return self._get(self._hints, src, lambda s: self._grouped("SELECT name, type FROM hints WHERE src_id = ?", s), {})

    def attr_hints(self, attr: str) -> list[tuple[int, int, str]]:
        """Every `self.attr` hint of the repository: (file, scope symbol, type)."""
        return self._get(self._attrs, attr, self._load_attrs, [])

    # -- loading ---------------------------------------------------------------------------

    def _get(self, cache: dict[K, V], key: K, load: Callable[[K], V], empty: V) -> V:
        if key in cache:
            return cache[key]
        if self.complete:
            return empty
        value = cache[key] = load(key)
        return value

    def _preload(self) -> None:
        for sid, fid, name, q, kind, parent in self.db.execute(
            "SELECT id, file_id, name, qnorm, kind, parent FROM symbols WHERE repo_id = ? ORDER BY id", (self.repo_id,)
        ):
            self._sym[sid] = (fid, q, kind, parent)
            self._ids.setdefault(q, []).append(sid)
            if parent is not None:
                self._members.setdefault(parent, {}).setdefault(name, []).append(sid)
        for fid, module, language in self.db.execute("SELECT id, module, language FROM files WHERE repo_id = ?", (self.repo_id,)):
            self._files[fid] = (module, language)
            self._module_files.setdefault(module, []).append(fid)
        for fid, alias, target in self.db.execute(
            "SELECT b.file_id, b.alias, b.target FROM bindings b JOIN files f ON f.id = b.file_id WHERE f.repo_id = ?", (self.repo_id,)
        ):
            self._bindings.setdefault(fid, {}).setdefault(alias, []).append(target)
        for fid, src, name, type_name in self.db.execute(
            "SELECT h.file_id, h.src_id, h.name, h.type FROM hints h JOIN files f ON f.id = h.file_id WHERE f.repo_id = ?", (self.repo_id,)
        ):
            if name.startswith("self."):
                self._attrs.setdefault(name[5:], []).append((fid, src, type_name))
            else:
                self._hints.setdefault(src, {}).setdefault(name, []).append(type_name)

    def _load_sym(self, sid: int) -> SymRow | None:
        row = self.db.execute("SELECT file_id, qnorm, kind, parent FROM symbols WHERE id = ?", (sid,)).fetchone()
        return (row[0], row[1], row[2], row[3]) if row else None

    def _load_ids(self, q: str) -> list[int]:
        rows = self.db.execute(
            "SELECT id, file_id, qnorm, kind, parent FROM symbols WHERE repo_id = ? AND qnorm = ? ORDER BY id", (self.repo_id, q)
        ).fetchall()
        for sid, *rest in rows:
            self._sym[sid] = (rest[0], rest[1], rest[2], rest[3])
        return [r[0] for r in rows]

    def _load_members(self, parent: str) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for sid, fid, name, q, kind in self.db.execute(
            "SELECT id, file_id, name, qnorm, kind FROM symbols WHERE repo_id = ? AND parent = ? ORDER BY id", (self.repo_id, parent)
        ):
            self._sym[sid] = (fid, q, kind, parent)
            found.setdefault(name, []).append(sid)
        return found

    def _load_file(self, file_id: int) -> tuple[str, str]:
        row = self.db.execute("SELECT module, language FROM files WHERE id = ?", (file_id,)).fetchone()
        return (row[0], row[1]) if row else ("", "")

    def _load_module_files(self, module: str) -> list[int]:
        rows = self.db.execute("SELECT id FROM files WHERE repo_id = ? AND module = ? ORDER BY id", (self.repo_id, module))
        return [r[0] for r in rows]

    def _load_attrs(self, attr: str) -> list[tuple[int, int, str]]:
        rows = self.db.execute(
            "SELECT h.file_id, h.src_id, h.type FROM hints h JOIN files f ON f.id = h.file_id WHERE h.name = ? AND f.repo_id = ?",
            ("self." + attr, self.repo_id),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def _grouped(self, sql: str, key: int) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for name, value in self.db.execute(sql, (key,)):
            found.setdefault(name, []).append(value)
        return found
