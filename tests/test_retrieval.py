"""Hybrid retrieval, embeddings as jobs, and the embedder failing in every way."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from palimpsest import Memory, ModelMismatch, Settings
from palimpsest.embed import EmbeddingCache, HashEmbedder, LocalEmbedder
from palimpsest.records import iso, utcnow


class Switchable(HashEmbedder):
    """A real embedder that can be told to crash, hang or answer with the wrong shape."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.mode = "ok"
        self.calls = 0

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.mode == "crash":
            raise RuntimeError("model exploded")
        if self.mode == "hang":
            time.sleep(3)
        if self.mode == "wrong-dim":
            return super().embed_batch(texts)[:, :10]
        return super().embed_batch(texts)


def open_memory(home: Path, store_url: str, **settings: object) -> Memory:
    values = {"embedder": "hash", "embed_cache": "off", "embed_timeout": 1.0, "query_embed_timeout": 1.0, **settings}
    return Memory(home, store_url, settings=Settings.load(env={}, **values))


@pytest.fixture
def hybrid(home: Path, store_url: str):
    memory = open_memory(home, store_url)
    embedder = Switchable()
    memory.use_embedder(embedder)
    memory.embedder_under_test = embedder  # type: ignore[attr-defined]
    yield memory
    memory.close()


CORPUS = [
    ("user", "Our deployment uses blue green switching behind the load balancer"),
    ("assistant", "The retry cap matches the upstream timeout of thirty seconds"),
    ("user", "I prefer tea over coffee in the morning"),
    ("assistant", "The database migration ran at midnight without errors"),
]


def fill(memory: Memory) -> None:
    memory.ingest_session("s1", [{"role": r, "content": c} for r, c in CORPUS])
    assert memory.worker().drain() >= 1


def test_appends_queue_embedding_jobs_and_search_becomes_hybrid(hybrid: Memory) -> None:
    hybrid.ingest_session("s1", [{"role": r, "content": c} for r, c in CORPUS])
    status = hybrid.store.job_status()["tasks"]["embed"]
    assert status.get("queued", 0) >= 1
    before = hybrid.search("retry cap timeout")
    assert before.mode == "keyword" and any("no vectors" in n for n in before.notes)
    hybrid.worker().drain()
    after = hybrid.search("retry cap timeout")
    assert after.mode == "hybrid"
    top = after.hits[0]
    assert "retry cap" in top.message.content
    assert set(top.parts) == {"fts", "semantic", "temporal", "importance"}
    assert hybrid.store.vector_models()[hybrid.embedder.model_id]["count"] == len(CORPUS)


def test_semantic_side_finds_what_keywords_miss(hybrid: Memory) -> None:
    fill(hybrid)
    # no word of the query is in the message as written, except through the hash space
    hits = hybrid.search("blue green load balancer switching").hits
    assert hits[0].message.content.startswith("Our deployment")


def test_rrf_recipe_and_unknown_recipe(hybrid: Memory) -> None:
    fill(hybrid)
    hits = hybrid.search("tea coffee", recipe="rrf").hits
    assert any(h.message.content.startswith("I prefer tea") for h in hits[:2])
    assert all(h.score <= 2 / 60 + 0.01 for h in hits)  # reciprocal ranks, not weighted parts
    with pytest.raises(Exception, match="unknown recipe"):
        hybrid.search("tea", recipe="magic")


def test_access_counts_grow_for_returned_hits(hybrid: Memory) -> None:
    fill(hybrid)
    first = hybrid.search("database migration").hits[0].message
    again = hybrid.search("database migration").hits[0].message
    assert again.id == first.id and again.access_count == first.access_count + 1


def test_embedder_crash_retries_then_fails_visibly_and_recovers(hybrid: Memory) -> None:
    embedder = hybrid.embedder_under_test  # type: ignore[attr-defined]
    embedder.mode = "crash"
    hybrid.ingest_session("s1", [{"role": r, "content": c} for r, c in CORPUS])
    worker = hybrid.worker()
    for _ in range(6):  # run past every backoff by claiming as if later
        worker.run_once()
        hybrid.store.retry_failed(None, None, dry_run=True)
        _fast_forward_jobs(hybrid)
    status = hybrid.store.job_status()
    assert status["tasks"]["embed"].get("failed", 0) >= 1
    assert "model exploded" in status["sample_errors"]["embed"]
    # search keeps working, keyword-only, and says so
    result = hybrid.search("retry cap")
    assert result.hits and result.mode == "keyword"
    # nothing lost: the messages are all there
    assert len(hybrid.browse(session="s1")) == len(CORPUS)
    embedder.mode = "ok"
    assert hybrid.store.retry_failed("embed", "exploded", dry_run=True) >= 1
    assert hybrid.store.retry_failed("embed", "exploded", dry_run=False) >= 1
    worker.drain()
    assert hybrid.store.vector_models()[embedder.model_id]["count"] == len(CORPUS)
    assert hybrid.search("retry cap").mode == "hybrid"


