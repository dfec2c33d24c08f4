"""Retired statements stay out of recall by every path, echoes included (issue 20, finding 4).

A superseded, retracted or closed fact never reaches recall as a fact; this module keeps
out the messages that would bring it back:

- its **source**, when every fact heard in that message is retired (nothing it says is
  still believed);
- any message that **restates** a retired fact and was said in the turn where it was
  heard — the stating message itself, or the reply that echoes it ("Got it, Vim and
  Tuesday 9." after "Our standup is on Tuesday at 9." was superseded by Thursday).

"Restates" is decided on the words of the statement (`facts.curator.tokens`: content
words, numbers, negation): for a superseded fact, the message carries a word of the
retired value (in the old text, not in its successor) and none of the new one (a message
that names both is about the change, and stays); for a retracted or closed fact, it
carries at least half of the fact's words. A turn is a user message and what follows it
up to the next user message, as in distillation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from ..errors import NotFound
from ..kernel import Kernel
from ..records import Message, iso, parse_time
from ..store import Filters
from ..store.facts_base import FactQuery

if TYPE_CHECKING:
    from . import Fact, Facts

# words a value change leaves behind that say nothing by themselves ("on Tuesday" → "to Thursday")
FUNCTION_WORDS = frozenset(["on", "at", "in", "to", "for", "with", "from", "into", "onto", "of", "off", "out", "up", "over",
                            "under", "about", "than", "then", "will", "would", "can", "could", "should", "mov", "chang", "switch"])
SAME_MOMENT = 4  # user messages said at one moment that a reply's turn is looked for among
RETIRED = ("superseded", "retracted", "closed")  # revised and merged facts live on in their successor


# a time of day or a day written with digits is one word: the retired "every Monday at 10:00 UTC" had been said again by
# every October date ("2026-10-26": its "10"), and 71 of 141 summary lines were marked "in part no longer holds" (found by
# an on-call team's lead)
_CLOCK_OR_DAY = re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}:\d{2}(?::\d{2})?\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b")


def _words(text: str, shortest: int = 3) -> set[str]:
    from .curator import tokens

    text = _CLOCK_OR_DAY.sub(lambda m: re.sub(r"\D", "", m.group()), text)  # ("10:00" is "1000", "2026-10-26" "20261026")
    return {w for w in tokens(text) if w[0].isdigit() or (len(w) >= shortest and w not in FUNCTION_WORDS)}


# what a correction names as left behind: "switched from poetry to uv", "instead of Jenkins", "no longer uses Heroku"
LEFT_BEHIND = re.compile(r"\b(?:from|instead of|rather than|no longer(?: uses?| using)?|replac(?:ed|ing))\s+([\w.+#-]+(?:\s+[\w.+#-]+){0,2}?)"
                         r"(?=\s+(?:to|with|by|for|and|now)\b|[,.;:!)]|$)", re.IGNORECASE)


def restates(text: str, old: Fact, new: Fact | None) -> bool:
    """Whether `text` says again what the retired fact `old` said (see the module doc). What the
    successor names as left behind ("switched from poetry to uv") is a retired word still: a
    correction said that way always names the old value, which had never counted as gone."""
    said, was = _words(text), _words(old.text)
    if new is not None:
        now = _words(new.text) - {w for m in LEFT_BEHIND.finditer(new.text) for w in _words(m.group(1))}
        gone, added = was - now, _words(new.text, 2) - _words(old.text, 2)  # a new value of two letters is one ("uv")
        if gone:
            return bool(said & gone) and not _words(text, 2) & added
    return bool(was) and 2 * len(said & was) >= len(was)


class Echoes:
    """Which recalled messages bring a retired fact back (the module doc), for one recall."""

    def __init__(self, kernel: Kernel, facts: Callable[[], Facts]) -> None:
        self.store, self._facts = kernel.store, facts
        self._heard: dict[str, list[Fact]] = {}
        self._successors: dict[str, Fact | None] = {}
        # a message that says a retired fact beside others of its own that hold: kept, with the retired one it says (found
        # by a companion-bot evaluator: "I live in Lisbon with Sam, our cat Miso, my sister Ana, my brother Tomás in
        # Sintra" left every block when Tomás's home was retired)
        self.partly: dict[str, list[Fact]] = {}  # (every retired fact it says, in the order heard)

    def suppressed(self, messages: list[Message]) -> set[str]:
        out = set()
        for m in messages:
            own = self._heard_in(m.id)
            if own and all(f.status in RETIRED for f in own):
                out.add(m.id)
                continue
            stating = self._turn_start(m)
            heard = own + (self._heard_in(stating.id) if stating is not None and stating.id != m.id else [])
            said = [f for f in heard if f.status in RETIRED and restates(m.content or "", f, self._successor(f))]
            if said and any(f.status not in RETIRED for f in own):
                self.partly[m.id] = said
            elif said:
                out.add(m.id)
        return out

    def restated(self, text: str) -> Fact | None:
        """The first retired fact of those heard in the messages looked at so far (`suppressed`) that `text` says again: a
        summary or a wiki line written before the correction (a summary of "The database is Postgres 14" had stood in
        blocks unmarked after the move to 16)."""
        retired = {f.id: f for facts in self._heard.values() for f in facts if f.status in RETIRED}
        return next((f for f in retired.values() if restates(text, f, self._successor(f))), None)

    def _heard_in(self, message_id: str) -> list[Fact]:
        """Every fact attested by the message, whatever its status (one read per message)."""
        if message_id not in self._heard:
            rows = self.store.query_facts(FactQuery(source=message_id))
            self._heard[message_id] = self._facts()._views(rows) if rows else []
        return self._heard[message_id]

    def _turn_start(self, m: Message) -> Message | None:
        if m.role == "user":
            return m
        # the newest user message said before it, one said at the same moment included (a bulk import's minutes: the
        # reply to the stating turn had found the turn before it, and its echo of a retired value stayed)
        until = iso(parse_time(m.created_at) + timedelta(microseconds=1))
        found = self.store.browse(Filters(session=m.session, role="user", until=until), SAME_MOMENT, 0, newest_first=True)
        return next((u for u in found if (u.created_at, u.id) < (m.created_at, m.id)), None)

    def _successor(self, f: Fact) -> Fact | None:
        if not f.superseded_by:
            return None
        if f.superseded_by not in self._successors:  # (one read per fact: `restated` asks for each summary and wiki line)
            try:
                self._successors[f.superseded_by] = self._facts().get(f.superseded_by)
            except NotFound:  # a successor the store no longer holds: judge on the fact alone
                self._successors[f.superseded_by] = None
        return self._successors[f.superseded_by]
