"""Diversity: ten places should hold ten different pieces of evidence.

Two stages after the ranking, both reordering only (nothing is dropped; what is moved
down stays reachable past the page):

- **near-duplicates collapse** for every query: a hit whose words are (almost) those of
  a better hit — "note 3", "note 11", the same sentence pasted again — moves below the
  hits that say something else. Words are compared as sets (Jaccard ≥ `DUPLICATE`, 0.8: one word in ten differs).
- **a per-session cap** for aggregation and comparison questions ("how many", "how long
  between", "all the", "which … first", "what changed"): their evidence sits in several
  sessions, so past `cap` hits of one session the rest of it waits below the other
  sessions' hits.
"""

from __future__ import annotations

import re

from ..records import Hit

DUPLICATE = 0.8
AGGREGATE = re.compile(
    r"\bhow (?:many|much|often|long (?:between|after|before|ago|did|has|have|was))\b|\ball (?:the|of)\b|\bwhich\b.*\bfirst\b"
    r"|\bwhat changed\b|\bin total\b|\bhow long\b|\bevery time\b|\bcount\b|\blist\b|\bwhat (?:are|were) (?:some|the)\b",
    re.IGNORECASE,
)
WORD = re.compile(r"\w+")


def aggregates(query: str) -> bool:
    """Whether a query asks for evidence gathered across the conversation."""
    return AGGREGATE.search(query) is not None


WORDS_COMPARED = 64  # the opening words of a message are enough to tell a repeat
WINDOW_MOST = 60  # past this rank a repeat costs no one a place on the page


def _words(h: Hit) -> frozenset[str]:
    return frozenset(WORD.findall((h.message.content or "")[: WORDS_COMPARED * 12].lower())[:WORDS_COMPARED])


def _same(a: frozenset[str], b: frozenset[str]) -> bool:
    small, large = sorted((len(a), len(b)))
    if small < DUPLICATE * large:  # the Jaccard index is at most small / large
        return False
    return len(a & b) >= DUPLICATE * len(a | b)


def collapse_duplicates(hits: list[Hit], window: int) -> list[Hit]:
    """Within the first `window` hits, near-duplicates of a better hit move below the rest."""
    kept: list[Hit] = []
    seen: list[frozenset[str]] = []
    later: list[Hit] = []
    for h in hits[:window]:
        words = _words(h)
        if words and any(_same(words, s) for s in seen):
            later.append(h)
            continue
        seen.append(words)
        kept.append(h)
    return kept + later + hits[window:]


def cap_sessions(hits: list[Hit], cap: int, window: int) -> list[Hit]:
    """Within the first `window` hits, at most `cap` of one session come before the others."""
    if cap <= 0:
        return hits
    count: dict[str, int] = {}
    first: list[Hit] = []
    later: list[Hit] = []
    for h in hits[:window]:
        n = count.get(h.message.session, 0)
        (first if n < cap else later).append(h)
        count[h.message.session] = n + 1
    return first + later + hits[window:]


def diversify(hits: list[Hit], query: str, limit: int, cap: int) -> list[Hit]:
    """Both stages over the hits a page of `limit` draws from (the first 2 × limit, at
    least 20, at most `WINDOW_MOST`)."""
    window = min(max(limit * 2, 20), WINDOW_MOST)
    hits = collapse_duplicates(hits, window)
    return cap_sessions(hits, cap, window) if aggregates(query) else hits
