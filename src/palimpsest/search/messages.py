"""Message search: the message source of the hybrid ranking, the query's embedding, and
the three modes (ranked, substring, regex).

A ranked query runs the keyword search while the query is embedded on another thread
(both release the GIL — onnxruntime and SQLite — so on two cores their times overlap),
ranks the union by `hybrid.rank`, then re-ranks by the conversation stages
(`conversation.py`). Without an embedder, or before any vector is indexed, it degrades to
keyword, time and importance and says so in `notes`; it never fails for that reason.
"""

from __future__ import annotations

import re
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, time, timedelta
from functools import cached_property
from typing import Any

import numpy as np

from ..embed import Embedding
from ..errors import Closed, InvalidInput, PalimpsestError
from ..ingest.indexer import split_context
from ..records import Hit, Message, clock_of, iso, parse_time, utcnow
from ..segment import fold, unpainted
from ..store import Filters, Store
from .conversation import acknowledgements_last, answers, conversation_rerank, session_boost
from .diversity import diversify
from .floor import addresses, apply_floor, asked_names, floor_for, introduces, query_names
from .hybrid import Weights, keyword_pool, rank
from .literal import Whole, regex_search, substring_past_cap
from .query import query_terms
from .seeded import seeded_round
from .timeframe import DATED_DAYS, EARLIEST, LATER, LATEST, Window, asked_time, dated_boost, past, period_hits, when_boost

RECIPES = ("hybrid", "rrf")


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
    unknown: list[str] = field(default_factory=list)  # names the query asks about that no message speaks of (the floor's)
    period: Window | None = None  # the days a query asking about nothing but a time asks about (`mode` "period")
    then: Window | None = None  # the past days the query's time names (`timeframe.past`): it asks what held then

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


def temporal_score(m: Message, now_days: float, w: Weights) -> float:
    """e^(−rate·days since the clock) · (1 + 0.02·min(access_count, cap)), capped at 1."""
    clock = m.last_accessed_at if (w.decay_clock == "accessed" and m.last_accessed_at) else m.created_at
    days = max(0.0, now_days - parse_time(clock).timestamp() / 86400.0)
    boost = 1 + 0.02 * min(m.access_count, w.reinforcement_cap)
    return min(1.0, pow(2.718281828459045, -w.decay_rate * days) * boost)


def embedding_text(m: Message) -> str:
    """What a message's vector stands for: its text, and for tool calls the call and output head."""
    content = m.content and unpainted(m.content)  # (a terminal's colour codes are no words)
    text = f"{m.speaker}: {content}" if m.speaker and content else content
    if m.tool_name or m.tool_result:
        text = f"{text}\n[{m.tool_name or 'tool'}] {unpainted(m.tool_result or '')[:2000]}".strip()
    context = split_context(m.context)[0] if m.context else ""  # the resolved dates are for keywords only
    if context:
        text = f"{text}\n({context[:400]})"
    return text


