"""Export every session and journal event to JSONL, and import such an export back.

An export is the journals, not the index (the index is derived and rebuilt on import):

    {"record": "header", "format": "palimpsest-export", "version": 1, "exported_at": …}
    {"record": "session", "id": …, "key": …, "agent": …, "kind": …, "settings": {…}, …}
    {"record": "event", "id": "evt_…", "session": …, "type": …, "role": …, "content": …,
     "tool_name": …, "tool_args": …, "tool_result": …, "metadata": {…}, "created_at": …,
     "event_key": …}                          (every journal line of that session, in order)
    …
    {"record": "end", "sessions": N, "events": M}

Sessions come one after another, each followed by its events; a journal line that cannot
be read is exported as `{"record": "unreadable", "session", "line", "text"}` and counted.
The system journal (decision events: fact operations, …) follows, its records marked
`"journal": "system"`; on import its events are appended to the system journal and the
fact decisions replayed (`memory.facts.replay()`), so facts come back too.
The trailer lets an import tell a complete export from a cut one.

Importing an export is all-or-nothing: the whole file is checked first (header, trailer,
every event), then each session's events are appended to its journal in one group
commit and indexed. Event ids are preserved (the journal keeps a pre-assigned id when it
is above the session's last one), so ids quoted anywhere stay valid; an event whose id
cannot be kept (importing into a session that already has later events) gets a fresh
id and is counted in `ids_reassigned`. Event keys make a second import a no-op.
The index-only counters (access counts, last access) are not journaled and not exported.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import IO, Any

from ..erased import DOMAIN as ERASURE
from ..erased import Erased
from ..errors import InvalidInput
from ..ingest.messages import check_event_key, check_json, check_name, check_role, check_session_attrs
from ..journal import EVENT_ID_RE
from ..records import check_session_id, check_text, iso, parse_time, utcnow
from .base import ImportRejected, ImportReport, Plan, Problem, Progress

log = logging.getLogger(__name__)
FORMAT = "palimpsest-export"
VERSION = 1
EVENT_FIELDS = ("id", "session", "type", "role", "content", "tool_name", "tool_args", "tool_result", "metadata", "created_at", "event_key")


def export_memory(memory: Any, out: IO[str], progress: Progress | None = None) -> dict[str, Any]:
    """Write the export to `out`. Returns counts: sessions, events, unreadable lines."""
    journals = [(name, journal, s) for name, journal in _journals(memory) for s in journal.sessions()]
    counts = {"sessions": 0, "events": 0, "unreadable": 0}
    _write(out, {"record": "header", "format": FORMAT, "version": VERSION, "exported_at": iso(utcnow())})
    for n, (name, journal, session) in enumerate(journals, 1):
        mark = {"journal": name} if name != "sessions" else {}
        attrs = _session_attrs(memory, session) if name == "sessions" else {"id": session}
        _write(out, {"record": "session", **mark, **attrs})
        counts["sessions"] += 1
        for line, _offset, raw in journal.read_raw(session):
            try:
                event = json.loads(raw)
                if not isinstance(event, dict):
                    raise TypeError("not an object")
            except (ValueError, TypeError):
                _write(out, {"record": "unreadable", **mark, "session": session, "line": line, "text": raw.decode("utf-8", "replace")})
                counts["unreadable"] += 1
                continue
            _write(out, {"record": "event", **mark, **event})
            counts["events"] += 1
        if progress:
            progress(n, len(journals))
    _write(out, {"record": "end", "sessions": counts["sessions"], "events": counts["events"]})
    return counts


def _journals(memory: Any) -> list[tuple[str, Any]]:
    """The journals of a home: the sessions', and the system journal of decisions."""
    return [("sessions", memory.journal), ("system", memory.decisions.journal)]


def _session_attrs(memory: Any, session: str) -> dict[str, Any]:
    try:
        s = memory.store.get_session(session)
    except Exception:
        s = None
    return s.to_dict() if s else {"id": session}


# characters other readers take for line breaks (Python's `splitlines`, editors, JavaScript before ES2019), escaped
# inside the JSON strings they can only appear in: a hand edit read with `splitlines` had torn records apart
_BREAKS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})  # (json escapes C0 itself)


def _write(out: IO[str], record: dict[str, Any]) -> None:
    out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")).translate(_BREAKS) + "\n")


def looks_like(rec: Any) -> bool:
    return isinstance(rec, dict) and rec.get("record") == "header" and rec.get("format") == FORMAT


