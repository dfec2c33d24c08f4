"""Administration: settings, rebuild, sweep, serve."""

from __future__ import annotations

import argparse
import logging
import signal
import threading
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
    """The main job: index journals, sweep instant sessions at start and every N minutes."""
    from ..service import run_background

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with open_memory(args) as memory:
        logging.getLogger("palimpsest.serve").info("serving %s (store %s)", memory.home, memory.settings.store_url)
        run_background(memory, stop, args.interval, once=args.once)
