"""Sessions, messages and journal cursors on PostgreSQL (keyword search: `keyword.py`).

Several servers may index the same session at once, so every writer of messages first
takes a transaction-level advisory lock on the session (`pg_advisory_xact_lock`) and then
inserts with `ON CONFLICT DO NOTHING`: the check-then-insert and the journal cursor it
advances never interleave with another writer's. Substring mode is `ILIKE` with `%`,
`_` and `\\` escaped, served by trigram (GIN) indexes.
"""

from __future__ import annotations

import json
from typing import Any

from ...records import Message, Session
from ..base import Filters
from ..sql.messages import MESSAGE_COLUMNS, SESSION_COLUMNS, M, SQLMessagesMixin
from .connection import PostgresConnection
from .rows import _clean, _like_pattern, _lock_session, _message_params, _row_to_message, _text, _ts, filter_sql

_DERIVED = ("vectors", "vector_counts", "messages", "sessions", "journal_cursors", "jobs", "index_quarantine")


class PostgresMessagesMixin(SQLMessagesMixin, PostgresConnection):
    # set by the store
    _bm25_cache: Any
    _filter_sql = staticmethod(filter_sql)
    _message = staticmethod(_row_to_message)

    # -- sessions ------------------------------------------------------------
    def upsert_session(self, s: Session) -> None:
        with self._tx() as conn:
            conn.execute(
                f"""INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
                ON CONFLICT (id) DO UPDATE SET
                  key = coalesce(excluded.key, sessions.key), agent = coalesce(excluded.agent, sessions.agent),
                  channel = coalesce(excluded.channel, sessions.channel), title = coalesce(excluded.title, sessions.title),
                  kind = excluded.kind,
                  settings = palimpsest_merge_patch(sessions.settings, excluded.settings),
                  created_at = least(sessions.created_at, excluded.created_at),
                  updated_at = greatest(sessions.updated_at, excluded.updated_at)""",
                (s.id, _text(s.key), _text(s.agent), _text(s.channel), _text(s.title), s.kind,
                 json.dumps(_clean(s.settings), ensure_ascii=False, allow_nan=False), s.created_at, s.updated_at),
            )

    def projects_of_folder(self, cwd: str) -> list[str]:
        sql = """SELECT settings->>'project' AS project FROM sessions
                 WHERE settings->>'cwd' = %s AND jsonb_typeof(settings->'project') = 'string'
                 GROUP BY project ORDER BY max(updated_at) DESC, project"""
        return [r[0] for r in self._all(sql, (_text(cwd),))]

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
        sql = f"""INSERT INTO messages ({MESSAGE_COLUMNS}) VALUES ({', '.join(['%s'] * 22)})
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

    def substring_search(self, fragment: str, filters: Filters, limit: int) -> list[Message]:
        where, params = filter_sql(filters)
        pattern = _like_pattern(_text(fragment) or "")
        sql = f"""SELECT {M} FROM messages m WHERE (m.content ILIKE %s OR m.tool_result ILIKE %s) AND {where}
                  ORDER BY m.created_at DESC, m.id DESC LIMIT %s"""
        return [_row_to_message(r) for r in self._all(sql, (pattern, pattern, *params, limit))]

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
        if getattr(self._local, "conn", None) is not None:
            # inside atomically() (a rebuild): DELETE, which readers read past until commit;
            # TRUNCATE and DROP INDEX would lock them out for the whole rebuild
            with self._tx() as conn:
                for table in _DERIVED:
                    conn.execute(f"DELETE FROM {table}")
            return
        with self._tx() as conn:
            conn.execute(f"TRUNCATE {', '.join(_DERIVED)} RESTART IDENTITY")
            # an HNSW index left on the empty table would make the next bulk load insert
            # into the graph row by row; it is rebuilt at the threshold (or build_vector_index)
            for (name,) in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'vectors' AND indexname LIKE 'vectors_hnsw_%%'"
            ).fetchall():
                conn.execute(f"DROP INDEX IF EXISTS {name}")