Batches = dict[tuple[str, str], list[dict[str, Any]]]


def plan_export(records: Iterable[tuple[int, Any]], max_event_bytes: int) -> tuple[Plan, Batches]:
    """Check a whole export; returns the plan (its problems) and the events per (journal, session)."""
    plan = Plan("export", all_or_nothing=True)
    events: Batches = {}
    header = end = None
    count = 0
    for line, rec in records:
        kind = rec.get("record") if isinstance(rec, dict) else None
        if kind == "header":
            header = rec
            if rec.get("format") != FORMAT or rec.get("version") != VERSION:
                plan.problem(f"line {line}", f"not a {FORMAT} version {VERSION} header", line)
        elif kind == "event":
            journal = rec.get("journal", "sessions")
            try:
                if journal not in ("sessions", "system"):
                    raise InvalidInput(f"unknown journal {str(journal)[:40]!r}")
                event = check_event(rec, max_event_bytes)
            except InvalidInput as exc:
                plan.problem(f"line {line}", str(exc), line)
                continue
            events.setdefault((journal, event["session"]), []).append(event)
            count += 1
        elif kind == "unreadable":
            plan.skipped["unreadable journal lines in the export"] += 1
        elif kind == "end":
            end = rec
        elif kind != "session":
            plan.problem(f"line {line}", f"unknown record {str(kind)[:40]!r}", line)
    if header is None:
        plan.problem("header", f"missing: this is not a {FORMAT} file")
    if end is None:
        plan.problem("end", "the trailer is missing: the export was cut short")
    elif end.get("events") != count and not plan.problems:
        plan.problem("end", f"the trailer counts {end.get('events')} events, the file holds {count}")
    return plan, events


def check_event(rec: dict[str, Any], max_event_bytes: int) -> dict[str, Any]:
    event = {k: rec.get(k) for k in EVENT_FIELDS}
    check_session_id(event["session"])
    if event["id"] is not None and (not isinstance(event["id"], str) or not EVENT_ID_RE.fullmatch(event["id"])):
        raise InvalidInput(f"event id {str(event['id'])[:40]!r} is not an evt_ id")
    if not isinstance(event["type"], str) or not event["type"]:
        raise InvalidInput("event type must be a non-empty string")
    # the writers' rules (ingest/messages.py), so an export cannot bring in what a write is refused
    check_event_key(event["event_key"] if event["event_key"] is not None else "", "event_key")
    if event["role"] is not None:
        check_role(event["role"], "role")
    event["content"] = event["content"] or ""
    for name in ("content", "tool_result"):
        check_text(event[name], name)
    check_name(event["tool_name"], "tool_name")
    event["metadata"] = event["metadata"] or {}
    if not isinstance(event["metadata"], dict):
        raise InvalidInput("metadata must be an object")
    check_json([event["tool_args"], event["metadata"]], "tool_args/metadata")
    if event["type"] == "session":
        check_session_attrs(event["metadata"])
    event["created_at"] = iso(parse_time(event["created_at"]))
    size = len(json.dumps(event, ensure_ascii=False).encode("utf-8"))
    if size > max_event_bytes:
        raise InvalidInput(f"event of {size:,} bytes exceeds the event size limit (PALIMPSEST_MAX_EVENT_BYTES)")
    return event


def write_export(memory: Any, plan: Plan, events: Batches, path: str, progress: Progress | None = None) -> ImportReport:
    events = _without_erased(memory, plan, events)
    report = ImportReport(path=path, format="export", sessions=[s for j, s in events if j == "sessions"],
                          skipped=dict(plan.skipped), problems=plan.problems)
    if plan.problems:
        raise ImportRejected(report)
    journals = dict(_journals(memory))
    if any(name == "system" for name, _ in events):
        # the parts open before their decisions arrive: a part opened afterwards would
        # restore itself on opening, and the replay below would find nothing left to count
        _ = (memory.facts, memory.tags)
    total, done = sum(len(e) for e in events.values()), 0
    for (name, session), batch in events.items():
        # one group commit per session: the journal compares a pre-assigned id with the
        # session's last id, and a batch keeps that comparison within the session
        pairs = list(zip(journals[name].append(session, batch), batch))
        theirs = _held_elsewhere(memory, session, [e for (e, stored), _ in pairs if stored]) \
            if name == "sessions" and _index(memory, session, report) else set()
        for (stored_event, stored), given in pairs:
            stored = stored and stored_event.id not in theirs
            report.stored += stored
            report.duplicates += not stored
            report.ids_reassigned += bool(stored and given["id"] and stored_event.id != given["id"])
            report.records_kept += stored and given["type"] != "message"
        done += len(batch)
        if progress:
            progress(done, total)
    if any(name == "system" for name, _ in events):
        imported = {session: {e["event_key"] for e in batch if e["type"] == "decision"}
                    for (name, session), batch in events.items() if name == "system"}
        before = _rejections(memory, imported)
        _replay(memory, report)
        _rejected(memory, report, imported, before)
    return report


