"""The transcript tools: search, browse, sessions, stats, a message in full; with writes
enabled, append one message or ingest a whole transcript."""

from __future__ import annotations

from typing import Any

from ..memory import Memory
from ..records import ROLE_RE
from .registry import ANY, BOOLEAN, FILTERS, LIMIT, OBJECT, OFFSET, QUERY, ROLE, SESSION, STRING, TIME, described, pick, schema, shown, tool

SESSION_ATTRS: dict[str, Any] = {
    "agent": described(STRING, "the agent writing (claude-code, codex, …): the session's; a later write naming another changes it"),
    "channel": described(STRING, "the channel (a chat, a customer, …): the session's, set by the first write naming one; a "
                         "write naming another is refused (conflict)"),
    "title": described(STRING, "the session's title"),
    "key": described(STRING, "the client's own stable id of the session"),
    "kind": {"type": "string", "enum": ["normal", "instant"], "description": "instant: scratch, never distilled into "
             "facts, swept after 24 h idle (default normal)"},
    "settings": described(OBJECT, "the session's settings (cwd, tags, …)"),
}
MESSAGE: dict[str, Any] = {
    "role": ROLE,
    "content": described(STRING, "the message's text"),
    "tool_name": described(STRING, "the tool called, for a tool call"),
    "tool_args": described(ANY, "the tool call's arguments (any JSON)"),
    "tool_result": described(ANY, "the tool's full output (any JSON); capped in the index, kept whole in the journal"),
    "metadata": described(OBJECT, "anything else to keep with the message"),
    "created_at": described(TIME, "when it was said; now when absent"),
    "event_key": {"type": "string", "description": "idempotency key; a content hash when absent"},
}


@tool("memory_search", "Search long-term memory: ranked hybrid search (mode=ranked: keywords, meaning when an "
      "embedder is loaded, recency and importance in one score), or substring / regex scans. "
      "Returns hits with ids, sessions, times and scores.", schema({
          "query": QUERY, "limit": described(LIMIT, "most hits to return (default 10)"),
          "mode": {"type": "string", "enum": ["ranked", "substring", "regex"],
                   "description": "ranked (default): hybrid ranking; substring / regex: exact scans, newest first"},
          "recipe": {"type": "string", "enum": ["hybrid", "rrf"], "description": "ranking recipe (default: the setting)"},
          "valid_at": described(TIME, "facts as they held in the world at this time"),
          "known_at": described(TIME, "facts as the system knew them at this time"),
          "synthesize": {"type": "boolean", "description": "also a short answer drawn only from the hits, citing their ids (needs an LLM)"},
          **FILTERS,
      }, required=["query"]))
def memory_search(memory: Memory, args: dict[str, Any]) -> Any:
    extra = {k: args[k] for k in ("recipe", "valid_at", "known_at", "synthesize") if k in args}
    found = memory.search(args["query"], limit=args.get("limit", 10), mode=args.get("mode", "ranked"), **extra, **pick(args, FILTERS))
    result = found.to_dict()
    return {**result, "hits": [shown(h) for h in result["hits"]]}


@tool("memory_browse", "List messages chronologically (or newest first), filtered by session, agent, channel, role and "
      "date range, paged.", schema({**FILTERS, "limit": described(LIMIT, "most messages to return (default 50)"), "offset": OFFSET,
                                  "newest_first": described(BOOLEAN, "newest first instead of oldest first (default false)")}))
def memory_browse(memory: Memory, args: dict[str, Any]) -> Any:
    rows = memory.browse(limit=args.get("limit", 50), offset=args.get("offset", 0), newest_first=args.get("newest_first", False),
                         **pick(args, FILTERS))
    carried = memory.tags.session_tags([m.session for m in rows])
    out: dict[str, Any] = {"messages": [{**shown(m.to_dict()), "session_tags": carried.get(m.session, [])} for m in rows]}
    if not rows and args.get("session") and memory.get_session(args["session"]) is None:
        # (as memory_context and memory_briefing say it: a typo had answered an empty list and nothing more)
        out["notes"] = [f"no session {str(args['session'])[:80]!r} is stored"]
    return out


