"""Capture from OpenCode: the session's new parts, read from OpenCode's database in place.

OpenCode runs no shell hook of Claude Code's kind; its plugins see events such as
`session.idle` (the end of a turn). A plugin — or any script — runs `palimpsest capture
--agent opencode` with `{"session_id": "ses_…", "hook_event_name": "session.idle"}` on
stdin (`opencode_db` names the database when it is not the default
`$XDG_DATA_HOME/opencode/opencode.db` nor another release channel's beside it, such as
`opencode-beta.db`: `harness.opencode.find_db` picks the one holding the session). The database is read where it is, never copied:
its path is recorded as a pointer on every event and in the session's settings
(`harness/opencode.py`). A cursor per database and session (the latest `time_updated`
read) under `<home>/capture-state/` makes each capture read only what changed; it moves
once the batch is posted or spooled, as a transcript cursor does.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..harness import opencode
from .client import CaptureClient, Report, split


def capture(hook: dict[str, Any], head: dict[str, Any], client: CaptureClient, home: Path, env: dict[str, str]) -> Report:
    raw_session = str(hook.get("session_id") or hook.get("sessionID") or "")
    given = hook.get("opencode_db")
    db = Path(str(given)).expanduser() if given else opencode.find_db(env, raw_session)
    if not db.is_file():
        raise InvalidInput(f"no OpenCode database at {db}: pass its path as opencode_db in the hook's JSON")
    state = home / "capture-state" / f"oc-{hashlib.sha256(f'{db.resolve()}|{raw_session}'.encode()).hexdigest()[:24]}.json"
    state.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = os.open(state.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two captures of one session take turns
        after = _cursor(state)
        events, cursor, settings = opencode.read(db, raw_session, after)
        if not events:
            return Report()
        batch = {**{k: v for k, v in head.items() if v is not None}, "agent": "opencode",
                 "settings": {**(head.get("settings") or {}), **settings}, "events": events}
        report = client.send(split(batch))
        tmp = state.with_suffix(".tmp")
        tmp.write_text(json.dumps({"db": str(db), "session": raw_session, "after": cursor}), encoding="utf-8")
        os.replace(tmp, state)  # posted or spooled: either way it is safe on disk
        return report
    finally:
        os.close(lock)


def _cursor(state: Path) -> int:
    try:
        return int(json.loads(state.read_text(encoding="utf-8"))["after"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0
