"""Recall commands: `recall`, `context`, `briefing`."""

from __future__ import annotations

import argparse
from typing import Any

from .common import add_command, count, emit, open_memory, words
from .hook import DEFAULT_TIMEOUT


def register(sub: Any) -> None:
    p = add_command(sub, "recall", recall, "The memory block a model should see before a turn about QUERY.")
    p.add_argument("query", nargs="?", help="what the turn is about (not with --hook)")
    p.add_argument("--session", help="the running session (its latest events form the live tail)")
    p.add_argument("--budget", type=count(0), default=4000, help="token budget of the whole block (--hook: 2000)")
    p.add_argument("--hook", action="store_true", help="answer a harness's prompt hook: its JSON on stdin, the block as "
                   "the harness's additionalContext on stdout, nothing when the server is unavailable (see docs/server.md)")
    p.add_argument("--url", help="with --hook: server URL (default: PALIMPSEST_URL)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="with --hook: seconds before answering nothing")
    p.add_argument("--format", choices=["json", "text"], default="json", help="with --hook: hookSpecificOutput JSON or the bare block")
    _scope_args(p)
    p = add_command(sub, "context", context, "The working context of a session: workspace files, recent messages, recall block.")
    p.add_argument("session", help="a session id")
    p.add_argument("--query", help="what the turn is about (default: the latest user message)")
    p.add_argument("--last", type=count(1), default=20, help="recent messages to include")
    p.add_argument("--budget", type=count(0), default=4000, help="token budget of the recall block")
    p.add_argument("--workspace", help="folder with SOUL.md, USER.md, … (default: the workspace setting)")
    _scope_args(p)
    p = add_command(sub, "briefing", briefing, "What a model needs to resume a session after its window was cleared.")
    p.add_argument("session", help="a session id")


def _scope_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tag", help="key:value: past messages and facts only from sessions carrying this tag")
    p.add_argument("--agent", help="past messages and facts only from this agent's sessions")
    p.add_argument("--channel", help="past messages and facts only from sessions of this channel")
    p.add_argument("--project", help="the repository the turn is in: what only other repositories' sessions said stays out; "
                   "'*': every repository's (as none)")


def _scope(args: argparse.Namespace) -> dict[str, str]:
    return {k: getattr(args, k) for k in ("tag", "agent", "channel", "project") if getattr(args, k) is not None}


def recall(args: argparse.Namespace) -> None:
    if args.hook:  # reached only through `main(argv)` with --hook placed unusually; same answer
        from .hook import main as hook_main

        raise SystemExit(hook_main(["--hook", *(["--url", args.url] if args.url else []), "--timeout", str(args.timeout),
                                    "--format", args.format]))
    query = words(args.query)
    with open_memory(args) as memory:
        result = memory.recall(args.session, query, args.budget, **_scope(args)).to_dict()
    emit(args, result, lambda r: print(r["block"] or "(nothing recalled" + "".join(f"; {n}" for n in r["notes"]) + ")"))


def context(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.context(args.session, args.query, last_n=args.last, budget=args.budget, workspace=args.workspace,
                                **_scope(args))
    emit(args, result, lambda r: print(r["system_prompt"]))


def briefing(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.briefing(args.session)
    emit(args, result, lambda r: print(r["text"]))
