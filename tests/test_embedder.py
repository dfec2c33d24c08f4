"""The local embedder's batches: bounded in padded tokens (onnxruntime's arena keeps the
largest batch's memory for the life of the process), and the vectors the same however the
texts are batched."""

from __future__ import annotations

import numpy as np

from palimpsest.embed import LocalEmbedder


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
