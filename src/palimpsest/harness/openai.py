"""OpenAI chat messages (`{role, content, name?, tool_calls?, tool_call_id?}`) as Palimpsest messages.

A message with tool calls gives its text (if any), then one `assistant` message per call
(`tool_name`, `tool_args` parsed from the JSON string, `metadata.tool_call_id`); a `tool`
(or legacy `function`) message becomes a tool-result message whose `tool_name` is found
by pairing its `tool_call_id` with the call.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidInput
from ..records import content_text
from .common import parse_args


def openai_message(rec: dict[str, Any], tools: dict[str, str]) -> list[dict[str, Any]]:
    """The Palimpsest messages of one OpenAI chat message. `tools` pairs call ids to names."""
    role = rec.get("role")
    meta = {k: rec[k] for k in ("name", "tool_call_id") if rec.get(k) is not None}
    base = {"created_at": rec.get("created_at"), "metadata": meta}
    calls = rec.get("tool_calls") or ([{"id": None, "function": rec["function_call"]}] if isinstance(rec.get("function_call"), dict) else [])
    text = content_text(rec.get("content"))
    if role in ("tool", "function"):
        name = tools.get(str(rec.get("tool_call_id"))) or rec.get("name")
        return [{**base, "role": "tool", "tool_name": name, "tool_result": text}]
    out = [{**base, "role": role, "content": text}] if text or not calls else []
    if not isinstance(calls, list):
        raise InvalidInput("tool_calls must be a list")
    for call in calls:
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise InvalidInput("each tool call needs function.name")
        call_id, name = call.get("id"), fn["name"]
        if call_id is not None:
            tools[str(call_id)] = name
        out.append({**base, "role": role, "content": "", "tool_name": name, "tool_args": parse_args(fn.get("arguments")),
                    "metadata": {**meta, "tool_call_id": call_id}})
    return out
