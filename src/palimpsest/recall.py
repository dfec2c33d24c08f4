"""System-owned recall: the memory block the model sees before every turn.

`recall(memory, session, query, budget)` gathers candidates from every long-term source
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

Every stored text passes through `envelope.escape` first, and the whole block is counted
with `tokens.count_tokens`; a budget too small for the envelope yields an empty block.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from . import envelope
from .errors import InvalidInput
from .tokens import count_tokens, truncate_to_tokens

if TYPE_CHECKING:
    from .memory import Memory

HEADER = "## Recalled memory (auto, system-owned)"
DEFAULT_BUDGET = 4000
LIVE_TAIL = 6
LIVE_SHARE = 0.25  # at most this share of the budget goes to the live tail
LINE_TOKENS = 400  # one recalled item never takes more than this

SkillSource = Callable[["Memory", str | None, str], list[dict[str, Any]]]
SKILL_SOURCES: list[SkillSource] = []  # the skills part registers itself here


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
        return f"- [{self.id} · {self.date}] {self.text}"

    def prepare(self) -> int:
        """Escape and cut the text (once); return the line's tokens with its newline.
        The tokenizer splits on whitespace first, so prefix and text count separately."""
        if not self.tokens:
            # cut by characters first (no token is longer than ~16 characters), so a 50 KB
            # message is not escaped and tokenized whole to show its first lines
            self.text, self.tokens = truncate_to_tokens(envelope.escape(_flatten(self.text[: LINE_TOKENS * 16])), LINE_TOKENS)
        return count_tokens(f"- [{self.id} · {self.date}]") + self.tokens + 1


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


def recall(memory: Memory, session: str | None, query: str, budget: int = DEFAULT_BUDGET, *, now: Any = None,
           live_tail: int = LIVE_TAIL, limit: int = 20, tag: str | None = None) -> Recall:
    """The recall block for a turn of `session` about `query`, within `budget` tokens."""
    started = time.perf_counter()
    budget = check_budget(budget)
    if not isinstance(query, str):
        raise InvalidInput("query must be a string")
    notes: list[str] = []
    live = _live_tail(memory, session, live_tail)
    live_ids = {i.id for i in live}
    result = memory.search(query, limit=limit, now=now, tag=tag) if query.strip() else None
    if result is not None:
        notes.extend(result.notes)
    long_term = _facts(result) + _skills(memory, session, query) + _symbols(memory, session, query)
    found = _summaries(result) + _wiki(memory, session, query) + _documents(memory, session, query)
    found += _messages(memory, result, live_ids, long_term)
    long_term += sorted(found, key=lambda i: -i.score)  # summaries and turns compete on one score
    items, used, block = _fill(long_term, live, budget)
    if not items and budget and count_tokens(envelope.wrap(HEADER)) > budget:
        notes.append(f"a budget of {budget} tokens cannot hold the envelope; nothing recalled")
    return Recall(session, query, budget, items, used, block, (time.perf_counter() - started) * 1000, notes)


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
    while chosen:  # the exact count of the assembled block has the last word
        block = envelope.wrap("\n".join([HEADER, *(i.line() for i in chosen)]))
        tokens = count_tokens(block)
        if tokens <= budget:
            return chosen, tokens, block
        chosen.pop()
    return [], 0, ""


def _facts(result: Any) -> list[RecallItem]:
    items = []
    for hit in result.facts if result is not None else []:
        f = hit.fact
        sources = [a.source for a in f.attestations]
        items.append(RecallItem(f.id, "fact", f.valid_from[:10], f.text, 1.0 + hit.score, None, sources))
    return items


def _documents(memory: Memory, session: str | None, query: str) -> list[RecallItem]:
    """Chunks of the document vaults attached to the session (or its agent) that the
    agent may read, when they are close enough to the turn."""
    if not session or not query.strip():
        return []
    from .vaults import vaults_of

    hits = vaults_of(memory).search(query, session=session, limit=5, min_similarity=0.35).hits
    return [RecallItem(h.id, "document", h.indexed_at[:10], f"{h.document}{' › ' + h.heading_path if h.heading_path else ''}: {h.text}",
                       h.score, session, [h.document]) for h in hits]


def _wiki(memory: Memory, session: str | None, query: str) -> list[RecallItem]:
    """The best-matching topic pages' statements, each with its sources."""
    if not query.strip():
        return []
    from .wiki import recall_items

    return [RecallItem(w["id"], "wiki", w["date"], w["text"], w["score"], session, list(w["sources"]))
            for w in recall_items(memory, session, query)]


def _summaries(result: Any) -> list[RecallItem]:
    return [RecallItem(s["id"], "summary", s["latest_at"][:10], s["content"], s["score"], s.get("session_id"))
            for s in (result.summaries if result is not None else [])]


def _skills(memory: Memory, session: str | None, query: str) -> list[RecallItem]:
    from . import vaults  # noqa: F401 — importing it registers the skill vaults' source

    items = []
    for source in SKILL_SOURCES:
        for s in source(memory, session, query):
            items.append(RecallItem(s["id"], "skill", s.get("date", "skill"), s["text"], 2.0, session))
    return items


def _symbols(memory: Memory, session: str | None, query: str) -> list[RecallItem]:
    """Code symbols the turn names, from the code graph of the session's project (its
    accepted `project:` tag), when that repository is indexed."""
    if not session or not query.strip():
        return []
    from .code import symbols_mentioned

    projects = [t.split(":", 1)[1] for t in memory.tags.session_tags([session]).get(session, []) if t.startswith("project:")]
    items = []
    for project in projects:
        for sym in symbols_mentioned(query, project, settings=memory.settings):
            items.append(RecallItem(f"sym_{sym.id}", "symbol", "code", sym.brief(), 1.5, session))
    return items


def _messages(memory: Memory, result: Any, live_ids: set[str], shown: list[RecallItem]) -> list[RecallItem]:
    if result is None:
        return []
    attested = {s for item in shown for s in item.sources}
    retired = _retired_sources(memory, [h.message.id for h in result.hits])
    items = []
    seen_text: set[str] = set()
    for h in result.hits:
        m = h.message
        key = _flatten(m.content).casefold()
        if m.id in live_ids or m.id in attested or m.id in retired or (key and key in seen_text):
            continue
        seen_text.add(key)
        items.append(RecallItem(m.id, "message", m.created_at[:10], _message_text(m), h.score, m.session))
    return items


def _retired_sources(memory: Memory, ids: list[str]) -> set[str]:
    """Messages whose only facts were superseded, retracted or closed: what they say is
    no longer believed, so they must not bring a retired fact back into recall."""
    if not ids:
        return set()
    retired = set()
    for mid in ids:
        facts = memory.facts.query(source=mid) if _attests_any(memory, mid) else None
        if facts is not None and not facts:
            retired.add(mid)
    return retired


def _attests_any(memory: Memory, message_id: str) -> bool:
    from .store.facts_base import FactQuery

    return bool(memory.store.query_facts(FactQuery(source=message_id, limit=1)))


def _live_tail(memory: Memory, session: str | None, n: int) -> list[RecallItem]:
    if not session or n <= 0:
        return []
    recent = memory.browse(session=session, limit=n, newest_first=True)
    return [RecallItem(m.id, "live", "live tail", _message_text(m), 0.0, session) for m in reversed(recent)]
