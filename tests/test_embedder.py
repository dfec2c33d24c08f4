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
