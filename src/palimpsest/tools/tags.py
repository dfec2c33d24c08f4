"""The tags tool: read a session's or summary's tags, the review queue, counts and the
taxonomy; with writes enabled, decide, add, curate the taxonomy and merge values."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidInput, WriteDisabled
from ..memory import Memory
from .registry import LIMIT, OFFSET, SESSION, described, pick, schema, tool

TAG_READS = ("list", "pending", "counts", "lookup", "taxonomy")
TAG_WRITES = ("decide", "add", "taxonomy_upsert", "taxonomy_decide", "merge")
TAG_TEXT: dict[str, Any] = {"type": "string", "maxLength": 400, "description": "key:value (a full-width colon is the same)"}
TEXT: dict[str, Any] = {"type": "string", "maxLength": 2000}


@tool("memory_tags", "Tags (key:value) on sessions and summaries and their review. Reading: list (a session's, a summary's "
      "or all; by state / tag), pending (suggestions to review), counts (per accepted tag: sessions and messages the "
      "filter tag=key:value matches), lookup (sessions by their client key, with tags), taxonomy (the vocabulary). "
      "Writing, only when writes are enabled: decide (accept / reject a tag), add (a person's tag, accepted), "
      "taxonomy_upsert, taxonomy_decide, merge (a value into another; the old one stays an alias).", schema({
          "action": {"type": "string", "enum": [*TAG_READS, *TAG_WRITES],
                     "description": f"reads: {', '.join(TAG_READS)}; writes (writes enabled only): {', '.join(TAG_WRITES)}"},
          "session": described(SESSION, "the session whose tags to list or decide"),
          "summary": {"type": "string", "maxLength": 200, "description": "the summary (sum_…) whose tags to list or decide"},
          "session_key": {"type": "string", "maxLength": 500, "description": "lookup: the client's own key of a session"},
          "tag": TAG_TEXT, "into": described(TAG_TEXT, "merge: the value the tag is merged into (key:value)"),
          "decision": {"type": "string", "enum": ["accept", "reject"], "description": "decide, taxonomy_decide: accept or reject"},
          "state": {"type": "string", "enum": ["suggested", "accepted", "rejected"],
                    "description": "list, taxonomy: only tags in this state; taxonomy_upsert: the value's state"},
          "key": {"type": "string", "maxLength": 64, "description": "counts, taxonomy: only this tag key"},
          "note": described(TEXT, "decide, add: why (kept with the decision)"),
          "description": described(TEXT, "taxonomy_upsert: what the value means"),
          "limit": described(LIMIT, "most tags to return (default 100)"), "offset": OFFSET,
      }, required=["action"]), read_only=False, reads=tuple(TAG_READS))
def memory_tags(memory: Memory, args: dict[str, Any]) -> Any:
    action, tags = args["action"], memory.tags
    if action in TAG_WRITES and not memory.settings.enable_write:
        raise WriteDisabled(f"memory_tags {action} changes memory and writes are off (set PALIMPSEST_ENABLE_WRITE=1 where memory is served: the server's environment, or the MCP client's `env` for `palimpsest mcp`)")
    target = pick(args, {"session": 1, "summary": 1, "session_key": 1})
    page = {"limit": args.get("limit", 100), "offset": args.get("offset", 0)}
    need = {"decide": ("tag", "decision"), "add": ("tag",), "taxonomy_upsert": ("tag",), "taxonomy_decide": ("tag", "decision"),
            "merge": ("tag", "into"), "lookup": ("session_key",)}.get(action, ())
    missing = [k for k in need if k not in args]
    if missing:
        raise InvalidInput(f"memory_tags {action} needs {', '.join(missing)}")
    if action == "list":
        return {"tags": tags.list(**target, state=args.get("state"), tag=args.get("tag"), **page)}
    if action == "pending":
        return {"tags": tags.pending(**page)}
    if action == "counts":
        return tags.counts(args.get("key"))
    if action == "lookup":
        return tags.lookup(args["session_key"])
    if action == "taxonomy":
        return {"taxonomy": tags.taxonomy(args.get("key"), args.get("state"))}
    if action == "decide":
        return tags.decide(args["tag"], args["decision"], note=args.get("note"), **target)
    if action == "add":
        return tags.add(args["tag"], note=args.get("note"), **target)
    if action == "taxonomy_upsert":
        return tags.taxonomy_upsert(args["tag"], description=args.get("description"), state=args.get("state", "accepted"))
    if action == "taxonomy_decide":
        return tags.taxonomy_decide(args["tag"], args["decision"])
    return tags.merge(args["tag"], args["into"])
