"""Connections, errors and migrations of the scale-out backend.

Connections come from a psycopg pool; every write is one transaction. Migrations are
numbered SQL files (`migrations/postgres/NNNN_*.sql`) applied on open while holding a
session-level advisory lock, so processes opening a new database at the same time
migrate it once. The extensions (`vector`, `pg_trgm`, `unaccent`) are created first, and
a missing one is reported with how to install it. After a connection failure, calls
fail at once for a moment (`_errors`) instead of each waiting out the pool's timeout.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from typing import Any

import psycopg
from psycopg import errors as pgerrors
from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import Closed, InvalidInput, StoreBusy, StoreRefused, StoreUnavailable
from ...errors import redact_url as _redact
from ..migrations import FACT_KEYWORDS, check_schema, fact_keywords
from ..sql.dialect import Dialect, Runner, SQLBackend
from .rows import _clean, _ts

_MIGRATION_LOCK = 0x70616C696D70  # "palimp": one advisory lock id for migrations


_EXTENSIONS = ("vector", "pg_trgm", "unaccent")


_INSTALL_HINT = {
    "vector": "install pgvector on the server (Debian: `apt-get install postgresql-<major>-pgvector`, "
    "or build it from https://github.com/pgvector/pgvector; `scripts/postgres.sh install` does it) "
    "and have a superuser run `CREATE EXTENSION vector` in this database",
    "pg_trgm": "install PostgreSQL's contrib modules (Debian: part of `postgresql-<major>`) "
    "and have a superuser run `CREATE EXTENSION pg_trgm` in this database",
    "unaccent": "install PostgreSQL's contrib modules (Debian: part of `postgresql-<major>`) "
    "and have a superuser run `CREATE EXTENSION unaccent` in this database",
}


_CONNECT_ATTEMPTS = 5


_POOL_TIMEOUT_S = 3.0
# a connection the pool could not make is given up after this long and asked for again on the next call: its retries back
# off 1, 2, 4, 8 … s, so after an outage of 35 s the pool had reconnected 10–28 s after the database was back (under load)
_RECONNECT_S = 5.0


_FAIL_FAST_S = 2.0


def _in_list(column: str, values: list[Any]) -> tuple[str, Any]:
    return f"{column} = ANY(?)", list(values)


DIALECT = Dialect(name="postgresql", placeholder="%s", true="true", in_list=_in_list, unique_violation=pgerrors.UniqueViolation,
                  time_param="?::timestamptz", bytewise=' COLLATE "C"', lock_rows=" FOR UPDATE", contains="strpos", clean=_clean,
                  load_time=_ts)


def extension_error(name: str, exc: psycopg.Error) -> StoreUnavailable:
    """The error to raise when `CREATE EXTENSION name` fails: what is missing and how to fix it."""
    reason = (exc.diag.message_primary or str(exc)).strip()
    if isinstance(exc, pgerrors.InsufficientPrivilege):
        hint = f"it is installed on the server, but this role may not create it: have a superuser run `CREATE EXTENSION {name}` in this database"
    else:
        hint = _INSTALL_HINT.get(name, f"install the PostgreSQL extension {name!r} on the server, then run `CREATE EXTENSION {name}`")
    return StoreRefused(f"the database needs the PostgreSQL extension {name!r} ({reason}): {hint}")


def _connect_error(url: str, exc: psycopg.Error, attempts: int) -> StoreUnavailable:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    tried = f" (tried {attempts} times)" if attempts > 1 else ""
    error = StoreRefused if _permanent(exc) else StoreUnavailable
    return error(f"cannot connect to PostgreSQL at {_redact(url)}{tried}: {reason}")


def _permanent(exc: psycopg.Error) -> bool:
    """Connection failures that retrying will not fix (bad password, unknown database)."""
    text = str(exc)
    return any(s in text for s in ("does not exist", "password authentication failed", "no password supplied",
                                   "role \"", "invalid ", "SSL", "unsupported"))


def create_extension(conn: psycopg.Connection[Any], name: str) -> None:
    """`CREATE EXTENSION IF NOT EXISTS name`, or a StoreUnavailable saying how to install it."""
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = %s", (name,)).fetchone():
        return
    try:
        with conn.transaction():
            conn.execute(f'CREATE EXTENSION IF NOT EXISTS "{name}"')
    except (pgerrors.FeatureNotSupported, pgerrors.UndefinedFile, pgerrors.UndefinedObject,
            pgerrors.InsufficientPrivilege) as exc:
        raise extension_error(name, exc) from None


class PostgresConnection(SQLBackend):
    """The pool, `_read()` / `_tx()` with psycopg's errors translated, and migrations."""

    dialect = DIALECT
    url: str
    _conninfo: str
    _pool: ConnectionPool[Any]
    _down_until: float
    _down_reason: str
    _local: threading.local

    # -- connections ---------------------------------------------------------
    @contextmanager
    def _first_connection(self, attempts: int) -> Iterator[psycopg.Connection[Any]]:
        """One connection for the migration, retried with backoff while the server starts."""
        delay = 0.25
        for attempt in range(1, attempts + 1):
            try:
                conn = psycopg.connect(self._conninfo, autocommit=True, connect_timeout=5)
                break
            except psycopg.ProgrammingError as exc:  # a malformed URL: retrying cannot help
                raise InvalidInput(f"invalid PostgreSQL URL {_redact(self.url)}: {exc}") from None
            except psycopg.OperationalError as exc:
                if attempt == attempts or _permanent(exc):
                    raise _connect_error(self.url, exc, attempt) from None
                time.sleep(delay)
                delay *= 2
        try:
            yield conn
        finally:
            conn.close()

    @staticmethod
    def _configure(conn: psycopg.Connection[Any]) -> None:
        from pgvector.psycopg import register_vector

        conn.execute("SET TIME ZONE 'UTC'")
        register_vector(conn)

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """psycopg's errors as Palimpsest's: the server gone is StoreUnavailable, bad data InvalidInput.

        After a connection failure, calls fail at once for `_FAIL_FAST_S` instead of each
        waiting out the pool's timeout: a write is already safe in the journal, and a
        capture run should not crawl while the database is down."""
        if time.monotonic() < self._down_until:
            raise StoreUnavailable(f"PostgreSQL at {_redact(self.url)} is unavailable: {self._down_reason}")
        try:
            yield
        except pgerrors.QueryCanceled as exc:
            raise StoreUnavailable(f"PostgreSQL cancelled a statement: {str(exc).strip()}") from exc
        except pgerrors.TransactionRollback as exc:  # a deadlock or a serialization failure: the database is up (no fail-fast)
            raise StoreBusy(f"PostgreSQL rolled back a transaction another writer held rows of ({(exc.diag.message_primary or str(exc)).strip()}): "
                            "nothing of it was written; it is done again") from exc
        except pgerrors.InsufficientPrivilege as exc:  # (a traceback had ended `stats` for a role without CREATE)
            raise StoreRefused(f"PostgreSQL refused this role: {(exc.diag.message_primary or str(exc)).strip()}; Palimpsest's role must own "
                               "its tables and may create in its schema (it migrates and builds indexes as it runs): see docs/server.md, "
                               "\"PostgreSQL roles\"") from exc
        except (psycopg.OperationalError, PoolTimeout) as exc:
            self._down_reason = " ".join(str(exc).split()) or type(exc).__name__
            self._down_until = time.monotonic() + _FAIL_FAST_S
            raise StoreUnavailable(f"PostgreSQL at {_redact(self.url)} is unavailable: {self._down_reason}") from exc
        except psycopg.DataError as exc:
            raise InvalidInput(f"PostgreSQL refused a value: {(exc.diag.message_primary or str(exc)).strip()}") from exc

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        if self.closed:
            raise Closed("the store")
        pinned = getattr(self._local, "conn", None)  # inside atomically(): its one connection
        if pinned is not None:
            yield pinned
            return
        with self._pool.connection() as conn:
            yield conn

    @contextmanager
    def _read(self) -> Iterator[psycopg.Connection[Any]]:
        with self._errors(), self._connection() as conn:
            yield conn

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[Any]]:
        # inside atomically() psycopg makes this a savepoint of the outer transaction
        with self._errors(), self._connection() as conn, conn.transaction():
            yield conn

    @contextmanager
    def atomically(self) -> Iterator[None]:
        if self.closed:
            raise Closed("the store")
        with self._errors(), self._pool.connection() as conn, conn.transaction():
            self._local.conn = conn
            try:
                yield
            finally:
                self._local.conn = None

    def _all(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        with self._read() as conn:
            return conn.execute(sql, params).fetchall()

    def _fetch(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        return self._all(DIALECT.sql(sql), params)

    @contextmanager
    def _writing(self) -> Iterator[Runner]:
        with self._tx() as conn:
            yield Runner(conn, DIALECT)

    def close(self) -> None:
        self.closed = True
        self._pool.close()

    # -- migrations ----------------------------------------------------------
    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        with self._errors():
            conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
            try:
                for name in _EXTENSIONS:
                    create_extension(conn, name)
                self._apply_migrations(conn)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))

    @staticmethod
    def _apply_migrations(conn: psycopg.Connection[Any]) -> None:
        folder = resources.files("palimpsest.store.migrations").joinpath("postgres")
        files = sorted(((int(p.name.split("_")[0]), p) for p in folder.iterdir() if p.name.endswith(".sql")), key=lambda f: f[0])
        numbers = [v for v, _ in files]
        if len(set(numbers)) != len(numbers):  # two people picked the same number: never skip one silently
            raise RuntimeError(f"duplicate PostgreSQL migration numbers in {sorted(p.name for _, p in files)}")
        conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)")
        done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
        check_schema(done, numbers)
        for version, path in files:
            if version in done:
                continue
            with conn.transaction():
                conn.execute(path.read_text())  # no parameters: several statements in one call
                if path.name.endswith(FACT_KEYWORDS):
                    with conn.cursor() as cur:
                        cur.executemany("UPDATE facts SET keywords = %s WHERE rowid = %s",
                                        fact_keywords(conn.execute("SELECT rowid, text FROM facts").fetchall()))
                conn.execute("INSERT INTO schema_migrations VALUES (%s, now())", (version,))

    def schema_version(self) -> int:
        return self._all("SELECT coalesce(max(version), 0) FROM schema_migrations")[0][0]

    @contextmanager
    def exclusive(self, name: str) -> Iterator[None]:
        # a session-level advisory lock, held on one pooled connection until released
        key = f"palimpsest:exclusive:{name}"
        with self._read() as conn:
            conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