def _fast_forward_jobs(memory: Memory) -> None:
    """Make every queued job due now (instead of sleeping through the backoff)."""
    for job_id in _queued_ids(memory):
        memory.store.fail_job(job_id, "fast-forward", iso(utcnow()))


def _queued_ids(memory: Memory) -> list[int]:
    claimed = memory.store.claim_jobs("peek", None, 1000, "9999-01-01T00:00:00.000000Z", "2000-01-01T00:00:00.000000Z")
    return [j.id for j in claimed]


def test_hanging_embedder_times_out_and_search_degrades(hybrid: Memory) -> None:
    fill(hybrid)
    embedder = hybrid.embedder_under_test  # type: ignore[attr-defined]
    embedder.mode = "hang"
    started = time.monotonic()
    result = hybrid.search("retry cap")
    assert time.monotonic() - started < 2.5
    assert result.hits and result.mode == "keyword"
    assert any("did not answer" in n for n in result.notes)
    hybrid.append("s1", "user", "a new message while the model hangs")
    hybrid.worker().run_once()
    assert "did not answer" in hybrid.store.job_status()["sample_errors"].get("embed", "") or _has_error(hybrid, "did not answer")


def _has_error(memory: Memory, text: str) -> bool:
    return memory.store.retry_failed("embed", text, dry_run=True) > 0 or any(
        text in (j.last_error or "") for j in memory.store.claim_jobs("peek", ["embed"], 100, "9999-01-01T00:00:00.000000Z", "2000-01-01T00:00:00.000000Z")
    )


def test_wrong_dimensions_are_refused_not_stored(hybrid: Memory) -> None:
    embedder = hybrid.embedder_under_test  # type: ignore[attr-defined]
    embedder.mode = "wrong-dim"
    hybrid.append("s1", "user", "hello there")
    hybrid.worker().run_once()
    assert hybrid.store.vector_models() == {}
    assert _has_error(hybrid, "expected")


def test_mixing_models_is_refused_and_reindex_switches(hybrid: Memory) -> None:
    fill(hybrid)
    other = HashEmbedder(dim=32)
    msg = hybrid.browse(session="s1")[0]
    with pytest.raises(ModelMismatch, match="reindex"):
        hybrid.store.put_vectors(other.model_id, [(msg.id, other.embed(msg.content))])
    hybrid.use_embedder(other)
    assert hybrid.reindex() == len(CORPUS)
    assert list(hybrid.store.vector_models()) == [other.model_id]
    assert hybrid.search("tea coffee").mode == "hybrid"


def test_killed_worker_leaves_no_job_lost_and_none_done_twice(hybrid: Memory) -> None:
    hybrid.ingest_session("s1", [{"role": "user", "content": f"message number {i}"} for i in range(200)])
    now = utcnow()
    # a worker claims everything and dies without finishing
    dead = hybrid.store.claim_jobs("dead-worker", None, 1000, iso(now), iso(now))
    assert dead
    assert hybrid.worker().run_once() == 0  # locked, lease not expired
    # after the lease another worker takes over
    later = hybrid.store.claim_jobs("rescuer", None, 1000, iso(now), "9999-01-01T00:00:00.000000Z")
    assert {j.id for j in later} == {j.id for j in dead}
    for job in later:
        hybrid.worker()._run(job)
    assert hybrid.store.vector_models()[hybrid.embedder.model_id]["count"] == 200


