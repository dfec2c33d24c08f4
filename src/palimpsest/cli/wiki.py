"""`palimpsest wiki …`: the topic pages mined from the summaries (`palimpsest.wiki.Wiki`)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any

from .common import add_command, count, emit, minute, open_memory


def register(sub: Any) -> None:
    p = add_command(sub, "wiki", _help, "Topic pages mined from the summaries: list, show, history, search, mine, backfill.", json_flag=False)
    wsub = p.add_subparsers(dest="wiki_command", metavar="ACTION", required=True)
    q = add_command(wsub, "list", list_, "Topics by title, with their statement counts.")
    q.add_argument("--kind", help="person, project, system, subject or topic")
    q.add_argument("--query", help="a part of the title")
    q.add_argument("--limit", type=count(1), default=100)
    q.add_argument("--offset", type=count(0), default=0)
    q = add_command(wsub, "show", show, "A page: what is known, disputed and no longer true, each with its sources.")
    q.add_argument("topic", help="a topic id, title or alias")
    q = add_command(wsub, "history", history, "A page's patches, oldest first, each with the leaf it came from.")
    q.add_argument("topic", help="a topic id, title or alias")
    q = add_command(wsub, "search", search, "Pages matching a query, each with its best statements.")
    q.add_argument("query")
    q.add_argument("--limit", type=count(1), default=10)
    q = add_command(wsub, "mine", mine, "Mine one leaf summary now (--force: again at the same version).")
    q.add_argument("summary", help="a leaf summary id (sum_…)")
    q.add_argument("--force", action="store_true")
    q.add_argument("--no-llm", action="store_true", help="the deterministic fallback even with an LLM configured")
    q = add_command(wsub, "backfill", backfill, "Mine leaves never mined, or mined at an older pipeline version, now.")
    q.add_argument("--limit", type=count(1), default=1000, help="how many leaves to mine at most (default: 1000)")
    q.add_argument("--no-llm", action="store_true")
    add_command(wsub, "replay", replay, "Apply journaled wiki changes the store has not applied yet.")
    add_command(wsub, "stats", stats, "Topics, statements by state, patches, leaves mined, stale leaves.")


def _help(args: argparse.Namespace) -> None:  # argparse requires an action; never reached
    raise SystemExit(2)


def _lines(lines: Iterable[str]) -> None:
    for line in lines:
        print(line)


def _wiki(memory: Any) -> Any:
    return memory.wiki


def list_(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        rows = _wiki(memory).list(kind=args.kind, query=args.query, limit=args.limit, offset=args.offset)
    emit(args, rows, lambda r: _lines(f"{t['id']}  {t['kind']:<8} v{t['version']:<4} {t['title']}  "
                                      f"({t['statements'].get('current', 0)} statements)" for t in r))


def show(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        page = _wiki(memory).show(args.topic)
    emit(args, page, lambda p: print(p["markdown"], end=""))


def history(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        patches = _wiki(memory).history(args.topic)
    emit(args, patches, lambda r: _lines(f"v{p['version']}  {minute(p['created_at'])}  {p['origin']:<8} {p['summary_id'] or '-'}  "
                                         + ", ".join(op["op"] for op in p["ops"]) for p in r))


def search(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        hits = _wiki(memory).search(args.query, limit=args.limit)
    emit(args, hits, lambda r: _lines(f"{h['topic']['title']} ({h['score']})\n" + "\n".join(
        f"  {s['id']}  {s['text']}  [{', '.join(s['sources'])}]" for s in h["statements"]) for h in r))


def mine(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        emit(args, _wiki(memory).mine(args.summary, use_llm=not args.no_llm, force=args.force))


def backfill(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        emit(args, _wiki(memory).backfill(args.limit, use_llm=not args.no_llm))


def replay(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        emit(args, {"applied": _wiki(memory).replay()})


def stats(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        emit(args, _wiki(memory).stats())
