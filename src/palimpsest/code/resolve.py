"""Turning names at call sites into symbols, only where the name is unambiguous.

Resolution follows the language's own scoping, never "any symbol with that name": a
name is looked up in the enclosing functions, then the module (for Go, the package —
every file of the folder), then the file's imports, then modules it star-imports. A
dotted name is then followed member by member (`mod.Class.method`); `self.x` / `this.x`
is looked up in the enclosing class and its bases, `super().x` in its bases only. A
package re-exporting a name (`from .impl import f` in `__init__.py`) is followed.

"Unambiguous": when several symbols share the qualified name, the one in the same file
wins (the first, for conditional redefinitions); otherwise the edge keeps its name and
no target. Calls on values whose type would need inference (`obj.save()`) stay names;
`callers` can still match them by name, flagged as unresolved.

Re-indexing does not re-resolve the whole repository: a changed file's own edges are
resolved again, and so is every edge elsewhere whose last name part is a name the file
defined or imported before or after the change.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from .model import CLASS_KINDS
from .store import chunks, placeholders
from .tables import Tables

_MAX_HOPS = 6


class Resolver:
    """An in-memory view of one repository's symbols and bindings, for resolution."""

    def __init__(self, db: sqlite3.Connection, repo_id: int, *, eager: bool = True) -> None:
        self.db, self.repo_id = db, repo_id
        self.t = Tables(db, repo_id, eager=eager)
        self.bases: dict[str, list[str]] = {}  # class qnorm → base qnorms, in order
        self.bases_complete = False  # True once every inheritance edge went through add_base
        self._types: dict[tuple[int, int, str], str | None] = {}

    def _kind(self, sid: int) -> str:
        row = self.t.sym(sid)
        return row[2] if row else ""

    def _qn(self, sid: int) -> str:
        row = self.t.sym(sid)
        return row[1] if row else ""

    def _parent(self, sid: int) -> str | None:
        row = self.t.sym(sid)
        return row[3] if row else None

    def _file(self, sid: int) -> int:
        row = self.t.sym(sid)
        return row[0] if row else -1

    def bases_of(self, cls: str) -> list[str]:
        """Base classes of `cls` (qnorms, in order): its own inheritance edges and its `impl … for`."""
        if cls not in self.bases and not self.bases_complete:
            owners = [sid for sid in self.t.ids(cls) if self._kind(sid) != "impl"]
            owners += [sid for ids in self.t.members(cls).values() for sid in ids if self._kind(sid) == "impl"]
            rows = self.db.execute(
                "SELECT d.qnorm FROM edges e JOIN symbols d ON d.id = e.dst_id "
                f"WHERE e.src_id IN ({placeholders(owners)}) AND e.kind = 'inherit' ORDER BY e.id",
                owners,
            ).fetchall() if owners else []  # fmt: skip
            self.bases[cls] = [r[0] for r in rows]
        return self.bases.get(cls, [])

    # -- entry points --------------------------------------------------------------------

    def resolve(self, file_id: int, src: int, kind: str, name: str) -> int | None:
        """The symbol an edge's name means from where it is written, or None."""
        hit = self._resolve(file_id, src, kind, name)
        if hit is None or kind == "import":
            return hit
        target = self._kind(hit)
        if target == "module" or (kind == "inherit" and target not in CLASS_KINDS):
            return None  # a local variable shadowing an imported module, most likely
        return hit

    def _resolve(self, file_id: int, src: int, kind: str, name: str) -> int | None:
        tokens = name.split(".")
        if kind == "import":
            return self.path(tokens, file_id)
        head = tokens[0]
        if head == "?" or not head:
            return None
        if head == "self":
            return self._self(src, tokens, file_id)
        if head == "super":
            return self._super(src, tokens, file_id)
        if len(tokens) > 1 and kind == "call":
            typ = self.local_type(src, head, file_id)
            if typ is not None:
                return self.member(typ, tokens[1], file_id) if len(tokens) == 2 else None
        if kind != "inherit" and self.shadowed(src, head, file_id):
            return None  # a parameter or local variable of unknown type
        start = self.parent_symbol(src, file_id) if kind == "inherit" else src
        hit = self.scope(head, start, file_id)
        if hit is not None:
            return self.descend(hit, tokens[1:], file_id)
        return self._imported(tokens, file_id)

    def add_base(self, src: int, dst: int) -> None:
        key = self._parent(src) if self._kind(src) == "impl" else self._qn(src)
        if key is not None:
            self.bases.setdefault(key, []).append(self._qn(dst))

    # -- lookups -------------------------------------------------------------------------

    def pick(self, ids: list[int], file_id: int) -> int | None:
        if len(ids) == 1:
            return ids[0]
        if not ids:
            return None
        same = [i for i in ids if self._file(i) == file_id]
        if same:
            return same[0]
        if all(self._kind(i) == "module" for i in ids):
            return ids[0]  # one Go package spread over files: any file stands for it
        return None

    def scope(self, name: str, src: int | None, file_id: int) -> int | None:
        """`name` as seen from inside `src`: enclosing functions, then the module."""
        first = True
        cur = src
        for _ in range(_MAX_HOPS):
            if cur is None or self._kind(cur) == "module":
                break
            if first or self._kind(cur) not in CLASS_KINDS:
                ids = self.t.members(self._qn(cur)).get(name)
                if ids:
                    return self.pick(ids, file_id)
            first = False
            cur = self.parent_symbol(cur, file_id)
        ids = self.t.members(self.t.file(file_id)[0]).get(name)
        return self.pick(ids, file_id) if ids else None

    def parent_symbol(self, sid: int, file_id: int) -> int | None:
        parent = self._parent(sid)
        ids = self.t.ids(parent) if parent is not None else None
        return self.pick(ids, file_id) if ids else None

    def descend(self, sid: int | None, rest: list[str], file_id: int) -> int | None:
        for token in rest:
            if sid is None:
                return None
            kind = self._kind(sid)
            if kind == "module":
                sid = self.path([*self._qn(sid).split("."), token], file_id)
            elif kind in CLASS_KINDS:
                sid = self.member(self._qn(sid), token, file_id)
            else:
                return None
        return sid

    def member(self, cls: str, name: str, file_id: int, seen: set[str] | None = None) -> int | None:
        """`name` in class `cls` or, failing that, in its bases (depth first, in order)."""
        ids = self.t.members(cls).get(name)
        if ids:
            return self.pick(ids, file_id)
        seen = seen if seen is not None else set()
        seen.add(cls)
        for base in self.bases_of(cls):
            if base not in seen:
                hit = self.member(base, name, file_id, seen)
                if hit is not None:
                    return hit
        return None

    def path(self, tokens: list[str], file_id: int, hops: int = 0) -> int | None:
        """A fully qualified name, following packages that re-export what they import."""
        ids = self.t.ids(".".join(tokens))
        if ids:
            return self.pick(ids, file_id)
        if hops >= _MAX_HOPS:
            return None
        for i in range(len(tokens) - 1, 0, -1):
            prefix = ".".join(tokens[:i])
            if self.t.module_files(prefix):
                return self._reexport(prefix, tokens[i:], file_id, hops)
            ids = self.t.ids(prefix)
            if ids:
                return self.descend(self.pick(ids, file_id), tokens[i:], file_id)
        return None

    def enclosing_class(self, src: int | None, file_id: int) -> str | None:
        cur = src
        for _ in range(_MAX_HOPS):
            if cur is None:
                return None
            kind = self._kind(cur)
            if kind == "impl" or kind == "method":
                return self._parent(cur)
            if kind in CLASS_KINDS:
                return self._qn(cur)
            if kind == "module":
                return None
            cur = self.parent_symbol(cur, file_id)
        return None

    # -- types of names --------------------------------------------------------------------

    def local_type(self, src: int | None, name: str, file_id: int) -> str | None:
        """The class of variable `name` as seen from `src`: its hints, then enclosing scopes'."""
        cur = src
        for _ in range(_MAX_HOPS):
            if cur is None:
                return None
            hinted = self.t.hints(cur).get(name)
            if hinted:  # the nearest binding of the name decides, typed or not
                return next((t for t in (self.class_named(file_id, cur, n) for n in hinted if n) if t is not None), None)
            if self._kind(cur) == "module":
                return None
            cur = self.parent_symbol(cur, file_id) if self._kind(cur) not in CLASS_KINDS else self._module_symbol(file_id)
        return None

    def shadowed(self, src: int | None, name: str, file_id: int) -> bool:
        """Whether `name` is a local of the enclosing functions (a nested def of that name wins)."""
        cur = src
        for _ in range(_MAX_HOPS):
            if cur is None or self._kind(cur) not in ("function", "method"):
                return False
            if name in self.t.members(self._qn(cur)):
                return False
            if name in self.t.hints(cur):
                return True
            cur = self.parent_symbol(cur, file_id)
        return False

    def attr_type(self, cls: str, attr: str, seen: set[str] | None = None) -> str | None:
        """The class of attribute `self.attr` of class `cls` (or of a base)."""
        assigned = [(f, src, t) for f, src, t in self.t.attr_hints(attr) if self.enclosing_class(src, f) == cls]
        declared = [(self._file(c), c, t) for c in self.t.ids(cls) for t in self.t.hints(c).get(attr, ())]  # `attr: T` in the body
        for fid, src, type_name in [*assigned, *declared]:
            typ = self.class_named(fid, src, type_name)
            if typ is not None:
                return typ
        seen = seen if seen is not None else set()
        seen.add(cls)
        for base in self.bases_of(cls):
            if base not in seen:
                typ = self.attr_type(base, attr, seen)
                if typ is not None:
                    return typ
        return None

    def class_named(self, file_id: int, src: int, type_name: str) -> str | None:
        """The qnorm of the class `type_name` names where it is written, or None."""
        key = (file_id, src, type_name)
        if key not in self._types:
            self._types[key] = None  # guards against cycles through return types
            self._types[key] = self._class_of(self._resolve(file_id, src, "type", type_name))
        return self._types[key]

    def _class_of(self, hit: int | None) -> str | None:
        """A class is itself; a function stands for the class its return annotation names."""
        if hit is None:
            return None
        kind = self._kind(hit)
        if kind in CLASS_KINDS and kind != "impl":
            return self._qn(hit)
        if kind in ("function", "method"):
            for type_name in self.t.hints(hit).get("->", ()):
                typ = self.class_named(self._file(hit), hit, type_name)
                if typ is not None:
                    return typ
        return None

    def _module_symbol(self, file_id: int) -> int | None:
        ids = self.t.ids(self.t.file(file_id)[0])
        same = [i for i in ids or () if self._file(i) == file_id and self._kind(i) == "module"]
        return same[0] if same else None

    # -- helpers -------------------------------------------------------------------------

    def _self(self, src: int, tokens: list[str], file_id: int) -> int | None:
        cls = self.enclosing_class(src, file_id)
        if cls is None or not 2 <= len(tokens) <= 3:
            return None
        if len(tokens) == 2:
            return self.member(cls, tokens[1], file_id)
        typ = self.attr_type(cls, tokens[1])  # self.store.save(): the class of self.store
        return self.member(typ, tokens[2], file_id) if typ is not None else None

    def _super(self, src: int, tokens: list[str], file_id: int) -> int | None:
        cls = self.enclosing_class(src, file_id)
        for base in self.bases_of(cls) if cls is not None else ():
            if len(tokens) == 1:  # JavaScript super(): the base constructor
                ids = self.t.ids(base)
                return self.pick(ids, file_id) if ids else None
            hit = self.member(base, tokens[1], file_id)
            if hit is not None:
                return hit
        return None

    def _imported(self, tokens: list[str], file_id: int) -> int | None:
        bound = self.t.bindings(file_id)
        for target in bound.get(tokens[0], ()):
            hit = self.path([*target.split("."), *tokens[1:]], file_id)
            if hit is not None:
                return hit
        for star in bound.get("*", ()):
            hit = self.path([*star.split("."), *tokens], file_id)
            if hit is not None:
                return hit
        if len(tokens) > 1 and self.t.file(file_id)[1] == "rust":
            return self.path(tokens, file_id)  # paths made absolute at extraction
        return None

    def _reexport(self, module: str, rest: list[str], file_id: int, hops: int) -> int | None:
        for fid in self.t.module_files(module):
            bound = self.t.bindings(fid)
            for target in bound.get(rest[0], ()):
                hit = self.path([*target.split("."), *rest[1:]], file_id, hops + 1)
                if hit is not None:
                    return hit
            for star in bound.get("*", ()):
                hit = self.path([*star.split("."), *rest], file_id, hops + 1)
                if hit is not None:
                    return hit
        return None


