"""Diversity: ten places should hold ten different pieces of evidence.

Four stages after the ranking:

- **copies fold** into the better hit, over every candidate: the same text after whitespace
  and case folding. The hit kept counts them in `parts["copies"]`, shown as "and N more like
  it". A fitness bot's two small-talk lines, said in seven sessions, held 8 of 10 places for
  "what workout do i do on tuesdays?".

The other three reorder only (nothing is dropped; what is moved down stays reachable past the page):

- **a template's repeats go last**, over every candidate: past its first `TEMPLATE_PLACES`
  lines, a line that is another's with other numbers ("qa status 31: working on T-4, tests
  passed", "qa status 32: …") waits below every other hit, its newest excepted, when such
  repeats hold most of the places the collapse below reads (its window). Four agents' 720
  status lines had filled that window and left out all five QA failures asked for; six monthly
  weigh-ins, four repeats in twenty places, keep theirs. They are moved, not folded: a template's numbers are often what is asked
  ("Weigh-in today: I'm at 82 kg." / "… 80 kg." / "… 78 kg.", twenty invoices by order number).
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
TEMPLATE_PLACES = 2  # a value and the one it replaced ("gym moved to 6 pm" / "… 7 pm") keep their places
NUMBER = re.compile(r"\d+")
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


def _folded(h: Hit) -> str:
    return " ".join((h.message.content or "").split()).casefold()


def fold_copies(hits: list[Hit]) -> list[Hit]:
    """Hits without the exact copies of a better hit, each counted in its `parts["copies"]`."""
    heads: dict[str, Hit] = {}
    kept: list[Hit] = []
    for h in hits:
        text = _folded(h)
        if text and text in heads:
            heads[text].parts["copies"] = heads[text].parts.get("copies", 0) + 1
            continue
        heads[text] = h
        kept.append(h)
    return kept


def _repeats(hits: list[Hit]) -> set[str]:
    """The ids of a template's lines past its first `TEMPLATE_PLACES`, its newest line excepted: the latest
    weigh-in is what "what did my latest weigh-in say?" asks, however it ranks among the others."""
    lines: dict[str, list[Hit]] = {}
    for h in hits:
        template = NUMBER.sub("#", _folded(h))
        if template:
            lines.setdefault(template, []).append(h)
    newest = {max(same, key=lambda h: h.message.created_at).message.id for same in lines.values()}
    return {h.message.id for same in lines.values() for h in same[TEMPLATE_PLACES:]} - newest


def templates_last(hits: list[Hit], window: int) -> list[Hit]:
    """Hits with a template's repeats (`_repeats`) moved below all others when they hold most of the first
    `window`: four agents' status lines held all of it, six monthly weigh-ins four of twenty places, and moving
    those had put lines about bathroom scales above them."""
    repeats = _repeats(hits)
    if 2 * sum(h.message.id in repeats for h in hits[:window]) <= window:
        return hits
    return [h for h in hits if h.message.id not in repeats] + [h for h in hits if h.message.id in repeats]


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
    """Copies folded and templates' repeats moved last over every hit, then the other two
    stages over the hits a page of `limit` draws from (the first 2 × limit, at least 20, at
    most `WINDOW_MOST`)."""
    window = min(max(limit * 2, 20), WINDOW_MOST)
    hits = collapse_duplicates(templates_last(fold_copies(hits), window), window)
    return cap_sessions(hits, cap, window) if aggregates(query) else hits
