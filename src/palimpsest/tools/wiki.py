"""The topic wiki as tools (read-only): list pages, show one with its sources, read its
history, search pages (each hit expanded to its best statements with their source ids)."""

from __future__ import annotations

from typing import Any

from ..memory import Memory
from ..wiki import Admit
from .registry import FILTERS, INTEGER, STRING, described, pick, schema, tool

TOPIC: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 500, "description": "a topic id (wtp_…), title or alias, or a statement id (wst_…) for its page"}
KIND: dict[str, Any] = {"enum": ["person", "project", "system", "subject", "topic"], "description": "only pages of this kind"}
# a bot's one user: only what was said in sessions of this agent, channel or tag (a page gathers what everyone said of it)
SCOPE: dict[str, Any] = {k: FILTERS[k] for k in ("agent", "channel", "tag")}


def _admit(memory: Memory, args: dict[str, Any]) -> Admit | None:
    scope = pick(args, SCOPE)
    if not scope:
        return None
    filters = memory.finder.filters(**scope)
    return lambda ids: memory.store.admitted(ids, filters)


@tool("memory_wiki_list", "Topic pages (people, projects, systems, recurring subjects) by title, with statement counts.",
      schema({"kind": KIND, "query": described(STRING, "only pages whose title or alias contains this"),
              "limit": {**INTEGER, "minimum": 1, "maximum": 1000, "description": "most pages to return (default 100)"},
              "offset": {**INTEGER, "minimum": 0, "maximum": 1_000_000_000, "description": "pages to skip (paging)"}, **SCOPE}))
def memory_wiki_list(memory: Memory, args: dict[str, Any]) -> Any:
    return {"topics": memory.wiki.list(kind=args.get("kind"), query=args.get("query"), limit=args.get("limit", 100),
                                       offset=args.get("offset", 0), admit=_admit(memory, args))}


@tool("memory_wiki_show", "One topic page: what is known, what is disputed, what no longer holds; every statement "
      "with the summary and message ids it came from, and the page as Markdown.", schema({"topic": TOPIC, **SCOPE}, required=["topic"]))
def memory_wiki_show(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.wiki.show(args["topic"], admit=_admit(memory, args))


@tool("memory_wiki_history", "A topic page's patches, oldest first: each version's operations and the leaf summary it came from.",
      schema({"topic": TOPIC}, required=["topic"]))
def memory_wiki_history(memory: Memory, args: dict[str, Any]) -> Any:
    return {"patches": memory.wiki.history(args["topic"])}


@tool("memory_wiki_search", "Topic pages matching a query, best first, each with its best statements and their source ids.",
      schema({"query": {"type": "string", "minLength": 1, "description": "what to look for, in words"},
              "limit": {**INTEGER, "minimum": 1, "maximum": 100, "description": "most pages to return (default 10)"}, **SCOPE},
      required=["query"]))
def memory_wiki_search(memory: Memory, args: dict[str, Any]) -> Any:
    return {"hits": memory.wiki.search(args["query"], limit=args.get("limit", 10), admit=_admit(memory, args))}
