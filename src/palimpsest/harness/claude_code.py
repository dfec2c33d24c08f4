"""Claude Code transcript records (`~/.claude/projects/<project>/<session-uuid>.jsonl`) as events.

A `user` / `assistant` record becomes, with its own timestamp (else the last one seen):
- its text (every `text` block, joined) → one message of the record's role, key
  `cc:<uuid>`;
- each other block → one event, key `cc:<uuid>:<block index>`:
  - `tool_use` → an `assistant` message with `tool_name`, `tool_args` (`metadata.tool_use_id`);
  - `tool_result` → a `tool` message whose `tool_name` comes from pairing `tool_use_id`
    with the call (remembered in the `Context`); `is_error` is kept in metadata;
  - `thinking` → an `assistant` message, `metadata.thinking = true`, importance 0.3:
    indexed so "why did we…" can find the reasoning, but ranked below what was said.
    Signatures (opaque, model-checkable blobs) are not copied; the source line keeps them.
Everything else is journaled as it is (type `source_record`, never indexed): records of
other types (`summary`, `system`, `file-history-snapshot`, `queue-operation`, unknown
ones; key `cc:<uuid>`, or `cc:line-<n>` without a uuid), structured `toolUseResult`
payloads (key `cc:<uuid>:toolUseResult`; a long field the record's tool_result holds word for
word, as a Bash call's `stdout`, is `SAME_AS_RESULT` there: kept once), image and other non-text blocks, empty or
redacted thinking. `isMeta` records (caveats, command echoes) and user turns that are a slash command's markup
(`<command-name>/clear</command-name>…`, `<local-command-stdout>…`) are marked
`metadata.boilerplate` with importance 0.1; the summary a compaction writes
(`isCompactSummary`) gets `metadata.compact_summary` and importance 0.3. The context
learns the session's id (`sessionId`), title (the first `summary`) and settings (`cwd`,
`git_branch`, `version`).

The importer and live capture both read records through `convert`, so a session
captured by the hooks and imported later yields the same events under the same keys.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..records import content_text, text_of
from .common import BOILERPLATE_IMPORTANCE, REASONING_IMPORTANCE, Context, learn_session, source_record, time_or

FORMAT = "claude-code"
RECORD_TYPES = {"user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation"}
# a slash command's echo and its output, written as user turns ("<command-name>/clear</command-name>…")
COMMAND_MARKUP = ("<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>", "<local-command-stderr>",
                  "<local-command-caveat>")


def looks_like(rec: Any) -> bool:
    if not isinstance(rec, dict):
        return False
    if rec.get("type") == "file-history-snapshot" and "snapshot" in rec:
        return True
    return "sessionId" in rec or (rec.get("type") in RECORD_TYPES and ("uuid" in rec or "leafUuid" in rec))


def convert(rec: dict[str, Any], line: int, ctx: Context, raw: bytes = b"") -> list[dict[str, Any]]:
    """The events of one record (messages and kept records), in order. (`raw`, the line's
    bytes, is not needed: Claude Code records carry their own ids.)"""
    rtype = rec.get("type")
    ts = time_or(rec.get("timestamp"), ctx.last_ts)
    ctx.last_ts = ts
    learn_session(rec, ctx)
    uid = str(rec.get("uuid") or f"line-{line}")
    source = {"source_format": FORMAT, "source_path": ctx.path, "source_line": line}
    if rtype not in ("user", "assistant") or not isinstance(rec.get("message"), dict):
        if rtype == "summary" and isinstance(rec.get("summary"), str) and ctx.title is None:
            ctx.title = rec["summary"][:200]
        return [source_record(str(rtype), rec, source, ts, f"cc:{uid}")]
    meta = {**source, "uuid": rec.get("uuid"), "parent_uuid": rec.get("parentUuid")}
    if rec.get("isSidechain"):
        meta["sidechain"] = True
    if rec.get("isMeta"):
        meta.update(boilerplate=True, importance=BOILERPLATE_IMPORTANCE)
    if rec.get("isCompactSummary"):  # the summary a compaction wrote: a restatement, not new words
        meta.update(compact_summary=True, importance=REASONING_IMPORTANCE)
    if rec["message"].get("model"):
        meta["model"] = rec["message"]["model"]
    out = _blocks(rec, meta, ts, uid, ctx)
    for m in out:  # a slash command's echo and its output, written as user turns without `isMeta`
        if m.get("role") == "user" and isinstance(m.get("content"), str) and m["content"].lstrip().startswith(COMMAND_MARKUP):
            m["metadata"] = {**m.get("metadata", {}), "boilerplate": True, "importance": BOILERPLATE_IMPORTANCE}
    tur = rec.get("toolUseResult")
    if tur is not None and not (isinstance(tur, str) and any(m.get("tool_result") == tur for m in out)):
        out.append(source_record("toolUseResult", _beside(tur, _results(out)), source, ts, f"cc:{uid}:toolUseResult"))
    return out


SAME_AS_RESULT = "[in this record's tool_result]"  # a structured field whose text the tool_result already holds
_LONG_FIELD = 256  # shorter fields are kept whatever they repeat: the copy costs little


def _beside(payload: Any, results: list[str]) -> Any:
    """`toolUseResult` without the long texts its record's `tool_result` already holds (a Bash call's `stdout`): each is
    `SAME_AS_RESULT` instead. A 5.5 MB output had been journaled twice, once as the tool's message and once in this
    payload (found by a Claude Code user: 11 MB of a 13 MB journal); what the tool_result does not hold word for word (a
    file read's raw content, which the result shows with line numbers) is kept as it is."""
    if isinstance(payload, str):
        return SAME_AS_RESULT if len(payload) >= _LONG_FIELD and any(payload in r for r in results) else payload
    if isinstance(payload, dict):
        return {k: _beside(v, results) for k, v in payload.items()}
    if isinstance(payload, list):  # (a Task's or an MCP tool's content parts, found in review)
        return [_beside(v, results) for v in payload]
    return payload


_LINE_NUMBER = re.compile(r"^ *\d+(?:\t|→)", re.MULTILINE)  # a Read result's "     1→" (or "\t") before each line


def _results(out: list[dict[str, Any]]) -> list[str]:
    """The tool_result texts of a record's events, and each without a file read's line numbers (a Read's
    `file.content` is its result's text without them)."""
    texts = [r for m in out if isinstance(r := m.get("tool_result"), str) and r]
    return texts + [bare for t in texts if (bare := _LINE_NUMBER.sub("", t)) != t]


def _blocks(rec: dict[str, Any], meta: dict[str, Any], ts: str | None, uid: str, ctx: Context) -> list[dict[str, Any]]:
    """The record's text (all text blocks joined, key `cc:<uuid>`) first, then one event per
    other block (key `cc:<uuid>:<block index>`)."""
    role = rec["message"].get("role") or rec["type"]
    content = rec["message"].get("content")
    if not isinstance(content, list):
        content = [content] if isinstance(content, str) else [{"type": "text", "text": content_text(content)}]
    texts = [b if isinstance(b, str) else b.get("text") for b in content
             if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")]
    text = "\n".join(t for t in texts if isinstance(t, str) and t)
    out = [{"type": "message", "role": role, "content": text, "created_at": ts, "metadata": meta, "event_key": f"cc:{uid}"}] if text.strip() else []
    for i, block in enumerate(content):
        if isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text"):
            continue
        m = _block(block, role, {**meta, "source_part": i}, ctx)
        if m is None:
            m = source_record(f"block:{block.get('type') if isinstance(block, dict) else 'unknown'}", block,
                              {k: meta[k] for k in ("source_format", "source_path", "source_line")}, ts, "")
        m.setdefault("type", "message")
        m.update(created_at=ts, event_key=f"cc:{uid}:{i}")
        out.append(m)
    return out


def _block(block: Any, role: str, meta: dict[str, Any], ctx: Context) -> dict[str, Any] | None:
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "thinking" and isinstance(block.get("thinking"), str) and block["thinking"].strip():
        return {"role": "assistant", "content": block["thinking"], "metadata": {**meta, "thinking": True, "importance": REASONING_IMPORTANCE}}
    if kind == "tool_use" and isinstance(block.get("name"), str):
        if isinstance(block.get("id"), str):
            ctx.tools[block["id"]] = block["name"]
        return {"role": "assistant", "content": "", "tool_name": block["name"], "tool_args": block.get("input"),
                "metadata": {**meta, "tool_use_id": block.get("id")}}
    if kind == "tool_result":
        tid = block.get("tool_use_id")
        extra = {"tool_use_id": tid, **({"is_error": True} if block.get("is_error") else {})}
        return {"role": "tool", "content": "", "tool_name": ctx.tools.get(str(tid)),
                "tool_result": text_of(block.get("content")), "metadata": {**meta, **extra}}
    return None


def is_subagent_file(path: str | Path) -> bool:
    """Whether a transcript is a sub-agent's (`<session>/subagents/*.jsonl`, or an older `agent-<id>.jsonl`): it joins
    its session, whose settings are the main transcript's."""
    p = Path(path)
    return p.parent.name == "subagents" or p.name.startswith("agent-")


def subagent_files(main: Path) -> list[Path]:
    """The sub-agent transcripts of the session whose transcript is `main`: in
    `<session>/subagents/*.jsonl`, and (older versions) `agent-<id>.jsonl` beside it whose
    first record names the session (`sessionId`, the main file's stem). The older ones were
    never captured (a new user's)."""
    found = sorted(main.with_suffix("").glob("subagents/*.jsonl"))
    for file in sorted(main.parent.glob("agent-*.jsonl")):
        if file != main and _session_of(file) == main.stem:
            found.append(file)
    return found


def _session_of(file: Path) -> str | None:
    """The `sessionId` of a transcript's first record (its first 64 KB read, at most)."""
    try:
        with open(file, "rb") as f:
            first = f.readline(65536)  # (read every turn for each agent file beside the session: its first line only)
        rec = json.loads(first)
    except (OSError, ValueError):
        return None
    return rec.get("sessionId") if isinstance(rec, dict) else None
