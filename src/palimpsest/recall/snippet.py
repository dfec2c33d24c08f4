"""A recalled text cut to the part a query asks about: the sentences that share most of its
words, in their order, each gap marked `…` (used by `pack.py` for all but the best hits)."""

from __future__ import annotations

import re

from ..tokens import count_tokens, truncate_to_tokens

GAP = "…"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def query_words(query: str) -> set[str]:
    """The query's content words as the snippet compares them (stems, numbers as digits)."""
    from ..facts.curator import tokens

    return set(tokens(query))


def snippet(text: str, keep: int, words: set[str], cap: int) -> str:
    """`text` within `cap` tokens: its first `keep` characters (the speaker), then the
    sentences that share most words with the query (earlier first on a tie), in their
    order, each gap marked `…`. A text within the cap comes back as it is."""
    if count_tokens(text) <= cap:
        return text
    from ..facts.curator import tokens

    head, body = text[:keep], text[keep:]
    sentences = _SENTENCE.split(body)
    room = cap - count_tokens(head) - 2  # the gap marks
    costs = [count_tokens(s) + 1 for s in sentences]
    order = sorted(range(len(sentences)), key=lambda i: (-len(words.intersection(tokens(sentences[i]))), i))
    kept: set[int] = set()
    for i in order:
        if costs[i] <= room:
            kept.add(i)
            room -= costs[i]
    if not kept:  # one long sentence: its start, cut
        return f"{head}{truncate_to_tokens(sentences[order[0]], max(1, room))[0]} {GAP}"
    parts, last = [], -1
    for i in sorted(kept):
        if i != last + 1:
            parts.append(GAP)
        parts.append(sentences[i])
        last = i
    if last != len(sentences) - 1:
        parts.append(GAP)
    return head + " ".join(parts)
