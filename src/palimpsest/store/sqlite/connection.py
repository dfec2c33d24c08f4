"""Connections, transactions and migrations of the embedded backend.

Writes go through a single connection guarded by a lock (SQLite allows one writer at
a time anyway; serialising in-process avoids busy loops), reads use one connection per
thread. Other processes may write the same file: `busy_timeout` makes them queue.
Migrations are numbered SQL files applied on open inside `BEGIN IMMEDIATE`, so two
processes opening a new database at once migrate it once.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, Self

from ...errors import Closed, StoreCorrupt, StoreUnavailable
from ...settings import private_file
from ..migrations import FACT_KEYWORDS, check_schema, fact_keywords
from ..sql.dialect import Dialect, Runner, SQLBackend

MMAP_BYTES = 1 << 30
BUSY_TIMEOUT_MS = 30_000  # how long a statement waits for another process's write lock


def _in_list(column: str, values: list[Any]) -> tuple[str, Any]:
    return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(values))


DIALECT = Dialect(name="sqlite", placeholder="?", true="1", in_list=_in_list, unique_violation=sqlite3.IntegrityError,
                  load_json=json.loads)


def use_wal(conn: sqlite3.Connection, patience: float) -> None:
    """Switch to WAL, retrying a "database is locked" for up to `patience` seconds. Several
    processes opening a new database at once race to convert it, and SQLite answers the
    loser at once, without its busy handler (a reader waiting for an exclusive lock could
    deadlock): seen as a failed start in the four-process test."""
    deadline = time.monotonic() + patience
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def corruption(exc: BaseException) -> bool:
    """Whether SQLite said the file is damaged (bad header, truncated, garbage pages) — as
    opposed to a value it refused (IntegrityError, …) or a lock (OperationalError)."""
    return type(exc) is sqlite3.DatabaseError or (
        isinstance(exc, sqlite3.DatabaseError) and any(s in str(exc) for s in ("malformed", "not a database")))


@contextmanager
def translated(path: Path) -> Iterator[None]:
    """SQLite's damage and lock errors as Palimpsest's (the HTTP and CLI adapters map those
    to 503 / exit 6): a damaged file is StoreCorrupt, a lock or I/O failure StoreUnavailable.
    A value SQLite refuses passes through as it is (the indexer quarantines its event)."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        if corruption(exc):
            raise StoreCorrupt(f"the SQLite database {path} is damaged ({exc}): `palimpsest rebuild` moves it aside "
                               "and rebuilds the index from the journals") from exc
        if isinstance(exc, sqlite3.OperationalError):
            raise StoreUnavailable(f"SQLite database {path}: {exc}") from exc
        raise


class _Cursor(sqlite3.Cursor):
    """A cursor whose damage errors are StoreCorrupt, wherever a read meets the bad page."""

    path: Path

    def execute(self, sql: str, params: Any = ()) -> Self:
        with translated(self.path):
            return super().execute(sql, params)

    def fetchone(self) -> Any:
        with translated(self.path):
            return super().fetchone()

    def fetchall(self) -> list[Any]:
        with translated(self.path):
            return super().fetchall()

    def __next__(self) -> Any:
        with translated(self.path):
            return super().__next__()


class _Reader(sqlite3.Connection):
    """The readers' connection: every statement through `_Cursor`."""

    path: Path

    def execute(self, sql: str, params: Any = ()) -> _Cursor:  # type: ignore[override]
        cur = self.cursor(_Cursor)
        cur.path = self.path
        return cur.execute(sql, params)


