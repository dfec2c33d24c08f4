"""Recall commands: `recall`, `context`, `briefing`."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InvalidInput
from .common import add_command, count, emit, open_memory


def register(sub: Any) -> None:
    p = add_command(sub, "recall", recall, "The memory block a model should see before a turn about QUERY.")
    p.add_argument("query", nargs="?", help="what the turn is about")
    p.add_argument("--session", help="the running session (its latest events form the live tail)")
    p.add_argument("--budget", type=count(0), default=4000, help="token budget of the whole block")
    p = add_command(sub, "context", context, "The working context of a session: workspace files, recent messages, recall block.")
    p.add_argument("session", help="a session id")
    p.add_argument("--query", help="what the turn is about (default: the latest user message)")
    p.add_argument("--last", type=count(1), default=20, help="recent messages to include")
    p.add_argument("--budget", type=count(0), default=4000, help="token budget of the recall block")
    p.add_argument("--workspace", help="folder with SOUL.md, USER.md, … (default: the workspace setting)")
    p = add_command(sub, "briefing", briefing, "What a model needs to resume a session after its window was cleared.")
    p.add_argument("session", help="a session id")


def recall(args: argparse.Namespace) -> None:
    if not args.query or not args.query.strip():
        raise InvalidInput("recall needs a query: the words of the turn")
    with open_memory(args) as memory:
        result = memory.recall(args.session, args.query, args.budget).to_dict()
    emit(args, result, lambda r: print(r["block"] or "(nothing recalled)"))


def context(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.context(args.session, args.query, last_n=args.last, budget=args.budget, workspace=args.workspace)
    emit(args, result, lambda r: print(r["system_prompt"]))


def briefing(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.briefing(args.session)
    emit(args, result, lambda r: print(r["text"]))
