"""The scale-out backend: PostgreSQL with pgvector, shared by many writers and workers.

Connections come from a psycopg pool; every write is one transaction. Several servers
may index the same session at once, so every writer of messages first takes a
transaction-level advisory lock on the session (`pg_advisory_xact_lock`) and then
inserts with `ON CONFLICT DO NOTHING`: the check-then-insert and the journal cursor it
advances never interleave with another writer's. Workers claim jobs with
`FOR UPDATE SKIP LOCKED`, so any number of them share the queue without blocking.

Migrations are numbered SQL files (`migrations/postgres/NNNN_*.sql`) applied on open
while holding a session-level advisory lock, so processes opening a new database at the
same time migrate it once. The extensions (`vector`, `pg_trgm`, `unaccent`) are created
first, and a missing one is reported with how to install it.

Times are `timestamptz` in the database and ISO strings (`…Z`, microseconds) on the
contract surface, exactly as in SQLite. Full text is a generated, weighted `tsvector`
(GIN) ranked with `ts_rank_cd` (higher is better; the search layer normalises by the
best hit); each user term becomes its own `phraseto_tsquery`, so no user text is ever
parsed as query syntax. Substring mode is `ILIKE` with `%`, `_` and `\\` escaped, served
by trigram (GIN) indexes.

Vectors: the `embedding` column has no fixed dimension, because the dimension is known
only when the first model's vectors arrive. Once a model holds `hnsw_threshold` vectors
(10,000) a partial HNSW index on `(embedding::vector(dim)) WHERE dim = <dim>` is built;
below that an exact scan takes a few milliseconds, and inserting into an HNSW graph
costs ~2.5 ms per vector on a 2-core machine, while building it over existing rows is
several times faster (`build_vector_index()` after a bulk load). Only one model may hold
vectors at a time (ModelMismatch otherwise), so one such index is in use. Unfiltered
queries use it (approximate, `hnsw.ef_search` raised to the limit). A filter that leaves
at most 5,000 messages is searched exactly over their vectors, so a rare filter is never
crowded out by a global top-k; a broader one uses the index with pgvector's iterative
scan (0.8+), which keeps walking the graph until enough rows pass the filter.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from typing import Any

import numpy as np
import psycopg
from psycopg import errors as pgerrors
from psycopg_pool import ConnectionPool, PoolTimeout

from ..errors import InvalidInput, ModelMismatch, StoreUnavailable
from ..records import Message, Session, iso, utcnow
from .base import BM25_WINDOW, RARE_MATCHES, Filters, Job, NewJob, Store, split_by_rarity
from .postgres_documents import PostgresDocumentsMixin
from .postgres_facts import PostgresFactsMixin
from .postgres_hnsw import BUILD_MEMORY_MB, BUILD_WORKERS, build_hnsw, index_exists
from .postgres_summaries import PostgresSummariesMixin
from .postgres_tags import PostgresTagsMixin
from .postgres_wiki import PostgresWikiMixin

_MESSAGE_COLUMNS = (
    "id, session_id, type, role, content, tool_name, tool_args, tool_result, metadata, created_at, "
    "event_key, importance, access_count, last_accessed_at, truncated, full_content_length, "
    "full_tool_result_length, journal_path, journal_line, journal_offset, context"
)
_M = ", ".join(f"m.{c.strip()}" for c in _MESSAGE_COLUMNS.split(","))
_JOB_COLUMNS = "id, task, payload, job_key, attempts, max_attempts, last_error, run_at, locked_by, locked_at, state"
_SESSION_COLUMNS = "id, key, agent, channel, title, kind, settings, created_at, updated_at"
_MIGRATION_LOCK = 0x70616C696D70  # "palimp": one advisory lock id for migrations
_VECTOR_LOCK = "palimpsest:vectors"
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
_FAIL_FAST_S = 2.0
_EXACT_MAX = 5_000  # filtered vector search is exact up to this many candidate messages
_TS_WEIGHTS = "{0.1, 0.5, 0.5, 1.0}"  # D, C (context), B (tool name/result), A (content): as SQLite's bm25
# BM25 as FTS5's bm25(): k1, b, and its column weights by tsvector weight label
# (content 1.0, tool_name and tool_result 0.5, context 0.5 = sqlite.CONTEXT_WEIGHT)
_K1, _B = 1.2, 0.75
_COLUMN_WEIGHTS = {"A": 1.0, "B": 0.5, "C": 0.5, "D": 0.0}
_CANDIDATES = 300  # matches given the exact BM25, the best by the cheap rank (at least 4 × limit)
_RARE_MATCHES = RARE_MATCHES  # any-word, unfiltered: the rarest terms' matches, up to this many, all ranked
_BM25_WINDOW = BM25_WINDOW  # and of the other terms, about the newest this many matches (store/base.py)
_BM25_EXACT = 5000  # up to this many messages, N, avgdl and every document frequency are exact
_BM25_COMMON = 0.01  # above _BM25_EXACT, lexemes ANALYZE saw in >= 1 % of rows take its frequency


def _text(value: str | None) -> str | None:
    """PostgreSQL text cannot hold NUL; the indexer already replaces it, this is the backstop."""
    return value.replace("\x00", "\ufffd") if value and "\x00" in value else value


def _clean(value: Any) -> Any:
    """A JSON value without NUL in any string: jsonb refuses `\\u0000`."""
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _ts(value: datetime | None) -> str | None:
    return iso(value) if value is not None else None


def _row_to_message(row: tuple[Any, ...]) -> Message:
    return Message(
        id=row[0], session=row[1], type=row[2], role=row[3], content=row[4], tool_name=row[5],
        tool_args=json.loads(row[6]) if row[6] is not None else None, tool_result=row[7],
        metadata=json.loads(row[8]) if row[8] else {}, created_at=iso(row[9]), event_key=row[10],
        importance=row[11], access_count=row[12], last_accessed_at=_ts(row[13]), truncated=bool(row[14]),
        full_content_length=row[15], full_tool_result_length=row[16], journal_path=row[17],
        journal_line=row[18], journal_offset=row[19], context=row[20],
    )


def _message_params(m: Message) -> tuple[Any, ...]:
    return (
        m.id, m.session, m.type, m.role, _text(m.content) or "", _text(m.tool_name),
        _text(json.dumps(m.tool_args, ensure_ascii=False)) if m.tool_args is not None else None,
        _text(m.tool_result), _text(json.dumps(m.metadata, ensure_ascii=False)), m.created_at, m.event_key,
        m.importance, m.access_count, m.last_accessed_at, bool(m.truncated), m.full_content_length,
        m.full_tool_result_length, m.journal_path, m.journal_line, m.journal_offset, _text(m.context) or "",
    )


def _row_to_session(r: tuple[Any, ...]) -> Session:
    return Session(id=r[0], key=r[1], agent=r[2], channel=r[3], title=r[4], kind=r[5], settings=r[6] or {},
                   created_at=iso(r[7]), updated_at=iso(r[8]))


def _row_to_job(r: tuple[Any, ...]) -> Job:
    return Job(id=r[0], task=r[1], payload=r[2], job_key=r[3], attempts=r[4], max_attempts=r[5],
               last_error=r[6], run_at=iso(r[7]), locked_by=r[8], locked_at=_ts(r[9]), state=r[10])


def _like_pattern(fragment: str) -> str:
    """`fragment` as an ILIKE pattern matching it anywhere, with no wildcard of its own."""
    escaped = fragment.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _redact(url: str) -> str:
    return re.sub(r"(//[^:/@]+):[^@/]*@", r"\1:***@", url)


def extension_error(name: str, exc: psycopg.Error) -> StoreUnavailable:
    """The error to raise when `CREATE EXTENSION name` fails: what is missing and how to fix it."""
    reason = (exc.diag.message_primary or str(exc)).strip()
    if isinstance(exc, pgerrors.InsufficientPrivilege):
        hint = f"it is installed on the server, but this role may not create it: have a superuser run `CREATE EXTENSION {name}` in this database"
    else:
        hint = _INSTALL_HINT.get(name, f"install the PostgreSQL extension {name!r} on the server, then run `CREATE EXTENSION {name}`")
    return StoreUnavailable(f"the database needs the PostgreSQL extension {name!r} ({reason}): {hint}")


def _connect_error(url: str, exc: psycopg.Error, attempts: int) -> StoreUnavailable:
    reason = " ".join(str(exc).split()) or type(exc).__name__
    tried = f" (tried {attempts} times)" if attempts > 1 else ""
    return StoreUnavailable(f"cannot connect to PostgreSQL at {_redact(url)}{tried}: {reason}")


def _permanent(exc: psycopg.Error) -> bool:
    """Connection failures that retrying will not fix (bad password, unknown database)."""
    text = str(exc)
    return any(s in text for s in ("does not exist", "password authentication failed", "no password supplied",
                                   "role \"", "invalid ", "SSL", "unsupported"))


class PostgresStore(Store, PostgresFactsMixin, PostgresSummariesMixin, PostgresDocumentsMixin, PostgresTagsMixin, PostgresWikiMixin):
    def __init__(self, url: str, pool_size: int = 10, connect_attempts: int = _CONNECT_ATTEMPTS,
                 hnsw_threshold: int = 10_000, index_build_memory_mb: int = BUILD_MEMORY_MB,
                 index_build_workers: int = BUILD_WORKERS) -> None:
        self.url = url
        self.hnsw_threshold = hnsw_threshold
        self.index_build_memory_mb = index_build_memory_mb
        self.index_build_workers = index_build_workers
        self._down_until = 0.0
        self._down_reason = ""
        self._pgvector_version: tuple[int, int] | None = None
        self._bm25_cache: _Bm25Stats | None = None
        self._conninfo = "postgresql://" + url.split("://", 1)[1] if url.startswith("postgres://") else url
        with self._first_connection(connect_attempts) as conn:
            self._migrate(conn)
        self._pool = ConnectionPool(
            self._conninfo, min_size=1, max_size=pool_size, timeout=_POOL_TIMEOUT_S, open=False, name="palimpsest",
            kwargs={"autocommit": True}, configure=self._configure, check=ConnectionPool.check_connection,
        )
        try:
            self._pool.open(wait=True, timeout=15)
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreUnavailable(f"cannot open a connection pool to PostgreSQL at {_redact(url)}: {exc}") from exc

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
        except (psycopg.OperationalError, PoolTimeout) as exc:
            self._down_reason = " ".join(str(exc).split()) or type(exc).__name__
            self._down_until = time.monotonic() + _FAIL_FAST_S
            raise StoreUnavailable(f"PostgreSQL at {_redact(self.url)} is unavailable: {self._down_reason}") from exc
        except psycopg.DataError as exc:
            raise InvalidInput(f"PostgreSQL refused a value: {(exc.diag.message_primary or str(exc)).strip()}") from exc

    @contextmanager
    def _read(self) -> Iterator[psycopg.Connection[Any]]:
        with self._errors(), self._pool.connection() as conn:
            yield conn

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[Any]]:
        with self._errors(), self._pool.connection() as conn, conn.transaction():
            yield conn

    def _all(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        with self._read() as conn:
            return conn.execute(sql, params).fetchall()

    def close(self) -> None:
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
        for version, path in files:
            if version in done:
                continue
            with conn.transaction():
                conn.execute(path.read_text())  # no parameters: several statements in one call
                conn.execute("INSERT INTO schema_migrations VALUES (%s, now())", (version,))

    def schema_version(self) -> int:
        return self._all("SELECT coalesce(max(version), 0) FROM schema_migrations")[0][0]

    # -- filters -------------------------------------------------------------
    @staticmethod
    def _where(f: Filters, alias: str = "m") -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        for test, value in (
            (f"{alias}.session_id = %s", f.session),
            (f"{alias}.session_id = ANY(%s)", f.sessions),
            (f"{alias}.role = %s", f.role),
            (f"{alias}.created_at >= %s::timestamptz", f.since),
            (f"{alias}.created_at < %s::timestamptz", f.until),
            (f"{alias}.session_id IN (SELECT id FROM sessions WHERE agent = %s)", f.agent),
            (f"{alias}.session_id IN (SELECT id FROM sessions WHERE channel = %s)", f.channel),
        ):
            if value is not None:
                clauses.append(test)
                params.append(value)
        if f.tag is not None:
            clauses.append(f"{alias}.session_id IN (SELECT session_id FROM tags WHERE key = %s AND value = %s AND state = 'accepted')")
            params.extend(f.tag.split(":", 1))
        return (" AND ".join(clauses) or "true"), params

    # -- sessions ------------------------------------------------------------
    def upsert_session(self, s: Session) -> None:
        with self._tx() as conn:
            conn.execute(
                f"""INSERT INTO sessions ({_SESSION_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
                ON CONFLICT (id) DO UPDATE SET
                  key = coalesce(excluded.key, sessions.key), agent = coalesce(excluded.agent, sessions.agent),
                  channel = coalesce(excluded.channel, sessions.channel), title = coalesce(excluded.title, sessions.title),
                  kind = excluded.kind,
                  settings = palimpsest_merge_patch(sessions.settings, excluded.settings),
                  created_at = least(sessions.created_at, excluded.created_at),
                  updated_at = greatest(sessions.updated_at, excluded.updated_at)""",
                (s.id, _text(s.key), _text(s.agent), _text(s.channel), _text(s.title), s.kind,
                 json.dumps(_clean(s.settings), ensure_ascii=False), s.created_at, s.updated_at),
            )

    def get_session(self, session_id: str) -> Session | None:
        rows = self._all(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = %s", (session_id,))
        return _row_to_session(rows[0]) if rows else None

    def list_sessions(self, filters: Filters, limit: int = 100, offset: int = 0) -> list[Session]:
        clauses, params = [], []
        for column, value in (("id", filters.session), ("agent", filters.agent), ("channel", filters.channel)):
            if value is not None:
                clauses.append(f"{column} = %s")
                params.append(value)
        sql = f"""SELECT {_SESSION_COLUMNS} FROM sessions WHERE {' AND '.join(clauses) or 'true'}
                  ORDER BY updated_at DESC, id LIMIT %s OFFSET %s"""
        return [_row_to_session(r) for r in self._all(sql, (*params, limit, offset))]

    def idle_instant_sessions(self, idle_before: str) -> list[str]:
        sql = """SELECT s.id FROM sessions s WHERE s.kind = 'instant' AND s.updated_at < %s::timestamptz
                 AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id) ORDER BY s.id"""
        return [r[0] for r in self._all(sql, (idle_before,))]

    def drop_session_index(self, session_id: str) -> int:
        self._bm25_cache = None
        with self._tx() as conn:
            _lock_session(conn, session_id)
            return conn.execute("DELETE FROM messages WHERE session_id = %s", (session_id,)).rowcount

    # -- messages ------------------------------------------------------------
    def insert_messages(self, session_id: str, messages: list[Message], cursor: tuple[int, int] | None,
                        journal: str = "") -> list[str]:
        sql = f"""INSERT INTO messages ({_MESSAGE_COLUMNS}) VALUES ({', '.join(['%s'] * 21)})
                  ON CONFLICT DO NOTHING RETURNING id"""
        with self._tx() as conn:
            _lock_session(conn, session_id)
            inserted: set[str] = set()
            if messages:
                with conn.cursor() as cur:
                    cur.executemany(sql, [_message_params(m) for m in messages], returning=True)
                    while True:
                        inserted.update(r[0] for r in cur.fetchall())
                        if not cur.nextset():
                            break
            if cursor is not None:
                conn.execute(
                    # never backwards: two writers of one session may commit out of order
                    """INSERT INTO journal_cursors (journal_id, session_id, line, byte_offset) VALUES (%s, %s, %s, %s)
                       ON CONFLICT (journal_id, session_id) DO UPDATE SET line = excluded.line, byte_offset = excluded.byte_offset
                       WHERE excluded.byte_offset > journal_cursors.byte_offset""",
                    (journal, session_id, cursor[0], cursor[1]),
                )
        seen: set[str] = set()
        ordered = []
        for m in messages:
            if m.id in inserted and m.id not in seen:
                seen.add(m.id)
                ordered.append(m.id)
        return ordered

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

    def cursor(self, session_id: str, journal: str = "") -> tuple[int, int]:
        rows = self._all("SELECT line, byte_offset FROM journal_cursors WHERE journal_id = %s AND session_id = %s", (journal, session_id))
        return (rows[0][0], rows[0][1]) if rows else (0, 0)

    def cursors(self, journal: str = "") -> dict[str, tuple[int, int]]:
        sql = "SELECT session_id, line, byte_offset FROM journal_cursors WHERE journal_id = %s"
        return {r[0]: (r[1], r[2]) for r in self._all(sql, (journal,))}

    def get_messages(self, ids: list[str]) -> list[Message]:
        if not ids:
            return []
        rows = self._all(f"SELECT {_M} FROM messages m WHERE m.id = ANY(%s)", (list(ids),))
        by_id = {r[0]: _row_to_message(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def browse(self, filters: Filters, limit: int, offset: int, newest_first: bool = False) -> list[Message]:
        where, params = self._where(filters)
        order = "DESC" if newest_first else "ASC"
        sql = f"SELECT {_M} FROM messages m WHERE {where} ORDER BY m.created_at {order}, m.id {order} LIMIT %s OFFSET %s"
        return [_row_to_message(r) for r in self._all(sql, (*params, limit, offset))]

    def keyword_search(self, terms: list[str], filters: Filters, limit: int, match_all: bool) -> list[tuple[Message, float]]:
        """BM25 as SQLite's FTS5 computes it (`_bm25`: same IDF, k1, b, column weights, phrase
        counts from the tsvector's positions, document length in tokens), given to the best
        `_CANDIDATES` matches by a cheap rank (the IDF of the terms held, then `ts_rank`).
        SQLite's shortcuts are mirrored: terms in more than half the messages are dropped
        from an any-word query (their IDF is ~0; when every term is that common, the newest
        matches come back, scored alike), and an unfiltered any-word query ranks every match
        of its rarest terms but only about the newest `_BM25_WINDOW` of the others."""
        terms = [t for t in (_text(t) or "" for t in terms) if t.strip()]
        if not terms or limit <= 0:
            return []
        where, params = self._where(filters)
        with self._read() as conn:
            # each term's tokens in order: (lexeme, offset from the first), a phrase when several
            rows = conn.execute(
                """SELECT t, ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('palimpsest', t)) AS u, unnest(u.positions) AS p
                                  ORDER BY p),
                          ARRAY(SELECT p FROM unnest(to_tsvector('palimpsest', t)) AS u, unnest(u.positions) AS p ORDER BY p),
                          (SELECT coalesce(max(rowid), 0) FROM messages)
                   FROM unnest(%s::text[]) AS t""", (terms,)).fetchall()
            phrases = {t: [(lx, pos - ps[0]) for lx, pos in zip(lxs, ps)] for t, lxs, ps, _ in rows if lxs}
            lexemes = {t: sorted({lx for lx, _ in phrases.get(t, [])}) for t in terms}
            terms = [t for t in terms if lexemes[t]]  # a term of punctuation alone is no word
            if not terms:
                return []
            stats = self._bm25_stats(conn, rows[0][3])
            df = self._doc_freqs(conn, stats, terms, lexemes)
            informative = terms if stats.n < 1000 else [t for t in terms if df[t] <= 0.5 * stats.n]
            if informative and not match_all:
                terms = informative
            # Each term is its own phrase query: user text is a value, never tsquery syntax.
            query = (" && " if match_all else " || ").join(["phraseto_tsquery('palimpsest', %s)"] * len(terms))
            if not informative:
                sql = f"""WITH q AS (SELECT {query} AS q) SELECT {_M}, 1e-6 FROM messages m, q
                          WHERE m.fts @@ q.q AND {where} ORDER BY m.rowid DESC LIMIT %s"""
                rows = conn.execute(sql, (*terms, *params, limit)).fetchall()
                return [(_row_to_message(r), float(r[-1])) for r in rows]
            idf = {t: _idf(stats.n, df[t]) for t in terms}
            match, match_params = "m.fts @@ q.q", []
            if not match_all and where == "true" and stats.n >= 1000:
                # As SQLite: the rarest terms, together at most _RARE_MATCHES matches, are
                # scored in every match; of the others, only about the newest _BM25_WINDOW
                # matches: those above the rowid that many are expected above (their matches
                # spread evenly over the rowids). Spelt as rare OR (common AND rowid > edge),
                # the planner ORs the rare terms' GIN bitmap with the common terms' ANDed
                # with the primary key's range, so no row outside the window is read.
                rare, common = split_by_rarity(terms, df, _RARE_MATCHES)
                matches = sum(df[t] for t in common)
                if matches > _BM25_WINDOW:
                    edge = stats.max_rowid - int(_BM25_WINDOW * stats.max_rowid / matches)
                    newest = " || ".join(["phraseto_tsquery('palimpsest', %s)"] * len(common))
                    match, match_params = f"(m.fts @@ ({newest}) AND m.rowid > %s)", [*common, edge]
                    if rare:
                        either = " || ".join(["phraseto_tsquery('palimpsest', %s)"] * len(rare))
                        match, match_params = f"(m.fts @@ ({either}) OR {match})", [*rare, *match_params]
            # The cheap rank: the IDF of the terms a message holds, then ts_rank with the
            # column weights, length-normalised; its best candidates get the exact BM25.
            cheap = " + ".join(["%s * (m.fts @@ phraseto_tsquery('palimpsest', %s))::int"] * len(terms))
            cheap_params = [x for t in terms for x in (idf[t], t)]
            wanted = sorted({lx for t in terms for lx in lexemes[t]})
            sql = f"""WITH q AS (SELECT {query} AS q),
                      c AS (SELECT m.rowid, m.fts FROM messages m, q WHERE {match} AND {where}
                            ORDER BY {cheap} DESC, ts_rank('{_TS_WEIGHTS}', m.fts, q.q, 1) DESC, m.rowid DESC LIMIT %s),
                      d AS (SELECT c.rowid, c.fts, (SELECT sum(cardinality(x.positions))::int FROM unnest(c.fts) AS x) AS dl FROM c)
                      SELECT d.rowid, d.dl, u.lexeme, u.positions, u.weights
                      FROM d CROSS JOIN LATERAL unnest(d.fts) AS u WHERE u.lexeme = ANY(%s)"""
            rows = conn.execute(sql, (*terms, *match_params, *params, *cheap_params,
                                      max(_CANDIDATES, 4 * limit), wanted)).fetchall()
            found: dict[int, tuple[int, dict[str, dict[int, str]]]] = {}
            for rowid, dl, lexeme, positions, labels in rows:
                found.setdefault(rowid, (dl or 1, {}))[1][lexeme] = dict(zip(positions, labels))
            scored = [(_bm25({t: _phrase_freq(phrases[t], at) for t in terms}, idf, dl, stats.avgdl), rowid)
                      for rowid, (dl, at) in found.items()]
            scored.sort(key=lambda x: (-x[0], -x[1]))
            top = scored[:limit]
            if not top:
                return []
            by_rowid = {r[0]: r[1:] for r in conn.execute(f"SELECT m.rowid, {_M} FROM messages m WHERE m.rowid = ANY(%s)",
                                                          ([r for _, r in top],))}
        return [(_row_to_message(by_rowid[r]), score) for score, r in top if r in by_rowid]

    def count_matches(self, terms: list[str], filters: Filters, cap: int) -> int:
        terms = [t for t in (_text(t) or "" for t in terms) if t.strip()]
        if not terms:
            return 0
        where, params = self._where(filters)
        query = " && ".join(["phraseto_tsquery('palimpsest', %s)"] * len(terms))
        sql = f"SELECT count(*) FROM (SELECT 1 FROM messages m WHERE m.fts @@ ({query}) AND {where} LIMIT %s) x"
        return self._all(sql, (*terms, *params, cap))[0][0]

    def _bm25_stats(self, conn: psycopg.Connection[Any], max_rowid: int) -> _Bm25Stats:
        """N, the average document length and the newest rowid, with a cache of document
        frequencies. Recomputed when messages were added (under 5,000 messages: exact;
        above: when the count moved by a tenth or a minute passed, the average length
        from a sample of ~5,000 rows) or removed by this store."""
        s = self._bm25_cache
        if s is not None and (s.max_rowid == max_rowid or (
                s.n >= _BM25_EXACT and max_rowid <= 1.1 * s.max_rowid and time.monotonic() - s.at < 60)):
            return s
        n = conn.execute("SELECT count(*) FROM messages").fetchone()[0]  # type: ignore[index]
        sample = "" if n <= _BM25_EXACT else f"TABLESAMPLE SYSTEM ({min(100.0, 100.0 * _BM25_EXACT / n):.4f}) REPEATABLE (1)"
        avgdl = conn.execute(
            f"SELECT avg((SELECT sum(cardinality(u.positions)) FROM unnest(m.fts) AS u)) FROM messages m {sample}"
        ).fetchone()[0]  # type: ignore[index]
        common: dict[str, float] = {}
        if n > _BM25_EXACT:  # ANALYZE's most common lexemes: their frequencies, instead of counting
            row = conn.execute(
                """SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats
                   WHERE tablename = 'messages' AND attname = 'fts' AND schemaname = current_schema()"""
            ).fetchone()
            if row and row[0] and row[1]:
                common = {lx: f for lx, f in zip(row[0], row[1]) if f >= _BM25_COMMON}
        self._bm25_cache = _Bm25Stats(n=n, avgdl=float(avgdl or 1.0), max_rowid=max_rowid, at=time.monotonic(), common=common)
        return self._bm25_cache

    @staticmethod
    def _doc_freqs(conn: psycopg.Connection[Any], stats: _Bm25Stats, terms: list[str],
                   lexemes: dict[str, list[str]]) -> dict[str, int]:
        """How many messages hold each term (cached with the stats; counted up to half the
        messages, beyond which FTS5's IDF is ~0 anyway). A single lexeme that ANALYZE found
        in at least 1 % of its sample takes that frequency: counting it exactly would read
        tens of thousands of rows, and its IDF hardly moves with a sampling error."""
        for t in terms:
            if t not in stats.df and len(lexemes[t]) == 1 and lexemes[t][0] in stats.common:
                stats.df[t] = round(stats.common[lexemes[t][0]] * stats.n)
        missing = [t for t in terms if t not in stats.df]
        if missing:
            stats.df.update(conn.execute(
                """SELECT t, (SELECT count(*) FROM (SELECT 1 FROM messages
                                                    WHERE fts @@ phraseto_tsquery('palimpsest', t) LIMIT %s) x)
                   FROM unnest(%s::text[]) AS t""", (stats.n // 2 + 1, missing)).fetchall())
        return {t: stats.df[t] for t in terms}

    def substring_search(self, fragment: str, filters: Filters, limit: int) -> list[Message]:
        where, params = self._where(filters)
        pattern = _like_pattern(_text(fragment) or "")
        sql = f"""SELECT {_M} FROM messages m WHERE (m.content ILIKE %s OR m.tool_result ILIKE %s) AND {where}
                  ORDER BY m.created_at DESC, m.id DESC LIMIT %s"""
        return [_row_to_message(r) for r in self._all(sql, (pattern, pattern, *params, limit))]

    def scan(self, filters: Filters, limit: int, after_rowid: int = 0) -> list[tuple[int, Message]]:
        where, params = self._where(filters)
        sql = f"SELECT m.rowid, {_M} FROM messages m WHERE m.rowid > %s AND {where} ORDER BY m.rowid LIMIT %s"
        return [(r[0], _row_to_message(r[1:])) for r in self._all(sql, (after_rowid, *params, limit))]

    def touch(self, ids: list[str], at: str) -> None:
        if not ids:
            return
        with self._tx() as conn:
            # Lock in id order, so two overlapping touches cannot deadlock.
            conn.execute(
                """UPDATE messages SET access_count = access_count + 1, last_accessed_at = %s::timestamptz
                   WHERE rowid IN (SELECT rowid FROM messages WHERE id = ANY(%s) ORDER BY id FOR UPDATE)""",
                (at, list(set(ids))),
            )

    def stats(self) -> dict[str, Any]:
        with self._read() as conn:
            messages, oldest, newest, truncated = conn.execute(
                "SELECT count(*), min(created_at), max(created_at), count(*) FILTER (WHERE truncated) FROM messages"
            ).fetchone()  # type: ignore[misc]
            per_agent = {
                (a or ""): {"sessions": s, "messages": n}
                for a, s, n in conn.execute(
                    """SELECT s.agent, count(DISTINCT s.id), count(m.id) FROM sessions s
                       LEFT JOIN messages m ON m.session_id = s.id GROUP BY s.agent"""
                )
            }
            sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]  # type: ignore[index]
            size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]  # type: ignore[index]
        return {
            "backend": "postgresql",
            "sessions": sessions,
            "messages": messages,
            "truncated": truncated,
            "oldest": _ts(oldest),
            "newest": _ts(newest),
            "per_agent": per_agent,
            "database_bytes": size,
            "schema_version": self.schema_version(),
        }

    def reset(self) -> None:
        self._bm25_cache = None
        with self._tx() as conn:
            conn.execute("TRUNCATE vectors, vector_counts, messages, sessions, journal_cursors, jobs RESTART IDENTITY")
            # an HNSW index left on the empty table would make the next bulk load insert
            # into the graph row by row; it is rebuilt at the threshold (or build_vector_index)
            for (name,) in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'vectors' AND indexname LIKE 'vectors_hnsw_%%'"
            ).fetchall():
                conn.execute(f"DROP INDEX IF EXISTS {name}")

    # -- vectors -------------------------------------------------------------
    def put_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        if not rows:
            return
        dims = {int(np.asarray(v).shape[0]) for _, v in rows}
        with self._tx() as conn:
            # One writer of vectors at a time, so two models can never slip in together.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (_VECTOR_LOCK,))
            for other, dim in conn.execute("SELECT model, dim FROM vector_counts"):
                if other != model:
                    raise ModelMismatch(
                        f"the index holds vectors of {other!r}; refusing to mix in {model!r}. "
                        "Run `palimpsest reindex` after a model change."
                    )
                dims.add(dim)
            if len(dims) != 1:
                raise InvalidInput(f"vectors of {model!r} must all have one dimension, got {sorted(dims)}")
            dim = dims.pop()
            # One statement for the batch: the vectors travel as text ('[x,y,…]', parsed in C).
            conn.execute(
                """INSERT INTO vectors (message_rowid, model, dim, embedding)
                   SELECT m.rowid, %s, %s, u.v::vector FROM unnest(%s::text[], %s::text[]) AS u(id, v)
                   JOIN messages m ON m.id = u.id
                   ON CONFLICT (model, message_rowid) DO UPDATE SET dim = excluded.dim, embedding = excluded.embedding""",
                (model, dim, [i for i, _ in rows], [_vector_text(v) for _, v in rows]),
            )
            count = conn.execute("SELECT count FROM vector_counts WHERE model = %s", (model,)).fetchone()
            if count and count[0] >= self.hnsw_threshold:
                self._ensure_vector_index(conn, dim, self.index_build_memory_mb, self.index_build_workers)

    def build_vector_index(self) -> None:
        """Build the HNSW index now, whatever the count (after a bulk load, say)."""
        with self._tx() as conn:
            for (dim,) in conn.execute("SELECT dim FROM vector_counts").fetchall():
                self._ensure_vector_index(conn, dim, self.index_build_memory_mb, self.index_build_workers)

    @staticmethod
    def _ensure_vector_index(conn: psycopg.Connection[Any], dim: int, memory_cap_mb: int = BUILD_MEMORY_MB,
                             workers: int = BUILD_WORKERS) -> None:
        """Build the partial HNSW index of `dim` if it is missing (sized as postgres_hnsw says)."""
        if not index_exists(conn, "vectors", f"vectors_hnsw_{dim}"):
            rows = conn.execute("SELECT coalesce(sum(count), 0) FROM vector_counts WHERE dim = %s", (dim,)).fetchone()
            build_hnsw(conn, "vectors", f"vectors_hnsw_{dim}", dim, int(rows[0]) if rows else 0, memory_cap_mb, workers)

    def vector_search(self, model: str, query: np.ndarray, filters: Filters, limit: int) -> list[tuple[str, float]]:
        info = self.vector_models().get(model)
        if info is None or limit <= 0:
            return []
        dim = info["dim"]
        q = np.asarray(query, dtype=np.float32)
        if q.shape != (dim,):
            raise InvalidInput(f"query vector has shape {q.shape}; {model!r} vectors have {dim} dimensions")
        where, params = self._where(filters)
        with self._tx() as conn:
            if filters != Filters() and self._few_rows(conn, where, params):
                # Exact over the filtered messages' vectors, fetched one by one through the
                # primary key (a join would read every vector of the model; OFFSET 0 keeps
                # the planner from flattening the lateral subquery into one).
                sql = f"""SELECT c.id, 1 - d.dist FROM (SELECT m.rowid, m.id FROM messages m WHERE {where}) c
                          CROSS JOIN LATERAL (SELECT v.embedding <=> %s AS dist FROM vectors v
                                              WHERE v.model = %s AND v.message_rowid = c.rowid OFFSET 0) d
                          ORDER BY d.dist LIMIT %s"""
                rows = conn.execute(sql, (*params, q, model, limit)).fetchall()
                return [(r[0], float(r[1])) for r in rows]
            # The partial HNSW index's own expression, so the planner can use it; with a
            # filter, pgvector's iterative scan walks on until enough rows pass it.
            distance = f"v.embedding::vector({dim}) <=> %s::vector({dim})"
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(limit, 1000))}")
            if filters != Filters() and self._iterative_scan(conn):
                conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
                conn.execute("SET LOCAL hnsw.max_scan_tuples = 100000")
            sql = f"""SELECT m.id, 1 - ({distance}) FROM vectors v JOIN messages m ON m.rowid = v.message_rowid
                      WHERE v.model = %s AND v.dim = {dim} AND {where} ORDER BY {distance} LIMIT %s"""
            rows = conn.execute(sql, (q, model, *params, q, limit)).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    @staticmethod
    def _few_rows(conn: psycopg.Connection[Any], where: str, params: list[Any]) -> bool:
        """Whether the filter leaves at most `_EXACT_MAX` messages: then an exact scan of their
        vectors is fast and never misses; above it, the HNSW index with an iterative scan."""
        row = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM messages m WHERE {where} LIMIT {_EXACT_MAX + 1}) c",
                           params).fetchone()
        return bool(row and row[0] <= _EXACT_MAX)

    def _iterative_scan(self, conn: psycopg.Connection[Any]) -> bool:
        """pgvector 0.8 and later filter inside the HNSW scan (`hnsw.iterative_scan`)."""
        if self._pgvector_version is None:
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
            parts = [int(x) for x in re.findall(r"\d+", row[0] if row else "0")[:2]] + [0, 0]
            self._pgvector_version = (parts[0], parts[1])
        return self._pgvector_version >= (0, 8)

    def get_vectors(self, model: str, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        rows = self._all(
            """SELECT m.id, v.embedding FROM vectors v JOIN messages m ON m.rowid = v.message_rowid
               WHERE v.model = %s AND m.id = ANY(%s)""",
            (model, list(ids)),
        )
        return {i: np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=np.float32) for i, v in rows}

    def vector_models(self) -> dict[str, dict[str, int]]:
        rows = self._all("SELECT model, dim, count FROM vector_counts ORDER BY model")
        return {m: {"dim": d, "count": n} for m, d, n in rows}

    def messages_without_vectors(self, model: str, limit: int) -> list[Message]:
        sql = f"""SELECT {_M} FROM messages m WHERE NOT EXISTS
                  (SELECT 1 FROM vectors v WHERE v.model = %s AND v.message_rowid = m.rowid) ORDER BY m.rowid LIMIT %s"""
        return [_row_to_message(r) for r in self._all(sql, (model, limit))]

    def drop_vectors(self, model: str | None = None) -> int:
        with self._tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (_VECTOR_LOCK,))
            if model is None:
                n = conn.execute("DELETE FROM vectors").rowcount
            else:
                n = conn.execute("DELETE FROM vectors WHERE model = %s", (model,)).rowcount
            live = {r[0] for r in conn.execute("SELECT dim FROM vector_counts")}
            for (name,) in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'vectors' AND indexname LIKE 'vectors_hnsw_%%'"
            ).fetchall():
                if int(name.rsplit("_", 1)[1]) not in live:
                    conn.execute(f"DROP INDEX IF EXISTS {name}")
        return n

    # -- jobs ----------------------------------------------------------------
    def enqueue(self, jobs: list[NewJob]) -> int:
        if not jobs:
            return 0
        n = 0
        now = iso(utcnow())
        with self._tx() as conn:
            for j in jobs:
                n += conn.execute(
                    """INSERT INTO jobs (task, payload, job_key, max_attempts, run_at, created_at)
                       VALUES (%s, %s, %s, %s, %s::timestamptz, %s::timestamptz) ON CONFLICT DO NOTHING""",
                    (j.task, json.dumps(_clean(j.payload)), j.job_key, j.max_attempts, j.run_at or now, now),
                ).rowcount
        return n

    def claim_jobs(self, worker: str, tasks: list[str] | None, limit: int, now: str, stale_before: str) -> list[Job]:
        task_clause = "AND task = ANY(%s)" if tasks else ""
        params: list[Any] = [now, stale_before] + ([list(tasks)] if tasks else []) + [limit, worker, now]
        sql = f"""WITH due AS (
                    SELECT id FROM jobs
                    WHERE ((state = 'queued' AND run_at <= %s::timestamptz) OR (state = 'running' AND locked_at < %s::timestamptz))
                    {task_clause} ORDER BY run_at, id LIMIT %s FOR UPDATE SKIP LOCKED)
                  UPDATE jobs j SET state = 'running', locked_by = %s, locked_at = %s::timestamptz, attempts = j.attempts + 1
                  FROM due WHERE j.id = due.id RETURNING {', '.join('j.' + c for c in _JOB_COLUMNS.split(', '))}"""
        with self._tx() as conn:
            rows = conn.execute(sql, params).fetchall()
        return sorted((_row_to_job(r) for r in rows), key=lambda j: j.id)

    def finish_job(self, job_id: int) -> None:
        with self._tx() as conn:
            conn.execute("UPDATE jobs SET state = 'done', locked_by = NULL, last_error = NULL WHERE id = %s", (job_id,))

    def fail_job(self, job_id: int, error: str, retry_at: str | None) -> None:
        with self._tx() as conn:
            conn.execute(
                """UPDATE jobs SET last_error = %s, locked_by = NULL, locked_at = NULL,
                   state = CASE WHEN %s::timestamptz IS NULL OR attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
                   run_at = coalesce(%s::timestamptz, run_at) WHERE id = %s""",
                (_text(error[:2000]), retry_at, retry_at, job_id),
            )

    def job_status(self) -> dict[str, Any]:
        with self._read() as conn:
            rows = conn.execute("SELECT task, state, count(*) FROM jobs GROUP BY task, state ORDER BY task, state").fetchall()
            errors = dict(conn.execute(
                """SELECT DISTINCT ON (task) task, last_error FROM jobs
                   WHERE state = 'failed' AND last_error IS NOT NULL ORDER BY task, id DESC"""
            ).fetchall())
        counts: dict[str, dict[str, int]] = {}
        for task, state, n in rows:
            counts.setdefault(task, {})[state] = n
        return {"tasks": counts, "sample_errors": errors}

    def retry_failed(self, task: str | None, error_like: str | None, dry_run: bool) -> int:
        # A failed job whose key is live again (re-enqueued since) stays failed: requeueing
        # it would break the one-live-job-per-key rule; of several failed jobs with one key,
        # the newest is requeued.
        clauses = [
            "j.state = 'failed'",
            """(j.job_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs o WHERE o.job_key = j.job_key AND
               (o.state IN ('queued', 'running') OR (o.state = 'failed' AND o.id > j.id))))""",
        ]
        params: list[Any] = []
        if task:
            clauses.append("j.task = %s")
            params.append(task)
        if error_like:
            clauses.append("strpos(j.last_error, %s) > 0")
            params.append(_text(error_like))
        where = " AND ".join(clauses)
        with self._tx() as conn:
            if dry_run:
                return conn.execute(f"SELECT count(*) FROM jobs j WHERE {where}", params).fetchone()[0]  # type: ignore[index]
            return conn.execute(
                f"UPDATE jobs SET state = 'queued', attempts = 0, run_at = %s::timestamptz WHERE id IN (SELECT j.id FROM jobs j WHERE {where})",
                [iso(utcnow()), *params],
            ).rowcount


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


@dataclass
class _Bm25Stats:
    n: int
    avgdl: float
    max_rowid: int
    at: float
    common: dict[str, float]
    df: dict[str, int] = field(default_factory=dict)


def _idf(n: int, df: int) -> float:
    """FTS5's IDF: log((N - n + 0.5) / (n + 0.5)), and 1e-6 where that is not positive."""
    value = math.log((n - df + 0.5) / (df + 0.5)) if n else 0.0
    return value if value > 0 else 1e-6


