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

__all__ = ["Filters", "Job", "NewJob", "Quarantined", "Store", "exists", "fingerprint", "open_store", "set_aside"]


def fingerprint(url: str) -> str:
    """A short, stable name of the database `url` points at, without its password: the file
    for SQLite, host, port, database and user for PostgreSQL. Two processes whose fingerprints
    match share one job queue (a CLI asks a running server's, `/healthz`, before leaving it its
    jobs); one database reached by two names fingerprints twice, which costs work done here and
    a CLI's line saying the server names another store (`cli.common.say_whose`)."""
    import hashlib
    import os
    from urllib.parse import urlsplit

    if url.startswith("sqlite:///"):
        where = "sqlite:" + os.path.realpath(url[len("sqlite:///"):].split("?")[0])
    else:
        parts = urlsplit(url)
        where = f"pg:{parts.hostname or ''}:{parts.port or 5432}{parts.path}:{parts.username or ''}"
    return hashlib.sha256(where.encode()).hexdigest()[:16]


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


def exists(url: str) -> bool:
    """Whether the store at `url` was made already: opening a SQLite URL creates its file (`doctor`
    must not), opening a PostgreSQL one creates no database."""
    if not url.startswith("sqlite:///"):
        return True
    from pathlib import Path

    return Path(url[len("sqlite:///"):].split("?")[0]).exists()


def set_aside(url: str) -> str | None:
    """Move a damaged index file out of the way (`<file>.corrupt-<UTC time>`, with its WAL
    and shared-memory files) so a new one can be built from the journals; its path, or None
    for a backend without such a file (PostgreSQL repairs itself by its own means)."""
    if not url.startswith("sqlite:///"):
        return None
    import os
    import time
    from pathlib import Path

    path = Path(url[len("sqlite:///"):])
    if not path.exists():
        return None
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}")
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{path}{suffix}").exists():
            os.replace(f"{path}{suffix}", f"{aside}{suffix}")
    return str(aside)