def test_a_store_away_midway_leaves_the_rest_of_the_batch_to_the_same_worker(hybrid: Memory) -> None:
    """Found by a new user: a five-second PostgreSQL restart left the rest of a claimed batch
    `running` until its five-minute lease ran out. The store's failure is the boundary faked
    here: one `finish_job` answers StoreUnavailable, as a connection refused does."""
    from palimpsest.errors import StoreUnavailable

    hybrid.ingest_session("s1", [{"role": "user", "content": f"message number {i}"} for i in range(200)])
    worker = hybrid.worker("w")
    finish, calls = worker.store.finish_job, []

    def away_once(job_id: int) -> None:
        calls.append(job_id)
        if len(calls) == 2:
            raise StoreUnavailable("PostgreSQL at db is unavailable")
        finish(job_id)

    worker.store.finish_job = away_once  # type: ignore[method-assign]
    with pytest.raises(StoreUnavailable):
        worker.run_once()
    held = [j.id for j in worker.held]
    assert held and held[0] == calls[1]  # the job whose finish failed, and the rest of its batch
    assert worker.run_once() == len(held)  # run first, no new claim
    worker.drain()
    assert hybrid.store.vector_models()[hybrid.embedder.model_id]["count"] == 200


def test_concurrent_workers_share_the_queue(hybrid: Memory) -> None:
    hybrid.ingest_session("s1", [{"role": "user", "content": f"row {i} of the shared queue"} for i in range(300)])
    claimed: list[int] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        worker = hybrid.worker(name)
        while True:
            now = utcnow()
            jobs = hybrid.store.claim_jobs(name, None, 2, iso(now), iso(now.replace(year=2000)))
            if not jobs:
                return
            with lock:
                claimed.extend(j.id for j in jobs)
            for j in jobs:
                worker._run(j)

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(claimed) == len(set(claimed))
    assert hybrid.store.vector_models()[hybrid.embedder.model_id]["count"] == 300


@pytest.mark.parametrize(
    "query",
    ["", "   ", "x" * 10_000, "東京の天気はどうですか", "ما هو الطقس اليوم", "🚀🔥 deploy 🎉", '"unbalanced (paren NEAR *', "'; DROP TABLE messages; --"],
)
def test_odd_queries_answer_without_error(hybrid: Memory, query: str) -> None:
    fill(hybrid)
    hybrid.append("s1", "user", "東京の天気は晴れです and 🚀 launched")
    hybrid.worker().drain()
    result = hybrid.search(query)
    assert isinstance(result.hits, list)
    assert len(hybrid.browse(session="s1")) == len(CORPUS) + 1


def test_substring_mode_finds_fragments_of_identifiers_and_paths(sqlite_memory: Memory) -> None:
    sqlite_memory.append("s1", "tool", "", tool_name="read_file", tool_result="opened src/palimpsest/store/sqlite.py at line 42")
    sqlite_memory.append("s1", "user", "call getUserAccountById please")
    assert [h.message.tool_name for h in sqlite_memory.search("store/sqli", mode="substring").hits] == ["read_file"]
    assert sqlite_memory.search("UserAccount", mode="substring").hits[0].message.content.startswith("call")
    assert sqlite_memory.search("ById", mode="substring").hits
    assert sqlite_memory.search("%", mode="substring").hits == []


def test_regex_mode_and_a_pathological_pattern_is_bounded(sqlite_memory: Memory) -> None:
    sqlite_memory.append("s1", "user", "error code E1234 in module x")
    sqlite_memory.append("s1", "user", "a" * 30_000)
    assert [h.message.content for h in sqlite_memory.search(r"E\d{4}", mode="regex").hits] == ["error code E1234 in module x"]
    started = time.monotonic()
    result = sqlite_memory.search(r"(a|aa)+b$", mode="regex")
    assert time.monotonic() - started < 30  # bounded (2 s of CPU; wall time stretches on a loaded machine)
    assert result.notes and "partial" in result.notes[0]
    with pytest.raises(Exception, match="invalid regular expression"):
        sqlite_memory.search("(unclosed", mode="regex")


