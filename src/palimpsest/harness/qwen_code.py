"""qwen-code transcript records (`~/.qwen/projects/<project>/chats/<session-id>.jsonl`) as events.

qwen-code (a fork of Gemini CLI) records a session as JSONL `ChatRecord`s: `uuid`,
`parentUuid`, `sessionId`, `timestamp`, `type` (`user`, `assistant`, `tool_result`,
`system` with a `subtype`), `cwd`, `version`, `gitBranch`, and `message` — the Gemini API
`Content` sent or received: `{role: "user" | "model", parts: [...]}`; newer versions add
`provenance` and `systemPayload`. Neither FORMATS.md nor the vendor documents it as an
interface; this follows the recording service's own record type (checked against the
published package, @qwen-code/qwen-code 0.15.10 and 0.24.4: `ChatRecordingService`'s
`createBaseRecord` / `recordUserMessage`), and like the other readers keeps whatever it
does not know as it is.

A `user` / `assistant` / `tool_result` record becomes, with its own timestamp (else the
last one seen): its text parts (joined; `thought` parts apart) → one message (`model` is
`assistant`), key `qw:<uuid>`; each other part → one event, key `qw:<uuid>:<part index>`:
- `functionCall` → an `assistant` message with `tool_name`, `tool_args` (`metadata.tool_use_id`);
- `functionResponse` → a `tool` message named after its call (its own `name`, else the
  call remembered by id), the result its `response.output` (else the whole response);
- a `thought` part → an `assistant` message, `metadata.thinking`, importance 0.3;
- the context a `UserPromptSubmit` hook added (a text part wrapped in
  `<qwen:user-prompt-submit-context>`, its `<` and `>` escaped as `&lt;` `&gt;`; the record's
  `systemPayload.hookContext` holds it too) → journaled as it is (`source_record`
  `hook_context`), never indexed: it is not the user's words, and when it is Palimpsest's
  own recall block the escaping hides it from the echo filter (`envelope.without_recall_blocks`).
`system` records (compression checkpoints, telemetry, titles, …) and parts of other kinds
are journaled as they are (`source_record`, never indexed). The context learns the
session's id and settings (`cwd`, `git_branch`, `version`). Importer and capture share
`convert`, so a session captured live and imported later yields the same events.
"""

from __future__ import annotations

import json
from typing import Any

from .common import REASONING_IMPORTANCE, Context, learn_session, source_record, time_or

FORMAT = "qwen-code"
MESSAGE_TYPES = {"user", "assistant", "tool_result"}
HOOK_CONTEXT_OPEN, HOOK_CONTEXT_CLOSE = "<qwen:user-prompt-submit-context>", "</qwen:user-prompt-submit-context>"


def looks_like(rec: Any) -> bool:
    """A ChatRecord: Gemini `parts` in its message, or a type or shape Claude Code never writes
    (`tool_result`; a `system` record without Claude's `userType` / `isSidechain`)."""
    if not isinstance(rec, dict) or "sessionId" not in rec or "uuid" not in rec:
        return False
    message = rec.get("message")
    if isinstance(message, dict) and isinstance(message.get("parts"), list):
        return True
    if rec.get("type") == "tool_result":
        return True
    return rec.get("type") == "system" and "subtype" in rec and "userType" not in rec and "isSidechain" not in rec


def convert(rec: dict[str, Any], line: int, ctx: Context, raw: bytes = b"") -> list[dict[str, Any]]:
    """The events of one record, in order (`raw` is not needed: records carry their uuid)."""
    ts = time_or(rec.get("timestamp"), ctx.last_ts)
    ctx.last_ts = ts
    learn_session(rec, ctx)
    uid = str(rec.get("uuid") or f"line-{line}")
    source = {"source_format": FORMAT, "source_path": ctx.path, "source_line": line}
    message = rec.get("message")
    if rec.get("type") not in MESSAGE_TYPES or not isinstance(message, dict) or not isinstance(message.get("parts"), list):
        kind = f"{rec.get('type')}:{rec['subtype']}" if rec.get("subtype") else str(rec.get("type"))
        return [source_record(kind, rec, source, ts, f"qw:{uid}")]
    meta = {**source, "uuid": rec.get("uuid"), "parent_uuid": rec.get("parentUuid")}
    if rec.get("model"):
        meta["model"] = rec["model"]
    role = "assistant" if message.get("role") == "model" or rec["type"] == "assistant" else "user"
    parts = message["parts"]
    text = "\n".join(p["text"] for p in parts if _plain_text(p))
    out = [{"type": "message", "role": role, "content": text, "created_at": ts, "metadata": meta, "event_key": f"qw:{uid}"}] if text.strip() else []
    for i, part in enumerate(parts):
        if _plain_text(part):
            continue
        kind = "hook_context" if _hook_context(part) else "part"
        event = (None if kind == "hook_context" else _part(part, {**meta, "source_part": i}, ctx)) or source_record(kind, part, source, ts, "")
        event.setdefault("type", "message")
        event.update(created_at=ts, event_key=f"qw:{uid}:{i}")
        out.append(event)
    return out


def _plain_text(part: Any) -> bool:
    return (isinstance(part, dict) and isinstance(part.get("text"), str) and not part.get("thought") and len(part) <= 2
            and not _hook_context(part))


def _hook_context(part: Any) -> bool:
    """The part qwen-code adds with a UserPromptSubmit hook's additionalContext (wrapUserPromptSubmitContext)."""
    text = part.get("text") if isinstance(part, dict) else None
    return isinstance(text, str) and text.strip().startswith(HOOK_CONTEXT_OPEN) and text.strip().endswith(HOOK_CONTEXT_CLOSE)


def _part(part: Any, meta: dict[str, Any], ctx: Context) -> dict[str, Any] | None:
    if not isinstance(part, dict):
        return None
    if part.get("thought") and isinstance(part.get("text"), str) and part["text"].strip():
        return {"role": "assistant", "content": part["text"], "metadata": {**meta, "thinking": True, "importance": REASONING_IMPORTANCE}}
    call = part.get("functionCall")
    if isinstance(call, dict) and isinstance(call.get("name"), str):
        if isinstance(call.get("id"), str):
            ctx.tools[call["id"]] = call["name"]
        return {"role": "assistant", "content": "", "tool_name": call["name"], "tool_args": call.get("args"),
                "metadata": {**meta, "tool_use_id": call.get("id")}}
    answer = part.get("functionResponse")
    if isinstance(answer, dict):
        response = answer.get("response")
        output = response.get("output") if isinstance(response, dict) and "output" in response else response
        result = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        extra = {"tool_use_id": answer.get("id"), **({"is_error": True} if isinstance(response, dict) and response.get("error") else {})}
        name = answer.get("name") if isinstance(answer.get("name"), str) else ctx.tools.get(str(answer.get("id")))
        return {"role": "tool", "content": "", "tool_name": name, "tool_result": result, "metadata": {**meta, **extra}}
    return None
