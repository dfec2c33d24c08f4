"""Reading facts: one fact, queries, history, stats, and search — facts as a source of
the one hybrid ranking (`search.hybrid`)."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import regex

from ..errors import Conflict, InvalidInput, NotFound, PalimpsestError
from ..ids import is_short_id
from ..records import Message, parse_time
from ..search import MIN_SEMANTIC, check_limit, check_query, decay, rank
from ..search.floor import beyond_model
from ..segment import fold
from ..store.facts_base import FactQuery, FactRow
from . import local
from .casing import typed_lower
from .model import DEFAULT_VAULT, DOMAIN, IMPORTANCE_BY_KIND, STATUSES, Fact, FactHit, _kind, _time, parse_source, view


class FactReads:
    """The reading half of `Facts` (a mixin: `store`, `now()`, `weights`, `embedder` are the class's)."""

    # -- reading -------------------------------------------------------------
    def _row(self, fact_id: Any) -> FactRow:
        if not isinstance(fact_id, str) or not fact_id:
            raise InvalidInput("a fact id is a non-empty string")
        found = self.store.get_facts([fact_id])
        if not found:
            raise NotFound(f"no fact with id {fact_id!r}")
        return found[0]

    @staticmethod
    def _need(row: FactRow, nulls: tuple[str, ...], verb: str) -> None:
        reasons = {"invalidated_at": "was retracted", "expired_at": f"was replaced by {row.superseded_by} (revision or merge)",
                   "superseded_by": f"is already superseded by {row.superseded_by}",
                   "valid_to": f"is closed (valid_to {row.valid_to})", "ended_at": "is closed"}
        for column in sorted(nulls, key=list(reasons).index):  # the most telling reason first
            if getattr(row, column) is not None:
                raise Conflict(f"cannot {verb} {row.id}: it {reasons[column]}")

    def _views(self, rows: list[FactRow], as_of: str | None = None) -> list[Fact]:
        moment = as_of or self.now()
        linked = {x.dst if x.src == r.id else x.src for r in rows for x in r.links if x.type == "disputed_with"}
        others = {r.id: r for r in self.store.get_facts(sorted(linked))} if linked else {}
        return [f for f in (view(r, moment, others) for r in rows) if f is not None]

    def get(self, fact_id: str, *, known_at: Any = None) -> Fact:
        """One fact as known now (or at `known_at`), whatever its status."""
        moment = _time(known_at, "known_at") if known_at is not None else None
        facts = self._views([self._row(fact_id)], moment)
        if not facts:
            raise NotFound(f"fact {fact_id!r} was not recorded yet at {moment}")
        return facts[0]

    def cited(self, source: Any) -> Any:
        """A source as a model or a user cites it from a recall block — a turn's short id,
        bare or as `event:<short id>` — as `event:<its message's id>`; a short id no message
        has, or several share, is `InvalidInput` (a mistyped id must not become a person
        named "999999ffff"). Any other source as given (`person:…` for a name of that
        shape). A message's whole id must be stored: `NotFound` otherwise (`facts write …
        --source evt_doesnotexist` had attested a fact by a message nobody could open). Every fact
        operation resolves its source here, so a journaled decision holds the whole id and replays
        alike (replay applies the journaled rows, and asks nothing of the messages)."""
        if not isinstance(source, str):
            return source
        kind, sep, ref = source.partition(":")
        short = ref if sep and kind in ("event", "evt") else source
        if not is_short_id(short):
            self._stored_message(source)
            return source
        target = self.store.short_id_target(short)
        if target is None:
            raise InvalidInput(f"no message has the short id {short!r}: give its full id (evt_…), or person:NAME for a person")
        return f"event:{target}"

    def said(self, source: Any) -> Message | None:
        """The message a cited source is (`event:<id>`), None for any other source."""
        kind, ref = parse_source(source)
        found = self.store.get_messages([ref]) if kind == "event" else []
        return found[0] if found else None

    def heard(self, text: str, source: Any, valid_from: Any, at: Any) -> tuple[Any, Any]:
        """`(valid_from, at)` of a statement citing `source`: with neither time given and a stored message cited, it holds
        from the time the message names ("since last Monday"), else from when it was said, and was heard then. The curator
        and `supersede` alike (a founder's `memory_fact_supersede` citing a message of 5 September held from the day
        it was called, while `memory_remember` citing the same message held from 5 September)."""
        if valid_from is None and at is None and (said := self.said(source)) is not None:
            return local.named_start(text, said.created_at, said.metadata) or said.created_at, said.created_at
        return valid_from, at

    def _stored_message(self, source: Any) -> None:
        kind, ref = parse_source(source)
        if kind == "event" and not self.store.get_messages([ref]):
            raise NotFound(f"no message has the id {ref!r}: a fact's source is a stored message (evt_…, or the short id a "
                           "recall block shows), document:PATH or person:NAME")

    def query(self, vault: str | list[str] | None = None, *, entity: str | None = None, kind: str | None = None,
              source: Any = None, valid_at: Any = None, known_at: Any = None, limit: int | None = None,
              status: str | None = None) -> list[Fact]:
        """Facts that hold now — or at world time `valid_at`, as known at system time
        `known_at` (what a query at that moment returned; `valid_at` defaults to it), oldest
        first. With `status` (one of `STATUSES`, or "all"), the facts of that status instead,
        as known now or at `known_at`, the latest change first: what the curator retired."""
        if status is not None and status != "all" and status not in STATUSES:
            raise InvalidInput(f"unknown fact status {status!r}: one of {', '.join(STATUSES)} or all")
        if status is not None and valid_at is not None:
            raise InvalidInput("status lists facts by their status (now or at known_at); valid_at asks what held then: give one")
        vaults = self._known_vaults(vault)
        known = _time(known_at, "known_at") if known_at is not None else None
        moment = _time(valid_at, "valid_at") if valid_at is not None else (known or self.now())
        ref = parse_source(self.cited(source))[1] if source is not None else None
        q = FactQuery(vaults=vaults, entity=entity, kind=_kind(kind) if kind else None, source=ref)
        if known is None and status is None:
            q.believed, q.open_at = True, moment
        elif known is not None:
            q.recorded_by = known
        def kept(f: Fact) -> bool:
            if status is not None:
                return status in ("all", f.status)
            return f.invalidated_at is None and f.expired_at is None and f.holds_at(moment)

        facts = [f for f in self._views(self.store.query_facts(q), known) if kept(f)]
        if ref is not None:
            facts = [f for f in facts if any(a.source == ref for a in f.attestations)]
        if entity is not None:
            facts = [f for f in facts if names(f, entity)]
        if status is None:
            facts.sort(key=lambda f: (f.valid_from, f.id))
        else:  # the latest change of status first: an audit of the curator reads what it did last
            facts.sort(key=lambda f: (f.invalidated_at or f.expired_at or f.valid_to or f.recorded_at, f.id), reverse=True)
        return facts[:limit] if limit else facts

    def _known_vaults(self, vault: str | list[str] | None) -> list[str] | None:
        vaults = [vault] if isinstance(vault, str) else vault
        if vaults is not None:
            missing = set(vaults) - {v.name for v in self.store.fact_vaults()} - {DEFAULT_VAULT}  # exists implicitly
            if missing:
                raise NotFound(f"no fact vault named {', '.join(sorted(missing))}")
        return vaults

    def history(self, fact_id: str) -> list[Fact]:
        """The whole chain the fact belongs to, oldest first: every version (superseded,
        revised, closed, retracted) with its attestations."""
        row = self._row(fact_id)
        while row.supersedes:
            found = self.store.get_facts([row.supersedes])
            if not found:
                break
            row = found[0]
        chain, seen = [row], {row.id}
        while chain[-1].superseded_by and chain[-1].superseded_by not in seen:
            found = self.store.get_facts([chain[-1].superseded_by])
            if not found:
                break
            chain.append(found[0])
            seen.add(found[0].id)
        return self._views(chain)

    def reasons(self, fact_ids: list[str]) -> dict[str, list[str]]:
        """Why each of these facts replaced another or ended, as journaled with its decisions (the curator's reason, or a
        person's `reason=`), "op: reason" in journal order: a supersession's under the fact that replaced, a closing's or a
        retraction's under the fact (an on-call lead could not tell from the history why a fact had been retired)."""
        wanted, out = set(fact_ids), {}  # type: set[str], dict[str, list[str]]
        for _, d in self.decisions.read(DOMAIN):  # type: ignore[attr-defined]
            if d.subject in wanted and d.op in ("supersede", "close", "retract") and d.meta.get("reason"):
                out.setdefault(d.subject, []).append(f"{d.op}: {d.meta['reason']}")
            if d.meta.get("reinstated") in wanted:  # under the version a retraction brought back
                out.setdefault(d.meta["reinstated"], []).append(f"reinstated: {d.meta['reinstated_reason']}")
        return out

    def search(self, query: str, *, vault: str | list[str] | None = None, limit: int = 10, valid_at: Any = None,
               known_at: Any = None, kind: str | None = None, query_vector: Any = None, semantic: bool = True,
               since: str | None = None, until: str | None = None) -> list[FactHit]:
        """Facts matching `query`, best first, by the one hybrid ranking (`search.hybrid`):
        `w_fts·fts + w_semantic·cosine + w_temporal·e^(−0.05·days since last_seen)
        + w_importance·importance`, where importance is the mean of the kind's (correction 0.9,
        preference 0.8, decision 0.7, fact 0.6, task 0.5) and the fact's salience. Only facts that
        hold now are searched, unless `valid_at` / `known_at` ask for another moment; superseded,
        retracted, closed and revised facts never come back otherwise. A hit needs a keyword
        match or a cosine of at least `MIN_SEMANTIC`. Pass `query_vector` to reuse an embedding
        already computed with the same embedder, and `semantic=False` when the caller already
        knows the embedder cannot answer; without an embedder search is keyword-only. With `until` (ISO, exclusive; a search's
        bounds, `since` the other), the facts that held at some time between them instead of at one moment (unless
        `valid_at` names one too): a fact of 14 October had come back for a search of 1–3 September. `since` alone: the
        facts that hold now."""
        query = check_query(query)
        check_limit(limit)
        known = _time(known_at, "known_at") if known_at is not None else None
        moment = _time(valid_at, "valid_at") if valid_at is not None else (known or self.now())
        # a past window (`until`) asks what held in it; `since` alone scopes the messages, and the facts that hold now answer
        # (an agent's search since 1 January had shown "Bo lives in Porto" beside the "Lisbon" that replaced it in March)
        window = (since, until) if until else None
        instant = None if window and valid_at is None else moment  # a window asks of its whole span, not of one moment
        q = FactQuery(vaults=self._known_vaults(vault), kind=_kind(kind) if kind else None, during=window)
        if known is None:
            q.believed, q.open_at = True, instant
        else:
            q.recorded_by = known
        vector = self._query_vector(query, query_vector) if semantic else None
        source = FactSource(self, q, known, instant, vector, query)
        ranking = rank(source, query, self.weights, pool=max(limit * 5, 50), vector=vector)
        hits = [FactHit(h.row, h.score, h.parts) for h in ranking.hits[:limit]]
        if known is None:  # (of a past moment too: recall of a past day had shown the 10 mg the 15 mg replaced, not the 15 mg)
            hits = self._with_successors(hits, query, FactQuery(vaults=q.vaults, kind=q.kind, believed=True), vector, limit,
                                         parse_time(moment) if valid_at is not None else parse_time(until) if until else None)
        return hits

    def _with_successors(self, hits: list[FactHit], query: str, q: FactQuery, vector: Any, limit: int,
                         at: datetime | None = None) -> list[FactHit]:
        """`hits` with the successor that holds (now, or `at`) of each superseded fact the query matches, at that fact's
        score: "where do I live?" matches "I live in Berlin." (superseded) far better than "I moved to Lisbon." (cosine
        0.31, under the floor), and recall had shown the user's old message, or nothing, instead of the correction."""
        retired = rank(RetiredSource(self, q, None, self.now(), vector, query), query, self.weights, pool=max(limit * 5, 50),
                       vector=vector)
        best = {h.fact.id: h for h in hits}
        for h in retired.hits[:limit]:
            head = self._current_head(h.row, at)
            if head is not None and (head.id not in best or best[head.id].score < h.score):
                best[head.id] = FactHit(head, h.score, {**h.parts, "successor_of": 1.0})
        return sorted(best.values(), key=lambda h: (-h.score, h.fact.id))[:limit]

    def _current_head(self, fact: Fact, at: datetime | None = None) -> Fact | None:
        """The fact that holds (now, or `at`) at the end of `fact`'s chain of supersessions, if one does."""
        seen, start = {fact.id}, fact
        while fact.superseded_by and fact.superseded_by not in seen and len(seen) < 100:
            seen.add(fact.superseded_by)
            rows = self.store.get_facts([fact.superseded_by])
            if not rows:
                return None
            after = self._views(rows)[0]  # type: ignore[attr-defined]
            if at is not None and parse_time(after.valid_from) > at:
                break  # replaced after the moment asked of: what held then is where the chain stood
            fact = after
        if fact is start or not fact.id:
            return None
        if at is None:
            return fact if fact.status == "current" else None
        return fact if not (fact.invalidated_at or fact.expired_at) and (not fact.valid_to or parse_time(fact.valid_to) > at) \
            and fact.status not in ("retracted",) else None

    def _query_vector(self, query: str, given: Any) -> Any:
        embedder = self.embedder
        if embedder is None or not query.strip():
            return None
        try:
            return given if given is not None else embedder.checked([query])[0]
        except PalimpsestError:
            return None

    def stats(self) -> dict[str, Any]:
        return self.store.fact_stats()



def names(fact: Fact, entity: str) -> bool:
    """Whether `fact` names `entity`: as a whole word of an entity it lists or of its text, whatever the accents. Facts a
    model or the distiller writes mostly list no entities: `memory_facts(entity="Sequoia")` had answered nothing beside
    seven current facts saying "Sequoia", and the model concluded nothing was known. An entity written with its capital
    ("Will"; a shouted word is none) is named by a capitalised mention not at a sentence's opening (or one of several
    capitalised words): "Will", "May" and "Go" had each returned "I will go to the gym in may"; any other, whatever the case."""
    word = regex.compile(rf"(?<!\w){regex.escape(_folded(entity))}(?!\w)")
    if any(word.search(_folded(t)) for t in fact.entities):
        return True
    if typed_lower(entity):
        return bool(word.search(_folded(fact.text)))
    text = fold(fact.text)
    mention = regex.compile(rf"(?<!\w){regex.escape(fold(entity))}(?!\w)", regex.IGNORECASE | regex.FULLCASE)
    return any(_a_name(text, m.start(), m.group()) for m in mention.finditer(text))


def _a_name(text: str, start: int, mention: str) -> bool:
    """Whether `mention`, at `start` of `text`, is written as a name: with its capital, after a word or with a later
    capital, or opening a sentence as its subject: before one of `local.NAME_VERBS` or a "'s" ("Tobin's sister is
    Wren.", "Ilse is now …": a novelist's `--entity Tobin` had missed both, a character's facts open with its name). A
    verb in -s is not enough: "Max retries is 5", "Bill payments go out …" are nouns (review); "Will you …" no name."""
    if not mention[:1].isupper():
        return False
    before = text[:start].rstrip(" \t\"'“‘([*•-")
    return bool(before and before[-1] not in ".!?:;\n") or any(w[:1].isupper() for w in mention.split()[1:]) \
        or bool(local._NAMED_FIRST.match(text, start + len(mention)))



def _folded(text: str) -> str:
    return fold(text).casefold()


class FactSource:
    """Facts as a `hybrid.Source`: those of the query's vaults and kind that hold at its
    moment (as known at `known`), last seen as their clock."""

    min_semantic = MIN_SEMANTIC
    stretch = False

    def __init__(self, facts: FactReads, q: FactQuery, known: str | None, moment: str | None, vector: Any, query: str = "") -> None:
        self.facts, self.q, self.known, self.moment = facts, q, known, moment
        if beyond_model(query):  # a query the model does not read: its cosines say nothing (any two Japanese or Chinese
            # texts are 0.5–0.8 apart: "猫の名前は？", no cat stored, had found a Chinese fact), a keyword match is the evidence
            self.min_semantic = math.inf
        self.model = getattr(facts.embedder, "model_id", "") if vector is not None else ""  # type: ignore[attr-defined]
        self.now = parse_time(known or facts.now())  # type: ignore[attr-defined]

    def keyword(self, terms: list[str], match_all: bool, limit: int) -> list[tuple[str, float]]:
        return self.facts.store.fact_keyword_search(terms, self.q, limit, match_all)  # type: ignore[attr-defined]

    def count(self, terms: list[str], limit: int) -> int:
        return len(self.keyword(terms, True, limit))

    def vectors(self, vector: Any, limit: int) -> list[tuple[str, float]]:
        try:
            return self.facts.store.fact_vector_search(self.model, vector, self.q, limit)  # type: ignore[attr-defined]
        except PalimpsestError:
            return []

    def cosines(self, ids: list[str], vector: Any) -> dict[str, float]:
        return {}

    def rows(self, ids: list[str]) -> dict[str, Fact]:
        views = self.facts._views(self.facts.store.get_facts(sorted(ids)), self.known)  # type: ignore[attr-defined]
        return {f.id: f for f in views if not (f.invalidated_at or f.expired_at) and self.holds(f)}

    def holds(self, fact: Fact) -> bool:
        """Whether `fact` held at the moment asked of, or at some time in the window asked of (`FactQuery.during`)."""
        return (self.moment is None or fact.holds_at(self.moment)) and fact.held_during(*(self.q.during or (None, None)))

    def features(self, fact: Fact) -> dict[str, float]:
        days = (self.now - parse_time(fact.last_seen)).total_seconds() / 86400
        return {"temporal": decay(days), "importance": (IMPORTANCE_BY_KIND.get(fact.kind, 0.5) + fact.salience) / 2}

    def tiebreak(self, fact: Fact) -> tuple[Any, ...]:
        return (fact.id,)


class RetiredSource(FactSource):
    """The superseded facts (those a correction replaced), for `FactReads._with_successors`."""

    def rows(self, ids: list[str]) -> dict[str, Fact]:
        views = self.facts._views(self.facts.store.get_facts(sorted(ids)))  # type: ignore[attr-defined]
        return {f.id: f for f in views if f.superseded_by and not (f.invalidated_at or f.expired_at)}
