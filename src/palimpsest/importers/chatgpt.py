"""ChatGPT's data export (`conversations.json` from "Export data"): one session per conversation.

The export is a JSON list of conversations, each a tree of nodes (`mapping`: id → `{message,
parent, children}`); a prompt edited or an answer regenerated is a sibling branch, and
`current_node` is the leaf of the branch the user last saw. Every node with a message becomes
one message — every branch, so nothing said is lost — in the order of the tree (a node before
its children, earlier siblings first), with `metadata.branch` `current` (on the path to
`current_node`, or to the newest leaf when it names no node; a cycle of nodes is broken where it
is met) or `alternate`, and the node's id as its event key (`chatgpt:<node id>`):
importing a later export stores only what is new. The session is `chatgpt-<conversation id>`
(or `--session`), titled with the conversation's title.

A message's content by its `content_type`: `text` and `multimodal_text` parts joined (an image
or a file part named in brackets with its pointer: `[image: file-service://…]`), `code` and
`execution_output` their text, a page read (`tether_quote`, `sonic_webpage`) its title, URL and
text, `thoughts` their summaries and content (an assistant message marked `thinking`, importance
0.3), an image made by DALL·E its prompt, anything else as its JSON. The user's custom
instructions (hidden nodes repeated in every conversation) and the app's own notes
(`reasoning_recap`, `system_error`) are journaled as `source_record`s, never searched. Its time
is the node's `create_time` (epoch seconds), else the conversation's start, else its last
update (a time given that cannot be read is counted in the report). The role is the author's
(`user`, `assistant`, `system`, `tool`, with a tool's name in `metadata.tool`), or `unknown`,
counted, when the node names none; the empty system and tool nodes the app writes for itself
(no text) are counted, not stored. A conversation with no id is named from its title and start;
one that is no object with a `mapping` of nodes is reported by its place in the list, and the
others imported; so is a node whose content, or one of its parts, is a number or a boolean.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from ..errors import InvalidInput
from ..records import ROLE_RE, content_text, parse_time
from .base import Plan, safe_session_id

FORMAT = "chatgpt"
AGENT = "chatgpt"


def looks_like(doc: Any) -> bool:
    """A ChatGPT export: a list of conversations (or one), one of them holding a `mapping` of nodes (the others are
    `plan_chatgpt`'s to report: a first conversation whose `mapping` was a list had made the whole export "a JSON
    document of no known format", nothing imported)."""
    return any(isinstance(x, dict) and isinstance(x.get("mapping"), dict) for x in (doc if isinstance(doc, list) else [doc]))


def plan_chatgpt(doc: Any, session: str | None, agent: str | None) -> Plan:
    plan = Plan(FORMAT, all_or_nothing=False)  # a conversation that cannot be read is reported; the others are imported
    for i, conv in enumerate(doc if isinstance(doc, list) else [doc], 1):
        where = f"conversation {i}"
        if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
            plan.problem(where, "not a conversation (an object with a `mapping` of nodes)")
            continue
        cid = str(conv.get("conversation_id") or conv.get("id") or _fallback_id(conv))
        sp = plan.session(session or safe_session_id(f"chatgpt-{cid}"))
        sp.attrs.setdefault("agent", agent or AGENT)
        if isinstance(conv.get("title"), str) and conv["title"].strip():
            sp.attrs.setdefault("title", conv["title"].strip()[:200])
        current = _current_path(conv["mapping"], conv.get("current_node"))
        for node in _in_order(conv["mapping"]):
            message = node.get("message")
            if not isinstance(message, dict):
                continue  # the tree's root (no message)
            try:
                text, kind = _text(message.get("content"))
            except InvalidInput as exc:
                plan.problem(f"{where}, node {node.get('id')}", str(exc))
                continue
            author = message.get("author") if isinstance(message.get("author"), dict) else {}
            role = _role(author)
            if not text.strip():
                plan.skipped[f"empty {role} nodes (the app's own)"] += 1
                continue
            if role == UNKNOWN:
                plan.skipped[f"messages whose author is not named, stored as role {UNKNOWN}"] += 1
            meta: dict[str, Any] = {"chatgpt_conversation": cid, "branch": "current" if node.get("id") in current else "alternate"}
            if kind != "text":
                meta["content_type"] = kind
            info = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
            kept = {"created_at": _dated(message, conv, plan),
                    "event_key": f"chatgpt:{node.get('id') or message.get('id')}", "_where": f"{where}, node {node.get('id')}",
                    "_line": None}
            if info.get("is_visually_hidden_from_conversation") or kind in _KEPT_AS_RECORDS:
                # the user's custom instructions, repeated in every conversation, and the app's own notes ("Thought for 5
                # seconds"): journaled as they are, never searched (2,000 copies had filled every search: found in review)
                sp.messages.append({"type": "source_record", "role": "source", "content": text,
                                    "metadata": {**meta, "record_type": f"chatgpt:{kind}"}, **kept})
                continue
            if kind == "thoughts":  # the model's reasoning: found by "why did …", ranked below what was said
                meta.update(thinking=True, importance=0.3)
            if author.get("name"):
                meta["tool" if role == "tool" else "author"] = author["name"]
            if info.get("model_slug"):
                meta["model"] = info["model_slug"]
            sp.messages.append({"role": role, "content": text, "metadata": meta, **kept})
    return plan


# a node's author not named: "author": null held a novelist's "Sefa's ferry is called the Heron", stored as the
# assistant's (whose words make no facts); no role is guessed
UNKNOWN = "unknown"


def _role(author: dict[str, Any]) -> str:
    """The author's role when it is a short name (`user`, `assistant`, `tool`, …), else `unknown`."""
    role = author.get("role")
    return role if isinstance(role, str) and ROLE_RE.fullmatch(role) else UNKNOWN


_KEPT_AS_RECORDS = frozenset(["user_editable_context", "reasoning_recap", "system_error", "model_editable_context"])


def _fallback_id(conv: dict[str, Any]) -> str:
    """A conversation's id when the export names none: from its title and start, so a later export gives the same."""
    said = json.dumps([conv.get("title"), conv.get("create_time")], ensure_ascii=False)
    return "t" + hashlib.sha256(said.encode("utf-8")).hexdigest()[:16]


def _in_order(mapping: dict[str, Any]) -> list[dict[str, Any]]:
    """The nodes from each root down, a node before its children, earlier siblings first."""
    return [mapping[k] for k in _walk(mapping)]


def _walk(mapping: dict[str, Any]) -> list[str]:
    """The ids of `_in_order` (iteratively: a conversation of thousands of turns is a chain thousands deep). Nodes no
    root reaches come last, each walked from in turn, so a cycle is broken where it is met (`a` the parent of `b` and
    `b` of `a`: no node had been a leaf, and the one message a branch not kept)."""
    ids = [k for k, n in mapping.items() if isinstance(n, dict)]
    roots = [k for k in ids if not _in(mapping, mapping[k].get("parent"))]
    out: list[str] = []
    seen: set[str] = set()
    for start in roots + ids:
        stack = [start]
        while stack:
            key = stack.pop()
            if key not in seen:
                seen.add(key)
                out.append(key)
                stack += reversed(_children(mapping, key))
    return out


def _children(mapping: dict[str, Any], key: str) -> list[str]:
    children = mapping[key].get("children")
    return [c for c in children if _in(mapping, c)] if isinstance(children, list) else []


def _in(mapping: dict[str, Any], key: Any) -> bool:
    """Whether `key` names a node (an id is a string: a list written as one is no id, and no key of a dict)."""
    return isinstance(key, str) and isinstance(mapping.get(key), dict)


def _current_path(mapping: dict[str, Any], leaf: Any) -> set[str]:
    """The ids from `current_node` up to the root: the branch the user last saw. A `current_node` naming no node is the
    newest leaf (one naming a node the export left out had made every message a branch not kept)."""
    if not (isinstance(leaf, str) and leaf in mapping):
        leaf = _newest_leaf(mapping)
    path: set[str] = set()
    while isinstance(leaf, str) and leaf in mapping and leaf not in path:
        path.add(leaf)
        leaf = (mapping[leaf] or {}).get("parent")
    return path


def _newest_leaf(mapping: dict[str, Any]) -> Any:
    """The id of the leaf said last (by its message's time; of two said at once, the later in the tree's order), or
    None. A leaf is a node none of whose children comes after it in `_walk`: a child that does not (its parent, or itself, in a
    cycle) is no branch going on."""
    order = _walk(mapping)
    at = {k: i for i, k in enumerate(order)}
    leaves = [k for k in order if all(at[c] <= at[k] for c in _children(mapping, k))]
    return max(reversed(leaves), key=lambda k: _said_at(mapping[k]), default=None)


def _said_at(node: dict[str, Any]) -> datetime:
    message = node.get("message") if isinstance(node.get("message"), dict) else {}
    try:
        return parse_time(_time(message.get("create_time")))
    except InvalidInput:  # no time, or none between the years 1 and 9999: before any other
        return datetime.min.replace(tzinfo=UTC)


def _text(content: Any) -> tuple[str, str]:
    """(text, content type) of a message's content; one neither an object nor text (`"content": 42`, which had been
    stored as '42') is `InvalidInput`, as in every format."""
    if not isinstance(content, dict):
        return content_text(content), "text"
    kind = str(content.get("content_type") or "text")
    parts = content.get("parts")
    if isinstance(parts, str):  # one part written bare (a rewritten export's: it had been stored as '{"parts": "…"}')
        parts = [parts]
    if isinstance(parts, list):
        return "\n".join(p for p in _parts(parts) if p), kind
    if kind in ("tether_quote", "sonic_webpage", "tether_browsing_display"):  # a page read: its title and address too
        return "\n".join(str(content[k]) for k in ("title", "url", "domain", "text", "result", "summary") if content.get(k)), kind
    if kind == "thoughts" and isinstance(content.get("thoughts"), list):
        return "\n\n".join(f"{t.get('summary') or ''}\n{t.get('content') or ''}".strip() for t in content["thoughts"]
                           if isinstance(t, dict)), kind
    if isinstance(content.get("text"), str):
        return content["text"], kind  # code, execution_output
    if isinstance(content.get("result"), str):
        return content["result"], kind  # a browsing tool's result
    rest = {k: v for k, v in content.items() if k != "content_type"}
    return (json.dumps(rest, ensure_ascii=False) if rest else ""), kind


def _parts(parts: list[Any]) -> list[str]:
    """The text of each part; a part neither text nor an object is a placeholder beside the words, and refused only when
    no part has words (`["Noor has a scar on her left hand. Her locker is", 42, "and she trains at 6."]` had lost both
    sentences with the number: review)."""
    said, worded, refused = [], False, None
    for part in parts:
        try:
            text = _part(part)
        except InvalidInput as exc:
            text, refused = f"[{type(part).__name__} part]", exc
        else:
            worded = worded or bool(text.strip())
        said.append(text)
    if refused is not None and not worded:
        raise refused
    return said


def _part(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        kind = str(part.get("content_type") or part.get("type") or "part").removesuffix("_asset_pointer")
        if isinstance(part.get("text"), str):
            return part["text"]
        pointer = part.get("asset_pointer") or part.get("url") or part.get("name")
        dalle = (part.get("metadata") or {}).get("dalle") if isinstance(part.get("metadata"), dict) else None
        prompt = f" (made from: {dalle['prompt']})" if isinstance(dalle, dict) and isinstance(dalle.get("prompt"), str) else ""
        return (f"[{kind}: {pointer}]" if pointer else f"[{kind}]") + prompt
    if part is None:
        return ""
    # `"parts": [42]` had been stored as the message '42' (a novelist's export), where `"content": 42` is refused
    raise InvalidInput(f"a content part must be text or an object, got {type(part).__name__}")


def _dated(message: dict[str, Any], conv: dict[str, Any], plan: Plan) -> Any:
    """A message's time (`_time`). One given that cannot be read is counted in the report with what stood in for it: a
    novelist's `"create_time": "not-a-time"` had been put aside for the conversation's start, silently."""
    own = message.get("create_time")
    if own is None or _time(own) is not None:
        return _time(own, conv.get("create_time"), conv.get("update_time"))
    stand_ins = [("their conversation's start", conv.get("create_time")), ("their conversation's last update", conv.get("update_time"))]
    used, when = next(((label, _time(t)) for label, t in stand_ins if _time(t) is not None), ("the time of the import", None))
    plan.skipped[f"messages whose time could not be read, dated by {used}"] += 1
    return when


def _time(*values: Any) -> Any:
    """The first time given (epoch seconds, as the export writes it, or an ISO 8601 string, as tools that rewrite exports
    do): the node's, else the conversation's start, else its last update. (A node's "2026-09-18T14:25:00Z" had been put
    aside for the conversation's start, silently: three messages of one moment.)"""
    for t in values:
        if isinstance(t, int | float) and not isinstance(t, bool) and t > 0:
            return t
        if isinstance(t, str) and t.strip():
            try:
                parse_time(t)
            except InvalidInput:
                continue
            return t.strip()
    return None
