"""System-owned recall: the memory block the model sees before every turn.

`Recaller.recall(session, query, budget)` gathers candidates from every long-term source
— current facts, past messages (hybrid search), summaries and skills when those exist —
plus the live tail (the running session's latest events), removes repeats (a fact and the
message it was heard in are shown once; a message that only restates a retired fact is
not shown at all), and fills the token budget best-first. Facts lead, because a curated
statement beats the turn it came from; within each part, the hybrid score orders.

Each line carries an id and an absolute date, so a claim can be traced to its turn:

    <system-reminder>
    ## Recalled memory (auto, system-owned)
    - [fct_0192 · 2026-03-04] the retry cap matches the upstream timeout
    - [evt_004583 · live tail] working on the swarm trigger
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
from ..tokens import count_tokens, count_tokens_batch, estimate_tokens, truncate_to_tokens

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

    def line(self) -> str:
        return f"- [{envelope.field(self.id)} · {envelope.field(self.date)}] {self.text}"

    def prepare(self) -> int:
        """Escape and cut the text (once); return the line's tokens with its newline, as
        estimated (`tokens.estimate_tokens`): candidates are weighed by estimate and the
        assembled block is counted exactly (`_fill`). Only a text that may be near
        `LINE_TOKENS` is tokenized, to cut it at a token boundary."""
        if not self.tokens:
            # cut by characters first (no token is longer than ~16 characters), so a 50 KB
            # message is not escaped and tokenized whole to show its first lines
            text = envelope.escape(_flatten(self.text[: LINE_TOKENS * 16]))
            estimate = estimate_tokens(text)
            self.text, self.tokens = truncate_to_tokens(text, LINE_TOKENS) if estimate > LINE_TOKENS // 2 else (text, estimate)
        return estimate_tokens(f"- [{envelope.field(self.id)} · {envelope.field(self.date)}]") + self.tokens + 1


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


def _message_text(m: Any) -> str:
    speaker = (m.metadata or {}).get("speaker")
    text = m.content or ""
    if not text and (m.tool_name or m.tool_result):
        text = f"[{m.tool_name or 'tool'}] {(m.tool_result or '')[:300]}"
    who = speaker or m.role or ""
    return f"{who}: {text}" if who else text


def check_budget(budget: Any) -> int:
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 0:
        raise InvalidInput("budget must be a non-negative integer of tokens")
    return min(budget, 200_000)


def _fill(long_term: list[RecallItem], live: list[RecallItem], budget: int) -> tuple[list[RecallItem], int, str]:
    """Best-first into the budget: long-term items, then the live tail (within its share)."""
    frame = envelope.wrap(HEADER)
    used = count_tokens(frame) + 1
    if used > budget:
        return [], 0, ""
    chosen: list[RecallItem] = []
    live_budget = int(budget * LIVE_SHARE)
    for group, cap in ((long_term, budget), (live, None)):
        spent_here = 0
        for item in group:
            if budget - used < 12:
                break  # not even a short line fits any more
            cost = item.prepare()
            if used + cost > budget or (cap is None and spent_here + cost > live_budget):
                continue
            chosen.append(item)
            used += cost
            spent_here += cost
    if chosen:  # the costs were estimates: the chosen lines counted exactly, in one call, and those that fit kept
        used = count_tokens(frame) + 1
        kept = []
        for item, exact in zip(chosen, count_tokens_batch([i.line() for i in chosen])):
            if used + exact + 1 <= budget:
                kept.append(item)
                used += exact + 1
        chosen = kept
    while chosen:  # the exact count of the assembled block has the last word
        block = envelope.wrap("\n".join([HEADER, *(i.line() for i in chosen)]))
        tokens = count_tokens(block)
        if tokens <= budget:
            return chosen, tokens, block
        chosen.pop()
    return [], 0, ""


