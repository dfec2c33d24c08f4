"""OpenCode sessions, read from OpenCode's own SQLite database, as events.

OpenCode (1.2 and later) keeps every session in one SQLite file,
`$XDG_DATA_HOME/opencode/opencode.db` (`~/.local/share/opencode/opencode.db`): tables
`session` (`id`, `directory`, `title`, `version`, `time_created`, …), `message` (`id`,
`session_id`, `time_created`, `data`: JSON with `role`, `modelID`, …) and `part` (`id`,
`message_id`, `session_id`, `time_created`, `time_updated`, `data`: JSON with `type`, …).
It is OpenCode's internal store, not an interface: it is opened read-only, only these
columns are read, and what is not understood is kept as it is.

The database is never copied: every event records where it came from as a pointer —
`metadata.source_path` (the database file), `source_table` `part` and `source_id` (the
part's id) — and the session's settings get `opencode_db`, so `get_full`'s journal and
the original stay two views of one conversation, not two copies of a file.

Each part becomes, with its message's role and its own time (milliseconds since the epoch):
- `text` → a message, key `oc:<part id>`; `reasoning` → an `assistant` message marked
  `thinking`, importance 0.3;
- `tool` (`tool`, `callID`, `state`: `input`, `output` / `error`) → the call (an `assistant`
  message with `tool_name`, `tool_args`; key `oc:<part id>:call`) and, once the state holds
  an output or an error, its result (a `tool` message; key `oc:<part id>:result`);
- anything else (`step-start`, `step-finish`, `file`, `patch`, `snapshot`, …) → a kept
  record (`source_record`, never indexed).
Parts are read in order of `time_updated` past a cursor (`read(db, session, after)`), so
each capture reads only what changed since the last one; the keys make a repeat harmless.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .common import REASONING_IMPORTANCE, source_record

FORMAT = "opencode"


def default_db(env: dict[str, str]) -> Path:
    data = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or "~").expanduser() / ".local" / "share")
    return Path(data).expanduser() / "opencode" / "opencode.db"


def find_db(env: dict[str, str], session: str) -> Path:
    """The database that holds `session`: OpenCode's default one, else another release
    channel's beside it (`opencode-beta.db`, `opencode-dev.db`, …, newest first) that has
    the session; the default path when none does (the caller reports it missing)."""
    default = default_db(env)
    others = sorted((p for p in default.parent.glob("opencode*.db") if p != default and p.is_file()),
                    key=lambda p: p.stat().st_mtime, reverse=True) if default.parent.is_dir() else []
    for db in [default, *others] if default.is_file() else others:
        if _holds(db, session):
            return db
    return default


def _holds(db: Path, session: str) -> bool:
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT 1 FROM session WHERE id = ?", (session,)).fetchone() is not None
        finally:
            conn.close()
    except sqlite3.Error:  # not OpenCode's, or locked past the timeout: not this one
        return False


def read(db: Path, session: str, after: int = 0) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
    """(events of the session's parts updated after `after`, the new cursor, the session's
    settings). The database is opened read-only (`mode=ro`): OpenCode owns it."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
    try:
        head = conn.execute("SELECT directory, title, version FROM session WHERE id = ?", (session,)).fetchone()
        rows = conn.execute(
            "SELECT p.id, p.time_created, p.time_updated, p.data, m.data FROM part p JOIN message m ON m.id = p.message_id "
            "WHERE p.session_id = ? AND p.time_updated > ? ORDER BY p.time_updated, p.id", (session, after)).fetchall()
    finally:
        conn.close()
    settings: dict[str, Any] = {"opencode_db": str(db)}
    if head:
        settings.update({k: v for k, v in zip(("cwd", "title", "version"), head) if isinstance(v, str) and v})
    events: list[dict[str, Any]] = []
    cursor = after
    for part_id, created, updated, part_data, message_data in rows:
        cursor = max(cursor, int(updated or 0))
        events.extend(convert(_json(part_data), _json(message_data), str(part_id), created, str(db)))
    return events, cursor, settings


def convert(part: dict[str, Any], message: dict[str, Any], part_id: str, created: Any, db: str) -> list[dict[str, Any]]:
    """The events of one part."""
    ts = _iso(created)
    source = {"source_format": FORMAT, "source_path": db, "source_table": "part", "source_id": part_id}
    role = str(message["role"]) if message.get("role") in ("user", "assistant") else "assistant"
    meta = {**source, **({"model": message["modelID"]} if isinstance(message.get("modelID"), str) else {})}
    kind = part.get("type")
    if kind in ("text", "reasoning") and isinstance(part.get("text"), str) and part["text"].strip():
        extra = {"thinking": True, "importance": REASONING_IMPORTANCE} if kind == "reasoning" else {}
        return [_message(role if kind == "text" else "assistant", part["text"], {**meta, **extra}, ts, f"oc:{part_id}")]
    if kind == "tool" and isinstance(part.get("tool"), str):
        state: dict[str, Any] = part["state"] if isinstance(part.get("state"), dict) else {}
        tool_meta = {**meta, "tool_use_id": part.get("callID")}
        out = [{**_message("assistant", "", tool_meta, ts, f"oc:{part_id}:call"), "tool_name": part["tool"], "tool_args": state.get("input")}]
        result = state.get("output") if state.get("output") is not None else state.get("error")
        if result is not None:
            error = {"is_error": True} if state.get("error") is not None and state.get("output") is None else {}
            out.append({**_message("tool", "", {**tool_meta, **error}, ts, f"oc:{part_id}:result"), "tool_name": part["tool"],
                        "tool_result": result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)})
        return out
    return [source_record(str(kind), part, source, ts, f"oc:{part_id}")]


def _message(role: str, content: str, meta: dict[str, Any], ts: str | None, key: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": content, "created_at": ts, "metadata": meta, "event_key": key}


def _json(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text) if isinstance(text, (str, bytes)) else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _iso(ms: Any) -> str | None:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
