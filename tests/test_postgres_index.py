"""PostgreSQL's HNSW index: reset() drops it (a bulk load after a reset must not insert
into a graph row by row), and the build is sized to hold the graph in memory."""

from __future__ import annotations

import numpy as np

from palimpsest.records import Message, Session
from palimpsest.store import open_store
from palimpsest.store.postgres.hnsw import graph_mb as _graph_mb


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


def test_chunk_vectors_get_an_hnsw_index_and_filtered_search_stays_exact_enough(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Past the threshold the chunks of a dimension get an HNSW index; a query over more
    chunks than the exact limit walks it (with the vault filter applied inside the scan)
    and finds what the exact scan finds."""
    import palimpsest.store.postgres.documents as docs
    from palimpsest.store.documents_base import OWNER, ChunkQuery, ChunkRow, DocumentRow, VaultChange, VaultRow
    from pg import fresh_database_url

    store = open_store(fresh_database_url())
    store.hnsw_threshold = 50  # type: ignore[attr-defined]
    rng = np.random.default_rng(3)
    vectors = {}
    try:
        for vault in ("a", "b"):
            store.apply_vault_change(VaultChange(f"op-{vault}", VaultRow(vault, "semantic", None, "public", [], None,
                                                                         "2025-01-01T00:00:00.000000Z")))
            for d in range(6):
                chunks = []
                for k in range(10):
                    v = rng.normal(size=8).astype(np.float32)
                    v /= np.linalg.norm(v)
                    cid = f"{vault}{d}-{k}"
                    vectors[cid] = (vault, v)
                    chunks.append(ChunkRow(cid, vault, f"d{d}.md", k, "", f"text {cid}", 3, vector=v))
                store.replace_document(DocumentRow(vault, f"d{d}.md", "x", 0.0, 1, "2025-01-01T00:00:00.000000Z"), chunks, "m8")
        assert store._all("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'document_chunks_hnsw_%%'") == [("document_chunks_hnsw_8",)]
        monkeypatch.setattr(docs, "_CHUNK_EXACT_MAX", 10)  # 60 and 120 chunks: both through the index
        q = rng.normal(size=8).astype(np.float32)
        q /= np.linalg.norm(q)
        for names in (None, ["b"]):
            got = [i for i, _ in store.chunk_vector_search("m8", q, ChunkQuery(OWNER, names), 5)]
            pool = {i: v for i, (vault, v) in vectors.items() if names is None or vault in names}
            exact = sorted(pool, key=lambda i: -float(pool[i] @ q))[:5]
            assert len(got) == 5 and all(i in pool for i in got)
            assert len(set(got) & set(exact)) >= 4
    finally:
        store.close()
