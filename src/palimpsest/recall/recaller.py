"""The recaller: the recall block of a turn, from one list of sources, and the working
context and briefing built on it (`context.py`)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import envelope
from ..credentials import withheld
from ..errors import InvalidInput, PalimpsestError
from ..facts.echoes import Echoes
from ..harness.project import legacy_name
from ..kernel import Kernel
from ..records import Hit, Message, iso, more_like_it, parse_time, said_day, speaker_in
from ..search import SearchResult
from ..search.conversation import FIRST_PERSON, acknowledges, replies_to
from ..search.floor import names_any
from ..search.query import STOP_WORDS, check_query, check_scope, cut_note
from ..search.timeframe import said_in
from ..tokens import count_tokens
from ..vaults import pages_said
from . import context
from .block import (
    DEFAULT_BUDGET,
    DOCUMENT_MIN_SIMILARITY,
    HEADER,
    LIVE_TAIL,
    Recall,
    RecallItem,
    _flatten,
    _lead_in,
    _message_text,
    check_budget,
)
from .pack import fill, query_words
from .snippet import lines_saying, shared_words, unsaid
from .updates import mark_earlier

if TYPE_CHECKING:
    from ..facts import Fact, Facts
    from ..finder import Finder
    from ..summaries import Summaries
    from ..tags import Tags
    from ..vaults import Vaults
    from ..wiki import Wiki

LEAD, RANKED = "lead", "ranked"  # items that lead the block / that compete on one score
# a recalled turn takes ~25-50 tokens with its short id: a 4,000-token block asks search for
# 114 hits, capped at MAX_HITS (35 and 25 tied on LoCoMo half a, 50 lost; docs/recall.md)
TOKENS_PER_HIT = 35
# `project` "*": every repository, read here so that every surface agrees — `palimpsest mcp` gives a call naming no
# project the repository it was started in, and "*" is how a call asks across them; the CLI's `--project '*'` and
# `memory.recall(project="*")` had read it as a repository named `*` and left out every repository's sessions
EVERY_PROJECT = "*"
MIN_HITS, MAX_HITS = 20, 100


def hits_for(budget: int) -> int:
    """How many hits a block of `budget` tokens asks search for."""
    return max(MIN_HITS, min(MAX_HITS, budget // TOKENS_PER_HIT))


REPLIES_OPENED = 10  # the assistant replies among a block's first lines whose user turn is shown beside them (`_turns_answered`)
TOOL_CALL_LINES = 5  # past tool calls and their outputs in one block at most (hits are best first: the best five)
# a question about what held before a change
# (not "How old is Emma?", "before the meeting", "the history exam": a past value asked for, found in review)
ASKS_BEFORE = re.compile(r"\b(?:previous(?:ly)?\b|used to\b|\bdid(?:n't)? (?:i|we|you|he|she|they) use to \w+\b(?!\s+(?:the|a|an|my|our|this|that|these|those|it|them)\b)|before (?:i|we|you|he|she|they) (?:\w+ed|bought|got|sold|"
                         r"left|went|had|made|took)\b|at first\b|former(?:ly)?\b|my old\b|changed? from\b|what changed\b|"
                         r"how (?:has|have|did) .{1,40}\bchange|(?:what|which|where|who|how much|how many|how long)\s+(?:was|were|did|had)\b"
                         r".{0,60}\bbefore\b|\bbefore\b.{0,40}\b(?:chang|mov|switch|replac|rais|lower|increas|decreas|updat|cut|bump)\w*|"
                         # ... or about the whole series: every value it had, how often it changed, how it went since the start
                         r"how many (?:times|different)\b|\b(?:list|name) (?:all|every|each)\b|\ball (?:the|my|our) .{1,30}\b(?:i|we) (?:had|have had)\b|"
                         r"\bevery .{1,30}\b(?:has|have) had\b|\bover time\b|\bso far\b.{0,30}\b(?:chang|progress)|\b(?:at|since) the (?:start|beginning)\b|"
                         r"\bwhen (?:i|we) (?:first )?(?:started|began|joined)\b|\bin total\b|\b(?:original|initial)(?:ly)?\b)",
                         re.IGNORECASE)
PASTE_CHARS, PASTE_RATIO = 300, 4  # a message longer than both (and than its facts this many times) is shown beside them


@dataclass
class Turn:
    """What every source sees: the turn's session and query, the search result once, the
    live tail's ids, and the leading items gathered so far."""

    session: str | None
    query: str
    result: SearchResult | None
    live_ids: set[str]
    lead: list[RecallItem] = field(default_factory=list)
    scope: dict[str, str] = field(default_factory=dict)  # tag, agent, channel: a bot's user (`user:alice`); what was heard elsewhere stays out
    shown_since: str | None = None  # the running session's turns from this time are in the model's window already
    said_by: str | None = None  # a recall as of a past day: only facts first said before this time
    echoes: Echoes | None = None  # the retired facts the messages found said, once the messages are read


