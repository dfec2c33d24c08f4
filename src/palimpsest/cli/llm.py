"""What the language model (or its local fallback) does: `summaries …`, `distill`,
`backfill-tool-synth`, `llm usage` and `llm parked`."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

from .common import add_command, count, emit, minute, open_memory, progress


def register(sub: Any) -> None:
    s = sub.add_parser("summaries", help="The summary DAG: compact, search, expand.", description="The summary DAG: compact, search, expand.")
    ssub = s.add_subparsers(dest="summaries_command", metavar="ACTION", required=True)
    p = add_command(ssub, "compact", compact, "Summarise a session's old messages (leaf, branch, root).")
    p.add_argument("session", nargs="?", help="the session (default: every session with enough unsummarised messages)")
    p.add_argument("--final", action="store_true", help="summarise every message and complete the tree")
    p.add_argument("--no-llm", action="store_true", help="use the extractive fallback even if an LLM is configured")
    p = add_command(ssub, "search", search, "Search summaries (keyword + vectors + time).")
    p.add_argument("query")
    p.add_argument("--session")
    p.add_argument("--limit", type=count(1), default=10)
    p = add_command(ssub, "expand", expand, "A summary with its children and source messages.")
    p.add_argument("id")
    p.add_argument("--limit", type=count(1), default=200, help="most messages listed")
    p = add_command(ssub, "tree", tree, "A session's summaries and whether its tree is complete.")
    p.add_argument("session")
    add_command(ssub, "replay", replay, "Store every journaled summary the store lacks (a new or rebuilt store).")
    p = add_command(sub, "distill", distill, "Distill a session's last turn into facts now (the turn is over).")
    p.add_argument("session")
    p.add_argument("--no-llm", action="store_true", help="use the local fallback even if an LLM is configured")
    p = add_command(sub, "backfill-tool-synth", backfill_tool_synth, "Queue a description job for every tool call without text.")
    p.add_argument("--dry-run", action="store_true", help="count, queue nothing")
    g = sub.add_parser("llm", help="The LLM client: token usage, parked replies.", description="The LLM client: token usage, parked replies.")
    gsub = g.add_subparsers(dest="llm_command", metavar="ACTION", required=True)
    add_command(gsub, "usage", usage, "Calls, prompt and completion tokens, failures and invalid replies per task.")
    p = add_command(gsub, "parked", parked, "Replies that were not valid JSON for their schema (newest first).")
    p.add_argument("--limit", type=count(1), default=20)


def compact(args: argparse.Namespace) -> None:
    with open_memory(args) as memory, progress(args, "compacting") as update:
        sessions = [args.session] if args.session else memory.summaries.pending_sessions(final=args.final)
        result = {}
        for i, s in enumerate(sessions):
            update(i, len(sessions))
            result[s] = memory.summaries.compact(s, final=args.final, use_llm=not args.no_llm)
    emit(args, result, lambda r: _lines(f"{s}: {n['leaf']} leaves, {n['branch']} branches, {n['root']} roots" for s, n in r.items()))


def search(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        hits = memory.summaries.search(args.query, memory.filters(session=args.session), args.limit)
    emit(args, [h.to_dict() for h in hits], lambda r: _lines(f"{h['id']} {h['level']} {h['session_id']} {h['score']:.3f}\n  "
                                                             + h["content"][:300].replace("\n", "\n  ") for h in r))


def expand(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        found = memory.summaries.expand(args.id, limit=args.limit)
    result = {"summary": found["summary"].to_dict(), "children": [c.to_dict() for c in found["children"]],
              "messages": [m.to_dict() for m in found["messages"]]}

    def human(r: dict[str, Any]) -> None:
        print(r["summary"]["content"])
        for c in r["children"]:
            print(f"- {c['id']} ({c['level']}, {c['message_count']} messages)")
        for m in r["messages"]:
            print(f"  {m['id']} {minute(m['created_at'])} {m['role']}: {(m['content'] or '')[:120]}")

    emit(args, result, human)


def tree(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        found = memory.summaries.tree(args.session)
    result = {**found, "summaries": [s.to_dict() for s in found["summaries"]]}
    emit(args, result, lambda r: print(f"{len(r['summaries'])} summaries; complete: {r['complete']}; unsummarised: {r['unsummarised']}"))


def replay(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        n = memory.summaries.replay()
    emit(args, {"restored": n}, lambda r: print(f"restored {r['restored']} summaries"))


def distill(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.distiller.last_turn(args.session, use_llm=not args.no_llm)
    emit(args, result.to_dict(), lambda r: print(r["skipped"] or "\n".join(f"{d['action']}: {d['text']}" for d in r["decisions"]) or "nothing to remember"))


def backfill_tool_synth(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.toolsynth.backfill(dry_run=args.dry_run)
    emit(args, result, lambda r: print(f"{r['empty_tool_messages']} tool calls without text; "
                                       + ("nothing queued (dry run)" if r["dry_run"] else f"{r['queued']} jobs queued")))


def usage(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.llm_usage()
    emit(args, result, lambda r: _lines((f"{task}: {n}" for task, n in r.items()), "no LLM calls yet"))


def parked(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.parked(args.limit)
    emit(args, result, lambda r: _lines((f"{p['key']} {minute(p['at'])} {p['task']}: {p['problem']}" for p in r), "nothing parked"))


def _lines(lines: Iterable[str], empty: str = "") -> None:
    text = "\n".join(lines)
    if text or empty:
        print(text or empty)
