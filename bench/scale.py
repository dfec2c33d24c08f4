"""Scale benchmark: N messages with vectors in PostgreSQL and in SQLite.

    .venv/bin/python bench/scale.py [--backend postgres|sqlite|both] [--messages 1000000]
                                    [--url postgresql://…] [--queries 200] [--json]
                                    [--sqlite-home DIR] [--keep] [--load-only]

Measures, per backend: index ingest rate (messages through `Store.insert_messages`, then
vectors through `put_vectors`; the journal is measured by bench/ingest.py), keyword /
vector / hybrid search p50 and p95 (hybrid is `Memory.search`, the full ranked path with
its query embedding), the recall block p95 when `Memory.recall` exists, and the database
size. Messages are synthetic: sessions of 200 turns, words drawn from a Zipf
distribution over a 20,000-word vocabulary (its top words act as stop words; queries are
2–3 words of middling frequency, ranks 50–5,000), vectors are 384-dimensional unit vectors around 2,000 topic centres, and the
query embedder returns a noisy topic centre (no model runs: the index is measured, not
the embedder). On PostgreSQL the vectors are loaded first and the HNSW index built once
afterwards (`hnsw_build_s`), as a bulk reindex would; incremental inserts into the graph
cost ~2.5 ms per vector here. Without `--url` a throwaway server is started with scripts/postgres.sh
(durable settings: fsync on) and stopped at the end.

Loading a million messages takes the better part of an hour, so a loaded store can be
kept and measured again after a code change: `--keep` leaves the SQLite database in
`--sqlite-home` (instead of a temporary folder) and the PostgreSQL database
`palimpsest_scale` on the `--url` server, and re-uses either when it already holds exactly
`--messages` messages with their vectors (anything else is reloaded from scratch);
`--load-only` stops after loading (and the index build).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from palimpsest import Memory, Settings
from palimpsest.embed import Embedder
from palimpsest.records import Message, Session, iso
from palimpsest.store import Filters, Store, open_store

DIM = 384
TOPICS = 2000
VOCAB = 20_000
MODEL = "bench-topics-384"
T0 = datetime(2025, 1, 1, tzinfo=UTC)


class TopicEmbedder(Embedder):
    """A query's vector: the centre of the topic its text hashes to, plus noise."""

    def __init__(self, centres: np.ndarray) -> None:
        self.centres = centres
        self.model_id = MODEL
        self.dim = DIM

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        out = []
        for t in texts:
            seed = zlib.crc32(t.encode())
            v = self.centres[seed % TOPICS] + np.random.default_rng(seed).normal(0, 0.02, DIM).astype(np.float32)
            out.append(v / np.linalg.norm(v))
        return np.asarray(out, dtype=np.float32)


