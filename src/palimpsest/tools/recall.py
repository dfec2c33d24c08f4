"""Recall as tools: the block before a turn, the working context, the resume briefing."""

from __future__ import annotations

from typing import Any

from ..memory import Memory
from .registry import INTEGER, QUERY, SESSION, TIME, described, schema, tool

BUDGET: dict[str, Any] = {**INTEGER, "minimum": 0, "maximum": 200_000, "description": "token budget of the whole block (default 4000)"}
SCOPE: dict[str, Any] = {
    "tag": {"type": "string", "minLength": 1, "description": "key:value: past messages and facts only from sessions carrying this accepted tag (a fact counts when it was heard in one)"},
    "agent": {"type": "string", "minLength": 1, "description": "past messages and facts only from this agent's sessions"},
    "channel": {"type": "string", "minLength": 1, "description": "past messages and facts only from sessions of this channel"},
    # said to HTTP callers too, who get no default: only a stdio `palimpsest mcp` fills in its folder's repository
    "project": {"type": "string", "minLength": 1, "description": "the repository the turn is in: what was heard only in sessions of "
                "other repositories (their project: tag) stays out; what no repository's session said stays in. \"*\": every "
                "repository's. Left out: every repository's, except through a stdio `palimpsest mcp` started in a repository's "
                "folder, which gives that repository"},
}


def _scope(args: dict[str, Any]) -> dict[str, Any]:
    """The scope a call names, as the library takes it (`project` "*" included: `Recaller.recall` reads it)."""
    return {k: args[k] for k in SCOPE if k in args}


@tool("memory_recall", "The memory a model should see before a turn about `query`: current facts, relevant past messages "
      "and the running session's live tail, ranked, de-duplicated and fitted to a token budget, inside a "
      "<system-reminder> envelope with an id and date on every line. Also returned as structured items.",
      schema({"query": described(QUERY, "the turn's topic: usually the user's message as it is"),
              "session": described(SESSION, "the running session (its live tail is included; its id: letters, digits and ._:@+=-)"),
              "budget": BUDGET, **SCOPE,
              "live_tail": {**INTEGER, "minimum": 0, "maximum": 100,
                            "description": "the session's latest messages to include (default 6); 0 when the harness shows them already"},
              "now": described(TIME, "the time of the turn (default the clock's): past turns end with its day, the live tail at "
                               "it, and facts are those said and valid by the end of that day — a recall as of a past day")},
             required=["query"]))
def memory_recall(memory: Memory, args: dict[str, Any]) -> Any:
    options = {k: args[k] for k in ("live_tail", "now") if k in args}
    return memory.recall(args.get("session"), args["query"], args.get("budget", 4000), **_scope(args), **options)


@tool("memory_context", "The working context of a session for its system prompt: workspace files, the last messages "
      "(old long tool outputs as pointers) and the recall block.",
      schema({"session": SESSION, "query": described(QUERY, "the turn's topic, for the recall block (optional)"),
              "last": {**INTEGER, "minimum": 1, "maximum": 1000, "description": "latest messages to include (default 20)"},
              "budget": BUDGET, **SCOPE},
             required=["session"]))
def memory_context(memory: Memory, args: dict[str, Any]) -> Any:
    # scoped as recall is: a bot's context for one user's session had held another agent's secrets (found by a new user)
    return memory.context(args["session"], args.get("query"), last_n=args.get("last", 20), budget=args.get("budget", 4000),
                          **_scope(args))


@tool("memory_briefing", "What a model needs to resume a session after its context window was cleared.",
      schema({"session": SESSION}, required=["session"]))
def memory_briefing(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.briefing(args["session"])