class MessageSource:
    """Messages as a `hybrid.Source`: every vector neighbour is a candidate (the
    conversation stages re-rank them), cosines spread within the query."""

    min_semantic = float("-inf")
    stretch = True

    def __init__(self, store: Store, filters: Filters, model: str = "", now_days: float = 0.0, weights: Weights | None = None) -> None:
        self.store, self.filters, self.model = store, filters, model
        self.now_days, self.weights = now_days, weights or Weights()
        self.found: dict[str, Message] = {}

    def keyword(self, terms: list[str], match_all: bool, limit: int) -> list[tuple[str, float]]:
        pairs = self.store.keyword_search(terms, self.filters, limit, match_all=match_all)
        self.found.update((m.id, m) for m, _ in pairs)
        return [(m.id, s) for m, s in pairs]

    def count(self, terms: list[str], limit: int) -> int:
        return self.store.count_matches(terms, self.filters, limit)

    def vectors(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        return self.store.vector_search(self.model, vector, self.filters, limit)

    def cosines(self, ids: list[str], vector: np.ndarray) -> dict[str, float]:
        return {mid: float(vec @ vector) for mid, vec in self.store.get_vectors(self.model, ids).items()}

    def rows(self, ids: list[str]) -> dict[str, Message]:
        extra = [i for i in ids if i not in self.found]
        self.found.update((m.id, m) for m in self.store.get_messages(extra))
        return self.found

    def features(self, m: Message) -> dict[str, float]:
        return {"temporal": temporal_score(m, self.now_days, self.weights), "importance": m.importance}

    def tiebreak(self, m: Message) -> tuple[Any, ...]:
        return m.created_at, m.id


def keyword(store: Store, query: str, filters: Filters, limit: int) -> tuple[list[tuple[Message, float]], str]:
    """BM25 hits (raw scores) and whether some matched all words ("all") or none did ("any")."""
    source = MessageSource(store, filters)
    found, match = keyword_pool(source, query_terms(query), limit)
    return [(source.found[i], s) for i, s in found], match


MIN_DEPTH = 100


class MessageSearch:
    """Search over the messages of one store (`Finder` adds the other kinds)."""

    def __init__(self, store: Store, embedding: Embedding, settings: Any, whole: Whole = lambda m: m) -> None:
        self.store, self.embedding, self.settings, self.whole = store, embedding, settings, whole

    @cached_property
    def _pool(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=4, thread_name_prefix="palimpsest-query")

    def close(self) -> None:
        if "_pool" in self.__dict__:
            self._pool.shutdown(wait=False)

    def substring(self, query: str, f: Filters, limit: int) -> SearchResult:
        # the index shows a NUL of the journal as U+FFFD (ingest/indexer.py), so a fragment must too
        query = query.replace("\x00", "\ufffd")
        if not query:
            return SearchResult([], mode="substring")
        found = self._said_either_way(query, f, limit)
        past, notes = substring_past_cap(self.store, self.whole, query, f, limit - len(found), {m.id for m in found}) \
            if len(found) < limit else ([], [])
        ordered = sorted([*found, *past], key=lambda m: (m.created_at, m.id), reverse=True) if past else found  # newest first
        return SearchResult([Hit(m, 1.0) for m in ordered], mode="substring", notes=notes)

    def _said_either_way(self, fragment: str, f: Filters, limit: int) -> list[Message]:
        """Messages holding `fragment` composed or decomposed (NFC, NFD), newest first: the text is kept as it was typed,
        and "está" typed on one keyboard never matched "está" (e + a combining accent) typed on another."""
        found = {m.id: m for form in dict.fromkeys(unicodedata.normalize(n, fragment) for n in ("NFC", "NFD"))
                 for m in self.store.substring_search(form, f, limit)}
        return sorted(found.values(), key=lambda m: (m.created_at, m.id), reverse=True)[:limit]

    def regex(self, pattern: str, f: Filters, limit: int) -> SearchResult:
        found, notes = regex_search(self.store, pattern, f, limit, whole=self.whole)
        return SearchResult([Hit(m, 1.0) for m in found], mode="regex", notes=notes)

    def ranked(self, query: str, f: Filters, limit: int, recipe: str, now: Any = None) -> tuple[SearchResult, Any]:
        """Hybrid hits and the query's vector (None without one), for the other kinds to reuse."""
        if recipe not in RECIPES:
            raise InvalidInput(f"unknown recipe {recipe!r}: use hybrid or rrf")
        # candidates drawn: never fewer than a limit of 20 draws, so the first ten of a search for ten are the first ten of
        # one for twenty (the scores are normalised over the candidates: a user's only "car" message was missing at limit
        # 10 and fourth at 20)
        depth = max(limit * 5, MIN_DEPTH)
        query = self.as_user(query, f)
        embed_notes: list[str] = []
        try:
            pending = self._pool.submit(self.query_vector, query, embed_notes) if self.embedding.configured else None
        except RuntimeError:  # "cannot schedule new futures after shutdown": this memory was closed
            raise Closed() from None
        anchor = parse_time(now, "now") if now is not None else utcnow()
        now_days = anchor.timestamp() / 86400.0
        w = Weights.from_settings(self.settings)
        clock = clock_of(now, anchor, self.settings.zone)
        window, time_only = asked_time(query, clock)
        if window is not None and time_only and recipe == "hybrid":  # a question about nothing but a time: the window's messages
            qvec = pending.result() if pending is not None else None
            return replace(self.period(window, f, limit, depth, w), then=past(window, clock.date())), qvec
        source = MessageSource(self.store, f, "", now_days, w)
        pool = keyword_pool(source, query_terms(query), depth)
        qvec = pending.result() if pending is not None else self.query_vector(query, embed_notes)
        if qvec is not None:
            source.model = self.embedding.model.model_id  # type: ignore[union-attr]
        ranking = rank(source, query, w, pool=depth, vector=qvec, recipe=recipe, keyword=pool)
        hits = [Hit(s.row, s.score, s.parts) for s in ranking.hits]
        if recipe == "hybrid":
            hits = when_boost(hits, window, w.when)  # additive bonuses on the weighted sum's scale; rrf's is another
            hits = dated_boost(hits, query, w.dated)
            hits = conversation_rerank(hits, query, w)
            hits = answers(hits, w)
            hits = seeded_round(hits, query, source, depth, w.seed)
            newcomers = [h.message.id for h in hits if h.message.id not in ranking.cosines]
            if qvec is not None and newcomers:  # the floor judges the round's newcomers by their cosines too
                ranking.cosines.update(source.cosines(newcomers, qvec))
        hits = acknowledgements_last(diversify(session_boost(hits, w.session), query, limit, self.settings.session_cap))
        floor = floor_for(source.model, self.settings.floor_similarity, self.settings.floor_unknown, self.settings.floor_stranger)
        hits, floor_notes = apply_floor(hits, ranking.cosines, query, floor, lambda word: self.store.count_matches([word], f, 1) > 0,
                                        dated=window is not None and window.days <= DATED_DAYS, own=lambda name: self._goes_by(name, f),
                                        scope=scope_of(f))
        notes = ["no message matched every word; showing messages that match any word"] if ranking.match == "any" and hits else []
        unknown = asked_names(query, scope_of(f).values()) if floor_notes and not hits else []
        return SearchResult(hits[:limit], mode="hybrid" if qvec is not None else "keyword", match=ranking.match,
                            notes=notes + floor_notes + embed_notes, unknown=unknown, then=past(window, clock.date())), qvec

    def _introduced(self, name: str, f: Filters) -> bool:
        """Whether the user introduced themselves as `name` ("Hi! I'm Dana", "my name is Dana"):
        a question naming them ("Where does Dana live now?") is the user's own, not one about a
        stranger no message speaks of (a chat bot's recall had been empty for every such question)."""
        said = self.store.keyword_search([name], replace(f, role="user"), 50, match_all=True)
        # (a turn whose speaker is named — "Caroline" of a conversation between two — is no user's introduction)
        return any(not m.speaker and introduces(m.content or "", name) for m, _ in said)

    def _goes_by(self, name: str, f: Filters) -> bool:
        """Whether the user goes by `name`: introduced by it, or spoken to by it by the assistant ("Hi Tom!", "Olá
        Ana!": a travel agency's customers say "hallo, tom becker." or "Meu nome é Ana Souza", no introduction
        `introduces` reads). The floor's question: only the wording "I'm …" rewrites the query (`as_user`)."""
        if self._introduced(name, f):
            return True
        told = self.store.keyword_search([name], replace(f, role="assistant"), 50, match_all=True)
        return any(not m.speaker and addresses(m.content or "", name) for m, _ in told)

    def as_user(self, query: str, f: Filters) -> str:
        """`query` asked of the user in the first person when it asks of a name the user
        introduced themselves by, as the one it is about: "What breed is Dana's dog?" → "What
        breed is my dog?", "Where does Dana live now?" → "Where do I live now?" (the user's turns
        never say their own name; the question found only the introduction). Only a name said
        capitalised, as a possessive or after "does"/"did", is read so: "traditional Italian
        desserts" of a user who said "I'm Italian." stays as it is."""
        names = query_names(query)
        if not names or len(names) > 2:
            return query
        forms = {n: [w for w in re.findall(r"[^\W\d_][\w'’-]*", query) if fold(w).lower().rstrip("'’s") == n
                     or fold(w).lower() == n] for n in names}
        text = query
        for n, said in forms.items():
            for word in {w.rstrip("'’") for w in said if w[:1].isupper()}:
                base = word[:-2] if word.endswith(("'s", "’s")) else word
                pattern = re.escape(base)
                if not re.search(rf"\b{pattern}['’]s\b|\b[Dd](?:oes|id) {pattern}\b", text):
                    continue
                if not self._introduced(n, f):
                    return query
                text = re.sub(rf"\b{pattern}['’]s\b", "my", text)
                text = re.sub(rf"\b([Dd])oes {pattern}\b", lambda m: f"{m.group(1)}o I", text)
                text = re.sub(rf"\b([Dd])id {pattern}\b", lambda m: f"{m.group(1)}id I", text)
        return text

    def period(self, window: Window, f: Filters, limit: int, depth: int, w: Weights) -> SearchResult:
        """The messages of `window` (said in it, or naming a day of it within `LATER` days),
        read by date within the filters, in the order they were said (the first `depth`)."""
        since = iso(datetime.combine(window.first, time(), UTC) - timedelta(days=1)) if window.first > EARLIEST else None
        until = iso(datetime.combine(window.last, time(), UTC) + timedelta(days=LATER + 2)) if window.last < LATEST else None
        scope = replace(f, since=max(filter(None, (f.since, since)), default=None),  # a day either side: any zone
                        until=min(filter(None, (f.until, until)), default=None))
        read = self.store.browse(scope, depth, 0, newest_first=since is None and until is not None)  # "before June": nearest first
        seen = {m.id for m in read}
        read += [m for m in self._naming(window, f, depth) if m.id not in seen]
        hits = period_hits(window, read, w.when)
        days = (f"until {window.last}" if since is None else f"from {window.first}" if until is None
                else f"of {window.first}" + (f" to {window.last}" if window.last != window.first else ""))
        more = len(read) >= depth or len(hits) > limit
        note = f"asked about a time only: the messages {days}"
        if more:  # (the first ten of the month had been shown as if they were all: the interview on the 28th cut)
            note += f" ({len(hits)}{'+' if len(read) >= depth else ''} found; {min(limit, len(hits))} shown, spread over the time asked: " \
                    "ask with a larger limit or a narrower time for the others)"
        return SearchResult(_spread(hits, limit), mode="period", notes=[note if hits else f"{note}: none stored"], period=window)

    def _naming(self, window: Window, f: Filters, depth: int) -> list[Message]:
        """Messages said before a window of at most a month that name one of its days (the words the indexer
        added for a day it resolved, "12 December 2026"): "What's happening next Saturday?" found only what was
        said around that Saturday, and said "none stored" of the housewarming planned for it the week before."""
        if window.first <= EARLIEST or window.last >= LATEST or (window.last - window.first).days > 31:
            return []
        found: dict[str, Message] = {}
        day = window.first
        while day <= window.last and len(found) < depth:
            for m, _ in self.store.keyword_search([str(day.day), day.strftime("%B").lower(), str(day.year)], f, depth, True):
                found.setdefault(m.id, m)
            day += timedelta(days=1)
        # a week or a part of a month the indexer resolved is in words without the asked day's number ("two weeks ago"
        # said on 12 September: "week of 26 August 2026"; "the end of august": "August 2026"): its month's words find it,
        # and `period_hits` keeps those whose stretch holds the day
        for month in dict.fromkeys((window.first.strftime("%B %Y"), window.last.strftime("%B %Y"))):
            for m, _ in self.store.keyword_search(month.lower().split(), f, depth, True):
                found.setdefault(m.id, m)
        return list(found.values())

    def query_vector(self, query: str, notes: list[str]) -> Any:
        """The query's embedding, or None (and why, in `notes`) when vectors cannot answer."""
        if not self.embedding.configured:
            notes.append("no embedder configured: ranked by keyword, time and importance only")
            return None
        if not query.strip():
            return None
        try:
            embedder = self.embedding.model
            if embedder is None or embedder.model_id not in self.store.vector_models():
                notes.append("no vectors indexed yet: ranked by keyword, time and importance only")
                return None
            return self.embedding.query(query)
        except PalimpsestError as exc:
            notes.append(f"embedder unavailable ({exc}): ranked by keyword, time and importance only")
            return None


def scope_of(f: Filters) -> dict[str, str]:
    """The scope a search was asked in, by kind ({"channel": "tyrell"}): what the relevance floor reads every message
    in it to be of (`floor.scope_words`)."""
    return {kind: value for kind, value in (("channel", f.channel), ("agent", f.agent), ("tag", f.tag), ("session", f.session))
            if value}


def _spread(hits: list[Hit], limit: int) -> list[Hit]:
    """`limit` of `hits` (in the order said), evenly over them: a month's first ten told nothing of its end."""
    if len(hits) <= limit:
        return hits
    if limit <= 1:
        return hits[:limit]
    return [hits[round(i * (len(hits) - 1) / (limit - 1))] for i in range(limit)]