def _bm25(freqs: dict[str, float], idf: dict[str, float], length: int, avgdl: float) -> float:
    """FTS5's bm25() of one row: Σ idf · f·(k1+1) / (f + k1·(1 − b + b·|D|/avgdl)), f being the
    term's weighted count over the columns and |D| the row's tokens in all columns."""
    norm = _K1 * (1 - _B + _B * length / (avgdl or 1.0))
    return sum(idf[t] * f * (_K1 + 1) / (f + norm) for t, f in freqs.items() if f > 0)


def _phrase_freq(phrase: list[tuple[str, int]], at: dict[str, dict[int, str]]) -> float:
    """A term's weighted count in one row: its occurrences (a phrase: its lexemes at their
    offsets from a position of the first), each weighted by the column it is in."""
    first, rest = phrase[0], phrase[1:]
    total = 0.0
    for pos, label in at.get(first[0], {}).items():
        if all(pos + off in at.get(lx, {}) for lx, off in rest):
            total += _COLUMN_WEIGHTS.get(label, 0.0)
    return total


def _vector_text(v: np.ndarray) -> str:
    return "[" + ",".join(map(repr, np.asarray(v, dtype=np.float32).tolist())) + "]"


def _lock_session(conn: psycopg.Connection[Any], session_id: str) -> None:
    """Serialise the writers of one session, across processes and machines, until commit."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (session_id,))
