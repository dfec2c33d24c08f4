"""Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`).

One file is one session: its id is `session_meta.payload.id` (else the file name),
agent `codex`, settings `cwd`, `cli_version`, `originator`, `model` (from the first
`turn_context`), `source_path`. Each line becomes events through the harness reader
(`palimpsest.harness.codex`, where what each record kind becomes is described) — the
reader live capture uses too, keyed by line number and a hash of the line's bytes, so
importing again or after capture stores only what is new.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..harness.codex import FORMAT
from .base import Plan, plan_harness_file


def plan_codex(records: Iterable[tuple[int, Any]], path: str, session: str | None, agent: str | None, fallback_time: str | None,
               data: bytes | None = None, parts: dict[int, list[tuple[Any, bytes]]] | None = None) -> Plan:
    """`data`: the file's bytes, to key each line as live capture does (line + hash of its bytes); `parts`: the
    bytes each record of a line holding several is keyed by (`base.iter_lines`), as capture keys them."""
    lines = data.split(b"\n") if data is not None else None
    held = parts if parts is not None else {}

    def raw_of(line: int, rec: Any) -> bytes:
        if line in held:
            return next(raw for r, raw in held[line] if r is rec)
        return lines[line - 1] + b"\n" if lines is not None else json.dumps(rec).encode()

    return plan_harness_file(FORMAT, "Codex", records, path, session, agent, fallback_time, raw_of)
