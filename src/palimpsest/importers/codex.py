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

from ..harness.codex import FORMAT, convert, looks_like
from ..harness.common import Context
from .base import Plan, file_stem, safe_session_id


def plan_codex(records: Iterable[tuple[int, Any]], path: str, session: str | None, agent: str | None, fallback_time: str | None,
               data: bytes | None = None) -> Plan:
    """`data`: the file's bytes, to key each line as live capture does (line + hash of its bytes)."""
    plan = Plan(FORMAT, all_or_nothing=False)
    raw_lines = data.split(b"\n") if data is not None else None
    ctx = Context(path, last_ts=fallback_time)
    messages: list[dict[str, Any]] = []
    known = 0
    for line, rec in records:
        if not isinstance(rec, dict):
            plan.problem(f"line {line}", f"expected an object, got {type(rec).__name__}", line)
            continue
        known += looks_like(rec)
        raw = raw_lines[line - 1] + b"\n" if raw_lines is not None else json.dumps(rec).encode()
        for part in convert(rec, line, ctx, raw):
            if part["type"] == "source_record":
                plan.skipped[f"kept, not indexed: {part['metadata']['record_type']}"] += 1
            messages.append({**part, "_where": f"line {line}", "_line": line})
    sid = session or safe_session_id(ctx.session_id or file_stem(path))
    sp = plan.session(sid)
    sp.attrs = {"agent": agent or "codex", "key": ctx.session_id, "settings": {**ctx.settings, "source_path": path}}
    sp.messages = messages
    if not known:  # nothing here is Codex's: refuse rather than keep foreign lines as records
        plan.all_or_nothing = True
        plan.problem("file", "no Codex record found; is --format right?")
    return plan
