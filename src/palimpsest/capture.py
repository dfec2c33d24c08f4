"""Capture: how harnesses write into memory, both ends of `POST /api/capture`.

Server side, `store_batch` takes one batch — events of one session — validates every event
first, then journals the batch as one group commit under the session's lock (the journal's
`flock`), deduping by `event_key`, and answers per event whether it was stored or a
duplicate. An event without a key gets a content-hash key, so a resent batch never doubles.

Client side, `CaptureClient` posts batches and never loses one: when the server cannot be
reached or answers 5xx the batch is spooled as a private file (0600) under
`<home>/capture-spool/`; before each write the 50 oldest spooled batches are replayed in
order; a batch the server rejects with 4xx is moved to `capture-spool/dead/` with the
server's answer beside it (`palimpsest capture --requeue-dead` puts them back after the
cause is fixed); a spool file that cannot be read is reported and moved to
`capture-spool/corrupt/`. Replays are safe because the server dedupes by event key.

`palimpsest capture` reads a harness hook's JSON from stdin (Claude Code: `session_id`,
`transcript_path`, `cwd`, `hook_event_name`; Codex hooks alike, or its `notify` payload).
Decision: when the hook names a transcript, the client sends the transcript's new complete
lines since its last capture (a byte cursor per transcript under `<home>/capture-state/`),
one event per message, tool call and tool result, keyed by the harness's own record ids
(Claude's `uuid`; a Codex line's number and hash), so the whole conversation lands — tool
outputs included — whichever hook fires, and a lost cursor only causes duplicates the
server drops. Claude Code sub-agent transcripts (`<session>/subagents/*.jsonl`) join the
same session; Codex's `notify` payload names no transcript, so its rollout file is found by
thread id under `CODEX_HOME`. Records that are not messages (snapshots, session metadata,
reasoning) are journaled as they are under a type of their own (`claude.…`, `codex.…`), so
they are kept but not indexed. Without a transcript the client posts what the hook itself
carries (a prompt, a tool call and its response). The session's settings get `cwd`, `project` and the rule tag
`project:<repo>` (origin remote name → git root → folder name; a worktree resolves to its
main repository); tags proper arrive with the tags issue and can read them from there.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import secrets
import subprocess
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Self

import httpx

from .errors import InvalidInput
from .memory import Memory
from .messages import SESSION_FIELDS
from .records import ROLE_RE, SESSION_ID_RE, check_session_id

MAX_EVENTS = 10_000

EVENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["role"],
    "properties": {
        "role": {"type": "string", "pattern": ROLE_RE.pattern}, "content": {"type": "string"},
        "type": {"type": "string", "pattern": ROLE_RE.pattern},
        "tool_name": {"type": "string"}, "tool_args": {}, "tool_result": {}, "metadata": {"type": "object"},
        "created_at": {"type": "string"}, "event_key": {"type": "string"},
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


# -- the client: post, spool, replay ---------------------------------------------
REPLAY_LIMIT = 50
BATCH_EVENTS = 500
BATCH_BYTES = 8 * 1024 * 1024


class Spool:
    """Batches waiting for the server: one private JSON file each, oldest first by name."""

    def __init__(self, home: Path) -> None:
        self.root = Path(home) / "capture-spool"
        self.dead = self.root / "dead"
        self.corrupt = self.root / "corrupt"

    def put(self, batch: dict[str, Any]) -> Path:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        name = f"{time.time_ns():020d}-{secrets.token_hex(4)}.json"
        tmp = self.root / f".{name}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(json.dumps(batch, ensure_ascii=False).encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.root / name)
        return self.root / name

    def oldest(self, n: int = REPLAY_LIMIT) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.glob("*.json") if p.is_file())[:n]

    def pending(self) -> int:
        return len(list(self.root.glob("*.json"))) if self.root.is_dir() else 0

    def read(self, path: Path) -> dict[str, Any]:
        try:
            batch = json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"{path.name}: unreadable spool file: {exc}") from None
        if not isinstance(batch, dict) or not isinstance(batch.get("session"), str) or not isinstance(batch.get("events"), list):
            raise InvalidInput(f"{path.name}: not a capture batch")
        return batch

    def set_aside(self, path: Path, folder: Path, reason: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        target = folder / path.name
        os.replace(path, target)
        fd = os.open(folder / (path.name + ".reason"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(reason + "\n")
        return target

    def requeue_dead(self) -> int:
        """Put dead batches back in the spool (after the cause of their rejection was fixed)."""
        moved = 0
        for path in sorted(self.dead.glob("*.json")) if self.dead.is_dir() else []:
            os.replace(path, self.root / path.name)
            (self.dead / (path.name + ".reason")).unlink(missing_ok=True)
            moved += 1
        return moved


@dataclass
class Report:
    """What one `send` did: batches posted, spooled, sent to dead/, spool files set aside."""

    posted: int = 0
    stored: int = 0
    duplicates: int = 0
    spooled: int = 0
    replayed: int = 0
    dead: int = 0
    corrupt: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Retry(Exception):
    """The server could not take the batch now (unreachable, 5xx): spool and retry later."""


class _Rejected(Exception):
    """The server refused the batch (4xx): retrying will not help."""


class CaptureClient:
    """Posts capture batches to a Palimpsest server; spools what it could not deliver."""

    def __init__(self, url: str, home: Path, *, token: str = "", timeout: float = 10.0, http: httpx.Client | None = None) -> None:
        self.url = url.rstrip("/") + "/api/capture"
        self.spool = Spool(home)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = http or httpx.Client(timeout=timeout, headers=headers, trust_env=False)

    def close(self) -> None:
        self.http.close()

    def send(self, batches: list[dict[str, Any]]) -> Report:
        """Replay the oldest spooled batches, then post these; nothing is dropped."""
        report = Report()
        reachable = self.replay(report)
        for batch in batches:
            if not reachable:
                self.spool.put(batch)
                report.spooled += 1
                continue
            try:
                self._post(batch, report)
            except _Retry as exc:
                report.errors.append(str(exc))
                self.spool.put(batch)
                report.spooled += 1
                reachable = False
            except _Rejected as exc:
                report.errors.append(str(exc))
                self.spool.set_aside(self.spool.put(batch), self.spool.dead, str(exc))
                report.dead += 1
        return report

    def replay(self, report: Report, limit: int = REPLAY_LIMIT) -> bool:
        """Post up to `limit` spooled batches, oldest first; False when the server is unreachable."""
        for path in self.spool.oldest(limit):
            try:
                batch = self.spool.read(path)
            except InvalidInput as exc:
                self.spool.set_aside(path, self.spool.corrupt, str(exc))
                report.corrupt.append(path.name)
                continue
            try:
                self._post(batch, report)
            except _Retry as exc:
                report.errors.append(str(exc))
                return False
            except _Rejected as exc:
                report.errors.append(str(exc))
                self.spool.set_aside(path, self.spool.dead, str(exc))
                report.dead += 1
                continue
            path.unlink(missing_ok=True)
            report.replayed += 1
        return True

    def _post(self, batch: dict[str, Any], report: Report) -> None:
        try:
            response = self.http.post(self.url, json=batch)
        except httpx.HTTPError as exc:
            raise _Retry(f"server unreachable: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 500:
            raise _Retry(f"server answered {response.status_code}: {response.text[:300]}")
        if response.status_code >= 400:
            raise _Rejected(f"server refused the batch with {response.status_code}: {response.text[:1000]}")
        result = response.json().get("result", {})
        report.posted += 1
        report.stored += int(result.get("stored", 0))
        report.duplicates += int(result.get("duplicates", 0))


def split(batch: dict[str, Any], max_events: int = BATCH_EVENTS, max_bytes: int = BATCH_BYTES) -> list[dict[str, Any]]:
    """One batch cut into several of bounded size (same session attributes on each)."""
    head = {k: v for k, v in batch.items() if k != "events"}
    out: list[dict[str, Any]] = []
    current: list[dict[str, Any]] = []
    size = 0
    for event in batch["events"]:
        n = len(json.dumps(event, ensure_ascii=False, default=str))
        if current and (len(current) >= max_events or size + n > max_bytes):
            out.append({**head, "events": current})
            current, size = [], 0
        current.append(event)
        size += n
    if current:
        out.append({**head, "events": current})
    return out


# -- from a harness hook to batches ------------------------------------------------
def project_of(cwd: str | None) -> str | None:
    """The project a folder belongs to: origin remote name → git root → folder name.

    A worktree resolves to its main repository (`--git-common-dir` points there)."""
    if not cwd or not Path(cwd).is_dir():
        return None
    url = _git(cwd, "config", "--get", "remote.origin.url")
    if url:
        name = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
        name = name.removesuffix(".git")
        if name:
            return name
    common = _git(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if common:
        root = Path(common)
        return (root.parent if root.name == ".git" else root).name or None
    return Path(cwd).resolve().name or None


def _git(cwd: str, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", cwd, *args], check=False, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def session_id_of(raw: Any) -> str:
    """The harness's session id if it is a valid Palimpsest id, else a stable hash of it."""
    text = str(raw or "").strip()
    try:
        return check_session_id(text)
    except InvalidInput:
        return "s-" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]


