"""The background part of `palimpsest serve`: indexer passes, instant sweeps, workers.

`run_background(memory, stop)` loops until `stop` is set; the HTTP server runs it in a
thread beside uvicorn, and `palimpsest serve --once` runs one pass in the foreground.
`run_worker(memory, stop)` is `palimpsest worker`: the job loop alone, for adding job
workers as processes beside the servers (which then run with `--no-worker`, or not).
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from . import embed
from .memory import Memory

EMBED_TASK = "embed"  # the task that runs in a lane of its own (`run_background`)

log = logging.getLogger("palimpsest.serve")
COMPACT_SECONDS = 0.5  # of full-text merging per pass at most (a 100,000-message backlog: ~1 s in all)
BULK_COMPACT_SECONDS = 60.0  # ... after a CLI bulk load (import, ingest, rebuild), which has no idle passes


def background_pass(memory: Memory, last_sweep: float) -> float:
    """One pass: sweep if due (returns the new sweep time), index what the journals hold,
    merge full-text segments for up to COMPACT_SECONDS, then apply fact decisions and
    candidates parked while the store was unreachable, and write batched access counts."""
    if time.monotonic() - last_sweep >= memory.settings.sweep_minutes * 60:
        swept = memory.sweep_instant()
        last_sweep = time.monotonic()
        if swept:
            log.info("swept %d idle instant sessions", len(swept))
    try:
        n = memory.catch_up()
        if n:
            log.info("indexed %d messages", n)
        memory.indexer.outage.recovered()
    except Exception as exc:  # the store is down: the journal holds everything; retry next pass
        memory.indexer.outage.failed("indexer stalled: %s", exc)  # one warning per outage, as the writes say it
        return last_sweep
    compact_index(memory, COMPACT_SECONDS)
    try:  # fact decisions and candidates parked while the store was away
        drained = memory.facts.curator.drain()
        if drained:
            log.info("curated %d parked fact candidates", len(drained))
    except Exception as exc:
        log.warning("fact drain stalled: %s", exc)
    try:  # access counts of recent search hits (access.py)
        memory.accesses.flush()
    except Exception as exc:
        log.warning("access counts not written yet: %s", exc)
    return last_sweep


def compact_index(memory: Memory, seconds: float) -> bool:
    """Do the full-text merging writers leave for later (migration 0014, `Store.compact_index`)
    for up to `seconds`: by the server's idle passes, and after the bulk loads of the CLI and
    at the MCP stdio server's start, which have no idle passes. True when nothing is left.
    Never raises: it is housekeeping, the data is in."""
    deadline = time.monotonic() + seconds
    try:
        while memory.compact_index():
            if time.monotonic() >= deadline:
                return False
        return True
    except Exception as exc:
        log.warning("index compaction deferred: %s", exc)
        return False


def reap_tags(memory: Memory, last_reap: float) -> float:
    """Reap orphaned tags when due (hourly by default); returns the new reap time."""
    if time.monotonic() - last_reap < memory.settings.tags_reap_minutes * 60:
        return last_reap
    try:
        n = memory.tags.reap()
        if n:
            log.info("reaped %d orphaned tags", n)
    except Exception as exc:
        log.warning("tag reaping failed: %s", exc)
    return time.monotonic()


def _queue_wiki_backfill(memory: Memory) -> None:
    """After an upgrade that raised the wiki pipeline version, re-mine old leaves once
    (a delayed, low-priority job; its key makes it once per version)."""
    try:
        memory.wiki.queue_backfill()
    except Exception as exc:
        log.warning("wiki backfill not queued: %s", exc)


@contextmanager
def background(memory: Memory, interval: float = 2.0) -> Iterator[threading.Event]:
    """What `palimpsest serve` runs besides HTTP, in this process while the block lasts: the indexer's catch-up,
    the sweep and the job workers (embeddings, a turn's facts a minute after it went quiet, summaries, tags). For a
    program that embeds `Memory` and has no server (`worker().drain()` runs only the jobs due at that moment: a
    session's last turn waits a minute, so its facts never came). On exit the job in hand finishes first (an
    embedding's goes back to the queue between two calls of the model).

        with Memory(home) as memory, background(memory):
            ...
    """
    stop = threading.Event()
    thread = threading.Thread(target=run_background, args=(memory, stop, interval), name="palimpsest-background", daemon=True)
    memory.stopping.append((stop, thread))  # `memory.close()` inside the block stops it too, and waits for it
    thread.start()
    try:
        yield stop
    finally:
        stop.set()
        thread.join(timeout=60)
        memory.stopping.remove((stop, thread))


def run_background(memory: Memory, stop: threading.Event, interval: float = 2.0, once: bool = False,
                   worker: bool = True) -> None:
    """Index, sweep and run jobs until `stop` is set. The job worker runs in its own
    thread so a slow model never delays indexing; on stop it finishes the job in hand, or
    hands it back between two calls of a model (`stopping`). `worker=False` leaves the
    jobs to `palimpsest worker` processes (`serve --no-worker`)."""
    _queue_wiki_backfill(memory)
    if once:
        background_pass(memory, float("-inf"))
        reap_tags(memory, float("-inf"))
        if worker:
            memory.worker().drain()
        return
    threads = []
    llm = memory.kernel.llm
    if llm is not None:
        llm.stopping = stop  # a model's call in flight is closed when the server stops
    if worker:
        # embeddings in a lane of their own: behind a slow model's jobs in one batch, a new
        # message waited 136 s for its vector (a new user's 20-s endpoint)
        others = [t for t in memory.handlers if t != EMBED_TASK]
        base = f"{socket.gethostname()}:{os.getpid()}"
        for name, tasks in ((f"{base}:embed", [EMBED_TASK]), (f"{base}:jobs", others)):
            thread = threading.Thread(target=memory.worker(name, tasks).run, args=(stop,), name=f"palimpsest-{name.rsplit(':', 1)[1]}",
                                      daemon=True)
            thread.start()
            threads.append(thread)
    last_sweep = last_reap = float("-inf")
    with stopping(memory, stop):
        while not stop.is_set():
            last_sweep = background_pass(memory, last_sweep)
            last_reap = reap_tags(memory, last_reap)
            stop.wait(interval)
        for thread in threads:
            thread.join(timeout=30)


def run_worker(memory: Memory, stop: threading.Event, tasks: list[str] | None = None, out: TextIO = sys.stdout) -> None:
    """`palimpsest worker`: claim and run jobs until `stop` is set, nothing else (no HTTP,
    no indexer). Any number of these share one queue (PostgreSQL: `FOR UPDATE SKIP
    LOCKED`); they need the servers' home, because jobs journal their decisions (facts,
    summaries) into `<home>/system`. On stop the job in hand is finished, an embedding's handed back between
    two calls of the model (`stopping`), and the rest of the batch goes back unstarted."""
    worker = memory.worker(tasks=tasks)
    print(f"Palimpsest worker {worker.name} running {', '.join(tasks) if tasks else 'every task'}", file=out, flush=True)
    with stopping(memory, stop):
        worker.run(stop)
    settle()
    log.info("worker %s stopped", worker.name)


@contextmanager
def stopping(memory: Memory, stop: threading.Event) -> Iterator[None]:
    """While the block runs, `stop` ends the memory's background embeddings between two calls of the model: a job
    of long messages is minutes of them, and a server stopped in one had waited out its worker's join (30 s), then
    exited inside the model (a new user's). The job goes back to the queue (`Interrupted`)."""
    embedding = memory.kernel.embedding
    embedding.stopping = stop
    try:
        yield
    finally:
        if embedding.stopping is stop:  # (the memory embeds as before after a `background` block)
            embedding.stopping = None


def settle() -> None:
    """Before the process exits, wait for a model's call still running on its daemon thread (one abandoned at its
    timeout): exiting inside the ONNX runtime aborts the process ("terminate called without an active
    exception", exit 134: `serve` on SIGTERM while it embedded, found by a new user)."""
    if not embed.settle():
        log.warning("a call of the embedding model still runs after 30 s: exiting anyway")
