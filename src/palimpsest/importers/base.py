"""What every importer shares: reading a source, the plan it becomes, and writing the plan.

An importer never writes. It turns a source into a `Plan` — sessions, each with its
attributes and its messages in order, every message remembering where in the source it
came from — plus the problems it found. `write_plan` then validates every message with
the library's own rules (`normalise_message`), so an error names a source line, and
writes each session through `Memory.ingest_session` in chunks (one group commit each).

Two policies for bad input, chosen per format (`Plan.all_or_nothing`):
- line-oriented files (messages JSONL, OpenAI JSONL, Claude Code, Codex) import every
  valid line and report the others by line number: their lines are independent, a
  harness file being written has a torn last line as a matter of course, and since
  event keys are stable, fixing the file and importing again adds exactly what was
  missing; a JSON file holding a list of chat messages is read the same way, each
  message reported by its place in the list;
- whole documents (the evaluation sets, a Palimpsest export) import nothing when
  anything is wrong: a benchmark or a backup imported in part would be silently
  different from its source.
"""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, PalimpsestError
from ..harness import READERS, claude_code, detect
from ..harness.common import Context, decoded, glued, keyed, repaired
from ..harness.project import project_of_session
from ..ingest.indexer import utf16_len
from ..ingest.messages import normalise_message
from ..records import check_session_id, content_hash, iso

Progress = Callable[[int, int], None]
CHUNK = 1000
# room left in an event for its metadata and JSON framing when a payload is shortened
SIZE_MARGIN = 64 * 1024


@dataclass
class Problem:
    """One thing wrong with the input: where (a line number when there is one) and what."""

    where: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class SessionPlan:
    attrs: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Plan:
    """What a source becomes: sessions in order of first appearance, and what went wrong."""

    format: str
    all_or_nothing: bool
    sessions: dict[str, SessionPlan] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    dated: set[str] = field(default_factory=set)  # keys of lines by position whose file said their time (`Journal.append`)
    parts: dict[int, list[tuple[Any, bytes]]] = field(default_factory=dict)  # a line's records, each with the bytes it is keyed by

    def session(self, session_id: str) -> SessionPlan:
        return self.sessions.setdefault(session_id, SessionPlan())

    def problem(self, where: str, message: str, line: int | None = None) -> None:
        self.problems.append(Problem(where, message, line))


@dataclass
class ImportReport:
    """The outcome of one import. `ok` is False when any input was reported as bad."""

    path: str
    format: str
    sessions: list[str] = field(default_factory=list)
    stored: int = 0
    duplicates: int = 0
    records_kept: int = 0
    truncated: int = 0
    ids_reassigned: int = 0
    decisions_replayed: int = 0
    indexed: bool = True
    skipped: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    vaults: list[dict[str, Any]] = field(default_factory=list)  # vaults the import restored and indexed: name, counts

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ok"] = self.ok
        return d


class ImportRejected(InvalidInput):
    """Nothing was imported; `report.problems` lists why (line numbers where known)."""

    def __init__(self, report: ImportReport) -> None:
        self.report = report
        shown = "; ".join(str(p) for p in report.problems[:10])
        more = f" (and {len(report.problems) - 10} more)" if len(report.problems) > 10 else ""
        super().__init__(f"{report.path}: nothing was imported: {shown}{more}")


# -- reading -------------------------------------------------------------------
MAX_SOURCE_BYTES = 4 << 30  # a file to import, or what its gzip unpacks to: 4 GiB (a year of one harness's transcripts is ~1 GiB)