class Transcript:
    """New complete lines of a transcript since the last capture; a byte cursor per file."""

    def __init__(self, path: Path, home: Path) -> None:
        self.path = path
        digest = hashlib.sha256(str(path.resolve()).encode("utf-8", "replace")).hexdigest()[:24]
        self.state_path = Path(home) / "capture-state" / f"{digest}.json"
        self.offset = self.line = 0
        self._lock_fd: int | None = None

    def __enter__(self) -> Self:
        self.state_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock_fd = os.open(self.state_path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)  # two hooks of one session take turns
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            self.offset, self.line = int(state["offset"]), int(state["line"])
        except (OSError, ValueError, KeyError, TypeError):
            self.offset = self.line = 0
        if self.path.stat().st_size < self.offset:  # rewritten: start over, keys dedupe
            self.offset = self.line = 0
        return self

    def __exit__(self, *exc: object) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)

    def new_lines(self) -> Iterator[tuple[int, bytes]]:
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            for raw in f:
                if not raw.endswith(b"\n"):
                    return  # still being written
                self.offset += len(raw)
                self.line += 1
                yield self.line, raw

    def commit(self) -> None:
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"path": str(self.path), "offset": self.offset, "line": self.line}), encoding="utf-8")
        os.replace(tmp, self.state_path)


