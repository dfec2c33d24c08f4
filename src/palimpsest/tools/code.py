"""The code graph's tools for HTTP and MCP.

All are read tools; indexing stays a CLI / library operation (it reads the local disk of
the server). Each opens the code graph of the memory's home (`code_db` setting) for one call.
"""

from __future__ import annotations

from typing import Any

from ..code.graph import CodeGraph, default_path
from ..errors import PalimpsestError
from ..memory import Memory
from .registry import BOOLEAN, INTEGER, STRING, described, schema, tool

REPO: dict[str, Any] = {"type": "string", "description": "repository name (a project: tag value) or root path; "
                        "default: the only one indexed"}  # fmt: skip
SYMBOL: dict[str, Any] = {"type": "string", "description": "qualified name or any dotted tail of it: save, Store.save, Point::new"}
LIMIT: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": 1000, "description": "most results to return"}


def _graph(memory: Memory) -> CodeGraph:
    return CodeGraph(settings=memory.settings)


def indexed(memory: Memory) -> bool:
    """Whether the code graph holds a repository: until one is indexed, the code tools answer
    only "no repository is indexed yet", and the tool list a model reads leaves them out."""
    if not default_path(memory.settings).exists():
        return False
    try:
        graph = _graph(memory)
    except PalimpsestError:  # a graph locked or damaged: the list still lists (its tools then say why)
        return True
    try:
        return bool(graph.repos())
    except PalimpsestError:
        return True
    finally:
        graph.close()


@tool("code_find", "Find symbols (functions, classes, methods, types) of an indexed repository by name, fuzzily.",
      schema({"name": described(STRING, "the name or part of it (fuzzy)"), "repo": REPO,
              "kind": described(STRING, "only symbols of this kind: function, class, method, type, …"),
              "limit": described(LIMIT, "most symbols to return (default 20)")}, required=["name"]))  # fmt: skip
def code_find(memory: Memory, args: dict[str, Any]) -> Any:
    with _graph(memory) as g:
        found = g.find(args["name"], repo=args.get("repo"), kind=args.get("kind"), limit=args.get("limit", 20))
    return {"symbols": [s.to_dict() for s in found]}


@tool("code_def", "Where a symbol is defined: file, lines, signature, first docstring line.",
      schema({"symbol": SYMBOL, "repo": REPO}, required=["symbol"]))  # fmt: skip
def code_def(memory: Memory, args: dict[str, Any]) -> Any:
    with _graph(memory) as g:
        return {"symbols": [s.to_dict() for s in g.definition(args["symbol"], repo=args.get("repo"))]}


@tool("code_callers", "Call sites of a symbol. Unresolved calls that match only by name are flagged resolved=false.",
      schema({"symbol": SYMBOL, "repo": REPO, "resolved_only": described(BOOLEAN, "leave out calls matched by name only (default false)"),
              "limit": described(LIMIT, "most call sites to return (default 200)")}, required=["symbol"]))  # fmt: skip
def code_callers(memory: Memory, args: dict[str, Any]) -> Any:
    with _graph(memory) as g:
        edges = g.callers(args["symbol"], repo=args.get("repo"), unresolved=not args.get("resolved_only", False),
                          limit=args.get("limit", 200))  # fmt: skip
    return {"edges": [e.to_dict() for e in edges]}


@tool("code_callees", "What a symbol calls, in source order; calls that could not be resolved keep their name.",
      schema({"symbol": SYMBOL, "repo": REPO}, required=["symbol"]))  # fmt: skip
def code_callees(memory: Memory, args: dict[str, Any]) -> Any:
    with _graph(memory) as g:
        return {"edges": [e.to_dict() for e in g.callees(args["symbol"], repo=args.get("repo"))]}


@tool("code_impact", "Who is affected if a symbol changes: callers and subclasses, transitively, up to depth hops.",
      schema({"symbol": SYMBOL, "repo": REPO, "depth": {**INTEGER, "minimum": 1, "maximum": 10, "description": "hops to follow (default 3)"}}, required=["symbol"]))  # fmt: skip
def code_impact(memory: Memory, args: dict[str, Any]) -> Any:
    with _graph(memory) as g:
        return {"impact": [i.to_dict() for i in g.impact(args["symbol"], repo=args.get("repo"), depth=args.get("depth", 3))]}


@tool("code_outline", "The symbols of one file of an indexed repository, in order, with nesting depth.",
      schema({"file": {"type": "string", "description": "path relative to the repository root"}, "repo": REPO}, required=["file"]))  # fmt: skip
def code_outline(memory: Memory, args: dict[str, Any]) -> Any:
    with _graph(memory) as g:
        return {"outline": [i.to_dict() for i in g.outline(args["file"], repo=args.get("repo"))]}


@tool("code_repos", "The repositories in the code graph, with their roots and last index time.", schema({}))
def code_repos(memory: Memory, args: dict[str, Any]) -> Any:
    with _graph(memory) as g:
        return {"repos": [r.to_dict() for r in g.repos()]}
