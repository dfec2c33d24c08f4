"""How a tool is declared: `@tool`, the schema helpers, and the checks a call's arguments pass.

A tool is a name, a description, a JSON schema of its arguments, whether it writes, and a
handler `handler(memory, args) -> JSON-able`. `@tool` only records a declaration under
the module that makes it; nothing is served until the package (`palimpsest.tools`)
collects the modules it names, in its order, into the one list HTTP and MCP serve.
Declaring a tool therefore never depends on who imported what first.

    from .registry import STRING, schema, tool

    @tool("memory_tags", "List the tags of a session.", schema({"session": STRING}, required=["session"]))
    def memory_tags(memory, args):
        return memory.tags.list(args["session"])

Pass `write=True` for a tool that changes memory (served only with writes enabled). A
tool served either way whose some actions write (`memory_tags`) passes `read_only=False`:
MCP clients are told it is not read-only, whatever the server's switch. A write whose
repetition adds something (one more attestation) passes `idempotent=False`. Reads count
as read-only though a returned hit's access count goes up: that is the ranking's own
bookkeeping, not a change a caller asked for. Handlers return plain JSON values
(dicts, lists, strings, numbers); objects with `to_dict()` are converted by `call`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from types import ModuleType
from typing import Any

from jsonschema import Draft202012Validator, validators

from ..errors import EMPTY_QUERY, InvalidInput, blank
from ..memory import MAX_PAGE, Memory
from ..records import ROLE_RE, SESSION_ID_RE

Handler = Callable[[Memory, dict[str, Any]], Any]

STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
OBJECT: dict[str, Any] = {"type": "object"}
ANY: dict[str, Any] = {}
SESSION: dict[str, Any] = {"type": "string", "pattern": SESSION_ID_RE.pattern, "description": "session id: letters, digits and ._:@+=-"}
ROLE: dict[str, Any] = {"type": "string", "pattern": ROLE_RE.pattern, "description": "user, assistant, system, tool, …"}
# every time a tool takes, as the library takes it (`records.parse_time`): a bot's `created_at: 12345` had been refused
TIME: dict[str, Any] = {"type": ["string", "number"], "description": "ISO 8601 time (no zone = UTC) or epoch seconds"}
LIMIT: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "description": "most results to return"}
# bounded: SQLite integers are 64-bit, and a larger offset is an overflow, not an empty page
OFFSET: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": 1_000_000_000, "description": "results to skip (paging)"}
QUERY: dict[str, Any] = {"type": "string", "minLength": 1, "pattern": "\\S", "description": "what to look for, in words (not empty)"}
# the transcript filters of memory.search / memory.browse, shared by the message and summary tools; a scope is never empty
# (a chat bot's `tag=user_tag or ""` had returned every customer's passports from memory_search, as recall refuses it)
_SCOPE: dict[str, Any] = {"type": "string", "minLength": 1, "pattern": "\\S"}
FILTERS: dict[str, Any] = {
    "session": {**_SCOPE, "description": "only this session (its id)"},
    "agent": {**_SCOPE, "description": "only sessions of this agent (claude-code, codex, …)"},
    "channel": {**_SCOPE, "description": "only sessions of this channel"},
    "role": {**_SCOPE, "description": "only messages of this role (user, assistant, tool, …)"},
    "since": {**TIME, "description": "from this time, inclusive: ISO 8601 (no zone = UTC) or epoch seconds"},
    "until": {**TIME, "description": "until this time, exclusive: ISO 8601 (no zone = UTC) or epoch seconds"},
    "tag": {**_SCOPE, "description": "key:value: only sessions carrying this accepted tag (on the session or a summary)"},
}

# How deep a JSON value may nest, on every surface (HTTP bodies, MCP arguments): a
# capture body adds 4 levels around tool_args; json itself stops near 1,000.
MAX_DEPTH = 100

# JSON Schema counts 49.0 as an integer; handlers pass limits to SQL, where it is not one.
_Validator = validators.extend(Draft202012Validator, type_checker=Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda checker, value: isinstance(value, int) and not isinstance(value, bool)))


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    write: bool = False
    read_only: bool = True
    idempotent: bool = True
    validator: Any = field(default=None, repr=False, compare=False)
    reads: tuple[str, ...] = ()  # a tool of reads and writes (`read_only=False`): its `action` values that only read

    def reading(self) -> Tool:
        """The tool as offered while writes are off: its `action` enum without the writes (a
        model was offered `decide`, `add`, `merge` … only to be told writes are off)."""
        if not self.reads:
            return self
        props = dict(self.input_schema["properties"])
        props["action"] = {**props["action"], "enum": list(self.reads), "description": f"one of: {', '.join(self.reads)}"}
        return replace(self, input_schema={**self.input_schema, "properties": props},
                       description=self.description.split(" Writing, ")[0])

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema, "write": self.write,
                "read_only": self.read_only, "idempotent": self.idempotent}


# declarations by module name, in the order each module makes them; read by `collect`
_DECLARED: dict[str, list[Tool]] = {}


def described(base: dict[str, Any], description: str) -> dict[str, Any]:
    """`base` (a schema) with this description: every argument a model sees says what it is for."""
    return {**base, "description": description}


def schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """The argument schema of a tool: an object with these properties and no others."""
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = list(required)
    return out


def tool(name: str, description: str, input_schema: dict[str, Any], *, write: bool = False, read_only: bool | None = None,
         idempotent: bool = True, reads: tuple[str, ...] = ()) -> Callable[[Handler], Handler]:
    """Declare `handler` as a tool of its module; the handler itself is returned unchanged.
    `read_only` defaults to `not write`; a write tool is never read-only."""
    if write and read_only:
        raise ValueError(f"tool {name!r}: a write tool cannot be read-only")

    def declare(handler: Handler) -> Handler:
        Draft202012Validator.check_schema(input_schema)
        found = Tool(name, description.strip(), input_schema, handler, write, not write if read_only is None else read_only,
                     idempotent, _Validator(input_schema), reads)
        _DECLARED.setdefault(handler.__module__, []).append(found)
        return handler

    return declare


def collect(modules: Iterable[ModuleType]) -> dict[str, Tool]:
    """The tools these modules declare, module by module in declaration order. Names are
    unique; a name declared twice is a bug."""
    out: dict[str, Tool] = {}
    for module in modules:
        for found in _DECLARED.get(module.__name__, []):
            if found.name in out:
                raise ValueError(f"tool {found.name!r} is declared twice")
            out[found.name] = found
    return out


SHOWN_CHARS = 2000  # of a message's content or tool result in a listing a tool returns; memory_get_full gives the whole
_INTERNAL = ("event_key", "access_count", "last_accessed_at", "journal_path", "journal_line", "journal_offset", "truncated",
             "full_content_length", "full_tool_result_length")


def shown(message: dict[str, Any]) -> dict[str, Any]:
    """A message as a listing tool returns it to a model: without the index's bookkeeping (the
    journal's path on the server's disk, offsets, access counts, keys) and with a content or
    tool result past `SHOWN_CHARS` cut, saying how long it is and where the rest is (`cut`).
    Sixty captured tool outputs made `memory_browse` answer 854 KB and `memory_expand` 1 MB on
    their defaults (an MCP client's user)."""
    out = {k: v for k, v in message.items() if k not in _INTERNAL}
    cut = {}
    for name in ("content", "tool_result"):
        text = out.get(name)
        if not isinstance(text, str):
            continue
        whole = max(message.get(f"full_{name}_length") or 0, len(text))  # (the index's copy may be capped already)
        if len(text) > SHOWN_CHARS:
            out[name] = text[:SHOWN_CHARS] + " …"
        if whole > min(len(text), SHOWN_CHARS):
            cut[name] = whole
    if out.get("tool_args") is not None:
        args = json.dumps(out["tool_args"], ensure_ascii=False, default=str)
        if len(args) > SHOWN_CHARS:
            out["tool_args"], cut["tool_args"] = args[:SHOWN_CHARS] + " …", len(args)
    if cut:
        out["cut"] = {"chars": cut, "whole": "memory_get_full"}
    return out


def pick(args: dict[str, Any], keys: dict[str, Any]) -> dict[str, Any]:
    """The arguments named by `keys` (a schema's properties) that the caller gave."""
    return {k: args[k] for k in keys if k in args}


def check(found: Tool, args: Any) -> dict[str, Any]:
    """`args` checked against the tool's schema; the first error names the field."""
    name = found.name
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise InvalidInput(f"{name}: arguments must be a JSON object, got {type(args).__name__}")
    if json_depth(args) > MAX_DEPTH:
        raise InvalidInput(f"{name}: arguments nested deeper than {MAX_DEPTH} levels")
    errors = sorted(found.validator.iter_errors(args), key=lambda e: (len(e.path), e.message))
    if errors:
        err = errors[0]
        where = ".".join(str(p) for p in err.absolute_path) or "arguments"
        if err.validator in ("minLength", "pattern") and where == "query":  # "'  ' does not match '\\S'" says nothing to a model
            raise InvalidInput(f"{name}: {EMPTY_QUERY}")
        raise InvalidInput(f"{name}: {where}: {err.message[:300]}")
    if isinstance(args.get("query"), str) and blank(args["query"]):  # (the schema's "\\S" lets a zero-width space through)
        raise InvalidInput(f"{name}: {EMPTY_QUERY}")
    _check_unicode(name, args)
    return args


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value (counted up to just past `MAX_DEPTH`), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if d > MAX_DEPTH:
            break
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((c, d + 1) for c in children if isinstance(c, (dict, list)))
    return deepest


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
