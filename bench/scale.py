"""Scale benchmark: N messages with vectors in PostgreSQL and in SQLite.

    .venv/bin/python bench/scale.py [--backend postgres|sqlite|both] [--messages 1000000]
                                    [--url postgresql://…] [--queries 200] [--json]

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
"""

from __future__ import annotations

import argparse
import json
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


def ingest(store: Store, n: int, words: list[str], centres: np.ndarray) -> dict[str, float]:
    t_msg = t_vec = 0.0
    seen: set[str] = set()
    for by_session in batches(n, words, centres):
        for sid, rows in by_session.items():
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
    return {"messages_per_s": n / t_msg, "vectors_per_s": n / t_vec, "ingest_s": t_msg + t_vec}


def pct(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {"p50_ms": round(statistics.median(s), 2), "p95_ms": round(s[int(0.95 * (len(s) - 1))], 2)}


def timed(fn: Any, queries: list[Any]) -> tuple[dict[str, float], list[Any]]:
    fn(queries[0])  # warm up
    samples, results = [], []
    for q in queries:
        started = time.perf_counter()
        results.append(fn(q))
        samples.append((time.perf_counter() - started) * 1000)
    return pct(samples), results


def measure(url: str, home: Path, n: int, n_queries: int) -> dict[str, Any]:
    from palimpsest import search as _search

    words, centres = corpus(n)
    store = open_store(url)
    store.reset()
    out: dict[str, Any] = {"messages": n}
    bulk = hasattr(store, "build_vector_index")
    if bulk:  # PostgreSQL: load first, build the HNSW index once (as after a reindex)
        store.hnsw_threshold = 10**12  # type: ignore[attr-defined]
    out.update({k: round(v, 1) for k, v in ingest(store, n, words, centres).items()})
    if bulk:
        started = time.perf_counter()
        store.build_vector_index()  # type: ignore[attr-defined]
        out["hnsw_build_s"] = round(time.perf_counter() - started, 1)
    if url.startswith("postgresql"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
    rng = np.random.default_rng(3)
    # content words of middling frequency, as a question's words are once stop words are gone
    queries = [" ".join(words[int(j)] for j in rng.integers(50, 5000, int(rng.integers(2, 4)))) for _ in range(n_queries)]
    embedder = TopicEmbedder(centres)
    qvecs = [embedder.embed(q) for q in queries]
    f = Filters()
    out["keyword"], kw = timed(lambda q: _search.keyword(store, q, f, 50), queries)
    out["vector"], _ = timed(lambda v: store.vector_search(MODEL, v, f, 50), qvecs)
    out["vector_filtered"], _ = timed(lambda v: store.vector_search(MODEL, v, Filters(agent="agent1", role="user"), 50), qvecs)
    out["keyword_hits_mean"] = round(sum(len(r[0]) for r in kw) / len(kw), 1)
    memory = Memory(home, url, settings=Settings.load(env={}, embedder="hash"))
    memory.use_embedder(embedder)
    out["hybrid"], hybrid = timed(lambda q: memory.search(q, limit=10, touch=False), queries)
    out["hybrid_top10"] = [[h.message.id for h in r.hits] for r in hybrid]
    if hasattr(memory, "recall"):
        try:
            out["recall_block"], _ = timed(lambda q: memory.recall(f"s{0:06d}", q), queries[:50])
        except Exception as exc:  # noqa: BLE001 - the recall API may not be there yet
            out["recall_block"] = f"not measured: {exc}"
    out["database_bytes"] = store.stats()["database_bytes"]
    memory.close()
    store.close()
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
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="palimpsest-scale-"))
    results: dict[str, Any] = {}
    pgdata = ""
    try:
        if args.backend in ("sqlite", "both"):
            results["sqlite"] = measure(f"sqlite:///{tmp / 'sqlite' / 'palimpsest.db'}", tmp / "sqlite", args.messages, args.queries)
            print(_line("sqlite", results["sqlite"]), file=sys.stderr)
        if args.backend in ("postgres", "both"):
            server = args.url
            if not server:
                server, pgdata = start_postgres()
            import psycopg

            with psycopg.connect(server, autocommit=True) as conn:
                conn.execute("DROP DATABASE IF EXISTS palimpsest_scale WITH (FORCE)")
                conn.execute("CREATE DATABASE palimpsest_scale")
            url = server.rsplit("/", 1)[0] + "/palimpsest_scale"
            results["postgres"] = measure(url, tmp / "postgres", args.messages, args.queries)
            print(_line("postgres", results["postgres"]), file=sys.stderr)
        if len(results) == 2:
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
    return (f"{name}: {r['messages']:,} messages, {r['messages_per_s']:.0f} msg/s, {r['vectors_per_s']:.0f} vec/s; "
            f"keyword {r['keyword']}, vector {r['vector']}, filtered {r['vector_filtered']}, hybrid {r['hybrid']}; "
            f"{r['database_bytes'] / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