def read_source(path: str | Path, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of a regular file, gunzipped when it is gzip, up to `limit` bytes either
    way; an empty file is refused. `/dev/zero` grew an import to 20 GB before the kernel
    killed it, a FIFO hung it, and a 4 MB gzip of zeros unpacked to 1 GB."""
    try:
        if not Path(path).is_file():
            raise InvalidInput(f"{path} is not a regular file")
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as g:
                data = g.read(limit + 1)
        except (OSError, EOFError) as exc:
            raise InvalidInput(f"{path}: broken gzip file: {exc}") from None
    if len(data) > limit:
        raise InvalidInput(f"{path} holds more than {limit >> 20} MiB; split it to import it")
    # a byte-order mark, as editors on Windows save UTF-8: an export saved so was read as a messages file, its
    # system journals imported as chat sessions (found by a new user)
    data = data.removeprefix(b"\xef\xbb\xbf")
    if not data.strip():
        raise InvalidInput(f"{path} is empty; nothing to import")
    return data


def decode_document(data: bytes, plan: Plan) -> Any:
    """Parse a whole-document JSON source; problems (with line numbers) go to the plan."""
    text = _decoded(data, plan)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        plan.problem(f"line {exc.lineno}", f"not JSON: {exc.msg} (column {exc.colno})", exc.lineno)
        return None


def iter_lines(data: bytes, plan: Plan) -> Iterator[tuple[int, Any]]:
    """(line number, parsed object) of each non-blank JSONL line; bad lines become problems.
    A last line without its newline that does not parse is a torn tail (a file still being
    written): skipped and counted, not an error. A harness line holding several records
    (`harness.common.glued`) gives each, under its line's number; the bytes each is keyed by
    are in `plan.parts`."""
    lines = data.split(b"\n")
    last = len(lines)
    for n, raw in enumerate(lines, 1):
        raw = raw.rstrip(b"\r")
        if not raw.strip():
            continue
        text = _decoded(raw, plan)
        try:
            records = [json.loads(text)]
        except json.JSONDecodeError as exc:
            if n == last and not data.endswith(b"\n") and plan.format in ("claude-code", "codex", "qwen-code"):
                plan.skipped["torn last line"] += 1
                continue
            found, torn = glued(text, detect) if plan.format in READERS else ([], True)
            if not found:
                plan.problem(f"line {n}", f"not JSON: {exc.msg} (column {exc.colno})", n)
                continue
            if torn:
                plan.skipped["torn lines a resumed session wrote on (their record read, the fragment left)"] += 1
            else:
                plan.skipped["lines of records that lost their newline (each read)"] += 1
            records = [_repaired(record, text, plan) for record, _ in found]
            if len(records) > 1:  # (read again as the line it is, each would have had the line's key)
                plan.parts[n] = [(r, b) for r, (_, b) in zip(records, keyed(found, lines[n - 1] + b"\n"))]
            yield from ((n, record) for record in records)
            continue
        yield n, _repaired(records[0], text, plan)


def _repaired(record: Any, text: str, plan: Plan) -> Any:
    if plan.format in READERS and "\\ud" in text.lower():  # as capture reads the same lines (`harness.common.repaired`)
        record, cut = repaired(record)
        if cut:  # (an escaped emoji, a whole pair, is no repair: "0 characters cut in half" was said of 206 files)
            plan.skipped["characters cut in half (lone surrogates) kept as U+FFFD"] += cut
    return record


def _decoded(data: bytes, plan: Plan) -> str:
    """`data` as text (`harness.common.decoded`), a line read with U+FFFD counted."""
    text, recoded = decoded(data)
    if recoded:
        plan.skipped["lines with bytes not UTF-8 kept with U+FFFD in their place"] += 1
    return text


def line_bytes(data: bytes, line: int) -> bytes | None:
    """Line `line` (from 1) of `data`, without its line break."""
    lines = data.split(b"\n")
    if not 1 <= line <= len(lines):
        return None
    return lines[line - 1].rstrip(b"\r")


# -- building messages -----------------------------------------------------------
def safe_session_id(name: str) -> str:
    """A valid session id from a file name or a foreign id (other characters become '-')."""
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c in "._:@+=-") else "-" for c in name)
    cleaned = cleaned.lstrip("._:@+=-").replace("..", "-")[:200] or "imported"
    return check_session_id(cleaned)


def file_stem(path: str) -> str:
    """A file's name without `.jsonl`: the session id when its records name none."""
    return path.rsplit("/", 1)[-1].removesuffix(".jsonl")


def file_time(path: str | Path | None) -> str | None:
    try:
        return iso(datetime.fromtimestamp(Path(path).stat().st_mtime).astimezone()) if path else None
    except OSError:
        return None


def plan_harness_file(fmt: str, label: str, records: Iterable[tuple[int, Any]], path: str, session: str | None,
                      agent: str | None, fallback_time: str | None, raw_of: Callable[[int, Any], bytes]) -> Plan:
    """One harness transcript file (Claude Code, Codex) as one session, every record read
    by the harness reader of `fmt` (`raw_of(line, record)`: the line's bytes, which the
    reader may key events by); a record the reader refuses is reported by its line. A file
    with no record of the format is refused; one where nothing was said (no message, records
    only) makes no session."""
    plan = Plan(fmt, all_or_nothing=False)
    ctx = Context(path, last_ts=fallback_time)
    messages: list[dict[str, Any]] = []
    known = 0
    for line, rec in records:
        if not isinstance(rec, dict):
            plan.problem(f"line {line}", f"expected an object, got {type(rec).__name__}", line)
            continue
        known += READERS[fmt].looks_like(rec)
        try:
            parts = READERS[fmt].convert(rec, line, ctx, raw_of(line, rec))
        except InvalidInput as exc:  # a message whose content is no text (`"content": 42`)
            plan.problem(f"line {line}", str(exc), line)
            continue
        messages.extend({**part, "_where": f"line {line}", "_line": line} for part in parts)
    if known and not any(m["type"] == "message" for m in messages):
        # a rollout holding only its session_meta had become a session with no message and no title, listed first by
        # `sessions` (its last activity the import's time: found by a Codex user); importing it again once it holds a
        # turn stores these records then, under the same keys
        plan.skipped["transcripts where nothing was said: no session made"] += 1
        return plan
    plan.skipped.update(f"kept, not indexed: {m['metadata']['record_type']}" for m in messages if m["type"] == "source_record")
    sp = plan.session(session or safe_session_id(ctx.session_id or file_stem(path)))
    settings = {**ctx.settings, "source_path": path}
    project = project_of_session(settings)  # as capture attributes a session (an imported one had no project)
    if project:
        settings.update(project=project, tags=[f"project:{project}"])
    sp.attrs = {"agent": agent or fmt, "key": ctx.session_id, "title": ctx.title, "settings": settings}
    if fmt == "claude-code" and claude_code.is_subagent_file(path):
        # a sub-agent's transcript joins its session: the main transcript's settings are the session's (its own
        # `source_path` and title, written before the main file's at every import, had journaled two session events
        # per re-import and moved the session's last activity to the import's time: found by a new user)
        sp.attrs = {"agent": agent or fmt, "key": ctx.session_id}
    sp.messages = messages
    if not known:  # nothing here is the format's: refuse rather than keep foreign lines as records
        plan.all_or_nothing = True
        plan.problem("file", f"no {label} record found; is --format right?")
    return plan


# -- writing ----------------------------------------------------------------------
def write_plan(memory: Any, plan: Plan, path: str, progress: Progress | None = None) -> ImportReport:
    """Validate every message of the plan, then write each session. Raises `ImportRejected`
    (nothing written) when the plan is all-or-nothing and anything is wrong."""
    report = ImportReport(path=path, format=plan.format, skipped=dict(plan.skipped))
    limit = memory.settings.max_event_bytes - SIZE_MARGIN
    ready: dict[str, list[dict[str, Any]]] = {}
    for session, sp in plan.sessions.items():
        ready[session] = _prepare(session, sp.messages, limit, plan, report, memory.writer.zone)
    plan.problems.sort(key=lambda p: (p.line is None, p.line or 0))
    report.problems = plan.problems
    report.sessions = [s for s, msgs in ready.items() if msgs]
    if plan.problems and plan.all_or_nothing:
        raise ImportRejected(report)
    total, done = sum(len(m) for m in ready.values()), 0
    for session, msgs in ready.items():
        for start in range(0, len(msgs), CHUNK):
            chunk = msgs[start:start + CHUNK]
            result = memory.writer.ingest_session(session, chunk, 0, plan.sessions[session].attrs, dated=plan.dated)
            report.stored += result["stored"]
            report.duplicates += result["duplicates"]
            report.indexed = report.indexed and result["indexed"]
            done += len(chunk)
            if progress:
                progress(done, total)
    report.records_kept = sum(1 for msgs in ready.values() for m in msgs if m["type"] != "message")
    return report


def _prepare(session: str, raws: list[dict[str, Any]], limit: int, plan: Plan, report: ImportReport, zone: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: Counter[str] = Counter()
    for raw in raws:
        where, line = raw.pop("_where", "message"), raw.pop("_line", None)
        said = bool(raw.get("created_at"))
        try:
            msg = normalise_message(raw, where, zone)  # (the writer's zone: a wall time without an offset keeps its day)
        except PalimpsestError as exc:
            plan.problem(where, str(exc).removeprefix(f"{where}: "), line)
            continue
        if msg["event_key"] is None:
            # the n-th occurrence of this exact message in the session: stable when other
            # lines are added, removed or fixed, and true repeats still both import
            h = content_hash(msg["role"], msg["content"], msg["tool_name"], msg["tool_args"], msg["tool_result"])
            seen[h] += 1
            msg["event_key"] = f"imp:{seen[h]}:{h}"
            if said:  # another day's file of the same session, opening with the same lines, is its own
                plan.dated.add(msg["event_key"])
        if too_big(msg, limit):
            if "source_path" not in msg["metadata"]:
                plan.problem(where, f"message of about {_size(msg):,} bytes exceeds the event size limit (PALIMPSEST_MAX_EVENT_BYTES)", line)
                continue
            shorten(msg, limit)
            report.truncated += 1
        out.append(msg)
    return out


def _size(msg: dict[str, Any]) -> int:
    return len(json.dumps(msg, ensure_ascii=False).encode("utf-8", errors="replace"))


def too_big(msg: dict[str, Any], limit: int) -> bool:
    # cheap bound first: a character takes at most 6 bytes in JSON (\u escapes)
    rough = len(msg["content"]) + len(msg["tool_result"] or "") + (len(str(msg["tool_args"])) if msg["tool_args"] is not None else 0)
    return rough * 6 > limit and _size(msg) > limit


_CUT = "\n[… cut here to fit one event: the whole is in the source file (get-full reads it) …]\n"


def shorten(msg: dict[str, Any], limit: int) -> None:
    """Cut the payload of a message so it fits in one event, from its middle; the source keeps the whole of it
    (`metadata.source_truncated`, recovered by `recover_from_source`; `metadata.source_lengths`, the lengths it has)."""
    if msg["tool_args"] is not None and len(json.dumps(msg["tool_args"], ensure_ascii=False)) > limit // 4:
        preview = json.dumps(msg["tool_args"], ensure_ascii=False)[: limit // 8]
        msg["tool_args"] = {"_truncated": True, "preview": preview}
    whole = {name: utf16_len(msg[name]) for name in ("content", "tool_result") if msg[name]}
    for _ in range(20):
        size = _size(msg)
        if size <= limit:
            break
        name = "content" if len(msg["content"]) >= len(msg["tool_result"] or "") else "tool_result"
        value = msg[name]
        keep = max(0, int(len(value) * (limit / size) * 0.9) - 1 - len(_CUT))
        # its start and its end (where a log says what failed), the middle cut out: the end had been lost to search
        msg[name] = value[: keep - keep // 4] + _CUT + value[len(value) - keep // 4:] if keep >= 8 else value[:keep]
    msg["metadata"]["source_truncated"] = True
    msg["metadata"]["source_lengths"] = {k: n for k, n in whole.items() if utf16_len(msg[k] or "") != n}  # (UTF-16, as the index counts)
