"""The tool surface, written once: what HTTP (`POST /api/memory/tool/<name>`) and MCP expose.

A tool is a name, a description, a JSON schema of its arguments, whether it writes, and a
handler `handler(memory, args) -> JSON-able`. The adapters never call `Memory` themselves:
they list `available(enable_write)` and run `call(memory, name, args, enable_write=...)`,
which validates the arguments against the schema (a failure is `InvalidInput`, naming the
field) before the handler sees them. Write tools exist only when writes are enabled
(`PALIMPSEST_ENABLE_WRITE=1`); without it they are unknown (`NotFound`, HTTP 404), so a
model that was never offered them cannot reach them by name either.

Adding a tool is one declaration, in this file or in the module that owns the operation:

    from palimpsest.tools import tool, schema, STRING

    @tool("memory_tags", "List the tags of a session.", schema({"session": STRING}, required=["session"]))
    def memory_tags(memory, args):
        return memory.tags.list(args["session"])

A tool declared in another module is registered when that module is imported; add the
module's name to `TOOL_MODULES` below so the registry imports it. Pass `write=True` for
anything that changes state. Handlers return plain JSON values (dicts, lists, strings,
numbers); objects with `to_dict()` are converted by `call`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, validators

from .errors import InvalidInput, NotFound, WriteDisabled
from .memory import MAX_PAGE, Memory
from .records import ROLE_RE, SESSION_ID_RE

Handler = Callable[[Memory, dict[str, Any]], Any]

# Modules that declare tools with `@tool`; imported once, the first time the registry is read.
TOOL_MODULES: list[str] = ["palimpsest.code.tools", "palimpsest.summary_tools", "palimpsest.vaults.tools", "palimpsest.recall_tools", "palimpsest.facts_tools", "palimpsest.wiki_tools"]

STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
OBJECT: dict[str, Any] = {"type": "object"}
ANY: dict[str, Any] = {}
SESSION: dict[str, Any] = {"type": "string", "pattern": SESSION_ID_RE.pattern, "description": "session id: letters, digits and ._:@+=-"}
ROLE: dict[str, Any] = {"type": "string", "pattern": ROLE_RE.pattern, "description": "user, assistant, system, tool, …"}
LIMIT: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": MAX_PAGE}
# bounded: SQLite integers are 64-bit, and a larger offset is an overflow, not an empty page
OFFSET: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": 1_000_000_000}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    write: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema, "write": self.write}


# JSON Schema counts 49.0 as an integer; handlers pass limits to SQL, where it is not one.
_Validator = validators.extend(Draft202012Validator, type_checker=Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda checker, value: isinstance(value, int) and not isinstance(value, bool)))

_REGISTRY: dict[str, Tool] = {}
_VALIDATORS: dict[str, Any] = {}
_loaded = False


def schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """The argument schema of a tool: an object with these properties and no others."""
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = list(required)
    return out


def tool(name: str, description: str, input_schema: dict[str, Any], *, write: bool = False) -> Callable[[Handler], Handler]:
    """Register `handler` as a tool. Names are unique; declaring one twice is a bug."""

    def register(handler: Handler) -> Handler:
        if name in _REGISTRY:
            raise ValueError(f"tool {name!r} is declared twice")
        Draft202012Validator.check_schema(input_schema)
        _REGISTRY[name] = Tool(name, description.strip(), input_schema, handler, write)
        _VALIDATORS[name] = _Validator(input_schema)
        return handler

    return register


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in TOOL_MODULES:
            importlib.import_module(module)


def available(enable_write: bool) -> list[Tool]:
    """The tools a caller may see: the read tools, plus the write tools when writes are on."""
    _load()
    return [t for t in _REGISTRY.values() if enable_write or not t.write]


def get(name: str, enable_write: bool) -> Tool:
    _load()
    found = _REGISTRY.get(name) if isinstance(name, str) else None
    if found is None:
        raise NotFound(f"no tool named {str(name)[:80]!r}")
    if found.write and not enable_write:
        raise NotFound(f"{name} is a write tool and writes are off (set PALIMPSEST_ENABLE_WRITE=1 on the server)")
    return found


def validate(name: str, args: Any) -> dict[str, Any]:
    """`args` checked against the tool's schema; the first error names the field."""
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise InvalidInput(f"{name}: arguments must be a JSON object, got {type(args).__name__}")
    errors = sorted(_VALIDATORS[name].iter_errors(args), key=lambda e: (len(e.path), e.message))
    if errors:
        err = errors[0]
        where = ".".join(str(p) for p in err.absolute_path) or "arguments"
        raise InvalidInput(f"{name}: {where}: {err.message[:300]}")
    _check_unicode(name, args)
    return args


