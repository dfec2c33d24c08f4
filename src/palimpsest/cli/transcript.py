"""Transcript commands: append, ingest, browse, search, get-full, sessions, stats."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, StoreUnavailable
from ..ids import short_id
from ..ingest.messages import normalise_message
from ..vaults import pages_said
from . import derive
from .common import add_command, console, count, emit, journal_only, minute, open_memory, print_table, progress, shown, words
from .facts import print_facts


def _filters(p: argparse.ArgumentParser, role: bool = True) -> None:
    p.add_argument("--session")
    p.add_argument("--agent")
    p.add_argument("--channel")
    if role:
        p.add_argument("--role")
    p.add_argument("--since", help="ISO time, inclusive")
    p.add_argument("--until", help="ISO time, exclusive")
    p.add_argument("--tag", help="only sessions carrying this accepted tag (key:value, e.g. topic:orion)")


def _filter_args(args: argparse.Namespace) -> dict[str, Any]:
    keys = ("session", "agent", "channel", "role", "since", "until", "tag")
    return {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}


def register(sub: Any) -> None:
    p = add_command(sub, "append", append, "Journal one message and index it.")
    p.add_argument("session")
    p.add_argument("role")
    p.add_argument("content", nargs="?", default="", help="message text ('-' reads stdin)")
    p.add_argument("--tool-name")
    p.add_argument("--tool-args", help="JSON")
    p.add_argument("--tool-result")
    p.add_argument("--event-key")
    p.add_argument("--created-at")
    p.add_argument("--agent")
    p.add_argument("--channel")
    p.add_argument("--kind", choices=["normal", "instant"])
    derive.add_flag(p)

    p = add_command(sub, "ingest", ingest, "Bulk-write a transcript (JSON list of messages, or JSONL) into one session.")
    p.add_argument("session")
    p.add_argument("file", help="path, or '-' for stdin")
    p.add_argument("--agent")
    p.add_argument("--channel")
    p.add_argument("--kind", choices=["normal", "instant"])
    derive.add_flag(p)

    p = add_command(sub, "browse", browse, "List messages chronologically, filtered and paged.")
    _filters(p)
    p.add_argument("--limit", type=count(1), default=50)
    p.add_argument("--offset", type=count(0), default=0)
    p.add_argument("--newest-first", action="store_true")

    p = add_command(sub, "search", search, "Search memory (ranked, substring or regex).")
    p.add_argument("query")
    _filters(p)
    p.add_argument("--limit", type=count(1), default=10)
    p.add_argument("--mode", choices=["ranked", "substring", "regex"], default="ranked")
    p.add_argument("--synthesize", action="store_true", help="also a short answer from the LLM drawn only from the hits "
                   "(needs PALIMPSEST_SYNTHESIZE_ANSWERS=1; the hits come back when it cannot be made)")

    p = add_command(sub, "get-full", get_full, "Show a message with its capped fields restored from the journal.")
    p.add_argument("id")

    p = add_command(sub, "sessions", sessions, "List sessions, most recently active first.")
    p.add_argument("--agent")
    p.add_argument("--channel")
    p.add_argument("--limit", type=count(1), default=100)
    p.add_argument("--offset", type=count(0), default=0)

    add_command(sub, "stats", stats, "Counts, journal vs index lag, sizes, oldest/newest, per agent.")


def append(args: argparse.Namespace) -> None:
    content = sys.stdin.read() if args.content == "-" else args.content
    try:
        tool_args = json.loads(args.tool_args) if args.tool_args else None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"--tool-args is not JSON: {exc}") from None
    raw = {"role": args.role, "content": content, "tool_name": args.tool_name, "tool_args": tool_args,
           "tool_result": args.tool_result, "metadata": None, "created_at": args.created_at, "event_key": args.event_key}
    attrs = {"agent": args.agent, "channel": args.channel, "kind": args.kind}
    try:
        memory = open_memory(args)
    except StoreUnavailable as exc:  # the journal is the truth: written now, indexed when the store is back
        result = journal_only(args, exc).append(args.session, raw, attrs)
    else:
        with memory:
            result = memory.writer.append(args.session, raw, attrs)
            derive.after_writes(args, memory)
    emit(args, result, lambda r: print(f"{r['id']} {'stored' if r['stored'] else 'duplicate'}"))


def _read_messages(path: str) -> list[Any]:
    """The messages of a JSON array or JSONL file, each checked where it is written (a JSONL
    file's errors name the file's line), or `InvalidInput`; nothing is stored on an error."""
    try:
        raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInput(f"{path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInput(f"{path}: invalid UTF-8 at line {line} (byte {exc.start}); nothing was stored") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{path}: not JSON at line {exc.lineno + text[:len(text) - len(stripped)].count(chr(10))}: "
                               f"{exc.msg}; nothing was stored") from None
    messages = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{path}: not JSON at line {number}: {exc.msg}; nothing was stored") from None
        try:
            normalise_message(message, f"line {number}")
        except InvalidInput as exc:
            raise InvalidInput(f"{path}: {exc}; nothing was stored") from None
        messages.append(message)
    return messages


def ingest(args: argparse.Namespace) -> None:
    messages = _read_messages(args.file)
    from ..service import BULK_COMPACT_SECONDS, compact_index

    attrs = {"agent": args.agent, "channel": args.channel, "kind": args.kind}
    try:
        memory = open_memory(args)
    except StoreUnavailable as exc:  # the journal is the truth: written now, indexed when the store is back
        result = journal_only(args, exc).ingest_session(args.session, messages, 0, attrs)
    else:
        with memory:
            with progress(args, "ingesting"):  # (one group commit: the bar pulses)
                result = memory.ingest_session(args.session, messages, **attrs)
                compact_index(memory, BULK_COMPACT_SECONDS)
            derive.after_writes(args, memory)
    emit(args, result, lambda r: print(f"{r['stored']} stored, {r['duplicates']} duplicates"))


def _print_messages(rows: list[dict[str, Any]]) -> None:
    def preview(m: dict[str, Any]) -> str:
        text = (m["content"] or f"[{m.get('tool_name') or 'tool'}] {(m.get('tool_result') or '')}")[:200]
        copies = int(m.get("score_parts", {}).get("copies", 0))  # a search hit's folded copies (`search.diversity`)
        return f"{text} (and {copies} more like it)" if copies else text

    # the short id (what recall shows; every command takes it), and one session named once above its rows: a whole
    # event id and a harness's session uuid left the content no room at 80 columns
    sessions = {m["session"] for m in rows}
    if len(sessions) == 1:
        print_table(("id", "time", "role", "content"), ((short_id(m["id"]), minute(m["created_at"]), m["role"] or "", preview(m))
                                                       for m in rows), title=f"session {next(iter(sessions))}")
        return
    print_table(("id", "session", "time", "role", "content"),
                ((short_id(m["id"]), m["session"], minute(m["created_at"]), m["role"] or "", preview(m)) for m in rows))


def browse(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        rows = [m.to_dict() for m in memory.browse(limit=args.limit, offset=args.offset, newest_first=args.newest_first, **_filter_args(args))]
    emit(args, {"messages": rows}, lambda r: _print_messages(r["messages"]))


def search(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.search(words(args.query), limit=args.limit, mode=args.mode, synthesize=args.synthesize,
                               **_filter_args(args)).to_dict()

    def human(r: dict[str, Any]) -> None:
        for note in r["notes"]:
            print(f"note: {note}", file=sys.stderr)
        if r.get("answer", {}).get("available"):
            print(f"answer: {r['answer']['answer']} (cites {', '.join(r['answer']['cited']) or 'nothing'})")
        if r["facts"]:  # curated facts come first, as in recall
            print("facts:")
            print_facts(r["facts"])
        others = r.get("summaries") or r.get("documents")
        if r.get("summaries"):  # a session's summaries and the attached documents' chunks, as `--json` has them
            print("summaries:")
            for s in r["summaries"]:
                print(f"  {s['id']} · {s['session_id']} · {s.get('level', '')}: {shown(s['content'], 300)}")
        if r.get("documents"):
            print("documents:")
            for d in r["documents"]:
                pages = d.get("pages") or []
                where = f" · {pages_said(pages)}" if pages else ""
                heading = f" › {d['heading_path']}" if d.get("heading_path") else ""
                print(f"  {d['id']} · {shown(d['vault'])}/{shown(d['document'])}{shown(heading)}{where}: {shown(d['text'], 300)}")
        if r["hits"] and (r["facts"] or others):
            print("messages:")
        if r["hits"] or not (r["facts"] or others):
            _print_messages(r["hits"])

    emit(args, result, human)


def get_full(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.get_full(args.id)
    emit(args, result, lambda r: print(r["content"] + (("\n--- tool result ---\n" + r["tool_result"]) if r.get("tool_result") else "")))


def sessions(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        rows = [s.to_dict() for s in memory.sessions(agent=args.agent, channel=args.channel, limit=args.limit, offset=args.offset)]

    def human(r: dict[str, Any]) -> None:
        # the title too: 34 sessions named chatgpt-<uuid> had told a user nothing (found by an importer of a year of chats)
        print_table(("id", "title", "kind", "agent", "channel", "updated"),
                    ((s["id"], shown(s.get("title") or "", 60), s["kind"], s["agent"] or "", s["channel"] or "",
                      minute(s["updated_at"])) for s in r["sessions"]))

    emit(args, {"sessions": rows}, human)


def stats(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = memory.stats()
    emit(args, result, lambda r: console().print_json(data=r))
