"""Tags: `palimpsest tags list|pending|counts|lookup|add|decide|suggest|reap|replay` and
`palimpsest tags taxonomy list|upsert|decide|merge` (names mirror `memory.tags`)."""

from __future__ import annotations

import argparse
from typing import Any

from .common import add_command, count, emit, minute, open_memory, print_table


def _target(p: argparse.ArgumentParser, required: bool = True) -> None:
    g = p.add_mutually_exclusive_group(required=required)
    g.add_argument("--session", help="a session id")
    g.add_argument("--summary", help="a summary id")
    g.add_argument("--session-key", help="a session's client key")


def register(sub: Any) -> None:
    tags = sub.add_parser("tags", help="Tags on sessions and summaries, and their review.",
                          description="Tags (key:value) on sessions and summaries, and their review.")
    t = tags.add_subparsers(dest="tags_command", metavar="ACTION", required=True)
    p = add_command(t, "list", list_, "Tags of a session or summary, or all, newest first.")
    _target(p, required=False)
    p.add_argument("--state", choices=["suggested", "accepted", "rejected"], help="only tags in this state")
    p.add_argument("--tag", help="only this key:value")
    p.add_argument("--limit", type=count(1), default=100, help="at most this many (default 100)")
    add_command(t, "pending", pending, "Suggestions waiting for review.")
    p = add_command(t, "counts", counts, "Per accepted tag: sessions carrying it and their messages.")
    p.add_argument("--key", help="only tags of this key")
    p = add_command(t, "lookup", lookup, "Sessions with this client key, and their tags.")
    p.add_argument("session_key", help="the client's own session key")
    p = add_command(t, "add", add, "Tag a session or summary as a person (accepted at once).")
    p.add_argument("tag", help="key:value")
    _target(p)
    p.add_argument("--note", help="why")
    p = add_command(t, "decide", decide, "Accept or reject a tag of a session or summary.")
    p.add_argument("tag", help="key:value")
    p.add_argument("decision", choices=["accept", "reject"], help="accept or reject")
    _target(p)
    p = add_command(t, "suggest", suggest, "Propose tags for a session now (the suggest-tags job, run by hand).")
    p.add_argument("session", help="a session id")
    p.add_argument("--no-llm", action="store_true", help="use the keyword fallback even when an LLM is configured")
    add_command(t, "reap", reap, "Drop tags whose session or summary is gone (serve does it hourly).")
    add_command(t, "replay", replay, "Apply journaled tag decisions the store lacks (after moving stores).")
    x = t.add_parser("taxonomy", help="The reviewed vocabulary of tag values.", description="The reviewed vocabulary of tag values.")
    xs = x.add_subparsers(dest="taxonomy_command", metavar="ACTION", required=True)
    p = add_command(xs, "list", taxonomy_list, "Values of the vocabulary, with state and aliases.")
    p.add_argument("--key", help="only this key")
    p = add_command(xs, "upsert", taxonomy_upsert, "Add a value to the vocabulary (accepted), or edit its description.")
    p.add_argument("tag", help="key:value")
    p.add_argument("--description", help="what the value means")
    p = add_command(xs, "decide", taxonomy_decide, "Accept or reject a value; a rejected value is never proposed.")
    p.add_argument("tag", help="key:value")
    p.add_argument("decision", choices=["accept", "reject"], help="accept or reject")
    p = add_command(xs, "merge", taxonomy_merge, "Merge a value into another: tags re-pointed, the old value kept as an alias.")
    p.add_argument("tag", help="key:value to merge away")
    p.add_argument("into", help="the value (or key:value) it becomes")


def _where(args: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in (("session", args.session), ("summary", args.summary), ("session_key", args.session_key)) if v}


def _table(rows: list[dict[str, Any]]) -> None:
    print_table(("tag", "state", "origin", "on", "created"),
                ((r["tag"], r["state"], r["origin"], f"{r['target_type']} {r['target_id']}", minute(r["created_at"])) for r in rows))


def list_(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        rows = memory.tags.list(**_where(args), state=args.state, tag=args.tag, limit=args.limit)
    emit(args, {"tags": rows}, lambda r: _table(r["tags"]))


def pending(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        rows = memory.tags.pending()
    emit(args, {"tags": rows}, lambda r: _table(r["tags"]))


def counts(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.tags.counts(args.key)

    def human(r: dict[str, Any]) -> None:
        print_table(("tag", "sessions", "messages"), ((c["tag"], c["sessions"], c["messages"]) for c in r["tags"]))

    emit(args, result, human)


def lookup(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        emit(args, memory.tags.lookup(args.session_key))


def add(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        emit(args, memory.tags.add(args.tag, note=args.note, **_where(args)), lambda r: print(f"{r['tag']} accepted on {r['target_id']}"))


def decide(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        emit(args, memory.tags.decide(args.tag, args.decision, **_where(args)), lambda r: print(f"{r['tag']} {r['state']} on {r['target_id']}"))


def suggest(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        text = "\n".join(m.content for m in memory.browse(session=args.session, limit=200, newest_first=True) if m.content)
        made = memory.tags.suggest(memory.tags.propose(text, use_llm=not args.no_llm, session=args.session), session=args.session)
    emit(args, {"suggested": made}, lambda r: print("\n".join(t["tag"] for t in r["suggested"]) or "nothing new to suggest"))


def reap(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        emit(args, {"reaped": memory.tags.reap()}, lambda r: print(f"reaped {r['reaped']} orphaned tags"))


def replay(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        emit(args, {"applied": memory.tags.replay()}, lambda r: print(f"applied {r['applied']} tag decisions"))


def taxonomy_list(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        rows = memory.tags.taxonomy(args.key)

    def human(r: dict[str, Any]) -> None:
        print_table(("value", "state", "origin", "alias of", "description"),
                    ((x["tag"], x["state"], x["origin"], x["merged_into"] or "", x["description"] or "") for x in r["taxonomy"]))

    emit(args, {"taxonomy": rows}, human)


def taxonomy_upsert(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        emit(args, memory.tags.taxonomy_upsert(args.tag, description=args.description), lambda r: print(f"{r['tag']} {r['state']}"))


def taxonomy_decide(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        emit(args, memory.tags.taxonomy_decide(args.tag, args.decision), lambda r: print(f"{r['tag']} {r['state']}"))


def taxonomy_merge(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        emit(args, memory.tags.merge(args.tag, args.into), lambda r: print(f"{r['from']} merged into {r['into']} (kept as an alias)"))
