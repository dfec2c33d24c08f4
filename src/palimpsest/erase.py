"""Erasure: every trace of chosen sessions taken out of a home and its store, when an operator orders it.

A support bot serves many end customers on one memory, each customer's sessions carrying
`channel=<customer>` and the tag `user:<customer>`; a customer asked to be forgotten (GDPR
article 17) and nothing erased: deleting her journal folders by hand and rebuilding left her
words in the database, in `facts.jsonl`, in the facts and distill journals, and recall still
showed the phone number a fact had kept from her message (found by a new user). `Eraser` is the
one place that knows everything a session leaves behind:

- its journal folder (`sessions/<id>/`), and its rows in the store (`Store.erase_sessions`:
  messages with their full text, trigrams and vectors, summaries, tags, cursors, jobs, the wiki
  statements drawn from it);
- the facts attested only by its messages, every version of them, and the attestations of its
  messages on facts that stay (`Store.erase_facts`), then a new `facts.jsonl`;
- the lines of the system journal about them (`erased.Erased.scrub_line`: distilled turns,
  fact decisions, tag, summary and wiki decisions, synthesized sentences), so `rebuild`,
  `facts replay` and `facts restore --journal` cannot bring them back;
- the embedding cache's vectors of its texts, and the bytes the database keeps of deleted
  rows (`Store.scrub`);
- this home's capture spool of it (waiting, dead and corrupt batches) and Codex notify's held words (the CLI hands
  `Eraser.held` the capture client's eraser: the library knows no capture).

The erasure is journaled first, with ids and counts and no content (`erased.py`), so an import of
an earlier export or a restore of an older snapshot skips what it names; the store records the
sessions' digests too (`Store.record_erased`), so no home on it indexes or takes them again. Another
home on the store that wrote them still holds their journals: the erasure names those homes
(`Erasure.other_journals`), and `erase(finish=True)` run in each erases its journals of them. What is not erased:
what left the home before (exports, backups, copies of `facts.jsonl`, a capture client's spool on
another machine), and facts that cite none of the sessions' messages (written with no source, or
citing something else) — `palimpsest erase --dry-run` lists what would go, and the kept facts of an
erased fact's supersession chain to check by hand.

A running server holds its journals' state in memory: erase with the server stopped (the CLI
refuses while a server of this store answers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from .decisions import Decision
from .erased import DOMAIN, Erased, session_digest
from .errors import InvalidInput, NotFound
from .facts import Facts
from .kernel import Kernel
from .records import iso
from .search import embedding_text
from .settings import OWNER_TAGS
from .store import Filters
from .store.facts_base import FactQuery, FactRow
from .tags import Tags
from .wiki import SYSTEM_SESSION as WIKI
from .wiki.erase import PagesErased, pages_drawn_from

_PAGE = 500
_DONE = "done"  # the op of the line an erasure ends with: a record without one was cut short (`Eraser.finish`)


@dataclass
class Erasure:
    """What an erasure takes (a dry run: would take) out of memory."""

    sessions: list[str]
    messages: int = 0
    summaries: int = 0
    facts: list[str] = field(default_factory=list)  # erased whole: every source was an erased message
    attestations: list[tuple[str, str, str]] = field(default_factory=list)  # (fact, source type, source) taken from kept facts
    documents: int = 0  # documents are never a session's: none go
    # kept facts of an erased fact's supersession chain: an operator's correction with no source stays, and may say what
    # hers did ("Lena Novak's phone is … (LN-55102)"); listed to be checked by hand (the erasure unlinks the chain)
    check: list[str] = field(default_factory=list)
    # other homes on the store that indexed the sessions (journal ids): their journals still hold them, to be erased there
    # (`palimpsest erase --finish`); meanwhile the store's record keeps them out of the index and refuses their writes
    other_journals: list[str] = field(default_factory=list)
    done: bool = False
    rows: dict[str, int] = field(default_factory=dict)  # store rows deleted, per table
    journal_lines: dict[str, int] = field(default_factory=dict)  # system journal lines dropped or edited, per domain

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["attestations"] = [list(a) for a in self.attestations]
        return d


def _then(line: dict[str, Any] | None, scrub: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any] | None:
    return None if line is None else scrub(line)


class Eraser:
    """Selects sessions and erases them (reach it as `memory.eraser`, or call `memory.erase`)."""

    def __init__(self, kernel: Kernel, facts: Facts, tags: Tags) -> None:
        self.kernel, self.facts, self.tags = kernel, facts, tags
        # a capture client's files of the sessions in this home (its spool, Codex notify's held words), taken out by
        # the adapter that knows them: `palimpsest erase` sets `capture.notify.erase_held` (the library knows no capture)
        self.held: Callable[[set[str]], int] | None = None

    # -- choosing --------------------------------------------------------------
    def select(self, sessions: list[str] | tuple[str, ...] = (), channel: str | None = None, tag: str | None = None) -> list[str]:
        """The sessions named, those of `channel` and those carrying the accepted tag `tag` (together);
        `NotFound` when a name matches nothing — nothing is erased then."""
        if not (sessions or channel or tag):
            raise InvalidInput("say what to erase: sessions (--session), a channel (--channel) or a tag (--tag key:value)")
        chosen = set()
        for session in sessions:
            self.kernel.known_session(session)
            chosen.add(session)
        if channel:
            chosen.update(self._of_channel(channel))
        if tag:
            chosen.update(self._tagged(tag))
        return sorted(chosen)

    def _of_channel(self, channel: str) -> list[str]:
        found: list[str] = []
        while page := self.kernel.store.list_sessions(Filters(channel=channel), _PAGE, len(found)):
            found += [s.id for s in page]
        if not found:
            raise NotFound(f"no session of channel {channel[:80]!r}: nothing erased")
        return found

    def _tagged(self, tag: str) -> list[str]:
        key, value = self.tags.resolve(tag)
        found = [s for s, tags in self.tags.sessions_keyed(key).items() if f"{key}:{value}" in tags]
        if not found:
            raise NotFound(f"no session carries the tag {key}:{value}: nothing erased")
        return found

    # -- planning --------------------------------------------------------------
    def plan(self, sessions: list[str]) -> Erasure:
        """What erasing these sessions takes out, touching nothing."""
        messages = self._message_ids(sessions)
        said = {e.id for s in sessions for e in self.kernel.journal.read(s) if e.type == "message"}
        plan = Erasure(sessions, messages=len(said | self._indexed(sessions)), summaries=len(self._summary_ids(sessions)))
        for row in self._cited(messages):
            gone = [(a.source_type, a.source) for a in row.attestations if a.source in messages]
            if len(gone) == len(row.attestations):
                plan.facts.append(row.id)
            else:
                plan.attestations += [(row.id, t, s) for t, s in gone]
        plan.check = self._chained(plan.facts)
        plan.other_journals = [j for j in self.kernel.store.journals_of(sessions) if j != self.kernel.journal.id]
        return plan

    def _chained(self, erased: list[str]) -> list[str]:
        """The facts that stay of the supersession chains (`supersedes`, `superseded_by`) the erased facts are in."""
        seen, todo = set(erased), list(erased)
        while todo:
            linked = {n for r in self.kernel.store.get_facts(todo) for n in (r.supersedes, r.superseded_by) if n}
            todo = sorted(linked - seen)
            seen.update(todo)
        return sorted(seen - set(erased))

    def _message_ids(self, sessions: list[str]) -> set[str]:
        """Every event id of the sessions, from their journals (the truth) and the index (a store several homes share)."""
        return {e.id for s in sessions for e in self.kernel.journal.read(s) if e.id} | self._indexed(sessions)

    def _indexed(self, sessions: list[str]) -> set[str]:
        ids: set[str] = set()
        for session in sessions:
            offset = 0
            while page := self.kernel.store.browse(Filters(session=session), _PAGE, offset):
                ids.update(m.id for m in page)
                offset += len(page)
        return ids

    def _cited(self, messages: set[str]) -> list[FactRow]:
        ordered = sorted(messages)
        rows: dict[str, FactRow] = {}
        for start in range(0, len(ordered), _PAGE):
            rows.update((r.id, r) for r in self.kernel.store.query_facts(FactQuery(source=ordered[start:start + _PAGE])))
        return sorted(rows.values(), key=lambda r: r.id)

    # -- erasing ---------------------------------------------------------------
    def erase(self, sessions: list[str]) -> Erasure:
        """Erase these sessions (see the module's doc); journaled first, with ids and counts only."""
        plan = self.plan(sessions)
        summaries = self._summary_ids(sessions)
        pages = pages_drawn_from(self.kernel.store, summaries)
        erased = Erased({session_digest(s) for s in sessions},
                        self._message_ids(sessions) | summaries | set(plan.facts) | pages.gone)
        key = self._record(plan, erased)
        return self._carry_out(key, plan, erased, pages)

    def finish(self) -> list[Erasure]:
        """Carry out to the end the erasures recorded and never finished: a crash partway (a disk full after her
        index rows went) left her facts and `facts.jsonl` lines, and the same command, run again, found no session
        of the tag any more. The record names what to erase (sessions by digest); every step runs again harmlessly."""
        decisions = self.kernel.decisions
        done = {d.subject for d in decisions.taken(DOMAIN, changes_only=False) if d.op == _DONE}
        return [self._resume(d) for d in decisions.taken(DOMAIN) if d.op == "erase" and d.key not in done]

    def _resume(self, recorded: Decision) -> Erasure:
        change = recorded.change
        erased = Erased(set(change["sessions"]), {i for kind in ("messages", "summaries", "facts", "wiki_topics")
                                                  for i in change.get(kind, [])})
        sessions = sorted(s for s in {*self.kernel.journal.sessions(), *self._stored_sessions()} if erased.session(s))
        plan = Erasure(sessions, messages=len(change["messages"]), summaries=len(change["summaries"]), facts=list(change["facts"]),
                       attestations=[(f, t, s) for f, t, s in change["attestations"]])
        return self._carry_out(recorded.key, plan, erased, pages_drawn_from(self.kernel.store, set(change["summaries"])))

    def erased_elsewhere(self) -> list[str]:
        """This home's sessions the store records as erased: an erasure run in another home on the store took their
        rows, and their journals are here."""
        recorded = self.kernel.store.erased_sessions()
        return sorted(s for s in self.kernel.journal.sessions() if session_digest(s) in recorded)

    def _stored_sessions(self) -> list[str]:
        found: list[str] = []
        while page := self.kernel.store.list_sessions(Filters(), _PAGE, len(found)):
            found += [s.id for s in page]
        return found

    def _carry_out(self, key: str, plan: Erasure, erased: Erased, pages: PagesErased) -> Erasure:
        """Every step of an erasure after its record, each one harmless to run again (`finish`)."""
        sessions = plan.sessions
        self.kernel.store.record_erased(sorted(erased.sessions), iso(self.kernel.clock()))  # (first: no home indexes them again)
        texts = self._texts(sessions)
        owner_values = self._owner_values(sessions)
        for domain in self.kernel.decisions.domains():
            if domain != DOMAIN:
                scrub = erased.scrub_line if domain != WIKI else lambda line: _then(erased.scrub_line(line), pages.scrub_line)
                plan.journal_lines[domain] = self.kernel.decisions.rewrite(domain, scrub)
        for session in sessions:
            self.kernel.journal.remove(session)
        # the pages before the leaves: a rerun after a crash finds the leaves' patches that say what to take off
        self.kernel.store.apply_wiki_change(pages.change(self.kernel.store.wiki_topics(sorted(pages.dropped))))
        topics = self.kernel.store.erase_topics(sorted(pages.gone))
        plan.rows = {**self.kernel.store.erase_sessions(sessions), "wiki_topics": topics}
        plan.rows["facts"] = self.kernel.store.erase_facts(plan.facts, plan.attestations)
        plan.rows["capture_spool"] = self._unspool(set(sessions))
        for owner, values in owner_values.items():
            plan.rows["tag_taxonomy"] = plan.rows.get("tag_taxonomy", 0) + self.kernel.store.drop_unused_taxonomy(owner, values)
        self.facts.snapshot()
        self.kernel.embedding.forget(texts)
        self.kernel.store.scrub()
        self.kernel.decisions.record(DOMAIN, _DONE, subject=key, key=f"{_DONE}_{key}", content=f"{_DONE} {key}",
                                     created_at=iso(self.kernel.clock()))
        plan.done = True
        return plan

    def _unspool(self, sessions: set[str]) -> int:
        """This home's capture files of the sessions (`held`)."""
        return self.held(sessions) if self.held is not None else 0

    def _summary_ids(self, sessions: list[str]) -> set[str]:
        return {s.id for session in sessions for s in self.kernel.store.session_summaries(session, live=False)}

    def _record(self, plan: Erasure, erased: Erased) -> str:
        change = {"sessions": sorted(erased.sessions), "messages": sorted(i for i in erased.ids if i.startswith("evt_")),
                  "summaries": sorted(i for i in erased.ids if i.startswith("sum_")), "facts": sorted(plan.facts),
                  "wiki_topics": sorted(i for i in erased.ids if i.startswith("wtp_")),
                  "attestations": [list(a) for a in plan.attestations]}
        return self.kernel.decisions.record(DOMAIN, "erase", change, content=f"erased {len(plan.sessions)} sessions, {plan.messages} "
                                     f"messages, {len(plan.facts)} facts", created_at=iso(self.kernel.clock()))

    def _texts(self, sessions: list[str]) -> list[str]:
        """The texts of the sessions' messages as the embedding cache keys them (a message's and, as a bot's query, its content)."""
        texts: list[str] = []
        for session in sessions:
            offset = 0
            while page := self.kernel.store.browse(Filters(session=session), _PAGE, offset):
                texts += [t for m in page for t in (embedding_text(m), m.content) if t]
                offset += len(page)
        return texts

    def _owner_values(self, sessions: list[str]) -> dict[str, list[str]]:
        """The values of the owner tags (`user:`, `project:`) the sessions carry: identities, forgotten once no tag carries them."""
        values: dict[str, set[str]] = {}
        for tags in self.tags.session_tags(sessions).values():
            for tag in tags:
                key, _, value = tag.partition(":")
                if key in OWNER_TAGS:
                    values.setdefault(key, set()).add(value)
        return {k: sorted(v) for k, v in values.items()}
