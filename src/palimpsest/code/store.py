"""The code graph's own SQLite file: schema, migrations and every statement.

The graph is derived data — it can always be rebuilt by indexing again — so it lives in
its own file (`<home>/code.db`, setting `code_db`), apart from the journaled memory store,
and is SQLite on every deployment: one writer (an index run holds the write lock from
start to commit, so two runs on one repository serialise), any number of readers (WAL).
One file holds every indexed repository; a repository is a row, and deleting it cascades.

    repos    one per indexed root: name (what a `project:` tag names), root, exclude patterns
    files    path, language, module, content hash, size/mtime, status ok|partial|skipped, note
    symbols  name, qualname, qnorm (separators unified), parent qnorm, kind, lines, signature, doc
    edges    src symbol → name (as written, made absolute where possible) → dst symbol or NULL;
             kind call|import|inherit; `tail` is the name's last part, for re-resolution
    bindings what each file's imports bind: alias → target (qnorm)
    hints    declared or evident types of names, per scope: `x` / `self.x` → type as written
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import StoreUnavailable
from ..settings import private_file

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE repos (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    root TEXT NOT NULL UNIQUE,
    exclude TEXT NOT NULL DEFAULT '[]',
    indexed_at TEXT
);
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    language TEXT NOT NULL,
    module TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    status TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    UNIQUE (repo_id, path)
);
CREATE TABLE symbols (
    id INTEGER PRIMARY KEY,
    repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    qualname TEXT NOT NULL,
    qnorm TEXT NOT NULL,
    parent TEXT,
    kind TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    signature TEXT NOT NULL DEFAULT '',
    doc TEXT NOT NULL DEFAULT ''
);
CREATE INDEX symbols_name ON symbols (repo_id, name);
CREATE INDEX symbols_qnorm ON symbols (repo_id, qnorm);
CREATE INDEX symbols_file ON symbols (file_id, start_line);
CREATE TABLE edges (
    id INTEGER PRIMARY KEY,
    repo_id INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    src_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    tail TEXT NOT NULL,
    line INTEGER NOT NULL,
    dst_id INTEGER
);
CREATE INDEX edges_src ON edges (src_id);
CREATE INDEX edges_dst ON edges (dst_id);
CREATE INDEX edges_tail ON edges (repo_id, tail);
CREATE INDEX edges_file ON edges (file_id);
CREATE TABLE bindings (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    alias TEXT NOT NULL,
    target TEXT NOT NULL
);
CREATE INDEX bindings_file ON bindings (file_id);
CREATE TABLE hints (
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    src_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    type TEXT NOT NULL
);
CREATE INDEX hints_file ON hints (file_id);
"""

# 2: what on-demand resolution (tables.py) and the report's totals look up.
_LOOKUPS = """
CREATE INDEX symbols_parent ON symbols (repo_id, parent);
CREATE INDEX files_module ON files (repo_id, module);
CREATE INDEX hints_src ON hints (src_id);
CREATE INDEX hints_name ON hints (name);
CREATE INDEX edges_repo_dst ON edges (repo_id, dst_id);
"""

MIGRATIONS: dict[int, str] = {1: _SCHEMA, 2: _LOOKUPS}

SYMBOL_COLUMNS = "s.id, r.name, f.path, f.language, s.name, s.qualname, s.kind, s.start_line, s.end_line, s.signature, s.doc, s.parent"
SYMBOL_FROM = "symbols s JOIN files f ON f.id = s.file_id JOIN repos r ON r.id = s.repo_id"


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating and migrating) the code graph database at `path`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        private_file(path)
        db = sqlite3.connect(str(path), timeout=60, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("PRAGMA cache_size = -65536")  # 64 MiB: index inserts of a large first run stay in memory
        db.execute("PRAGMA temp_store = MEMORY")
        _migrate(db)
    except (OSError, sqlite3.Error) as exc:
        raise StoreUnavailable(f"code graph database {path}: {exc}") from exc
    return db


def _migrate(db: sqlite3.Connection) -> None:
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version >= SCHEMA_VERSION:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]  # another process may have won
        for number in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[number].split(";"):
                if statement.strip():
                    db.execute(statement)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


@contextmanager
def write(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken at once so concurrent index runs serialise."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def plain(names: Iterable[str]) -> set[str]:
    return {n.split("\0", 1)[0] for n in names}


def chunks(items: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def placeholders(items: Sequence[Any]) -> str:
    return ",".join("?" * len(items))


def delete_file_contents(db: sqlite3.Connection, file_ids: Iterable[int]) -> None:
    """Drop the symbols, edges and bindings of these files; edges into them lose their target."""
    ids = list(file_ids)
    for part in chunks(ids):
        marks = placeholders(part)
        db.execute(f"UPDATE edges SET dst_id = NULL WHERE dst_id IN (SELECT id FROM symbols WHERE file_id IN ({marks}))", part)
        db.execute(f"DELETE FROM edges WHERE file_id IN ({marks})", part)
        db.execute(f"DELETE FROM bindings WHERE file_id IN ({marks})", part)
        db.execute(f"DELETE FROM hints WHERE file_id IN ({marks})", part)
        db.execute(f"DELETE FROM symbols WHERE file_id IN ({marks})", part)


def inbound_edges(db: sqlite3.Connection, file_ids: Iterable[int]) -> list[int]:
    """Edges from other files that point at a symbol of these files."""
    ids = list(file_ids)
    found: list[int] = []
    for part in chunks(ids):
        marks = placeholders(part)
        found += [r[0] for r in db.execute(
            f"SELECT e.id FROM symbols s JOIN edges e ON e.dst_id = s.id WHERE s.file_id IN ({marks}) AND e.file_id NOT IN ({marks})",
            (*part, *part),
        )]  # fmt: skip
    return found


def names_in_files(db: sqlite3.Connection, file_ids: Iterable[int]) -> set[str]:
    """Every symbol name of these files, and each import as `alias NUL target` (so that a
    changed target counts as a change); `plain()` turns these back into names."""
    names: set[str] = set()
    ids = list(file_ids)
    for part in chunks(ids):
        marks = placeholders(part)
        names.update(r[0] for r in db.execute(f"SELECT DISTINCT name FROM symbols WHERE file_id IN ({marks})", part))
        names.update(f"{a}\0{t}" for a, t in db.execute(f"SELECT DISTINCT alias, target FROM bindings WHERE file_id IN ({marks})", part))
    return names
