"""The literal modes of message search: substring (any fragment) and regex.

A regex search runs its matches in a child process (`regex_worker.py`) that is killed at
the deadline: a check inside the server's process cannot bound it, since a match holds
the GIL (every other request, `/healthz` included, waits) and the `regex` module's own
timeout is not honoured for long literal scans (issue 21: an 8,000-character literal ran
161 s). This process only reads pages of messages from the store and hands their text
over, so while the child works the server keeps answering. Children are kept warm in a
small pool; a killed one is replaced at the next search.

Both modes read a message the index holds cut (past `field_cap`) whole, from its journal
(`Kernel.whole`): a booking code at the end of a 38 KB pasted itinerary was found by
neither. Only those messages are read so, and within the same bound as a regex search (its
seconds and its hit limit): what the index holds whole is searched in SQL.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import subprocess
import sys
import threading
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..records import Message
from ..store import Filters, Store

WORKER = Path(__file__).with_name("regex_worker.py")
BATCH = 100  # messages per request to the child
# recursion into the pattern or a group ((?R), (?1), (?&name), (?P>name)) is what makes the
# `regex` module's memory explode; refused before any child sees it
_RECURSION = re.compile(r"(?:^|[^\\])(?:\\\\)*\(\?(?:R|[+-]?\d+|&\w+|P>\w+)\)")


class _Child:
    """One worker process: a request is a JSON line, so is its answer."""

    def __init__(self) -> None:
        # -P: the script's folder is not put on sys.path (its modules would shadow others)
        self.proc = subprocess.Popen([sys.executable, "-P", str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, close_fds=True)
        self.buffer = b""

    def ask(self, request: dict[str, Any], deadline: float) -> dict[str, Any] | None:
        """The answer, or None when the deadline passed (the child is then killed)."""
        assert self.proc.stdin and self.proc.stdout
        try:
            self.proc.stdin.write(json.dumps(request).encode("ascii") + b"\n")
            self.proc.stdin.flush()
        except OSError:
            return self._dead()
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self.kill()
                    return None
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    return self._dead()
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def _dead(self) -> dict[str, Any]:
        self.kill()
        return {"error": "the regular expression could not be run (its process ended)"}

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
        self.proc.wait()


class RegexPool:
    """Warm children, at most `size` searches at once (a caller beyond waits its budget)."""

    def __init__(self, size: int = 4) -> None:
        self.idle: list[_Child] = []
        self.lock = threading.Lock()
        self.slots = threading.BoundedSemaphore(size)

    def take(self, budget_s: float) -> _Child | None:
        if not self.slots.acquire(timeout=budget_s):
            return None
        with self.lock:
            while self.idle:
                child = self.idle.pop()
                if child.alive():
                    return child
        return _Child()

    def give(self, child: _Child) -> None:
        with self.lock:
            if child.alive():
                self.idle.append(child)
        self.slots.release()


_POOL = RegexPool()


def check_pattern(pattern: str) -> None:
    if not isinstance(pattern, str):
        raise InvalidInput("a regular expression is a string")
    if _RECURSION.search(pattern):
        raise InvalidInput("invalid regular expression: recursion ((?R), (?1), (?&name)) is not supported in search")


Whole = Callable[[Message], Message]  # a message with its fields as journaled (`Kernel.whole`)


def substring_past_cap(store: Store, whole: Whole, fragment: str, filters: Filters, limit: int, found: set[str],
                       budget_s: float = 2.0) -> tuple[list[Message], list[str]]:
    """Messages the index holds cut whose whole text contains `fragment` (case-insensitive) composed or decomposed
    (NFC, NFD, as the index's search asks) and the index's copy does not (`found`: the ids the index's search
    returned), up to `limit`; past `budget_s` seconds, marked partial."""
    deadline = time.monotonic() + budget_s
    # (the fragment as typed only: "está" with a combining accent was no hit past the cap of a message typed composed)
    forms = list(dict.fromkeys(unicodedata.normalize(n, fragment).casefold() for n in ("NFC", "NFD")))
    out: list[Message] = []
    after = 0
    while len(out) < limit and (page := store.scan_cut(filters, BATCH, after)):
        after = page[-1][0]
        for m in (m for _, m in page if m.id not in found):
            w = whole(m)
            texts = ((w.content or "").casefold(), (w.tool_result or "").casefold())
            if any(form in text for form in forms for text in texts):
                out.append(m)
        if time.monotonic() > deadline and len(out) < limit:
            return out, [f"substring scan of long messages stopped after {budget_s:.1f}s; results are partial"]
    return out[:limit], []


def regex_search(store: Store, pattern: str, filters: Filters, limit: int, budget_s: float = 2.0,
                 whole: Whole = lambda m: m) -> tuple[list[Message], list[str]]:
    """Messages whose content or tool result match `pattern`, in index order. The whole
    scan is bounded by `budget_s` seconds of wall time: past it, the matching process is
    killed and the hits found so far are returned, marked partial."""
    check_pattern(pattern)
    deadline = time.monotonic() + budget_s
    partial = [f"regex scan stopped after {budget_s:.1f}s; results are partial"]
    child = _POOL.take(budget_s)
    if child is None:
        return [], ["regex search is busy (too many at once); try again"]
    try:
        compiled = child.ask({"pattern": pattern}, deadline)
        if compiled is None:
            raise InvalidInput("invalid regular expression: it did not compile in time")
        if "error" in compiled:
            raise InvalidInput(compiled["error"])
        found, complete = _scan(store, child, filters, limit, deadline, whole)
        return (found, []) if complete else (found, partial)
    finally:
        _POOL.give(child)


def _scan(store: Store, child: _Child, filters: Filters, limit: int, deadline: float,
          whole: Whole) -> tuple[list[Message], bool]:
    """The hits, and whether the scan finished before the deadline."""
    found: list[Message] = []
    after = 0
    while len(found) < limit and (page := store.scan(filters, BATCH, after)):
        after = page[-1][0]
        answer = child.ask({"texts": [[w.content, w.tool_result] for w in (whole(m) for _, m in page)]}, deadline)
        if answer is None:
            return found[:limit], False
        if "error" in answer:
            raise InvalidInput(answer["error"])
        found.extend(page[i][1] for i in answer["matches"])
        if time.monotonic() > deadline:
            return found[:limit], len(found) >= limit
    return found[:limit], True