class SQLiteConnection(SQLBackend):
    """One writer connection behind a lock, one reader per thread (`_reader`), `_tx()`."""

    dialect = DIALECT
    path: Path
    _local: threading.local
    _write_lock: threading.RLock
    _writer: sqlite3.Connection

    # -- connections ---------------------------------------------------------
    def _connect(self, factory: type[sqlite3.Connection] = sqlite3.Connection) -> sqlite3.Connection:
        if self.path != ":memory:":
            private_file(self.path)
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False,
                               factory=factory)
        if isinstance(conn, _Reader):
            conn.path = self.path
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        use_wal(conn, BUSY_TIMEOUT_MS / 1000)
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        # Reads through a memory map and a larger page cache: a filtered keyword search
        # probes one messages row per match, and through read() calls into a 2 MB cache
        # each probe cost ~3 µs (bench/search.py); mapped, ~0.4 µs. Address space only.
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        conn.execute("PRAGMA cache_size = -32768")
        return conn

    @property
    def _reader(self) -> sqlite3.Connection:
        if self.closed:
            raise Closed("the store")
        if getattr(self._local, "atomic", False):  # inside atomically(): read what the transaction wrote
            return self._writer
        conn = getattr(self._local, "conn", None)
        if conn is None:
            with translated(self.path):
                conn = self._local.conn = self._connect(_Reader)
        return conn

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._write_lock, translated(self.path):
            if self.closed:
                raise Closed("the store")
            conn = self._writer
            if getattr(self._local, "atomic", False):
                with self._savepoint(conn):
                    yield conn
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:  # (SQLite may have rolled back already, on a damaged page)
                    conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")

    @staticmethod
    @contextmanager
    def _savepoint(conn: sqlite3.Connection) -> Iterator[None]:
        conn.execute("SAVEPOINT palimpsest_write")
        try:
            yield
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK TO palimpsest_write")
                conn.execute("RELEASE palimpsest_write")
            raise
        conn.execute("RELEASE palimpsest_write")

    @contextmanager
    def atomically(self) -> Iterator[None]:
        with self._tx():
            self._local.atomic = True
            try:
                yield
            finally:
                self._local.atomic = False

    def integrity(self) -> str | None:
        try:
            with translated(self.path):
                rows = [r[0] for r in self._reader.execute("PRAGMA quick_check").fetchall()]
        except StoreUnavailable as exc:
            return str(exc.__cause__ or exc)
        return None if rows == ["ok"] else "; ".join(str(r) for r in rows[:5])

    def _fetch(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        return self._reader.execute(sql, params).fetchall()

    @contextmanager
    def _writing(self) -> Iterator[Runner]:
        with self._tx() as conn:
            yield Runner(conn, DIALECT)

    def close(self) -> None:
        with self._write_lock:  # a write in flight on another thread ends first (closing under it can crash the process)
            self.closed = True
            self._writer.close()
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _migrate(self) -> None:
        files = sorted(
            (int(p.name.split("_")[0]), p)
            for p in resources.files("palimpsest.store.migrations").joinpath("sqlite").iterdir()
            if p.name.endswith(".sql")
        )
        with self._tx() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
            done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
            check_schema(done, [v for v, _ in files])
            for version, path in files:
                if version in done:
                    continue
                for statement in _split_sql(path.read_text()):
                    conn.execute(statement)
                if path.name.endswith(FACT_KEYWORDS):
                    conn.executemany("UPDATE facts SET keywords = ? WHERE rowid = ?",
                                     fact_keywords(conn.execute("SELECT rowid, text FROM facts").fetchall()))
                conn.execute("INSERT INTO schema_migrations VALUES (?, datetime('now'))", (version,))

    def schema_version(self) -> int:
        return self._reader.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] or 0

    @contextmanager
    def exclusive(self, name: str) -> Iterator[None]:
        # an flock on a file beside the database: every process that opens it can see it
        folder = self.path.with_name(self.path.name + ".locks")
        folder.mkdir(exist_ok=True)
        fd = os.open(folder / hashlib.sha256(name.encode()).hexdigest()[:24], os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock


def _split_sql(text: str) -> list[str]:
    """Statements of a migration file; triggers keep their inner semicolons."""
    statements: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        if line.strip().startswith("--") and not current:
            continue
        current.append(line)
        joined = "\n".join(current).strip()
        if joined.endswith(";") and sqlite3.complete_statement(joined):
            statements.append(joined)
            current = []
    if "\n".join(current).strip():
        statements.append("\n".join(current))
    return statements
