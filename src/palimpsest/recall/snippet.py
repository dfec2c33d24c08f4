"""A recalled text cut to the part a query asks about: the sentences that share most of its
words, in their order, each gap marked `…` (used by `pack.py` for all but the best hits)."""

from __future__ import annotations

import re

from ..tokens import count_tokens, truncate_to_tokens

GAP = "…"
CHARS_PER_TOKEN = 4
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\d+(?:[.,:]\d+)*(?:st|nd|rd|th|am|pm)?|[^\W\d_]+")


def query_words(query: str) -> set[str]:
    """The query's content words as the snippet compares them (stems, numbers as digits)."""
    from ..facts.curator import tokens

    return set(tokens(query))


def _words(sentence: str) -> set[str]:
    """A sentence's words, stemmed as `query_words` stems them (stop words are harmless
    here: the query has none) — lighter than `curator.tokens`, which ran per sentence."""
    from ..facts.slots import stem

    return {stem(w) for w in _WORD.findall(sentence.lower())}


def snippet(text: str, keep: int, words: set[str], cap: int, over: bool = False) -> str:
    """`text` within `cap` tokens: its first `keep` characters (the speaker), then the
    sentences that share most words with the query (earlier first on a tie), in their
    order, each gap marked `…`. A text within the cap comes back as it is (`over`: the
    caller has counted it and knows it is not, so it is not tokenized again)."""
    if not over and count_tokens(text) <= cap:
        return text
    head, body = text[:keep], text[keep:]
    sentences = _SENTENCE.split(body)
    room = cap - count_tokens(head) - 2  # the gap marks
    # estimated (~4 characters a token), not counted: one tokenizer call per sentence was
    # most of a recall's time; the caller cuts the result to the exact cap
    costs = [len(s) // CHARS_PER_TOKEN + 1 for s in sentences]
    order = sorted(range(len(sentences)), key=lambda i: (-len(words.intersection(_words(sentences[i]))), i))
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
