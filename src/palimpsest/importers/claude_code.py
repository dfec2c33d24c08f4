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

from ..harness.claude_code import FORMAT
from .base import Plan, plan_harness_file


def plan_claude_code(records: Iterable[tuple[int, Any]], path: str, session: str | None, agent: str | None, fallback_time: str | None) -> Plan:
    return plan_harness_file(FORMAT, "Claude Code", records, path, session, agent, fallback_time, lambda line, rec: b"")
