"""Search warmed before the first turn (issue 19, the recall hook's latency): `Memory.warm`
loads the embedder and the vector index — on SQLite past `ann_threshold` the HNSW graph is
built then, not at the first query, and a query that follows is answered from it — and
`serve`'s `/readyz` says how far it got (`search_index`), on both backends."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from types import SimpleNamespace

import httpx

from palimpsest import Memory, Settings
from palimpsest.embed import HashEmbedder
from palimpsest.errors import EmbedderError
from palimpsest.server.http import create_app
from palimpsest.server.run import ServerThread, warm_up


def filled(home: Path, url: str, n: int, threshold: int) -> Memory:
    m = Memory(home, url, settings=Settings.load(env={}, embedder="hash", ann_threshold=threshold))
    m.use_embedder(HashEmbedder())
    m.ingest_session("s1", [{"role": "user", "content": f"note {i} about topic {i % 17} and the retry cap"} for i in range(n)])
    m.worker().drain()
    return m


def test_warm_builds_the_index_before_the_first_query(home: Path, store_url: str) -> None:
    with filled(home, store_url, 120, threshold=50) as m:
        assert m.store.vector_models()[m.embedder.model_id]["count"] == 120
        assert m.warm(wait=60) is True
        graphs = getattr(m.store, "_vectors", None)  # SQLite: the graph is in memory, built now
        if graphs is not None:
            assert graphs._models[m.embedder.model_id]["ann"] is not None
        assert m.search("topic 3 retry cap", limit=5).hits  # answered once warm
        assert m.warm() is True  # and stays warm


def test_warm_below_the_threshold_is_ready_at_once_and_without_an_embedder(home: Path) -> None:
    with filled(home, f"sqlite:///{home / 'palimpsest.db'}", 30, threshold=50_000) as m:
        assert m.warm() is True
        assert m.store._vectors._models[m.embedder.model_id]["ann"] is None  # exact search: no graph to build
    with Memory(home / "other", settings=Settings.load(env={}, embedder="none")) as m:
        assert m.warm() is True


def test_serve_reports_the_index_in_readyz(home: Path) -> None:
    with filled(home, f"sqlite:///{home / 'palimpsest.db'}", 120, threshold=50) as m:
        app = create_app(m)
        with ServerThread(m, app=app) as url:
            assert "search_index" not in httpx.get(f"{url}/readyz").json()["result"]  # not started by `serve`
            app.state.search_index = "warming"
            assert httpx.get(f"{url}/readyz").json()["result"] == {"status": "ready", "search_index": "warming"}
            warm_up(m, app.state)
            assert httpx.get(f"{url}/readyz").json()["result"]["search_index"] == "ready"
    state = SimpleNamespace(search_index="warming")

    class Failing:
        def warm(self, wait: float) -> bool:
            raise EmbedderError("the model is gone")

    warm_up(Failing(), state)  # type: ignore[arg-type]
    assert state.search_index == "unavailable"


class Cycle:
    me: object


def test_once_warm_what_was_loaded_is_out_of_the_collectors_sight(home: Path) -> None:
    """A full collection holds the GIL over every tracked object (all requests wait); `serve`
    freezes what is loaded once warm, so later collections walk only what came after."""
    gc.unfreeze()
    try:
        with Memory(home, settings=Settings.load(env={}, embedder="none")) as m:
            warm_up(m, SimpleNamespace(search_index="warming"))
            assert gc.get_freeze_count() > 10_000  # the modules, the app's objects: all frozen
            cycle = Cycle()
            cycle.me = cycle
            gone = weakref.ref(cycle)
            del cycle
            gc.collect()
            assert gone() is None  # garbage made since is still collected
    finally:
        gc.unfreeze()