def _event(role: str, content: str = "", key: str = "", created_at: Any = None, **extra: Any) -> dict[str, Any]:
    event = {"role": role, "content": content, "event_key": key, **{k: v for k, v in extra.items() if v is not None}}
    if isinstance(created_at, str) and created_at:
        event["created_at"] = created_at
    return event


def _type(prefix: str, name: Any) -> str:
    """An event type for a harness record kind, e.g. `claude.file-history-snapshot`."""
    return f"{prefix}.{re.sub(r'[^A-Za-z0-9_.-]', '_', str(name))[:48]}"


def _raw_event(kind: str, raw: bytes, key: str, created_at: Any = None) -> dict[str, Any]:
    # Kept in the journal as it is (not indexed: only type "message" is).
    return _event("system", raw.decode("utf-8", "replace").rstrip("\n"), key, created_at, type=kind)


def _blocks_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content if not isinstance(b, dict) or "text" in b)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def claude_events(record: dict[str, Any], line: int, raw: bytes) -> list[dict[str, Any]]:
    """One Claude Code transcript record as events: text, each tool call, each tool result."""
    uid = str(record.get("uuid") or f"line-{line}")
    ts, kind = record.get("timestamp"), record.get("type")
    meta = {k: record[k] for k in ("uuid", "parentUuid", "gitBranch", "isSidechain", "model") if record.get(k) is not None}
    message = record.get("message")
    if kind == "summary" and isinstance(record.get("summary"), str):
        return [_event("system", record["summary"], f"cc:{uid}", ts, type="summary", metadata=meta)]
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return [_raw_event(_type("claude", kind), raw, f"cc:{uid}", ts)]
    role, content = str(message.get("role") or kind), message.get("content")
    if isinstance(content, str):
        return [_event(role, content, f"cc:{uid}", ts, metadata=meta)] if content else []
    out, texts = [], []
    for i, block in enumerate(content if isinstance(content, list) else []):
        btype = block.get("type") if isinstance(block, dict) else None
        if btype == "text":
            texts.append(str(block.get("text", "")))
        elif btype == "thinking":
            out.append(_event(role, str(block.get("thinking", "")) or "(thinking)", f"cc:{uid}:{i}", ts, type="reasoning", metadata=meta))
        elif btype == "tool_use":
            out.append(_event(role, "", f"cc:{uid}:{i}", ts, tool_name=str(block.get("name") or "tool"), tool_args=block.get("input"),
                              metadata={**meta, "tool_use_id": block.get("id")}))
        elif btype == "tool_result":
            out.append(_event("tool", "", f"cc:{uid}:{i}", ts, tool_result=_blocks_text(block.get("content")),
                              metadata={**meta, "tool_use_id": block.get("tool_use_id"), "is_error": bool(block.get("is_error"))}))
    if any(t.strip() for t in texts):
        out.insert(0, _event(role, "\n".join(texts), f"cc:{uid}", ts, metadata=meta))
    return out


