"""Vector search for the embedded backend: exact cosine in numpy, HNSW above a size.

Vectors are unit length, so cosine is a dot product. The matrix of each model is cached
in memory and extended incrementally as new vectors arrive (rows are appended in rowid
order); a deletion or a change made by another process reloads it. Filters are applied
before ranking, so a rare filter is never crowded out by a global top-k: each cached row
also keeps its message's session, role and time (none of which ever changes once
indexed), so a filter is a numpy mask — agent, channel and tag filters first become the
set of sessions passing them. (Fetching the allowed rowids with SQL on every query took
longer than the dot products: ~40k rowids for a role filter at 100k messages.)

Above `ann_threshold` vectors (the setting, default 50,000), an HNSW graph (usearch)
answers unfiltered queries; exact search over 100k × 384 float32 takes ~8–11 ms here (it
is bound by memory bandwidth) against well under 1 ms for the graph, whose recall@10 is
0.998 on 40k real MiniLM vectors (the LoCoMo and LongMemEval dev turns; random vectors,
which have no neighbourhoods, get ~0.5) — and in bench/search.py at 100k the unfiltered
queries were most of the hybrid p95. Exact search is kept below the threshold (small memories are exact) and always when
a filter is given (HNSW with a post-filter would miss rare matches). The graph is built on
the first such query and new vectors are added to it as they are loaded; only a deletion
or a replaced vector rebuilds it. A filter that keeps under a quarter of the rows scores
those rows alone.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Protocol

import numpy as np

from ..base import Filters

log = logging.getLogger(__name__)
ANN_THRESHOLD = 50_000  # the `ann_threshold` setting's default
# usearch's build-time beam (default 128): on 40k real MiniLM vectors (the LoCoMo and
# LongMemEval dev turns) 64 builds in 10.5 s instead of 18.8 s, recall@10 0.998 vs 0.999
GRAPH_EXPANSION_ADD = 64
SUBSET_SHARE = 4  # a filter keeping under a quarter of the rows scores only those


class VectorSource(Protocol):
    """What the cache reads from the store (`vectors.SQLiteVectorsMixin`)."""

    @property
    def generation(self) -> tuple[int, int]: ...

    def load_vectors(self, model: str, after_rowid: int) -> tuple[np.ndarray, np.ndarray, int, dict[str, list[str]]]: ...

    def sessions_matching(self, filters: Filters) -> list[str]: ...

    def rowids_to_ids(self, rowids: list[int]) -> dict[int, str]: ...


class VectorCache:
    def __init__(self, store: VectorSource, ann_threshold: int = ANN_THRESHOLD) -> None:
        self.store = store
        self.ann_threshold = ann_threshold
        self._lock = threading.Lock()
        self._models: dict[str, dict[str, Any]] = {}

    def _load(self, model: str) -> dict[str, Any]:
        gen = self.store.generation
        entry = self._models.get(model)
        if entry is not None and entry["gen"] == gen:
            return entry
        if entry is None or entry["gen"][0] != gen[0]:
            entry = _empty(gen)
        rowids, matrix, total, meta = self.store.load_vectors(model, int(entry["rowids"][-1]) if len(entry["rowids"]) else 0)
        if len(rowids):
            _extend(entry, rowids, matrix, meta)
        if len(entry["rowids"]) != total:  # something was deleted or replaced elsewhere: start over
            entry = _empty(gen)
            rowids, matrix, total, meta = self.store.load_vectors(model, 0)
            if len(rowids):
                _extend(entry, rowids, matrix, meta)
        entry["gen"] = gen
        self._models[model] = entry
        return entry

    def search(self, model: str, query: np.ndarray, filters: Filters, limit: int) -> list[tuple[str, float]]:
        with self._lock:
            entry = self._load(model)
        matrix = entry["matrix"]
        if matrix is None or not len(entry["rowids"]):
            return []
        mask = None if filters == Filters() else self._mask(entry, filters)
        graph = self._graph(entry) if mask is None and len(entry["rowids"]) > self.ann_threshold else None
        if graph is not None:
            found = graph.search(query.astype(np.float32), limit)
            pairs = [(int(k), 1.0 - float(d)) for k, d in zip(found.keys, found.distances)]
        else:
            # einsum, not `@`: a matrix-vector product gains nothing from BLAS threads, and on a
            # busy machine their hand-offs made it 5× slower (10 ms vs 2 ms at 10k × 384)
            q = query.astype(np.float32)
            rows = None if mask is None else np.flatnonzero(mask)
            if mask is not None and rows is not None and len(rows) * SUBSET_SHARE < len(mask):
                # a selective filter: score only its rows (copying a few rows is cheaper
                # than multiplying them all: the product is bound by memory bandwidth)
                scores = np.einsum("ij,j->i", matrix[rows], q)
            else:
                scores = np.einsum("ij,j->i", matrix, q)
                if mask is not None:
                    scores = np.where(mask, scores, -np.inf)
                rows = None
            k = min(limit, len(scores))
            if k == 0:
                return []
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top])]
            index = entry["rowids"] if rows is None else entry["rowids"][rows]
            pairs = [(int(index[i]), float(scores[i])) for i in top if np.isfinite(scores[i])]
        names = self.store.rowids_to_ids([r for r, _ in pairs])
        return [(names[r], s) for r, s in pairs if r in names]

    def _mask(self, entry: dict[str, Any], f: Filters) -> np.ndarray:
        """Which cached rows pass the filters (the same rules as the SQL `_where`)."""
        mask = np.ones(len(entry["rowids"]), dtype=bool)
        codes = entry["session_codes"]
        sessions: set[str] | None = None
        if f.session is not None:
            sessions = {f.session}
        if f.sessions is not None:
            sessions = set(f.sessions) if sessions is None else sessions & set(f.sessions)
        if f.agent is not None or f.channel is not None or f.tag is not None:
            matching = set(self.store.sessions_matching(f))
            sessions = matching if sessions is None else sessions & matching
        if sessions is not None:
            wanted = np.array([codes[s] for s in sessions if s in codes], dtype=np.int32)
            mask &= np.isin(entry["session"], wanted)
        if f.apart:
            mask &= ~np.isin(entry["session"], np.array([codes[s] for s in f.apart if s in codes], dtype=np.int32))
        if f.role is not None:
            mask &= entry["role"] == entry["role_codes"].get(f.role, -1)
        if f.since is not None:
            mask &= entry["created_at"] >= f.since
        if f.until is not None:
            mask &= entry["created_at"] < f.until
        return mask

    def _graph(self, entry: dict[str, Any]) -> Any:
        """The entry's HNSW graph, or None while it is being built: the first query past the
        threshold starts the build on a background thread (~10 s at 100k vectors here) and
        queries stay exact until it is done."""
        with self._lock:
            if entry["ann"] is None and not entry["building"]:
                entry["building"] = True
                threading.Thread(target=self._build_graph, args=(entry,), name="palimpsest-hnsw", daemon=True).start()
            return entry["ann"]

    def _build_graph(self, entry: dict[str, Any]) -> None:
        from usearch.index import Index

        try:
            with self._lock:
                rowids, matrix = entry["rowids"], entry["matrix"]  # appends replace these arrays, never change them
            graph = Index(ndim=matrix.shape[1], metric="cos", dtype="f32", expansion_add=GRAPH_EXPANSION_ADD)
            graph.add(rowids, matrix)
            with self._lock:  # rows cached while it was built join it, then _extend adds the later ones
                if len(entry["rowids"]) > len(rowids):
                    graph.add(entry["rowids"][len(rowids):], entry["matrix"][len(rowids):])
                entry["ann"] = graph
        except Exception:  # the exact search keeps answering
            log.exception("building the HNSW graph failed; vector search stays exact")
        finally:
            entry["building"] = False

    def warm(self, model: str, wait: float = 0.0) -> bool:
        """Load the model's vectors and, past the threshold, start building its graph now
        rather than at the first query (`palimpsest serve` calls this at start, so a turn
        does not pay for the load nor search exactly while the graph is built); True when
        the search is in its final state (exact below the threshold, the graph built above),
        waiting up to `wait` seconds for the graph."""
        with self._lock:
            entry = self._load(model)
        if len(entry["rowids"]) <= self.ann_threshold:
            return True
        return self._graph(entry) is not None or (wait > 0 and self.wait_for_graph(model, wait))

    def wait_for_graph(self, model: str, timeout: float = 60.0) -> bool:
        """Block until the model's graph is built (tests, benchmarks); False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            entry = self._models.get(model)
            if entry is not None and entry["ann"] is not None:
                return True
            time.sleep(0.05)
        return False

