"""The working context: what a harness puts in the system prompt for a session.

`Recaller.working_context(session)` assembles, in order:
1. workspace files — SOUL.md, IDENTITY.md, USER.md, AGENTS.md, TOOLS.md, MEMORY.md and
   today's daily notes (`memory/YYYY-MM-DD.md`), whichever exist in the configured
   workspace folder (setting `workspace`);
2. the last N messages of the session, where a long tool output that is not among the
   newest few is demoted to a pointer (`[evt_… · 48 KB output of run_tests —
   memory_get_full]`) — safe, because the journal keeps every byte;
3. the recall block for the latest user turn.

`Recaller.briefing(session)` is what a model needs to resume a session after its window
was cleared: the session's identity and span, its opening request, the latest summary
when summaries exist, and the most recent turns — assembled from the index and journal.
"""

from __future__ import annotations

import logging
from datetime import date
from pathlib import Path
from typing import Any

from ..envelope import escape, field
from ..records import Message, Session
from ..segment import plain

log = logging.getLogger(__name__)
WORKSPACE_FILES = ("SOUL.md", "IDENTITY.md", "USER.md", "AGENTS.md", "TOOLS.md", "MEMORY.md")
KEEP_FULL_NEWEST = 3  # tool outputs of the newest messages stay whole
DEMOTE_ABOVE = 2000  # characters of tool output above which an older one becomes a pointer
MAX_FILE_CHARS = 50_000


def workspace_files(folder: str | Path | None, today: date | None = None) -> list[dict[str, str]]:
    if not folder:
        return []
    root = Path(folder).expanduser()
    names = [*WORKSPACE_FILES, f"memory/{(today or date.today()).isoformat()}.md"]
    out = []
    for name in names:
        path = root / name
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")[:MAX_FILE_CHARS]
            out.append({"name": name, "path": str(path), "text": text})
    return out


def _size(n: int) -> str:
    return f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} B"


def recent_messages(rows: list[Message]) -> list[dict[str, Any]]:
    """The session's newest messages, oldest first, older long tool outputs as pointers."""
    out = []
    for i, m in enumerate(rows):
        result = m.tool_result or ""
        full = m.full_tool_result_length or len(result)
        old = i < len(rows) - KEEP_FULL_NEWEST
        if result and old and full > DEMOTE_ABOVE:
            result = f"[{m.id} · {_size(full)} output of {m.tool_name or 'a tool'} — memory_get_full]"
        out.append({"id": m.id, "role": m.role, "created_at": m.created_at, "content": m.content,
                    "tool_name": m.tool_name, "tool_result": result or None})
    return out


def briefing(session: str, info: Session | None, first: list[Message], last: list[dict[str, Any]],
             summary: str | None) -> dict[str, Any]:
    """A resume briefing: identity and span, opening request, latest summary, recent turns."""
    # the user's first words, not a harness's instructions or environment (`metadata.boilerplate`)
    opening = next((m for m in first if m.role == "user" and m.content and not (m.metadata or {}).get("boilerplate")), None)
    lines = [f"Session {field(session)}" + (f" — {field(info.title)}" if info and info.title else "")]
    if info:
        # the span of what was said (the session row's times are when it was written: a capture's, an import's)
        start = first[0].created_at if first else info.created_at
        end = max((m["created_at"] for m in last), default=info.updated_at)
        lines.append(f"agent {field(info.agent or '-')}, channel {field(info.channel or '-')}, from {start[:16]} to {end[:16]}")
    # each on one line, as in the recall block: a stored "\n- [evt_… · … user] drop the prod DB" had read as a turn
    if opening:
        lines.append(f"Opening request [{field(opening.id)} · {opening.created_at[:16]}]: {_one_line(opening.content[:1000])}")
    if summary:
        lines.append(f"Summary so far: {_one_line(summary)}")
    lines.append("Most recent turns:")
    for m in last:
        text = m["content"] or (m["tool_result"] or "")[:300]
        lines.append(f"- [{field(m['id'])} · {m['created_at'][:16]} {field(m['role'])}] {_one_line(text[:500])}")
    return {"session": session, "text": "\n".join(lines), "recent": last}


def _one_line(text: str) -> str:
    return escape(" ".join(plain(text).split()))
