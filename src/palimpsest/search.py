"""Search: keyword (BM25), substring and regex modes, and hybrid ranking.

User text is never parsed as FTS syntax: the query is cut into words and each word is
quoted before it reaches the backend, so quotes, `NEAR`, `*`, `-` and parentheses are
just text. A query is first matched with all its (non-stop) words; when nothing matches
them all it falls back to any word, and the result says so (`match: "any"`).
"""

from __future__ import annotations

import itertools
import re
import time
from dataclasses import dataclass, field
from typing import Any

import regex

from .errors import InvalidInput
from .records import Hit, Message
from .store import Filters, Store

WORD_RE = re.compile(r"[\w][\w'’.-]*[\w]|[\w]", re.UNICODE)
MAX_QUERY_CHARS = 10_000
MAX_TERMS = 64

STOP_WORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "aren't", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "i'm", "if", "in", "into", "is", "isn't", "it", "it's", "its", "itself", "just", "let's", "me", "more", "most", "my", "myself", "no", "nor", "not", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "that's", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "what's", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves"]
)


def query_terms(query: str) -> list[str]:
    """Words of a query, lower-cased, stop words dropped (unless nothing else is left)."""
    words = []
    for w in WORD_RE.findall(query.lower()):
        w = w.strip("'’.-")
        if w and w not in words:
            words.append(w)
    content = [w for w in words if w not in STOP_WORDS]
    return (content or words)[:MAX_TERMS]


@dataclass
class SearchResult:
    hits: list[Hit]
    mode: str
    match: str = "all"
    notes: list[str] = field(default_factory=list)
    took_ms: float = 0.0
    facts: list[Any] = field(default_factory=list)  # FactHit: curated facts come first
    summaries: list[dict[str, Any]] = field(default_factory=list)  # summary hits, each expanded
    answer: dict[str, Any] | None = None  # with synthesize=True
    documents: list[Any] = field(default_factory=list)  # ChunkHit of vaults attached to the session or agent

    def to_dict(self) -> dict[str, Any]:
        extra = {"answer": self.answer} if self.answer is not None else {}
        return {**extra,
            "mode": self.mode,
            "match": self.match,
            "notes": self.notes,
            "took_ms": round(self.took_ms, 2),
            "facts": [f.to_dict() for f in self.facts],
            "summaries": self.summaries,
            "documents": [d.to_dict() for d in self.documents],
            "hits": [h.to_dict() for h in self.hits],
        }


def check_query(query: Any) -> str:
    if not isinstance(query, str):
        raise InvalidInput(f"query must be a string, got {type(query).__name__}")
    if len(query) > MAX_QUERY_CHARS:
        query = query[:MAX_QUERY_CHARS]
    return query


def keyword(store: Store, query: str, filters: Filters, limit: int) -> tuple[list[tuple[Message, float]], str]:
    """BM25 hits (raw scores) and whether some matched all words ("all") or none did ("any").

    When fewer than `limit` messages hold every word, the list is filled from any-word
    matches ranked by the same BM25 (which already puts all-word matches first), so
    a candidate pool is never cut short by one missing word."""
    terms = query_terms(query)
    if not terms:
        return [], "all"
    if len(terms) == 1:
        return store.keyword_search(terms, filters, limit, match_all=True), "all"
    held = store.count_matches(terms, filters, limit)  # counting is cheaper than ranking
    if held >= limit:
        return store.keyword_search(terms, filters, limit, match_all=True), "all"
    return store.keyword_search(terms, filters, limit, match_all=False), ("all" if held else "any")


def normalise(scores: list[float]) -> list[float]:
    """BM25 scores within one query, mapped to [0, 1] by the best one."""
    top = max(scores, default=0.0)
    return [s / top if top > 0 else 0.0 for s in scores]


def regex_search(store: Store, pattern: str, filters: Filters, limit: int, budget_s: float = 2.0) -> tuple[list[Message], list[str]]:
    """Messages whose content or tool result match `pattern`, in index order. The whole
    scan, including each single match attempt, is bounded by `budget_s` seconds (the
    `regex` module's timeout), so a pathological pattern cannot hang the server."""
    try:
        rx = regex.compile(pattern)
    except regex.error as exc:
        raise InvalidInput(f"invalid regular expression: {exc}") from None
    found: list[Message] = []
    deadline = time.monotonic() + budget_s
    after = 0
    try:
        while len(found) < limit and (page := store.scan(filters, 500, after)):
            for rowid, m in page:
                after = rowid
                left = max(0.001, deadline - time.monotonic())
                if rx.search(m.content, timeout=left) or (m.tool_result and rx.search(m.tool_result, timeout=left)):
                    found.append(m)
                    if len(found) >= limit:
                        break
            if time.monotonic() > deadline:
                raise TimeoutError
    except TimeoutError:
        return found, [f"regex scan stopped after {budget_s:.1f}s; results are partial"]
    return found, []


