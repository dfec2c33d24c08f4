"""A transcript read a few lines at a time, across hook calls.

Each hook call reads the transcript's new complete lines since the last one (a byte
cursor per transcript under `<home>/capture-state/`, the file locked so two hooks of one
session take turns) and turns them into events with the harness reader
(`palimpsest.harness`) — the same reader the importers use. What the reader has learned
(the format, tool call ids → names, the last timestamp, the session's id and settings)
is saved with the cursor, so a tool result whose call came in an earlier capture is still
named after it. A cursor saved without that context (an older version) has it rebuilt by
reading the lines before the cursor again, without sending them. A file shorter than its
cursor was rewritten: it is read again from the start (the server drops the copies).

A harness written in JavaScript can cut a long output inside an emoji and write half of it
as an escaped lone surrogate (`"\\ud83d"`): valid JSON, but no text the server may store.
Each is replaced by U+FFFD and counted (`repaired`), so the rest of the output is kept; the
transcript itself still holds what was written. So is a byte that is not UTF-8 (a Windows
tool's output, `recoded`): one byte had cost its whole line, never to be read again.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

from ..errors import InvalidInput
from ..harness import Context, Reader, detect
from ..harness.common import decoded, glued, keyed, repaired


class Transcript:
    """New complete lines of a transcript since the last capture, and the events they hold."""

    def __init__(self, path: Path, home: Path) -> None:
        self.path = path
        self.name = str(path.resolve())
        digest = hashlib.sha256(self.name.encode("utf-8", "replace")).hexdigest()[:24]
        self.state_path = Path(home) / "capture-state" / f"{digest}.json"
        self.offset = self.line = 0
        self.reader = Reader(Context(self.name))
        self._lock_fd: int | None = None
        self.repaired = 0  # lone surrogates replaced in the lines read
        self.recoded = 0  # lines read with U+FFFD for bytes that are not UTF-8

    def __enter__(self) -> Self:
        self.state_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock_fd = os.open(self.state_path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)  # two hooks of one session take turns
        self._load()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)

    @property
    def format(self) -> str | None:
        return self.reader.format

    def _load(self) -> None:
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            self.offset, self.line = int(state["offset"]), int(state["line"])
        except (OSError, ValueError, KeyError, TypeError):
            state, self.offset, self.line = {}, 0, 0
        if self.path.stat().st_size < self.offset:  # rewritten: start over, keys dedupe
            self.offset = self.line = 0
        elif "context" in state:
            format = state.get("format") if isinstance(state.get("format"), str) else None
            self.reader = Reader(Context.from_state(self.name, state["context"]), format)
        elif self.offset:
            self._rederive()

    def _rederive(self) -> None:
        """Rebuild the reader's context from the lines before the cursor (their events are dropped)."""
        stop, self.offset, self.line = self.offset, 0, 0
        for _ in self._records(stop):
            pass

    def new_lines(self, stop: int | None = None) -> Iterator[tuple[int, bytes]]:
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            for raw in f:
                if not raw.endswith(b"\n") or (stop is not None and self.offset + len(raw) > stop):
                    return  # still being written
                self.offset += len(raw)
                self.line += 1
                yield self.line, raw

    def events(self) -> tuple[list[dict[str, Any]], int]:
        """Events of the new lines, and how many lines could not be read (not JSON objects)."""
        events: list[dict[str, Any]] = []
        skipped = 0
        for read in self._records():
            if read is None:
                skipped += 1
            else:
                events.extend({k: v for k, v in e.items() if v is not None} for e in read)
        return events, skipped

    def _records(self, stop: int | None = None) -> Iterator[list[dict[str, Any]] | None]:
        for line, raw in self.new_lines(stop):
            if not raw.strip():
                continue
            text, recoded = decoded(raw)
            self.recoded += recoded
            try:
                record = json.loads(text)
                records = [(record, raw)] if isinstance(record, dict) else []
            except ValueError:  # a torn line a resumed session wrote on, or records that lost their newline: each read
                records = keyed(glued(text, detect)[0], raw)
            if not records:
                yield None
                continue
            events = []
            for record, key_raw in records:
                if b"\\ud" in raw.lower():
                    record, n = repaired(record)
                    self.repaired += n
                try:
                    events += self.reader.read(record, line, key_raw)
                except InvalidInput:  # a message whose content is no text (`"content": 42`): an import reports the line
                    yield None
            yield events

    def commit(self) -> None:
        state = {"path": str(self.path), "offset": self.offset, "line": self.line, "format": self.reader.format,
                 "context": self.reader.context.state()}
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, self.state_path)
