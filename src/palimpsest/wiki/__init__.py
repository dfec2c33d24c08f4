"""Knowledge pages: a topic wiki mined from the leaf summaries (DESIGN.md, "wiki").

A **topic** (a person, a project, a system, a recurring subject) has a title, entities,
aliases and a page of **statements**; each statement keeps the ids of the summaries and
messages it came from, who said it and when, the facts it stands for, and a state:
`current`, `disputed` (contradicted and not settled: shown apart, both sides kept) or
`retired` (no longer true: linked to the superseded fact, kept for history). Pages are
versioned: every change is a **patch** (its operations and the leaf it came from), so a
page's history reads like a fact's. The Markdown body is rendered from the statements.

Each leaf summary queues an `extract-wiki` job (`leaf_job`), which mines it
(`palimpsest.wiki.mine`: tags as identity hints, speakers, names; the LLM's structured
patch or the deterministic fallback) and records the `WIKI_PIPELINE_VERSION` it was mined
at. A leaf mined at the current version is never mined again — not when a tag is accepted
later, not when its job runs twice. Raising the version makes a low-priority
`wiki-backfill` job (queued `wiki_backfill_delay` seconds ahead, in batches) re-mine each
older leaf once: re-mining adds what the new pipeline finds and never removes statements.

Every change (patches, topics, statements, leaf marks, mentions) is journaled first as a
decision event in `<home>/system/sessions/wiki/events.jsonl`, then applied in one store
transaction recorded in `wiki_ops`; `replay()` applies what the store lacks, and a store
without wiki operations beside a journal that has some is restored when the wiki opens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..errors import Conflict, InvalidInput, NotFound, PalimpsestError
from ..jobs import last_attempt
from ..kernel import Kernel
from ..records import iso, utcnow
from ..search import MIN_SEMANTIC, Weights, check_query, query_terms, rank
from ..store import Job, NewJob
from ..store.summaries_base import Summary
from ..store.wiki_base import LeafMark, Patch, Statement, Topic, WikiChange
from . import text as tx
from .mine import KINDS, Hints, Miner, mine_fallback, new_id, tag_hints

if TYPE_CHECKING:
    from ..tags import Tags

log = logging.getLogger(__name__)
WIKI_PIPELINE_VERSION = 1
SYSTEM_SESSION = "wiki"
MAX_PAGE = 1000


def version() -> int:
    """The current pipeline version (read at call time, so a test can raise it)."""
    return WIKI_PIPELINE_VERSION


class Wiki:
    """The wiki of one memory: mining, pages, history, search, backfill and replay.

    Reach it as `memory.wiki`."""

    def __init__(self, kernel: Kernel, tags: Tags) -> None:
        self.kernel, self.tags = kernel, tags
        self.store, self.settings = kernel.store, kernel.settings
        self.decisions = kernel.decisions
        self.checked = 0  # the pipeline version whose backfill this process has looked for
        self.decisions.restore_if_lost(SYSTEM_SESSION, lambda: not self.store.wiki_has_ops(), self.replay)

    # -- mining --------------------------------------------------------------------
    def mine(self, summary_id: str, *, use_llm: bool = True, force: bool = False) -> dict[str, Any]:
        """Mine one leaf summary into patches; a leaf already mined at the current version
        is left alone unless `force` (which then changes only what differs)."""
        leaf = self._leaf(summary_id)
        current = version()
        mark = self.store.wiki_leaf_marks([leaf.id]).get(leaf.id)
        if mark is not None and mark.version >= current and not force:
            return {"summary": leaf.id, "skipped": f"mined at version {mark.version}", "patches": 0}
        self.follow_tag_merges()
        hints = tag_hints(self, leaf.session_id)
        miner = Miner(self, leaf, use_llm=use_llm)
        units, idents = self._units(leaf)
        origin = "fallback"
        if miner.llm is not None:
            from .llm import mine_llm

            mine_llm(miner, units, hints)
            origin = "llm"
        else:
            mine_fallback(miner, units, idents, hints, self._load)
        change = miner.finish(origin, current)
        if not change.patches and mark is not None and mark.version >= current:
            return {"summary": leaf.id, "skipped": "nothing new", "patches": 0}
        change.leaves.append(LeafMark(leaf.id, leaf.session_id, current, origin, miner.now, [t.id for t in change.topics]))
        self._commit("mine", change, f"leaf {leaf.id}")
        return {"summary": leaf.id, "origin": origin, "patches": len(change.patches),
                "topics": [{"id": t.id, "title": t.title, "version": t.version} for t in change.topics]}

    def _leaf(self, summary_id: str) -> Summary:
        found = self.store.get_summaries([summary_id]) if isinstance(summary_id, str) else []
        if not found:
            raise NotFound(f"no summary {str(summary_id)[:80]!r}")
        if found[0].depth != 0:
            raise InvalidInput(f"{summary_id} is not a leaf summary: the wiki is mined from leaves")
        return found[0]

    def _units(self, leaf: Summary) -> tuple[list[tx.Unit], list[str]]:
        messages = {m.id: m for m in self.store.get_messages(leaf.sources)}
        return tx.units(leaf, messages)

    def _load(self, summary_id: str) -> tuple[Summary, list[tx.Unit]] | None:
        found = self.store.get_summaries([summary_id])
        return (found[0], self._units(found[0])[0]) if found else None

    # -- versions and backfill -------------------------------------------------------
    def stale(self, limit: int = 100) -> list[tuple[str, str]]:
        """Leaves never mined or mined below the current version, oldest first."""
        return self.store.wiki_stale_leaves(version(), limit)

    def backfill(self, limit: int | None = None, *, use_llm: bool = True) -> dict[str, int]:
        """Re-mine up to `limit` stale leaves (default one batch); each once."""
        batch = limit or max(1, int(self.settings.wiki_backfill_batch))
        done = patches = 0
        for sid, _ in self.stale(batch):
            patches += int(self.mine(sid, use_llm=use_llm)["patches"])
            done += 1
        return {"mined": done, "patches": patches, "left": len(self.stale(1))}

    def queue_backfill(self) -> bool:
        """Queue the low-priority backfill when a leaf is stale (once per version: the job key)."""
        if not self.stale(1):
            return False
        run_at = iso(utcnow() + timedelta(seconds=float(self.settings.wiki_backfill_delay)))
        return bool(self.store.enqueue([NewJob("wiki-backfill", {"version": version()}, job_key=f"wiki-backfill:{version()}",
                                               run_at=run_at, max_attempts=5)]))

    # -- tag merges ------------------------------------------------------------------
    def follow_tag_merges(self) -> int:
        """A topic named by a tag whose value was merged into another follows it: renamed
        (the old title stays an alias), or merged into the page the new value names."""
        moved = 0
        for t in self.store.wiki_topics(limit=MAX_PAGE * 10, tagged=True):
            try:
                now_tag = self.tags.filter_value(t.tag or "")
            except PalimpsestError:
                continue
            if now_tag != t.tag:
                self._retag(t, now_tag)
                moved += 1
        return moved

    def _retag(self, t: Topic, tag: str) -> None:
        now, value = iso(utcnow()), tag.split(":", 1)[1]
        change = WikiChange()
        same = [x for x in self.store.wiki_topics(limit=MAX_PAGE * 10, tagged=True) if x.tag == tag and x.id != t.id]
        same += [x for x in self.store.wiki_topics(kind=t.kind, query=value, limit=MAX_PAGE) if x.title == value and x.id != t.id]
        target = same[0] if same else None
        old_title = t.title
        if target is None:
            t.aliases = list(dict.fromkeys([*t.aliases, tx.key(old_title)]))
            t.title, t.tag, t.version, t.updated_at = value, tag, t.version + 1, now
            t.entities = list(dict.fromkeys([*t.entities, value]))
            change.keys += [(tx.key(value), t.id, "tag"), (tx.key(old_title), t.id, "alias")]
            change.patches.append(Patch(new_id("wpa"), t.id, t.version, "tags", version(),
                                        [{"op": "retitle", "from": old_title, "to": value, "tag": tag}], now))
            change.topics.append(t)
        else:
            moved = self.store.wiki_statements([t.id])
            for s in moved:
                s.topic_id, s.updated_at = target.id, now
            change.statements += moved
            target.aliases = list(dict.fromkeys([*target.aliases, tx.key(old_title), *t.aliases]))
            target.version, target.updated_at = target.version + 1, now
            t.merged_into, t.version, t.updated_at = target.id, t.version + 1, now
            change.keys += [(tx.key(old_title), target.id, "alias")] + [(a, target.id, "alias") for a in t.aliases]
            change.drop_keys += [(tx.key(old_title), t.id)] + [(a, t.id) for a in t.aliases]
            change.patches += [Patch(new_id("wpa"), target.id, target.version, "tags", version(),
                                     [{"op": "merge", "from": t.id, "title": old_title, "statements": [s.id for s in moved]}], now),
                               Patch(new_id("wpa"), t.id, t.version, "tags", version(), [{"op": "merged_into", "into": target.id}], now)]
            change.topics += [target, t]
        self._commit("retag", change, f"{old_title} -> {tag}")

    # -- reading ---------------------------------------------------------------------
    def find(self, name: str) -> Topic:
        """A topic by id, title or alias, or the topic of a statement's id (`wst_…`, what a
        recall line shows: no tool took it); a merged topic leads to the one it was merged into;
        a name shared by several topics is refused with their ids."""
        if not isinstance(name, str) or not name.strip() or len(name) > 500:
            raise InvalidInput("name a topic by its id, title or alias")
        if name.strip().startswith("wst_"):
            name = self.statement(name.strip()).topic_id
        found = self.store.wiki_topics([name.strip()]) if name.strip().startswith("wtp_") else []
        if not found:
            ids = sorted({tid for _, tid in self.store.wiki_topics_by_keys([tx.key(name)])})
            found = [t for t in self.store.wiki_topics(ids) if t.merged_into is None] if ids else []
        if not found:
            raise NotFound(f"no wiki topic {name[:80]!r}")
        if len(found) > 1:
            listed = ", ".join(f"{t.id} ({t.kind})" for t in found)
            raise InvalidInput(f"{len(found)} topics are called {name[:80]!r}: {listed}; name one by id")
        t = found[0]
        for _ in range(16):
            if not t.merged_into:
                break
            t = self.store.wiki_topics([t.merged_into])[0]
        return t

    def show(self, name: str, admit: Admit | None = None) -> dict[str, Any]:
        """A page: the topic, its statements by state, and its Markdown body; with `admit`, only the statements heard in
        a message it admits (a bot's one user's: a page gathers what everyone said of its topic)."""
        t = self.find(name)
        rows = _admitted(self.store.wiki_statements([t.id]), admit)
        by_state = {state: [s.to_dict() for s in rows if s.state == state] for state in ("current", "disputed", "retired")}
        return {"topic": t.to_dict(), **by_state, "markdown": render(t, rows)}

    def history(self, name: str) -> list[dict[str, Any]]:
        """Every patch of a page, oldest first."""
        return [p.to_dict() for p in self.store.wiki_patches(self.find(name).id)]

    def statement(self, statement_id: str) -> Statement:
        found = self.store.wiki_statements_by_id([statement_id])
        if not found:
            raise NotFound(f"no wiki statement {statement_id[:80]!r}")
        return found[0]

    def search(self, query: str, *, limit: int = 10, admit: Admit | None = None) -> list[dict[str, Any]]:
        """Pages whose statements or titles match the query, best first; each hit carries its
        best statements (current or disputed), each with its source ids. Statements are the
        candidates of the one hybrid ranking (`StatementSource`: terms held, no vectors); a
        page scores 2 when its title matches, plus its best three statements' share of the terms."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query must be a non-empty string")
        query = check_query(query)
        terms = query_terms(query)
        source = StatementSource(self.store)
        ranking = rank(source, query, Weights(1.0, 0.0, 0.0, 0.0), pool=limit * 10)
        hits = {h.id: source.held[h.id] for h in ranking.hits}
        rows = _admitted([h.row for h in ranking.hits], admit)
        titled = {tid for _, tid in self.store.wiki_topics_by_keys([tx.key(query), *[tx.key(t) for t in terms]])}
        if admit is not None:  # a page is in scope by what was said there in scope, not by its title
            titled = {tid for tid in titled if _admitted(self._best(tid, None), admit)}
        pages: dict[str, list[tuple[int, Statement]]] = {tid: [] for tid in titled}
        for s in rows:
            pages.setdefault(s.topic_id, []).append((hits[s.id], s))
        topics = {t.id: t for t in self.store.wiki_topics(list(pages))}
        out: list[dict[str, Any]] = []
        for tid, found in pages.items():
            t = topics.get(tid)
            if t is None or t.merged_into:
                continue
            found.sort(key=lambda x: (-x[0], x[1].id))
            score = (2 if tid in titled else 0) + sum(n for n, _ in found[:3]) / max(1, len(terms))
            out.append({"topic": t.to_dict(), "score": round(score, 4),
                        "statements": [{**_brief(s), "held": round(n / max(1, len(terms)), 4)} for n, s in found[:3]]
                        or [{**_brief(s), "held": 0.0} for s in _admitted(self._best(t.id, None), admit)[-3:]]})
        out.sort(key=lambda h: (-h["score"], h["topic"]["title"]))
        return out[:limit]

    def _best(self, topic_id: str, n: int | None = 3) -> list[Statement]:
        """A page's last `n` statements that hold or are disputed (all: None)."""
        rows = self.store.wiki_statements([topic_id], ["current", "disputed"])
        return rows[-n:] if n else rows

    def stats(self) -> dict[str, Any]:
        return {**self.store.wiki_stats(), "pipeline_version": version(), "stale_leaves": len(self.stale(MAX_PAGE))}

    # -- journal ---------------------------------------------------------------------
    def _commit(self, op: str, change: WikiChange, subject: str) -> None:
        key = change.op_key = new_id("wop")
        self.decisions.record(SYSTEM_SESSION, op, change.to_dict(), subject=subject, key=key, content=f"{op} {subject}"[:500])
        try:
            self.store.apply_wiki_change(change)
        except Conflict as exc:
            self.decisions.reject(SYSTEM_SESSION, key, exc)
            raise

    def replay(self) -> int:
        """Apply every journaled change the store has not applied, in journal order."""
        return self.decisions.replay(SYSTEM_SESSION, self.store.wiki_ops_applied(),
                                     lambda d: self.store.apply_wiki_change(WikiChange.from_dict(d.change, d.key)))

    # -- recall and jobs -------------------------------------------------------------
    def recall_items(self, session: str | None, query: str, limit: int = 3) -> list[dict[str, Any]]:
        """For recall and search: the pages matching `query`, each expanded to its best
        statements, each with its source ids — `{"id", "kind": "wiki", "topic", "topic_id",
        "text", "date", "state", "sources", "score"}`, best first; `text` is "Topic: statement" (`statement` the statement alone),
        `sources` the leaf and message ids (recall can skip messages a statement already
        carries). `session` is not used to filter: pages span sessions. Never raises."""
        try:
            hits = self.search(query, limit=limit) if query and query.strip() else []
        except Exception as exc:
            log.warning("wiki not recalled: %s", exc)
            return []
        return [{"id": s["id"], "kind": "wiki", "topic": h["topic"]["title"], "topic_id": h["topic"]["id"],
                 "text": f"{h['topic']['title']}: {s['text']}" + (" (disputed)" if s["state"] == "disputed" else ""),
                 "statement": s["text"] + (" (disputed)" if s["state"] == "disputed" else ""), "held": s.get("held", 0.0),
                 "date": (s["said_at"] or "")[:10] or "wiki", "state": s["state"], "sources": s["sources"], "score": h["score"]}
                for h in hits for s in h["statements"]]

    def handlers(self) -> dict[str, Any]:
        return {"extract-wiki": self.run_extract, "wiki-backfill": self.run_backfill}

    def run_extract(self, job: Job) -> None:
        """Mine one leaf (the last attempt takes the fallback), then queue the backfill if
        leaves are stale (a raised pipeline version, or leaves written before the wiki)."""
        try:
            self.mine(job.payload["summary"], use_llm=not last_attempt(job))
        except NotFound:
            return  # the summary is gone (a rebuilt store): nothing to mine
        if self.checked != version():  # once per process and version: the check reads every leaf's mark
            self.queue_backfill()
            self.checked = version()

    def run_backfill(self, job: Job) -> None:
        """One batch of stale leaves; the next batch is queued behind it while any is left."""
        result = self.backfill(use_llm=not last_attempt(job))
        if result["left"] and result["mined"]:
            run_at = iso(utcnow() + timedelta(seconds=float(self.settings.wiki_backfill_delay)))
            self.store.enqueue([NewJob("wiki-backfill", {"version": version()}, job_key=f"wiki-backfill:{version()}:{job.id}",
                                       run_at=run_at, max_attempts=5)])

    # last in the class: a method named `list` shadows the builtin in annotations after it
    def list(self, *, kind: str | None = None, query: str | None = None, limit: int = 100, offset: int = 0,
             admit: Admit | None = None) -> list[dict[str, Any]]:
        """Live topics by title, with how many statements each page holds (with `admit`: pages with a statement heard
        in a message it admits, counted by those)."""
        if kind is not None and kind not in KINDS:
            raise InvalidInput(f"kind is one of {', '.join(KINDS)}")
        _page(limit, offset)
        if admit is None:
            topics = self.store.wiki_topics(kind=kind, query=query, limit=limit, offset=offset)
            return [{**t.to_dict(), "statements": _counts(self.store.wiki_statements([t.id for t in topics])).get(t.id, {})}
                    for t in topics]
        # in scope: the pages with a statement heard there, paged among themselves (found in review: a page of all topics,
        # then filtered, had left a user's one page out of the first hundred)
        out: list[dict[str, Any]] = []
        skip, at = offset, 0
        while len(out) < limit:
            topics = self.store.wiki_topics(kind=kind, query=query, limit=SCOPED_PAGE, offset=at)
            if not topics:
                break
            at += len(topics)
            counts = _counts(_admitted(self.store.wiki_statements([t.id for t in topics]), admit))
            for t in (t for t in topics if t.id in counts):
                if skip:
                    skip -= 1
                elif len(out) < limit:
                    out.append({**t.to_dict(), "statements": counts[t.id]})
        return out

