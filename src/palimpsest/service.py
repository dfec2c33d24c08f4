"""The background part of `palimpsest serve`: indexer passes, instant sweeps, workers.

`run_background(memory, stop)` loops until `stop` is set; the HTTP server runs it in a
thread beside uvicorn, and `palimpsest serve` alone runs it in the foreground.
"""

from __future__ import annotations

import logging
import threading
import time

from .memory import Memory

log = logging.getLogger("palimpsest.serve")


def background_pass(memory: Memory, last_sweep: float) -> float:
    """One pass: sweep if due (returns the new sweep time), index what the journals hold,
    then apply fact decisions and candidates parked while the store was unreachable."""
    if time.monotonic() - last_sweep >= memory.settings.sweep_minutes * 60:
        swept = memory.sweep_instant()
        last_sweep = time.monotonic()
        if swept:
            log.info("swept %d idle instant sessions", len(swept))
    try:
        n = memory.catch_up()
        if n:
            log.info("indexed %d messages", n)
    except Exception as exc:  # the store is down: the journal holds everything; retry next pass
        log.warning("indexer stalled: %s", exc)
        return last_sweep
    try:  # fact decisions and candidates parked while the store was away
        drained = memory.facts.curator.drain()
        if drained:
            log.info("curated %d parked fact candidates", len(drained))
    except Exception as exc:
        log.warning("fact drain stalled: %s", exc)
    return last_sweep


def reap_tags(memory: Memory, last_reap: float) -> float:
    """Reap orphaned tags when due (hourly by default); returns the new reap time."""
    if time.monotonic() - last_reap < memory.settings.tags_reap_minutes * 60:
        return last_reap
    try:
        n = memory.tags.reap()
        if n:
            log.info("reaped %d orphaned tags", n)
    except Exception as exc:  # noqa: BLE001 - the store is down: try again next time
        log.warning("tag reaping failed: %s", exc)
    return time.monotonic()


def _queue_wiki_backfill(memory: Memory) -> None:
    """After an upgrade that raised the wiki pipeline version, re-mine old leaves once
    (a delayed, low-priority job; its key makes it once per version)."""
    try:
        from .wiki import wiki_of

        wiki_of(memory).queue_backfill()
    except Exception as exc:  # noqa: BLE001 — the store may be down at start; the next start retries
        log.warning("wiki backfill not queued: %s", exc)


def run_background(memory: Memory, stop: threading.Event, interval: float = 2.0, once: bool = False) -> None:
    """Index, sweep and run jobs until `stop` is set. The job worker runs in its own
    thread so a slow model never delays indexing; on stop it finishes the job in hand
    (an unfinished claim is taken over by any worker after the lease)."""
    worker = memory.worker()
    _queue_wiki_backfill(memory)
    if once:
        background_pass(memory, float("-inf"))
        reap_tags(memory, float("-inf"))
        worker.drain()
        return
    thread = threading.Thread(target=worker.run, args=(stop,), name="palimpsest-worker", daemon=True)
    thread.start()
    last_sweep = last_reap = float("-inf")
    while not stop.is_set():
        last_sweep = background_pass(memory, last_sweep)
        last_reap = reap_tags(memory, last_reap)
        stop.wait(interval)
    thread.join(timeout=30)
