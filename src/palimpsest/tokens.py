"""Token counting that works offline: the embedding model's own tokenizer.

The budget of a recall block is counted with the WordPiece tokenizer shipped with
Palimpsest (`data/minilm-tokenizer.json`), loaded once (about 50 ms, no model weights).
For English prose it counts within ~10% of the BPE tokenizers LLMs use (measured in
tests/test_recall.py on sample texts); blocks are assembled so the count never exceeds
the budget, and the default budget leaves that margin.

`estimate_tokens` is for weighing many candidates against a budget without running the
tokenizer on each (a recall weighs ~35 candidate lines; encoding each, one call at a time,
took ~15 ms of a hook's recall); the lines chosen are then counted in one call
(`count_tokens_batch`): the tokenizer's pre-tokens (words and punctuation marks) times
`TOKENS_PER_PRETOKEN`. Fitted on the even-numbered LoCoMo and LongMemEval dev
conversations (1.057), it sums to 1.007× the exact count on the odd ones, −1.3% to +2.7%
for a block of 40 lines (p5–p95; `python bench/tokens.py`). Whatever reaches a model is
counted exactly.
"""

from __future__ import annotations

import math
import re
import threading
from bisect import bisect_left
from functools import lru_cache
from importlib import resources
from typing import Any

_lock = threading.Lock()
_PRETOKEN = re.compile(r"[^\W_]+|[^\w\s]|_")  # what the BERT pre-tokenizer splits on: words and single marks
TOKENS_PER_PRETOKEN = 1.06  # see the module's docstring: chosen on one half of the dev sets


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(resources.files("palimpsest").joinpath("data/minilm-tokenizer.json").read_text(encoding="utf-8"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def unknown_tokens(piece: str) -> int:
    """What an LLM's tokenizer makes of a piece WordPiece reads as one `[UNK]` (a word over
    100 characters, a run of kana, an emoji family) or a pre-token the estimate cannot weigh:
    a token per 4 ASCII characters, per 3 bytes of other text (about one per Japanese
    character). Counted as one token, a 5,400-character Japanese message had been 2 tokens
    and taken a whole block's room past its budget."""
    if piece.isascii():
        return max(1, math.ceil(len(piece) / 4))
    return max(1, math.ceil(len(piece.encode("utf-8", "replace")) / 3))


def _weights(text: str, encoding: Any) -> list[int]:
    """Each token's weight: 1, or an unknown piece's `unknown_tokens`."""
    unk = _unk_id()
    return [unknown_tokens(text[a:b]) if i == unk else 1 for i, (a, b) in zip(encoding.ids, encoding.offsets)]


@lru_cache(maxsize=1)
def _unk_id() -> int:
    return int(_tokenizer().token_to_id("[UNK]"))


def reads_nothing(text: str) -> bool:
    """Whether the model's tokenizer reads `text` as unknown pieces only: "🐛" and "🎉" are both `[UNK]`, so the
    model embeds any two texts of emoji alike (cosine 1.0) and a cosine with one says nothing."""
    if not text.strip():
        return False
    with _lock:
        ids = _tokenizer().encode(text, add_special_tokens=False).ids
    return bool(ids) and all(i == _unk_id() for i in ids)


def count_tokens(text: str) -> int:
    """Tokens of `text` (no special tokens)."""
    if not text:
        return 0
    with _lock:
        encoding = _tokenizer().encode(text, add_special_tokens=False)
    return sum(_weights(text, encoding))


def count_tokens_batch(texts: list[str]) -> list[int]:
    """`count_tokens` of each text, from one tokenizer pass over them all joined by newlines
    (the tokenizer splits on whitespace first, so no token spans two texts). A call per text
    cost ~0.2 ms idle and 4 ms on a loaded machine for a line of a recall block; the
    tokenizer's own `encode_batch` handed the texts to its thread pool, slower still there."""
    if not texts:
        return []
    joined = "\n".join(texts)
    with _lock:
        encoding = _tokenizer().encode(joined, add_special_tokens=False)
    starts = [start for start, _ in encoding.offsets]
    sums = [0]
    for w in _weights(joined, encoding):
        sums.append(sums[-1] + w)
    counts, begin = [], 0
    for text in texts:
        end = begin + len(text)
        counts.append(sums[bisect_left(starts, end)] - sums[bisect_left(starts, begin)])
        begin = end + 1
    return counts


def truncate_to_tokens(text: str, budget: int) -> tuple[str, int]:
    """The longest prefix of `text` (cut at a token boundary) within `budget` tokens,
    and its token count — one tokenizer pass for both."""
    if budget <= 0 or not text:
        return "", 0
    with _lock:
        enc = _tokenizer().encode(text, add_special_tokens=False)
    weights = _weights(text, enc)
    if sum(weights) <= budget:
        return text, sum(weights)
    used = 0
    for n, w in enumerate(weights):
        if used + w > budget:
            if n == 0 or w > 1:  # an unknown piece over the room left: as much of it as the room holds
                a, b = enc.offsets[n]
                part, room = text[a:b], budget - used
                while part and unknown_tokens(part) > room:
                    part = part[: min(len(part) - 1, len(part) * room // unknown_tokens(part))]
                out = text[:a] + part
                while out and count_tokens(out) > budget:  # a piece cut short may read as other tokens than the whole
                    out = out[: len(out) * 9 // 10]
                return out, count_tokens(out)
            return text[: enc.offsets[n - 1][1]], used
        used += w
    return text, used


def estimate_tokens(text: str) -> int:
    """About how many tokens `count_tokens(text)` would say (4% off per line, under 3% per
    block on the dev sets), without running the tokenizer."""
    if not text:
        return 0
    pieces = _PRETOKEN.findall(text)
    extra = sum(unknown_tokens(p) - 1 for p in pieces if len(p) > 24 or not p.isascii())  # (a long word, a kana run)
    return math.ceil((len(pieces) + extra) * TOKENS_PER_PRETOKEN)