BOILERPLATE = ("<user_instructions>", "<environment_context>")


def codex_events(record: dict[str, Any], line: int, raw: bytes) -> list[dict[str, Any]]:
    """One Codex CLI rollout record as events (keys: line number + hash of the line)."""
    key = f"codex:{line}:{hashlib.sha256(raw).hexdigest()[:16]}"
    ts = record.get("timestamp")
    payload: dict[str, Any] = record["payload"] if isinstance(record.get("payload"), dict) else {}
    ptype = payload.get("type")
    if record.get("type") != "response_item":
        return [_raw_event(_type("codex", record.get("type")), raw, key, ts)]
    if ptype == "message":
        text = _blocks_text(payload.get("content"))
        if not text:
            return []
        boiler = text.lstrip().startswith(BOILERPLATE)  # journaled, kept out of search
        return [_event(str(payload.get("role") or "user"), text, key, ts, type="context" if boiler else None)]
    if ptype == "function_call":
        args = payload.get("arguments")
        try:
            args = json.loads(args) if isinstance(args, str) else args
        except ValueError:
            pass
        return [_event("assistant", "", key, ts, tool_name=str(payload.get("name") or "tool"), tool_args=args,
                       metadata={"call_id": payload.get("call_id")})]
    if ptype == "function_call_output":
        output = payload.get("output")
        return [_event("tool", "", key, ts, tool_result=output if isinstance(output, str) else json.dumps(output, ensure_ascii=False),
                       metadata={"call_id": payload.get("call_id")})]
    return [_raw_event(_type("codex", ptype), raw, key, ts)]


def transcript_events(lines: Iterator[tuple[int, bytes]]) -> tuple[list[dict[str, Any]], str, int]:
    """Events of new transcript lines, the harness they came from, and how many lines were skipped."""
    events: list[dict[str, Any]] = []
    agent, skipped = "claude-code", 0
    for line, raw in lines:
        try:
            record = json.loads(raw)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            skipped += 1
            continue
        if "payload" in record and record.get("type") in ("session_meta", "response_item", "event_msg", "turn_context"):
            agent = "codex"
            events.extend(codex_events(record, line, raw))
        else:
            events.extend(claude_events(record, line, raw))
    return events, agent, skipped


