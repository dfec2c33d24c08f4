"""Token counting that works offline: the embedding model's own tokenizer.

The budget of a recall block is counted with the WordPiece tokenizer shipped with
Palimpsest (`data/minilm-tokenizer.json`), loaded once (about 50 ms, no model weights).
For English prose it counts within ~10% of the BPE tokenizers LLMs use (measured in
tests/test_recall.py on sample texts); blocks are assembled so the count never exceeds
the budget, and the default budget leaves that margin.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from importlib import resources
from typing import Any

_lock = threading.Lock()


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(resources.files("palimpsest").joinpath("data/minilm-tokenizer.json").read_text(encoding="utf-8"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def count_tokens(text: str) -> int:
    """Tokens of `text` (no special tokens)."""
    if not text:
        return 0
    with _lock:
        return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def truncate_to_tokens(text: str, budget: int) -> tuple[str, int]:
    """The longest prefix of `text` (cut at a token boundary) within `budget` tokens,
    and its token count — one tokenizer pass for both."""
    if budget <= 0 or not text:
        return "", 0
    with _lock:
        enc = _tokenizer().encode(text, add_special_tokens=False)
    if len(enc.ids) <= budget:
        return text, len(enc.ids)
    return text[: enc.offsets[budget - 1][1]], budget
