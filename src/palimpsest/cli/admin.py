"""Administration: settings, rebuild, sweep, serve."""

from __future__ import annotations

import argparse
import logging
import signal
import threading
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from ..settings import Settings
from .common import add_command, emit, open_memory


def register(sub: Any) -> None:
    add_command(sub, "settings", settings, "Show every setting with its current value and where it came from.")
    add_command(sub, "rebuild", rebuild, "Drop the index and rebuild it from the journals.")
    add_command(sub, "sweep", sweep, "Remove idle instant sessions from the index (journals are kept).")
    p = add_command(sub, "serve", serve, "Run Palimpsest's main job: the indexer, the instant-session sweep and the workers.", json_flag=False)
    p.add_argument("--once", action="store_true", help="one pass, then exit")
    p.add_argument("--interval", type=float, default=2.0, help="seconds between indexer passes")


def settings(args: argparse.Namespace) -> None:
    overrides = {k: v for k, v in (("home", args.home), ("store", args.store)) if v}
    rows = Settings.load(**overrides).describe()

    def human(r: list[dict[str, Any]]) -> None:
        table = Table("name", "value", "source", "env", "help")
        for row in r:
            table.add_row(row["name"], str(row["value"]), row["source"], row["env"], row["help"])
        Console().print(table)

    emit(args, rows, human)


def rebuild(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        n = memory.rebuild()
        result = {"indexed": n, "messages": memory.stats()["messages"]}
    emit(args, result, lambda r: print(f"rebuilt: {r['messages']} messages"))


def sweep(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        swept = memory.sweep_instant()
    emit(args, {"swept": swept}, lambda r: print(f"swept {len(r['swept'])} instant sessions"))


def serve(args: argparse.Namespace) -> None:
    """The main loop: index journals, sweep instant sessions at start and every N minutes."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("palimpsest.serve")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with open_memory(args) as memory:
        log.info("serving %s (store %s)", memory.home, memory.settings.store_url)
        last_sweep = 0.0
        while not stop.is_set():
            if time.monotonic() - last_sweep >= memory.settings.sweep_minutes * 60:
                swept = memory.sweep_instant()
                last_sweep = time.monotonic()
                if swept:
                    log.info("swept %d idle instant sessions", len(swept))
            try:
                n = memory.catch_up()
                if n:
                    log.info("indexed %d messages", n)
            except Exception as exc:  # the store is down: the journal holds everything; retry
                log.warning("indexer stalled: %s", exc)
            if args.once:
                break
            stop.wait(args.interval)
    log.info("stopped")
