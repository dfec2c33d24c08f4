"""Durable background work: a jobs table in the store and a worker loop.

Jobs are rows (`task`, `payload`, `job_key` for dedupe, `attempts`, `run_at`, lock
columns). A worker claims a batch atomically (SQLite: one write transaction; PostgreSQL:
`FOR UPDATE SKIP LOCKED`), runs each job's handler, and marks it done or failed. A
failure is retried with backoff (5 s, 10 s, 20 s, … up to an hour) until `max_attempts`,
then stays `failed`, visible in `palimpsest jobs status`, until `jobs retry-failed`.
A worker killed mid-batch leaves its jobs `running`; after the lease (5 minutes) any
worker takes them over. Handlers are idempotent (embedding a message twice writes the
same vector), so a job run twice has the effect of running once.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from datetime import timedelta

from .errors import Interrupted, StoreUnavailable
from .records import iso, utcnow
from .store import Job, NewJob, Store

log = logging.getLogger(__name__)
LEASE = timedelta(minutes=5)
EMBED_BATCH = 64

Handler = Callable[[Job], None]  # runs one job; raises to fail it (retried with backoff)


def last_attempt(job: Job) -> bool:
    """The job's last attempt: an LLM-backed handler takes the local fallback instead."""
    return job.attempts >= job.max_attempts


def backoff(attempts: int) -> timedelta:
    return timedelta(seconds=min(3600, 5 * 2 ** max(0, attempts - 1)))


def embed_jobs(ids: list[str]) -> list[NewJob]:
    """Jobs that embed these messages, in batches."""
    return [
        NewJob("embed", {"ids": ids[i : i + EMBED_BATCH]}, job_key=f"embed:{ids[i]}:{len(ids[i : i + EMBED_BATCH])}")
        for i in range(0, len(ids), EMBED_BATCH)
    ]


class Worker:
    """Claims and runs jobs until told to stop."""

    def __init__(self, store: Store, handlers: dict[str, Handler], name: str | None = None, tasks: list[str] | None = None,
                 batch: int = 8, keys: list[str] | None = None) -> None:
        self.store, self.handlers = store, handlers
        self.name = name or f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"
        self.tasks, self.keys = tasks, keys  # (keys: only the jobs of these `job_key`s, see `Store.claim_jobs`)
        self.batch = batch
        self.held: list[Job] = []  # claimed, not yet run: the store went away midway through their batch
        self.claimed_at = utcnow()
        self.stopping: threading.Event | None = None  # set by `run`'s caller: the batch in hand stops between jobs

    def run_once(self) -> int:
        """Claim one batch and run it; returns how many jobs were attempted. When the store
        goes away midway, the rest of the batch is still this worker's: it runs first once
        the store answers again (it was left `running` until its lease ran out, five minutes
        after a five-second restart of PostgreSQL: found by a new user)."""
        now = utcnow()
        if self.held and now - self.claimed_at < LEASE / 2:
            jobs, self.held = self.held, []
        else:
            jobs, self.held, self.claimed_at = self.store.claim_jobs(self.name, self.tasks, self.batch, iso(now), iso(now - LEASE), self.keys), [], now
        for i, job in enumerate(jobs):
            try:
                if self.stopping is not None and self.stopping.is_set():
                    # a server stopping with a backlog waited 30 s for a batch of model calls, then aborted in one (a new
                    # user's): the rest of the batch goes back to the queue, unstarted, its attempts returned (it had
                    # waited out the five-minute lease, `running`, while doctor said all was well)
                    for unstarted in jobs[i:]:
                        self.store.release_job(unstarted.id, self.name)
                    return i
                # the lease is renewed as each job starts: a batch that outlasted it had its later jobs taken over and
                # run twice, by two servers (a distilled fact written twice: found on a shared PostgreSQL)
                if not self.store.renew_job(job.id, self.name, iso(utcnow())):
                    log.info("job %s (%s) was taken over by another worker: not run here", job.id, job.task)
                    continue
                self._run(job)
            except StoreUnavailable:
                self.held = jobs[i:]
                raise
        return len(jobs)

    def _run(self, job: Job) -> None:
        fn = self.handlers.get(job.task)
        try:
            if fn is None:
                raise LookupError(f"no handler for task {job.task!r}")
            fn(job)
        except Interrupted as exc:  # a shutdown closed its model call: no failure, its attempt comes back
            log.info("job %s (%s) stopped: %s", job.id, job.task, exc)
            self.store.release_job(job.id, self.name)
        except Exception as exc:
            retry = None if job.attempts >= job.max_attempts else iso(utcnow() + backoff(job.attempts))
            log.warning("job %s (%s) failed, attempt %d: %s", job.id, job.task, job.attempts, exc)
            self.store.fail_job(job.id, f"{type(exc).__name__}: {exc}", retry)
        else:
            self.store.finish_job(job.id)

    def drain(self, limit: int = 1_000_000) -> int:
        """Run jobs until none is due (tests, benchmarks, `reindex`)."""
        done = 0
        while done < limit:
            n = self.run_once()
            if not n:
                break
            done += n
        return done

    def run(self, stop: threading.Event, idle: float = 1.0) -> None:
        self.stopping = stop
        failures = 0
        while not stop.is_set():
            try:
                if not self.run_once():
                    stop.wait(idle)
                if failures:
                    log.warning("worker %s: the store answers again after %d failures", self.name, failures)
                    failures = 0
            except Exception as exc:  # the store is down: wait and try again (one warning per outage, the rest at debug)
                failures += 1
                (log.warning if failures == 1 else log.debug)("worker %s: %s", self.name, exc)
                stop.wait(idle * 5)
