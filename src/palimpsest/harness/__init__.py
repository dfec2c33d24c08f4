"""One reader per harness transcript format, used by both the importers and live capture.

Each format module (`claude_code`, `codex`, `qwen_code`) turns ONE transcript record into events with
`convert(record, line, context, raw)`, or raises `InvalidInput` for a message it cannot
read (its content a number: `records.content_text`), which an import reports by line and
capture skips and counts; `openai` does the same for one chat message. The
importers run a whole file through it; capture runs the new lines of a transcript through
it at each hook call, saving the `Context` beside its byte cursor. Since both paths use
the same function with the same context, a transcript captured live and imported later
yields identical events: same keys, same meaning (thinking indexed at low importance,
tool results named after their call, boilerplate marked, other records kept unindexed).

This package imports nothing above `records` and `errors`: it knows transcripts, not
memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import claude_code, codex, qwen_code
from .common import Context

READERS = {claude_code.FORMAT: claude_code, codex.FORMAT: codex, qwen_code.FORMAT: qwen_code}


def detect(rec: Any) -> str | None:
    """The harness format a record belongs to, or None when it looks like neither."""
    if codex.looks_like(rec):
        return codex.FORMAT
    if qwen_code.looks_like(rec):  # (before Claude Code's: both name a sessionId and a uuid)
        return qwen_code.FORMAT
    if claude_code.looks_like(rec):
        return claude_code.FORMAT
    return None


@dataclass
class Reader:
    """A transcript read record by record whose format is told by its first known record
    (until then records are read as Claude Code's, the default harness)."""

    context: Context
    format: str | None = None

    def read(self, rec: dict[str, Any], line: int, raw: bytes) -> list[dict[str, Any]]:
        self.format = self.format or detect(rec)
        return READERS[self.format or claude_code.FORMAT].convert(rec, line, self.context, raw)


__all__ = ["READERS", "Context", "Reader", "detect"]
