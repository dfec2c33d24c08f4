"""System-owned recall: the memory block the model sees before every turn.

`Recaller.recall(session, query, budget)` gathers candidates from every long-term source
— current facts, past messages (hybrid search), summaries and skills when those exist —
plus the live tail (the running session's latest events), removes repeats (a fact and the
message it was heard in are shown once; a message that only restates a retired fact is
not shown at all), marks an item whose value a later one changed (`updates.py`), and fills
the token budget best-first (`pack.py`). Facts lead, because a curated statement beats
the turn it came from; within each part, the hybrid score decides what gets in. Past
turns are then shown in time order under a heading per day.

Each line carries an id, and an absolute date (on the line, or the heading above it), so a
claim can be traced to its turn. A turn's line shows its short id (the last 10 characters
of `evt_…`, `ids.short_id`: 11 tokens where the whole id took 21 of a line's ~45), which
`memory_get_full` and every other reader of message ids take as well:

    <system-reminder>
    ## Recalled memory (auto, system-owned)
    - [fct_0192 · 2026-03-04] the retry cap matches the upstream timeout
    - [fct_0187 · 2026-02-11 · earlier; newer: fct_0192] the retry cap is 20 seconds
    ### 2026-03-04
    - [504511a3f9] Ada: we agreed the retry cap matches the upstream timeout
    - [504583c0de · live tail] working on the swarm trigger
    </system-reminder>

The sources are one list (`Recaller.sources`): each is a function of the turn that
returns its items and says whether they lead (facts, skills, symbols) or compete on one
score (summaries, wiki statements, document chunks, messages).

Every stored text passes through `envelope.escape` first, and the whole block is counted
with `tokens.count_tokens`; a budget too small for the envelope yields an empty block.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .. import envelope
from ..errors import InvalidInput
from ..ids import short_id
from ..segment import plain
from ..tokens import count_tokens, estimate_tokens, truncate_to_tokens
from .snippet import fit, snippet

HEADER = envelope.RECALL_HEADER
DEFAULT_BUDGET = 4000
LIVE_TAIL = 6
LIVE_SHARE = 0.25  # at most this share of the budget goes to the live tail
LINE_TOKENS = 400  # one recalled item never takes more than this
DOCUMENT_MIN_SIMILARITY = 0.35  # a chunk joins recall only this close to the turn


@dataclass
class RecallItem:
    id: str
    kind: str  # fact | message | summary | wiki | document | skill | symbol | live
    date: str  # ISO date, or "live tail"
    text: str
    score: float
    session: str | None = None
    sources: list[str] = field(default_factory=list)
    tokens: int = 0  # of `text`, once prepared
    at: str = ""  # the full time, for the block's time order
    note: str = ""  # shown after the date: "earlier; newer: fct_…" (see `updates.py`)
    keep: int = 0  # characters at the start of `text` that a snippet keeps (the speaker)
    whole: str = field(default="", repr=False)  # the text before `prepare` cut it ("": not cut)
    tool: bool = field(default=False, repr=False)  # a tool's call or output, not anyone's statement

    @property
    def ref(self) -> str:
        """The id the line shows: a turn's short id (`ids.short_id`), any other item's id."""
        return short_id(self.id) if self.kind in ("message", "live") else self.id

    def line(self, dated: bool = True) -> str:
        return f"{self._prefix(dated)} {self.text}"

    def _prefix(self, dated: bool) -> str:
        tags = [envelope.field(self.ref), *([envelope.field(self.date)] if dated else []), *([self.note] if self.note else [])]
        return f"- [{' · '.join(tags)}]"

    def prepare(self, cap: int = LINE_TOKENS, words: set[str] | None = None, dated: bool = True) -> int:
        """Escape the text and cut it to `cap` tokens (once: a snippet of the sentences
        sharing most of `words`, see `snippet.py`); return the line's tokens with its
        newline, as estimated (`tokens.estimate_tokens`): candidates are weighed by estimate
        and the chosen lines counted exactly (`pack.fill`). Only a text that may be near `cap`
        is tokenized, to cut it at a token boundary."""
        if not self.tokens:
            # cut by characters first (no token is longer than ~16 characters), so a 50 KB
            # message is not escaped and tokenized whole to show its first lines
            head = _flatten(self.text[: self.keep]) if self.keep else ""
            text = envelope.escape(_flatten(self.text[: LINE_TOKENS * 16]))
            keep = len(head) + 1 if head and text.startswith(head + " ") else 0
            estimate = estimate_tokens(text)
            if estimate <= cap // 2:
                self.text, self.tokens = text, estimate
            else:
                cut = ""  # far over the cap (every pre-token is at least one token): straight to the snippet
                if estimate <= 3 * cap:
                    cut, self.tokens = truncate_to_tokens(text, cap)  # one tokenizer pass when the text fits
                if cut != text:  # (its lines kept: a pasted block's lines are a snippet's pieces; all of them, as the line
                    # asked about may be the last: a pasted itinerary's reservation code, 38 KB in)
                    lines = envelope.escape(self.text)
                    cut, self.tokens = fit(snippet(lines if lines.startswith(text[:keep]) else text, keep, words or set(), cap,
                                                   over=True), cap)
                self.whole, self.text = (self.text if cut != text else ""), cut
        return estimate_tokens(self._prefix(dated)) + self.tokens + 1

    def shrink(self, by: int, words: set[str] | None = None, least: int = 8) -> bool:
        """Cut the text by `by` tokens, counted exactly (its best sentences for `words`),
        where the exact count of the block found the line over the room left; whether it is
        now that much shorter. A turn over is cut to fit rather than left out, unless fewer
        than `least` tokens would be left of it (a fragment: "Ada: … The invoice …")."""
        before = count_tokens(self.text)
        if before - by < least:
            return False
        saved = self._recut(before - by, words)
        if count_tokens(self.text) > before - by:
            self.text, self.tokens, self.whole = saved
            return False
        return True

    def _recut(self, cap: int, words: set[str] | None) -> tuple[str, int, str]:
        """Prepare the line again from its whole text, cut to `cap`; the state before, to restore."""
        saved = (self.text, self.tokens, self.whole)
        self.text, self.tokens = self.whole or self.text, 0
        self.prepare(min(cap, LINE_TOKENS), words)
        self.whole = saved[2] or self.whole
        return saved

    def widen(self, cap: int, words: set[str] | None = None) -> bool:
        """Show more of a text `prepare` cut, up to `cap` tokens (`LINE_TOKENS` at most);
        whether it changed. `pack.fill` spends a block's unused budget this way."""
        if not self.whole or cap <= self.tokens:
            return False
        saved = self._recut(cap, words)
        if self.tokens <= saved[1]:  # no better than before
            self.text, self.tokens, self.whole = saved
            return False
        return True