Source = Callable[[Turn], list[RecallItem]]


SHOWN_SCAN = 200  # the running session's newest messages taken for its window, and looked through for its latest compaction


class Recaller:
    """Recall for one memory: `sources` is the one list every recall pulls from, in order."""

    def __init__(self, kernel: Kernel, finder: Finder, facts: Callable[[], Facts], tags: Tags, vaults: Callable[[], Vaults],
                 wiki: Callable[[], Wiki], summaries: Summaries) -> None:
        self.kernel, self.finder, self._facts, self.tags = kernel, finder, facts, tags
        self._vaults, self._wiki, self.summaries = vaults, wiki, summaries
        self.sources: list[tuple[str, Source]] = [
            (LEAD, self._facts_items), (LEAD, self._skills), (LEAD, self._symbols),
            (RANKED, self._summaries), (RANKED, self._wiki_items), (RANKED, self._documents), (RANKED, self._messages),
        ]

    def recall(self, session: str | None, query: str, budget: int = DEFAULT_BUDGET, *, now: Any = None,
               live_tail: int = LIVE_TAIL, limit: int | None = None, tag: str | None = None, agent: str | None = None,
               channel: str | None = None, project: str | None = None, harness_shows: bool = False) -> Recall:
        """The recall block for a turn of `session` about `query`, within `budget` tokens.
        `limit`: how many hits search may hand over (default: one per `TOKENS_PER_HIT` of
        the budget, from 20 to 100), so a larger budget holds more evidence until the
        relevance floor or the budget stops it. `project`: the repository the turn is in
        (a harness's working folder): what was heard only in sessions of other repositories
        stays out, what was heard in no repository's session stays in (`_of_project`); `EVERY_PROJECT` ("*"), as none,
        asks across every repository. `harness_shows`: the
        harness shows the running session (a hook): its turns in the model's window stay out (`_shown_since`)."""
        started = time.perf_counter()
        budget = check_budget(budget)
        if not isinstance(live_tail, int) or isinstance(live_tail, bool) or live_tail < 0:  # ("3" had raised a TypeError; -1 passed)
            raise InvalidInput(f"live_tail must be a whole number of messages, 0 or more, got {live_tail!r}")
        limit = limit if limit is not None else hits_for(budget)
        said, query = query, check_query(query)
        scope = {k: v for k, v in (("tag", tag), ("agent", agent), ("channel", channel)) if v is not None}
        for k, v in {**scope, "project": project}.items():
            check_scope(k, v)
        live = self._live_tail(session, live_tail, now)
        # a recall as of a past day holds nothing said on the days after it (a library user's replay had shown later
        # turns); the day of `now` whole, as a question's date is a day (LongMemEval dates four answers hours after it)
        moment = parse_time(now, "now") if now is not None else None
        before = {"until": (moment.date() + timedelta(days=1)).isoformat()} if moment is not None else {}
        past = moment is not None and moment < parse_time(self.kernel.clock()) - timedelta(days=1)
        if moment is not None:
            # and its facts are those that held then, not every fact held until then (a search's window): a past day's
            # at its end ("I moved to Seattle", said two weeks later, had stood in for Portland in a replay of that day),
            # today's at `now` (a bot passing each turn's time had been shown the superseded "easy run 6 km" beside the
            # 12 km that replaced it; and a fact ending tonight still holds)
            before["valid_at"] = before["until"] if past else iso(moment)
        elsewhere = self._elsewhere(project) if project not in (None, EVERY_PROJECT) else None
        # other repositories' sessions are left out inside the search, before it cuts its hits: filtered after, 300 lines
        # of one repository about a lamp had taken all 57 places and left another's answer out (an empty block)
        apart = self._apart(elsewhere) if elsewhere else ()
        result = self.finder.search(query, limit=limit, now=now, **scope, **before, **({"apart": apart} if apart else {})) \
            if query.strip() else None
        if scope and result is not None and result.hits and len(result.hits) < limit:  # (a scope given: not the whole store)
            result.hits += self._rest_of_scope(result.hits, limit, {**scope, "until": before.get("until"), "apart": apart})
        notes: list[str] = [*(result.notes if result is not None else []), *cut_note(said)]
        if session and live_tail and not live and self.kernel.store.get_session(session) is None:
            notes.append(f"no session {session[:80]!r} is stored yet: no live tail")  # (a typo said nothing; a first turn is this too)
        turn = Turn(session, query, result, {i.id for i in live}, scope=scope,
                    shown_since=self._shown_since(session) if session and harness_shows else None,
                    said_by=before["until"] if past else None)
        ranked: list[RecallItem] = []
        for group, source in self.sources:
            items = source(turn)
            (turn.lead if group == LEAD else ranked).extend(items)
        if elsewhere is not None:
            turn.lead, ranked = self._of_project(turn.lead, elsewhere), self._of_project(ranked, elsewhere)
        ranked.sort(key=lambda i: -i.score)  # summaries and turns compete on one score
        for item in ranked:  # a summary or wiki line saying what a correction retired: kept (it says more), marked
            if item.kind in ("summary", "wiki") and turn.echoes is not None and not item.note \
                    and (fact := turn.echoes.restated(item.text)) is not None:
                item.note = f"in part no longer holds: {envelope.field(fact.text, 80)}"
        ranked = _once(turn.lead, ranked)
        words = query_words(query)
        lead = mark_earlier(turn.lead, ranked, words, query)  # the current belief first, earlier values marked
        items, used, block = fill(lead, ranked, live, budget, words)
        if not items and budget and count_tokens(envelope.wrap(HEADER)) > budget:
            notes.append(f"a budget of {budget} tokens cannot hold the envelope; nothing recalled")
        elif not items and budget and (lead or ranked or live):  # (it said nothing: an empty block, as if nothing was found)
            notes.append(f"a budget of {budget} tokens holds none of the {len(lead) + len(ranked) + len(live)} lines found")
        return Recall(session, query, budget, items, used, block, (time.perf_counter() - started) * 1000, notes)

    def _rest_of_scope(self, hits: list[Hit], limit: int, filters: dict[str, Any]) -> list[Hit]:
        """The scope's other messages, ranked below the hits, when the search found some of it and the block asks for as
        many turns as the scope holds (`limit`): with room for all of them there is nothing to choose, and a choice by
        meaning loses what the model cannot read as near. Found by a support bot's builder: "which plan am I on right
        now?" of a customer's six messages held only her retired "Basic plan"; "I upgraded to Pro" shares no word with
        the question and is as far from it as "is dark mode coming?" to the local model (cosine 0.10, under the floor's
        0.35). A larger scope is left to the ranking and the floor, which keep a block to what bears on the question; so is
        a recall with no scope, whose scope is the whole store (a small home's "what is my cat's name?" had shown a
        therapist's words about anxiety: found in review)."""
        scope = self.kernel.store.browse(self.finder.filters(**filters), limit + 1, 0, True)
        if len(scope) > limit:
            return []
        found = {h.message.id for h in hits}
        return [Hit(m, 0.0, {}) for m in scope if m.id not in found]

    def _elsewhere(self, project: str) -> Callable[[list[str]], bool]:
        """Whether a session with these tags is only other repositories' than `project`'s. A folder below a folder that
        is no repository is its own ("~/homelab/esphome" in "~/homelab": a home lab's folders, none of them a
        repository, had each been a project apart, and recall in "~/homelab" held none of them)."""
        mine = self.tags.filter_value(f"project:{project.strip()}")
        # a session tagged only with the name earlier versions gave this project (`api` for `acme/api`) is its own, as it
        # was before projects were told apart by owner (`harness.project`); one that names a whole project is not
        legacy = f"project:{old}" if (old := legacy_name(mine.split(":", 1)[1])) else None
        below = mine + "/" if mine.startswith("project:/") else None

        def elsewhere(tags: list[str]) -> bool:
            projects = [t for t in tags if t.startswith("project:")]
            if not projects or mine in projects or below and any(t.startswith(below) for t in projects):
                return False
            return legacy not in projects or any(legacy_name(t.split(":", 1)[1]) for t in projects)
        return elsewhere

    def _apart(self, elsewhere: Callable[[list[str]], bool]) -> tuple[str, ...]:
        """The sessions only other repositories' (`elsewhere`), each set of tags judged once (most sessions carry one)."""
        keyed = {s: tuple(sorted(t)) for s, t in self.tags.sessions_keyed("project").items()}
        judged = {tags: elsewhere(list(tags)) for tags in set(keyed.values())}
        return tuple(sorted(s for s, tags in keyed.items() if judged[tags]))

    def _of_project(self, items: list[RecallItem], elsewhere: Callable[[list[str]], bool]) -> list[RecallItem]:
        """The items of the turn's project and of no project: a line heard only in sessions tagged with
        other repositories' `project:` leaves (a coding user's second repository had led the
        block with its own package manager, and an "earlier; newer" mark had paired the two
        repositories' retry counts). A person's own statement ("I prefer …") is theirs in every
        repository, as the curator holds it; what no session said (documents, skills) stays."""

        def said(item: RecallItem) -> list[str]:  # the messages a fact was heard in, a wiki statement came from
            refs = [s.removeprefix("event:") for s in item.sources] if item.kind in ("fact", "wiki") else []
            return [r for r in refs if r.startswith("evt_")]

        ids = list(dict.fromkeys(r for i in items for r in said(i)))
        heard = {m.id: m.session for m in self.kernel.store.get_messages(ids)} if ids else {}

        def sessions(item: RecallItem) -> set[str]:
            if item.kind in ("fact", "wiki"):
                return {heard[r] for r in said(item) if r in heard}
            return {item.session} if item.session else set()

        of = {i.id: sessions(i) for i in items}
        tags = self.tags.session_tags([s for found in of.values() for s in found])
        return [i for i in items if i.kind in ("skill", "document", "symbol") or not of[i.id]
                or not all(elsewhere(tags.get(s, [])) for s in of[i.id])
                or i.kind == "fact" and FIRST_PERSON.search(i.text)]  # (skills and documents carry the running session: no one's)

    # -- the sources -------------------------------------------------------------
    def _facts_items(self, turn: Turn) -> list[RecallItem]:
        items = []
        for hit in turn.result.facts if turn.result is not None else []:
            f = hit.fact
            sources = [a.source for a in f.attestations]
            who = speaker_in(f.metadata)  # a distilled statement of a named speaker is shown as theirs
            text = f"{who}: {f.text}" if who else f.text
            # the day it was first said: its words are as said ("Yesterday was my last day at Brightline.", valid from the
            # 9th, was shown under the 9th and read as the 8th)
            said = min((a.at for a in f.attestations if a.at), default=f.valid_from)
            if turn.said_by is not None and parse_time(said) >= parse_time(turn.said_by):
                continue  # said after the day a past recall is of
            day, held = said_day(said, f.metadata), said_day(f.valid_from, f.metadata)
            # and the day it holds from when its words named another ("On Saturday we adopted a dog!", said on Monday:
            # the block had shown Monday alone, and the model answered Monday)
            items.append(RecallItem(f.id, "fact", day, text, 1.0 + hit.score, None, sources, at=f.valid_from,
                                    keep=len(who) + 1 if who else 0, note=f"holds from {held}" if held != day else ""))
        return items

    def _skills(self, turn: Turn) -> list[RecallItem]:
        return self.skill_items(turn.session, turn.query, turn.scope.get("agent"))

    def skill_items(self, session: str | None, query: str, agent: str | None = None) -> list[RecallItem]:
        """Skills whose trigger occurs in the turn (skill vaults attached to the session or agent)."""
        try:
            found = self._vaults().skills.matching(session, query, agent)
        except PalimpsestError as exc:  # the store is down: recall goes on without skills
            context.log.warning("skills left out of recall: %s", exc)
            return []
        return [RecallItem(f"skill:{s.vault}/{s.name}", "skill", s.indexed_at[:10],
                           f"skill {s.name} ({s.vault}): {s.description}\n{s.body}".strip(), 2.0, session) for s in found]

    def _symbols(self, turn: Turn) -> list[RecallItem]:
        """Code symbols the turn names, from the code graph of the session's project (its
        accepted `project:` tag), when that repository is indexed."""
        if not turn.session or not turn.query.strip():
            return []
        from ..code import symbols_mentioned

        tags = self.tags.session_tags([turn.session]).get(turn.session, [])
        items = []
        for project in [t.split(":", 1)[1] for t in tags if t.startswith("project:")]:
            for sym in symbols_mentioned(turn.query, project, settings=self.kernel.settings):
                items.append(RecallItem(f"sym_{sym.id}", "symbol", "code", sym.brief(), 1.5, turn.session))
        return items

    def _summaries(self, turn: Turn) -> list[RecallItem]:
        return [RecallItem(s["id"], "summary", s["latest_at"][:10], s["content"], s["score"], s.get("session_id"), at=s["latest_at"])
                for s in (turn.result.summaries if turn.result is not None else [])]

    def _wiki_items(self, turn: Turn) -> list[RecallItem]:
        """The best-matching topic pages' statements, each with its sources."""
        if not turn.query.strip():
            return []
        found = self._wiki().recall_items(turn.session, turn.query)
        if turn.result is not None:  # held to what the messages' search found, as facts and summaries are
            found = [w for w in found if names_any(turn.result.unknown, w["statement"])]
        if turn.scope and found:  # a statement stays when one of the messages it came from was heard in the scope
            admitted = self.kernel.store.admitted(sorted({s for w in found for s in w["sources"]}), self.finder.filters(**turn.scope))
            found = [w for w in found if admitted.intersection(w["sources"])]
        # the page's title said as a page's, not as a speaker's ("Tobiah: …" read as Tobiah's words, though Quill said them)
        # a statement competes with the turns on its own share of the query's terms, not its page's score (2 and more
        # for a page titled with a word of the query: every statement of "Jonas" outranked every turn, and with pages
        # formed LoCoMo dev's blocks held every evidence turn for 0.815 / 0.754 of the questions at 1,000 tokens on its two
        # halves, 0.831 / 0.768 so, 0.833 / 0.775 without pages: bench/recall.py quality locomo --derive --split a|b)
        return [RecallItem(w["id"], "wiki", w["date"], f"(wiki: {w['topic']}) {w['statement']}", w["held"], turn.session,
                           list(w["sources"]), keep=len(f"(wiki: {w['topic']}) ")) for w in found]

    def _documents(self, turn: Turn) -> list[RecallItem]:
        """Chunks of the document vaults attached to the session or to the agent recalling (else the session's stored
        agent) that the agent may read, when they are close enough to the turn. The agent recalling is the turn's
        `agent`: a bot recalling before a new customer's first message is stored had no policy text (the stored
        session's agent was all that was read)."""
        agent = turn.scope.get("agent")
        if not (turn.session or agent) or not turn.query.strip():
            return []
        hits = self._vaults().search(turn.query, session=turn.session, agent=agent, limit=5,
                                     min_similarity=DOCUMENT_MIN_SIMILARITY).hits
        return [RecallItem(h.id, "document", h.changed_at[:10], f"{h.document}{' › ' + h.heading_path if h.heading_path else ''}"
                           f"{' (' + pages_said(h.pages) + ')' if h.pages else ''}: {h.text}", h.score, turn.session, [h.document])
                for h in hits]

    def _messages(self, turn: Turn) -> list[RecallItem]:
        if turn.result is None:
            return []
        attested: dict[str, str] = {}  # message -> the facts shown from it
        for item in turn.lead:
            for source in item.sources:
                attested[source] = f"{attested.get(source, '')} {item.text}"
        echoes = turn.echoes = Echoes(self.kernel, self._facts)
        retired = echoes.suppressed([h.message for h in turn.result.hits])  # sources and echoes of retired facts
        # a question about what held before ("What was my dose before Dr. Lindqvist changed it?") needs the retired
        # statement: shown, marked, where any other question leaves it out (the 20 mg the change replaced was in no block)
        history = bool(ASKS_BEFORE.search(turn.query))
        # and so does one naming a past time, for what was said then: once 72.3 kg was superseded by 68.9, "how much did i
        # weigh at the end of april?" was answered 68.9, and "what happened on september 7?" had an empty block (its
        # only hits, that day's messages, were a superseded knee flare-up and the reply echoing it)
        then = turn.result.then
        items = []
        seen_text: set[str] = set()
        calls = 0
        words = query_words(turn.query)
        for h in turn.result.hits:
            m = h.message
            key = _flatten(m.content).casefold()
            if m.id in turn.live_ids or _told_by_facts(key, attested.get(m.id)) or (key and key in seen_text) \
                    or m.id in retired and not (history or then is not None and said_in(then, m)):
                continue
            if turn.shown_since is not None and m.session == turn.session and m.created_at >= turn.shown_since:
                continue  # the harness shows it (a hook's block of a running session had been half its own first turn)
            if (m.metadata or {}).get("boilerplate"):
                continue  # a harness's instructions or environment (<user_instructions>, <environment_context>): search finds them, recall shows what was said
            if not _says_something(m) or acknowledges(m) or _a_refrain(h, words):
                continue  # a blank turn or a bare "Noted.", found by the turn before it in its search context
            if (m.tool_name or m.tool_result) and m.role != "user":
                if not _call_asked(m, turn.query, words):
                    continue  # filler: "who is on call for the redis cluster?" (never discussed) had 5 kubectl and patroni lines
                calls += 1
                if calls > TOOL_CALL_LINES:
                    continue  # the best few: a coding session's block was thirty "Called Read with file_path=…" lines
            seen_text.add(key)
            items.append(RecallItem(m.id, "message", said_day(m.created_at, m.metadata), _shown_to(self._whole(m, words), turn.session), h.score, m.session,
                                    at=m.created_at, keep=_lead_in(m), tool=bool(m.tool_name or m.tool_result),
                                    note="no longer holds" if m.id in retired else
                                    f"in part no longer holds: {_retired_asked(echoes.partly[m.id], words)}" if m.id in echoes.partly else
                                    ALTERNATE if m.alternate else more_like_it(h)))
        return items + self._turns_answered(turn, [h.message for h in turn.result.hits], items, seen_text, attested, echoes)

    def _turns_answered(self, turn: Turn, found: list[Message], items: list[RecallItem], seen_text: set[str],
                        attested: dict[str, str], echoes: Echoes) -> list[RecallItem]:
        """The user's turn an assistant reply among the first `REPLIES_OPENED` lines answers, where search did not find
        that turn: shown beside its reply, after every hit. A bot's "Noted, I'll use the Porto address from now on." was
        found for "what's my address?", and the address itself was in the turn before it ("I just moved, new place is
        14 Rua das Flores, Porto.": no word of the query, cosine 0.23) and in no block."""
        by_id = {m.id: m for m in found}
        words = query_words(turn.query)
        least = min((i.score for i in items), default=0.0)
        out = []
        for item in items[:REPLIES_OPENED]:
            reply = by_id.get(item.id)
            if reply is None or reply.role != "assistant" or reply.tool_name or reply.tool_result:
                continue
            m = self._turn_before(reply)
            if m is None or not replies_to(reply, m) or m.role != "user" or m.id in by_id or m.id in turn.live_ids:
                continue
            key = _flatten(m.content).casefold()
            if key in seen_text or _told_by_facts(key, attested.get(m.id)) or (m.metadata or {}).get("boilerplate") \
                    or not _says_something(m) or m.tool_name or m.tool_result or echoes.suppressed([m]) \
                    or turn.shown_since is not None and m.session == turn.session and m.created_at >= turn.shown_since:
                continue
            seen_text.add(key)
            out.append(RecallItem(m.id, "message", said_day(m.created_at, m.metadata), _shown_to(self._whole(m, words), turn.session),
                                  least - (1 + len(out)) * 1e-6, m.session, at=m.created_at, keep=_lead_in(m),
                                  note=ALTERNATE if m.alternate else ""))
        return out

    def _whole(self, m: Message, words: set[str]) -> Message:
        """The message, where the index holds it cut and its copy lacks some of the query's `words`, with the lines
        past the copy that may say them (`snippet.lines_saying`, at most `field_cap` characters of them): the line a
        question asks about may be past the index's first `field_cap` characters (a 38 KB pasted itinerary's last line
        held the reservation code; its first lines were shown). A copy saying them all is snippet enough: one journal
        read per long hit had slowed recall (review). Only those lines: a customer's 5 MB pasted log, read whole for
        "what plan are we on?" and every line weighed, had taken each recall of hers past the 60 s deadline."""
        lacking = unsaid(_message_text(m), words) if m.truncated else set()
        if not lacking:
            return m
        copy = m.content or ""
        past = lines_saying((self.kernel.whole(m).content or "")[len(copy):], lacking, self.kernel.settings.field_cap)
        return replace(m, content=f"{copy}\n{past}" if past else copy)

    def _turn_before(self, reply: Message) -> Message | None:
        """The message before `reply` in its journal: one store read (two turns appended in one second share a time, so
        the read reaches past it and goes by the journal's order; review)."""
        until = iso(parse_time(reply.created_at) + timedelta(microseconds=1))
        near = self.finder.browse(session=reply.session, until=until, limit=3, newest_first=True)
        return max((m for m in near if m.journal_path == reply.journal_path and m.journal_line < reply.journal_line),
                   key=lambda m: m.journal_line, default=None)

    def _shown_since(self, session: str) -> str:
        """For a harness that shows the running conversation (its hook), from when the running session's turns are in
        the model's window: after its latest compaction summary; with none among its newest `SHOWN_SCAN` messages, those
        (a harness that marks no compaction, or a long run since one: what is older is recalled); else all ("")."""
        newest = self.finder.browse(session=session, limit=SHOWN_SCAN, newest_first=True)
        for m in newest:
            if (m.metadata or {}).get("compact_summary"):
                return m.created_at
        return newest[-1].created_at if len(newest) == SHOWN_SCAN else ""

    def _live_tail(self, session: str | None, n: int, now: Any = None) -> list[RecallItem]:
        """The session's last `n` messages said by `now` (given), or by a day from now: a
        message dated 2099 by a broken clock was the latest turn of every recall."""
        if not session or n <= 0:
            return []
        until = parse_time(now, "now") if now is not None else parse_time(self.kernel.clock()) + timedelta(days=1)
        return [RecallItem(m.id, "live", said_day(m.created_at, m.metadata), _message_text(m), 0.0, session, at=m.created_at,
                           keep=_lead_in(m)) for m in self._recent(session, n, until)
                if _says_something(m) and not (m.metadata or {}).get("boilerplate")]  # (a slash command's markup took two of six)

    # -- built on recall -----------------------------------------------------------
    def working_context(self, session: str, query: str | None = None, *, last_n: int = 20,
                        budget: int = DEFAULT_BUDGET, workspace: str | Path | None = None, **scope: Any) -> dict[str, Any]:
        """Workspace files, the session's recent messages, and the recall block (see `context.py`);
        `scope` (tag, agent, channel, project) is the recall block's, as `recall` takes it.
        An unknown session is `NotFound`."""
        self.kernel.known_session(session)
        files = context.workspace_files(workspace if workspace is not None else self.kernel.settings.workspace)
        recent = context.recent_messages(self._recent(session, last_n))
        if query is None:
            query = next((m["content"] for m in reversed(recent) if m["role"] == "user" and m["content"]), "")
        block = self.recall(session, query, budget, **scope)
        parts = [f"# {f['name']}\n{f['text']}" for f in files]
        if block.block:
            parts.append(block.block)
        return {"session": session, "files": files, "recent": recent, "recall": block.to_dict(), "system_prompt": "\n\n".join(parts)}

    def briefing(self, session: str, recent: int = 10) -> dict[str, Any]:
        """A resume briefing for a session, from the index (and summaries when they exist).
        An unknown session is `NotFound`."""
        return context.briefing(session, self.kernel.known_session(session), self.finder.browse(session=session, limit=20),
                                context.recent_messages(self._recent(session, recent)), self.summaries.latest(session))

    def _recent(self, session: str, n: int, until: Any = None) -> list[Message]:
        """The session's last `n` messages (said before `until`), oldest first: the live tail, the briefing's and the working
        context's recent turns. Not a branch the conversation left: an imported ChatGPT prompt edited into "やっぱりロゴは
        金色のグラデーションにする。", answered, then left for the first wording, had been the last thing said. (A turn
        appended between two pages moves the next page back by one: a line already kept is not kept twice.)"""
        n, kept, offset = max(1, n), [], 0
        while True:
            page = self.finder.browse(session=session, limit=n, offset=offset, newest_first=True, until=until)
            seen = {m.id for m in kept}
            kept += [m for m in page if not m.alternate and m.id not in seen]
            if len(kept) >= n or len(page) < n:
                return list(reversed(kept[:n]))
            offset += n