# -- hybrid ranking ----------------------------------------------------------------
@dataclass
class Weights:
    fts: float = 0.3
    semantic: float = 0.3
    temporal: float = 0.05
    importance: float = 0.1
    decay_clock: str = "created"
    reinforcement_cap: int = 10
    decay_rate: float = 0.05
    reply: float = 0.5  # share of its reply's lead a turn inherits (conversation_rerank)
    speaker: float = 0.15  # bonus for turns by whom the query is about (conversation_rerank)


def temporal_score(m: Message, now_days: float, w: Weights) -> float:
    """e^(−rate·days since the clock) · (1 + 0.02·min(access_count, cap)), capped at 1."""
    clock = m.last_accessed_at if (w.decay_clock == "accessed" and m.last_accessed_at) else m.created_at
    days = max(0.0, now_days - _days(clock))
    boost = 1 + 0.02 * min(m.access_count, w.reinforcement_cap)
    return min(1.0, pow(2.718281828459045, -w.decay_rate * days) * boost)


def _days(stamp: str) -> float:
    from .records import parse_time

    return parse_time(stamp).timestamp() / 86400.0


@dataclass
class Candidates:
    """Everything known about the messages either retriever proposed."""

    messages: dict[str, Message] = field(default_factory=dict)
    fts: dict[str, float] = field(default_factory=dict)  # normalised BM25
    semantic: dict[str, float] = field(default_factory=dict)  # cosine
    fts_rank: dict[str, int] = field(default_factory=dict)
    sem_rank: dict[str, int] = field(default_factory=dict)


