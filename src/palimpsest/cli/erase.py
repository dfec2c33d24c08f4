"""Erasure of an end customer's data (`palimpsest erase`): an operator's command, never a model's tool.

A thin adapter over `Memory.erase` (see `palimpsest.erase`): it shows what would go and erases
only with `--yes`, and refuses while a server of this store answers at PALIMPSEST_URL (a server
keeps its journals' state in memory; stop it, erase, start it again). There is no HTTP route and
no MCP tool: a bearer token a harness or a bot holds must not be able to erase.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import Conflict, InvalidInput
from .common import add_command, emit, open_memory, server_answers


def register(sub: Any) -> None:
    p = add_command(sub, "erase", erase, "Erase every trace of sessions (an end customer's right to erasure): their journals, "
                    "index rows, the facts only they attest, their lines in the system journal. Shows what would go; erases with --yes.")
    p.add_argument("--session", action="append", default=[], metavar="ID", help="a session to erase (repeatable)")
    p.add_argument("--channel", action=_Once, help="erase every session of this channel (one per command)")
    p.add_argument("--tag", action=_Once, metavar="KEY:VALUE", help="erase every session carrying this accepted tag (user:cus_123; "
                   "one per command)")
    p.add_argument("--finish", action="store_true", help="erase this home's journals of the sessions an erasure run in another "
                   "home on this store erased (run it in each home the erasure named)")
    p.add_argument("--dry-run", action="store_true", help="list what would go and change nothing")
    p.add_argument("--yes", action="store_true", help="erase (without it, the command only shows what would go)")


class _Once(argparse.Action):
    """An option given once: `--tag user:a --tag user:b` had kept the last alone, and user:a was never erased (exit 0)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: str | None = None) -> None:
        if getattr(namespace, self.dest) is not None:
            parser.error(f"{option} is given once per command: run `palimpsest erase` again for the next customer")
        setattr(namespace, self.dest, values)


def erase(args: argparse.Namespace) -> None:
    from ..capture.notify import erase_held

    with open_memory(args) as memory:
        memory.eraser.held = erase_held(memory.settings.home_path)
        chosen = {"sessions": args.session, "channel": args.channel, "tag": args.tag, "finish": args.finish}
        plan = memory.erase(**chosen, dry_run=True)
        if args.dry_run or not args.yes:
            emit(args, plan.to_dict(), _shown)
            if not args.dry_run:
                raise InvalidInput("nothing was erased: run the same command with --yes to erase this")
            return
        if server_answers(memory.settings.url, memory.store_fingerprint):
            raise Conflict(f"a server of this store answers at {memory.settings.url}: stop it, erase, then start it again "
                           "(it holds the journals' state in memory); nothing was erased")
        done = memory.erase(**chosen)
    emit(args, done.to_dict(), _shown)


def _shown(r: dict[str, Any]) -> None:
    verb = "erased" if r["done"] else "would erase"
    print(f"{verb} {len(r['sessions'])} sessions ({', '.join(r['sessions'])}), {r['messages']} messages, {r['summaries']} summaries, "
          f"{len(r['facts'])} facts whole, {len(r['attestations'])} attestations of facts that stay, {r['documents']} documents")
    for fact in r["facts"]:
        print(f"  fact {fact}")
    for fact, kind, source in r["attestations"]:
        print(f"  attestation {kind}:{source} of fact {fact} (the fact stays)")
    if r["other_journals"]:
        print(f"  other homes on this store hold these sessions' journals (journal ids {', '.join(r['other_journals'])}): "
              "run `palimpsest erase --finish --yes` in each (their store rows are gone and no home takes them again)")
    for fact in r["check"]:
        print(f"  fact {fact} kept, check by hand: it superseded or was superseded by an erased fact")