def test_embedding_cache_embeds_identical_texts_once(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    embedder = Switchable()
    a = cache.embed(embedder, ["same text", "same text", "other"])
    calls = embedder.calls
    b = cache.embed(embedder, ["same text", "other"])
    assert embedder.calls == calls
    assert np.allclose(a[0], b[0]) and np.allclose(a[0], a[1])


def test_local_model_windows_long_texts_instead_of_cutting_them() -> None:
    embedder = LocalEmbedder(threads=1)
    head = " ".join(["the weather report for the coastal towns"] * 40)
    tail = " ".join(["kubernetes cluster autoscaling failed on the node pool"] * 40)
    whole, head_only, tail_only = embedder.embed_batch([head + " " + tail, head, tail])
    assert whole.shape == (384,)
    assert abs(float(np.linalg.norm(whole)) - 1) < 1e-4
    # the end of a long text still shapes its vector: a cut-off embedding would equal head_only
    assert float(whole @ tail_only) > 0.5
    assert float(whole @ head_only) < 0.99
    assert len(embedder._windows(embedder._tok.encode(head + " " + tail).ids)) > 1


def test_facts_come_first_and_retired_ones_never_return(memory: Memory) -> None:
    memory.append("s1", "user", "the retry cap is thirty seconds")
    old = memory.facts.write("the retry cap is 30 seconds", kind="decision")
    memory.facts.supersede(old.id, "the retry cap is 45 seconds")
    result = memory.search("retry cap").to_dict()
    assert list(result)[:5] == ["mode", "match", "notes", "took_ms", "facts"]
    assert [f["text"] for f in result["facts"]] == ["the retry cap is 45 seconds"]
    assert result["hits"]  # the message itself is still searchable: every word persists
    past = memory.search("retry cap", valid_at=old.valid_from).to_dict()["facts"]
    assert [f["text"] for f in past] == ["the retry cap is 30 seconds"]


def test_stats_show_queue_depth_and_embedding_coverage(hybrid: Memory) -> None:
    hybrid.ingest_session("s1", [{"role": "user", "content": f"line {i}"} for i in range(10)])
    before = hybrid.stats()["embeddings"]
    assert before["queued"] >= 1 and before["coverage"] == {}
    hybrid.worker().drain()
    after = hybrid.stats()["embeddings"]
    assert after["queued"] == 0 and after["coverage"] == {hybrid.embedder.model_id: 1.0}


def test_lazy_trigram_index_stays_consistent_through_sweeps_and_rebuilds(sqlite_memory: Memory) -> None:
    import sqlite3

    m = sqlite_memory
    m.append("keep", "user", "alpha_identifier_one in src/alpha.py")
    assert len(m.search("identifier_one", mode="substring").hits) == 1  # builds the trigrams
    m.append("scratch", "user", "alpha_identifier_two never trigram-indexed", kind="instant", created_at="2020-01-01T00:00:00Z")
    assert m.sweep_instant() == ["scratch"]  # deletes a row the trigram index never held
    m.append("keep", "user", "alpha_identifier_three later")
    assert sorted(h.message.content for h in m.search("alpha_identifier", mode="substring").hits) == [
        "alpha_identifier_one in src/alpha.py", "alpha_identifier_three later"]
    m.rebuild()
    assert len(m.search("alpha_identifier", mode="substring").hits) == 2
    db = sqlite3.connect(m.store.path)
    db.execute("INSERT INTO messages_tri(messages_tri, rank) VALUES ('integrity-check', 1)")
    db.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    db.close()


def test_a_transcript_sent_in_parts_keeps_true_repeats(sqlite_memory: Memory) -> None:
    part1 = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    part2 = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "again"}]
    sqlite_memory.ingest_session("s", part1)
    assert sqlite_memory.ingest_session("s", part2, start=2)["stored"] == 2
    assert sqlite_memory.ingest_session("s", part2, start=2)["stored"] == 0  # a retry of the part
    assert [m.content for m in sqlite_memory.browse(session="s")] == ["hello", "hi", "hello", "again"]


def test_search_can_synthesize_an_answer_citing_its_hits(home: Path) -> None:
    from fakeopenai import FakeOpenAI, Reply

    with FakeOpenAI() as fake:
        settings = Settings.load(env={}, embedder="none", llm_url=fake.url, llm_model="fake", llm_backoff="0,0,0",
                                 synthesize_answers=True)
        with Memory(home, settings=settings) as memory:
            said = memory.append("s1", "user", "the deploy window is Friday at 16:00")
            fake.push(Reply.json({"answer": "Friday at 16:00", "cited": [said["id"], "evt_invented"]}))
            result = memory.search("deploy window", synthesize=True).to_dict()
            assert result["answer"] == {"available": True, "answer": "Friday at 16:00", "cited": [said["id"]], "model": result["answer"]["model"]}
            assert said["id"] in fake.requests[-1]["messages"][-1]["content"]
            assert "answer" not in memory.search("deploy window").to_dict()
            # an id the answer's text names that no line had is taken out of the text too (a new user's)
            fake.push(Reply.json({"answer": f"Friday at 16:00 ({said['id']}, msg_INVENTED123, evt_invented)", "cited": [said["id"]]}))
            text = memory.search("deploy window", synthesize=True).to_dict()["answer"]["answer"]
            assert text == f"Friday at 16:00 ({said['id']}, [no such line], [no such line])"


