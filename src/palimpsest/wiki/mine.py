"""Mining one leaf summary into page patches (the `extract-wiki` job's work).

Candidate topics of a leaf, in the order they are found:

1. **Tags** a person added or accepted on the session or its summaries (never a leaf's own
   unreviewed suggestion): a `project:`, `system:`, `person:` or `topic:` tag names the
   topic to update (created if new, its value carried into the patch's entities), and the
   whole leaf is about it. The automatic cwd rule tag (origin `rule`) only says where the
   session ran: it breaks a tie between topics that share a name, it is never an entity,
   and it is looked up as a topic only when the leaf itself mentions it.
2. **Speakers**: every author named in the leaf's messages (`metadata.speaker`, …) has a
   person page, which takes that speaker's own lines only (the other side names them to
   address them); a name in the leaf that starts a speaker's name (`Mel` for `Melanie`)
   becomes that page's alias.
3. **Names and identifiers** in the leaf's sentences that already name a topic (title,
   alias or tag value); any other name is a *mention*, and a name mentioned in
   `wiki_min_leaves` leaves becomes a subject page, mined from each of those leaves. Words
   that name a kind of thing ("PR", "API", "CI": `text.NOT_TOPICS`) are no names.

Per topic the patch adds the leaf's key sentences about it (at most `wiki_statements_per_leaf`,
best first by names, identifiers and numbers; each with its leaf and message ids), adds
sources to a statement said again, and handles change: a statement whose fact the facts
store has superseded (by a fact heard in this leaf) is retired and linked to both facts;
a correction ("actually, …") that no superseded fact backs is a contradiction — both
statements are kept and marked disputed, visible on the page until a person settles it.
With an LLM the same candidates and the page's current statements go to one structured
call (`PATCH_SCHEMA`), whose statements must cite the leaf's `#NN` lines.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..facts.local import CORRECTION
from ..records import iso, utcnow
from ..store.facts_base import FactQuery
from ..store.summaries_base import Summary
from ..store.wiki_base import Mention, Patch, Statement, Topic, WikiChange
from . import text as tx
from .text import Unit

log = logging.getLogger(__name__)
TAG_KEYS = ("project", "system", "person", "topic")
KINDS = ("person", "project", "system", "subject", "topic")
MIN_WORDS = 5


def new_id(prefix: str) -> str:
    return f"{prefix}_{time.time_ns():x}{secrets.token_hex(3)}"


@dataclass
class Candidate:
    topic: Topic
    whole_leaf: bool = False  # named by a tag: every sentence of the leaf is about it
    new: bool = False
    extra_leaves: list[str] = field(default_factory=list)  # earlier leaves that made a subject recurring


@dataclass
class Hints:
    """What the session's tags say: topics named (kind, value, tag) and the rule values (tie-breakers)."""

    named: list[tuple[str, str, str]] = field(default_factory=list)
    rule: list[str] = field(default_factory=list)


def tag_hints(wiki: Any, session: str) -> Hints:  # wiki: the `Wiki` that mines
    """The session's tags as identity hints (the one place tags are read)."""
    hints = Hints()
    try:
        rows = wiki.tags.list(session=session, state="accepted", limit=1000)
    except Exception as exc:
        log.warning("wiki: no tag hints for %s: %s", session, exc)
        return hints
    for r in rows:
        if r["key"] not in TAG_KEYS:
            continue
        if r["origin"] == "rule":
            hints.rule.append(r["value"])
        elif (r["key"], r["value"], r["tag"]) not in hints.named:
            hints.named.append((r["key"], r["value"], r["tag"]))
    return hints


