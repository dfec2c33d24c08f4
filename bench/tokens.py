"""The recall block's token estimate (`tokens.estimate_tokens`) against the exact count.

    .venv/bin/python bench/tokens.py

Recall weighs its candidate lines by estimate and counts only the assembled block exactly.
The one constant, `TOKENS_PER_PRETOKEN`, is the ratio of exact tokens to pre-tokens (words
and marks) on half A — the even-numbered LoCoMo dev conversations and LongMemEval dev
questions (the first 6 sessions of each haystack, each turn cut at 6,400 characters as
recall cuts it) — and is reported on half B (the odd-numbered ones) and on both: the sum of
estimates over the sum of exact counts, the mean absolute error per line, and the error of
the sum over 500 random blocks of 40 lines (p5, p50, p95).
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

from palimpsest.tokens import _PRETOKEN, TOKENS_PER_PRETOKEN, count_tokens, estimate_tokens

EVAL = Path("/work/shared/eval")


def lines(half: int) -> list[str]:
    locomo = json.loads((EVAL / "locomo-dev.json").read_text())
    out = [f"{t['speaker']}: {t.get('text', '')}" for i, c in enumerate(locomo) if i % 2 == half
           for k, v in c["conversation"].items() if k.startswith("session_") and isinstance(v, list) for t in v]
    with gzip.open(EVAL / "longmemeval-s-dev.jsonl.gz", "rt") as f:
        questions = [json.loads(line) for line in f]
    chat = [f"{t['role']}: {t['content']}"[:6400] for i, q in enumerate(questions) if i % 2 == half
            for s in q["haystack_sessions"][:6] for t in s]
    return out + chat[:3000]


def report(name: str, texts: list[str]) -> dict[str, float]:
    exact = [count_tokens(t) for t in texts]
    est = [estimate_tokens(t) for t in texts]
    rng = random.Random(0)
    blocks = sorted(sum(est[i] for i in ix) / max(1, sum(exact[i] for i in ix)) - 1
                    for ix in (rng.sample(range(len(texts)), 40) for _ in range(500)))
    return {"set": name, "lines": len(texts), "ratio": round(sum(est) / sum(exact), 3),
            "line_abs_err": round(sum(abs(e - x) for e, x in zip(est, exact)) / sum(exact), 3),
            "block_p5": round(blocks[25], 3), "block_p50": round(blocks[250], 3), "block_p95": round(blocks[475], 3)}


def main() -> int:
    a, b = lines(0), lines(1)
    fitted = sum(count_tokens(t) for t in a) / sum(len(_PRETOKEN.findall(t)) for t in a)
    print(json.dumps({"fitted_on_A": round(fitted, 3), "TOKENS_PER_PRETOKEN": TOKENS_PER_PRETOKEN,
                      "reports": [report("A (fit)", a), report("B (held out)", b), report("all", a + b)]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
