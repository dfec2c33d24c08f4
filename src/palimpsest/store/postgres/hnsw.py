"""Building pgvector HNSW indexes, shared by message vectors and document chunks.

Both tables keep vectors in a dimensionless `vector` column with a `dim` column beside
it, so an index is partial and on an expression: `(embedding::vector(dim)) WHERE dim = d`,
one per dimension in use, and a query must spell the same expression to use it.

pgvector builds a graph many times faster while it fits in `maintenance_work_mem` (past
it, it flushes and goes on inserting on disk, with a NOTICE "hnsw graph no longer fits into
maintenance_work_mem"), and in parallel with `max_parallel_maintenance_workers` workers
plus the leader (pgvector's README suggests 8GB and 7 workers). So the building
transaction raises the first to the graph's estimated size, never above a ceiling and
never below the server's own setting, and the second to the store's worker count
(PostgreSQL caps it by `max_parallel_workers` and the table's size).
"""

from __future__ import annotations

from typing import Any

import psycopg

BUILD_MEMORY_MB = 8192  # ceiling of maintenance_work_mem for a build (pgvector's README: '8GB')
BUILD_WORKERS = 7  # max_parallel_maintenance_workers for it (pgvector's README: 7, plus the leader)


def graph_mb(rows: int, dim: int) -> int:
    """Estimated memory of pgvector's in-memory HNSW graph (m = 16): per row the vector
    (4·dim + 8 bytes), the element header (~100 bytes) and its neighbour lists (2·m at
    layer 0, m per upper layer, ~16 bytes each: ~600 bytes), with 25 % headroom."""
    return int(rows * (4 * dim + 8 + 100 + 600) * 1.25 / 1048576) + 64


def index_exists(conn: psycopg.Connection[Any], table: str, name: str) -> bool:
    return conn.execute("SELECT 1 FROM pg_indexes WHERE tablename = %s AND indexname = %s", (table, name)).fetchone() is not None


def build_hnsw(conn: psycopg.Connection[Any], table: str, name: str, dim: int, rows: int,
               memory_cap_mb: int = BUILD_MEMORY_MB, workers: int = BUILD_WORKERS) -> None:
    """`CREATE INDEX IF NOT EXISTS name` (cosine HNSW over the rows of `dim`), in the
    caller's transaction, with the build settings set for that transaction only."""
    current_mb = conn.execute("SELECT pg_size_bytes(current_setting('maintenance_work_mem')) / 1048576").fetchone()[0]  # type: ignore[index]
    memory_mb = max(int(current_mb), min(graph_mb(rows, dim), memory_cap_mb))
    conn.execute(f"SET LOCAL maintenance_work_mem = '{memory_mb}MB'")
    conn.execute(f"SET LOCAL max_parallel_maintenance_workers = {max(0, int(workers))}")
    conn.execute(f"""CREATE INDEX IF NOT EXISTS {name} ON {table}
                     USING hnsw ((embedding::vector({int(dim)})) vector_cosine_ops) WHERE dim = {int(dim)}""")
