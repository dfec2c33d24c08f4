"""Administration: settings, rebuild, sweep."""

from __future__ import annotations

import argparse
from typing import Any

from ..settings import Settings
from . import derive
from .common import add_command, emit, open_memory, print_table, progress


def register(sub: Any) -> None:
    add_command(sub, "settings", settings, "Show every setting with its current value and where it came from.")
    p = add_command(sub, "rebuild", rebuild, "Drop the index and rebuild it from the journals (and the vectors, as after a write).")
    derive.add_flag(p)
    add_command(sub, "retry-quarantined", retry_quarantined, "Index again the journal events the index refused "
                "(quarantined; `stats` lists them): after an upgrade that can hold them.")
    add_command(sub, "sweep", sweep, "Remove the messages of idle instant sessions from the index (the session stays listed; journals are kept).")


def settings(args: argparse.Namespace) -> None:
    overrides = {k: v for k, v in (("home", args.home), ("store", args.store)) if v}
    rows = Settings.load(**overrides).describe()

    def human(r: list[dict[str, Any]]) -> None:
        print_table(("name", "value", "source", "env", "help"), ((x["name"], x["value"], x["source"], x["env"], x["help"]) for x in r))

    emit(args, rows, human)


def rebuild(args: argparse.Namespace) -> None:
    from ..service import BULK_COMPACT_SECONDS, compact_index

    with open_memory(args, repair=True) as memory, progress(args, "rebuilding"):  # (one transaction: the bar pulses)
        n = memory.rebuild()
        compact_index(memory, BULK_COMPACT_SECONDS)
        stats = memory.stats()
        result = {"indexed": n, "messages": stats["messages"], "moved_aside": memory.moved_aside,
                  "quarantined": stats["quarantine"]["count"]}
        rebuilt = memory.embeds_queued  # (the embed jobs of every message the rebuild indexed: what it wrote)
    with open_memory(args) as memory:  # the rebuilt index has no vectors: computed here, or left to a server (`derive`)
        memory.embeds_queued = rebuilt
        result["derived"] = derive.after_writes(args, memory)
    emit(args, result, _said)


def _said(r: dict[str, Any]) -> None:
    if r["moved_aside"]:
        print(f"the index database was damaged: moved aside to {r['moved_aside']}")
    print(f"rebuilt: {r['messages']} messages" + (f", {r['quarantined']} events quarantined" if r["quarantined"] else ""))


def retry_quarantined(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.retry_quarantined()
    emit(args, result, lambda r: print(f"retried {r['retried']} quarantined events: {r['indexed']} indexed, "
                                       f"{r['quarantined']} still refused"))


def sweep(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        swept = memory.sweep_instant()
    emit(args, {"swept": swept}, lambda r: print(f"swept {len(r['swept'])} instant sessions"))