def hook_events(hook: dict[str, Any]) -> list[dict[str, Any]]:
    """Events from what a hook itself carries (no transcript to read)."""
    key = "hook:" + hashlib.sha256(json.dumps(hook, sort_keys=True, default=str).encode()).hexdigest()[:24]
    if isinstance(hook.get("prompt"), str) and hook["prompt"]:
        return [_event("user", hook["prompt"], key)]
    if hook.get("tool_name"):
        result = hook.get("tool_response")
        return [_event("tool", "", key, tool_name=str(hook["tool_name"]), tool_args=hook.get("tool_input"),
                       tool_result=result if isinstance(result, str) or result is None else json.dumps(result, ensure_ascii=False))]
    if isinstance(hook.get("input-messages"), list):  # Codex `notify`
        turn = str(hook.get("turn-id") or key)
        out = [_event("user", str(m), f"codex-notify:{turn}:{i}") for i, m in enumerate(hook["input-messages"]) if m]
        if hook.get("last-assistant-message"):
            out.append(_event("assistant", str(hook["last-assistant-message"]), f"codex-notify:{turn}:assistant"))
        return out
    name = str(hook.get("hook_event_name") or hook.get("type") or "hook")
    return [_event("system", json.dumps(hook, ensure_ascii=False, default=str), key, type=_type("hook", name))]


def codex_rollout(thread_id: str, codex_home: Path) -> Path | None:
    """The rollout file of a Codex session (`sessions/YYYY/MM/DD/rollout-…-<id>.jsonl`), newest first."""
    if not thread_id or not re.fullmatch(r"[A-Za-z0-9-]{8,64}", thread_id):
        return None
    found = sorted((codex_home / "sessions").glob(f"*/*/*/rollout-*{thread_id}.jsonl"), reverse=True)
    return found[0] if found else None


def capture_hook(hook: Any, client: CaptureClient, home: Path, agent: str | None = None, codex_home: Path | None = None) -> Report:
    """Turn one hook payload into batches, send them (or spool them), advance the cursor.

    Codex's `notify` payload names no transcript; its rollout file is found by thread id."""
    if not isinstance(hook, dict):
        raise InvalidInput("the hook input must be a JSON object")
    raw_session = hook.get("session_id") or hook.get("thread-id") or hook.get("sessionId")
    if not raw_session:
        raise InvalidInput("the hook input has no session_id")
    cwd = hook.get("cwd") if isinstance(hook.get("cwd"), str) else None
    settings: dict[str, Any] = {"cwd": cwd} if cwd else {}
    project = project_of(cwd)
    if project:
        settings.update(project=project, tags=[f"project:{project}"])
    head: dict[str, Any] = {"session": session_id_of(raw_session), "settings": settings or None}
    path = hook.get("transcript_path")
    if not path and hook.get("thread-id") and codex_home is not None:
        path = str(codex_rollout(str(hook["thread-id"]), codex_home) or "")
    if isinstance(path, str) and path and Path(path).expanduser().is_file():
        main = Path(path).expanduser()
        report = Report()
        found_agent = agent
        # Claude Code keeps sub-agent transcripts in <session>/subagents/*.jsonl beside the
        # main one; their records carry their own uuids, so they join the same session.
        for file in [main, *sorted(main.with_suffix("").glob("subagents/*.jsonl"))]:
            with Transcript(file, home) as transcript:
                events, detected, skipped = transcript_events(transcript.new_lines())
                found_agent = found_agent or detected
                if file != main:
                    for event in events:
                        event.setdefault("metadata", {})["subagent_file"] = file.name
                _merge(report, _send(client, head, events, found_agent))
                transcript.commit()  # posted or spooled: either way it is safe on disk
            if skipped:
                report.errors.append(f"{file.name}: {skipped} unreadable transcript lines skipped")
        return report
    return _send(client, head, hook_events(hook), agent or ("codex" if "thread-id" in hook else "claude-code"))


def _merge(into: Report, part: Report) -> None:
    for name in ("posted", "stored", "duplicates", "spooled", "replayed", "dead"):
        setattr(into, name, getattr(into, name) + getattr(part, name))
    into.corrupt += part.corrupt
    into.errors += part.errors


def _send(client: CaptureClient, head: dict[str, Any], events: list[dict[str, Any]], agent: str) -> Report:
    batch = {**{k: v for k, v in head.items() if v is not None}, "agent": agent, "events": events}
    return client.send(split(batch))
