"""The write path: every message a client, harness, import or CLI hands over, validated
once (`messages.normalise_message`), journaled (fsynced) as one group commit, then indexed.

If indexing fails the write still stands — the journal holds it — and the indexer
catches up from its cursor later (DESIGN.md, principle 2): a write never fails because
the database is briefly down.
"""

from __future__ import annotations

import logging
from collections.abc import Container
from dataclasses import replace
from datetime import UTC, tzinfo
from typing import Any

from ..errors import Conflict, InvalidInput, PalimpsestError
from ..harness.project import as_its_folder_has
from ..journal import Journal
from ..records import Event, Message, Session, check_session_id
from ..store import Store
from .indexer import Indexer, Outage
from .messages import default_key, normalise_message, session_event, words_hash

log = logging.getLogger(__name__)
SESSION_ATTRS = frozenset({"key", "agent", "channel", "title", "kind", "settings"})


class Unreachable:
    """A store that cannot be reached when a CLI write opens: every call raises
    `StoreUnavailable`, so a `Writer` over it journals and leaves the index to catch up
    (DESIGN.md, principle 2: the journal is the truth)."""

    def __init__(self, why: str) -> None:
        self.why = why

    def __getattr__(self, name: str) -> Any:
        from ..errors import StoreUnavailable

        raise StoreUnavailable(self.why)


UNIQUE_KEYS = ("cc:",)  # event keys made of a harness's record id, unique across its sessions (Claude Code's uuids)


