"""`CodeGraph`: index repositories and ask who defines, calls and depends on what.

    graph = CodeGraph(settings=Settings.load())      # <home>/code.db, created on first use
    graph.index("~/src/app")                          # incremental; returns an IndexReport
    graph.definition("Store.save")                    # every symbol that name can mean
    graph.callers("Store.save"); graph.impact("Store.save", depth=3)

A query names its repository by name or root path; without one, the repository whose root
holds the current directory is used, or the only one indexed. A symbol is named by its
qualified name or any dotted tail of it (`save`, `Store.save`, `app.store.Store.save`,
`Point::new`); a name that fits several definitions answers for all of them.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from ..errors import InvalidInput, NotFound
from ..harness.project import project_of
from ..settings import Settings
from . import indexer, store
from .model import CALLABLE_KINDS, Edge, Impact, IndexReport, Symbol, qnorm
from .store import SYMBOL_COLUMNS, SYMBOL_FROM, chunks, placeholders


def _columns(sym: str, file: str) -> str:
    return ", ".join(f"{sym}.{c}" if c not in ("path", "language") else f"{file}.{c}" for c in (
        "id", "repo", "path", "language", "name", "qualname", "kind", "start_line", "end_line", "signature", "doc", "parent",
    )).replace(f"{sym}.repo", "ra.name")  # fmt: skip


_SOURCE = _columns("a", "fa")
_TARGET = _columns("b", "fb")
_CONSTRUCTORS = frozenset({"__init__", "__new__", "constructor"})


@dataclass(frozen=True)
class Repo:
    id: int
    name: str
    root: str
    exclude: list[str]
    indexed_at: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "root": self.root, "exclude": self.exclude, "indexed_at": self.indexed_at}


@dataclass(frozen=True)
class OutlineItem:
    symbol: Symbol
    depth: int

    def to_dict(self) -> dict[str, Any]:
        return {"depth": self.depth, **self.symbol.to_dict()}


def default_path(settings: Settings) -> Path:
    """Where the code graph lives: setting `code_db`, else `<home>/code.db`."""
    configured = str(getattr(settings, "code_db", "") or "")
    return Path(os.path.expanduser(configured)) if configured else settings.home_path / "code.db"


class CodeGraph:
    """Symbols and edges of any number of repositories, in one SQLite file of their own."""

    def __init__(self, path: str | Path | None = None, *, settings: Settings | None = None) -> None:
        self.settings = settings if settings is not None else Settings.load()
        self.path = Path(path) if path is not None else default_path(self.settings)
        self.db = store.connect(self.path)
        self._names: dict[int, list[str]] = {}

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- repositories --------------------------------------------------------------------

    def index(self, path: str | Path = ".", *, name: str | None = None, exclude: list[str] | None = None,
              full: bool = False) -> IndexReport:  # fmt: skip
        """Index (or re-index) the tree at `path`. `exclude` adds gitignore-style patterns and
        is remembered for later runs; `full` re-parses and re-resolves every file."""
        found = _existing(path)
        if found is None or not found.is_dir():
            raise InvalidInput(f"not a directory: {path}")
        root = found.resolve()
        repo = self._register(root, name, exclude)
        report = IndexReport(repo.name, repo.root)
        self._names.pop(repo.id, None)
        return indexer.run(self.db, repo.id, report, repo.exclude, int(self.settings.code_max_file_bytes), full)

    def repos(self) -> list[Repo]:
        rows = self.db.execute("SELECT id, name, root, exclude, indexed_at FROM repos ORDER BY name").fetchall()
        return [Repo(r[0], r[1], r[2], json.loads(r[3]), r[4]) for r in rows]

    def forget(self, repo: str) -> Repo:
        """Drop a repository and everything indexed from it."""
        found = self.repo(repo)
        with store.write(self.db):
            self.db.execute("DELETE FROM repos WHERE id = ?", (found.id,))
        return found

    def repo(self, repo: str | None = None) -> Repo:
        """The repository named `repo` (name or root path), or the one around the current directory."""
        found = self.find_repo(repo)
        if found is not None:
            return found
        known = self.repos()
        if not known:
            raise NotFound("no repository is indexed yet; run `palimpsest code index PATH`")
        names = ", ".join(r.name for r in known)
        if repo is None:
            raise InvalidInput(f"several repositories are indexed ({names}); name one")
        raise NotFound(f"no indexed repository {repo!r} (indexed: {names})")

    def find_repo(self, repo: str | None = None) -> Repo | None:
        """Like `repo`, but None instead of an error; also matches a `project:` tag's value."""
        known = self.repos()
        if repo is None:
            here = Path.cwd().resolve()
            around = [r for r in known if here == Path(r.root) or Path(r.root) in here.parents]
            if around:
                return max(around, key=lambda r: len(r.root))
            return known[0] if len(known) == 1 else None
        for r in known:
            if r.name == repo:
                return r
        lowered = repo.strip().lower()
        for r in known:
            if r.name.lower() == lowered or Path(r.root).name.lower() == lowered:
                return r
        candidate = _existing(repo)
        if candidate is not None:
            resolved = str(candidate.resolve())
            return next((r for r in known if r.root == resolved), None)
        if "/" in lowered and not lowered.startswith("/"):  # a project named by its remote (`acme/api`), indexed as `api`
            short = lowered.rstrip("/").rsplit("/", 1)[-1]
            named = [r for r in known if short in (r.name.lower(), Path(r.root).name.lower())]
            return next((r for r in named if (project_of(r.root) or repo).lower() == lowered), None)  # (not jdoe/api's)
        return None

    def _register(self, root: Path, name: str | None, exclude: list[str] | None) -> Repo:
        with store.write(self.db):
            row = self.db.execute("SELECT id, name, exclude FROM repos WHERE root = ?", (str(root),)).fetchone()
            wanted = name or (row[1] if row else root.name)
            clash = self.db.execute("SELECT root FROM repos WHERE name = ? AND root != ?", (wanted, str(root))).fetchone()
            if clash:
                raise InvalidInput(f"the name {wanted!r} is taken by {clash[0]}; pass another name")
            patterns = list(exclude) if exclude is not None else (json.loads(row[2]) if row else [])
            if row:
                self.db.execute("UPDATE repos SET name = ?, exclude = ? WHERE id = ?", (wanted, json.dumps(patterns), row[0]))
                repo_id = row[0]
            else:
                cur = self.db.execute("INSERT INTO repos (name, root, exclude) VALUES (?, ?, ?)", (wanted, str(root), json.dumps(patterns)))
                repo_id = int(cur.lastrowid or 0)
        return Repo(repo_id, wanted, str(root), patterns, None)

    # -- queries -------------------------------------------------------------------------

    def find(self, query: str, *, repo: str | None = None, kind: str | None = None, limit: int = 20) -> list[Symbol]:
        """Symbols whose name looks like `query`: exact, then prefix, substring, then near misses."""
        r = self.repo(repo)
        text = query.strip().removesuffix("()")
        if not text:
            raise InvalidInput("find needs a name")
        dotted = qnorm(text) if any(s in text for s in (".", "::", "/")) else ""
        needle = dotted or text
        column = "qnorm" if dotted else "name"
        like = "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        only = " AND kind = ?" if kind else ""
        # Score names alone, scanning the (repo_id, name) index that covers them, then
        # fetch the few that rank.
        source = f"symbols INDEXED BY symbols_{column}" if not kind else "symbols"
        rows = self.db.execute(
            f"SELECT id, {column} FROM {source} WHERE repo_id = ? AND {column} LIKE ? ESCAPE '\\'{only}",
            (r.id, like, *([kind] if kind else [])),
        ).fetchall()
        scored = {sid: (_score(needle, name), False, len(name)) for sid, name in rows}
        if not dotted and not any(score >= 90 for score, _, _ in scored.values()):  # no exact name: maybe a typo
            near = self._near(r.id, text, limit)
            for part in chunks(near):
                for sid, name, kind_ in self.db.execute(
                    f"SELECT id, name, kind FROM symbols WHERE repo_id = ? AND name IN ({placeholders(part)}){only}",
                    (r.id, *part, *([kind] if kind else [])),
                ):
                    ratio = difflib.SequenceMatcher(None, text.lower(), name.lower()).ratio()
                    scored.setdefault(sid, (30 * ratio, kind_ == "module", len(name)))
        best = sorted(scored, key=lambda sid: (-scored[sid][0], scored[sid][1], scored[sid][2]))[: limit * 3]
        found = self._symbols(f"s.id IN ({placeholders(best)})", best, limit=len(best)) if best else []
        ranked = sorted(found, key=lambda t: (-scored[t[0].id][0], t[0].kind == "module", len(t[0].qualname), t[0].path))
        return [sym for sym, _ in ranked][:limit]

    def definition(self, symbol: str, *, repo: str | None = None) -> list[Symbol]:
        """Every definition `symbol` can name (qualified name or dotted tail). NotFound if none."""
        return self._resolve(symbol, self.repo(repo))

    def callers(self, symbol: str, *, repo: str | None = None, unresolved: bool = True, limit: int = 200) -> list[Edge]:
        """Call sites of `symbol`. Resolved edges first; with `unresolved`, also calls that only
        match by name (`obj.save()` where the receiver's type is unknown), flagged as such."""
        r = self.repo(repo)
        targets = self._resolve(symbol, r)
        ids = _with_constructors(self, targets)
        edges = self._edges("e.dst_id IN ({})", ids, kinds=("call",), limit=limit)
        if unresolved:
            names = sorted({t.name for t in targets if t.kind in CALLABLE_KINDS})
            for part in chunks(names):
                # `+`: look the tail up in its index, not every unresolved edge in edges_repo_dst
                where = f"e.repo_id = ? AND +e.dst_id IS NULL AND e.kind = 'call' AND e.tail IN ({placeholders(part)})"
                edges += self._edge_rows(where, (r.id, *part), limit=max(0, limit - len(edges)))
        return edges[:limit]

    def callees(self, symbol: str, *, repo: str | None = None, limit: int = 500) -> list[Edge]:
        """What `symbol` calls, in source order; unresolved calls keep their name."""
        targets = self._resolve(symbol, self.repo(repo))
        return self._edges("e.src_id IN ({})", [t.id for t in targets], kinds=("call",), limit=limit)

    def impact(self, symbol: str, *, repo: str | None = None, depth: int = 3, limit: int = 1000) -> list[Impact]:
        """Who is affected if `symbol` changes: its callers and subclasses, theirs, … `depth` hops out."""
        if depth < 1:
            raise InvalidInput("depth must be at least 1")
        targets = self._resolve(symbol, self.repo(repo))
        seen = {t.id for t in targets}
        frontier = _with_constructors(self, targets)
        found: list[Impact] = []
        for level in range(1, depth + 1):
            nxt: list[int] = []
            for edge in self._edges("e.dst_id IN ({})", frontier, kinds=("call", "inherit"), limit=limit * 4):
                src = edge.source
                if src.id not in seen:
                    seen.add(src.id)
                    found.append(Impact(src, level, edge.kind))
                    nxt.append(src.id)
            frontier = nxt
            if not frontier or len(found) >= limit:
                break
        return found[:limit]

    def outline(self, file: str, *, repo: str | None = None) -> list[OutlineItem]:
        """The symbols of one file in source order, each with its nesting depth."""
        r = self.repo(repo)
        rel = _relative(file, Path(r.root))
        rows = self._symbols("f.repo_id = ? AND f.path = ?", (r.id, rel), extra=", s.qnorm", order="s.start_line, s.id")
        if not rows:
            status = self.db.execute("SELECT status, note FROM files WHERE repo_id = ? AND path = ?", (r.id, rel)).fetchone()
            if status:
                raise NotFound(f"{rel} is not indexed: {status[1]}")
            raise NotFound(f"no indexed file {rel!r} in {r.name}")
        depth: dict[str, int] = {}
        items = []
        for sym, q in rows:
            level = 0 if sym.kind == "module" else depth.get(sym.parent or "", -1) + 1
            depth.setdefault(q, level)
            items.append(OutlineItem(sym, level))
        return items

    def stats(self, repo: str | None = None) -> dict[str, Any]:
        r = self.repo(repo)
        count = self.db.execute
        files = dict(count("SELECT status, COUNT(*) FROM files WHERE repo_id = ? GROUP BY status", (r.id,)).fetchall())
        edges = {k: {"total": n, "resolved": m} for k, n, m in count(
            "SELECT kind, COUNT(*), COUNT(dst_id) FROM edges WHERE repo_id = ? GROUP BY kind", (r.id,))}  # fmt: skip
        symbols = count("SELECT COUNT(*) FROM symbols WHERE repo_id = ?", (r.id,)).fetchone()[0]
        return {**r.to_dict(), "files": files, "symbols": symbols, "edges": edges}

    def symbols_mentioned(self, text: str, repo: str, *, limit: int = 8) -> list[Symbol]:
        """Symbols of `repo` that `text` names; [] when the repository is not indexed."""
        from .mentions import candidates

        r = self.find_repo(repo)
        if r is None:
            return []
        found: dict[int, Symbol] = {}
        for name in candidates(text):
            matches = self._lookup(name, r)
            if 0 < len(matches) <= 3:
                for sym in matches:
                    found.setdefault(sym.id, sym)
            if len(found) >= limit:
                break
        return list(found.values())[:limit]

    # -- helpers -------------------------------------------------------------------------

    def _resolve(self, symbol: str, r: Repo) -> list[Symbol]:
        found = self._lookup(symbol, r)
        if found:
            return found
        last = symbol.split(".")[-1].split("::")[-1].strip()  # ("a." has no last part: no near misses, not "find needs a name")
        near = [s.qualname for s in self.find(last, repo=r.name, limit=5)] if last else []
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise NotFound(f"no symbol {symbol!r} in {r.name}{hint}")

    def _lookup(self, symbol: str, r: Repo) -> list[Symbol]:
        """Exact qualified name first, then every symbol whose qualified name ends with it."""
        q = qnorm(symbol.strip().removesuffix("()"))
        if not q:
            return []
        exact = self._symbols("s.repo_id = ? AND s.qnorm = ?", (r.id, q), limit=500)
        if exact:
            return [s for s, _ in exact]
        tail = q.rsplit(".", 1)[-1]
        if "." not in q:
            return [s for s, _ in self._symbols("s.repo_id = ? AND s.name = ?", (r.id, tail), limit=500)]
        suffix = "%." + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        where = "s.repo_id = ? AND s.name = ? AND s.qnorm LIKE ? ESCAPE '\\'"
        # (LIKE ignores ASCII case: "User.save" also matched the module pkg.user's function save)
        return [s for s, _ in self._symbols(where, (r.id, tail, suffix), limit=500) if qnorm(s.qualname).endswith("." + q)]

    def _symbols(self, where: str, params: Iterable[Any], *, extra: str = "", order: str = "f.path, s.start_line",
                 limit: int = 1000) -> list[tuple[Symbol, str]]:  # fmt: skip
        sql = f"SELECT {SYMBOL_COLUMNS}{extra} FROM {SYMBOL_FROM} WHERE {where} ORDER BY {order} LIMIT {int(limit)}"
        return [(Symbol(*row[:12]), row[12] if extra else "") for row in self.db.execute(sql, tuple(params))]

    def _edges(self, where: str, ids: list[int], *, kinds: tuple[str, ...], limit: int) -> list[Edge]:
        found: list[Edge] = []
        for part in chunks(ids):
            clause = where.format(placeholders(part)) + f" AND e.kind IN ({placeholders(kinds)})"
            found += self._edge_rows(clause, (*part, *kinds), limit=limit - len(found))
        return found

    def _edge_rows(self, where: str, params: tuple[Any, ...], *, limit: int) -> list[Edge]:
        if limit <= 0:
            return []
        sql = (
            f"SELECT e.kind, e.name, fe.path, e.line, {_SOURCE}, {_TARGET} FROM edges e "
            "JOIN files fe ON fe.id = e.file_id JOIN repos ra ON ra.id = e.repo_id "
            "JOIN symbols a ON a.id = e.src_id JOIN files fa ON fa.id = a.file_id "
            "LEFT JOIN symbols b ON b.id = e.dst_id LEFT JOIN files fb ON fb.id = b.file_id "
            f"WHERE {where} ORDER BY fe.path, e.line LIMIT {int(limit)}"
        )
        out = []
        for row in self.db.execute(sql, params):
            source = Symbol(*row[4:16])
            target = Symbol(*row[16:28]) if row[16] is not None else None
            out.append(Edge(row[0], row[1], row[2], row[3], source, target))
        return out

    def _near(self, repo_id: int, text: str, limit: int) -> list[str]:
        names = self._names.get(repo_id)
        if names is None:
            names = [r[0] for r in self.db.execute("SELECT DISTINCT name FROM symbols WHERE repo_id = ?", (repo_id,))]
            self._names[repo_id] = names
        lowered = text.lower()
        ends = (lowered[:1], lowered[-1:])
        spread = max(2, len(text) // 4)
        # A typo seldom hits both ends of a name: comparing only names that share one keeps
        # difflib's work to a few thousand names on a large repository.
        pool = [n for n in names if abs(len(n) - len(text)) <= spread and (n[:1].lower() == ends[0] or n[-1:].lower() == ends[1])]
        by_lower = {n.lower(): n for n in pool}
        return [by_lower[m] for m in difflib.get_close_matches(lowered, list(by_lower), n=limit, cutoff=0.7)]


def _score(needle: str, name: str) -> float:
    if name == needle:
        return 100.0
    low, n = name.lower(), needle.lower()
    if low == n:
        return 90.0
    if low.endswith("." + n):
        return 85.0
    if low.startswith(n):
        return 70.0 - min(20, len(name) - len(needle))
    return 50.0 - min(20, len(name) - len(needle)) / 2


def _with_constructors(graph: CodeGraph, targets: list[Symbol]) -> list[int]:
    """A constructor is called by instantiating its class: count those calls too."""
    ids = [t.id for t in targets]
    for t in targets:
        if t.name in _CONSTRUCTORS and t.parent:
            row = graph.db.execute(
                "SELECT s.id FROM symbols s JOIN files f ON f.id = s.file_id JOIN repos r ON r.id = s.repo_id "
                "WHERE r.name = ? AND s.qnorm = ? AND s.kind != 'impl'", (t.repo, t.parent)).fetchall()  # fmt: skip
            ids += [r[0] for r in row]
    return ids


def _relative(file: str, root: Path) -> str:
    path = _existing(file)
    if path is not None:
        try:
            return path.resolve().relative_to(root).as_posix()
        except ValueError:
            pass
    return file.replace("\\", "/").removeprefix("./")


def _existing(text: str | Path) -> Path | None:
    """`text` as an existing path (`~` expanded), or None — also for text no path can be
    (a NUL byte, `~user` of no such user), since names and paths share one argument."""
    try:
        path = Path(text).expanduser()
        return path if path.exists() else None
    except (OSError, RuntimeError, ValueError):
        return None
