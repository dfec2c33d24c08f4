"""The transcript tools: search, browse, sessions, stats, a message in full; with writes
enabled, append one message or ingest a whole transcript."""

from __future__ import annotations

from typing import Any

from ..errors import EMPTY_QUERY, InvalidInput
from ..memory import Memory
from ..records import ROLE_RE
from .registry import ANY, BOOLEAN, FILTERS, LIMIT, OBJECT, OFFSET, ROLE, SESSION, STRING, pick, schema, tool

SESSION_ATTRS: dict[str, Any] = {
    "agent": STRING, "channel": STRING, "title": STRING, "key": STRING,
    "kind": {"type": "string", "enum": ["normal", "instant"]},
    "settings": OBJECT,
}
MESSAGE: dict[str, Any] = {
    "role": ROLE,
    "content": STRING, "tool_name": STRING, "tool_args": ANY, "tool_result": ANY, "metadata": OBJECT,
    "created_at": {"type": "string", "description": "ISO 8601; now when absent"},
    "event_key": {"type": "string", "description": "idempotency key; a content hash when absent"},
}


@tool("memory_search", "Search long-term memory: ranked keyword search (mode=ranked), or substring / regex scans. "
      "Returns hits with ids, sessions, times and scores.", schema({
          "query": STRING, "limit": LIMIT, "mode": {"type": "string", "enum": ["ranked", "substring", "regex"]},
          "recipe": {"type": "string", "enum": ["hybrid", "rrf"], "description": "ranking recipe (default: the setting)"},
          "valid_at": {"type": "string", "description": "facts as they held in the world at this ISO time"},
          "known_at": {"type": "string", "description": "facts as the system knew them at this ISO time"},
          "synthesize": {"type": "boolean", "description": "also a short answer drawn only from the hits, citing their ids (needs an LLM)"},
          **FILTERS,
      }, required=["query"]))
def memory_search(memory: Memory, args: dict[str, Any]) -> Any:
    if not args["query"].strip():  # (the library answers an empty query with nothing; a caller means a mistake)
        raise InvalidInput(EMPTY_QUERY)
    extra = {k: args[k] for k in ("recipe", "valid_at", "known_at", "synthesize") if k in args}
    return memory.search(args["query"], limit=args.get("limit", 10), mode=args.get("mode", "ranked"), **extra, **pick(args, FILTERS))


@tool("memory_browse", "List messages chronologically (or newest first), filtered by session, agent, channel, role and "
      "date range, paged.", schema({**FILTERS, "limit": LIMIT, "offset": OFFSET, "newest_first": BOOLEAN}))
def memory_browse(memory: Memory, args: dict[str, Any]) -> Any:
    rows = memory.browse(limit=args.get("limit", 50), offset=args.get("offset", 0), newest_first=args.get("newest_first", False),
                         **pick(args, FILTERS))
    carried = memory.tags.session_tags([m.session for m in rows])
    return {"messages": [{**m.to_dict(), "session_tags": carried.get(m.session, [])} for m in rows]}


@tool("memory_sessions", "List sessions, most recently active first.",
      schema({"agent": STRING, "channel": STRING, "limit": LIMIT, "offset": OFFSET}))
def memory_sessions(memory: Memory, args: dict[str, Any]) -> Any:
    rows = memory.sessions(limit=args.get("limit", 100), offset=args.get("offset", 0), **pick(args, {"agent": 1, "channel": 1}))
    return {"sessions": [s.to_dict() for s in rows]}


@tool("memory_stats", "Counts, journal vs index lag, sizes, oldest/newest, per agent.", schema({}))
def memory_stats(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.stats()


@tool("memory_get_full", "One message with its capped content and tool result restored in full from the journal.",
      schema({"id": {"type": "string", "description": "a message id (evt_…)"}}, required=["id"]))
def memory_get_full(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.get_full(args["id"])


@tool("memory_append", "Journal one message durably and index it. Identical repeated appends collapse unless they "
      "carry distinct event_key values.", schema({"session": SESSION, **MESSAGE, **SESSION_ATTRS}, required=["session", "role"]),
      write=True)
def memory_append(memory: Memory, args: dict[str, Any]) -> Any:
    rest = {k: v for k, v in args.items() if k not in ("session", "role", "content")}
    return memory.append(args["session"], args["role"], args.get("content") or "", **rest)


@tool("memory_ingest_session", "Bulk-write a transcript into one session as one group commit; a retried ingest skips "
      "what is already stored.", schema({
          "session": SESSION, "messages": {"type": "array", "items": schema({**MESSAGE, "type": {"type": "string", "pattern": ROLE_RE.pattern}}, required=["role"])},
          "start": {"type": "integer", "minimum": 0, "description": "position of the first message in the whole "
                    "transcript, for a transcript sent in several calls (keys stay unique across the calls)"},
          **SESSION_ATTRS,
      }, required=["session", "messages"]), write=True)
def memory_ingest_session(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.ingest_session(args["session"], args["messages"], start=args.get("start", 0), **pick(args, SESSION_ATTRS))