class Writer:
    """Journal first, index second, for one home and store."""

    def __init__(self, journal: Journal, store: Store, indexer: Indexer, zone: tzinfo | None = UTC,
                 erased: Container[str] = frozenset()) -> None:
        """`zone`: where messages are said when their time does not say (`normalise_message`); `erased`: the
        sessions an operator erased (`erased.ErasedSessions`), whose events are refused."""
        self.journal, self.store, self.indexer, self.zone, self.erased = journal, store, indexer, zone, erased
        self.outage = indexer.outage if indexer is not None else Outage("indexing")  # (no indexer: a store away from the start)

    def append(self, session: str, raw: dict[str, Any], attrs: dict[str, Any]) -> dict[str, Any]:
        """One message; without `event_key`, a content-hash key collapses a retried append (the same
        words from the same speaker; the agent and channel given with it are the session's, not part
        of the key): with `created_at`, the same message of the same time; without it, the same message
        right after itself (said again after other turns, it is a turn of its own)."""
        check_session_id(session)
        msg = normalise_message(raw, zone=self.zone)
        key = default_key(msg, said=raw.get("created_at") or None)
        repeatable = frozenset() if msg["event_key"] or raw.get("created_at") else frozenset([key])
        msg["event_key"] = msg["event_key"] or key
        result = self._journal_and_index(session, [msg], attrs, repeatable)
        event, stored = result["events"][0]
        if not stored and raw.get("event_key") is not None and words_hash(vars(event)) != words_hash(msg):
            # (found by a support bot's team: a retry of "turn-1" with other words was answered duplicate, its words dropped)
            raise Conflict(f"event_key {msg['event_key'][:80]!r} already names a different message of session "
                           f"{session[:80]!r} ({event.id}); nothing was stored: give this message a key of its own")
        return {"id": event.id, "session": session, "stored": stored, "duplicate": not stored,
                "indexed": result["indexed"], "created_at": event.created_at}

    def ingest_session(self, session: str, messages: Any, start: Any, attrs: dict[str, Any],
                       dated: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
        """A transcript in one group commit, keys by ordinal from `start` (see `Memory.ingest_session`). `dated`: an
        importer's keys of lines by position whose file said their time (each holds for that time only)."""
        check_session_id(session)
        if not isinstance(messages, list):
            raise InvalidInput("messages must be a list")
        if not isinstance(start, int) or isinstance(start, bool) or start < 0:
            raise InvalidInput("start must be a non-negative integer")
        prepared, dated = [], set(dated)
        for i, raw in enumerate(messages):
            msg = normalise_message(raw, f"message {i}", self.zone)
            if isinstance(raw, dict) and raw.get("created_at") and not msg["event_key"]:
                dated.add(default_key(msg, start + i))  # its position's key holds for its time only
            msg["event_key"] = msg["event_key"] or default_key(msg, start + i)
            prepared.append(msg)
        pairs = self._once_across_sessions(session, prepared, attrs, frozenset(dated))
        return {"session": session, "stored": sum(1 for _, s in pairs["events"] if s),
                "duplicates": sum(1 for _, s in pairs["events"] if not s), "ids": [e.id for e, _ in pairs["events"]],
                "indexed": pairs["indexed"]}

    def capture(self, session: str, events: Any, attrs: dict[str, Any]) -> dict[str, Any]:
        """A harness's batch for one session, deduplicated by `event_key` under the session's lock."""
        check_session_id(session)
        if not isinstance(events, list):
            raise InvalidInput("events must be a list")
        prepared = []
        for i, raw in enumerate(events):
            msg = normalise_message(raw, f"event {i}", self.zone)
            msg["event_key"] = msg["event_key"] or default_key(msg, said=raw.get("created_at") or None if isinstance(raw, dict) else None)
            prepared.append(msg)
        return self._once_across_sessions(session, prepared, attrs)

    def _once_across_sessions(self, session: str, msgs: list[dict[str, Any]], attrs: dict[str, Any],
                              dated: frozenset[str] = frozenset()) -> dict[str, Any]:
        """Journal and index `msgs`, but not a message another session holds under a key unique
        across sessions (`UNIQUE_KEYS`: a harness's own record id). A Claude Code session
        resumed starts a file of its own that repeats the lines of the session it resumes, with
        their uuids: they were stored a second time under the new session (a new user's
        `--resume`, every earlier word twice in search). Each is answered as a duplicate, under
        the id the other session holds; the other session's journal keeps it."""
        keys = [m["event_key"] for m in msgs if m.get("type", "message") == "message" and m["event_key"].startswith(UNIQUE_KEYS)]
        try:
            held = self.store.keys_elsewhere(session, keys) if keys else {}
        except PalimpsestError as exc:  # a store away: journaled as before, the index catches up later
            self.outage.failed("resumed lines not checked for %s: %s", session, exc)
            held = {}
        if not held:
            return self._journal_and_index(session, msgs, attrs, dated=dated)

        def holder(key: str) -> str | None:  # the record's own message, or one of its parts ("cc:<uuid>:toolUseResult")
            return held.get(key) or held.get(":".join(key.split(":", 2)[:2]))

        elsewhere = [holder(m["event_key"]) for m in msgs]
        result = self._journal_and_index(session, [m for m, h in zip(msgs, elsewhere) if h is None], attrs, dated=dated)
        written = iter(result["events"])
        events = [(Event(id=h, session=session, role=m.get("role"), event_key=m["event_key"]), False) if h is not None
                  else next(written) for m, h in zip(msgs, elsewhere)]
        return {**result, "events": events}

    def full(self, m: Message) -> dict[str, Any]:
        """A message with its capped fields restored from its journal line (and, for an
        import that cut a record, from the source file). On a store several homes share, a
        row written through another home is restored from that home's journal when this
        machine can read it; else the index's copy comes back, saying so (`note`)."""
        from ..errors import NotFound

        try:
            event: Event | None = self.journal.get(m.session, m.journal_line, m.journal_offset)
        except NotFound:
            event = None
        read_from = str(self.journal.path(m.session))  # (a home moved since: not the folder the row names)
        if event is None or event.id != m.id:
            if self.journal.wrote(m.journal_id, m.journal_path):
                raise NotFound(f"journal line {m.journal_line} of {m.session!r} does not hold {m.id!r}")
            event, read_from = Journal.read_at(m.journal_path, m.journal_line, m.journal_offset), m.journal_path
            if event is None or event.id != m.id:  # another home's journal, on another machine
                full = m.to_dict()
                full["note"] = (f"written through another home (journal {m.journal_path}), which this machine cannot "
                                "read: the index's copy" + (", capped at the index's field cap" if m.truncated else ""))
                return full
        full = m.to_dict()
        full.update(content=event.content, tool_result=event.tool_result, tool_args=event.tool_args, journal_path=read_from)
        meta = event.metadata or {}
        if meta.get("source_path") and meta.get("source_truncated"):
            from ..importers import recover_from_source

            full.update(recover_from_source(str(meta["source_path"]), meta.get("source_line"), m.event_key))
        return full

    def _journal_and_index(self, session: str, msgs: list[dict[str, Any]], attrs: dict[str, Any],
                           repeatable: frozenset[str] = frozenset(), dated: frozenset[str] = frozenset()) -> dict[str, Any]:
        unknown = set(attrs) - SESSION_ATTRS
        if unknown:
            raise InvalidInput(f"unknown session attributes: {sorted(unknown)}")
        if session in self.erased:  # (409: a capture client sets the batch aside in dead/, never sends it again)
            raise Conflict(f"session {session[:80]!r} was erased (palimpsest erase): its events are not taken again")
        head = self._changed(session, session_event(self._settled(attrs)))
        if head is not None and msgs and self._nothing_new(session, msgs, repeatable | dated):
            # attributes come with news: a re-import of a captured session (its `key` and `source_path`, which capture
            # never sets) stored nothing and still moved the session's last activity to the import's time (a new user)
            head = None
        if head is not None:  # a change back to earlier values is stored under its key and the line (`Journal.append`)
            repeatable = repeatable | {head["event_key"]}
        pairs = self.journal.append(session, ([head] if head else []) + msgs, repeatable, dated)
        indexed = self._index_after_write(session, [e for e, stored in pairs if stored])
        if indexed:
            pairs = self._as_stored(session, pairs)
        return {"events": pairs[1:] if head else pairs, "indexed": indexed}

    def _settled(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """`attrs` with the project its folder has here (`harness.project.as_its_folder_has`). Here, where import and
        capture meet: capture's client cannot ask the store, and capture of a rollout an import had given
        `project:mei-lab/docsnap-vit` stayed `project:docsnap-vit` (found in review)."""
        settings = attrs.get("settings")
        if not isinstance(settings, dict):
            return attrs
        return {**attrs, "settings": as_its_folder_has(settings, self._projects_of_folder)}

    def _projects_of_folder(self, cwd: str) -> list[str]:
        try:
            return self.store.projects_of_folder(cwd)
        except PalimpsestError:  # the store is away: the project as said (as `_changed` journals what is said)
            return []

    def _nothing_new(self, session: str, msgs: list[dict[str, Any]], maybe_new: frozenset[str]) -> bool:
        """Every message is one the session's journal holds (a key that may be stored under another, a repeat or
        another day's line, counts as new)."""
        keys = [m["event_key"] for m in msgs]
        return not maybe_new.intersection(keys) and len(self.journal.holds(session, keys)) == len(set(keys))

    def _changed(self, session: str, head: dict[str, Any] | None) -> dict[str, Any] | None:
        """The session event when it changes what the session holds; None when every attribute it names is already
        the session's. (Its key is the attributes' hash, so a value named again after another — "#a", "#b", "#a": a
        thread where alice, bob, then alice post — had been a duplicate, and dropped: it is journaled as a repeat.)"""
        if head is None:
            return None
        try:
            current = self.store.get_session(session)
        except PalimpsestError:  # the store is away: journaled as said (the index settles it when it is back)
            return head
        if current is not None and all(getattr(current, k, None) == v for k, v in head["metadata"].items()):
            return None
        if current is not None:
            _keeps_its_channel(current, head["metadata"])
        return head

    def _as_stored(self, session: str, pairs: list[tuple[Event, bool]]) -> list[tuple[Event, bool]]:
        """On a store several homes share, an event another home already wrote (its
        `event_key`) is that home's row: reported as a duplicate under the id and time the index
        holds, not under an id no search will return — whether this home's journal took the event
        now or had taken it before (a retry through another server). (The journal keeps its copy.)"""
        keys = [e.event_key for e, _ in pairs if e.type == "message" and e.event_key]
        try:
            held = self.store.ids_by_key(session, keys) if keys else {}
            other = {e.id: held[e.event_key] for e, _ in pairs if e.event_key in held and held[e.event_key] != e.id}
            rows = {m.id: m for m in self.store.get_messages(sorted(set(other.values())))} if other else {}
        except PalimpsestError as exc:  # journaled and indexed: a store gone since is no failed write (it answered 503)
            self.outage.failed("ids of %s not checked: %s", session, exc)
            return pairs
        out = []
        for event, stored in pairs:
            first = rows.get(other.get(event.id, ""))
            if first is not None:
                event, stored = replace(event, id=first.id, created_at=first.created_at), False
            out.append((event, stored))
        return out

    def _index_after_write(self, session: str, fresh: list[Event]) -> bool:
        try:
            line, offset = self.store.cursor(session, self.journal.id)
            if fresh and fresh[0].offset == offset:
                self.indexer.index_events(session, fresh, (line, offset))
            else:
                self.indexer.index_session(session)
            self.outage.recovered()
            return True
        except Exception as exc:
            self.outage.failed("indexing %s deferred: %s", session, exc)
            return False


def _keeps_its_channel(current: Session, said: dict[str, Any]) -> None:
    """A session's channel is the one its first write naming a channel gave; a write naming another is refused, on
    every path (append, ingest, capture). Found by a support bot's team, a channel per customer on one shared server:
    an append to Wonka's session naming channel "initech" moved the whole conversation — Initech's recall showed
    Wonka's lines, Wonka's found none — answered `stored: true`. (The agent may change: by default agents are one
    user's harnesses, not whose the words are — `fact_owners`.)"""
    given = said.get("channel")
    if current.channel is not None and given is not None and given != current.channel:
        raise Conflict(f"session {current.id[:80]!r} is of channel {current.channel[:80]!r}; a write naming channel "
                       f"{given[:80]!r} is refused (a session's channel is the first one written): write it to a "
                       "session of its own")
