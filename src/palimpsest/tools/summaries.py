"""Tools over the summary DAG and answer synthesis."""

from __future__ import annotations

from typing import Any

from ..memory import Memory
from .registry import FILTERS, LIMIT, QUERY, described, pick, schema, shown, tool


@tool("memory_summaries", "Search the summaries of old conversation stretches (leaf, branch and root summaries), "
      "best first; expand one with memory_expand.", schema({"query": QUERY, "limit": described(LIMIT, "most summaries to return (default 10)"), **FILTERS},
                                                       required=["query"]))
def memory_summaries(memory: Memory, args: dict[str, Any]) -> Any:
    hits = memory.summaries.search(args["query"], memory.filters(**pick(args, FILTERS)), args.get("limit", 10))
    return {"hits": [h.to_dict() for h in hits]}


@tool("memory_expand", "A summary with its child summaries and the messages it covers.",
      schema({"id": {"type": "string", "description": "a summary id (sum_…)"},
              "limit": described(LIMIT, "most messages to return (default 200)")}, required=["id"]))
def memory_expand(memory: Memory, args: dict[str, Any]) -> Any:
    found = memory.summaries.expand(args["id"], limit=args.get("limit", 200))
    return {"summary": found["summary"].to_dict(), "children": [c.to_dict() for c in found["children"]],
            "messages": [shown(m.to_dict()) for m in found["messages"]]}


@tool("memory_answer", "Search memory and have the LLM answer from the hits only, citing their ids "
      "(needs PALIMPSEST_SYNTHESIZE_ANSWERS=1 and an LLM; otherwise says synthesis is unavailable).",
      schema({"query": QUERY, "limit": described(LIMIT, "most hits to answer from (default 10)"), **FILTERS}, required=["query"]))
def memory_answer(memory: Memory, args: dict[str, Any]) -> Any:
    hits = memory.search(args["query"], limit=args.get("limit", 10), **pick(args, FILTERS)).hits
    return {**memory.toolsynth.answer(args["query"], hits), "hits": [shown(h.to_dict()) for h in hits]}
