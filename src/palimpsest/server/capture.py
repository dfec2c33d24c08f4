"""The server side of `POST /api/capture`, the canonical harness write path.

`store_batch` takes one batch — events of one session — validates every event first,
then journals the batch as one group commit under the session's lock (the journal's
`flock`) through `Memory.capture`, deduping by `event_key`, and answers per event whether
it was stored or a duplicate. An event without a key gets a content-hash key, so a resent
batch never doubles. The client that sends these batches is `palimpsest.capture`.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidInput, NotFound
from ..ingest.messages import SESSION_FIELDS
from ..memory import Memory
from ..records import ROLE_RE, SESSION_ID_RE, check_session_id

MAX_EVENTS = 10_000

EVENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["role"],
    "properties": {
        "role": {"type": "string", "pattern": ROLE_RE.pattern}, "content": {"type": "string"},
        "type": {"type": "string", "pattern": ROLE_RE.pattern},
        "tool_name": {"type": "string"}, "tool_args": {}, "tool_result": {}, "metadata": {"type": "object"},
        "created_at": {"type": ["string", "number"]}, "event_key": {"type": "string"},  # ISO 8601 or epoch seconds, as append
    },
}
BATCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["session", "events"],
    "properties": {
        "session": {"type": "string", "pattern": SESSION_ID_RE.pattern, "description": "session id: letters, digits and ._:@+=-"},
        "events": {"type": "array", "items": EVENT_SCHEMA, "maxItems": MAX_EVENTS},
        "agent": {"type": "string"}, "channel": {"type": "string"}, "title": {"type": "string"}, "key": {"type": "string"},
        "kind": {"type": "string", "enum": ["normal", "instant"]},
        "settings": {"type": "object", "description": "session settings (cwd, project, tags …)"},
    },
}


WRITES_OFF = ("capture is a write and this server's writes are off (it takes capture with writes off only from "
              "loopback clients, when PALIMPSEST_CAPTURE_LOOPBACK is on): restart it with PALIMPSEST_ENABLE_WRITE=1 "
              "(e.g. `PALIMPSEST_ENABLE_WRITE=1 make run`); the capture client keeps the batches in its spool meanwhile")


def refuse() -> None:
    """The answer of `POST /api/capture` while writes are off: 404, as for the write tools
    (the route is not there), with a message that says what to set."""
    raise NotFound(WRITES_OFF)


def store_batch(memory: Memory, batch: dict[str, Any]) -> dict[str, Any]:
    """Journal one capture batch; nothing is stored unless every event is valid."""
    if not isinstance(batch, dict):
        raise InvalidInput("a capture batch is a JSON object {session, events, …}")
    unknown = set(batch) - {"session", "events", *SESSION_FIELDS}
    if unknown:
        raise InvalidInput(f"unknown fields in capture batch: {sorted(unknown)}")
    session = check_session_id(batch.get("session"))
    events = batch.get("events")
    if not isinstance(events, list):
        raise InvalidInput("events must be a list")
    if len(events) > MAX_EVENTS:
        raise InvalidInput(f"at most {MAX_EVENTS} events per batch")
    attrs = {k: batch[k] for k in SESSION_FIELDS if batch.get(k) is not None}
    result = memory.capture(session, events, **attrs)
    rows = [{"id": e.id, "event_key": e.event_key, "status": "stored" if stored else "duplicate"} for e, stored in result["events"]]
    return {
        "session": session,
        "stored": sum(1 for r in rows if r["status"] == "stored"),
        "duplicates": sum(1 for r in rows if r["status"] == "duplicate"),
        "events": rows,
        "indexed": result["indexed"],
    }
