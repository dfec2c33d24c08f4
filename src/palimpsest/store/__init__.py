"""Index databases. `open_store(url)` picks the backend from the URL's scheme.

`base.py` is the Store contract, with one `*_base.py` per part (rows and contract:
facts, summaries, documents, tags, wiki). `sql/` holds the SQL both backends share,
written once over a dialect; `sqlite/` and `postgres/` each compose a store from one
mixin per concern (connection and migrations, messages, keyword search, vectors, jobs,
summaries, facts, documents); `migrations/` the numbered SQL files of each.
"""

from __future__ import annotations

from ..errors import InvalidInput
from .base import Filters, Job, NewJob, Quarantined, Store

__all__ = ["Filters", "Job", "NewJob", "Quarantined", "Store", "open_store"]


def open_store(url: str, ann_threshold: int | None = None) -> Store:
    """Open (and migrate) the store at `url`: `sqlite:///path` or `postgresql://…`.
    `ann_threshold`: vectors past which the embedded backend's unfiltered vector search
    uses its HNSW graph (PostgreSQL's pgvector index has its own threshold)."""
    if url.startswith("sqlite:///"):
        from .sqlite import SQLiteStore

        return SQLiteStore(url) if ann_threshold is None else SQLiteStore(url, ann_threshold=ann_threshold)
    if url.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStore

        return PostgresStore(url)
    raise InvalidInput(f"unknown store URL {url!r}: use sqlite:///PATH or postgresql://…")
