"""The embedded backend: one SQLite file in WAL mode, one writer, many readers.

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
from typing import Any

import numpy as np

from ..errors import InvalidInput, StoreUnavailable
from ..records import Message, Session
from .base import BM25_WINDOW, RARE_MATCHES, Filters, Job, NewJob, Store, split_by_rarity
from .sqlite_documents import SQLiteDocumentsMixin
from .sqlite_facts import SQLiteFactsMixin
from .sqlite_summaries import SQLiteSummariesMixin
from .sqlite_tags import SQLiteTagsMixin
from .sqlite_wiki import SQLiteWikiMixin
from .vectors import ANN_THRESHOLD, VectorCache

_MESSAGE_COLUMNS = (
    "id, session_id, type, role, content, tool_name, tool_args, tool_result, metadata, created_at, "
    "event_key, importance, access_count, last_accessed_at, truncated, full_content_length, "
    "full_tool_result_length, journal_path, journal_line, journal_offset, context"
)
_FTS_COLUMNS = "content, tool_name, tool_result, context"  # messages_fts (migration 0004)
_TRI_COLUMNS = "content, tool_result"  # messages_tri (migration 0002)
_M = ", ".join(f"m.{c.strip()}" for c in _MESSAGE_COLUMNS.split(","))


CONTEXT_WEIGHT = 0.5
# keyword search: RARE_MATCHES and BM25_WINDOW (store/base.py), and with a filter, of the
# common terms' newest FILTERED_WINDOW matches those that pass it (see keyword_search)
MMAP_BYTES = 1 << 30
WAL_FOLD_BYTES = 16 << 20  # compact_index checkpoints a WAL larger than this when it has nothing to merge
FOLD_WAIT_MS = 200  # ... waiting this long at most for readers and other writers
BUSY_TIMEOUT_MS = 30_000  # how long a statement waits for another process's write lock
FILTERED_WINDOW = 2000


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _fts_source(where: str) -> str:
    """The full-text table, joined to the messages when a filter needs their columns. CROSS
    JOIN keeps the full-text match as the outer loop: with a session filter the planner
    preferred walking the session's rows and probing FTS5 for each."""
    return "messages_fts" if where == "1" else "messages_fts CROSS JOIN messages m ON m.rowid = messages_fts.rowid"


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


def row_to_message(row: tuple[Any, ...]) -> Message:
    return Message(
        id=row[0], session=row[1], type=row[2], role=row[3], content=row[4], tool_name=row[5],
        tool_args=json.loads(row[6]) if row[6] is not None else None, tool_result=row[7],
        metadata=json.loads(row[8]) if row[8] else {}, created_at=row[9], event_key=row[10],
        importance=row[11], access_count=row[12], last_accessed_at=row[13], truncated=bool(row[14]),
        full_content_length=row[15], full_tool_result_length=row[16], journal_path=row[17],
        journal_line=row[18], journal_offset=row[19], context=row[20],
    )


def message_params(m: Message) -> tuple[Any, ...]:
    return (
        m.id, m.session, m.type, m.role, m.content, m.tool_name,
        json.dumps(m.tool_args, ensure_ascii=False) if m.tool_args is not None else None,
        m.tool_result, json.dumps(m.metadata, ensure_ascii=False) if m.metadata else "{}", m.created_at, m.event_key,
        m.importance, m.access_count, m.last_accessed_at, int(m.truncated), m.full_content_length,
        m.full_tool_result_length, m.journal_path, m.journal_line, m.journal_offset, m.context,
    )


