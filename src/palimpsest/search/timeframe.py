"""Time in the query: a soft boost for messages of the time a question names.

"What did Joanna watch on 1 May, 2022?", "in March 2023", "as of September 2023",
"before June", "last month", "two weeks ago" (relative to the query's `now`): the first
time expression of the query (`when.resolve`) becomes a window — the days it names, or
everything before or after them for "before / until / as of / by" and "after / since",
or the stretch "between X and Y" — and each candidate gains `w_when` × how near its dates
come to it. A message's dates are the day it was said and the days its own time
expressions name ("yesterday", said on 2 May, is 1 May): the same reading the indexer
put into its search context. Nearness is 1 inside the window and decays with the gap
(`e^(−gap/scale)`, scale a quarter of the window, at least three days), so it is never a
filter: a window that holds nothing leaves the ranking as it was.

A question that asks about nothing but a time ("what did I say last week?", "what did we
talk about on Nov 26?", "what did I work on yesterday?") has no words to match and no
meaning to compare: the window is all the evidence it gives. For it the hits are the
messages of that window, read from the store by date (`period_hits`), in the order they
were said.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache

from ..records import Hit, Message, parse_time, said_day
from ..when import Span, resolve
from .query import STOP_WORDS, query_terms

BEFORE = re.compile(r"\b(?:before|until|till|prior to|as of|by|up to)\s+$", re.IGNORECASE)
AFTER = re.compile(r"\b(?:after|since|following)\s+$", re.IGNORECASE)
BETWEEN = re.compile(r"\bbetween\s+$", re.IGNORECASE)
FROM = re.compile(r"\bfrom\s+$", re.IGNORECASE)
TO = re.compile(r"\s*(?:to|until|till|through|thru|and|-|–)\s*", re.IGNORECASE)  # "from March 18 to March 21"
LEADS = re.compile(r"^(?:since|before|after|until|till|by|between|from)\s+", re.IGNORECASE)  # a bound read with its time
# a question asking for a time: "When did …", "What year …", "In which month …", "How long ago …",
# "How many weeks ago …", "Since when …"
ASKS_WHEN = re.compile(r"^\W*(?:(?:since\s+|until\s+)?when\b|(?:in\s+)?(?:what|which)\s+(?:year|month|day|date|week|weekend|time)\b"
                       r"|how\s+(?:long|many\s+(?:days|weeks|months|years))\s+ago\b)", re.IGNORECASE)
EARLIEST, LATEST = date(1000, 1, 1), date(2999, 12, 31)
# what a question about a time asks besides the time: saying, doing, happening — no subject of its own
GENERIC = frozenset([
    "say", "said", "saying", "says", "tell", "told", "telling", "talk", "talked", "talking", "discuss", "discussed",
    "discussing", "discussion", "discussions", "conversation", "conversations", "chat", "chatted", "chatting",
    "mention", "mentioned", "speak", "spoke", "spoken", "write", "wrote", "written", "ask", "asked", "do", "did",
    "done", "doing", "happen", "happened", "happening", "go", "went", "going",
    "anything", "something", "everything", "remember", "recall", "us", "new", "up",
])
WORKED_ON = re.compile(r"\bwork(?:s|ed|ing)?\s+on\b", re.IGNORECASE)
DATED_DAYS = 31  # a window of a month or less: its messages are evidence enough for the floor (`floor.apply_floor`)
AROUND_DAYS = 16  # the widest stretch a message's words name that `around` reads: half a month ("the end of august", a
# week), not a whole month ("my birthday is in August" had answered "what happened on 29 August?")
LATER = 7  # days after a window in which a message may still speak of it ("yesterday", said the day after)


@dataclass(frozen=True)
class Window:
    first: date
    last: date

    @property
    def days(self) -> int:
        return (min(self.last, LATEST) - max(self.first, EARLIEST)).days + 1

    @property
    def scale(self) -> float:
        span = (min(self.last, date(2999, 1, 1)) - max(self.first, date(1001, 1, 1))).days + 1
        return max(3.0, min(span, 120) / 4)

    def nearness(self, first: date, last: date) -> float:
        """1 when [first, last] meets the window, decaying with the gap in days; a stretch far
        wider than the window says less of it, by the square root of how much wider ("this
        year" meets "this weekend", as 1 of its 180 weekend days)."""
        gap = max((self.first - last).days, (first - self.last).days, 0)
        wide = ((last - first).days + 1) / self.days
        return math.exp(-gap / self.scale) / math.sqrt(max(wide, 1.0))


def asked_time(query: str, now: datetime | date | None) -> tuple[Window | None, bool]:
    """The window a query's first time expression names (or None), and whether the query
    asks about nothing but that time — every word outside its time expressions a stop word
    or a verb of saying or doing (`GENERIC`); one reading of the query for both."""
    spans = resolve(query, now)
    window = _window(query, spans)
    if window is None:
        return None, False
    rest = query
    for span in spans:
        rest = rest.replace(span.text, " ")
    rest = BEFORE.sub(" ", AFTER.sub(" ", BETWEEN.sub(" ", rest + " ")))
    # "What did I work on in June?" asks what June's messages hold; "Where did I work in June?" asks for an employer
    # (it had listed June's small talk: found by a new user)
    rest = WORKED_ON.sub(" ", rest)
    return window, all(w in GENERIC or w in STOP_WORDS for w in query_terms(rest))


def query_window(query: str, now: datetime | date | None) -> Window | None:
    """The window a query's first time expression names, or None."""
    return asked_time(query, now)[0]


def period_only(query: str, now: datetime | date | None) -> Window | None:
    """The window of a query that asks about nothing but a time, else None (`asked_time`)."""
    window, only = asked_time(query, now)
    return window if only else None


def period_hits(window: Window, messages: list[Message], weight: float) -> list[Hit]:
    """The messages whose dates meet `window` (the day said, or a day their words name), as
    hits of `weight` with `parts["when"]` 1, in the order they were said; and those whose words name a stretch of at most
    `AROUND_DAYS` that holds it, with their lesser nearness (`around`)."""
    hits = []
    for m in messages:
        near = 1.0 if said_in(window, m) else around(window, m)
        if near > 0:
            hits.append(Hit(m, weight * near, {"when": near, "period": 1.0}))
    hits.sort(key=lambda h: (h.message.created_at, h.message.id))
    return hits


def said_in(window: Window, m: Message) -> bool:
    """Whether `m` was said in `window`, or names a day of it."""
    spans = _message_spans(m.content or "", said_day(m.created_at, m.metadata))
    return any(window.nearness(a, b) >= 1.0 for a, b in spans)


def around(window: Window, m: Message) -> float:
    """How near the stretches of at most `AROUND_DAYS` that `m`'s words name and that meet `window` come to it (0: none):
    "two weeks ago", said on 12 September, is 26 August to 1 September, and "the end of august" the 21st to the 31st;
    "what happened on 29 August?" found neither, said more than a week after the day or weeks before it."""
    spans = _spoken_spans(m.content or "", said_day(m.created_at, m.metadata))
    return max((window.nearness(a, b) for a, b in spans if (b - a).days < AROUND_DAYS and a <= window.last and window.first <= b),
               default=0.0)


def past(window: Window | None, today: date) -> Window | None:
    """`window` when it ends before `today` (the asker's), else None: "at the end of april", "on september 7", "last
    week" and "before June" ask about a past time; "this month", "since March" and a question naming none do not."""
    return window if window is not None and window.last < today else None


def _window(query: str, spans: list[Span]) -> Window | None:
    if not spans:
        return None
    first = spans[0]
    at = query.find(first.text)
    lead = LEADS.match(first.text)  # "since March" read as one expression: bounded by its own first word
    before = (query[:at] if at >= 0 else "") + (lead.group(0) if lead else "")
    if (BETWEEN.search(before) or FROM.search(before) and TO.fullmatch(query[at + len(first.text):query.find(spans[1].text, at + len(first.text))])
            if len(spans) > 1 else False):
        return Window(first.first, max(spans[1].last, first.last))
    if BEFORE.search(before):
        return Window(EARLIEST, first.last)
    if AFTER.search(before):
        return Window(first.first, LATEST)
    ambiguous = [s for s in spans if s.text == first.text]  # "on Friday": the last or the next
    return Window(min(s.first for s in ambiguous), max(s.last for s in ambiguous))


@lru_cache(maxsize=8192)
def _spoken_spans(content: str, day: str) -> tuple[tuple[date, date], ...]:
    """The days a message's own time expressions name, read from `day`: the day it was said
    on its speaker's calendar (`records.said_day`)."""
    return tuple((s.first, s.last) for s in resolve(content, _said(day)))


def _said(day: str) -> date | None:
    try:
        return parse_time(day).date()
    except Exception:  # noqa: BLE001 — a row without a readable time has only its words' dates
        return None


@lru_cache(maxsize=8192)
def _message_spans(content: str, day: str) -> tuple[tuple[date, date], ...]:
    """The day a message was said and the days its words name."""
    said = _said(day)
    return ((said, said),) * (said is not None) + _spoken_spans(content, day)


def dated_boost(hits: list[Hit], query: str, weight: float) -> list[Hit]:
    """For a query asking when, add `weight` to each hit whose words name a time of their own
    ("last Friday", "in 2019", "the 11th": where the answer to "when" is said), best first."""
    if weight <= 0 or not hits or not ASKS_WHEN.search(query):
        return hits
    for h in hits:
        if _spoken_spans(h.message.content or "", said_day(h.message.created_at, h.message.metadata)):
            h.parts["dated"] = 1.0
            h.score += weight
    hits.sort(key=lambda h: (-h.score, h.message.created_at, h.message.id))
    return hits


def when_boost(hits: list[Hit], window: Window | None, weight: float) -> list[Hit]:
    """Add `weight` × nearness to the window to each hit (`parts["when"]`), best first."""
    if window is None or weight <= 0 or not hits:
        return hits
    for h in hits:
        spans = _message_spans(h.message.content or "", said_day(h.message.created_at, h.message.metadata))
        near = max((window.nearness(a, b) for a, b in spans), default=0.0)
        h.parts["when"] = near
        h.score += weight * near
    hits.sort(key=lambda h: (-h.score, h.message.created_at, h.message.id))
    return hits