def _without_erased(memory: Any, plan: Plan, events: Batches) -> Batches:
    """The export without what this home had erased since it was made (`palimpsest erase`): an export
    made before a customer's erasure would otherwise bring her sessions, facts and distilled turns back."""
    erased = Erased.of(memory.decisions)
    if not erased:
        return events
    kept: Batches = {}
    for (name, session), batch in events.items():
        if name == "sessions" and erased.session(session):
            plan.skipped["events of erased sessions"] += len(batch)
            continue
        lines = batch if (name, session) == ("system", ERASURE) else [x for x in map(erased.scrub_line, batch) if x is not None]
        plan.skipped["system journal lines about erased sessions"] += len(batch) - len(lines)
        if lines:
            kept[(name, session)] = lines
    return kept


def _index(memory: Any, session: str, report: ImportReport) -> bool:
    try:
        memory.indexer.index_session(session)
        return True
    except Exception as exc:
        log.warning("indexing %s deferred: %s", session, exc)
        report.indexed = False
        return False


def _held_elsewhere(memory: Any, session: str, events: list[Any]) -> set[str]:
    """The ids of `events` (this import journaled them) whose messages the index already held,
    written through another home: on a shared PostgreSQL, a second home importing the first
    one's export had said "154 stored, 0 already there" while the index gained nothing. This
    home's journal keeps its copy, as a write of one event through two homes does
    (`Writer._as_stored`)."""
    keys = {e.event_key: e.id for e in events if e.type == "message" and e.event_key}
    held = memory.store.ids_by_key(session, list(keys)) if keys else {}
    theirs = {m.id for m in memory.store.get_messages(sorted(set(held.values())))
              if not memory.journal.wrote(m.journal_id, m.journal_path)}
    return {keys[k] for k, i in held.items() if i in theirs}


def _rejections(memory: Any, imported: dict[str, set[str]]) -> set[str]:
    """The keys of the rejections already journaled for `imported`'s domains."""
    from ..decisions import REJECTED

    return {d.key for domain in imported for _, d in memory.decisions.read(domain) if d.op == REJECTED}


def _rejected(memory: Any, report: ImportReport, imported: dict[str, set[str]], before: set[str]) -> None:
    """A problem for each imported decision this import's replay refused (a supersede of a fact the export does not
    hold): the import had said ok while the facts' history differed from the export's (found by a new user). Not one the
    exporting home had refused already, whose rejection the export carries: a clean export's mistyped `facts settle`,
    refused where it was typed, had made every import of it exit 2 (found by an on-call team's lead)."""
    from ..decisions import REJECTED

    for domain, keys in imported.items():
        for _, d in memory.decisions.read(domain):
            if d.op == REJECTED and d.key not in before and d.meta.get("rejects") in keys:
                report.problems.append(Problem(f"{domain} decision {d.meta['rejects']}",
                                               f"not replayed: {d.meta.get('error', 'refused')}; the rest was imported"))


def _replay(memory: Any, report: ImportReport) -> None:
    """Apply the imported decisions (facts, tags, summaries, wiki) to the store; idempotent, so
    a second import or a later `replay` after a store outage finishes the job. Summaries come
    back before the `compact` jobs the import queued run: those made new leaves of the same
    messages, and the saved summaries could never be replayed after (a data steward's)."""
    try:
        done = len(memory.vaults.restored)
        report.decisions_replayed = sum(memory.replay_decisions().values())
        report.vaults = [{"vault": r.vault, "indexed": len(r.indexed), "chunks": r.chunks, "failed": len(r.errors),
                          "warnings": len(r.warnings)} for r in memory.vaults.restored[done:]]
    except Exception as exc:
        log.warning("replaying fact decisions deferred: %s", exc)
        report.indexed = False