# a line of a branch the conversation left (an edited prompt's first wording, a regenerated answer's draft: an imported
# ChatGPT history's never-sent "£500" rate email had stood in 17 of 35 blocks as what was said)
ALTERNATE = "a branch not kept: an edited or regenerated turn"


def _once(lead: list[RecallItem], ranked: list[RecallItem]) -> list[RecallItem]:
    """The ranked items without one whose words (its speaker or page left aside) an item
    before it (or a leading one) already says word for word — a branch summary of one leaf is
    its leaf's text, one statement may stand on three pages (a block showed it under "Tobiah:",
    "Quill:" and "Edinburgh:") — and with a wiki statement whose turn is a candidate too
    replaced by that turn, in the statement's place: the turn says it whole, with its own day
    (a short chat's block had each sentence twice, and lost evidence at 1,000 tokens). (A text
    inside a longer one is kept: the longer may be shown as a snippet without it.)"""
    said = {_said(i) for i in lead}
    turns = {i.id: i for i in ranked if i.kind == "message"}
    shown: set[str] = set()
    kept = []
    for item in ranked:
        if item.kind == "wiki":
            quoted = [turns[r] for r in (s.removeprefix("event:") for s in item.sources) if r in turns]
            if quoted:
                item = quoted[0]  # (already in its place above, it is not shown twice: below)
        if item.id in shown:
            continue
        key = _said(item)
        if key and key in said:
            continue
        said.add(key)
        shown.add(item.id)
        kept.append(item)
    return kept


