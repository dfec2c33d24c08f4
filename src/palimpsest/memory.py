"""The `Memory` facade: one object that opens a home and its store and does everything.

    from palimpsest import Memory
    with Memory("~/.palimpsest") as memory:
        memory.append("chat-1", "user", "the retry cap matches the upstream timeout")
        for hit in memory.search("retry cap").hits:
            print(hit.message.id, hit.message.content)

Every write is journaled (fsynced) first and indexed second; if indexing fails the write
still stands and the indexer catches up later (DESIGN.md, principle 2).
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from functools import cached_property
from pathlib import Path
from typing import Any, Self

from . import search as _search
from .access import AccessLog
from .embed import Embedder, EmbeddingCache, get_embedder, open_cache
from .errors import InvalidInput, NotFound, PalimpsestError, StoreUnavailable
from .facts import Facts
from .indexer import Indexer
from .jobs import Worker, embed_jobs
from .journal import Journal
from .llm import LLM, system_journal, usage
from .messages import default_key, normalise_message, session_event
from .pipeline import after_index
from .records import Event, Hit, Message, Session, check_session_id, iso, parse_time, utcnow
from .settings import Settings
from .store import Filters, Store, open_store
from .summarize import Summaries
from .tags import Tags

log = logging.getLogger(__name__)
MAX_PAGE = 1000


class Memory:
    """Long-term memory rooted at a home folder, indexed in a store."""

    def __init__(self, home: str | Path | None = None, store: str | None = None, *, settings: Settings | None = None) -> None:
        settings = settings or Settings.load()
        if home is not None:
            settings = settings.replace(home=str(home))
        if store is not None:
            settings = settings.replace(store=store)
        self.settings = settings
        self.home = settings.home_path
        self.journal = Journal(self.home, settings.max_event_bytes)
        self.store: Store = open_store(settings.store_url, ann_threshold=settings.ann_threshold)
        self.indexer = Indexer(self.journal, self.store, settings.field_cap, on_indexed=self._after_index)
        self._embedder: Embedder | None = None
        self._embed_cache: EmbeddingCache | None = None
        self._embedder_lock = threading.Lock()

    def close(self) -> None:
        try:
            self.accesses.flush()
        finally:
            if "_query_pool" in self.__dict__:
                self._query_pool.shutdown(wait=False)
            self.store.close()

    @cached_property
    def _query_pool(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=4, thread_name_prefix="palimpsest-query")

    @cached_property
    def accesses(self) -> AccessLog:
        """Access counts of search hits, written in batches (see access.py)."""
        return AccessLog(self.store)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -------------------------------------------------------------
    def append(self, session: str, role: str, content: str = "", *, tool_name: str | None = None,
               tool_args: Any = None, tool_result: Any = None, metadata: dict[str, Any] | None = None,
               created_at: str | None = None, event_key: str | None = None, **session_attrs: Any) -> dict[str, Any]:
        """Journal one message durably, then index it. Returns its id and whether it was new.

        Without `event_key`, a content-hash key makes identical repeated appends collapse;
        distinct keys store true repeats. `session_attrs`: agent, channel, title, kind, key, settings.
        """
        check_session_id(session)
        msg = normalise_message(
            {"role": role, "content": content, "tool_name": tool_name, "tool_args": tool_args, "tool_result": tool_result,
             "metadata": metadata, "created_at": created_at, "event_key": event_key}
        )
        msg["event_key"] = msg["event_key"] or default_key(msg)
        result = self._journal_and_index(session, [msg], session_attrs)
        event, stored = result["events"][0]
        return {"id": event.id, "session": session, "stored": stored, "duplicate": not stored,
                "indexed": result["indexed"], "created_at": event.created_at}

    def ingest_session(self, session: str, messages: list[Any], *, start: int = 0, **session_attrs: Any) -> dict[str, Any]:
        """Bulk-write a transcript (one group commit). Each message needs a `role`; keys
        include the ordinal so a retried ingest skips stored rows while identical lines
        at different positions both ingest. All messages are validated before any is stored.
        A transcript sent in several calls passes `start`, the position of its first message
        in the whole transcript, so keys stay unique across the calls."""
        check_session_id(session)
        if not isinstance(messages, list):
            raise InvalidInput("messages must be a list")
        if not isinstance(start, int) or isinstance(start, bool) or start < 0:
            raise InvalidInput("start must be a non-negative integer")
        prepared = []
        for i, raw in enumerate(messages):
            msg = normalise_message(raw, f"message {i}")
            msg["event_key"] = msg["event_key"] or default_key(msg, start + i)
            prepared.append(msg)
        result = self._journal_and_index(session, prepared, session_attrs)
        pairs = result["events"]
        return {
            "session": session,
            "stored": sum(1 for _, s in pairs if s),
            "duplicates": sum(1 for _, s in pairs if not s),
            "ids": [e.id for e, _ in pairs],
            "indexed": result["indexed"],
        }

    def capture(self, session: str, events: list[Any], **session_attrs: Any) -> dict[str, Any]:
        """Journal a harness's batch of events for one session (the canonical capture path):
        all validated first, deduplicated by `event_key` (a content hash when absent) under
        the session's journal lock, one group commit, then indexed. Returns each event with
        whether it was stored or a duplicate."""
        check_session_id(session)
        if not isinstance(events, list):
            raise InvalidInput("events must be a list")
        prepared = []
        for i, raw in enumerate(events):
            msg = normalise_message(raw, f"event {i}")
            msg["event_key"] = msg["event_key"] or default_key(msg)
            prepared.append(msg)
        return self._journal_and_index(session, prepared, session_attrs)

    def _journal_and_index(self, session: str, msgs: list[dict[str, Any]], attrs: dict[str, Any]) -> dict[str, Any]:
        unknown = set(attrs) - {"key", "agent", "channel", "title", "kind", "settings"}
        if unknown:
            raise InvalidInput(f"unknown session attributes: {sorted(unknown)}")
        head = session_event(attrs)
        pairs = self.journal.append(session, ([head] if head else []) + msgs)
        indexed = self._index_after_write(session, [e for e, stored in pairs if stored])
        return {"events": pairs[1:] if head else pairs, "indexed": indexed}

    def _index_after_write(self, session: str, fresh: list[Event]) -> bool:
        try:
            line, offset = self.store.cursor(session, self.journal.id)
            if fresh and fresh[0].offset == offset:
                self.indexer.index_events(session, fresh, (line, offset))
            else:
                self.indexer.index_session(session)
            return True
        except Exception as exc:  # noqa: BLE001 — the store is down or broken: the journal holds the write
            log.warning("indexing %s deferred: %s", session, exc)
            return False

    # -- reading -------------------------------------------------------------
    def filters(self, session: str | None = None, agent: str | None = None, channel: str | None = None,
                role: str | None = None, since: Any = None, until: Any = None, tag: str | None = None) -> Filters:
        return Filters(
            session=session, agent=agent, channel=channel, role=role,
            since=iso(parse_time(since, "since")) if since not in (None, "") else None,
            until=iso(parse_time(until, "until")) if until not in (None, "") else None,
            tag=self.tags.filter_value(tag) if tag not in (None, "") else None,
        )

    def browse(self, *, limit: int = 50, offset: int = 0, newest_first: bool = False, **filters: Any) -> list[Any]:
        """Messages in chronological order (or newest first), filtered and paged."""
        _check_page(limit, offset)
        rows = self.store.browse(self.filters(**filters), limit, offset, newest_first)
        self.accesses.apply(rows)
        return rows

    def search(self, query: str, *, limit: int = 10, mode: str = "ranked", recipe: str | None = None,
               now: Any = None, touch: bool = True, facts: bool = True, valid_at: Any = None, known_at: Any = None,
               synthesize: bool = False, **filters: Any) -> _search.SearchResult:
        """Ranked hybrid search (keyword + vector + time + importance), or `mode="substring"`
        (any fragment) / `mode="regex"`. `recipe`: hybrid (weighted sum) or rrf; `now`: the
        moment time decay counts from (default: now). Ranked search also returns the
        matching facts first (`result.facts`): those that hold now, or at `valid_at` /
        as known at `known_at` — a superseded, retracted or closed fact never otherwise.
        With a session or agent filter, chunks of the document vaults attached to them come
        too (`result.documents`). `synthesize=True` adds `answer`: a short answer from the configured LLM drawn only
        from the hits, citing their ids (or why synthesis is unavailable)."""
        query = _search.check_query(query)
        _check_page(limit, 0)
        f = self.filters(**filters)
        started = time.perf_counter()
        if mode == "substring":
            hits = [Hit(m, 1.0) for m in self.store.substring_search(query, f, limit)] if query else []
            result = _search.SearchResult(hits, mode="substring")
        elif mode == "regex":
            found, notes = _search.regex_search(self.store, query, f, limit)
            result = _search.SearchResult([Hit(m, 1.0) for m in found], mode="regex", notes=notes)
        elif mode == "ranked":
            result, qvec = self._ranked(query, f, limit, recipe or self.settings.recipe, now)
            if facts and query.strip() and not (f.session or f.role):
                result.facts = self.facts.search(query, limit=limit, valid_at=valid_at, known_at=known_at,
                                                 query_vector=qvec, semantic=qvec is not None)
            if query.strip() and not (f.role or f.tag):  # summaries cannot apply those filters
                result.summaries = self._summary_hits(query, f, limit, now, qvec)
            if query.strip() and (f.session or f.agent):  # document vaults attached to them
                from .vaults import vaults_of

                result.documents = vaults_of(self).search(query, session=f.session, agent=f.agent, limit=limit, query_vector=qvec).hits
        else:
            raise InvalidInput(f"unknown search mode {mode!r}: use ranked, substring or regex")
        if synthesize:  # a short answer drawn only from the hits, citing their ids (off by default)
            from .toolsynth import synthesize_answer

            result.answer = synthesize_answer(self, query, [*result.facts, *result.hits])
        self.accesses.apply(h.message for h in result.hits)
        if touch and result.hits:
            self.accesses.add([h.message.id for h in result.hits], iso(utcnow()))
        carried = self.tags.session_tags([h.message.session for h in result.hits])
        for h in result.hits:
            h.session_tags = carried.get(h.message.session, [])
        result.took_ms = (time.perf_counter() - started) * 1000
        return result

    def _ranked(self, query: str, f: Filters, limit: int, recipe: str, now: Any) -> tuple[_search.SearchResult, Any]:
        if recipe not in ("hybrid", "rrf"):
            raise InvalidInput(f"unknown recipe {recipe!r}: use hybrid or rrf")
        depth = max(limit * 5, 50)
        c = _search.Candidates()
        # the query is embedded on another thread while the keyword search runs: both
        # release the GIL (onnxruntime, SQLite), so on two cores their times overlap
        embed_notes: list[str] = []
        pending = None if self.settings.embedder == "none" else self._query_pool.submit(self._query_vector, query, embed_notes)
        pairs, match = _search.keyword(self.store, query, f, depth)
        for rank, ((m, _), score) in enumerate(zip(pairs, _search.normalise([s for _, s in pairs]))):
            c.messages[m.id], c.fts[m.id], c.fts_rank[m.id] = m, score, rank
        notes = ["no message matched every word; showing messages that match any word"] if match == "any" else []
        qvec = pending.result() if pending is not None else self._query_vector(query, embed_notes)
        notes += embed_notes
        if qvec is not None:
            model = self.embedder.model_id  # type: ignore[union-attr]
            for rank, (mid, cos) in enumerate(self.store.vector_search(model, qvec, f, depth)):
                c.semantic[mid], c.sem_rank[mid] = cos, rank
            missing = [mid for mid in c.messages if mid not in c.semantic]
            for mid, vec in self.store.get_vectors(model, missing).items():
                c.semantic[mid] = float(vec @ qvec)
            extra = [mid for mid in c.semantic if mid not in c.messages]
            c.messages.update({m.id: m for m in self.store.get_messages(extra)})
        now_days = (parse_time(now, "now") if now is not None else utcnow()).timestamp() / 86400.0
        w = self.weights()
        hits = _search.combine(c, w, recipe, now_days)
        if recipe == "hybrid":  # additive bonuses on the weighted sum's scale; rrf's is another
            hits = _search.conversation_rerank(hits, query, w)
        hits = _search.session_boost(hits, self.settings.w_session)[:limit]
        return _search.SearchResult(hits, mode="hybrid" if qvec is not None else "keyword", match=match, notes=notes), qvec

    def _summary_hits(self, query: str, f: Filters, limit: int, now: Any, qvec: Any, expand: int = 3) -> list[dict[str, Any]]:
        """Matching summaries, the best `expand` of them expanded to their children and
        source messages (the first 10 of each), so a hit on a summary reaches the turns."""
        from .summarize import expand as expand_summary
        from .summarize import search_summaries

        out = []
        for i, hit in enumerate(search_summaries(self, query, f, min(limit, 10), now, query_vector=qvec, semantic=qvec is not None)):
            row = hit.to_dict()
            if i < expand:
                found = expand_summary(self, hit.summary.id, limit=10)
                row["children"] = [{"id": c.id, "depth": c.depth, "content": c.content} for c in found["children"]]
                row["messages"] = [{k: m.to_dict()[k] for k in ("id", "session", "role", "created_at", "content")} for m in found["messages"]]
            out.append(row)
        return out

    def _query_vector(self, query: str, notes: list[str]) -> Any:
        if self.settings.embedder == "none":
            notes.append("no embedder configured: ranked by keyword, time and importance only")
            return None
        if not query.strip():
            return None
        try:
            embedder = self.embedder
            if embedder is None or embedder.model_id not in self.store.vector_models():
                notes.append("no vectors indexed yet: ranked by keyword, time and importance only")
                return None
            if self._embed_cache is not None:
                return self._embed_cache.embed(embedder, [query], self.settings.query_embed_timeout)[0]
            return embedder.checked([query], self.settings.query_embed_timeout)[0]
        except PalimpsestError as exc:
            notes.append(f"embedder unavailable ({exc}): ranked by keyword, time and importance only")
            return None

    def weights(self) -> _search.Weights:
        s = self.settings
        return _search.Weights(s.w_fts, s.w_semantic, s.w_temporal, s.w_importance, s.decay_clock, s.reinforcement_cap,
                               reply=s.w_reply, speaker=s.w_speaker)

    # -- embeddings ----------------------------------------------------------
    @cached_property
    def facts(self) -> Facts:
        """Fact vaults: curated, bi-temporal facts and their curator (`palimpsest.facts`)."""
        w = self.settings
        weights = {"fts": w.w_fts, "semantic": w.w_semantic, "temporal": w.w_temporal, "importance": w.w_importance}
        return Facts(self.store, self.home, embedder=lambda: self.embedder, snapshot=w.facts_snapshot, weights=weights)

    @property
    def embedder(self) -> Embedder | None:
        """The configured embedder, loaded on first use (the local model takes ~1 s)."""
        if self._embedder is None and self.settings.embedder != "none":
            with self._embedder_lock:
                if self._embedder is None:
                    self._embedder = get_embedder(self.settings.embedder, self.settings)
                    self._embed_cache = open_cache(self.settings.embed_cache, self.home)
        return self._embedder

    def use_embedder(self, embedder: Embedder | None, cache: EmbeddingCache | None = None) -> None:
        """Inject an embedder (tests, benchmarks): a real `Embedder` subclass."""
        self._embedder, self._embed_cache = embedder, cache

    def _after_index(self, messages: list[Message]) -> None:
        """New messages are indexed: queue their embeddings and the derived work
        (distill, tool-synth, compact; see `palimpsest.pipeline`) in one write."""
        ids = [m.id for m in messages]
        jobs = embed_jobs(ids) if self.settings.embedder != "none" else []
        jobs += after_index(self, messages)
        jobs += self.tags.after_index(ids)
        if jobs:
            self.store.enqueue(jobs)

    @cached_property
    def llm(self) -> LLM | None:
        """The configured chat endpoint (`palimpsest.llm`), or None: local fallbacks then."""
        return LLM.from_settings(self.settings, self.store, system_journal(self.home))

    @cached_property
    def tags(self) -> Tags:
        """Tags on sessions and summaries, their review and taxonomy (`palimpsest.tags`)."""
        return Tags(self)

    @cached_property
    def summaries(self) -> Summaries:
        """The summary DAG of every session (`palimpsest.summarize`)."""
        return Summaries(self)

    wiki = property(lambda self: __import__("palimpsest.wiki", fromlist=["wiki_of"]).wiki_of(self))  # TEMP (drop at merge)
    vaults = property(lambda self: __import__("palimpsest.vaults", fromlist=["vaults_of"]).vaults_of(self))  # TEMP (drop at merge)

    def embed_messages(self, messages: list[Any]) -> int:
        """Embed these messages now (what the `embed` job does) and store their vectors."""
        embedder = self.embedder
        if embedder is None or not messages:
            return 0
        texts = [_search.embedding_text(m) for m in messages]
        timeout = self.settings.embed_timeout
        vectors = self._embed_cache.embed(embedder, texts, timeout) if self._embed_cache else embedder.checked(texts, timeout)
        self.store.put_vectors(embedder.model_id, [(m.id, v) for m, v in zip(messages, vectors)])
        return len(messages)

    def worker(self, name: str | None = None, tasks: list[str] | None = None) -> Worker:
        return Worker(self, name, tasks, batch=self.settings.worker_batch)

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

    def recall(self, session: str | None, query: str, budget: int = 4000, **options: Any) -> Any:
        """The recall block for a turn (see `recall.py`): facts, messages, live tail."""
        from .recall import recall

        if session is not None:
            check_session_id(session)
        return recall(self, session, query, budget, **options)

    def context(self, session: str, query: str | None = None, **options: Any) -> dict[str, Any]:
        """The working context of a session (see `context.py`)."""
        from .context import working_context

        check_session_id(session)
        return working_context(self, session, query, **options)

    def briefing(self, session: str) -> dict[str, Any]:
        """What a model needs to resume `session` after its window was cleared."""
        from .context import briefing

        check_session_id(session)
        return briefing(self, session)

    def get_full(self, message_id: str) -> dict[str, Any]:
        """The whole message, its capped fields restored from the journal line."""
        if not isinstance(message_id, str):
            raise InvalidInput("id must be a string")
        found = self.store.get_messages([message_id])
        if not found:
            raise NotFound(f"no message with id {message_id!r}")
        m = found[0]
        self.accesses.apply([m])
        event = self.journal.get(m.session, m.journal_line, m.journal_offset)
        if event.id != m.id:
            raise NotFound(f"journal line {m.journal_line} of {m.session!r} does not hold {m.id!r}")
        full = m.to_dict()
        full.update(content=event.content, tool_result=event.tool_result, tool_args=event.tool_args)
        source = (event.metadata or {}).get("source_path")
        if source and (event.metadata or {}).get("source_truncated"):
            from .importers import recover_from_source

            full.update(recover_from_source(source, int(event.metadata.get("source_line", 0)), event.metadata.get("source_part")))
        return full

    def stats(self) -> dict[str, Any]:
        s = self.store.stats()
        lag = self.indexer.lag()
        journal_bytes = sum(self.journal.size(x) for x in self.journal.sessions())
        s.update({"journal_sessions": len(self.journal.sessions()), "journal_bytes": journal_bytes,
                  "index_lag_bytes": sum(lag.values()), "sessions_behind": len(lag), "home": str(self.home)})
        s.update({"summaries": self.store.summary_stats(), "llm": usage(self.store)})
        s["embeddings"] = self._embedding_stats(s.get("messages") or 0)
        return s

    def _embedding_stats(self, messages: int) -> dict[str, Any]:
        """Queue depth and coverage: how much of the index has vectors of which model."""
        jobs = self.store.job_status()["tasks"].get("embed", {})
        models = self.store.vector_models()
        return {
            "embedder": self.settings.embedder,
            "models": models,
            "coverage": {m: round(v["count"] / messages, 4) if messages else 1.0 for m, v in models.items()},
            "queued": jobs.get("queued", 0) + jobs.get("running", 0),
            "failed": jobs.get("failed", 0),
        }

    def sessions(self, *, limit: int = 100, offset: int = 0, **filters: Any) -> list[Session]:
        _check_page(limit, offset)
        if filters.get("tag"):  # list_sessions has no tag clause: never answer as if it had filtered
            raise InvalidInput("sessions are not listed by tag: use browse(tag=…) or tags.list(tag=…)")
        return self.store.list_sessions(self.filters(**filters), limit, offset)

    # -- maintenance ---------------------------------------------------------
    def catch_up(self) -> int:
        """Index whatever the journals hold beyond the cursors."""
        return self.indexer.index_all()

    def rebuild(self) -> int:
        """Drop the index and rebuild it from the journals (idle instant sessions, which
        the journals still hold, are swept again: the rebuilt index equals the old one)."""
        n = self.indexer.rebuild()
        self.sweep_instant()
        return n

    def sweep_instant(self, now: Any = None) -> list[str]:
        """Drop index rows of instant sessions idle longer than the setting (journals kept)."""
        moment = parse_time(now) if now is not None else utcnow()
        before = iso(moment - timedelta(hours=self.settings.instant_idle_hours))
        swept = self.store.idle_instant_sessions(before)
        for session in swept:
            self.store.drop_session_index(session)
        return swept


MAX_OFFSET = 1_000_000_000  # SQLite integers are 64-bit: a larger offset is an overflow, not a page


def _check_page(limit: Any, offset: Any) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= MAX_OFFSET:
        raise InvalidInput(f"offset must be an integer from 0 to {MAX_OFFSET:,}")


__all__ = ["Memory", "StoreUnavailable"]