SCOPED_PAGE = 500  # topics read at a time when a scope filters them


def _counts(rows: list[Statement]) -> dict[str, dict[str, int]]:
    """Per topic, how many of `rows` are in each state."""
    counts: dict[str, dict[str, int]] = {}
    for s in rows:
        counts.setdefault(s.topic_id, {}).setdefault(s.state, 0)
        counts[s.topic_id][s.state] += 1
    return counts


Admit = Callable[[list[str]], set[str]]  # of message ids, those in a scope (`Store.admitted` under a bot's filters)


def _admitted(rows: list[Statement], admit: Admit | None) -> list[Statement]:
    """The statements heard in a message `admit` admits (all, without one)."""
    if admit is None:
        return rows
    kept = admit(sorted({m for s in rows for m in s.messages}))
    return [s for s in rows if kept.intersection(s.messages)]


class StatementSource:
    """Wiki statements (not retired) as a `hybrid.Source`: the keyword score is how many of
    the query's terms a statement holds (`LIKE`, no FTS index: pages are few and short)."""

    min_semantic = MIN_SEMANTIC
    stretch = False

    def __init__(self, store: Any) -> None:
        self.store = store
        self.held: dict[str, int] = {}  # statement id -> terms it holds

    def keyword(self, terms: list[str], match_all: bool, limit: int) -> list[tuple[str, float]]:
        found = [(i, n) for i, n in self.store.wiki_search(terms, limit) if not match_all or n >= len(terms)]
        self.held.update(found)
        return [(i, float(n)) for i, n in found]

    def count(self, terms: list[str], limit: int) -> int:
        return len(self.keyword(terms, True, limit))

    def vectors(self, vector: Any, limit: int) -> list[tuple[str, float]]:
        return []

    def cosines(self, ids: list[str], vector: Any) -> dict[str, float]:
        return {}

    def rows(self, ids: list[str]) -> dict[str, Statement]:
        return {s.id: s for s in self.store.wiki_statements_by_id(ids)}

    def features(self, row: Statement) -> dict[str, float]:
        return {}

    def tiebreak(self, row: Statement) -> tuple[Any, ...]:
        return (row.id,)