def _retired_asked(facts: list[Fact], words: set[str]) -> str:
    """The retired fact a line's mark names, of those its message said: the one sharing most words with the query (the
    first heard on a tie), and how many more there are. A novelist's character list backs three facts she corrected;
    for "who is Mara to Elira now?" its mark had named the first, "Corin Kade is Elira Kade's younger brother"."""
    asked = max(facts, key=lambda f: shared_words(f.text, words))  # (max keeps the first of equals)
    more = f" (and {len(facts) - 1} more)" if len(facts) > 1 else ""
    return f"{envelope.field(asked.text, 80)}{more}"


def _said(item: RecallItem) -> str:
    """An item's words as `_once` compares them: without the speaker or page it opens with."""
    return _flatten(item.text[item.keep:]).casefold()


def _shown_to(m: Message, session: str | None) -> str:
    """A message's line in `session`'s block: a credential it says withheld when it is another session's (found by a
    Claude Code user: a staging database URL's password said once was in 16 of 31 hook blocks of other folders' sessions,
    the first prompt of another service among them). Its own session's block, and `memory_get_full`, show every word."""
    text = _message_text(m)
    return text if session is not None and m.session == session else withheld(text)


def _says_something(m: Any) -> bool:
    """A message with words or a tool call: a turn of spaces was shown as an empty "user:" line. A reasoning summary
    that is only its title says nothing a later turn needs: Codex's "**Running `kubectl`**" had taken 104 of 694 lines
    of an SRE's blocks (its words stay in the journal, `get-full`)."""
    if (m.metadata or {}).get("thinking") and _TITLE_ONLY.fullmatch((m.content or "").strip()):
        return False
    return bool((m.content or "").strip() or m.tool_name or m.tool_result)


