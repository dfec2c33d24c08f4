"""Capture: how a harness writes into memory through a Palimpsest server.

- `hooks.py` — a harness hook's JSON (Claude Code, Codex) → batches of events: the
  transcript's new lines read by the harness reader, or what the hook itself carries;
- `notify.py` — a Codex `notify` payload whose rollout is not found: held, not doubled;
- `transcript.py` — a transcript read incrementally: byte cursor and reader context per
  file under `<home>/capture-state/`;
- `client.py` — `CaptureClient` posts batches to `POST /api/capture`, spools what it
  cannot deliver under `<home>/capture-spool/`, replays it, sets refused batches aside;
- `project.py` — the project (and `project:<repo>` tag) of a working folder.

The server side of `POST /api/capture` is `palimpsest.server.capture`.
"""

from __future__ import annotations

from ..harness.project import project_of
from .client import CaptureClient, Report, Spool, split
from .hooks import capture_hook, codex_rollout, hook_events, session_id_of
from .transcript import Transcript

__all__ = ["CaptureClient", "Report", "Spool", "Transcript", "capture_hook", "codex_rollout", "hook_events", "project_of",
           "session_id_of", "split"]
