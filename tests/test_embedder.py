"""The local embedder's batches: bounded in padded tokens (onnxruntime's arena keeps the
largest batch's memory for the life of the process), and the vectors the same however the
texts are batched; the calls of every model bounded in size and in time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

from palimpsest.embed import CALL_CHARS, HashEmbedder, LocalEmbedder
from palimpsest.errors import EmbedderError


def test_batches_hold_at_most_the_token_budget_and_vectors_do_not_depend_on_them() -> None:
    e = LocalEmbedder()
    texts = ["ok", "The retry cap should match the upstream timeout.", " ".join(["journal"] * 600), "數據庫 " * 40,
             *(f"note {i}: " + "memory agent session " * (i * 7) for i in range(20))]
    shapes: list[tuple[int, int]] = []
    session_run = e._session.run

    def run(names: object, feeds: dict[str, np.ndarray]) -> object:
        shapes.append(feeds["input_ids"].shape)
        return session_run(names, feeds)

    e._session = type("S", (), {"run": staticmethod(run)})()
    together = e.embed_batch(texts)
    assert shapes and all(rows * width <= 4096 and rows <= 32 for rows, width in shapes)
    assert max(width for _, width in shapes) == 256 and any(rows > 16 for rows, _ in shapes)  # short texts still batch wide
    alone = np.stack([e.embed_batch([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_settle_waits_for_a_model_call_in_flight() -> None:
    """An interrupted command waits for the model call its daemon thread runs: exiting inside the ONNX runtime aborted
    the process (exit 134 on Ctrl-C during an import's embedding; reproduced by hand with SIGINT at 45 s and 60 s)."""
    import threading
    import time

    from palimpsest import embed

    started, ended = threading.Event(), threading.Event()

    def slow(texts: list[str]) -> np.ndarray:
        started.set()
        time.sleep(0.4)
        ended.set()
        return np.zeros((len(texts), 2), dtype=np.float32)

    threading.Thread(target=lambda: embed._bounded(slow, ["x"], 10.0), daemon=True).start()
    assert started.wait(5)
    assert embed.settle(5) and ended.is_set()


def test_a_model_thread_ends_when_idle_and_the_next_call_starts_another(monkeypatch: object) -> None:
    """One thread per embedder and lane had stayed, idle, for every `Memory` a program opened and closed (found reading
    which threads outlive a closed memory)."""
    import threading
    import time

    from palimpsest import embed

    monkeypatch.setattr(embed, "IDLE_SECONDS", 0.1)  # type: ignore[attr-defined]

    def model(texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 2), dtype=np.float32)

    def threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "palimpsest-model-idle-test"]

    assert embed._bounded(model, ["x"], 5.0, lane="idle-test").shape == (1, 2)
    assert threads()
    deadline = time.monotonic() + 10
    while threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not threads()
    for _ in range(50):  # calls racing the idle thread's end are each answered
        assert embed._bounded(model, ["y"], 5.0, lane="idle-test").shape == (1, 2)
        time.sleep(0.002 * (_ % 5))


class _SlowModel(HashEmbedder):
    """A model that takes `seconds(texts)` per call (a loaded machine's), with the hashing embedder's vectors."""

    def __init__(self, seconds: Callable[[list[str]], float]) -> None:
        super().__init__()
        self.seconds = seconds
        self.calls: list[list[str]] = []

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        self.calls.append(texts)
        time.sleep(self.seconds(texts))
        return super().embed_batch(texts)


def test_a_call_queued_behind_an_abandoned_one_has_its_whole_timeout() -> None:
    """Found by a new user on a loaded machine: a call that timed out still ran on the lane's one thread, and the
    job's retry, queued behind it, counted that wait against its own 300 s and timed out too, retry after retry. A
    call's time counts from when it starts."""
    model = _SlowModel(lambda texts: 3.2 if texts[0] == "slow" else 1.2)
    with pytest.raises(EmbedderError, match="within 2 s"):
        model.checked(["slow"], timeout=2.0)  # abandoned at 2 s, runs until 3.2 s
    started = time.monotonic()
    vectors = model.checked(["the retry"], timeout=2.0)  # waits ~1.2 s for the thread, then runs 1.2 s
    assert time.monotonic() - started > 2.0
    assert np.allclose(vectors, HashEmbedder().embed_batch(["the retry"]))


def test_a_hung_model_still_fails_the_calls_queued_behind_it() -> None:
    """The wait for the lane has its own bound: behind a model that never answers, a call fails in time."""
    release = threading.Event()

    def hang(texts: list[str]) -> float:
        release.wait(30)  # (ended by the test, so no thread outlives it)
        return 0.0

    model = _SlowModel(hang)
    try:
        with pytest.raises(EmbedderError, match="within 0.5 s"):
            model.checked(["hangs"], timeout=0.5)
        started = time.monotonic()
        with pytest.raises(EmbedderError, match="still busy"):
            model.checked(["behind it"], timeout=0.5)
        assert time.monotonic() - started < 5
    finally:
        release.set()


def test_a_long_batch_goes_to_the_model_in_calls_each_within_the_timeout() -> None:
    """Found by a new user: an embed job's 64 long messages were one call of the model, past `embed_timeout` on a
    loaded machine, and failed on every retry ("the embedder did not answer within 300 s"). The batch is cut into
    calls of at most `CALL_CHARS` characters, each timed on its own, and the vectors are the same."""
    texts = [f"message {i}: " + "the technician replaced the boiler valve " * (40 + i * 3) for i in range(64)]
    model = _SlowModel(lambda texts: sum(map(len, texts)) / 200_000)  # ~1.7 s for the whole batch at once
    vectors = model.checked(texts, timeout=1.0)
    assert np.allclose(vectors, HashEmbedder().embed_batch(texts))
    assert len(model.calls) > 1 and all(len(c) == 1 or sum(map(len, c)) <= CALL_CHARS for c in model.calls)
    assert sorted(t for c in model.calls for t in c) == sorted(texts)
