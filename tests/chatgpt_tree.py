"""A ChatGPT export's conversation (see `palimpsest/importers/chatgpt.py`), built from its nodes, for tests.

    conversation("c1", [("u1", None, "user", "Hi", 0), ("a1", "u1", "assistant", "Hello", 1)], current="a1")

Each node is (id, parent id or None, role, text, minutes after the conversation's start); a node's
children are listed in the order the nodes are given, as the export lists them (oldest first).
"""

from __future__ import annotations

from typing import Any

START = 1796169600.0  # 2026-12-02T00:00:00Z, in epoch seconds as the export writes times


def conversation(cid: str, nodes: list[tuple[str, str | None, str, str, int]], current: str) -> dict[str, Any]:
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None, "children": []}}
    for node_id, parent, role, text, minute in nodes:
        message = {"id": node_id, "author": {"role": role}, "create_time": START + 60 * minute,
                   "content": {"content_type": "text", "parts": [text]}}
        mapping[node_id] = {"id": node_id, "message": message, "parent": parent or "root", "children": []}
        mapping[parent or "root"]["children"].append(node_id)
    return {"title": cid, "create_time": START, "mapping": mapping, "current_node": current, "conversation_id": cid}