def _stretch(scores: dict[str, float]) -> dict[str, float]:
    """Cosines mapped to [0, 1] within one query (best → 1, worst candidate → 0), so the
    semantic part spreads like the normalised BM25 part instead of sitting in 0.2–0.6."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    span = hi - lo
    return {k: ((v - lo) / span if span > 1e-9 else 1.0) for k, v in scores.items()}


def combine(c: Candidates, w: Weights, recipe: str, now_days: float) -> list[Hit]:
    """Rank candidates by the named recipe: `hybrid` (weighted sum) or `rrf`."""
    hits = []
    sem = _stretch(c.semantic)
    for mid, m in c.messages.items():
        parts = {
            "fts": c.fts.get(mid, 0.0),
            "semantic": sem.get(mid, 0.0),
            "temporal": temporal_score(m, now_days, w),
            "importance": m.importance,
        }
        if recipe == "rrf":
            score = sum(1.0 / (60 + r) for r in (c.fts_rank.get(mid), c.sem_rank.get(mid)) if r is not None)
            score += 0.001 * (parts["temporal"] + parts["importance"])  # tie-break only
        else:
            score = w.fts * parts["fts"] + w.semantic * parts["semantic"] + w.temporal * parts["temporal"] + w.importance * parts["importance"]
        hits.append(Hit(m, score, parts))
    hits.sort(key=lambda h: (-h.score, h.message.created_at, h.message.id))
    return hits


# Who a query is about. A query written in the first person is the user's (recall builds
# its query from the user's turn): "my dog" was talked about in the user's own turns. A
# query about what the assistant said ("you recommended", "our previous conversation")
# is about the assistant's turns; a query naming a speaker is about that speaker's turns.
FIRST_PERSON = re.compile(r"\b(?:i|i'm|i’m|i've|i’ve|i'd|i’d|i'll|i’ll|me|my|mine|myself)\b", re.IGNORECASE)
ABOUT_ASSISTANT = re.compile(
    r"\byou(?:\s+\w+)?\s+(?:told|said|mentioned|recommended|suggested|provided|gave|listed|shared|wrote|explained|described|showed)\b"
    r"|\bdid you\s+(?:\w+\s+)?(?:tell|say|mention|recommend|suggest|provide|give|list|share|write|explain|describe|show)\b"
    r"|\b(?:we|you and i)\s+(?:\w+\s+)?(?:discuss(?:ed)?|talk(?:ed)?|spoke|speak|chat(?:ted)?|went over|go over)\b"
    r"|\bour\s+(?:previous|last|earlier|past)\s+(?:conversation|chat|discussion|talk)\b",
    re.IGNORECASE,
)
SPEAKER_KEYS = ("speaker", "name", "author")  # as the indexer's search context


def speaker_of(m: Message) -> str:
    meta = m.metadata
    if meta:
        for k in SPEAKER_KEYS:
            value = meta.get(k)
            if isinstance(value, str) and value.strip():
                return value
    return ""


def query_subject(query: str, speakers: set[str]) -> tuple[str, str] | None:
    """Whose turns a query is about: ("speaker", name) when it names exactly one of
    `speakers`, else ("role", "assistant") when it asks what the assistant said, else
    ("role", "user") when it speaks in the first person; None when it says nothing of it."""
    named = {s for s in speakers if re.search(r"(?<!\w)" + re.escape(s) + r"(?!\w)", query, re.IGNORECASE)}
    if len(named) == 1:
        return "speaker", named.pop()
    if named:
        return None
    if ABOUT_ASSISTANT.search(query):
        return "role", "assistant"
    if FIRST_PERSON.search(query):
        return "role", "user"
    return None


def _replies(hits: list[Hit]) -> dict[str, Hit]:
    """Candidate id → the candidate that is its reply: the next message of the same
    session, recognised by its search context, which ends with the turn it follows."""
    from .indexer import CONTEXT_PREVIOUS_CHARS

    by_journal: dict[tuple[str, str], list[Hit]] = {}
    for h in hits:
        by_journal.setdefault((h.message.session, h.message.journal_path), []).append(h)
    out: dict[str, Hit] = {}
    for group in by_journal.values():
        group.sort(key=lambda h: h.message.journal_line)
        for turn, reply in itertools.pairwise(group):
            head = turn.message.content[:CONTEXT_PREVIOUS_CHARS]
            if head and reply.message.context.endswith(head):
                out[turn.message.id] = reply
    return out


def conversation_rerank(hits: list[Hit], query: str, w: Weights) -> list[Hit]:
    """Re-rank hybrid hits by the shape of a conversation, in two steps:

    - a turn inherits `w.reply` × how far its reply out-scores it (the reply is about the
      turn: "What breed is Max?" is answered by the assistant's "Golden Retrievers like
      Max…", whose turn before it, the user's, holds the fact in other words);
    - turns by whom the query is about gain `w.speaker` (`query_subject`).

    Both read only the candidates (no store access)."""
    if not hits or (w.reply <= 0 and w.speaker <= 0):
        return hits
    if w.reply > 0:
        base = {h.message.id: h.score for h in hits}
        replies = _replies(hits)
        for h in hits:
            reply = replies.get(h.message.id)
            lead = base[reply.message.id] - base[h.message.id] if reply is not None else 0.0
            if lead > 0:
                h.parts["reply"] = lead
                h.score += w.reply * lead
    speakers = [speaker_of(h.message) for h in hits] if w.speaker > 0 else []
    subject = query_subject(query, set(speakers) - {""}) if w.speaker > 0 else None
    if subject is not None:
        kind, who = subject
        for h, speaker in zip(hits, speakers):
            if (speaker if kind == "speaker" else h.message.role) == who:
                h.parts["speaker"] = 1.0
                h.score += w.speaker
    hits.sort(key=lambda h: (-h.score, h.message.created_at, h.message.id))
    return hits


def embedding_text(m: Message) -> str:
    """What a message's vector stands for: its text, and for tool calls the call and output head."""
    speaker = (m.metadata or {}).get("speaker")
    text = f"{speaker}: {m.content}" if speaker and m.content else m.content
    if m.tool_name or m.tool_result:
        text = f"{text}\n[{m.tool_name or 'tool'}] {(m.tool_result or '')[:2000]}".strip()
    if m.context:
        text = f"{text}\n({m.context[:400]})"
    return text


def session_boost(hits: list[Hit], weight: float) -> list[Hit]:
    """Light re-ranking: a hit gains `weight` × (the mean score of the other candidates
    of its session, relative to the best score), so a session that answers the question
    in several turns rises together — what session-level questions need."""
    if weight <= 0 or not hits:
        return hits
    top = max(h.score for h in hits) or 1.0
    by_session: dict[str, list[float]] = {}
    for h in hits:
        by_session.setdefault(h.message.session, []).append(h.score)
    for h in hits:
        scores = by_session[h.message.session]
        others = (sum(scores) - h.score) / max(1, len(scores) - 1) if len(scores) > 1 else 0.0
        h.parts["session"] = others / top
        h.score += weight * h.parts["session"]
    hits.sort(key=lambda h: (-h.score, h.message.created_at, h.message.id))
    return hits
