"""The tool surface, written once: what HTTP (`POST /api/memory/tool/<name>`) and MCP expose.

The adapters never call `Memory` themselves: they list `available(enable_write)` and run
`call(memory, name, args, enable_write=...)`, which validates the arguments against the
tool's schema (a failure is `InvalidInput`, naming the field) before the handler sees
them. Write tools exist only when writes are enabled (`PALIMPSEST_ENABLE_WRITE=1`);
without it they are unknown (`NotFound`, HTTP 404), so a model that was never offered
them cannot reach them by name either.

Each module of this package declares the tools of one part with `registry.tool`; the
list below is the one place that says which modules serve and in what order, so the
order of the tool list never depends on who imported what first. Adding a tool is one
declaration in the module of its part (a new part: a new module, added to `MODULES`).
"""

from __future__ import annotations

from typing import Any

from ..errors import NotFound
from ..memory import Memory
from . import code, facts, messages, recall, summaries, tags, vaults, wiki
from .registry import Tool, check, collect, schema, tool

# The serving order: the tool list of HTTP and MCP follows it.
MODULES = (messages, tags, code, summaries, vaults, recall, facts, wiki)

_TOOLS: dict[str, Tool] = collect(MODULES)


def available(enable_write: bool, memory: Memory | None = None) -> list[Tool]:
    """The tools a caller may see: the read tools, plus the write tools when writes are on;
    given `memory`, the code tools only once a repository is indexed (seven tools that could
    only say so weighed on every conversation's context: an MCP client's user). A tool left
    out still answers when called by name."""
    shown = [t if enable_write else t.reading() for t in _TOOLS.values() if enable_write or not t.write]
    if memory is not None and not code.indexed(memory):
        shown = [t for t in shown if not t.name.startswith("code_")]
    return shown


def get(name: str, enable_write: bool) -> Tool:
    found = _TOOLS.get(name) if isinstance(name, str) else None
    if found is None:
        raise NotFound(f"no tool named {str(name)[:80]!r}")
    if found.write and not enable_write:
        raise NotFound(f"{name} is a write tool and writes are off (set PALIMPSEST_ENABLE_WRITE=1 where memory is served: the server's environment, or the MCP client's `env` for `palimpsest mcp`)")
    return found


def validate(name: str, args: Any) -> dict[str, Any]:
    """`args` checked against the schema of tool `name`; the first error names the field."""
    return check(_TOOLS[name], args)


def call(memory: Memory, name: str, args: Any, *, enable_write: bool) -> Any:
    """Run one tool: look it up, validate its arguments, call its handler."""
    found = get(name, enable_write)
    result = found.handler(memory, check(found, args))
    return result.to_dict() if hasattr(result, "to_dict") else result


__all__ = ["MODULES", "Tool", "available", "call", "get", "schema", "tool", "validate"]