@dataclass
class Recall:
    session: str | None
    query: str
    budget: int
    items: list[RecallItem]
    tokens: int
    block: str
    took_ms: float = 0.0
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"session": self.session, "query": self.query, "budget": self.budget, "tokens": self.tokens,
                "took_ms": round(self.took_ms, 2), "notes": self.notes, "items": [asdict(i) for i in self.items],
                "block": self.block}


def _flatten(text: str) -> str:
    return " ".join(text.split())


COMPACTED = "summary of the conversation so far"  # who says a harness's compaction summary


def _message_text(m: Any) -> str:
    text = plain(m.content or "")
    if not text and (m.tool_name or m.tool_result):
        text = f"[{m.tool_name or 'tool'}] {plain(m.tool_result or '')[:300]}"
    who = _who(m)
    return f"{who}: {text}" if who else text


def _who(m: Any) -> str:
    """Who said it, as a line shows it. Claude Code writes its compaction summary as a user
    turn: shown as "user:", it was the user's own words (found by a new user)."""
    meta = m.metadata or {}
    if meta.get("compact_summary"):
        return COMPACTED
    if m.speaker:
        return str(m.speaker)
    # a sub-agent's turns and a model's reasoning are no one's words to the user (found by a Claude Code user: the
    # main agent's Task prompt read "user: Find every caller …", its private reasoning "assistant: The user suspects …")
    if meta.get("sidechain") and m.role in ("user", "assistant"):
        return "agent to sub-agent" if m.role == "user" else "sub-agent"
    if meta.get("thinking") or meta.get("reasoning"):  # (`reasoning`: Codex's summaries as earlier versions stored them)
        return f"{m.role or 'assistant'} (reasoning)"
    if (m.role or "").casefold() in _COMMANDING:  # inside a system-owned block, "system: Policy update: …" read as one (review)
        return f"a past {m.role} message"
    return m.role or ""


_COMMANDING = {"system", "developer", "admin", "root", "operator", "platform"}


def _lead_in(m: Any) -> int:
    """Characters of `_message_text(m)` that name the speaker ("Caroline:"), kept by a snippet."""
    who = _who(m)
    return len(who) + 1 if who else 0


def check_budget(budget: Any) -> int:
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 0:
        raise InvalidInput("budget must be a non-negative integer of tokens")
    return min(budget, 200_000)
