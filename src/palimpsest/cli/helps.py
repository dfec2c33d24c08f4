"""The help of the CLI's recurring arguments, written once, and the formatter that adds
each option's default.

Many commands take the same argument — a session, a vault, a fact id, `--limit`,
`--source` — and each used to say nothing about it. `fill(parser)` gives every argument
without its own help the wording here: first for the command (`"facts write:kind"`, the
last words of the command's name and the argument's dest), then for the dest alone. An
argument neither its command nor this table describes is a defect that tests/test_cli.py
finds (`undescribed`). `Formatter` appends `(default: X)` to an option whose default
means something — not None, False, an empty list or a help that already says "default".
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

FACT_ID = "fact id (fct_…)"
SOURCE = "where it was heard: event:evt_…, document:PATH or person:NAME"

BY_DEST: dict[str, str] = {
    "session": "session id", "vault": "vault name", "limit": "most results to show", "offset": "results to skip (paging)",
    "source": SOURCE, "agent": "agent name (claude-code, codex, …)", "channel": "channel name",
    "role": "user, assistant, system, tool (or any short name)", "query": "words to look for", "question": "the question, in words",
    "kind": "fact kind: correction, preference, fact, decision, task, …", "id": FACT_ID, "text": "the statement, one sentence",
    "other": "the fact it cannot hold with (fct_…)", "symbol": "qualified name or any dotted tail of it: save, Store.save",
    "repo": "repository name or root path", "depth": "hops to follow", "entity": "only facts about this entity",
    "entities": "an entity it is about (repeatable)", "salience": "how much it matters, 0–1",
    "confidence": "how sure, 0–1", "valid_from": "when it started to hold in the world (ISO 8601; default now)",
    "valid_at": "as it held in the world at this ISO 8601 time", "known_at": "as the system knew it at this ISO 8601 time",
    "reason": "why it was wrong", "description": "one line: what it is for", "tool_name": "the tool called (a tool call)",
    "tool_result": "the tool's output (a tool call)", "event_key": "idempotency key (default: a hash of the content)",
    "created_at": "ISO 8601 time of the message (default now)", "newest_first": "newest first instead of oldest first",
    "history": "with its whole supersession chain", "no_llm": "the deterministic fallback even with an LLM configured",
}
BY_COMMAND: dict[str, str] = {
    "append:kind": "normal, or instant: scratch, never distilled, swept after 24 h idle",
    "ingest:kind": "normal, or instant: scratch, never distilled, swept after 24 h idle",
    "search:mode": "ranked (hybrid: keywords, meaning, recency, importance), substring or regex",
    "get-full:id": "message id (evt_…, or the short id a recall block shows)", "import:files": "transcript files or folders (walked for .jsonl / .json)",
    "settle:new": "the newer fact of the review (fct_…)", "settle:existing": "the fact it was found close to (fct_…)",
    "settle:decision": "same: merge the new fact into the existing one; keep: keep both",
    "snapshot:path": "snapshot file (default <home>/facts.jsonl)", "init:name": "vault name",
    "attach:name": "vault name", "detach:name": "vault name", "access:name": "vault name",
    "access:public": "every agent may read it", "access:restricted": "only the agents named with --reader may read it",
    "docs:status": "changed, deleted and never-indexed files instead of the indexed documents",
    "write-document:text": "the document's text (or --file)", "skill:name": "skill name", "write-skill:name": "skill name",
    "write-skill:body": "the procedure, as Markdown (or --file)", "find:name": "symbol name or part of it (fuzzy)",
    "outline:file": "path relative to the repository root", "expand:id": "summary id (sum_…)",
    "mine:force": "mine it again at the same pipeline version",
}


class Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows `(default: X)` only where X tells something."""

    def _get_help_string(self, action: argparse.Action) -> str:
        help_text = action.help or ""
        default = action.default
        if "default" in help_text or default in (None, False, [], argparse.SUPPRESS) or not action.option_strings:
            return help_text
        return f"{help_text} (default: %(default)s)"


def arguments(parser: argparse.ArgumentParser) -> Iterator[tuple[argparse.ArgumentParser, argparse.Action]]:
    """Every (parser, argument) of the tree below `parser`, sub-commands included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # (aliases share a parser)
                yield from arguments(sub)
        elif not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            yield parser, action


def fill(parser: argparse.ArgumentParser) -> None:
    """Every argument without help gets the table's wording; every parser the `Formatter`."""
    for owner, action in arguments(parser):
        owner.formatter_class = Formatter
        if not action.help:
            command = owner.prog.split()[-1]
            action.help = BY_COMMAND.get(f"{command}:{action.dest}") or BY_DEST.get(action.dest)