@tool("memory_sessions", "List sessions, most recently active first.",
      schema({"agent": FILTERS["agent"], "channel": FILTERS["channel"], "limit": described(LIMIT, "most sessions to return (default 100)"),
              "offset": OFFSET}))
def memory_sessions(memory: Memory, args: dict[str, Any]) -> Any:
    rows = memory.sessions(limit=args.get("limit", 100), offset=args.get("offset", 0), **pick(args, {"agent": 1, "channel": 1}))
    return {"sessions": [s.to_dict() for s in rows]}


@tool("memory_stats", "Counts, journal vs index lag, sizes, oldest/newest, per agent.", schema({}))
def memory_stats(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.stats()


@tool("memory_get_full", "One message with its capped content and tool result restored in full from the journal; or a "
      "document chunk (chk_…) of a vault the agent may read.",
      schema({"id": {"type": "string", "description": "a message id (evt_…), the short id a recall block line shows for "
                                                   "it (its last 10 characters), or a document chunk's id (chk_…)"},
              "agent": {"type": "string", "description": "the agent reading (a document chunk: its vault's readers)"},
              "offset": {"type": "integer", "minimum": 0, "maximum": 1 << 40,
                         "description": "read the content and tool result from this character on (paging a long output)"},
              "length": {"type": "integer", "minimum": 1, "maximum": 1 << 40,
                         "description": "at most this many characters of each (a harness caps a tool's answer: 25,000 tokens "
                                        "in Claude Code); the answer says the next offset while more is left"}},
             required=["id"]))
def memory_get_full(memory: Memory, args: dict[str, Any]) -> Any:
    full = memory.get_full(args["id"], agent=args.get("agent"), owner=False)
    out = {k: v for k, v in full.items() if k not in ("journal_path", "journal_offset", "event_key")}  # (no server path to a model)
    if "offset" not in args and "length" not in args:
        return out
    start = args.get("offset", 0)
    end = start + args["length"] if "length" in args else None
    longest = 0
    for name in ("content", "tool_result"):
        if isinstance(out.get(name), str):
            longest = max(longest, len(out[name]))
            out[f"{name}_chars"] = len(out[name])
            out[name] = out[name][start:end]
    out["next_offset"] = end if end is not None and end < longest else None
    return out


@tool("memory_append", "Journal one message durably and index it. A retried append collapses: the same message "
      "from the same speaker (metadata.speaker), right after itself or with the same created_at; "
      "said again after other turns, or by someone else, it is stored. Give event_key for "
      "your own idempotency (a message of other words under a key already used is refused).",
      schema({"session": SESSION, **MESSAGE, **SESSION_ATTRS}, required=["session", "role"]),
      write=True)
def memory_append(memory: Memory, args: dict[str, Any]) -> Any:
    rest = {k: v for k, v in args.items() if k not in ("session", "role", "content")}
    return memory.append(args["session"], args["role"], args.get("content") or "", **rest)


@tool("memory_ingest_session", "Bulk-write a transcript into one session as one group commit; a retried ingest skips "
      "what is already stored.", schema({
          "session": SESSION, "messages": {"type": "array", "description": "the transcript's messages, oldest first", "items": schema({**MESSAGE, "type": {"type": "string", "pattern": ROLE_RE.pattern, "description": "event type (default message)"}}, required=["role"])},
          "start": {"type": "integer", "minimum": 0, "description": "position of the first message in the whole "
                    "transcript, for a transcript sent in several calls (keys stay unique across the calls)"},
          **SESSION_ATTRS,
      }, required=["session", "messages"]), write=True)
def memory_ingest_session(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.ingest_session(args["session"], args["messages"], start=args.get("start", 0), **pick(args, SESSION_ATTRS))
