"""PostgreSQL's HNSW index: reset() drops it (a bulk load after a reset must not insert
into a graph row by row), and the build is sized to hold the graph in memory."""

from __future__ import annotations

import numpy as np

from palimpsest.records import Message, Session
from palimpsest.store import open_store
from palimpsest.store.postgres import _graph_mb


def _hnsw_indexes(store) -> list[str]:  # type: ignore[no-untyped-def]
    return [r[0] for r in store._all("SELECT indexname FROM pg_indexes WHERE tablename = 'vectors' AND indexname LIKE 'vectors_hnsw_%%'")]


def test_reset_drops_the_hnsw_index() -> None:
    from pg import fresh_database_url

    store = open_store(fresh_database_url())
    store.hnsw_threshold = 5  # type: ignore[attr-defined]
    try:
        store.upsert_session(Session(id="s1", created_at="2025-01-01T00:00:00.000000Z", updated_at="2025-01-01T00:00:00.000000Z"))
        msgs = [Message(id=f"evt_{i}", session="s1", role="user", content=f"m {i}", created_at="2025-01-01T00:00:00.000000Z",
                        event_key=f"k{i}") for i in range(8)]
        store.insert_messages("s1", msgs, None)
        rng = np.random.default_rng(1)
        store.put_vectors("m", [(m.id, rng.normal(size=8).astype(np.float32)) for m in msgs])
        assert _hnsw_indexes(store) == ["vectors_hnsw_8"]
        store.reset()
        assert _hnsw_indexes(store) == []
    finally:
        store.close()


def test_graph_memory_estimate_covers_the_vectors() -> None:
    # a million 384-d vectors: 1.5 GB of floats alone, plus neighbour lists
    assert 2_000 < _graph_mb(1_000_000, 384) < 4_000
    assert _graph_mb(0, 384) == 64