def test_approximate_index_answers_unfiltered_queries_and_grows_in_place(tmp_path: Path) -> None:
    """Above the threshold the HNSW graph, built in the background, answers unfiltered
    queries; vectors that arrive later join the same graph (rebuilding it took minutes at a
    million); filters stay exact."""
    import numpy as np

    from palimpsest.records import Message, Session
    from palimpsest.store import Filters
    from palimpsest.store.sqlite import SQLiteStore

    store = SQLiteStore(f"sqlite:///{tmp_path / 'db.sqlite'}", ann_threshold=100)
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((400, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for s in ("a", "b"):
        store.upsert_session(Session(id=s, created_at="2026-01-01T00:00:00.000000Z", updated_at="2026-01-01T00:00:00.000000Z"))

    def add(lo: int, hi: int) -> None:
        msgs = [Message(id=f"m{i:04d}", session="ab"[i % 2], role="user", content=f"text {i}",
                        created_at=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000000Z", event_key=f"k{i}") for i in range(lo, hi)]
        for s in ("a", "b"):
            store.insert_messages(s, [m for m in msgs if m.session == s], None)
        store.put_vectors("m", [(f"m{i:04d}", vectors[i]) for i in range(lo, hi)])

    add(0, 300)
    assert store.vector_search("m", vectors[7], Filters(), 5)[0][0] == "m0007"  # exact while the graph is built
    assert store._vectors.wait_for_graph("m", 30)
    assert store.vector_search("m", vectors[8], Filters(), 5)[0][0] == "m0008"  # from the graph
    graph = store._vectors._models["m"]["ann"]
    assert graph is not None and len(graph) == 300
    add(300, 400)
    assert store.vector_search("m", vectors[350], Filters(), 5)[0][0] == "m0350"
    assert store._vectors._models["m"]["ann"] is graph and len(graph) == 400  # grown, not rebuilt
    hits = store.vector_search("m", vectors[351], Filters(session="b"), 400)
    assert hits[0][0] == "m0351" and len(hits) == 200 and all(int(i[1:]) % 2 == 1 for i, _ in hits)
    store.close()


def test_a_stopping_worker_leaves_the_rest_of_its_batch(hybrid: Memory) -> None:
    """Found by a new user: a server stopped with a backlog waited 30 s for a batch of model
    calls, then aborted inside one. The batch in hand now stops between jobs."""
    from palimpsest.jobs import Worker
    from palimpsest.store import NewJob

    done: list[int] = []
    stop = threading.Event()

    def slow(job: Any) -> None:
        done.append(job.id)
        stop.set()  # the server is told to stop while the first job runs
        time.sleep(0.05)

    hybrid.store.enqueue([NewJob("slow", {"n": i}, job_key=f"slow:{i}") for i in range(8)])
    worker = Worker(hybrid.store, {"slow": slow}, name="w", tasks=["slow"], batch=8)
    thread = threading.Thread(target=worker.run, args=(stop,))
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive() and len(done) == 1


def test_a_query_never_waits_behind_the_background_embedding(hybrid: Memory) -> None:
    """Found by a heavy Codex user: after an import, the server's batches held the one embedding thread,
    so every search waited 5 s and fell back to keywords ("embedder unavailable"), and the recall hook
    gave up on 87 of 100 turns for the 80 minutes of the drain. A query has a thread of its own."""
    fill(hybrid)
    embedder = hybrid.embedder_under_test  # type: ignore[attr-defined]
    real = embedder.embed_batch

    def slow_batches(texts: list[str]) -> np.ndarray:
        if len(texts) > 1 or texts[0].startswith("background"):
            time.sleep(2.5)  # a long batch of the background's
        return real(texts)

    embedder.embed_batch = slow_batches
    background = threading.Thread(target=lambda: hybrid.kernel.embedding.embed(["background 1", "background 2"], 10.0), daemon=True)
    background.start()
    time.sleep(0.3)
    result = hybrid.search("retry cap")  # query_embed_timeout is 1 s here
    assert result.mode == "hybrid" and not any("did not answer" in n for n in result.notes), result.notes
    background.join()
