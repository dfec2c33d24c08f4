"""The embedded backend: one SQLite file in WAL mode, one writer, many readers.

`SQLiteStore` is composed of one mixin per concern: `connection` (connections,
transactions, migrations, cross-process locks), `messages` (sessions, messages, journal
cursors), `keyword` (FTS5 BM25, trigram substring search, compaction), `vectors` with
`ann` (exact cosine in numpy, HNSW above a size), `jobs`, and the summaries, facts and
documents parts; tags and wiki run the SQL both backends share (`store/sql/`).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from ...errors import StoreUnavailable
from ..base import Store
from ..sql.quarantine import SQLQuarantineMixin
from ..sql.tags import SQLTagsMixin
from ..sql.wiki import SQLWikiMixin
from .ann import ANN_THRESHOLD, VectorCache
from .connection import translated, use_wal
from .documents import SQLiteDocumentsMixin
from .erase import SQLiteEraseMixin
from .facts import SQLiteFactsMixin
from .jobs import SQLiteJobsMixin
from .keyword import SQLiteKeywordMixin
from .messages import SQLiteMessagesMixin
from .summaries import SQLiteSummariesMixin
from .vectors import SQLiteVectorsMixin

__all__ = ["SQLiteStore", "use_wal"]


class SQLiteStore(SQLiteMessagesMixin, SQLiteKeywordMixin, SQLiteVectorsMixin, SQLiteJobsMixin,
                  SQLiteSummariesMixin, SQLiteFactsMixin, SQLiteDocumentsMixin, SQLTagsMixin, SQLWikiMixin, SQLQuarantineMixin, SQLiteEraseMixin, Store):
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
            with translated(self.path):
                self._writer = self._connect()
            self._migrate()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"cannot open SQLite database {self.path}: {exc}") from exc
        except OSError as exc:
            raise StoreUnavailable(f"cannot open SQLite database {self.path}: {exc.strerror}") from exc
        self._vectors = VectorCache(self, ann_threshold)