def _a_refrain(h: Hit, words: set[str]) -> bool:
    """Whether a hit is a line said word for word after other turns too (`Hit.copies`: search folded them into it) that
    says none of the query's `words` itself: the turn before one of its copies found it (its search context), and a line
    said after every kind of turn answers none of them. A Claude Code assistant's "Let me run that.", said before 27 tool
    calls, had been in 29 of 38 blocks of a data scientist's ("who is the PM on this project?": found by "ok starting
    the churn project today …"). A reply said once ("Paris!" to "Where did you go?") still answers the turn that found
    it; the live tail keeps a refrain when it was said last; a tool call is judged by its own words (`_call_asked`)."""
    m, asked = h.message, words - STOP_WORDS
    return bool(h.copies and asked and not (m.tool_name or m.tool_result)) and not shared_words(m.content or "", asked)


_TITLE_ONLY = re.compile(r"\*\*[^*\n]+\*\*|#+ [^\n]+")  # a markdown title alone: "**Running `kubectl`**", "## Plan"


def _call_asked(m: Message, query: str, words: set[str]) -> bool:
    """Whether a tool call or its output is what the query asks for: it says the query word for word (an exact command,
    flag or error: "--force-conflicts"), or half the query's words of substance are its own — its arguments and output,
    not the sentence told of it ("Called shell …" had matched every question saying "call"). An SRE's Codex blocks were a
    fifth restated calls, most from sessions that did not answer the question."""
    said = f"{json.dumps(m.tool_args, ensure_ascii=False)} {m.tool_result or ''}"
    if query.strip().casefold() in said.casefold():
        return True
    asked = {w for w in words if w not in STOP_WORDS}
    return bool(asked) and shared_words(said, asked) * 2 >= len(asked)


def _told_by_facts(text: str, facts: str | None) -> bool:
    """Whether the facts shown from a message tell what it says: not a paste or notes many times their length ("Raj pasted
    this from the soak test:" had stood for the whole log, and the log's errors were in no block), and each of its
    sentences shares half its words with them ("Birthday yesterday was great." had stood for "… Jonas gave me a Leica
    Summicron lens", and "What did Jonas give me?" was answered from no block)."""
    if facts is None or len(text) > max(PASTE_CHARS, PASTE_RATIO * len(facts.strip())):
        return False
    told = set(_WORDS.findall(facts.casefold()))
    for sentence in _SENTENCE_END.split(text):
        words = set(_WORDS.findall(sentence)) - _SMALL_WORDS
        if words and len(words & told) * 2 < len(words):
            return False
    return True


_WORDS = re.compile(r"[^\W\d_]{3,}|\d+")  # (`text` comes folded to lower case)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_SMALL_WORDS = STOP_WORDS | {"also", "onto"}  # (the search's stop words)
