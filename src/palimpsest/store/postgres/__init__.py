"""The scale-out backend: PostgreSQL with pgvector, shared by many writers and workers.

`PostgresStore` is composed of one mixin per concern: `connection` (pool, errors,
migrations, extensions, advisory locks), `messages` (sessions, messages, journal cursors,
substring search), `keyword` (BM25 over a tsvector), `vectors` with `hnsw` (pgvector and
its partial HNSW indexes), `jobs` (claimed with `FOR UPDATE SKIP LOCKED`), and the
summaries, facts and documents parts; tags and wiki run the SQL both backends share
(`store/sql/`).

Times are `timestamptz` in the database and ISO strings (`…Z`, microseconds) on the
contract surface, exactly as in SQLite.
"""

from __future__ import annotations

import threading

from psycopg_pool import ConnectionPool, PoolTimeout

from ...errors import StoreUnavailable
from ..base import Store
from ..sql.quarantine import SQLQuarantineMixin
from ..sql.tags import SQLTagsMixin
from ..sql.wiki import SQLWikiMixin
from .connection import _CONNECT_ATTEMPTS, _POOL_TIMEOUT_S, _RECONNECT_S, _redact, create_extension
from .documents import PostgresDocumentsMixin
from .erase import PostgresEraseMixin
from .facts import PostgresFactsMixin
from .hnsw import BUILD_MEMORY_MB, BUILD_WORKERS
from .jobs import PostgresJobsMixin
from .keyword import PostgresKeywordMixin, _Bm25Stats
from .messages import PostgresMessagesMixin
from .summaries import PostgresSummariesMixin
from .vectors import PostgresVectorsMixin

__all__ = ["PostgresStore", "create_extension"]


class PostgresStore(PostgresMessagesMixin, PostgresKeywordMixin, PostgresVectorsMixin, PostgresJobsMixin,
                    PostgresSummariesMixin, PostgresFactsMixin, PostgresDocumentsMixin, SQLTagsMixin, SQLWikiMixin, SQLQuarantineMixin, PostgresEraseMixin, Store):
    def __init__(self, url: str, pool_size: int = 10, connect_attempts: int = _CONNECT_ATTEMPTS,
                 hnsw_threshold: int = 10_000, index_build_memory_mb: int = BUILD_MEMORY_MB,
                 index_build_workers: int = BUILD_WORKERS) -> None:
        self.url = url
        self._local = threading.local()
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
            reconnect_timeout=_RECONNECT_S,
        )
        try:
            self._pool.open(wait=True, timeout=15)
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreUnavailable(f"cannot open a connection pool to PostgreSQL at {_redact(url)}: {exc}") from exc