def _empty(gen: Any) -> dict[str, Any]:
    return {"rowids": np.zeros(0, np.int64), "matrix": None, "gen": gen, "ann": None, "building": False,
            "session": np.zeros(0, np.int32), "role": np.zeros(0, np.int16), "created_at": np.zeros(0, dtype="U32"),
            "session_codes": {}, "role_codes": {}}


def _extend(entry: dict[str, Any], rowids: np.ndarray, matrix: np.ndarray, meta: dict[str, list[str]]) -> None:
    """Append rows (above every cached rowid) with their filter columns, as small codes."""
    def encode(values: list[str], codes: dict[str, int], dtype: Any) -> np.ndarray:
        return np.fromiter((codes.setdefault(v, len(codes)) for v in values), dtype=dtype, count=len(values))

    entry["rowids"] = np.concatenate([entry["rowids"], rowids])
    entry["matrix"] = matrix if entry["matrix"] is None else np.vstack([entry["matrix"], matrix])
    entry["session"] = np.concatenate([entry["session"], encode(meta["session"], entry["session_codes"], np.int32)])
    entry["role"] = np.concatenate([entry["role"], encode(meta["role"], entry["role_codes"], np.int16)])
    entry["created_at"] = np.concatenate([entry["created_at"], np.array(meta["created_at"], dtype="U32")])
    if entry["ann"] is not None:  # new rows join the graph; rebuilding it cost minutes at 1M
        entry["ann"].add(rowids, matrix)
