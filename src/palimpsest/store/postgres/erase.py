"""Erasure on PostgreSQL: the shared statements (`store/sql/erase.py`); a row's tsvector goes with it.

A deleted row is a dead tuple until vacuumed: `pg_dump` never shows it, but the table's
files hold its bytes until then, so `scrub` vacuums the tables an erasure deletes from.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import psycopg

from ..sql.erase import SQLEraseMixin

_ERASED_FROM = ("messages", "sessions", "vectors", "summaries", "summary_sources", "summary_vectors", "tags", "tag_taxonomy",
                "jobs", "facts", "fact_attestations", "fact_links", "fact_vectors", "wiki_statements",
                "wiki_topics", "wiki_keys", "wiki_patches", "wiki_leaves", "wiki_mentions", "index_quarantine", "journal_cursors")


class PostgresEraseMixin(SQLEraseMixin):
    _bm25_cache: object
    _read: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]

    def _forget_cached(self) -> None:
        self._bm25_cache = None

    def scrub(self) -> None:
        with self._read() as conn:  # (an autocommit connection: VACUUM runs outside a transaction)
            conn.execute(f"VACUUM {', '.join(_ERASED_FROM)}")
