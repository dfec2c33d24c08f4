"""The finder: one ranked search over every kind a memory holds.

`Finder.search` ranks messages (`search.MessageSearch`), then, from the same query and
its one embedding, adds the facts that hold (`facts`), the matching summaries expanded to
their turns (`summaries`) and the chunks of document vaults attached to the session or
agent (`vaults`) — each kind ranked by the one hybrid ranking over its own source
(`search.hybrid`). It also counts the accesses of the hits and carries their sessions'
tags. `Memory.search` and recall both come here; nothing here knows the facade.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from datetime import time as dtime
from typing import TYPE_CHECKING, Any

from .errors import InvalidInput
from .kernel import Kernel
from .records import Hit, Message, iso, parse_time, utcnow
from .search import MessageSearch, SearchResult, Weights
from .search.floor import names_any
from .search.query import check_page, check_query, check_scope, cut_note
from .search.timeframe import EARLIEST, LATEST
from .store import Filters

if TYPE_CHECKING:
    from .facts import FactHit, Facts
    from .summaries import Summaries
    from .tags import Tags
    from .toolsynth import ToolSynth
    from .vaults import Vaults

SCOPED_LIST = 20_000  # the facts a scoped listing looks through for its own
SUMMARY_EXPAND = 3  # the best summaries expanded to their children and source messages
EXPAND_ROWS = 10
SCOPED_POOLS = (40, 400, 1000)  # with an agent, channel or tag filter: the pools of best facts drawn, then kept by where they were heard


class Finder:
    """Search and browse over messages, facts, summaries and attached documents."""

    def __init__(self, kernel: Kernel, messages: MessageSearch, facts: Callable[[], Facts], summaries: Summaries,
                 vaults: Callable[[], Vaults], tags: Callable[[], Tags], toolsynth: ToolSynth) -> None:
        self.kernel, self.messages = kernel, messages
        self._facts, self.summaries, self._vaults, self._tags, self.toolsynth = facts, summaries, vaults, tags, toolsynth
        self.weights = Weights.from_settings(kernel.settings)

    def filters(self, session: str | None = None, agent: str | None = None, channel: str | None = None,
                role: str | None = None, since: Any = None, until: Any = None, tag: str | None = None,
                apart: tuple[str, ...] | None = None, **unknown: Any) -> Filters:
        if unknown:  # a misspelt filter ("sesion=") had raised a TypeError naming this method
            raise InvalidInput(f"unknown filter {min(unknown)!r}: use session, agent, channel, role, since, until or tag")
        for k, v in (("session", session), ("agent", agent), ("channel", channel), ("role", role), ("tag", tag)):
            check_scope(k, v)
        start = iso(parse_time(since, "since")) if since not in (None, "") else None
        end = iso(parse_time(until, "until")) if until not in (None, "") else None
        if start and end and start >= end:  # (swapped, a search answered no message and five facts, and no error)
            raise InvalidInput(f"since ({start}) must be before until ({end})")
        return Filters(
            session=session, agent=agent, channel=channel, role=role, since=start, until=end,
            tag=self._tags().filter_value(tag) if tag is not None else None, apart=tuple(apart) if apart else None,
        )

    def browse(self, *, limit: int = 50, offset: int = 0, newest_first: bool = False, **filters: Any) -> list[Message]:
        """Messages in chronological order (or newest first), filtered and paged."""
        check_page(limit, offset)
        rows = self.kernel.store.browse(self.filters(**filters), limit, offset, newest_first)
        self.kernel.accesses.apply(rows)
        return rows

    def search(self, query: str, *, limit: int = 10, mode: str = "ranked", recipe: str | None = None,
               now: Any = None, touch: bool = True, facts: bool = True, valid_at: Any = None, known_at: Any = None,
               synthesize: bool = False, **filters: Any) -> SearchResult:
        """Ranked hybrid search (keyword + vector + time + importance), or `mode="substring"`
        (any fragment) / `mode="regex"`. `recipe`: hybrid (weighted sum) or rrf; `now`: the
        moment time decay counts from (default: now). Ranked search also returns the
        matching facts first (`result.facts`): those that hold now, or at `valid_at` /
        as known at `known_at` — a superseded, retracted or closed fact never otherwise.
        With a session or agent filter, chunks of the document vaults attached to them come
        too (`result.documents`). `synthesize=True` adds `answer`: a short answer from the configured LLM drawn only
        from the hits, citing their ids — or, when it is off, there is no LLM, or the LLM fails or
        answers out of schema, `available: False`, the reason, and a note; the hits stay."""
        said, query = query, check_query(query)
        check_page(limit, 0)
        f = self.filters(**filters)
        started = time.perf_counter()
        if mode == "substring":
            result = self.messages.substring(query, f, limit)
        elif mode == "regex":
            result = self.messages.regex(query, f, limit)
        elif mode == "ranked":
            result = self._ranked(query, f, limit, recipe or self.kernel.settings.recipe, now, facts, valid_at, known_at)
        else:
            raise InvalidInput(f"unknown search mode {mode!r}: use ranked, substring or regex")
        if synthesize:  # a short answer drawn only from the hits, citing their ids (off by default)
            from .facts.echoes import Echoes

            # not the messages that said (or echoed) a fact a correction retired, as recall: the answer had been drawn
            # from "My timezone is CET." after "Correction: my timezone is EET now"
            retired = Echoes(self.kernel, self._facts).suppressed([h.message for h in result.hits]) if result.hits else set()
            result.answer = self.toolsynth.answer(query, [*result.facts, *(h for h in result.hits if h.message.id not in retired)])
            if not result.answer["available"]:
                result.notes.append(f"no answer: {result.answer['reason']}")
        result.notes += cut_note(said)
        if not result.hits and f.session and self.kernel.store.get_session(f.session) is None:
            result.notes.append(f"no session {f.session[:80]!r} is stored: nothing to search in it")  # (a typo said nothing)
        self._count(result.hits, touch, result.summaries)
        result.took_ms = (time.perf_counter() - started) * 1000
        return result

    def _ranked(self, query: str, f: Filters, limit: int, recipe: str, now: Any, facts: bool, valid_at: Any,
                known_at: Any) -> SearchResult:
        result, qvec = self.messages.ranked(query, f, limit, recipe, now)
        if not query.strip():
            return result
        if facts and not (f.session or f.role):
            search = lambda n: self._facts().search(query, limit=n, valid_at=valid_at, known_at=known_at, since=f.since,
                                                    until=f.until, query_vector=qvec, semantic=qvec is not None)
            result.facts = self._heard_in_scope(search, f, limit) if f.agent or f.channel or f.tag else search(limit)
            result.facts = _as_messages_found(result, result.facts)
        if not f.role:  # (summaries are said by no one role)
            result.summaries = [s for s in self._summary_hits(query, self._in_period(result, f), limit, now, qvec)
                                if names_any(result.unknown, s["content"])]
        if f.session or f.agent:  # document vaults attached to them
            result.documents = self._vaults().search(query, session=f.session, agent=f.agent, limit=limit, query_vector=qvec).hits
        return result

    def _in_period(self, result: SearchResult, f: Filters) -> Filters:
        """`f`, narrowed to the days the messages' search read a query asking about nothing but a time to ask about
        (`SearchResult.period`), on the reader's calendar ("What did I ask about in July 2024?": a summary of February is
        no answer, whatever its words say — its lines' stamps had matched "2024", and it led the block above July's
        turns: found by a user with a year of chats)."""
        zone, period = self.kernel.settings.zone, result.period
        if period is None:
            return f
        since = iso(datetime.combine(period.first, dtime.min).replace(tzinfo=zone).astimezone(UTC)) if period.first > EARLIEST else None
        until = (iso(datetime.combine(period.last + timedelta(days=1), dtime.min).replace(tzinfo=zone).astimezone(UTC))
                 if period.last < LATEST else None)
        return replace(f, since=max(filter(None, (f.since, since)), default=None), until=min(filter(None, (f.until, until)), default=None))

    def _heard_in_scope(self, search: Callable[[int], list[FactHit]], f: Filters, limit: int) -> list[FactHit]:
        """The best `limit` facts heard in a session the filter admits (its agent, channel, tag): with a
        bot's users told apart by a tag, one user's "door code is 4711" is no fact of another's. Drawn
        from ever larger pools of the best facts (a user's own fact may rank below many others'); a fact
        with no message among its sources (written by hand, from a document) belongs to no session and
        stays out of a scoped search."""
        kept: list[FactHit] = []
        for n in SCOPED_POOLS:
            found = search(max(n, limit))
            heard = {h.fact.id: self._heard_events(h.fact) for h in found}
            admitted = self.kernel.store.admitted(sorted({e for events in heard.values() for e in events}), f)
            kept = [h for h in found if admitted.intersection(heard[h.fact.id])]
            if len(kept) >= limit or len(found) < max(n, limit):
                break
        return kept[:limit]

    def facts_heard_in(self, query: Callable[[int | None], list[Any]], limit: int | None, **scope: str | None) -> list[Any]:
        """The first `limit` (None: all) facts of `query(n)` heard in a session of the scope's agent, channel or tag
        (Mem0's `get_all(user_id)`), drawn from up to `SCOPED_LIST` of them; without a scope, `query(limit)`."""
        scope = {k: v for k, v in scope.items() if v is not None}
        if not scope:
            return query(limit)
        self.filters(**scope)  # an empty scope is refused, never read as none (`filters`)
        return self.heard_in(query(min(SCOPED_LIST, limit * 20) if limit else SCOPED_LIST), **scope)[:limit]

    def heard_in(self, facts: list[Any], agent: str | None = None, channel: str | None = None, tag: str | None = None) -> list[Any]:
        """The facts heard in a session of this agent, channel or tag (as a scoped search keeps
        them): one user's facts listed apart from another's."""
        f = self.filters(agent=agent, channel=channel, tag=tag)
        heard = {x.id: self._heard_events(x) for x in facts}
        admitted = self.kernel.store.admitted(sorted({e for events in heard.values() for e in events}), f)
        return [x for x in facts if admitted.intersection(heard[x.id])]

    def _heard_events(self, fact: Any) -> list[str]:
        """The messages a fact was heard in; for a correction written by hand (no message of its own), those of the
        fact it replaced: a bot's `memory_fact_supersede` without a source had left every scoped recall."""
        events = [a.source for a in fact.attestations if a.source_type == "event"]
        seen, previous = {fact.id}, fact.supersedes
        while not events and previous and previous not in seen and len(seen) < 20:
            seen.add(previous)
            rows = self.kernel.store.get_facts([previous])
            if not rows:
                break
            events = [a.source for a in rows[0].attestations if a.source_type == "event"]
            previous = rows[0].supersedes
        return events

    def _summary_hits(self, query: str, f: Filters, limit: int, now: Any, qvec: Any) -> list[dict[str, Any]]:
        """Matching summaries, the best `SUMMARY_EXPAND` of them expanded to their children
        and source messages (the first 10 of each), so a hit on a summary reaches the turns."""
        out = []
        hits = self.summaries.search(query, f, min(limit, 10), now, query_vector=qvec, semantic=qvec is not None)
        for i, hit in enumerate(hits):
            row = hit.to_dict()
            if i < SUMMARY_EXPAND:
                found = self.summaries.expand(hit.summary.id, limit=EXPAND_ROWS)
                row["children"] = [{"id": c.id, "depth": c.depth, "content": c.content} for c in found["children"]]
                row["messages"] = [{k: m.to_dict()[k] for k in ("id", "session", "role", "created_at", "content")} for m in found["messages"]]
            out.append(row)
        return out

    def _count(self, hits: list[Hit], touch: bool, summaries: list[dict[str, Any]]) -> None:
        """Pending accesses onto the hits, one more access each (`touch`) — summary hits
        too (their rows carry their pending accesses already) — and their sessions' tags."""
        accesses = self.kernel.accesses
        accesses.apply(h.message for h in hits)
        if touch and hits:
            accesses.add([h.message.id for h in hits], iso(utcnow()))
        if touch and summaries:
            accesses.add([s["id"] for s in summaries], iso(utcnow()), summaries=True)
        carried = self._tags().session_tags([h.message.session for h in hits])
        for h in hits:
            h.session_tags = carried.get(h.message.session, [])


def _as_messages_found(result: SearchResult, facts: list[FactHit]) -> list[FactHit]:
    """The facts held to what the messages' search found of the query: a question about nothing but a time
    ("What did I tell you yesterday?") is answered by that time's messages, and facts matched on its time
    words ("Started yesterday.") are noise; a question about a name no message speaks of ("When did I go to
    Paris?") keeps only facts that name it (none: the Hamburg and Lisbon trips had filled the block)."""
    if result.mode == "period":
        return []
    return [h for h in facts if names_any(result.unknown, h.fact.text)]

