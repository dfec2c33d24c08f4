"""Codex CLI rollout records (`~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`) as events.

`response_item` payloads become messages:
- `message` → a message of its role, the text of its `input_text` / `output_text` parts;
  `developer` / `system` messages and user messages that are harness boilerplate
  (`<user_instructions>`, `<environment_context>`, AGENTS.md instructions) get
  `metadata.boilerplate = true` and importance 0.1, so they are journaled and searchable
  but do not crowd out what people said;
- `function_call`, `custom_tool_call`, `local_shell_call`, `web_search_call` → an
  `assistant` message with `tool_name`, `tool_args` (`metadata.call_id`);
- `function_call_output` / `custom_tool_call_output` → a `tool` message, its `tool_name`
  paired by `call_id` (remembered in the `Context`); a shell output Codex wrapped as
  `{"output": …, "metadata": {"exit_code": …}}` is stored as its text, the exit code in
  `metadata.exit_code` (and `is_error` when not 0), and so is one written as text (`Exit
  code: 2`, `Wall time: …`, `Output:` then the output);
- `reasoning` → its readable summary (if any) as an `assistant` message with
  `metadata.thinking = true`, importance 0.3, as every other harness's thinking (recall
  shows it as "assistant (reasoning)"); the encrypted content is journaled as a
  `source_record` (kept, never indexed: ciphertext is not text).
`compacted` (what Codex writes when it compacts a conversation) → its `message`, the summary,
as an `assistant` message with `metadata.compact_summary = true` and importance 0.3 (a
restatement, as Claude Code's compact summary), the whole record journaled beside it (its
`replacement_history` repeats items already stored).
`session_meta`, `turn_context`, `event_msg` and unknown records are journaled as they are
(`source_record`); the context learns the session id and settings (`cwd`, `cli_version`,
`originator`, `model_provider`, `git`, and `model` from the first `turn_context`). The
older format without the `{type, payload}` envelope (a first line `{id, timestamp,
instructions}` then bare items) is read too.

Event keys are `codex:<line>:<hash of the line's bytes>` (and `…:<i>` for a second event
of one line, such as encrypted reasoning): rollout files only grow, so a line keeps its
number, and the importer and live capture, which both read records through `convert`,
give a line the same key. A line holding several records (one lost its newline:
`harness.common.glued`) keys its last by the line's bytes, each before it by its own.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ..records import content_text, text_of
from .common import BOILERPLATE_IMPORTANCE, REASONING_IMPORTANCE, Context, parse_args, source_record, time_or

FORMAT = "codex"
ENVELOPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
ITEM_TYPES = {"message", "function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output",
              "local_shell_call", "web_search_call"}
BOILERPLATE_PREFIXES = ("<user_instructions>", "<environment_context>", "# AGENTS.md instructions", "<permissions instructions>",
                        "<user_shell_command>")
CALLS = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}


def looks_like(rec: Any) -> bool:
    if not isinstance(rec, dict):
        return False
    if rec.get("type") in ENVELOPES and "payload" in rec:
        return True
    return "id" in rec and "timestamp" in rec and "instructions" in rec  # the older first line


def key_of(line: int, raw: bytes) -> str:
    return f"codex:{line}:{hashlib.sha256(raw).hexdigest()[:16]}"


def convert(rec: dict[str, Any], line: int, ctx: Context, raw: bytes = b"") -> list[dict[str, Any]]:
    """The events of one line (`raw`: its bytes with the newline, which key it). The first
    is keyed `codex:<line>:<hash>`, the others `…:<i>`."""
    ts = time_or(rec.get("timestamp"), ctx.last_ts)
    ctx.last_ts = ts
    source = {"source_format": FORMAT, "source_path": ctx.path, "source_line": line}
    key = key_of(line, raw)
    if "payload" in rec and isinstance(rec.get("payload"), dict):
        kind, payload = rec.get("type"), rec["payload"]
    elif rec.get("type") in ITEM_TYPES:
        kind, payload = "response_item", rec
    elif "instructions" in rec and "id" in rec:
        kind, payload = "session_meta", rec
    else:
        kind, payload = str(rec.get("type") or rec.get("record_type") or "unknown"), rec
    kind = str(kind)
    if kind == "session_meta":
        _learn_meta(payload, ctx)
    elif kind == "turn_context" and isinstance(payload.get("model"), str):
        ctx.settings.setdefault("model", payload["model"])
    elif kind == "compacted" and isinstance(payload.get("message"), str) and payload["message"].strip():
        summary = {"type": "message", "role": "assistant", "content": payload["message"], "created_at": ts, "event_key": key,
                   "metadata": {**source, "compact_summary": True, "importance": REASONING_IMPORTANCE}}
        return [summary, source_record(kind, rec, source, ts, f"{key}:1")]
    if kind != "response_item":
        return [source_record(kind, rec, source, ts, key)]
    out = _item(payload, {**source}, ctx)
    if not out:
        out = [source_record(f"response_item:{payload.get('type')}", rec, source, ts, "")]
    for i, m in enumerate(out):
        m.setdefault("type", "message")
        m.update(created_at=ts, event_key=key if i == 0 else f"{key}:{i}")
        if len(out) > 1 and m["type"] == "message":
            m["metadata"]["source_part"] = i
    return out


def _learn_meta(p: dict[str, Any], ctx: Context) -> None:
    if ctx.session_id is None and isinstance(p.get("id"), str):
        ctx.session_id = p["id"]
    for k in ("cwd", "cli_version", "originator", "model_provider"):
        if isinstance(p.get(k), str):
            ctx.settings.setdefault(k, p[k])
    if isinstance(p.get("git"), dict):
        ctx.settings.setdefault("git", p["git"])


def _item(p: dict[str, Any], meta: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
    kind = p.get("type")
    if kind == "message":
        text = content_text(p.get("content"))  # (`"content": 42` had been the user's message '42', found by a Codex user)
        role = p.get("role")
        if not text:
            return []
        if role in ("developer", "system") or text.lstrip().startswith(BOILERPLATE_PREFIXES):
            meta.update(boilerplate=True, importance=BOILERPLATE_IMPORTANCE)
        return [{"role": role, "content": text, "metadata": meta}]
    if kind in CALLS:
        return [_call(p, meta, ctx)]
    if kind in ("function_call_output", "custom_tool_call_output"):
        out = p.get("output")
        cid = p.get("call_id")
        result, ended = _unwrapped(out if isinstance(out, str) else text_of(out))
        return [{"role": "tool", "content": "", "tool_name": ctx.tools.get(str(cid)), "tool_result": result,
                 "metadata": {**meta, "call_id": cid, **ended}}]
    if kind == "reasoning":
        return _reasoning(p, meta)
    return []


_EXIT_SAID = re.compile(r"\AExit code: (-?\d{1,5})\n(?:Wall time: [^\n]*\n)?(?:Total output lines: [^\n]*\n)?Output:\n")


def _unwrapped(result: str) -> tuple[str, dict[str, Any]]:
    """A shell call's output as Codex writes it — a JSON string `{"output": "...", "metadata":
    {"exit_code": 1, …}}` — as its text, with how it ended (`exit_code`, and `is_error` when
    not 0) and the rest of what was said of it (`output_metadata`, or the text form's
    `output_header`: nothing of the line is lost); any other output as it is. Stored wrapped, its newlines were "\\n" (a search for
    "nsrc" matched "\\nsrc") and the exit code was never seen."""
    if (said := _EXIT_SAID.match(result)) is not None:  # "Exit code: 2\nWall time: 1.3 seconds\nOutput:\n…" (exec_command)
        code = int(said.group(1))
        return result[said.end():], {"exit_code": code, **({"is_error": True} if code != 0 else {}), "output_header": said.group(0)}
    if not result.startswith("{") or '"output"' not in result[:200]:
        return result, {}
    try:
        wrapped = json.loads(result)
    except ValueError:
        return result, {}
    if not isinstance(wrapped, dict) or not isinstance(wrapped.get("output"), str):
        return result, {}
    info = wrapped.get("metadata")
    code = info.get("exit_code") if isinstance(info, dict) else None
    if not isinstance(code, int) or isinstance(code, bool):
        return wrapped["output"], {"output_metadata": info} if info is not None else {}
    return wrapped["output"], {"exit_code": code, **({"is_error": True} if code != 0 else {}), "output_metadata": info}


def _call(p: dict[str, Any], meta: dict[str, Any], ctx: Context) -> dict[str, Any]:
    kind = p["type"]
    name = p.get("name") if kind in ("function_call", "custom_tool_call") else kind.removesuffix("_call")
    args = parse_args(p.get("arguments")) if kind == "function_call" else p.get("input") if kind == "custom_tool_call" else p.get("action")
    cid = p.get("call_id") or p.get("id")
    if cid is not None and isinstance(name, str):
        ctx.tools[str(cid)] = name
    return {"role": "assistant", "content": "", "tool_name": name if isinstance(name, str) else kind, "tool_args": args,
            "metadata": {**meta, "call_id": cid}}


def _reasoning(p: dict[str, Any], meta: dict[str, Any]) -> list[dict[str, Any]]:
    texts = [x.get("text") for part in ("summary", "content") for x in (p.get(part) or []) if isinstance(x, dict)]
    text = "\n\n".join(t for t in texts if isinstance(t, str) and t.strip())
    out = []
    if text:
        # `thinking`, the mark recall reads: marked `reasoning`, a summary ("**Reading configs** Comparing 7b.yaml and
        # 1b3.yaml.") sat in 18 of a Codex user's 36 recall blocks as "assistant: …", as if told to the user
        out.append({"role": "assistant", "content": text, "metadata": {**meta, "thinking": True, "importance": REASONING_IMPORTANCE}})
    if p.get("encrypted_content"):
        source = {k: meta[k] for k in ("source_format", "source_path", "source_line")}
        out.append(source_record("reasoning:encrypted", p, source, None, ""))
    return out
