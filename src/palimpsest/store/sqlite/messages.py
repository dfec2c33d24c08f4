"""Sessions, messages and journal cursors on SQLite (keyword search: `keyword.py`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ...records import Message, Session
from ..sql.messages import MESSAGE_COLUMNS, SQLMessagesMixin
from .connection import SQLiteConnection
from .rows import _FTS_COLUMNS, filter_sql, message_params, row_to_message


class SQLiteMessagesMixin(SQLMessagesMixin, SQLiteConnection):
    # set by the store
    _generation: int
    _filter_sql = staticmethod(filter_sql)
    _message = staticmethod(row_to_message)

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
                (s.id, s.key, s.agent, s.channel, s.title, s.kind, json.dumps(s.settings, allow_nan=False), s.created_at, s.updated_at),
            )

    def projects_of_folder(self, cwd: str) -> list[str]:
        sql = """SELECT json_extract(settings, '$.project') AS project FROM sessions
                 WHERE json_extract(settings, '$.cwd') = ? AND json_type(settings, '$.project') = 'text'
                 GROUP BY project ORDER BY max(updated_at) DESC, project"""
        return [r[0] for r in self._reader.execute(sql, (cwd,))]

    def idle_instant_sessions(self, idle_before: str) -> list[str]:
        sql = """SELECT s.id FROM sessions s WHERE s.kind = 'instant' AND s.updated_at < ?
                 AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)"""
        return [r[0] for r in self._reader.execute(sql, (idle_before,))]

    def drop_session_index(self, session_id: str) -> int:
        with self._tx() as conn:
            n = conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,)).rowcount
        self._generation += 1
        return n

    def insert_messages(self, session_id: str, messages: list[Message], cursor: tuple[int, int] | None,
                        journal: str = "") -> list[str]:
        with self._tx() as conn:
            # New rows get rowids above the current maximum (no AUTOINCREMENT, one writer in
            # the transaction), so "rowid > before" is exactly this batch's inserted rows.
            before = conn.execute("SELECT coalesce(max(rowid), 0) FROM messages").fetchone()[0]
            # ON CONFLICT DO NOTHING skips only duplicates; INSERT OR IGNORE also dropped rows
            # that broke a NOT NULL rule, silently, where PostgreSQL raises
            sql = f"INSERT INTO messages ({MESSAGE_COLUMNS}) VALUES ({', '.join('?' * 22)}) ON CONFLICT DO NOTHING"
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
            for table in ("vectors", "messages", "sessions", "journal_cursors", "jobs", "index_quarantine"):
                conn.execute(f"DELETE FROM {table}")
            conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
            conn.execute("INSERT INTO messages_tri(messages_tri) VALUES ('rebuild')")
            conn.execute("UPDATE trigram_cursor SET upto = 0")
        self._generation += 1
