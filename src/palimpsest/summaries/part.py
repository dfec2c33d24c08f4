"""`memory.summaries`: the summary DAG of every session — compaction (`compactor.py`),
search (summaries as a source of the one hybrid ranking), expansion to children and
source messages, the tree check, embedding and replay from the decision log."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from ..decisions import REJECTED
from ..errors import Conflict, NotFound
from ..jobs import last_attempt
from ..kernel import Kernel
from ..pipeline import quiet_compaction
from ..records import parse_time, utcnow
from ..search import MIN_SEMANTIC, Weights, decay, rank
from ..store import Filters, Job, NewJob
from ..store.summaries_base import Summary
from .compactor import SYSTEM_SESSION, Compactor, SummaryHit

log = logging.getLogger(__name__)
IMPORTANCE_BY_DEPTH = (0.5, 0.4, 0.3)  # a leaf is the most specific


class SummarySource:
    """Live summaries as a `hybrid.Source`. Their temporal term is a message's: the decay
    from their clock — the newest message they cover, or with the `accessed` decay clock
    their last access — times the reinforcement of their access count (capped), at most 1."""

    min_semantic = MIN_SEMANTIC
    stretch = False

    def __init__(self, store: Any, filters: Filters | None, model: str, moment: datetime, weights: Weights,
                 accesses: Any = None) -> None:
        self.store, self.filters, self.model, self.moment = store, filters, model, moment
        self.weights, self.accesses = weights, accesses

    def keyword(self, terms: list[str], match_all: bool, limit: int) -> list[tuple[str, float]]:
        return self.store.summary_keyword_search(terms, self.filters, limit, match_all)

    def count(self, terms: list[str], limit: int) -> int:
        return len(self.keyword(terms, True, limit))

    def vectors(self, vector: Any, limit: int) -> list[tuple[str, float]]:
        try:
            return self.store.summary_vector_search(self.model, vector, self.filters, limit)
        except Exception as exc:
            log.warning("summary search without vectors: %s", exc)
            return []

    def cosines(self, ids: list[str], vector: Any) -> dict[str, float]:
        return {}

    def rows(self, ids: list[str]) -> dict[str, Summary]:
        found = self.store.get_summaries(ids)
        if self.accesses is not None:
            self.accesses.apply(found, summaries=True)  # accesses not written yet count already
        return {s.id: s for s in found}

    def features(self, s: Summary) -> dict[str, float]:
        w = self.weights
        clock = s.last_accessed_at if (w.decay_clock == "accessed" and s.last_accessed_at) else s.latest_at
        days = (self.moment - parse_time(clock)).total_seconds() / 86400
        boost = 1 + 0.02 * min(s.access_count, w.reinforcement_cap)
        return {"temporal": min(1.0, decay(days, w.decay_rate) * boost), "importance": IMPORTANCE_BY_DEPTH[min(s.depth, 2)]}

    def tiebreak(self, s: Summary) -> tuple[Any, ...]:
        return (s.id,)


CATCH_UP_BYTES = 4 << 20  # of the summaries journal's end, read once per process for what a killed worker left (`catch_up`)
QUIET_LEAST = 4  # messages no summary covers, for a quiet session to be summarised (two exchanges: a chat's day)


class Summaries:
    """The DAG of every session of one store."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel, self.store, self.settings = kernel, kernel.store, kernel.settings
        self.decisions = kernel.decisions
        self.on_summary: Callable[[Summary], list[NewJob]] = lambda s: []  # jobs for a new summary (Memory sets it)
        self._catch_up_lock, self._caught_up = threading.Lock(), False

    def handlers(self) -> dict[str, Any]:
        return {"compact": self.run_job}

    def run_job(self, job: Job) -> None:
        if job.payload.get("quiet") and not self._quiet_enough(job.payload["session"]):
            return
        final = bool(job.payload.get("final") or job.payload.get("quiet"))
        self.compact(job.payload["session"], final=final, use_llm=not last_attempt(job))
        self.embed_missing()  # summaries written before a model change, or while the embedder was down

    def _quiet_enough(self, session: str) -> bool:
        """Whether a quiet compaction of `session` is due: nothing said in it for `compact_quiet_minutes` (else it is
        looked at again then), not instant, and at least `QUIET_LEAST` messages no summary covers."""
        info = self.store.get_session(session)
        if info is None or info.kind == "instant":
            return False
        newest = self.store.browse(Filters(session=session), 1, 0, newest_first=True)
        if not newest:
            return False
        minutes = float(self.settings.compact_quiet_minutes)
        if min(parse_time(newest[0].created_at), utcnow()) + timedelta(minutes=minutes) > utcnow():
            # (a time said in the future, a broken clock's, counts from now: its own key again would end the chain)
            self.store.enqueue([quiet_compaction(session, newest[0].created_at, minutes, after=newest[0].id)])
            return False
        return self.store.count_unsummarised(session) >= QUIET_LEAST

    def compact(self, session: str, *, final: bool = False, use_llm: bool = True, cancel: threading.Event | None = None) -> dict[str, int]:
        """Compact one session (routine, or `final`: everything, tree complete), once this process
        has stored what a killed one journaled and never stored (`catch_up`)."""
        self.catch_up()
        return Compactor(self, session, use_llm=use_llm, cancel=cancel).run(final)

    def catch_up(self) -> int:
        """Once per process: store the summaries journaled but not in the store (a worker killed between the two) before
        their messages are summarised again. A second leaf over the same messages had been journaled, and an import of
        the journal then kept the lost one and rejected the stored one, leaving its branch a child short (found by an
        auditor killing the server during compaction). What a killed worker was writing is at the journal's end, so
        only its last `CATCH_UP_BYTES` are read (not every summary ever written: found in review). Returns how many."""
        with self._catch_up_lock:
            if self._caught_up:
                return 0
            self._caught_up = True
        tail = self.decisions.tail(SYSTEM_SESSION, CATCH_UP_BYTES)
        rejected = {d.meta.get("rejects") for d in tail if d.op == REJECTED}
        puts = [d for d in tail if d.op == "put" and d.key not in rejected and isinstance(d.change.get("summary"), dict)]
        if not puts:
            return 0
        stored = {s.id for s in self.store.get_summaries([d.key for d in puts])}
        done = 0
        for d in puts:
            if d.key in stored:
                continue
            summary = Summary.from_dict(d.change["summary"])
            try:
                if self.store.put_summary(summary, d.change.get("supersedes")):
                    self.stored(summary)
                    done += 1
            except (Conflict, NotFound) as exc:
                self.decisions.reject(SYSTEM_SESSION, d.key, exc)
        if done:
            log.info("%d summaries journaled but not stored (a worker killed between the two): stored now", done)
        return done

    def stored(self, summary: Summary) -> None:
        """What follows a summary's row: its jobs (tags proposed, the wiki mined) and its vector."""
        self.store.enqueue(self.on_summary(summary))
        self.embed([summary])

    def embed(self, found: list[Summary]) -> int:
        """Vectors for summaries, best effort (a summary without one is still found by keyword)."""
        embedding = self.kernel.embedding
        if not embedding.configured or not found:
            return 0
        try:
            embedder = embedding.model
            if embedder is None:
                return 0
            vectors = embedding.embed([s.content for s in found], self.settings.embed_timeout)
            self.store.put_summary_vectors(embedder.model_id, list(zip([s.id for s in found], vectors)))
            return len(found)
        except Exception as exc:
            log.warning("summaries not embedded now: %s", exc)
            return 0

    def embed_missing(self, batch: int = 64) -> int:
        """Vectors for summaries that have none of the current model (after a model change)."""
        embedder = self.kernel.embedding.model if self.kernel.embedding.configured else None
        if embedder is None:
            return 0
        done = 0
        while rows := self.store.summaries_without_vectors(embedder.model_id, batch):
            n = self.embed(rows)
            if not n:
                break
            done += n
        return done

    def replay(self) -> int:
        """Store every journaled summary the store lacks (a new or rebuilt store)."""
        return self.decisions.replay(SYSTEM_SESSION, set(), lambda d: self.store.put_summary(
            Summary.from_dict(d.change["summary"]), d.change.get("supersedes")), changes_only=False)

    # -- reading -------------------------------------------------------------------
    def search(self, query: str, filters: Filters | None = None, limit: int = 10, now: Any = None,
               query_vector: Any = None, semantic: bool = True) -> list[SummaryHit]:
        """Live summaries matching `query`, best first, by the one hybrid ranking: BM25
        (normalised), cosine, time decay from `latest_at` (or the last access) reinforced by
        the access count, and importance by depth (a leaf
        is the most specific: 0.5, branch 0.4, root 0.3). `query_vector` reuses an embedding
        the caller already made; `semantic=False` when it knows the embedder cannot answer."""
        vector = self._query_vector(query, query_vector) if semantic else None
        model = self.kernel.embedding.model.model_id if vector is not None else ""  # type: ignore[union-attr]
        moment = parse_time(now) if now is not None else utcnow()
        weights = Weights.from_settings(self.settings)
        ranking = rank(SummarySource(self.store, filters, model, moment, weights, self.kernel.accesses), query, weights,
                       pool=limit * 5, vector=vector)
        return [SummaryHit(h.row, h.score, h.parts) for h in ranking.hits[:limit]]

    def _query_vector(self, query: str, given: Any) -> Any:
        embedding = self.kernel.embedding
        if not embedding.configured or not query.strip():
            return None
        try:
            if embedding.model is None:
                return None
            return given if given is not None else embedding.query(query)
        except Exception as exc:
            log.warning("summary search without vectors: %s", exc)
            return None

    def expand(self, summary_id: str, *, limit: int = 200) -> dict[str, Any]:
        """A summary with its children (branch, root) and its source messages: a leaf's own,
        or the first `limit` messages of the leaves below a branch or root."""
        found = self.store.get_summaries([summary_id])
        if not found:
            raise NotFound(f"no summary with id {summary_id!r}")
        s = found[0]
        children = self.store.get_summaries(s.sources) if s.depth > 0 else []
        leaves, frontier = ([s] if s.depth == 0 else []), children
        while frontier:
            leaves += [c for c in frontier if c.depth == 0]
            nxt = [x for c in frontier if c.depth > 0 for x in c.sources]
            frontier = self.store.get_summaries(nxt) if nxt else []
        ids = [m for leaf in leaves for m in leaf.sources][:limit]
        return {"summary": s, "children": children, "messages": self.store.get_messages(ids)}


    def tree(self, session: str) -> dict[str, Any]:
        """The live DAG of a session and whether it is complete (see `check_tree`)."""
        return {"summaries": self.store.session_summaries(session), **self.check_tree(session)}

    def check_tree(self, session: str) -> dict[str, Any]:
        """Coverage: messages in no leaf, leaves and branches without a parent, live roots."""
        store = self.store
        orphans = {d: len(store.session_summaries(session, d, orphans=True)) for d in (0, 1)}
        roots = len(store.session_summaries(session, 2))
        unsummarised = store.count_unsummarised(session)
        complete = unsummarised == 0 and orphans[0] == 0 and orphans[1] == 0 and roots == 1
        return {"unsummarised": unsummarised, "orphan_leaves": orphans[0], "orphan_branches": orphans[1], "roots": roots, "complete": complete}

    def pending_sessions(self, *, final: bool = False, limit: int = 100_000) -> list[str]:
        """Sessions with enough unsummarised messages to compact (any at all when `final`)."""
        least = 1 if final else self.settings.compact_after + 1
        return [s for s, _ in self.store.sessions_with_unsummarised(least, limit)]

    def of_session(self, session: str) -> list[Summary]:
        """Every live summary of a session."""
        return self.store.session_summaries(session)

    def get(self, summary_id: str) -> Summary:
        found = self.store.get_summaries([summary_id])
        if not found:
            raise NotFound(f"no summary with id {summary_id!r}")
        self.kernel.accesses.apply(found, summaries=True)
        return found[0]

    def latest(self, session: str) -> str | None:
        """The widest live summary of a session: its root, else its newest branch or leaf."""
        found = self.store.session_summaries(session)
        if not found:
            return None
        top = max(s.depth for s in found)
        return max((s for s in found if s.depth == top), key=lambda s: s.latest_at).content