Pending = tuple[int, int, str, str, str, int]  # file_id, src_id, kind, name, tail, line


def resolve_repo(db: sqlite3.Connection, repo_id: int, pending: list[Pending], files: set[int] | None, names: set[str],
                 inbound: Iterable[int] = ()) -> int:  # fmt: skip
    """Store the freshly parsed edges resolved, and re-resolve the stored ones they may affect.

    `files` None: everything is resolved again, from tables loaded whole. Otherwise only
    the pending edges (of the re-parsed `files`), stored edges that pointed into them
    (`inbound`) and stored edges whose last name part is in `names`, from tables loaded on
    demand. Inheritance goes first either way, so that
    `self.x` can walk the bases. Returns how many edges were resolved.
    """
    whole = files is None
    if not whole:
        names = names | _aliases(db, repo_id, names)
    db.executemany("INSERT INTO edges (repo_id, file_id, src_id, kind, name, tail, line) VALUES (?,?,?,?,?,?,?)",
                   [(repo_id, *p) for p in pending if p[2] == "inherit"])  # fmt: skip
    r = Resolver(db, repo_id, eager=whole)
    inherit = _stored(db, repo_id, "= 'inherit'", None if whole else (files or set()), names, inbound)
    updates = _updates(r, inherit, record_bases=whole)
    db.executemany("UPDATE edges SET dst_id = ? WHERE id = ?", updates)
    if whole:
        r.bases_complete = True
    else:
        r.bases.clear()  # read again, with this run's inheritance stored
    rows = _stored(db, repo_id, "!= 'inherit'", None if whole else set(), names, inbound)
    db.executemany("UPDATE edges SET dst_id = ? WHERE id = ?", _updates(r, rows, record_bases=False))
    fresh = [p for p in pending if p[2] != "inherit"]
    db.executemany("INSERT INTO edges (repo_id, file_id, src_id, kind, name, tail, line, dst_id) VALUES (?,?,?,?,?,?,?,?)",
                   [(repo_id, *p, r.resolve(p[0], p[1], p[2], p[3])) for p in fresh])  # fmt: skip
    return len(inherit) + len(rows) + len(fresh)