class Miner:
    """Mines one leaf into one `WikiChange` (patches to every topic it speaks of)."""

    def __init__(self, wiki: Any, leaf: Summary, *, use_llm: bool = True) -> None:  # wiki: the `Wiki` that runs it
        self.wiki, self.leaf = wiki, leaf
        self.store = wiki.store
        self.settings = wiki.settings
        self.llm = wiki.kernel.llm if use_llm else None
        self.now = iso(utcnow())
        self.change = WikiChange()
        self.topics: dict[str, Topic] = {}  # every topic touched, by id (the change's copies)
        self.statements: dict[str, list[Statement]] = {}
        self.ops: dict[str, list[dict[str, Any]]] = {}

    # -- candidates --------------------------------------------------------------
    def candidates(self, units: list[Unit], hints: Hints) -> list[Candidate]:
        out: dict[str, Candidate] = {}
        text = self.leaf.content
        for kind, value, tag in hints.named:
            t = self._topic_for(tx.key(value), value, kind, hints, tag=tag)
            out.setdefault(t.id, Candidate(t, whole_leaf=True))
            out[t.id].whole_leaf = True
        people = list(dict.fromkeys(u.who for u in units if u.who))
        for name in people:
            t = self._topic_for(tx.key(name), name, "person", hints)
            out.setdefault(t.id, Candidate(t))
        mentioned = [v for v in hints.rule if tx.mentions(text, v)]
        seen: dict[str, str] = {}
        for u in units:
            for n in u.names + u.idents:
                seen.setdefault(tx.key(n), n)
        for k, title in self._openers(units, seen).items():
            seen.setdefault(k, title)
        for value in mentioned:
            seen.setdefault(tx.key(value), value)
        self._aliases(seen, people, out)
        found = self._resolve(list(seen), hints)
        for k, title in seen.items():
            if k in found:
                out.setdefault(found[k].id, Candidate(found[k]))
            elif k and not any(tx.key(p) == k for p in people):
                c = self._mention(k, title, "project" if title in mentioned else "subject", hints)
                if c is not None:
                    out.setdefault(c.topic.id, c)
        return list(out.values())

    def _openers(self, units: list[Unit], seen: dict[str, str]) -> dict[str, str]:
        """Names that open their sentences ("Marcus approved the plan.") — left out of `tx.names`,
        since a sentence's first word is capitalised for grammar — kept where a page already has
        the name as its key: in chat a person is named first more often than not, and a leaf
        saying "Marcus approved …" and "Marcus will be on call …" added nothing to Marcus's page
        (found by a new user). Only a page's key counts, not an earlier mention: counted, the
        openers "Here" and "Sounds" made pages of themselves."""
        firsts: dict[str, str] = {}
        for u in units:
            word = tx.opening_name(u.text)
            if word and tx.key(word) not in seen:
                firsts.setdefault(tx.key(word), word)
        if not firsts:
            return {}
        known = {k for k, _ in self.store.wiki_topics_by_keys(list(firsts))}
        return {k: w for k, w in firsts.items() if k in known}

    def _aliases(self, seen: dict[str, str], people: list[str], out: dict[str, Candidate]) -> None:
        """A one-word name that starts exactly one speaker's name is that speaker (`Mel`)."""
        for k in list(seen):
            if " " in k or len(k) < 2:
                continue
            wider = [x for x in seen if " " in x and k in x.split()]
            if len(wider) == 1:  # "Potter" beside "Harry Potter" in one leaf: the same name
                del seen[k]
                continue
            owners = [p for p in people if tx.key(p) != k and tx.key(p).startswith(k)]
            if len(owners) == 1:
                t = next((c.topic for c in out.values() if c.topic.kind == "person" and tx.key(c.topic.title) == tx.key(owners[0])), None)
                if t is not None and k not in t.aliases:
                    t.aliases.append(k)
                    self.change.keys.append((k, t.id, "alias"))
                    self._op(t, {"op": "alias", "add": k})
                del seen[k]

    def _resolve(self, keys: list[str], hints: Hints) -> dict[str, Topic]:
        """key → topic for keys that name topics; a key naming several is settled by the tags."""
        pairs = self.store.wiki_topics_by_keys(keys)
        ids = sorted({tid for _, tid in pairs} - set(self.topics))
        for t in self.store.wiki_topics(ids) if ids else []:
            self.topics[t.id] = t
        by_key: dict[str, list[Topic]] = {}
        for k, tid in pairs:
            found = self.topics.get(tid)
            if found is not None and found.merged_into is None:
                by_key.setdefault(k, []).append(found)
        return {k: self._tie(ts, hints) for k, ts in by_key.items()}

    def _tie(self, topics: list[Topic], hints: Hints) -> Topic:
        """Several topics share a name: the one the session's tags point at, else the oldest."""
        tagged = {tx.key(v) for v in hints.rule} | {tx.key(v) for _, v, _ in hints.named}
        def rank(t: Topic) -> tuple[int, str]:
            hit = t.tag is not None and tx.key(t.tag.split(":", 1)[1]) in tagged or bool({tx.key(e) for e in t.entities} & tagged)
            return (0 if hit else 1, t.created_at + t.id)
        return min(topics, key=rank)

    def _topic_for(self, k: str, title: str, kind: str, hints: Hints, tag: str | None = None) -> Topic:
        """The topic a name (and kind) stands for, created when new."""
        for t in self.topics.values():
            if (tag and t.tag == tag) or (tx.key(t.title) == k and t.kind == kind):
                return t
        self._resolve([k], hints)  # loads every topic the name stands for, whatever its kind
        live = [t for t in self.topics.values() if t.merged_into is None]
        named = [t for t in live if k in _keys(t)]
        found = [t for t in live if tag and t.tag == tag] or [t for t in named if t.kind == kind]
        if found:
            return found[0]
        t = Topic(new_id("wtp"), title, kind, self.now, self.now, tag=tag, entities=[title] if tag else [])
        self.topics[t.id] = t
        self.change.keys.append((k, t.id, "tag" if tag else "title"))
        self._op(t, {"op": "create", "title": title, "kind": kind, "tag": tag})
        return t

    def _mention(self, k: str, title: str, kind: str, hints: Hints) -> Candidate | None:
        """Record a mention; the `wiki_min_leaves`-th leaf to mention a name makes it a subject."""
        self.change.mentions.append(Mention(k, self.leaf.id, self.leaf.session_id, title, kind, self.now))
        earlier = [m for m in self.store.wiki_mentions([k]) if m.summary_id != self.leaf.id]
        leaves = list(dict.fromkeys(m.summary_id for m in earlier))
        if len(leaves) + 1 < max(1, int(self.settings.wiki_min_leaves)):
            return None
        t = self._topic_for(k, title, kind, hints)
        return Candidate(t, new=True, extra_leaves=leaves)

    # -- statements ----------------------------------------------------------------
    def statements_of(self, t: Topic) -> list[Statement]:
        if t.id not in self.statements:
            self.statements[t.id] = self.store.wiki_statements([t.id]) if t.version else []
        return self.statements[t.id]

    def relevant(self, c: Candidate, units: list[Unit]) -> list[Unit]:
        """The leaf's sentences about the topic, best first. A speaker's page holds that
        speaker's own lines only: in a conversation the other side names them to address
        them ("Wow Caroline, that is great."), which says nothing about them."""
        t = c.topic
        keys = [t.title, *t.aliases]
        speakers = {tx.key(u.who) for u in units if u.who}
        own = t.kind == "person" and bool(_keys(t) & speakers)
        def about(u: Unit) -> bool:
            if c.whole_leaf:
                return True
            if own:
                return u.who is not None and tx.key(u.who) in _keys(t)
            return (t.kind == "person" and u.who == t.title) or any(tx.mentions(u.text, k) for k in keys)
        picked = [u for u in units if about(u) and len(u.text.split()) >= MIN_WORDS]
        picked.sort(key=lambda u: -u.score)
        out, norms = [], set()
        for u in picked:
            n = tx.norm(u.text)
            if n and n not in norms:
                norms.add(n)
                out.append(u)
        return out[: max(1, int(self.settings.wiki_statements_per_leaf))]

    def add(self, t: Topic, u: Unit, leaf: Summary, facts: list[Any]) -> Statement | None:
        """Add `u` to the page, or add this leaf and message to the statement that says it already."""
        n = tx.norm(u.text)
        existing = next((s for s in self.statements_of(t) if s.norm == n), None)
        if existing is not None:
            more_s = [x for x in [leaf.id] if x not in existing.summaries]
            more_m = [x for x in [u.message] if x and x not in existing.messages]
            if more_s or more_m:
                existing.summaries += more_s
                existing.messages += more_m
                existing.updated_at = self.now
                self._keep(existing)
                self._op(t, {"op": "update", "id": existing.id, "sources": more_s + more_m})
            return None
        s = Statement(new_id("wst"), t.id, u.text[:2000], n, "current", self.now, self.now, who=u.who, said_at=u.at,
                      summaries=[leaf.id], messages=[u.message] if u.message else [], facts=[f.id for f in facts if f.superseded_by is None])
        self.statements_of(t).append(s)
        self._keep(s)
        self._op(t, {"op": "add", "id": s.id, "text": s.text, "sources": s.summaries + s.messages})
        return s

    def facts_of(self, message: str | None) -> list[Any]:
        if not message:
            return []
        try:
            return list(self.store.query_facts(FactQuery(source=message)))
        except Exception as exc:
            log.warning("wiki: facts of %s not read: %s", message, exc)
            return []

    def change_of(self, t: Topic, new: Statement, u: Unit, facts: list[Any]) -> None:
        """Retire what a fact superseded in this leaf replaced (a statement of that fact, or said in one of the
        messages it was heard in: another user's "My account PIN is 9999." is no statement of Dave's old PIN);
        a statement whose own fact is superseded already is history at once; a bare correction disputes."""
        stale = [f.id for f in facts if f.superseded_by and tx.overlap(u.text, f.text) >= 0.5]
        if stale:
            self.retire(t, new, stale, None)
        replaced = [f.supersedes for f in facts if f.supersedes]
        if replaced:
            heard = {r.id: {a.source for a in r.attestations if a.source_type == "event"} for r in self.store.get_facts(replaced)}
            for s in self.statements_of(t):
                if s.id == new.id or s.state == "retired":
                    continue
                hit = [fid for fid in replaced if fid in s.facts or set(s.messages) & heard.get(fid, set())]
                if hit:
                    self.retire(t, s, hit, new)
            return
        if stale or not CORRECTION.match(u.text):
            return
        rivals = [(tx.overlap(s.text, u.text), s) for s in self.statements_of(t) if s.id != new.id and s.state != "retired"]
        rivals = [(o, s) for o, s in rivals if o >= 0.3]
        if rivals:
            self.dispute(t, max(rivals, key=lambda x: x[0])[1], new)

    def retire(self, t: Topic, s: Statement, fact_ids: list[str], by: Statement | None) -> None:
        s.state, s.updated_at = "retired", self.now
        s.facts = list(dict.fromkeys(s.facts + fact_ids))
        s.note = f"no longer true: superseded fact {', '.join(fact_ids)}" + (f"; replaced by {by.id}" if by else "")
        s.retired_by = by.id if by else None
        self._keep(s)
        self._op(t, {"op": "retire", "id": s.id, "facts": fact_ids, "by": by.id if by else None})

    def dispute(self, t: Topic, old: Statement, new: Statement) -> None:
        for a, b in ((old, new), (new, old)):
            a.state, a.updated_at = "disputed", self.now
            if b.id not in a.disputed_with:
                a.disputed_with.append(b.id)
            self._keep(a)
        self._op(t, {"op": "dispute", "id": new.id, "with": old.id})

    # -- bookkeeping -----------------------------------------------------------------
    def _keep(self, s: Statement) -> None:
        self.change.statements = [x for x in self.change.statements if x.id != s.id] + [s]

    def _op(self, t: Topic, op: dict[str, Any]) -> None:
        self.ops.setdefault(t.id, []).append(op)

    def entities(self, t: Topic, values: list[str], hints: Hints) -> None:
        rule = {tx.key(v) for v in hints.rule}
        new = [v for v in tx.clean_entities(values) if tx.key(v) not in rule and v not in t.entities]
        if new:
            t.entities = (t.entities + new)[:64]
            self._op(t, {"op": "entities", "add": new})

    def finish(self, origin: str, version: int) -> WikiChange:
        """One patch per topic that changed (its version + 1), the topics themselves."""
        for tid, ops in self.ops.items():
            t = self.topics[tid]
            t.version += 1
            t.updated_at = self.now
            self.change.patches.append(Patch(new_id("wpa"), tid, t.version, origin, version, ops, self.now, self.leaf.id))
            self.change.topics.append(t)
        return self.change


def _keys(t: Topic) -> set[str]:
    return {tx.key(t.title), *t.aliases} | ({tx.key(t.tag.split(":", 1)[1])} if t.tag else set())


def mine_fallback(miner: Miner, units: list[Unit], idents: list[str], hints: Hints,
                  load: Callable[[str], tuple[Summary, list[Unit]] | None]) -> None:
    """The deterministic patch: key sentences per candidate topic, linked to their sources."""
    for c in miner.candidates(units, hints):
        t = c.topic
        sources = [(miner.leaf, units)] + [x for x in (load(lid) for lid in c.extra_leaves) if x is not None]
        picked_names: list[str] = []
        for leaf, us in sources:
            for u in miner.relevant(c, us):
                facts = miner.facts_of(u.message)
                s = miner.add(t, u, leaf, facts)
                if s is not None:
                    miner.change_of(t, s, u, facts)
                picked_names += u.names + u.idents
        extra = ([t.tag.split(":", 1)[1]] if t.tag else []) + (idents if c.whole_leaf else [])
        miner.entities(t, extra + [n for n in picked_names if tx.key(n) != tx.key(t.title)][:8], hints)
