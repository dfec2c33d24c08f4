"""Background work: `jobs status`, `jobs retry-failed`, `jobs run`, and `reindex`."""

from __future__ import annotations

import argparse
from typing import Any

from ..records import parse_time, utcnow
from .common import add_command, emit, open_memory, print_table, progress

MAX_RUN = 1_000_000  # as `Worker.drain`: jobs that keep queueing more cannot hold the command forever


def register(sub: Any) -> None:
    jobs = sub.add_parser("jobs", help="The durable job queue.", description="The durable job queue.")
    jsub = jobs.add_subparsers(dest="jobs_command", metavar="ACTION", required=True)
    add_command(jsub, "status", status, "Counts per task and state, with a sample last_error of failed jobs.")
    p = add_command(jsub, "retry-failed", retry_failed, "Queue failed jobs again (attempts reset).")
    p.add_argument("--task", help="only jobs of this task")
    p.add_argument("--error", help="only jobs whose last error contains this text")
    p.add_argument("--dry-run", action="store_true", help="count, change nothing")
    p = add_command(jsub, "run", run, "Run due jobs until none is left, then exit.")
    p.add_argument("--task", action="append", help="only this task (repeatable)")
    p = add_command(sub, "reindex", reindex, "Re-embed every message with the current model (resumable); with VAULT, re-index that vault.")
    p.add_argument("vault", nargs="?", help="a document or skill vault: re-read its files (see `palimpsest index`)")
    p.add_argument("--stale", action="store_true", help="with VAULT: only what changed since indexing (by content hash)")


def status(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.jobs()

    def human(r: dict[str, Any]) -> None:
        print_table(("task", "state", "jobs"), ((task, state, n) for task, states in r["tasks"].items() for state, n in states.items()))
        for task, err in r["sample_errors"].items():
            print(f"{task}: last error: {err}")
        if r.get("next_run"):
            print(_first_due(r["next_run"]))

    emit(args, result, human)


def _first_due(next_run: str) -> str:
    """When the first queued job runs, as a person reads it. A time already past is now: a bot's developer backdated his
    messages, and status said "the first queued job is due at 2026-08-01T10:30:00Z", long gone, as though it waited."""
    if parse_time(next_run) <= utcnow():
        return "the first queued job is due now: `palimpsest jobs run` runs what is due here, as a running `palimpsest serve` does"
    return f"the first queued job is due at {next_run[:19]}Z"


def retry_failed(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        n = memory.retry_failed(args.task, args.error, args.dry_run)
    result = {"jobs": n, "dry_run": args.dry_run}
    emit(args, result, lambda r: print(f"{r['jobs']} failed jobs {'would be' if r['dry_run'] else ''} queued again".replace("  ", " ")))


def run(args: argparse.Namespace) -> None:
    def asked(task: str) -> bool:  # one of the tasks run (all without --task)
        return not args.task or task in args.task

    with open_memory(args) as memory, progress(args, "jobs") as update:
        memory.catch_up()  # what was journaled while the store was away (a CLI write then) is indexed first
        tasks = memory.jobs()["tasks"]
        total = sum(s.get("queued", 0) for t, s in tasks.items() if asked(t))
        worker, n = memory.worker(tasks=args.task), 0
        while n < MAX_RUN and (batch := worker.run_once()):  # the worker's `drain`, a batch at a time for the bar
            n += batch
            update(n, max(n, total))
        # fact candidates parked while the store or the LLM was away: curated here too, as `serve` does (without a
        # server they had stayed out of search and recall until the next write)
        drained = memory.facts.curator.drain() if not args.task and memory.facts.curator.pending() else []
        curated = sum(1 for d in drained if d.action != "parked")  # (one parked again, the LLM still failing, waits)
        left = memory.jobs()
    queued = {t: s.get("queued", 0) for t, s in left["tasks"].items() if asked(t) and s.get("queued")}
    waiting = sum(queued.values())
    # held by another worker (a server, or one killed, whose lease runs out first): not done, said (found by an SRE: after
    # a kill -9, `jobs run` answered at once and said nothing of 100 jobs still marked running)
    held = {t: s.get("running", 0) for t, s in left["tasks"].items() if asked(t) and s.get("running")}
    due = min((at for t, at in left["next_runs"].items() if asked(t)), default=None)

    def human(r: dict[str, Any]) -> None:
        # which jobs wait, by task: it had said "compaction, and a session's last turn" of 300 tag suggestions
        which = ", ".join(f"{t} {n}" for t, n in sorted(r["queued"].items()))
        later = f"; {r['waiting']} wait ({which}), the first until {r['next_run'][:19]}Z (each waits for its session to be quiet): " \
                "`palimpsest serve` runs them when due" if r["waiting"] else ""
        parked = f"; curated {r['curated']} parked fact candidate{'s' if r['curated'] != 1 else ''}" if r["curated"] else ""
        running = ", ".join(f"{t} {n}" for t, n in sorted(r["running"].items()))
        others = (f"; {sum(r['running'].values())} held by another worker ({running}): a running server does them, "
                  "or, if that worker is gone, they are run again once its lease of a few minutes ends") if r["running"] else ""
        print(f"ran {r['ran']} jobs{parked}{later}{others}")

    emit(args, {"ran": n, "curated": curated, "waiting": waiting, "queued": queued, "next_run": due if waiting else None,
                "running": held}, human)


def reindex(args: argparse.Namespace) -> int | None:
    if args.vault:
        from .vaults import reindex_vault

        return reindex_vault(args)
    with open_memory(args) as memory:
        todo = memory.count_messages()
        with progress(args, "embedding") as update:
            n = memory.reindex(progress=lambda done: update(done, todo))
        result = {"embedded": n, "model": memory.embedder.model_id if memory.embedder else None}
    emit(args, result, lambda r: print(f"embedded {r['embedded']} messages with {r['model']}"))
