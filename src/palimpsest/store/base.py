"""The Store contract: everything Palimpsest asks of an index database.

The index is derived from the journal (DESIGN.md, principle 2), so every write method
here is idempotent: inserting a message that is already there is a no-op, and the
journal cursor advances in the same transaction as the rows it covers. SQL lives only
below this package; domain code never asks which backend it is on — when it needs
something new, a method is added here and implemented by every backend, and the
parametrised suite in `tests/test_store_contract.py` holds both to it.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidInput
from ..records import Message, Session
from .documents_base import DocumentStoreContract
from .facts_base import FactStoreContract
from .summaries_base import SummaryStoreContract
from .tags_base import TagStoreContract
from .wiki_base import WikiStoreContract

_LOCKS: dict[str, threading.Lock] = {}  # Store.exclusive's default, per process
_LOCKS_GUARD = threading.Lock()

# Keyword search bounds its work the same way on both backends: an any-word query scores
# every match of its rarest terms (together at most RARE_MATCHES matches) and only about
# the newest BM25_WINDOW matches of the others (docs/foundation.md, "Keyword search at scale").
RARE_MATCHES = 2000
BM25_WINDOW = 1000


def split_by_rarity(terms: list[str], freq: dict[str, int], budget: int = RARE_MATCHES) -> tuple[list[str], list[str]]:
    """(rare, common): the rarest terms while their matches together fit in `budget`, then the rest."""
    rare: list[str] = []
    common: list[str] = []
    used = 0
    for term in sorted(terms, key=lambda t: freq[t]):
        if not common and used + freq[term] <= budget:
            rare.append(term)
            used += freq[term]
        else:
            common.append(term)
    return rare, common

@dataclass
class Filters:
    """Restrictions applied inside the queries (never after a LIMIT)."""

    session: str | None = None
    agent: str | None = None
    channel: str | None = None
    role: str | None = None
    since: str | None = None  # ISO, inclusive
    until: str | None = None  # ISO, exclusive
    sessions: list[str] | None = None
    tag: str | None = None  # "key:value": the session carries this accepted tag (palimpsest.tags)
    apart: tuple[str, ...] | None = None  # sessions left out (a project's recall: the sessions of other repositories)


@dataclass
class Quarantined:
    """An event the indexer could not index: where it is in its journal and why the store
    refused it. `line` is its line number (1-based, as `Event.line`), `offset` where it
    starts and `end` the offset after it."""

    journal: str
    session: str
    line: int
    offset: int
    end: int
    event_id: str | None
    reason: str
    at: str = ""


@dataclass
class Job:
    id: int
    task: str
    payload: dict[str, Any]
    job_key: str | None = None
    attempts: int = 0
    max_attempts: int = 5
    last_error: str | None = None
    run_at: str = ""
    locked_by: str | None = None
    locked_at: str | None = None
    state: str = "queued"


@dataclass
class NewJob:
    task: str
    payload: dict[str, Any] = field(default_factory=dict)
    job_key: str | None = None
    max_attempts: int = 5
    run_at: str | None = None


class Store(FactStoreContract, SummaryStoreContract, DocumentStoreContract, TagStoreContract, WikiStoreContract, ABC):
    """An index database. Open one with `palimpsest.store.open_store(url)`."""

    url: str

    @abstractmethod
    def close(self) -> None: ...

    # -- sessions ------------------------------------------------------------
    @abstractmethod
    def upsert_session(self, session: Session) -> None:
        """Insert, or update the fields given (non-empty) and `updated_at`."""

    @abstractmethod
    def get_session(self, session_id: str) -> Session | None: ...

    @abstractmethod
    def list_sessions(self, filters: Filters, limit: int = 100, offset: int = 0) -> list[Session]: ...

    @abstractmethod
    def projects_of_folder(self, cwd: str) -> list[str]:
        """The `project` settings of the sessions whose settings name working folder `cwd`, each once, of the most
        recently active session first."""

    @abstractmethod
    def idle_instant_sessions(self, idle_before: str) -> list[str]:
        """Instant sessions whose `updated_at` is before `idle_before` and that still have rows."""

    @abstractmethod
    def drop_session_index(self, session_id: str) -> int:
        """Remove a session's messages (and vectors) from the index; the journal is untouched.
        The cursor stays where it is, so the indexer does not bring them back."""

    # -- messages ------------------------------------------------------------
    @abstractmethod
    def insert_messages(self, session_id: str, messages: list[Message], cursor: tuple[int, int] | None,
                        journal: str = "") -> list[str]:
        """Insert messages of one session, skipping ids or (session, event_key) already
        present, and set the session's cursor (line, offset) in the journal `journal` (a
        home's journal id: several homes may index into one store) in the same
        transaction. Returns the ids actually inserted."""

    @contextmanager
    def exclusive(self, name: str) -> Iterator[None]:
        """Hold the lock `name` against every process using this store, for work that
        reads and then writes on what it read (curation compares a candidate with the
        stored facts, then writes). Backends lock across processes; this default only
        within this one."""
        with _LOCKS_GUARD:
            lock = _LOCKS.setdefault(name, threading.Lock())
        with lock:
            yield

    @abstractmethod
    def cursor(self, session_id: str, journal: str = "") -> tuple[int, int]:
        """(lines, byte offset) of that journal already indexed; (0, 0) if none."""

    @abstractmethod
    def get_messages(self, ids: list[str]) -> list[Message]:
        """Messages by id, in the order asked; unknown ids are left out."""

    @abstractmethod
    def ids_by_key(self, session_id: str, keys: list[str]) -> dict[str, str]:
        """The id the index holds for each (session, event_key) it has: on a store several
        homes share, a message written through two of them is one row, under the first id."""

    @abstractmethod
    def keys_elsewhere(self, session_id: str, keys: list[str]) -> dict[str, str]:
        """The id of a message of another session than `session_id` holding each of `keys` it
        has (a harness's own record ids, unique across its sessions: a Claude Code session
        resumed repeats the lines of the one it resumes)."""

    @abstractmethod
    def journal_paths(self, session_id: str) -> list[tuple[str | None, str]]:
        """(journal id, journal path) of the journals the session's indexed messages were written
        to (one per home that wrote them; a store several homes share may hold more than one)."""

    @abstractmethod
    def journal_sessions(self) -> list[tuple[str | None, str, str]]:
        """(journal id, journal path, session) of every journal that wrote indexed messages: on
        a store several homes share, which sessions each home's journals hold."""

    @abstractmethod
    def ids_ending(self, tail: str, limit: int) -> list[str]:
        """Up to `limit` message ids that end with `tail` (a short id, `ids.short_id`);
        a scan, for a tool call, not for a hot path."""

    def short_id_target(self, short: str) -> str | None:
        """The one message id ending with the short id `short`, or None when none does; a
        short id several messages share is `InvalidInput` naming them (give the full id)."""
        ids = self.ids_ending(short, 3)
        if len(ids) > 1:
            raise InvalidInput(f"short id {short!r} is shared by several messages ({', '.join(ids)}): give the full id")
        return ids[0] if ids else None

    @abstractmethod
    def browse(self, filters: Filters, limit: int, offset: int, newest_first: bool = False) -> list[Message]: ...

    @abstractmethod
    def keyword_search(self, terms: list[str], filters: Filters, limit: int, match_all: bool) -> list[tuple[Message, float]]:
        """Messages matching the terms (all, or any), best first, with a BM25-like score
        where higher is better. Terms are plain words: the backend quotes them."""

    def count_matches(self, terms: list[str], filters: Filters, cap: int) -> int:
        """How many messages hold every term, counted up to `cap` — whether an all-words
        search would fill a page, without ranking anything. Backends may count cheaper."""
        return len(self.keyword_search(terms, filters, cap, match_all=True))

    def compact_index(self, budget: int = 500) -> bool:
        """Do about `budget` pages of the housekeeping the full-text index's writers leave
        for later (SQLite: merging FTS5 segments); True while more remains. The server calls
        it in its idle passes. A backend whose index needs none returns False (PostgreSQL:
        autovacuum merges a GIN index's pending list)."""
        return False

    @abstractmethod
    def substring_search(self, fragment: str, filters: Filters, limit: int) -> list[Message]:
        """Messages whose content or tool result contains `fragment` (case-insensitive)."""

    @abstractmethod
    def admitted(self, ids: list[str], filters: Filters) -> set[str]:
        """The message ids of `ids` that `filters` admit (their session's agent, channel, tags, …), in one query."""

    @abstractmethod
    def count_cut(self, filters: Filters) -> int:
        """How many messages in scope the index holds cut at `field_cap` (`Message.truncated`)."""

    @abstractmethod
    def scan_cut(self, filters: Filters, limit: int, after_rowid: int = 0) -> list[tuple[int, Message]]:
        """The messages in scope the index holds cut at `field_cap`, in index order: (rowid, message)."""

    @abstractmethod
    def scan(self, filters: Filters, limit: int, after_rowid: int = 0) -> list[tuple[int, Message]]:
        """Messages in index order for full scans (regex mode, exports): (rowid, message)."""

    @abstractmethod
    def touch(self, ids: list[str], at: str) -> None:
        """Count one more access for each id and set `last_accessed_at`."""

    @abstractmethod
    def stats(self) -> dict[str, Any]:
        """Counts, per agent, oldest/newest, database size in bytes, cursors."""

    @abstractmethod
    def cursors(self, journal: str = "") -> dict[str, tuple[int, int]]: ...

    @abstractmethod
    def forget_cursor(self, session_id: str, journal: str = "") -> None:
        """Drop a journal's cursor for a session (its next index pass starts from line 0)."""

    @abstractmethod
    def atomically(self) -> AbstractContextManager[None]:
        """Everything this thread does with the store inside the block is one transaction:
        committed when the block ends, rolled back if it raises. Other readers see the index
        as it was until then (how `rebuild` replaces the index without ever emptying it);
        a write inside the block that fails rolls back alone (a savepoint), so the indexer
        can still quarantine an event in it."""

    def integrity(self) -> str | None:
        """None if the index database is sound, else what is wrong with it (SQLite: its
        quick check). A backend without files to damage answers None."""
        return None

    @abstractmethod
    def reset(self) -> None:
        """Drop every derived row (messages, sessions, vectors, cursors, jobs, quarantine)."""

    # -- quarantine (store/sql/quarantine.py) -----------------------------------
    @abstractmethod
    def quarantine(self, q: Quarantined) -> None:
        """Record an event the store refused and move its session's cursor past it (never
        backwards), in one transaction."""

    @abstractmethod
    def quarantined(self, journal: str | None = None, limit: int = 100) -> list[Quarantined]:
        """Quarantined events, newest first (of one journal id, or of all)."""

    @abstractmethod
    def quarantine_count(self, journal: str | None = None) -> int: ...

    @abstractmethod
    def release_quarantined(self, journal: str, session: str, offset: int) -> None:
        """Forget one quarantined event (it was indexed on a retry)."""

    # -- erasure (store/sql/erase.py), for `palimpsest erase` alone -------------
    @abstractmethod
    def erase_sessions(self, sessions: list[str]) -> dict[str, int]:
        """Delete every row of these sessions: the sessions, their messages (with full text, trigrams and
        vectors), summaries (with sources, full text and vectors), tags, cursors, quarantined events, wiki
        leaves and mentions, wiki statements drawn from their messages or summaries and the patches of their
        summaries, and the jobs that name them. Rows deleted, per table."""

    @abstractmethod
    def erase_facts(self, facts: list[str], attestations: list[tuple[str, str, str]]) -> int:
        """Delete these facts (every version row, attestations, entities, links, vectors, full text; a kept
        fact's `supersedes`/`superseded_by` naming one is cleared) and these (fact id, source type, source)
        attestations of facts that stay. Returns the facts deleted."""

    @abstractmethod
    def erase_topics(self, topics: list[str]) -> int:
        """Delete these wiki topics and their keys (pages only erased leaves made). Returns the topics deleted."""

    @abstractmethod
    def drop_unused_taxonomy(self, key: str, values: list[str]) -> int:
        """Forget these taxonomy values of `key` that no tag carries any more."""

    @abstractmethod
    def record_erased(self, digests: list[str], at: str) -> None:
        """Record these sessions (by `erased.session_digest`) as erased, for every home on the store to see."""

    @abstractmethod
    def erased_sessions(self, digests: list[str] | None = None) -> set[str]:
        """The digests of the sessions recorded as erased (`record_erased`); of `digests` only, when given (a write asks
        of its one session: the whole table read for every append grew with every erasure)."""

    @abstractmethod
    def journals_of(self, sessions: list[str]) -> list[str]:
        """The journal ids of the homes that indexed any of these sessions (their cursors)."""

    @abstractmethod
    def scrub(self) -> None:
        """Make the deleted rows unreadable in the database's own files (SQLite: merge the full-text
        segments and VACUUM; PostgreSQL: VACUUM the tables erasure deletes from)."""

    # -- vectors -------------------------------------------------------------
    @abstractmethod
    def put_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        """Store one unit vector per message id for `model` (replacing any older one)."""

    @abstractmethod
    def vector_search(self, model: str, query: np.ndarray, filters: Filters, limit: int) -> list[tuple[str, float]]:
        """(message id, cosine) of the nearest stored vectors of `model`, filters applied first."""

    @abstractmethod
    def get_vectors(self, model: str, ids: list[str]) -> dict[str, np.ndarray]:
        """Stored vectors of `model` for these message ids (ids without one are left out)."""

    @abstractmethod
    def vector_models(self) -> dict[str, dict[str, int]]:
        """{model: {"dim": d, "count": n}} of every model with stored vectors."""

    def warm_vectors(self, model: str, wait: float = 0.0) -> bool:
        """Get `model`'s vector search ready before the first query needs it (a backend that
        keeps its index in memory loads and builds it now); True once it is ready, waiting
        up to `wait` seconds. A backend whose index lives in the database is always ready."""
        return True

    @abstractmethod
    def messages_without_vectors(self, model: str, limit: int) -> list[Message]: ...

    @abstractmethod
    def drop_vectors(self, model: str | None = None) -> int: ...

    # -- jobs ----------------------------------------------------------------
    @abstractmethod
    def enqueue(self, jobs: list[NewJob]) -> int:
        """Queue jobs; one whose `job_key` is already queued or running is skipped.
        Returns how many were queued."""

    @abstractmethod
    def claim_jobs(self, worker: str, tasks: list[str] | None, limit: int, now: str, stale_before: str,
                   keys: list[str] | None = None) -> list[Job]:
        """Atomically lock up to `limit` due jobs for `worker` (also taking over jobs locked
        before `stale_before`, whose worker died); safe with many workers. `keys`, when given,
        limits them to the jobs of these `job_key`s (a CLI write runs its own, not the backlog)."""

    @abstractmethod
    def finish_job(self, job_id: int) -> None: ...

    @abstractmethod
    def fail_job(self, job_id: int, error: str, retry_at: str | None) -> None:
        """Record a failure; `retry_at` None (or attempts exhausted) marks it failed."""

    @abstractmethod
    def renew_job(self, job_id: int, worker: str, now: str) -> bool:
        """Renew `worker`'s lease of a job it claimed, as it starts it: False when another
        worker took it over meanwhile (a batch that outlasted the lease), which runs it."""

    @abstractmethod
    def release_job(self, job_id: int, worker: str) -> None:
        """Give a job `worker` holds back, due now, with the attempt it was claimed with returned:
        it was stopped by a shutdown, not failed. A job another worker took over is left to it."""

    @abstractmethod
    def job_status(self) -> dict[str, Any]: ...

    @abstractmethod
    def retry_failed(self, task: str | None, error_like: str | None, dry_run: bool) -> int: ...
