"""Erasure on SQLite: the shared statements (`store/sql/erase.py`) plus what FTS5 and the file need.

The full-text tables hold their rows' words apart from the rows (external content), so a
deleted summary or fact is taken out of them with its old text; and a deleted row's bytes
stay in the file's free pages (and the full-text index's old segments) until they are
written over, so `scrub` merges the full-text segments and rewrites the file: after
`palimpsest erase`, a `grep` of the database file no longer finds the words (tested).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from ..sql.dialect import Runner
from ..sql.erase import SQLEraseMixin

_FULL_TEXT = ("messages_fts", "messages_tri", "summaries_fts", "facts_fts")


class SQLiteEraseMixin(SQLEraseMixin):
    _generation: int
    _write_lock: threading.RLock
    _writer: sqlite3.Connection
    _tx: Callable[[], AbstractContextManager[sqlite3.Connection]]

    def _unindex_summaries(self, run: Runner, where: str, param: Any) -> None:
        run(f"INSERT INTO summaries_fts (summaries_fts, rowid, content) SELECT 'delete', rowid, content FROM summaries WHERE {where}",
            (param,))

    def _unindex_facts(self, run: Runner, where: str, param: Any) -> None:
        run(f"""INSERT INTO facts_fts (facts_fts, rowid, text, entities, keywords)
                SELECT 'delete', rowid, text, entities, keywords FROM facts WHERE {where}""", (param,))
        run(f"DELETE FROM fact_entities WHERE fact_rowid IN (SELECT rowid FROM facts WHERE {where})", (param,))

    def _forget_cached(self) -> None:
        self._generation += 1

    def scrub(self) -> None:
        with self._tx() as conn:
            for table in _FULL_TEXT:
                conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
        with self._write_lock:
            self._writer.execute("VACUUM")
            self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
