"""OpenAI chat messages (`{role, content, name?, tool_calls?, tool_call_id?}`) as Palimpsest messages.

A message with tool calls gives its text (if any), then one `assistant` message per call
(`tool_name`, `tool_args` parsed from the JSON string, `metadata.tool_call_id`); a `tool`
(or legacy `function`) message becomes a tool-result message whose `tool_name` is found
by pairing its `tool_call_id` with the call.

A message's time is the first of `TIME_KEYS` it carries: OpenAI's own objects say `created_at`
(Assistants and Responses messages) or `created` (a chat completion), ChatGPT's export
`create_time`, and the logs people keep `timestamp`, `time` or `date`; ISO 8601, epoch
seconds or epoch milliseconds.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidInput
from ..records import content_text
from .common import parse_args

TIME_KEYS = ("created_at", "created", "create_time", "timestamp", "time", "date")
LAST_SECOND = 253_402_300_799  # 9999-12-31T23:59:59Z: a larger epoch number is no time in seconds, so it is milliseconds


def message_time(rec: dict[str, Any]) -> Any:
    """The time a chat message carries, or None. (Only `created_at` was read: a sysadmin's year of
    `{"role": "user", "content": …, "timestamp": 1760000000}` lines was all dated at the import.)"""
    value = next((rec[k] for k in TIME_KEYS if rec.get(k) not in (None, "")), None)
    if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > LAST_SECOND:
        return value / 1000
    return value


def openai_message(rec: dict[str, Any], tools: dict[str, str]) -> list[dict[str, Any]]:
    """The Palimpsest messages of one OpenAI chat message. `tools` pairs call ids to names."""
    role = rec.get("role")
    meta = {k: rec[k] for k in ("name", "tool_call_id") if rec.get(k) is not None}
    base = {"created_at": message_time(rec), "metadata": meta}
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