def _check_unicode(name: str, args: dict[str, Any]) -> None:
    """JSON may carry lone surrogates (`"\\ud800"`); no handler should meet one."""
    stack: list[tuple[str, Any]] = [("", args)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
            stack.extend((where or "arguments", k) for k in value)
        elif isinstance(value, list):
            stack.extend((f"{where}.{i}", v) for i, v in enumerate(value))
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise InvalidInput(f"{name}: {where}: holds a lone surrogate at position {exc.start}; send valid Unicode") from None


def call(memory: Memory, name: str, args: Any, *, enable_write: bool) -> Any:
    """Run one tool: look it up, validate its arguments, call its handler."""
    found = get(name, enable_write)
    result = found.handler(memory, validate(name, args))
    return result.to_dict() if hasattr(result, "to_dict") else result


# -- the transcript tools ------------------------------------------------------
FILTERS: dict[str, Any] = {
    "session": STRING, "agent": STRING, "channel": STRING, "role": STRING,
    "since": {"type": "string", "description": "ISO 8601 time, inclusive"},
    "until": {"type": "string", "description": "ISO 8601 time, exclusive"},
    "tag": {"type": "string", "description": "key:value: only sessions carrying this accepted tag (on the session or a summary)"},
}
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


def _pick(args: dict[str, Any], keys: dict[str, Any]) -> dict[str, Any]:
    return {k: args[k] for k in keys if k in args}


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
    extra = {k: args[k] for k in ("recipe", "valid_at", "known_at", "synthesize") if k in args}
    return memory.search(args["query"], limit=args.get("limit", 10), mode=args.get("mode", "ranked"), **extra, **_pick(args, FILTERS))


@tool("memory_browse", "List messages chronologically (or newest first), filtered by session, agent, channel, role and "
      "date range, paged.", schema({**FILTERS, "limit": LIMIT, "offset": OFFSET, "newest_first": BOOLEAN}))
def memory_browse(memory: Memory, args: dict[str, Any]) -> Any:
    rows = memory.browse(limit=args.get("limit", 50), offset=args.get("offset", 0), newest_first=args.get("newest_first", False),
                         **_pick(args, FILTERS))
    carried = memory.tags.session_tags([m.session for m in rows])
    return {"messages": [{**m.to_dict(), "session_tags": carried.get(m.session, [])} for m in rows]}


@tool("memory_sessions", "List sessions, most recently active first.",
      schema({"agent": STRING, "channel": STRING, "limit": LIMIT, "offset": OFFSET}))
def memory_sessions(memory: Memory, args: dict[str, Any]) -> Any:
    rows = memory.sessions(limit=args.get("limit", 100), offset=args.get("offset", 0), **_pick(args, {"agent": 1, "channel": 1}))
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
          "session": SESSION, "messages": {"type": "array", "items": schema({**MESSAGE, "type": {"type": "string", "pattern": ROLE_RE.pattern}}, required=["role"])}, **SESSION_ATTRS,
      }, required=["session", "messages"]), write=True)
def memory_ingest_session(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.ingest_session(args["session"], args["messages"], **_pick(args, SESSION_ATTRS))


# -- tags -----------------------------------------------------------------------
TAG_READS = ("list", "pending", "counts", "lookup", "taxonomy")
TAG_WRITES = ("decide", "add", "taxonomy_upsert", "taxonomy_decide", "merge")
TAG_TEXT: dict[str, Any] = {"type": "string", "maxLength": 400, "description": "key:value (a full-width colon is the same)"}


@tool("memory_tags", "Tags (key:value) on sessions and summaries and their review. Reading: list (a session's, a summary's "
      "or all; by state / tag), pending (suggestions to review), counts (per accepted tag: sessions and messages the "
      "filter tag=key:value matches), lookup (sessions by their client key, with tags), taxonomy (the vocabulary). "
      "Writing, only when writes are enabled: decide (accept / reject a tag), add (a person's tag, accepted), "
      "taxonomy_upsert, taxonomy_decide, merge (a value into another; the old one stays an alias).", schema({
          "action": {"type": "string", "enum": [*TAG_READS, *TAG_WRITES]},
          "session": SESSION, "summary": {"type": "string", "maxLength": 200}, "session_key": {"type": "string", "maxLength": 500},
          "tag": TAG_TEXT, "into": TAG_TEXT, "decision": {"type": "string", "enum": ["accept", "reject"]},
          "state": {"type": "string", "enum": ["suggested", "accepted", "rejected"]},
          "key": {"type": "string", "maxLength": 64}, "note": {"type": "string", "maxLength": 2000},
          "description": {"type": "string", "maxLength": 2000}, "limit": LIMIT, "offset": OFFSET,
      }, required=["action"]))
def memory_tags(memory: Memory, args: dict[str, Any]) -> Any:
    action, tags = args["action"], memory.tags
    if action in TAG_WRITES and not memory.settings.enable_write:
        raise WriteDisabled(f"memory_tags {action} changes memory and writes are off (set PALIMPSEST_ENABLE_WRITE=1 on the server)")
    target = _pick(args, {"session": 1, "summary": 1, "session_key": 1})
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


__all__ = ["Tool", "available", "call", "get", "schema", "tool", "validate"]
