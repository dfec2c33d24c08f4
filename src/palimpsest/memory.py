"""The `Memory` facade: one object that opens a home and its store and does everything.

    from palimpsest import Memory
    with Memory("~/.palimpsest") as memory:
        memory.append("chat-1", "user", "the retry cap matches the upstream timeout")
        for hit in memory.search("retry cap").hits:
            print(hit.message.id, hit.message.content)

Every write is journaled (fsynced) first and indexed second; if indexing fails the write
still stands and the indexer catches up later (DESIGN.md, principle 2).

`Memory.__init__` builds the kernel (`kernel.py`: store, journals, decision log, llm,
embedding, settings, clock) and hands each part the collaborators it needs. Each part is
reached one way, as a property: `memory.facts`, `.summaries`, `.tags`, `.wiki`,
`.vaults`, `.distiller`, `.toolsynth`, `.finder`, `.recaller`. No module below this one
imports `Memory`.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta
from functools import cached_property
from pathlib import Path
from typing import Any, Self

from .access import AccessLog
from .decisions import DecisionLog
from .distill import Distiller
from .embed import Embedder, EmbeddingCache
from .erase import Eraser, Erasure
from .erased import ErasedSessions
from .errors import InvalidInput, NotFound, StoreBusy, StoreCorrupt, StoreUnavailable
from .facts import Facts
from .finder import Finder
from .ids import is_short_id
from .ingest import Indexer, Writer
from .ingest.writer import Unreachable
from .jobs import Handler, Worker, embed_jobs
from .journal import Journal
from .kernel import Kernel
from .llm import LLM, parked, usage
from .pipeline import derived_jobs
from .recall import Recaller
from .records import Message, Session, check_session_id, iso, parse_time, utcnow
from .search import MessageSearch, SearchResult, Weights, embedding_text
from .search.query import MAX_PAGE, check_page
from .settings import Settings, private_home
from .store import Filters, Job, NewJob, Store, fingerprint, open_store, set_aside
from .store.summaries_base import Summary
from .summaries import Summaries
from .tags import Tags
from .toolsynth import ToolSynth
from .vaults import Vaults
from .wiki import Wiki
from .wiki import after_leaf as wiki_jobs

log = logging.getLogger(__name__)
INTEGRITY_EVERY_S = 60.0
PARTS = ("eraser", "facts", "tags", "summaries", "wiki", "vaults", "distiller", "toolsynth", "messages", "finder", "recaller", "handlers")


def journal_only(settings: Settings, why: str) -> Writer:
    """A writer over the home's journal alone, for a write while the store cannot be reached:
    what it writes is durable and deduplicated now and indexed when the store is back
    (`Memory.catch_up`, or the next write to the session)."""
    return Writer(Journal(settings.home_path, settings.max_event_bytes), Unreachable(why), None, settings.zone,  # type: ignore[arg-type]
                  ErasedSessions(DecisionLog(settings.home_path)))


class Memory:
    """Long-term memory rooted at a home folder, indexed in a store."""

    @staticmethod
    def made(settings: Settings) -> bool:
        """Whether the memory `settings` name was made already — its home and its store — so a reader (`doctor`) need not
        open it to know: opening creates a SQLite store's file."""
        from .store import exists

        return settings.home_path.exists() and exists(settings.store_url)

    def __init__(self, home: str | Path | None = None, store: str | None = None, *, settings: Settings | None = None,
                 repair: bool = False) -> None:
        """`repair`: a damaged index file is moved aside and a new one opened (what
        `rebuild` needs: the journals hold everything the old file did)."""
        settings = settings or Settings.load()
        if home is not None:
            settings = settings.replace(home=str(home))
        if store is not None:
            settings = settings.replace(store=store)
        self.settings = settings
        self.home = settings.home_path
        private_home(self.home)
        self.journal = Journal(self.home, settings.max_event_bytes)
        self.moved_aside: str | None = None  # a damaged index file set aside, and where to
        self._checked_at, self._problem = -INTEGRITY_EVERY_S, None  # check_store's last integrity check
        self.store: Store = self._open_store(repair)
        self.kernel = Kernel(settings, self.store, self.journal)
        self.indexer = Indexer(self.journal, self.store, settings.field_cap, on_indexed=self._after_index)
        self.writer = Writer(self.journal, self.store, self.indexer, settings.zone, ErasedSessions(self.kernel.decisions, self.store))
        self.tails_repaired: list[str] = []  # sessions the first catch-up found torn after indexing
        self._tails_checked = False
        # a list while a CLI write records the embed jobs it queued, which it then runs itself (`cli/derive.py`): it ran the
        # whole queue, and one appended note embedded an imported backlog of 51 messages for twenty minutes (a sysadmin's)
        self.embeds_queued: list[str] | None = None
        # the background loops running on this memory (`service.background`): `close` stops them and waits for them
        self.stopping: list[tuple[threading.Event, threading.Thread]] = []

    @property
    def store_fingerprint(self) -> str:
        """A short name of the database this memory's store is (`store.fingerprint`): a server
        says its own on `/healthz`, so a CLI leaves it jobs only when they share a queue."""
        return fingerprint(self.settings.store_url)

    def _open_store(self, repair: bool) -> Store:
        url, threshold = self.settings.store_url, self.settings.ann_threshold
        try:
            store = open_store(url, ann_threshold=threshold)
        except StoreCorrupt:
            if not repair or (moved := set_aside(url)) is None:
                raise
            self._moved(moved, "cannot be opened")
            return open_store(url, ann_threshold=threshold)
        problem = store.integrity() if repair else None
        if problem is not None and (moved := set_aside(url)) is not None:
            store.close()
            self._moved(moved, problem)
            return open_store(url, ann_threshold=threshold)
        return store

    def _moved(self, path: str, why: str) -> None:
        log.warning("the index database is damaged (%s): moved aside to %s, rebuilt from the journals", why, path)
        self.moved_aside = path

    @property
    def settings(self) -> Settings:
        return self._settings

    @settings.setter
    def settings(self, value: Settings) -> None:
        """New settings (tests and benchmarks change them on an open memory): the kernel
        takes them and the parts built from the old ones are built again on next use."""
        self._settings = value
        kernel = self.__dict__.get("kernel")
        if kernel is not None:
            kernel.settings = kernel.embedding.settings = value
            kernel.__dict__.pop("llm", None)
            for name in PARTS:
                self.__dict__.pop(name, None)
        writer = self.__dict__.get("writer")
        if writer is not None:
            writer.zone = value.zone

    def close(self) -> None:
        """Flush the access counts and close the store; every call after this raises `Closed`
        (a write is refused before its journal line)."""
        self.journal.closed = self.kernel.decisions.journal.closed = True
        for stop, _ in self.stopping:  # a `background` still running stops (its threads had gone on, warning "store was closed")
            stop.set()
        for _, thread in self.stopping:  # and ends before the store closes: its statement in flight on a closed SQLite
            if thread is not threading.current_thread():  # connection took the process down (a test worker, no traceback)
                thread.join(timeout=60)
        try:
            self.accesses.flush()
        finally:
            if "messages" in self.__dict__:
                self.messages.close()
            self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the parts -------------------------------------------------------------
    @property
    def accesses(self) -> AccessLog:
        """Access counts of search hits, written in batches (see access.py)."""
        return self.kernel.accesses

    @property
    def decisions(self) -> DecisionLog:
        """The system journal of every decision (see decisions.py)."""
        return self.kernel.decisions

    @property
    def llm(self) -> LLM | None:
        """The configured chat endpoint (`palimpsest.llm`), or None: local fallbacks then."""
        return self.kernel.llm

    @property
    def embedder(self) -> Embedder | None:
        """The configured embedder, loaded on first use (the local model takes ~1 s)."""
        return self.kernel.embedding.model

    def use_embedder(self, embedder: Embedder | None, cache: EmbeddingCache | None = None) -> None:
        """Inject an embedder (tests, benchmarks): a real `Embedder` subclass."""
        self.kernel.embedding.use(embedder, cache)

    @cached_property
    def facts(self) -> Facts:
        """Fact vaults: curated, bi-temporal facts and their curator (`palimpsest.facts`)."""
        k = self.kernel
        return Facts(k.store, k.home, embedder=lambda: k.embedding.model, snapshot=k.settings.facts_snapshot,
                     weights=Weights.from_settings(k.settings), decisions=k.decisions, llm=lambda: k.llm,
                     pair_model=k.settings.curator_model, owners=tuple(k.settings.fact_owners.split(",")) if k.settings.fact_owners else ())

    @cached_property
    def eraser(self) -> Eraser:
        """Erasure of chosen sessions, when an operator orders it (`palimpsest.erase`)."""
        return Eraser(self.kernel, self.facts, self.tags)

    @cached_property
    def tags(self) -> Tags:
        """Tags on sessions and summaries, their review and taxonomy (`palimpsest.tags`)."""
        return Tags(self.kernel)

    @cached_property
    def summaries(self) -> Summaries:
        """The summary DAG of every session (`palimpsest.summaries`)."""
        summaries = Summaries(self.kernel)
        summaries.on_summary = self._summary_jobs
        return summaries

    def _summary_jobs(self, summary: Summary) -> list[NewJob]:
        """A new summary is written: tags are proposed and the wiki mined per leaf."""
        return [*self.tags.after_summary(summary), *wiki_jobs(self.settings, summary)]

    @cached_property
    def wiki(self) -> Wiki:
        """Topic pages mined from summaries (`palimpsest.wiki`)."""
        return Wiki(self.kernel, self.tags)

    @cached_property
    def vaults(self) -> Vaults:
        """Document, skill and fact vaults (`palimpsest.vaults`)."""
        return Vaults(self.kernel, self.facts)

    @cached_property
    def distiller(self) -> Distiller:
        """Turns into facts (`palimpsest.distill`)."""
        return Distiller(self.kernel, self.facts)

    @cached_property
    def toolsynth(self) -> ToolSynth:
        """Sentences for tool calls without text, and answers from hits (`palimpsest.toolsynth`)."""
        return ToolSynth(self.kernel)

    @cached_property
    def messages(self) -> MessageSearch:
        """Search over messages alone (`palimpsest.search`)."""
        return MessageSearch(self.store, self.kernel.embedding, self.settings, self.kernel.whole)

    @cached_property
    def finder(self) -> Finder:
        """Ranked search over every kind: messages, facts, summaries, documents."""
        return Finder(self.kernel, self.messages, lambda: self.facts, self.summaries, lambda: self.vaults, lambda: self.tags,
                      self.toolsynth)

    @cached_property
    def recaller(self) -> Recaller:
        """The recall block and the working context (`palimpsest.recall`)."""
        return Recaller(self.kernel, self.finder, lambda: self.facts, self.tags, lambda: self.vaults, lambda: self.wiki,
                        self.summaries)

    # -- writing -------------------------------------------------------------
    def append(self, session: str, role: str, content: str = "", *, tool_name: str | None = None,
               tool_args: Any = None, tool_result: Any = None, metadata: dict[str, Any] | None = None,
               created_at: str | None = None, event_key: str | None = None, **session_attrs: Any) -> dict[str, Any]:
        """Journal one message durably, then index it. Returns its id and whether it was new.

        Without `event_key`, a content-hash key makes identical repeated appends collapse
        (identical appends of different `created_at` are two turns, "OK." said on two days, and so
        are those of different speakers, `metadata.speaker`: Ana's "ok" and Mark's);
        distinct keys store true repeats. `session_attrs`: agent, channel, title, kind, key, settings."""
        return self.writer.append(session, {"role": role, "content": content, "tool_name": tool_name, "tool_args": tool_args,
                                            "tool_result": tool_result, "metadata": metadata, "created_at": created_at,
                                            "event_key": event_key}, session_attrs)

    def ingest_session(self, session: str, messages: list[Any], *, start: int = 0, **session_attrs: Any) -> dict[str, Any]:
        """Bulk-write a transcript (one group commit). Each message needs a `role`; keys
        include the ordinal so a retried ingest skips stored rows while identical lines
        at different positions both ingest. All messages are validated before any is stored.
        A transcript sent in several calls passes `start`, the position of its first message
        in the whole transcript, so keys stay unique across the calls."""
        return self.writer.ingest_session(session, messages, start, session_attrs)

    def capture(self, session: str, events: list[Any], **session_attrs: Any) -> dict[str, Any]:
        """Journal a harness's batch of events for one session (the canonical capture path):
        all validated first, deduplicated by `event_key` (a content hash when absent) under
        the session's journal lock, one group commit, then indexed. Returns each event with
        whether it was stored or a duplicate."""
        return self.writer.capture(session, events, session_attrs)

    # -- reading -------------------------------------------------------------
    def filters(self, session: str | None = None, agent: str | None = None, channel: str | None = None,
                role: str | None = None, since: Any = None, until: Any = None, tag: str | None = None) -> Filters:
        return self.finder.filters(session=session, agent=agent, channel=channel, role=role, since=since, until=until, tag=tag)

    def browse(self, *, limit: int = 50, offset: int = 0, newest_first: bool = False, **filters: Any) -> list[Any]:
        """Messages in chronological order (or newest first), filtered and paged."""
        return self.finder.browse(limit=limit, offset=offset, newest_first=newest_first, **filters)

    def search(self, query: str, *, limit: int = 10, mode: str = "ranked", recipe: str | None = None,
               now: Any = None, touch: bool = True, facts: bool = True, valid_at: Any = None, known_at: Any = None,
               synthesize: bool = False, **filters: Any) -> SearchResult:
        """Ranked hybrid search (keyword + vector + time + importance), or `mode="substring"`
        (any fragment) / `mode="regex"` — see `Finder.search`."""
        return self.finder.search(query, limit=limit, mode=mode, recipe=recipe, now=now, touch=touch, facts=facts,
                                  valid_at=valid_at, known_at=known_at, synthesize=synthesize, **filters)

    def recall(self, session: str | None, query: str, budget: int = 4000, **options: Any) -> Any:
        """The recall block for a turn (see `recall/block.py`): facts, messages, live tail."""
        if session is not None:
            check_session_id(session)
        return self.recaller.recall(session, query, budget, **options)

    def context(self, session: str, query: str | None = None, **options: Any) -> dict[str, Any]:
        """The working context of a session (see `recall/context.py`)."""
        check_session_id(session)
        return self.recaller.working_context(session, query, **options)

    def briefing(self, session: str) -> dict[str, Any]:
        """What a model needs to resume `session` after its window was cleared."""
        check_session_id(session)
        return self.recaller.briefing(session)

    def journals_elsewhere(self, session: str) -> int:
        """How many other homes' journals on this store hold messages of `session` (a store
        several servers share: this home's journal holds only what was written through it)."""
        return len({i if i is not None else p for i, p in self.store.journal_paths(session) if not self.journal.wrote(i, p)})

    def sessions_elsewhere(self) -> list[str]:
        """Sessions of this store with messages written through other homes, whose journals
        this home's export, rebuild and replay do not hold (a store several servers share)."""
        return sorted({s for i, p, s in self.store.journal_sessions() if not self.journal.wrote(i, p)})

    def get_full(self, message_id: str, *, agent: str | None = None, owner: bool = True) -> dict[str, Any]:
        """The whole message, its capped fields restored from the journal line; or a document
        chunk (`chk_…`, the id a recall block's document line shows) of a vault the reader may
        read (the owner, or `agent` when not `owner`)."""
        if not isinstance(message_id, str):
            raise InvalidInput("id must be a string")
        if message_id.startswith("chk_"):
            from .vaults import OWNER, Reader

            return self.vaults.chunk(message_id, OWNER if owner else Reader(agent=agent))
        m = self.get_message(message_id)
        self.accesses.apply([m])
        return self.writer.full(m)

    def get_message(self, message_id: str, *, session: str | None = None) -> Message:
        """One message's index row, by its id or by the short id a recall block shows
        (`ids.short_id`); a short id two messages share is `InvalidInput` naming both,
        unless only one of them is in `session` (when given)."""
        found = self.store.get_messages([message_id])
        if not found and is_short_id(message_id):
            if session is not None:
                mine = [m for m in self.store.get_messages(self.store.ids_ending(message_id, 50)) if m.session == session]
                if len(mine) != 1:
                    raise NotFound(f"no message with short id {message_id!r} in session {session[:80]!r}")
                found = mine
            if not found:
                target = self.store.short_id_target(message_id)
                found = self.store.get_messages([target]) if target else []
        if not found:
            other = next((tool for prefix, tool in _OTHER_IDS.items() if message_id.startswith(prefix)), None)
            raise NotFound(f"no message with id {message_id[:80]!r}" + (f": it is the id of what {other} reads" if other else ""))
        return found[0]

    def get_session(self, session: str) -> Session | None:
        return self.store.get_session(session)

    def warm(self, wait: float = 0.0) -> bool:
        """Load what the first recall would otherwise load while a turn waits: the embedder
        and its vector index (`Store.warm_vectors`); True once vector search is in its final
        state (waiting up to `wait` seconds). Without an embedder there is nothing to warm."""
        embedder = self.embedder
        return embedder is None or self.store.warm_vectors(embedder.model_id, wait)

    def check_store(self) -> None:
        """Raise StoreUnavailable (StoreCorrupt for a damaged file) unless the store answers
        and is sound; the integrity check (SQLite: a quick check, a full read of the file)
        runs at most once a minute, so `/readyz` can ask as often as it likes."""
        self.store.get_session("readyz-probe")
        now = time.monotonic()
        if now - self._checked_at < INTEGRITY_EVERY_S:
            problem = self._problem
        else:
            problem = self._problem = self.store.integrity()
            self._checked_at = now
        if problem is not None:
            raise StoreCorrupt(f"the index database is damaged ({problem}): `palimpsest rebuild` moves it aside "
                               "and rebuilds it from the journals")

    def count_messages(self) -> int:
        """How many messages the index holds."""
        return int(self.store.stats()["messages"] or 0)

    def llm_usage(self) -> dict[str, Any]:
        """Token accounting per task (`palimpsest llm usage`)."""
        return usage(self.store)

    def parked(self, limit: int = 100) -> list[dict[str, Any]]:
        """The newest LLM replies parked for breaking their schema."""
        return parked(self.decisions, limit)

    def sessions(self, *, limit: int = 100, offset: int = 0, **filters: Any) -> list[Session]:
        check_page(limit, offset)
        if filters.get("tag"):  # list_sessions has no tag clause: never answer as if it had filtered
            raise InvalidInput("sessions are not listed by tag: use browse(tag=…) or tags.list(tag=…)")
        return self.store.list_sessions(self.filters(**filters), limit, offset)

    def stats(self) -> dict[str, Any]:
        s = self.store.stats()
        lag = self.indexer.lag()
        journal_bytes = sum(self.journal.size(x) for x in self.journal.sessions())
        s.update({"journal_sessions": len(self.journal.sessions()), "journal_bytes": journal_bytes,
                  "index_lag_bytes": sum(lag.values()), "sessions_behind": len(lag), "home": str(self.home)})
        s.update({"summaries": self.store.summary_stats(), "llm": usage(self.store)})
        s["embeddings"] = embedding_stats(self.store, self.settings.embedder, s.get("messages") or 0)
        s["quarantine"] = self.quarantine_stats()
        s["jobs"] = self.jobs()  # (a server's queue, as `doctor` on a client machine reads it from `memory_stats`)
        s["tails_repaired"] = list(self.tails_repaired)
        return s

    def quarantine_stats(self, latest: int = 5) -> dict[str, Any]:
        """Events of this home the indexer could not index: how many, and the latest few
        with where they are and why (see `ingest/indexer.py`)."""
        if not self.journal.sessions():  # (a home never written to has no journal id to ask about)
            return {"count": 0, "latest": []}
        journal = self.journal.id
        rows = self.store.quarantined(journal, latest)
        return {"count": self.store.quarantine_count(journal),
                "latest": [{"session": q.session, "line": q.line, "event_id": q.event_id, "reason": q.reason, "at": q.at}
                           for q in rows]}

    # -- derived work ----------------------------------------------------------
    def _after_index(self, messages: list[Message]) -> None:
        """New messages are indexed: queue their embeddings and the derived work
        (distill, tool-synth, compact; see `palimpsest.pipeline`) in one write."""
        ids = [m.id for m in messages]
        jobs = embed_jobs(ids) if self.settings.embedder != "none" else []
        if self.embeds_queued is not None:
            self.embeds_queued += [j.job_key for j in jobs if j.job_key]
        jobs += self.toolsynth.after_index(messages)
        jobs += derived_jobs(self.store, self.settings, messages)
        jobs += self.tags.after_index(ids)
        if jobs:
            self.store.enqueue(jobs)

    def embed_messages(self, messages: list[Any]) -> int:
        """Embed these messages now (what the `embed` job does) and store their vectors."""
        embedder = self.embedder
        if embedder is None or not messages:
            return 0
        vectors = self.kernel.embedding.embed([embedding_text(m) for m in messages], self.settings.embed_timeout)
        self.store.put_vectors(embedder.model_id, [(m.id, v) for m, v in zip(messages, vectors)])
        return len(messages)

    def _run_embed(self, job: Job) -> None:
        self.embed_messages(self.store.get_messages(list(job.payload.get("ids", []))))

    @cached_property
    def handlers(self) -> dict[str, Handler]:
        """The one table of background work: task → the part's method that runs it."""
        return {"embed": self._run_embed, **self.distiller.handlers(), **self.toolsynth.handlers(),
                **self.summaries.handlers(), **self.tags.handlers(), **self.wiki.handlers()}

    def worker(self, name: str | None = None, tasks: list[str] | None = None, keys: list[str] | None = None) -> Worker:
        return Worker(self.store, self.handlers, name, tasks, batch=self.settings.worker_batch, keys=keys)

    def jobs(self) -> dict[str, Any]:
        """Queue depth per task and state (`palimpsest jobs status`)."""
        return self.store.job_status()

    def retry_failed(self, task: str | None = None, error: str | None = None, dry_run: bool = False) -> int:
        """Failed jobs back to the queue (optionally of one task, or whose error contains `error`)."""
        return self.store.retry_failed(task, error, dry_run)

    def reindex(self, progress: Any = None) -> int:
        """Re-embed every message with the current model (after a model change). Resumable:
        it embeds what has no vector of the current model, so a rerun continues."""
        embedder = self.embedder
        if embedder is None:
            raise InvalidInput("no embedder configured (PALIMPSEST_EMBEDDER=none)")
        for model in self.store.vector_models():
            if model != embedder.model_id:
                self.store.drop_vectors(model)
        done = 0
        while batch := self.store.messages_without_vectors(embedder.model_id, 256):
            done += self.embed_messages(batch)
            if progress:
                progress(done)
        return done

    # -- maintenance ---------------------------------------------------------
    def catch_up(self) -> int:
        """Index whatever the journals hold beyond the cursors (after checking that each
        journal still holds what its cursor points past; see `Indexer.check_tails`)."""
        if not self._tails_checked:  # once per open: the background passes call this every few seconds
            self.tails_repaired, self._tails_checked = self.indexer.check_tails(), True
        return self.indexer.index_all()

    def retry_quarantined(self) -> dict[str, int]:
        """Index the quarantined events again (after an upgrade); `rebuild` does it too."""
        return self.indexer.retry_quarantined()

    def compact_index(self, budget: float | None = None) -> bool:
        """Merge the keyword index's segments for at most `budget` seconds (see `Store.compact_index`)."""
        return self.store.compact_index(budget) if budget is not None else self.store.compact_index()

    def rebuild(self) -> int:
        """Rebuild the index from the journals (idle instant sessions, which the journals
        still hold, are swept again: the rebuilt index equals the old one).

        Atomic: the new index is built in one transaction (`Store.atomically`) and replaces
        the old one when it commits; until then, and for good if it fails, the old index
        serves. Events the store refuses are quarantined again, so a poison event cannot
        fail it. The decisions the store lacks — facts, tags, summaries, wiki — are then
        replayed from the decision log: into a new store (a move to PostgreSQL, a file deleted
        or moved aside by `repair=True`) all of them; else none (summaries were lost when the
        database was deleted and rebuilt: a data steward's)."""
        for attempt in range(3):
            try:
                with self.store.atomically():
                    n = self.indexer.rebuild()
                    self.sweep_instant()
                break
            except StoreBusy:  # a server indexing beside it took a session's lock first (PostgreSQL: a deadlock, rolled back)
                if attempt == 2:
                    raise
                log.warning("rebuild rolled back by a concurrent writer: trying again")
        self.replay_decisions()
        return n

    def replay_decisions(self) -> dict[str, int]:
        """Apply every journaled decision the store has not (vaults, facts, tags, summaries, wiki)."""
        return {"vaults": self.vaults.catch_up(), "facts": self.facts.replay(), "tags": self.tags.replay(),
                "summaries": self.summaries.replay(), "wiki": self.wiki.replay()}

    def erase(self, *, sessions: list[str] | tuple[str, ...] = (), channel: str | None = None, tag: str | None = None,
              dry_run: bool = False, finish: bool = False) -> Erasure:
        """Erase every trace of the sessions named, of `channel` and carrying the accepted tag `tag` (an end
        customer's right to erasure): journals, index rows, the facts only they attest, their lines in the system
        journal (see `palimpsest.erase`). `dry_run`: what would go, nothing touched. `finish`: erase this home's
        journals of the sessions an erasure in another home on the store erased (`Erasure.other_journals`). Not for
        a model to call (no tool serves it), and not while a server runs on this home: it holds the journals' state in memory."""
        self.catch_up()  # (a journal written but not indexed yet is chosen by its channel and tag too)
        if finish:
            chosen = self.eraser.erased_elsewhere()
            return self.eraser.plan(chosen) if dry_run or not chosen else self.eraser.erase(chosen)
        finished = [] if dry_run else self.eraser.finish()  # (an erasure cut short: the same command, run again, ends it)
        try:
            chosen = self.eraser.select(sessions, channel, tag)
        except NotFound:
            if not finished:
                raise
            return finished[-1]
        return self.eraser.plan(chosen) if dry_run else self.eraser.erase(chosen)

    def sweep_instant(self, now: Any = None) -> list[str]:
        """Drop index rows of instant sessions idle longer than the setting (journals kept)."""
        moment = parse_time(now) if now is not None else utcnow()
        before = iso(moment - timedelta(hours=self.settings.instant_idle_hours))
        swept = self.store.idle_instant_sessions(before)
        for session in swept:
            self.store.drop_session_index(session)
        return swept


# ids of what is not a message, and the tool that reads each (a recall block's lines carry them all): a model that asked
# memory_get_full for a fact's id got "no message" and no way on (an MCP client's user)
_OTHER_IDS = {"fct_": "memory_fact_history", "sum_": "memory_expand", "wst_": "memory_wiki_show", "wtp_": "memory_wiki_show",
              "skill:": "vault_skill", "sym_": "code_def"}


def embedding_stats(store: Store, embedder: str, messages: int) -> dict[str, Any]:
    """Queue depth and coverage: how much of the index has vectors of which model."""
    jobs = store.job_status()["tasks"].get("embed", {})
    models = store.vector_models()
    return {
        "embedder": embedder,
        "models": models,
        "coverage": {m: round(v["count"] / messages, 4) if messages else 1.0 for m, v in models.items()},
        "queued": jobs.get("queued", 0) + jobs.get("running", 0),
        "failed": jobs.get("failed", 0),
    }


__all__ = ["MAX_PAGE", "Memory", "StoreUnavailable"]