def _page(limit: Any, offset: Any) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= 1_000_000_000:
        raise InvalidInput("offset must be a non-negative integer")


def _brief(s: Statement) -> dict[str, Any]:
    return {"id": s.id, "text": s.text, "state": s.state, "who": s.who, "said_at": s.said_at,
            "sources": s.summaries + s.messages, "facts": s.facts}


def render(t: Topic, rows: list[Statement]) -> str:
    """The page as Markdown: what holds, what is disputed, what no longer holds; every
    statement ends with its source ids."""
    lines = [f"# {t.title}", "", f"*{t.kind}* · version {t.version}" + (f" · tag `{t.tag}`" if t.tag else "")]
    if t.entities:
        lines.append("Entities: " + ", ".join(t.entities))
    for state, heading in (("current", "What is known"), ("disputed", "Disputed"), ("retired", "No longer true")):
        part = sorted((s for s in rows if s.state == state), key=lambda s: (s.said_at or s.created_at, s.id))
        if not part:
            continue
        lines += ["", f"## {heading}", ""]
        for s in part:
            when = f"{s.said_at[:10]} " if s.said_at else ""
            who = f"{s.who}: " if s.who else ""
            extra = f" (disputed with {', '.join(s.disputed_with)})" if s.disputed_with and state == "disputed" else ""
            extra += f" ({s.note})" if s.note and state == "retired" else ""
            lines.append(f"- {when}{who}{s.text}{extra} [{', '.join(s.summaries + s.messages)}]")
    return "\n".join(lines) + "\n"


# -- jobs ---------------------------------------------------------------------------
def leaf_job(summary_id: str) -> NewJob:
    """The `extract-wiki` job for a new leaf summary."""
    return NewJob("extract-wiki", {"summary": summary_id}, job_key=f"extract-wiki:{summary_id}", max_attempts=3)


def after_leaf(settings: Any, summary: Summary) -> list[NewJob]:
    """Jobs for a new summary (a leaf: `extract-wiki`), for the compactor to queue."""
    return [leaf_job(summary.id)] if summary.depth == 0 and settings.wiki_extract else []


__all__ = ["KINDS", "WIKI_PIPELINE_VERSION", "Hints", "Wiki", "after_leaf", "leaf_job", "render"]