def corpus(n: int, seed: int = 7) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}{chr(97 + i % 26)}" for i in range(VOCAB)]
    centres = rng.normal(0, 1, (TOPICS, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    return words, centres


def batches(n: int, words: list[str], centres: np.ndarray, size: int = 1000) -> Any:
    """(session, messages, vectors) in batches of `size`, sessions of 200 turns."""
    rng = np.random.default_rng(11)
    for start in range(0, n, size):
        count = min(size, n - start)
        lengths = rng.integers(5, 60, count)
        ids = rng.zipf(1.3, int(lengths.sum())) % VOCAB
        topics = rng.integers(0, TOPICS, count)
        vecs = centres[topics] + rng.normal(0, 0.05, (count, DIM)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        pos, by_session = 0, {}
        for k in range(count):
            i = start + k
            sid = f"s{i // 200:06d}"
            text = " ".join(words[j] for j in ids[pos:pos + lengths[k]])
            pos += lengths[k]
            m = Message(id=f"evt_{i:09d}", session=sid, role="user" if i % 2 else "assistant", content=text,
                        created_at=iso(T0 + timedelta(seconds=30 * i)), event_key=f"k{i}")
            by_session.setdefault(sid, []).append((m, vecs[k]))
        yield by_session


def ingest(store: Store, n: int, words: list[str], centres: np.ndarray, product_rows: int | None = None) -> dict[str, float]:
    """Load `n` messages; the first `product_rows` (all by default) through the store's own
    `insert_messages` / `put_vectors` (the rates reported), the rest, on PostgreSQL, with
    COPY (`bulk_copy_s`): the same rows, generated columns, indexes and triggers, without
    the per-statement cost, so that a million rows load in minutes on a shared machine."""
    t_msg = t_vec = t_bulk = 0.0
    seen: set[str] = set()
    done = 0
    product_rows = n if product_rows is None else product_rows
    for by_session in batches(n, words, centres):
        for sid, rows in by_session.items():
            if done >= product_rows:
                started = time.perf_counter()
                _copy_rows(store, sid, rows)
                t_bulk += time.perf_counter() - started
                continue
            done += len(rows)
            started = time.perf_counter()
            if sid not in seen:
                seen.add(sid)
                store.upsert_session(Session(id=sid, agent=f"agent{int(sid[1:]) % 4}", channel="bench",
                                             created_at=rows[0][0].created_at, updated_at=rows[-1][0].created_at))
            store.insert_messages(sid, [m for m, _ in rows], (len(rows), 0))
            t_msg += time.perf_counter() - started
            started = time.perf_counter()
            store.put_vectors(MODEL, [(m.id, v) for m, v in rows])
            t_vec += time.perf_counter() - started
    out = {"messages_per_s": done / t_msg, "vectors_per_s": done / t_vec, "ingest_s": t_msg + t_vec + t_bulk}
    if done < n:
        out.update({"product_path_rows": done, "bulk_copy_rows": n - done, "bulk_copy_s": t_bulk})
    return out


def _copy_rows(store: Store, sid: str, rows: list[tuple[Message, np.ndarray]]) -> None:
    """One session's messages and vectors into PostgreSQL with COPY (binary vectors)."""
    from palimpsest.store.postgres.rows import _message_params
    from palimpsest.store.sql.messages import MESSAGE_COLUMNS as _MESSAGE_COLUMNS

    session = Session(id=sid, agent=f"agent{int(sid[1:]) % 4}", channel="bench",
                      created_at=rows[0][0].created_at, updated_at=rows[-1][0].created_at)
    store.upsert_session(session)
    with store._tx() as conn:  # type: ignore[attr-defined]
        with conn.cursor().copy(f"COPY messages ({_MESSAGE_COLUMNS}) FROM STDIN") as cp:
            for m, _ in rows:
                cp.write_row(_message_params(m))
        rowids = dict(conn.execute("SELECT id, rowid FROM messages WHERE id = ANY(%s)", ([m.id for m, _ in rows],)).fetchall())
        with conn.cursor().copy("COPY vectors (message_rowid, model, dim, embedding) FROM STDIN WITH (FORMAT BINARY)") as cp:
            cp.set_types(["bigint", "text", "integer", "vector"])
            for m, v in rows:
                cp.write_row((rowids[m.id], MODEL, DIM, np.asarray(v, dtype=np.float32)))


def pct(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {"p50_ms": round(statistics.median(s), 2), "p95_ms": round(s[int(0.95 * (len(s) - 1))], 2)}


def timed(fn: Any, queries: list[Any]) -> tuple[dict[str, float], list[Any]]:
    started = time.perf_counter()
    fn(queries[0])  # warm up (caches, SQLite's in-memory HNSW graph): reported, not counted
    first = round((time.perf_counter() - started) * 1000, 1)
    samples, results = [], []
    for q in queries:
        started = time.perf_counter()
        results.append(fn(q))
        samples.append((time.perf_counter() - started) * 1000)
    return {**pct(samples), "first_ms": first}, results


def _warm_graph(store: Store, qvec: np.ndarray) -> float | None:
    """SQLite builds its HNSW graph in memory, on a background thread, at the first
    unfiltered vector query past its threshold (exact until then): start it and wait, so
    the timed queries are the steady state. The build's seconds (None: no graph here)."""
    cache = getattr(store, "_vectors", None)
    if cache is None or not hasattr(cache, "wait_for_graph"):
        return None
    if store.vector_models().get(MODEL, {}).get("count", 0) <= getattr(cache, "ann_threshold", 0):
        return None  # exact at this size: no graph
    started = time.perf_counter()
    store.vector_search(MODEL, qvec, Filters(), 10)
    if not cache.wait_for_graph(MODEL, 3600):
        return None
    return round(time.perf_counter() - started, 1)


def _loaded(store: Store, n: int) -> bool:
    """Whether `store` holds exactly the `n` messages of this corpus with their vectors."""
    return store.stats()["messages"] == n and store.vector_models().get(MODEL, {}).get("count") == n


def measure(url: str, home: Path, n: int, n_queries: int, reuse: bool = False, load_only: bool = False,
            product: int = 0) -> dict[str, Any]:
    from palimpsest import search as _search

    words, centres = corpus(n)
    store = open_store(url)
    out: dict[str, Any] = {"messages": n}
    bulk = hasattr(store, "build_vector_index")
    if reuse and _loaded(store, n):
        out["reused"] = True
        print(f"{url.split(':')[0]}: re-using the loaded store ({n:,} messages with vectors)", file=sys.stderr)
        if bulk:  # a load that stopped before its index build finishes it now
            store.build_vector_index()  # type: ignore[attr-defined]
    else:
        store.reset()
        if bulk:  # PostgreSQL: load first, build the HNSW index once (as after a reindex)
            store.hnsw_threshold = 10**12  # type: ignore[attr-defined]
            # the server runs on this machine: one worker per other core, plus the leader
            store.index_build_workers = max(1, (os.cpu_count() or 2) - 1)  # type: ignore[attr-defined]
        product_rows = min(n, product) if bulk and product else None
        out.update({k: round(v, 1) for k, v in ingest(store, n, words, centres, product_rows).items()})
        print(f"{url.split(':')[0]}: loaded {out}", file=sys.stderr)
        if bulk:
            started = time.perf_counter()
            store.build_vector_index()  # type: ignore[attr-defined]
            out["hnsw_build_s"] = round(time.perf_counter() - started, 1)
            print(f"postgresql: HNSW build {out['hnsw_build_s']} s", file=sys.stderr)
        if url.startswith("postgresql"):
            import psycopg

            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("VACUUM ANALYZE")
    if load_only:
        out["database_bytes"] = store.stats()["database_bytes"]
        store.close()
        return out
    rng = np.random.default_rng(3)
    # content words of middling frequency, as a question's words are once stop words are gone
    queries = [" ".join(words[int(j)] for j in rng.integers(50, 5000, int(rng.integers(2, 4)))) for _ in range(n_queries)]
    embedder = TopicEmbedder(centres)
    qvecs = [embedder.embed(q) for q in queries]
    f = Filters()
    out["ann_graph_s"] = _warm_graph(store, qvecs[0])
    out["keyword"], kw = timed(lambda q: _search.keyword(store, q, f, 50), queries)
    out["vector"], _ = timed(lambda v: store.vector_search(MODEL, v, f, 50), qvecs)
    out["vector_filtered"], _ = timed(lambda v: store.vector_search(MODEL, v, Filters(agent="agent1", role="user"), 50), qvecs)
    out["keyword_hits_mean"] = round(sum(len(r[0]) for r in kw) / len(kw), 1)
    out["database_bytes"] = store.stats()["database_bytes"]
    # closed first: on SQLite a second open store holds a second copy of the vectors and of
    # the HNSW graph (1.5 GB + its graph at 1M), which once pushed the hybrid p95 from ~15 to 207 ms
    store.close()
    memory = Memory(home, url, settings=Settings.load(env={}, embedder="hash"))
    memory.use_embedder(embedder)
    _warm_graph(memory.store, qvecs[0])  # its own store: its own graph
    out["hybrid"], hybrid = timed(lambda q: memory.search(q, limit=10, touch=False), queries)
    out["hybrid_top10"] = [[h.message.id for h in r.hits] for r in hybrid]
    if hasattr(memory, "recall"):
        try:
            out["recall_block"], _ = timed(lambda q: memory.recall(f"s{0:06d}", q), queries[:50])
        except Exception as exc:
            out["recall_block"] = f"not measured: {exc}"
    memory.close()
    return out


def start_postgres() -> tuple[str, str]:
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "start"], check=True, capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    pgdata = next(ln.split("=", 1)[1] for ln in lines if ln.startswith("PGDATA="))
    return lines[-1], pgdata


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=["postgres", "sqlite", "both"], default="both")
    p.add_argument("--messages", type=int, default=1_000_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--url", help="PostgreSQL server URL (a database `palimpsest_scale` is created on it)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--sqlite-home", type=Path, help="folder of the SQLite store (default: a temporary one, removed)")
    p.add_argument("--keep", action="store_true",
                   help="keep the loaded stores and re-use them when they already hold --messages messages")
    p.add_argument("--load-only", action="store_true", help="load (and build indexes), measure nothing")
    p.add_argument("--copy-after", type=int, default=0, metavar="N",
                   help="PostgreSQL: load the first N messages through the store (the ingest rates), the rest with COPY")
    args = p.parse_args()
    if args.keep and args.backend in ("postgres", "both") and not args.url:
        p.error("--keep needs --url: a throwaway server is removed at the end")
    tmp = Path(tempfile.mkdtemp(prefix="palimpsest-scale-"))
    results: dict[str, Any] = {}
    pgdata = ""
    try:
        if args.backend in ("sqlite", "both"):
            home = args.sqlite_home or tmp / "sqlite"
            home.mkdir(parents=True, exist_ok=True)
            results["sqlite"] = measure(f"sqlite:///{home / 'palimpsest.db'}", home, args.messages, args.queries,
                                        args.keep, args.load_only)
            print(_line("sqlite", results["sqlite"]), file=sys.stderr)
        if args.backend in ("postgres", "both"):
            server = args.url
            if not server:
                server, pgdata = start_postgres()
            import psycopg

            with psycopg.connect(server, autocommit=True) as conn:
                exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = 'palimpsest_scale'").fetchone()
                if not (args.keep and exists):
                    conn.execute("DROP DATABASE IF EXISTS palimpsest_scale WITH (FORCE)")
                    conn.execute("CREATE DATABASE palimpsest_scale")
            url = server.rsplit("/", 1)[0] + "/palimpsest_scale"
            results["postgres"] = measure(url, tmp / "postgres", args.messages, args.queries, args.keep, args.load_only,
                                          args.copy_after)
            print(_line("postgres", results["postgres"]), file=sys.stderr)
        if len(results) == 2 and all("hybrid_top10" in r for r in results.values()):
            a, b = results["sqlite"]["hybrid_top10"], results["postgres"]["hybrid_top10"]
            overlap = [len(set(x) & set(y)) / max(1, len(x), len(y)) for x, y in zip(a, b)]
            results["top10_overlap"] = round(sum(overlap) / len(overlap), 3)
            print(f"hybrid top-10 overlap sqlite vs postgres: {results['top10_overlap']}", file=sys.stderr)
    finally:
        if pgdata:
            subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "stop", pgdata], check=False, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    for r in results.values():
        if isinstance(r, dict):
            r.pop("hybrid_top10", None)
    print(json.dumps(results) if args.json else json.dumps(results, indent=2))


def _line(name: str, r: dict[str, Any]) -> str:
    if "keyword" not in r:
        return f"{name}: {r}"
    if "messages_per_s" not in r:
        return (f"{name}: {r['messages']:,} messages (re-used); keyword {r['keyword']}, vector {r['vector']}, "
                f"filtered {r['vector_filtered']}, hybrid {r['hybrid']}, recall {r.get('recall_block')}; "
                f"{r['database_bytes'] / 1e6:.0f} MB")
    return (f"{name}: {r['messages']:,} messages, {r['messages_per_s']:.0f} msg/s, {r['vectors_per_s']:.0f} vec/s; "
            f"keyword {r['keyword']}, vector {r['vector']}, filtered {r['vector_filtered']}, hybrid {r['hybrid']}; "
            f"{r['database_bytes'] / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