class SQLiteStore(Store, SQLiteFactsMixin, SQLiteSummariesMixin, SQLiteDocumentsMixin, SQLiteTagsMixin, SQLiteWikiMixin):
    def __init__(self, url: str, ann_threshold: int = ANN_THRESHOLD) -> None:
        self.url = url
        self.path = Path(url[len("sqlite:///"):])  # sqlite:///rel/path or sqlite:////abs/path
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._generation = 0
        self._df_cache: dict[str, int] = {}  # term -> messages holding it, up to half (keyword_search)
        self._df_total = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = self._connect()
            self._migrate()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"cannot open SQLite database {self.path}: {exc}") from exc
        except OSError as exc:
            raise StoreUnavailable(f"cannot open SQLite database {self.path}: {exc.strerror}") from exc
        self._vectors = VectorCache(self, ann_threshold)

    # -- connections ---------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
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
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._write_lock:
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")

    def close(self) -> None:
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
            for version, path in files:
                if version in done:
                    continue
                for statement in _split_sql(path.read_text()):
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_migrations VALUES (?, datetime('now'))", (version,))

    def schema_version(self) -> int:
        return self._reader.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] or 0

    # -- filters -------------------------------------------------------------
    @staticmethod
    def _where(f: Filters, alias: str = "m") -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if f.session is not None:
            clauses.append(f"{alias}.session_id = ?")
            params.append(f.session)
        if f.sessions is not None:
            clauses.append(f"{alias}.session_id IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(f.sessions))
        if f.role is not None:
            clauses.append(f"{alias}.role = ?")
            params.append(f.role)
        if f.since is not None:
            clauses.append(f"{alias}.created_at >= ?")
            params.append(f.since)
        if f.until is not None:
            clauses.append(f"{alias}.created_at < ?")
            params.append(f.until)
        for column, value in (("agent", f.agent), ("channel", f.channel)):
            if value is not None:
                clauses.append(f"{alias}.session_id IN (SELECT id FROM sessions WHERE {column} = ?)")
                params.append(value)
        if f.tag is not None:
            clauses.append(f"{alias}.session_id IN (SELECT session_id FROM tags WHERE key = ? AND value = ? AND state = 'accepted')")
            params.extend(f.tag.split(":", 1))
        return (" AND ".join(clauses) or "1"), params

    # -- sessions ------------------------------------------------------------
    def upsert_session(self, s: Session) -> None:
        with self._tx() as conn:
            conn.execute(
                """INSERT INTO sessions (id, key, agent, channel, title, kind, settings, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET
                  key = coalesce(excluded.key, key), agent = coalesce(excluded.agent, agent),
                  channel = coalesce(excluded.channel, channel), title = coalesce(excluded.title, title),
                  kind = excluded.kind,
                  settings = json_patch(settings, excluded.settings),
                  created_at = min(created_at, excluded.created_at),
                  updated_at = max(updated_at, excluded.updated_at)""",
                (s.id, s.key, s.agent, s.channel, s.title, s.kind, json.dumps(s.settings), s.created_at, s.updated_at),
            )

    def get_session(self, session_id: str) -> Session | None:
        row = self._reader.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return _row_to_session(row) if row else None

    def list_sessions(self, filters: Filters, limit: int = 100, offset: int = 0) -> list[Session]:
        clauses, params = [], []
        for column, value in (("id", filters.session), ("agent", filters.agent), ("channel", filters.channel)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        sql = f"SELECT * FROM sessions WHERE {' AND '.join(clauses) or '1'} ORDER BY updated_at DESC, id LIMIT ? OFFSET ?"
        return [_row_to_session(r) for r in self._reader.execute(sql, (*params, limit, offset))]

    def idle_instant_sessions(self, idle_before: str) -> list[str]:
        sql = """SELECT s.id FROM sessions s WHERE s.kind = 'instant' AND s.updated_at < ?
                 AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)"""
        return [r[0] for r in self._reader.execute(sql, (idle_before,))]

    def drop_session_index(self, session_id: str) -> int:
        with self._tx() as conn:
            n = conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,)).rowcount
        self._generation += 1
        return n

    # -- messages ------------------------------------------------------------
    def insert_messages(self, session_id: str, messages: list[Message], cursor: tuple[int, int] | None,
                        journal: str = "") -> list[str]:
        with self._tx() as conn:
            # New rows get rowids above the current maximum (no AUTOINCREMENT, one writer in
            # the transaction), so "rowid > before" is exactly this batch's inserted rows.
            before = conn.execute("SELECT coalesce(max(rowid), 0) FROM messages").fetchone()[0]
            # ON CONFLICT DO NOTHING skips only duplicates; INSERT OR IGNORE also dropped rows
            # that broke a NOT NULL rule, silently, where PostgreSQL raises
            sql = f"INSERT INTO messages ({_MESSAGE_COLUMNS}) VALUES ({', '.join('?' * 21)}) ON CONFLICT DO NOTHING"
            conn.executemany(sql, [message_params(m) for m in messages])
            inserted = [r[0] for r in conn.execute("SELECT id FROM messages WHERE rowid > ? ORDER BY rowid", (before,))]
            if inserted:  # full-text rows in one statement (migration 0005 says why; trigrams: 0009)
                conn.execute(f"INSERT INTO messages_fts (rowid, {_FTS_COLUMNS}) SELECT rowid, {_FTS_COLUMNS} FROM messages WHERE rowid > ?", (before,))
            if cursor is not None:  # never backwards: two writers of one session may commit out of order
                conn.execute(
                    """INSERT INTO journal_cursors (journal_id, session_id, line, byte_offset) VALUES (?, ?, ?, ?)
                       ON CONFLICT(journal_id, session_id) DO UPDATE SET line = excluded.line, byte_offset = excluded.byte_offset
                       WHERE excluded.byte_offset > journal_cursors.byte_offset""",
                    (journal, session_id, cursor[0], cursor[1]),
                )
            return inserted

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

    def cursor(self, session_id: str, journal: str = "") -> tuple[int, int]:
        row = self._reader.execute("SELECT line, byte_offset FROM journal_cursors WHERE journal_id = ? AND session_id = ?",
                                   (journal, session_id)).fetchone()
        return (row[0], row[1]) if row else (0, 0)

    def cursors(self, journal: str = "") -> dict[str, tuple[int, int]]:
        sql = "SELECT session_id, line, byte_offset FROM journal_cursors WHERE journal_id = ?"
        return {r[0]: (r[1], r[2]) for r in self._reader.execute(sql, (journal,))}

    def get_messages(self, ids: list[str]) -> list[Message]:
        if not ids:
            return []
        rows = self._reader.execute(
            f"SELECT {_M} FROM messages m WHERE m.id IN (SELECT value FROM json_each(?))", (json.dumps(ids),)
        ).fetchall()
        by_id = {r[0]: row_to_message(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def browse(self, filters: Filters, limit: int, offset: int, newest_first: bool = False) -> list[Message]:
        where, params = self._where(filters)
        order = "DESC" if newest_first else "ASC"
        sql = f"SELECT {_M} FROM messages m WHERE {where} ORDER BY m.created_at {order}, m.id {order} LIMIT ? OFFSET ?"
        return [row_to_message(r) for r in self._reader.execute(sql, (*params, limit, offset))]

    def keyword_search(self, terms: list[str], filters: Filters, limit: int, match_all: bool) -> list[tuple[Message, float]]:
        """BM25 over the FTS5 index, with a bounded amount of scoring work per query.

        FTS5 computes BM25 for every match (~1 µs each, more with a filter, which reads each
        match's row), so a common word over 100,000 messages cost tens of milliseconds. An
        any-word query is therefore cut by document frequency into rare terms (together at
        most RARE_MATCHES matches) and common ones, and run as three parts: messages with a
        rare term, and with a rare and a common one — both scored in full, so a rare word is
        found however old its message — and with a common term, of which only the newest
        BM25_WINDOW are scored. A message in several parts keeps its best score, which is
        its score in the plain any-word query (FTS5 counts each term's IDF over the whole
        table, and a term a message lacks adds nothing to its BM25).
        An all-words query is one part, windowed the same way when it matches more."""
        if not terms:
            return []
        freq = self._doc_freqs(terms)
        half = self._df_total // 2
        informative = [t for t in terms if freq.get(t, 0) <= half]
        where, params = self._where(filters)
        if match_all:
            # all terms in more than half the messages: BM25 cannot tell the matches apart
            # (every IDF clamps to ~0); take the newest matches, scored alike
            parts = [(" ".join(_fts_phrase(t) for t in terms), True, bool(informative))]
        elif not informative or not freq:
            parts = [(" OR ".join(_fts_phrase(t) for t in (informative or terms)), bool(freq), bool(informative))]
        else:
            rare, common = split_by_rarity(informative, freq, RARE_MATCHES)
            r = "(" + " OR ".join(_fts_phrase(t) for t in rare) + ")"
            c = "(" + " OR ".join(_fts_phrase(t) for t in common) + ")"
            if rare and common:
                # overlapping parts, each message kept at its best (= full) score: `r` alone
                # scores messages without common words exactly, and the others below their
                # score in `r AND c`; the window of `c` alone likewise. This way only one
                # part pays bm25()'s statistics pass over the long match lists of both.
                parts = [(r, False, True), (f"{r} AND {c}", False, True), (c, True, True)]
            else:
                parts = [(r if rare else c, not rare, True)]
        rows = self._ranked_messages(parts, where, params, limit, windowed=True)
        if len(rows) < limit and where != "1" and any(w for _, w, _ in parts):
            rows = self._ranked_messages(parts, where, params, limit, windowed=False)  # a filter left the window short
        return [(row_to_message(r), -float(r[-1])) for r in rows]

    def count_matches(self, terms: list[str], filters: Filters, cap: int) -> int:
        # no BM25: counting all-word matches skips the per-term statistics FTS5's bm25()
        # gathers first (a pass over every term's whole match list)
        where, params = self._where(filters)
        sql = f"SELECT count(*) FROM (SELECT 1 FROM {_fts_source(where)} WHERE messages_fts MATCH ? AND {where} LIMIT ?)"
        return self._reader.execute(sql, (" ".join(_fts_phrase(t) for t in terms), *params, cap)).fetchone()[0]

    def _ranked_messages(self, parts: list[tuple[str, bool, bool]], where: str, params: list[Any], limit: int, windowed: bool) -> list[Any]:
        """The best `limit` rows over the parts (FTS5 expression, windowed?, scored?), with
        their BM25 rank (negative: lower is better), in one statement."""
        source = _fts_source(where)
        selects, args = [], []
        for expr, window, scored in parts:
            cond = f"messages_fts MATCH ? AND {where}"
            edge = None
            if window and windowed:
                # with a filter, the window is the newest FILTERED_WINDOW matches, of which
                # only those passing the filter are read and scored (the caller widens to
                # every match when that leaves fewer than `limit`)
                size = BM25_WINDOW if where == "1" else FILTERED_WINDOW
                edge = self._reader.execute(
                    "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?", (expr, size)
                ).fetchone()
            if edge is not None:  # more matches than the window: the newest ones only
                cond += f" AND messages_fts.rowid > {int(edge[0])}"
            rank = f"bm25(messages_fts, 1.0, 0.5, 0.5, {CONTEXT_WEIGHT})" if scored else "-1e-6"
            order = "rank, messages_fts.rowid DESC" if scored else "messages_fts.rowid DESC"
            # rank and cut on (rowid, score) alone, then fetch the few rows kept: sorting whole
            # rows (content up to 16,000 characters) of every match made common words slow
            selects.append(f"SELECT * FROM (SELECT messages_fts.rowid AS rowid, {rank} AS rank FROM {source} WHERE {cond} ORDER BY {order} LIMIT ?)")
            args += [expr, *params, limit]
        best = f"SELECT rowid, min(rank) AS rank FROM ({' UNION ALL '.join(selects)}) GROUP BY rowid"
        sql = f"""SELECT {_M}, r.rank FROM ({best}) r JOIN messages m ON m.rowid = r.rowid
                  ORDER BY r.rank, r.rowid DESC LIMIT ?"""
        return self._reader.execute(sql, (*args, limit)).fetchall()

    def _doc_freqs(self, terms: list[str]) -> dict[str, int]:
        """Messages holding each term, counted up to half the index (more cannot matter:
        FTS5's BM25 gives such a term an IDF of ~0, clamped to 1e-6), or {} while the index
        is small enough to score every match. Counted once per term, recounted when the
        index has grown or shrunk by a tenth; a stale count only moves a term between the
        rare and common parts, which together always cover every match."""
        total = self._reader.execute("SELECT coalesce(max(rowid), 0) FROM messages").fetchone()[0]
        if total < 1000:
            return {}
        if not 0.9 * self._df_total <= total <= 1.1 * self._df_total:
            self._df_cache, self._df_total = {}, total
        sql = "SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?)"
        for term in terms:
            if term not in self._df_cache:
                self._df_cache[term] = self._reader.execute(sql, (_fts_phrase(term), self._df_total // 2 + 1)).fetchone()[0]
        return {t: self._df_cache[t] for t in terms}

    def compact_index(self, budget: int = 500) -> bool:
        # FTS5's 'merge' command: about `budget` pages of merging on levels holding at least
        # four segments (writers merge only at sixteen, migration 0014); it made changes,
        # counted as two or more, exactly when there was work to do
        with self._tx() as conn:
            before = conn.total_changes
            conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('merge', ?)", (budget,))
            if conn.total_changes - before >= 2:
                return True
        # Nothing left to merge: fold a large WAL back into the file. Pages still in the WAL
        # are read with read() through the page cache, not from the memory map, and after a
        # bulk load or a merge that is most of the index: keyword p95 6.9 ms folded against
        # 10.4 ms not, at 100,000 messages (bench/search.py). TRUNCATE waits for the readers
        # of older snapshots and holds off writers meanwhile, so it waits FOLD_WAIT_MS at
        # most (a long scan may be reading): busy, it is simply tried next time.
        wal = self.path.with_name(self.path.name + "-wal")
        if wal.exists() and wal.stat().st_size > WAL_FOLD_BYTES:
            with self._write_lock:
                self._writer.execute(f"PRAGMA busy_timeout = {FOLD_WAIT_MS}")
                try:
                    self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                finally:
                    self._writer.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return False

    def _catch_up_trigrams(self) -> None:
        """Bring the trigram index up to the newest message (migration 0009 says why)."""
        upto, newest = self._reader.execute("SELECT upto, (SELECT coalesce(max(rowid), 0) FROM messages) FROM trigram_cursor").fetchone()
        if newest <= upto:
            return
        with self._tx() as conn:
            upto = conn.execute("SELECT upto FROM trigram_cursor").fetchone()[0]
            conn.execute(f"INSERT INTO messages_tri (rowid, {_TRI_COLUMNS}) SELECT rowid, {_TRI_COLUMNS} FROM messages WHERE rowid > ?", (upto,))
            conn.execute("UPDATE trigram_cursor SET upto = (SELECT coalesce(max(rowid), 0) FROM messages)")

    def substring_search(self, fragment: str, filters: Filters, limit: int) -> list[Message]:
        where, params = self._where(filters)
        if len(fragment) >= 3:
            self._catch_up_trigrams()
            sql = f"""SELECT {_M} FROM messages_tri JOIN messages m ON m.rowid = messages_tri.rowid
                      WHERE messages_tri MATCH ? AND {where} ORDER BY m.created_at DESC LIMIT ?"""
            return [row_to_message(r) for r in self._reader.execute(sql, (_fts_phrase(fragment), *params, limit))]
        needle = fragment.lower()
        sql = f"""SELECT {_M} FROM messages m WHERE (instr(lower(m.content), ?) > 0 OR instr(lower(coalesce(m.tool_result, '')), ?) > 0)
                  AND {where} ORDER BY m.created_at DESC LIMIT ?"""
        return [row_to_message(r) for r in self._reader.execute(sql, (needle, needle, *params, limit))]

    def scan(self, filters: Filters, limit: int, after_rowid: int = 0) -> list[tuple[int, Message]]:
        where, params = self._where(filters)
        sql = f"SELECT m.rowid, {_M} FROM messages m WHERE m.rowid > ? AND {where} ORDER BY m.rowid LIMIT ?"
        return [(r[0], row_to_message(r[1:])) for r in self._reader.execute(sql, (after_rowid, *params, limit))]

    def touch(self, ids: list[str], at: str) -> None:
        if not ids:
            return
        with self._tx() as conn:
            conn.execute(
                "UPDATE messages SET access_count = access_count + 1, last_accessed_at = ? WHERE id IN (SELECT value FROM json_each(?))",
                (at, json.dumps(ids)),
            )

    def stats(self) -> dict[str, Any]:
        r = self._reader
        messages, oldest, newest = r.execute("SELECT count(*), min(created_at), max(created_at) FROM messages").fetchone()
        per_agent = {
            (a or ""): {"sessions": s, "messages": n}
            for a, s, n in r.execute(
                """SELECT s.agent, count(DISTINCT s.id), count(m.id) FROM sessions s
                   LEFT JOIN messages m ON m.session_id = s.id GROUP BY s.agent"""
            )
        }
        size = sum(os.path.getsize(p) for p in (self.path, Path(f"{self.path}-wal")) if os.path.exists(p))
        return {
            "backend": "sqlite",
            "sessions": r.execute("SELECT count(*) FROM sessions").fetchone()[0],
            "messages": messages,
            "truncated": r.execute("SELECT count(*) FROM messages WHERE truncated").fetchone()[0],
            "oldest": oldest,
            "newest": newest,
            "per_agent": per_agent,
            "database_bytes": size,
            "schema_version": self.schema_version(),
        }

    def reset(self) -> None:
        with self._tx() as conn:
            for table in ("vectors", "messages", "sessions", "journal_cursors", "jobs"):
                conn.execute(f"DELETE FROM {table}")
            conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
            conn.execute("INSERT INTO messages_tri(messages_tri) VALUES ('rebuild')")
            conn.execute("UPDATE trigram_cursor SET upto = 0")
        self._generation += 1

    # -- vectors -------------------------------------------------------------
    def put_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        if not rows:
            return
        dims = {v.shape[0] for _, v in rows}
        known = self.vector_models()
        for other, info in known.items():
            if other != model:
                from ..errors import ModelMismatch

                raise ModelMismatch(
                    f"the index holds vectors of {other!r}; refusing to mix in {model!r}. Run `palimpsest reindex` after a model change."
                )
            dims.add(info["dim"])
        if len(dims) != 1:
            raise InvalidInput(f"vectors of {model!r} must all have one dimension, got {sorted(dims)}")
        with self._tx() as conn:
            ids = json.dumps([i for i, _ in rows])
            rowids = dict(conn.execute("SELECT id, rowid FROM messages WHERE id IN (SELECT value FROM json_each(?))", (ids,)).fetchall())
            replaced = conn.execute("SELECT count(*) FROM vectors WHERE model = ? AND message_rowid IN (SELECT value FROM json_each(?))",
                                    (model, json.dumps(list(rowids.values())))).fetchone()[0]
            conn.executemany(
                # an upsert, not INSERT OR REPLACE: REPLACE deletes without firing the
                # delete trigger, which would leave vector_counts counting twice
                """INSERT INTO vectors (message_rowid, model, dim, vector) VALUES (?, ?, ?, ?)
                   ON CONFLICT(model, message_rowid) DO UPDATE SET dim = excluded.dim, vector = excluded.vector""",
                [(rowids[i], model, v.shape[0], np.asarray(v, dtype=np.float32).tobytes()) for i, v in rows if i in rowids],
            )
        if replaced:  # new vectors only are loaded incrementally (vectors.py); changed ones need a reload
            self._generation += 1

    def load_vectors(self, model: str, after_rowid: int) -> tuple[np.ndarray, np.ndarray, int, dict[str, list[str]]]:
        """(rowids, matrix) of stored vectors above `after_rowid`, the total count, and each
        row's session, role and time (what vector filters test, in memory)."""
        rows = self._reader.execute(
            """SELECT v.message_rowid, v.vector, m.session_id, coalesce(m.role, char(0)), m.created_at
               FROM vectors v JOIN messages m ON m.rowid = v.message_rowid
               WHERE v.model = ? AND v.message_rowid > ? ORDER BY v.message_rowid""", (model, after_rowid)
        ).fetchall()
        found = self._reader.execute("SELECT count FROM vector_counts WHERE model = ?", (model,)).fetchone()
        total = found[0] if found else 0
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32), total, {"session": [], "role": [], "created_at": []}
        rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        meta = {"session": [r[2] for r in rows], "role": [r[3] for r in rows], "created_at": [r[4] for r in rows]}
        return rowids, matrix, total, meta

    def sessions_matching(self, filters: Filters) -> list[str]:
        """Sessions passing the session-level filters (agent, channel, tag) of `filters`."""
        only = Filters(agent=filters.agent, channel=filters.channel, tag=filters.tag)
        where, params = self._where(only, alias="x")
        return [r[0] for r in self._reader.execute(f"SELECT x.session_id FROM (SELECT id AS session_id FROM sessions) x WHERE {where}", params)]

    def rowids_to_ids(self, rowids: list[int]) -> dict[int, str]:
        rows = self._reader.execute("SELECT rowid, id FROM messages WHERE rowid IN (SELECT value FROM json_each(?))", (json.dumps(rowids),))
        return dict(rows.fetchall())

    def vector_search(self, model: str, query: np.ndarray, filters: Filters, limit: int) -> list[tuple[str, float]]:
        return self._vectors.search(model, query, filters, limit)

    def get_vectors(self, model: str, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        rows = self._reader.execute(
            # CROSS JOIN: look the few ids up first, then each vector by its primary key
            # (a plain JOIN let the planner walk every vector of the model)
            """SELECT m.id, v.vector FROM messages m CROSS JOIN vectors v
               WHERE m.id IN (SELECT value FROM json_each(?)) AND v.model = ? AND v.message_rowid = m.rowid""",
            (json.dumps(ids), model),
        ).fetchall()
        return {i: np.frombuffer(b, dtype=np.float32) for i, b in rows}

    def vector_models(self) -> dict[str, dict[str, int]]:
        rows = self._reader.execute("SELECT model, dim, count FROM vector_counts ORDER BY model").fetchall()
        return {m: {"dim": d, "count": n} for m, d, n in rows}

    def messages_without_vectors(self, model: str, limit: int) -> list[Message]:
        sql = f"""SELECT {_M} FROM messages m WHERE NOT EXISTS
                  (SELECT 1 FROM vectors v WHERE v.model = ? AND v.message_rowid = m.rowid) ORDER BY m.rowid LIMIT ?"""
        return [row_to_message(r) for r in self._reader.execute(sql, (model, limit))]

    def drop_vectors(self, model: str | None = None) -> int:
        with self._tx() as conn:
            if model is None:
                n = conn.execute("DELETE FROM vectors").rowcount
            else:
                n = conn.execute("DELETE FROM vectors WHERE model = ?", (model,)).rowcount
        self._generation += 1
        return n

    @property
    def generation(self) -> tuple[int, int]:
        """Changes whenever vectors may have changed, in this process or another."""
        return self._generation, self._reader.execute("PRAGMA data_version").fetchone()[0]

    # -- jobs ----------------------------------------------------------------
    def enqueue(self, jobs: list[NewJob]) -> int:
        from ..records import iso, utcnow

        now = iso(utcnow())
        with self._tx() as conn:
            before = conn.total_changes
            conn.executemany(
                """INSERT OR IGNORE INTO jobs (task, payload, job_key, max_attempts, run_at, created_at)
                   VALUES (?, ?, ?, ?, ?, ?)""",
                [(j.task, json.dumps(j.payload), j.job_key, j.max_attempts, j.run_at or now, now) for j in jobs],
            )
            return conn.total_changes - before

    def claim_jobs(self, worker: str, tasks: list[str] | None, limit: int, now: str, stale_before: str) -> list[Job]:
        task_clause = "AND task IN (SELECT value FROM json_each(?))" if tasks else ""
        params: list[Any] = [now, stale_before] + ([json.dumps(tasks)] if tasks else []) + [limit]
        with self._tx() as conn:
            rows = conn.execute(
                f"""SELECT id FROM jobs WHERE ((state = 'queued' AND run_at <= ?) OR (state = 'running' AND locked_at < ?))
                    {task_clause} ORDER BY run_at, id LIMIT ?""",
                params,
            ).fetchall()
            ids = json.dumps([r[0] for r in rows])
            conn.execute(
                "UPDATE jobs SET state = 'running', locked_by = ?, locked_at = ?, attempts = attempts + 1 WHERE id IN (SELECT value FROM json_each(?))",
                (worker, now, ids),
            )
            claimed = conn.execute(f"SELECT {_JOB_COLUMNS} FROM jobs WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id", (ids,)).fetchall()
        return [_row_to_job(r) for r in claimed]

    def finish_job(self, job_id: int) -> None:
        with self._tx() as conn:
            conn.execute("UPDATE jobs SET state = 'done', locked_by = NULL, last_error = NULL WHERE id = ?", (job_id,))

    def fail_job(self, job_id: int, error: str, retry_at: str | None) -> None:
        with self._tx() as conn:
            conn.execute(
                """UPDATE jobs SET last_error = ?, locked_by = NULL, locked_at = NULL,
                   state = CASE WHEN ? IS NULL OR attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
                   run_at = coalesce(?, run_at) WHERE id = ?""",
                (error[:2000], retry_at, retry_at, job_id),
            )

    def job_status(self) -> dict[str, Any]:
        rows = self._reader.execute("SELECT task, state, count(*) FROM jobs GROUP BY task, state ORDER BY task, state").fetchall()
        counts: dict[str, dict[str, int]] = {}
        for task, state, n in rows:
            counts.setdefault(task, {})[state] = n
        errors = {
            task: err
            for task, err, _ in self._reader.execute(
                # the newest failure of each task (SQLite takes the other columns from the max row)
                "SELECT task, last_error, max(id) FROM jobs WHERE state = 'failed' AND last_error IS NOT NULL GROUP BY task"
            )
        }
        return {"tasks": counts, "sample_errors": errors}

    def retry_failed(self, task: str | None, error_like: str | None, dry_run: bool) -> int:
        # As on PostgreSQL: a failed job whose key is live again (re-enqueued since) stays
        # failed — requeueing it would break one live job per key; of several failed jobs
        # with one key, the newest is requeued.
        clauses = [
            "j.state = 'failed'",
            """(j.job_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs o WHERE o.job_key = j.job_key AND
               (o.state IN ('queued', 'running') OR (o.state = 'failed' AND o.id > j.id))))""",
        ]
        params: list[Any] = []
        if task:
            clauses.append("j.task = ?")
            params.append(task)
        if error_like:
            clauses.append("instr(j.last_error, ?) > 0")
            params.append(error_like)
        where = " AND ".join(clauses)
        with self._tx() as conn:
            if dry_run:
                return conn.execute(f"SELECT count(*) FROM jobs j WHERE {where}", params).fetchone()[0]
            from ..records import iso, utcnow

            return conn.execute(
                f"UPDATE jobs SET state = 'queued', attempts = 0, run_at = ? WHERE id IN (SELECT j.id FROM jobs j WHERE {where})",
                [iso(utcnow()), *params],
            ).rowcount


_JOB_COLUMNS = "id, task, payload, job_key, attempts, max_attempts, last_error, run_at, locked_by, locked_at, state"


def _row_to_job(r: tuple[Any, ...]) -> Job:
    return Job(id=r[0], task=r[1], payload=json.loads(r[2]), job_key=r[3], attempts=r[4], max_attempts=r[5],
               last_error=r[6], run_at=r[7], locked_by=r[8], locked_at=r[9], state=r[10])


def _row_to_session(row: tuple[Any, ...]) -> Session:
    return Session(id=row[0], key=row[1], agent=row[2], channel=row[3], title=row[4], kind=row[5],
                   settings=json.loads(row[6] or "{}"), created_at=row[7], updated_at=row[8])


def _split_sql(text: str) -> list[str]:
    """Statements of a migration file; triggers keep their inner semicolons."""
    statements, current = [], []
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
