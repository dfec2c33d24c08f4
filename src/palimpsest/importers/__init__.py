"""Import transcripts into memory, and export memory to JSONL and back.

    from palimpsest.importers import import_file, export_memory
    report = import_file(memory, "~/.claude/projects/-home-me-app/0b4c….jsonl")
    print(report.stored, report.duplicates, report.problems)

Formats (`FORMATS`; `"auto"` tells them apart from the content):
- `messages` — generic JSONL, one message per line (see `chat.py`);
- `openai` — OpenAI chat messages, a JSON list or JSONL (`chat.py`);
- `claude-code` — Claude Code session files (`claude_code.py`);
- `codex` — Codex CLI rollout files (`codex.py`);
- `chatgpt` — ChatGPT's data export, `conversations.json`: every branch of every conversation (`chatgpt.py`);
- `qwen-code` — qwen-code chat files (`~/.qwen/projects/<project>/chats/<session>.jsonl`), read by
  `harness/qwen_code.py` through `base.plan_harness_file`;
- `locomo`, `longmemeval` — the evaluation sets (`evalsets.py`);
- `export` — what `export_memory` writes (`transfer.py`).

Every importer is idempotent: messages carry stable event keys (from the harness's own
ids or line numbers, or the n-th occurrence of a message in its session), so importing a
file again stores nothing new, and importing a longer version stores only the rest.
Messages from a harness's own file (Claude Code, Codex) keep `metadata.source_path`,
`source_line` (and `source_part` for one of several messages of a line); a payload too
large for one journal event is shortened, marked `source_truncated`, and
`recover_from_source` reads it back from the harness file for `Memory.get_full`.
How bad input is handled (import the rest, or nothing) is explained in `base.py`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..harness import claude_code as claude_code_reader
from ..harness import codex as codex_reader
from ..harness import qwen_code as qwen_code_reader
from ..harness.common import Context
from ..records import check_session_id
from . import chat, chatgpt, claude_code, codex, evalsets, transfer
from .base import (
    MAX_SOURCE_BYTES,
    ImportRejected,
    ImportReport,
    Plan,
    Problem,
    Progress,
    decode_document,
    file_time,
    iter_lines,
    line_bytes,
    plan_harness_file,
    read_source,
    safe_session_id,
    write_plan,
)
from .transfer import export_memory

FORMATS = ("messages", "openai", "claude-code", "codex", "qwen-code", "chatgpt", "locomo", "longmemeval", "export")
DOCUMENT_FORMATS = ("locomo", "longmemeval", "export")
TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz")
_NOT_PARSED = object()


def import_file(memory: Any, path: str | Path, *, format: str = "auto", session: str | None = None, agent: str | None = None,
                progress: Progress | None = None) -> ImportReport:
    """Import one file (plain or gzipped) into `memory`. Returns the report; raises
    `ImportRejected` (an `InvalidInput`) when nothing could be imported."""
    name = str(Path(path).expanduser().resolve())
    data = read_source(name)
    fmt, doc = detect(data, name) if format == "auto" else (format, _NOT_PARSED)
    _check_options(fmt, session)
    reader = Plan(fmt, all_or_nothing=fmt in DOCUMENT_FORMATS)
    if fmt == "export":
        plan, events = transfer.plan_export(iter_lines(data, reader), memory.settings.max_event_bytes)
        _merge(plan, reader)
        return transfer.write_export(memory, plan, events, name, progress)
    plan = _plan(fmt, data, doc, name, reader, session, agent)
    _merge(plan, reader)
    if fmt == "openai" and session is None:
        _apart_from_namesakes(memory, plan, name)
    return write_plan(memory, plan, name, progress)


def _conversations(records: list[tuple[int, Any]], session: str | None, agent: str | None, name: str) -> Plan:
    """JSONL of one `{"messages": [...]}` conversation per line (a fine-tuning or batch export):
    each line its own session, `<file>-<line>` (or all in `--session`)."""
    plan = Plan("openai", all_or_nothing=False)
    for line, rec in records:
        part = chat.plan_openai([(line, m) for m in rec["messages"]], session, agent, f"{Path(name).stem}-{line}", f"{name}#{line}")
        for sid, sp in part.sessions.items():
            into = plan.session(sid)
            into.attrs = {**sp.attrs, **into.attrs}
            into.messages += sp.messages
        plan.problems += part.problems
    return plan


def _apart_from_namesakes(memory: Any, plan: Plan, path: str) -> None:
    """A session named after its file that another file of that name already filled (two
    folders' `conv.json`) becomes the name with a short hash of this path."""
    for sid in list(plan.sessions):
        known = memory.store.get_session(sid)
        other = (known.settings or {}).get("source_path") if known is not None else None
        if other is not None and other != path and not other.startswith(f"{path}#"):  # (`name#line`: `_conversations`;
            # a session from before files were named keeps its messages' name)
            tagged = safe_session_id(f"{sid[:180]}-{hashlib.sha256(path.encode()).hexdigest()[:8]}")
            plan.sessions = {(tagged if k == sid else k): v for k, v in plan.sessions.items()}


def expand_paths(paths: list[str | Path]) -> list[Path]:
    """Files named, and the transcript files (`.jsonl`, `.json`, gzipped too) under folders
    named. A Claude Code transcript brings its sub-agents' (`claude_code.subagent_files`, as
    capture reads them), just before it, so the main transcript's settings are the
    session's (its `source_path` among them)."""
    named: list[Path] = []
    for p in (Path(x).expanduser() for x in paths):
        if p.is_dir():
            named += sorted(f for f in p.rglob("*") if f.is_file() and f.name.endswith(TRANSCRIPT_SUFFIXES))
        else:
            named.append(p)
    out: list[Path] = []
    for p in named:
        if p in out:
            continue
        if p.name.endswith(".jsonl") and not p.name.startswith("agent-"):
            out += [s for s in claude_code_reader.subagent_files(p) if s not in out]
        out.append(p)
    return out


def import_paths(memory: Any, paths: list[str | Path], *, format: str = "auto", session: str | None = None,
                 agent: str | None = None, progress: Progress | None = None) -> list[dict[str, Any]]:
    """Import several files (folders are walked for transcript files), each on its own:
    one refused file does not stop the others. Returns one report dict per file, with
    `error` (and `ok: false`) for a file where nothing was imported."""
    results: list[dict[str, Any]] = []
    for path in expand_paths(paths):
        try:
            results.append(import_file(memory, path, format=format, session=session, agent=agent, progress=progress).to_dict())
        except ImportRejected as exc:
            results.append({**exc.report.to_dict(), "error": exc.to_dict()})
        except InvalidInput as exc:
            results.append({"path": str(path), "ok": False, "error": exc.to_dict()})
    return results


def import_data(memory: Any, data: Any, format: str, *, session: str | None = None, agent: str | None = None,
                name: str = "data", progress: Progress | None = None) -> ImportReport:
    """Import already-parsed data: a LoCoMo conversation (or list), a LongMemEval question
    (or list), a list of OpenAI or generic messages, a list of Claude Code or Codex records."""
    _check_options(format, session)
    items = data if isinstance(data, list) else [data]
    records = list(enumerate(items, 1))
    if format == "locomo":
        plan = evalsets.plan_locomo(data, agent)
    elif format == "longmemeval":
        plan = evalsets.plan_longmemeval(records, agent)
    elif format == "openai":
        plan = chat.plan_openai([(None, r) for r in items], session, agent, name)
    elif format == "messages":
        plan = chat.plan_messages([(None, r) for r in items], session, agent)
    elif format == "claude-code":
        plan = claude_code.plan_claude_code(records, name, session, agent, None)
    elif format == "codex":
        plan = codex.plan_codex(records, name, session, agent, None)
    elif format == "qwen-code":
        plan = plan_harness_file(qwen_code_reader.FORMAT, "qwen-code", records, name, session, agent, None, _no_raw)
    elif format == "chatgpt":
        plan = chatgpt.plan_chatgpt(data, session, agent)
    else:
        raise InvalidInput(f"import_data cannot take format {format!r}")
    return write_plan(memory, plan, name, progress)


def _check_options(fmt: str, session: str | None) -> None:
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown format {fmt!r}: use auto or one of {', '.join(FORMATS)}")
    if session is not None:
        if fmt in DOCUMENT_FORMATS:
            raise InvalidInput(f"--session cannot be used with the {fmt} format: it names its own sessions")
        check_session_id(session)


def _merge(plan: Plan, reader: Plan) -> None:
    plan.problems = sorted(reader.problems + plan.problems, key=lambda p: (p.line is None, p.line or 0))
    plan.skipped.update(reader.skipped)


def _plan(fmt: str, data: bytes, doc: Any, name: str, reader: Plan, session: str | None, agent: str | None) -> Plan:
    if fmt in ("locomo", "openai", "longmemeval", "messages", "chatgpt") and doc is _NOT_PARSED:
        doc = _document(data)
        if doc is _NOT_PARSED and (fmt in ("locomo", "chatgpt") or data.lstrip()[:1] == b"["):
            decode_document(data, reader)  # a broken single document: its error, and nothing imported
            return Plan(fmt, all_or_nothing=True)
    if fmt == "chatgpt":
        if not chatgpt.looks_like(doc):
            raise InvalidInput(f"{name}: no ChatGPT conversation (a list of objects with a `mapping` of nodes)")
        return chatgpt.plan_chatgpt(doc, session, agent)
    if fmt == "locomo":
        return evalsets.plan_locomo(doc, agent)
    if fmt == "openai" and doc is not _NOT_PARSED:
        items = doc.get("messages", [doc]) if isinstance(doc, dict) else doc
        return chat.plan_openai([(None, m) for m in items] if isinstance(items, list) else [(None, items)],
                                session, agent, Path(name).stem, name)
    if fmt == "messages" and isinstance(doc, list):
        return chat.plan_messages([(None, m) for m in doc], session, agent)
    if fmt == "longmemeval" and isinstance(doc, list):
        return evalsets.plan_longmemeval([(None, q) for q in doc], agent)
    lines = iter_lines(data, reader)
    if fmt == "messages":
        return chat.plan_messages(lines, session, agent)
    if fmt == "openai":
        records = list(lines)
        if records and all(isinstance(r, dict) and isinstance(r.get("messages"), list) for _, r in records):
            return _conversations(records, session, agent, name)
        return chat.plan_openai(records, session, agent, Path(name).stem, name)
    if fmt == "longmemeval":
        return evalsets.plan_longmemeval(lines, agent)
    if fmt == "claude-code":
        return claude_code.plan_claude_code(lines, name, session, agent, file_time(name))
    if fmt == "qwen-code":  # (records carry their own uuids: the reader needs no raw line)
        return plan_harness_file(qwen_code_reader.FORMAT, "qwen-code", lines, name, session, agent, file_time(name), _no_raw)
    return codex.plan_codex(lines, name, session, agent, file_time(name), data, reader.parts)


def _document(data: bytes) -> Any:
    """The whole source as one JSON document, or `_NOT_PARSED` (JSONL, or broken)."""
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _NOT_PARSED


def detect(data: bytes, name: str = "input") -> tuple[str, Any]:
    """(format, the parsed document or `_NOT_PARSED`) from a source's content."""
    head = data.lstrip()[:1]
    if head in (b"[", b"{"):
        doc = _document(data)
        fmt = _document_format(doc)
        if fmt:
            return fmt, doc
        if head == b"[":
            reader = Plan("auto", True)
            decode_document(data, reader)
            where = f" ({reader.problems[0]})" if reader.problems else ""
            raise InvalidInput(f"{name}: a JSON document of no known format{where}; nothing was imported (formats: "
                               f"{', '.join(FORMATS)})")
    reader, fmt = Plan("auto", False), None
    for n, (_line, rec) in enumerate(iter_lines(data, reader)):
        fmt = _record_format(rec)
        if fmt or n >= 200:
            break
    if fmt:
        return fmt, _NOT_PARSED
    raise InvalidInput(f"{name}: cannot tell the format from the content; pass --format ({', '.join(FORMATS)})")


def detect_format(path: str | Path) -> str:
    return detect(read_source(path), str(path))[0]


def _document_format(doc: Any) -> str | None:
    if chatgpt.looks_like(doc):
        return "chatgpt"
    if isinstance(doc, list):
        first = next((x for x in doc if isinstance(x, dict)), {})
        if "conversation" in first:
            return "locomo"
        if "haystack_sessions" in first:
            return "longmemeval"
        if "role" in first:
            return "messages" if "session" in first else "openai"
    if isinstance(doc, dict):
        if isinstance(doc.get("messages"), list):
            return "openai"
        if isinstance(doc.get("conversation"), dict):
            return "locomo"
    return None


def _no_raw(line: int, rec: Any) -> bytes:
    return b""


def _record_format(rec: Any) -> str | None:
    if not isinstance(rec, dict):
        return None
    if transfer.looks_like(rec):
        return "export"
    if "haystack_sessions" in rec:
        return "longmemeval"
    if codex_reader.looks_like(rec):
        return "codex"
    if qwen_code_reader.looks_like(rec):  # (before Claude Code's: both name a sessionId and a uuid)
        return "qwen-code"
    if claude_code_reader.looks_like(rec):
        return "claude-code"
    if "session" in rec:
        return "messages"
    if "role" in rec or isinstance(rec.get("messages"), list):  # a message, or a conversation a line
        return "openai"
    return None


def recover_from_source(source_path: str, source_line: int, key: str,
                        limit: int = MAX_SOURCE_BYTES) -> dict[str, Any]:
    """The whole payload of a message imported (or captured) from a Claude Code or Codex
    file and shortened to fit, read again from line `source_line` of that file. Returns the
    fields to restore (`content`, `tool_result`, `tool_args`) or, when the line is gone,
    `{"source_error": …}`.

    A message's metadata is the writer's word, so the line must hold *that* message: the
    record read again must give the message's own `key` (`cc:<uuid>`, or `codex:<line>:<hash
    of the line's bytes>`, which only its bytes give). Any other file or line answers the
    same error, so metadata can neither read a file nor tell whether one exists (a writer
    had named another transcript and got its content back)."""
    refused = {"source_error": f"line {source_line} of the source no longer holds this message"}
    path = Path(source_path)
    if not key or path.suffix not in (".jsonl", ".json", ".gz") or not isinstance(source_line, int) or source_line < 1:
        return refused
    try:
        raw = line_bytes(read_source(path, limit), source_line)
        rec = json.loads(raw) if raw else None
    except (InvalidInput, ValueError):
        return refused
    if isinstance(rec, dict) and claude_code_reader.looks_like(rec):
        msgs = claude_code_reader.convert(rec, source_line, Context(str(path)))
    elif isinstance(rec, dict) and (codex_reader.looks_like(rec) or rec.get("type") in codex_reader.ITEM_TYPES):
        msgs = codex_reader.convert(rec, source_line, Context(str(path)), raw + b"\n")
    else:
        return refused
    mine = [m for m in msgs if m.get("event_key") == key]
    if not mine:
        return refused
    best = mine[0]
    return {"content": best.get("content") or "", "tool_result": best.get("tool_result"), "tool_args": best.get("tool_args"),
            "source_recovered": True}


__all__ = [
    "DOCUMENT_FORMATS", "FORMATS", "ImportRejected", "ImportReport", "Problem", "detect_format", "export_memory", "import_data",
    "import_file", "import_paths", "recover_from_source",
]
