"""The journal: one append-only `events.jsonl` per session, the source of truth.

Every write lands here, fsynced, before anything else happens, and is acknowledged only
once durable. Appends to a session hold an exclusive `flock` on its journal, so several
processes can append to one session: under the lock the writer first catches up on lines
other processes added (their idempotency keys and the last id), then dedupes, assigns
ids, writes all lines with one `write` and one `fsync` (a batch is a group commit).

A crash mid-write leaves a last line without its newline. Whoever next takes the lock
moves those bytes aside to `events.jsonl.torn` and truncates the journal to its last
complete line; nothing acknowledged is ever in a torn tail, because acknowledgement
comes after the fsync. Readers (the indexer) take the lock shared for a moment to learn
the committed size, and read no further: a group commit still being written, which a
failed write would take back, is never indexed.

Ids are `evt_` + 19 digits of nanoseconds + 4 hex digits: monotonic within a session
(under the lock an id is always above the session's last), near time-ordered across
sessions, unique across processes thanks to the random suffix.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import math
import os
import re
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import msgspec

from .errors import Closed, InvalidInput, JournalError, NotFound, PayloadTooLarge
from .records import Event, check_session_id

JOURNAL_NAME = "events.jsonl"
JOURNAL_ID_NAME = ".journal-id"
EVENT_ID_RE = re.compile(r"^evt_[0-9]{19}[0-9a-f]{4}$")


@dataclass
class _SessionState:
    """What a process knows of one journal: how far it has read, and what it saw."""

    offset: int = 0
    lines: int = 0
    last_n: int = 0
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)  # event_key -> (line, offset)
    last_message: str = ""  # the event_key of the session's latest message event
    inode: int = 0


def event_number(event_id: str) -> int:
    return int(event_id[4:23])


class Journal:
    """All session journals under `<home>/sessions/`."""

    def __init__(self, home: Path, max_event_bytes: int = 16 * 1024 * 1024) -> None:
        self.root = Path(home) / "sessions"
        self.max_event_bytes = max_event_bytes
        self._states: dict[str, _SessionState] = {}
        self._lock = threading.Lock()  # guards the two below, held for no I/O
        self._session_locks: dict[str, threading.Lock] = {}
        self._last_n = 0
        self.closed = False  # its Memory was closed: appends raise `Closed` before writing a byte

    @cached_property
    def id(self) -> str:
        """This home's journal id: the store keeps one cursor per (journal, session), so
        several homes — servers on different machines — can index into one PostgreSQL
        without reading each other's byte offsets. Kept in `sessions/.journal-id`; a home
        that had journals before ids existed keeps the id "" its cursors were migrated to."""
        path = self.root / JOURNAL_ID_NAME
        try:
            return json.loads(path.read_text())["id"]
        except (FileNotFoundError, NotADirectoryError):
            pass
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise JournalError(f"cannot read the journal id in {path}: {exc}") from exc
        journal_id = "" if self.sessions() else f"j{secrets.token_hex(8)}"
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"id": journal_id}))
            try:
                os.link(tmp, path)  # never replaces an id another process wrote first
            except FileExistsError:
                pass
            finally:
                tmp.unlink(missing_ok=True)
            return json.loads(path.read_text())["id"]
        except OSError as exc:
            raise JournalError(f"cannot write the journal id in {path}: {exc.strerror or exc}; nothing was stored") from exc

    def wrote(self, journal_id: str | None, path: str) -> bool:
        """Whether an index row was written through this home: by the journal id the row
        records, which moves with the home (a home copied to a new laptop took its rows, whose
        paths name the old folder, for another home's); a row indexed before rows recorded
        it, by its path."""
        if journal_id is not None:
            return journal_id == self.id
        return not path or Path(path).resolve().is_relative_to(self.root.resolve())

    # -- paths ---------------------------------------------------------------
    def path(self, session: str) -> Path:
        return self.root / check_session_id(session) / JOURNAL_NAME

    def sessions(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.parent.name for p in self.root.glob(f"*/{JOURNAL_NAME}"))

    def size(self, session: str) -> int:
        try:
            return self.path(session).stat().st_size
        except FileNotFoundError:
            return 0

    # -- writing -------------------------------------------------------------
    def append(self, session: str, events: list[dict[str, Any]], repeatable: frozenset[str] = frozenset(),
               dated: frozenset[str] = frozenset()) -> list[tuple[Event, bool]]:
        """Durably append events to one session, as one group commit. Ids are assigned here;
        an event may carry a pre-assigned `id` (an import restoring an export), kept only
        if it is above the session's last id, else replaced by a fresh one.

        Returns each event with `True` if stored, `False` if its `event_key` was already in
        the journal (the stored event is returned then). A key in `repeatable` (a message's
        content, with no time said) is a duplicate only of the session's latest message — a
        retried append —; said again after other turns ("ok" on Monday and on Friday) it is
        stored, under the key with `@<line>` added. A key in `dated` (a transcript's line by its
        position, with the time it was said) is a duplicate only of an event said at the same
        time: another day's transcript whose first line is the same "Standup: blockers?" is
        stored, under the key with `~<its time's hash>` added. Raises `JournalError` when the bytes
        could not be made durable; nothing of the batch is then acknowledged or kept.
        """
        if self.closed:
            raise Closed()
        path = self.path(session)
        _ = self.id  # settled before the first journal exists (a home with journals and no id is an old one)
        if not path.exists():  # a refusal must not leave an empty journal behind (the check below is the authority)
            self._check_sizes(session, events)
        with self._session_lock(session):  # one session's writer stuck on its flock holds no other session
            self._ensure_dir(path.parent)
            fd = self._open(path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                state = self._catch_up(session, fd, repair=True)
                return self._write_batch(session, fd, state, events, repeatable, dated)
            finally:
                os.close(fd)  # closing releases the flock

    def _write_batch(self, session: str, fd: int, state: _SessionState, events: list[dict[str, Any]],
                     repeatable: frozenset[str], dated: frozenset[str] = frozenset()) -> list[tuple[Event, bool]]:
        out: list[tuple[Event, bool]] = []
        chunks: list[bytes] = []
        pending: dict[str, Event] = {}
        offset, line = state.offset, state.lines
        own_n = state.last_n
        last_message = state.last_message
        suffixes = secrets.token_hex(2 * len(events))  # one read of the random source per batch
        for i, raw in enumerate(events):
            key = raw["event_key"]
            if key in repeatable and (key in state.keys or key in pending):
                if last_message.split("@")[0] == key:
                    key = last_message  # a retry: of the latest message
                else:  # said again after other turns: a turn of its own, under a key no event has (an import keeps others' keys)
                    n = line + 1
                    while f"{key}@{n}" in state.keys or f"{key}@{n}" in pending:
                        n += 1
                    key = f"{key}@{n}"
                    raw = {**raw, "event_key": key}
            held = None
            if key in dated and (key in state.keys or key in pending):
                held = pending.get(key) or self._find_key(session, state, key)
                if held.created_at != raw.get("created_at"):  # the same line of another day's transcript: its own
                    key, held = f"{key}~{hashlib.sha256(str(raw.get('created_at')).encode()).hexdigest()[:12]}", None
                    raw = {**raw, "event_key": key}
            if key in state.keys or key in pending:
                out.append((held or pending.get(key) or self._find_key(session, state, key), False))
                continue
            given = raw.get("id")
            if isinstance(given, str) and EVENT_ID_RE.fullmatch(given) and event_number(given) > own_n:
                # a pre-assigned id (restoring an export) is kept when it keeps the session monotonic
                own_n, event_id = event_number(given), given
                self._next_n(own_n)
            else:
                own_n = self._next_n(max(time.time_ns(), own_n + 1))
                event_id = f"evt_{own_n:019d}{suffixes[4 * i:4 * i + 4]}"
            event = Event.from_json({**raw, "id": event_id, "session": session})
            data = _encode(event)
            self._check_size(data)
            line += 1
            event.line, event.offset, event.nbytes = line, offset, len(data)
            offset += len(data)
            chunks.append(data)
            pending[key] = event
            out.append((event, True))
            if event.type == "message":
                last_message = key
        if chunks:
            self._durable_write(fd, state.offset, b"".join(chunks))
            state.offset, state.lines, state.last_n, state.last_message = offset, line, own_n, last_message
            state.keys.update({k: (e.line, e.offset) for k, e in pending.items()})
        return out

    def _session_lock(self, session: str) -> threading.Lock:
        with self._lock:
            return self._session_locks.setdefault(session, threading.Lock())

    def _next_n(self, at_least: int) -> int:
        """An event number above every one this process has given (fresh ids stay ordered
        across sessions), and at least `at_least` (a pre-assigned id's is recorded so)."""
        with self._lock:
            self._last_n = max(at_least, self._last_n + 1)
            return self._last_n

    def _check_size(self, data: bytes) -> None:
        if len(data) > self.max_event_bytes:
            raise PayloadTooLarge(
                f"event of {len(data):,} bytes exceeds the limit of {self.max_event_bytes:,} (PALIMPSEST_MAX_EVENT_BYTES); nothing of this batch was stored"
            )

    def _check_sizes(self, session: str, events: list[dict[str, Any]]) -> None:
        """Each event's size as it will be written: ids are of one length, so a stand-in id gives it exactly."""
        stand_in = "evt_" + "0" * 23
        for raw in events:
            self._check_size(_encode(Event.from_json({**raw, "id": stand_in, "session": session})))

    def _durable_write(self, fd: int, start: int, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        except OSError as exc:
            try:  # leave no half-written batch behind
                os.ftruncate(fd, start)
                os.fsync(fd)
            except OSError:
                pass
            reason = {errno.ENOSPC: "the disk is full", errno.EROFS: "the file system is read-only", errno.EDQUOT: "the disk quota is exceeded"}.get(exc.errno or 0, str(exc))
            raise JournalError(f"journal write failed ({reason}); nothing was stored") from exc

    def _open(self, path: Path) -> int:
        try:
            return os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise JournalError(f"cannot open journal {path}: {exc.strerror}; nothing was stored") from exc

    def _ensure_dir(self, directory: Path) -> None:
        if directory.is_dir():
            return
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            dfd = os.open(directory.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError as exc:
            raise JournalError(f"cannot create {directory}: {exc.strerror}; nothing was stored") from exc

    # -- catching up and repairing -------------------------------------------
    def _catch_up(self, session: str, fd: int, *, repair: bool) -> _SessionState:
        st = os.fstat(fd)
        state = self._states.get(session)
        if state is None or state.inode != st.st_ino or st.st_size < state.offset:
            state = self._states[session] = _SessionState(inode=st.st_ino)
        if st.st_size > state.offset:
            os.lseek(fd, state.offset, os.SEEK_SET)
            tail = _read_all(fd, st.st_size - state.offset)
            complete = tail.rfind(b"\n") + 1
            at = state.offset
            for raw_line in tail[:complete].splitlines(keepends=True):
                state.lines += 1
                self._learn(state, raw_line, at)
                at += len(raw_line)
            if complete < len(tail) and repair:
                self._move_torn(self.path(session), fd, state.offset + complete, tail[complete:])
            state.offset += complete
        return state

    def _learn(self, state: _SessionState, raw_line: bytes, offset: int) -> None:
        try:
            d = _decode(raw_line)
            state.keys[d["event_key"]] = (state.lines, offset)
            state.last_n = max(state.last_n, event_number(d["id"]))
            if d.get("type") == "message":
                state.last_message = d["event_key"]
        except (ValueError, KeyError, TypeError):
            pass  # an unreadable line is kept as it is; it never blocks a writer

    def _move_torn(self, path: Path, fd: int, at: int, data: bytes) -> None:
        # 0600 like the journal it comes from: a torn tail holds the same words
        torn = os.open(path.with_name(path.name + ".torn"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with open(torn, "ab") as f:
            f.write(data + b"\n")
            f.flush()
            os.fsync(f.fileno())
        os.ftruncate(fd, at)
        os.fsync(fd)

    def repair(self, session: str) -> None:
        """Take the lock once, so a torn tail left by a crash is moved aside now."""
        path = self.path(session)
        if not path.exists():
            return
        with self._session_lock(session):
            fd = self._open(path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._catch_up(session, fd, repair=True)
            finally:
                os.close(fd)

    def holds(self, session: str, keys: list[str]) -> set[str]:
        """Which of `keys` the session's journal holds, read under its lock as `append` reads them."""
        path = self.path(session)
        if not keys or not path.exists():
            return set()
        with self._session_lock(session):
            fd = self._open(path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                state = self._catch_up(session, fd, repair=True)
                return {k for k in keys if k in state.keys}
            finally:
                os.close(fd)

    # -- erasure (`palimpsest erase`, the one way a journal loses a line) -----
    def remove(self, session: str) -> bool:
        """Delete the session's journal folder (its journal and any torn tail), under its lock."""
        path = self.path(session)
        if not path.parent.is_dir():
            return False
        with self._session_lock(session):
            fd = self._open(path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                shutil.rmtree(path.parent)
                self._states.pop(session, None)
            finally:
                os.close(fd)
        _fsync_dir(self.root)
        return True

    def rewrite(self, session: str, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> int:
        """Rewrite the session's journal line by line under its lock: `change` returns the line to keep (the same
        dict, or an edited one) or None to drop it. The new file replaces the old one whole (written, fsynced,
        renamed), and a torn tail beside it goes. Returns how many lines were dropped or edited."""
        path = self.path(session)
        if not path.exists():
            return 0
        with self._session_lock(session):
            fd = self._open(path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                kept, changed = self._rewritten(session, change)
                if changed:
                    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
                    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
                        f.write(b"".join(kept))
                        f.flush()
                        os.fsync(f.fileno())
                    os.replace(tmp, path)
                    path.with_name(path.name + ".torn").unlink(missing_ok=True)
                    self._states.pop(session, None)
            finally:
                os.close(fd)
        _fsync_dir(path.parent)
        return changed

    def _rewritten(self, session: str, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> tuple[list[bytes], int]:
        kept: list[bytes] = []
        changed = 0
        for _, _, raw_line in self.read_raw(session):
            try:
                line = _decode(raw_line)
            except ValueError:
                kept.append(raw_line)  # (an unreadable line names nothing that can be looked for)
                continue
            new = change(line)
            if new is None or new != line:
                changed += 1
            if new is not None:
                kept.append(raw_line if new == line else json.dumps(new, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass") + b"\n")
        return kept, changed

    def _find_key(self, session: str, state: _SessionState, key: str) -> Event:
        # a seek to the line the key was learnt at (a scan per duplicate made a retried
        # ingest of n messages quadratic)
        line, offset = state.keys[key]
        return self.get(session, line, offset)

    def committed_size(self, session: str) -> int:
        """The journal's size with no group commit in flight: taken under a shared lock, so
        a batch being written (which a failed write would truncate away) is not counted."""
        try:
            fd = os.open(self.path(session), os.O_RDONLY)
        except FileNotFoundError:
            return 0
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            return os.fstat(fd).st_size
        finally:
            os.close(fd)

    # -- reading -------------------------------------------------------------
    def read(self, session: str, start_offset: int = 0, start_line: int = 0, end: int | None = None) -> Iterator[Event]:
        """Complete lines from `start_offset` on (a line being written is not yet read),
        up to the byte offset `end` if given (see `committed_size`)."""
        path = self.path(session)
        try:
            f = open(path, "rb")
        except FileNotFoundError:
            return
        with f:
            f.seek(start_offset)
            offset, line = start_offset, start_line
            for raw_line in f:
                if not raw_line.endswith(b"\n") or (end is not None and offset + len(raw_line) > end):
                    return
                line += 1
                try:
                    event = Event.from_json(_decode(raw_line), line=line, offset=offset, nbytes=len(raw_line))
                except (ValueError, TypeError, AttributeError):
                    # kept on disk as it is; yielded so cursors can move past it
                    event = Event(id="", session=session, role=None, type="_unreadable", line=line, offset=offset, nbytes=len(raw_line))
                yield event
                offset += len(raw_line)

    def read_raw(self, session: str, start_offset: int = 0) -> Iterator[tuple[int, int, bytes]]:
        """(line number, offset, bytes) of complete lines from `start_offset` (line numbers relative)."""
        path = self.path(session)
        try:
            f = open(path, "rb")
        except FileNotFoundError:
            return
        with f:
            f.seek(start_offset)
            offset, line = start_offset, 0
            for raw_line in f:
                if not raw_line.endswith(b"\n"):
                    return
                line += 1
                yield line, offset, raw_line
                offset += len(raw_line)

    @staticmethod
    def read_at(path: str, line: int, offset: int) -> Event | None:
        """The event at `offset` of a journal file of any home (None when it cannot be read
        there): a shared store's row written through another home on this machine."""
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                raw_line = f.readline()
            return Event.from_json(_decode(raw_line), line=line, offset=offset, nbytes=len(raw_line))
        except (OSError, ValueError):
            return None

    def get(self, session: str, line: int, offset: int | None = None) -> Event:
        """The event at a (session, line); `offset` makes it a seek instead of a scan."""
        if line < 1:
            raise InvalidInput("journal lines are numbered from 1")
        if offset is not None:
            found = self.read_at(str(self.path(session)), line, offset)
            if found is not None:
                return found  # (else the scan)
        for event in self.read(session):
            if event.line == line:
                return event
        raise NotFound(f"no line {line} in the journal of session {session!r}")


# msgspec writes the same bytes as `json.dumps(ensure_ascii=False, separators=(",", ":"))`
# for the strings a journal line is made of, four times as fast (bench/ingest.py). The
# standard library writes what msgspec refuses (a dict with None or bool keys) or would
# change (NaN and infinities, which msgspec writes as null: an old line imported again keeps
# them), and reads the lines msgspec will not (those, lone surrogate escapes).
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()


def _encode(event: Event) -> bytes:
    # the event's fields in declaration order (a dataclass's __init__ sets them so) but
    # where it sits: a shallow copy (`asdict` deep-copied every event, a third of bulk
    # ingest's Python time once; a getattr per field was slower than the copy)
    line = event.__dict__.copy()
    del line["line"], line["offset"], line["nbytes"]
    if not ((event.tool_args is not None or event.metadata) and _nonfinite(event.tool_args, event.metadata)):
        try:
            return _ENCODER.encode(line) + b"\n"
        except (TypeError, msgspec.EncodeError):
            pass
    return (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _nonfinite(*values: Any) -> bool:
    """Whether a NaN or an infinity is anywhere in these JSON values."""
    stack = list(values)
    while stack:
        value = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                return True
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return False


def _decode(raw_line: bytes) -> Any:
    try:
        return _DECODER.decode(raw_line)
    except msgspec.DecodeError:
        return json.loads(raw_line)


def _fsync_dir(directory: Path) -> None:
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _read_all(fd: int, n: int) -> bytes:
    parts = []
    while n > 0:
        chunk = os.read(fd, min(n, 1 << 24))
        if not chunk:
            break
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)
