"""Claude Code session files (`~/.claude/projects/<project>/<session-uuid>.jsonl`).

One file is one session: its id is the records' `sessionId` (else the file name), agent
`claude-code`, settings `cwd`, `git_branch`, `version`, `source_path`; a `summary`
record gives the title. Each record becomes events through the harness reader
(`palimpsest.harness.claude_code`, where what each record kind becomes is described) —
the reader live capture uses too, so a session captured by the hooks and imported later
is not doubled. Sub-agent files (`agent-*.jsonl`) carry their parent's `sessionId` and so
join the parent session. Importing a file again (or a longer version of it, as the
session goes on) stores only what is new.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..harness.claude_code import FORMAT, convert, looks_like
from ..harness.common import Context
from .base import Plan, file_stem, safe_session_id


def plan_claude_code(records: Iterable[tuple[int, Any]], path: str, session: str | None, agent: str | None, fallback_time: str | None) -> Plan:
    plan = Plan(FORMAT, all_or_nothing=False)
    ctx = Context(path, last_ts=fallback_time)
    messages: list[dict[str, Any]] = []
    known = 0
    for line, rec in records:
        if not isinstance(rec, dict):
            plan.problem(f"line {line}", f"expected an object, got {type(rec).__name__}", line)
            continue
        known += looks_like(rec)
        for part in convert(rec, line, ctx):
            if part["type"] == "source_record":
                plan.skipped[f"kept, not indexed: {part['metadata']['record_type']}"] += 1
            messages.append({**part, "_where": f"line {line}", "_line": line})
    sid = session or safe_session_id(ctx.session_id or file_stem(path))
    sp = plan.session(sid)
    sp.attrs = {"agent": agent or "claude-code", "key": ctx.session_id, "title": ctx.title,
                "settings": {**ctx.settings, "source_path": path}}
    sp.messages = messages
    if not known:  # nothing here is Claude Code's: refuse rather than keep foreign lines as records
        plan.all_or_nothing = True
        plan.problem("file", "no Claude Code record found; is --format right?")
    return plan
