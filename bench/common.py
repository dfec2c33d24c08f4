"""Shared by the benchmarks: a synthetic corpus with realistic shape, timing helpers, and
the writer of `bench/RESULTS.md` (each benchmark owns one `## Heading` there).

The corpus is deterministic (seeded). Words: about 45% English stop words (as in real
English text, where function words are 40–50% of tokens; search drops them from queries),
the rest pronounceable made-up words drawn from a Zipf–Mandelbrot distribution
(p(rank) ∝ 1 / (rank + 50)^1.07: a few words common, most rare, and no content word in
more than ~10% of messages — with a pure Zipf head, made-up words at the top ranks were in
90% of messages, acting as stop words no real query would send). Message lengths follow a
log-normal distribution (median ~40 words, a long tail); one message in eight is a tool
call with a long tool result (up to ~30,000 characters, past the index's 16,000-unit cap);
a few sessions; increasing timestamps.
"""

from __future__ import annotations

import bisect
import itertools
import random
import statistics
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
_SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
COMMON = ["the", "a", "is", "to", "of", "and", "in", "it", "that", "for", "on", "with", "we", "this", "be", "not", "i", "you", "was", "are", "have", "but", "as", "at", "by", "from", "or", "an", "they", "which", "if", "will", "so", "what", "can", "there", "do", "all", "would", "my", "their", "about", "when", "your", "out", "up", "some", "could", "them", "than", "then"]
TOOLS = ["read_file", "grep", "bash", "write_file", "web_search", "list_dir"]


def vocabulary(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))))
    return sorted(words)


class Corpus:
    """Deterministic synthetic messages; `messages(n)` yields (session, message dict)."""

    def __init__(self, seed: int = 42, vocab_size: int = 30_000, sessions: int = 8) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(vocab_size)  # one vocabulary for every seed: queries use the corpus words
        weights = [1.0 / (rank + 50) ** 1.07 for rank in range(vocab_size)]
        self._cum = list(itertools.accumulate(weights))
        self.sessions = [f"bench-{i}" for i in range(sessions)]

    def word(self) -> str:
        return self.words[bisect.bisect(self._cum, self.rng.random() * self._cum[-1])]

    def text(self, n_words: int) -> str:
        rng = self.rng
        out = []
        for _ in range(n_words):
            out.append(rng.choice(COMMON) if rng.random() < 0.45 else self.word())
        return " ".join(out)

    def length(self) -> int:
        return max(1, min(4000, int(self.rng.lognormvariate(3.7, 1.0))))

    def messages(self, n: int) -> Iterator[tuple[str, dict[str, Any]]]:
        rng = self.rng
        start = datetime(2025, 1, 1, tzinfo=UTC)
        for i in range(n):
            session = self.sessions[rng.randrange(len(self.sessions))]
            at = (start + timedelta(seconds=i * 7)).strftime("%Y-%m-%dT%H:%M:%SZ")
            if rng.random() < 0.125:
                msg = {"role": "tool", "content": "", "tool_name": rng.choice(TOOLS), "tool_args": {"q": self.word()},
                       "tool_result": self.text(min(5000, self.length() * 4))}
            else:
                msg = {"role": rng.choice(("user", "assistant")), "content": self.text(self.length())}
            msg["created_at"] = at
            msg["event_key"] = f"{session}:{i}"  # a bulk importer's own stable key (as `import` uses)
            yield session, msg

    def queries(self, n: int) -> list[str]:
        """Varied keyword queries: 1–6 words, common and rare, some with stop words and punctuation."""
        rng = self.rng
        out = []
        for i in range(n):
            k = rng.choice((1, 1, 2, 2, 2, 3, 3, 4, 5, 6))
            words = [self.words[rng.randrange(200)] if rng.random() < 0.4 else self.word() for _ in range(k)]
            if i % 7 == 0:
                words = ["what", "did", "we", "say", "about", *words]
            if i % 11 == 0:
                words[-1] += "?"
            if i % 13 == 0:
                words.append(self.words[rng.randrange(len(self.words))])  # a rare word
            out.append(" ".join(words))
        return out


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summary_ms(samples_s: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in samples_s]
    return {"p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95), "mean_ms": statistics.fmean(ms) if ms else 0.0}


class Timer:
    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


def table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    """A Markdown table (also readable on a terminal)."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *(line(r) for r in rows)])


def write_section(heading: str, body: str) -> None:
    """Replace (or add) the `## heading` section of bench/RESULTS.md; other sections are kept."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.strip() == f"## {heading}"), None)
    block = [f"## {heading}", "", *body.strip("\n").splitlines(), ""]
    if start is None:
        lines = [*lines, "", *block] if lines and lines[-1].strip() else [*lines, *block]
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        lines = lines[:start] + block + lines[end:]
    RESULTS.write_text("\n".join(lines).rstrip("\n") + "\n")


def machine() -> str:
    import os
    import platform
    import sqlite3

    return f"{platform.python_implementation()} {platform.python_version()}, SQLite {sqlite3.sqlite_version}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"