_TAIL = "substr(b.target, length(rtrim(b.target, replace(b.target, '.', ''))) + 1)"  # a dotted target's last part, in SQL


def _aliases(db: sqlite3.Connection, repo_id: int, names: set[str]) -> set[str]:
    """The names an import binds to one of `names` under another ("from .later import thing as t": `t`), and those bound
    to them again (`from .d import t as u`): a call through an alias has the alias for its tail, and was never looked at
    again when `thing` appeared or vanished. Found in SQL, by the targets' last part."""
    found: set[str] = set()
    frontier = set(names)
    for _ in range(8):  # aliases of aliases, a few hops at most
        new: set[str] = set()
        for part in chunks(sorted(frontier)):
            sql = (f"SELECT b.alias FROM bindings b JOIN files f ON f.id = b.file_id WHERE f.repo_id = ? "
                   f"AND {_TAIL} IN ({placeholders(part)}) AND b.alias != '*'")
            new.update(alias for (alias,) in db.execute(sql, (repo_id, *part)))
        frontier = new - names - found
        if not frontier:
            break
        found |= frontier
    return found


def _updates(r: Resolver, rows: list[tuple[int, int, int, str, str, int | None]], *, record_bases: bool) -> list[tuple[int | None, int]]:
    changed = []
    for eid, fid, src, kind, name, dst in rows:
        new = r.resolve(fid, src, kind, name)
        if record_bases and new is not None:
            r.add_base(src, new)
        if new != dst:
            changed.append((new, eid))
    return changed


def _stored(db: sqlite3.Connection, repo_id: int, kind: str, files: set[int] | None, names: set[str],
            inbound: Iterable[int]) -> list[tuple]:  # fmt: skip
    """Stored edges of a kind: all (`files` None), or those in `files` or whose tail is in `names`."""
    base = f"SELECT id, file_id, src_id, kind, name, dst_id FROM edges WHERE repo_id = ? AND kind {kind}"
    if files is None:
        return db.execute(base + " ORDER BY id", (repo_id,)).fetchall()
    found: dict[int, tuple] = {}
    for column, keys in (("file_id", sorted(files)), ("tail", sorted(names)), ("id", sorted(inbound))):
        for part in chunks(keys):
            for row in db.execute(f"{base} AND {column} IN ({placeholders(part)})", (repo_id, *part)):
                found[row[0]] = row
    return [found[k] for k in sorted(found)]
