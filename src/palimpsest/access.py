"""Access counts of returned search hits, written in batches.

Every search that returns hits counts an access on each (the reinforcement term of the
temporal score, and the `accessed` decay clock). Writing that on every search cost more
than the search itself: each write is a transaction, and on SQLite it makes every reader
connection drop its page cache and read the changed pages back from the WAL, so the next
searches ran ~70 % slower (bench/search.py). The counts are therefore kept here and
written together at most every `FLUSH_S` seconds — by the next search after that, by the
background service, and when the memory is closed (`last_accessed_at` is then exact to
within that second). Until then the messages a search or
browse returns carry their pending accesses, so what a caller sees is always up to date;
a crash loses at most that second of counts, which are a ranking hint, not memory.
Summaries returned by a search count their accesses the same way (`summaries=True`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from .store import Store

FLUSH_S = 1.0
Pending = dict[str, tuple[int, str]]  # id -> (accesses not yet written, last at)


class AccessLog:
    """Pending accesses of messages and of summaries (`summaries=True`), written together."""

    def __init__(self, store: Store, flush_s: float = FLUSH_S) -> None:
        self.store = store
        self.flush_s = flush_s
        self._pending: Pending = {}
        self._pending_summaries: Pending = {}
        self._lock = threading.Lock()
        self._flushed = time.monotonic()

    def add(self, ids: Iterable[str], at: str, *, summaries: bool = False) -> None:
        pending = self._pending_summaries if summaries else self._pending
        with self._lock:
            for mid in ids:
                count, _ = pending.get(mid, (0, at))
                pending[mid] = (count + 1, at)
        if time.monotonic() - self._flushed >= self.flush_s:
            self.flush()

    def apply(self, rows: Iterable[Any], *, summaries: bool = False) -> None:
        """Add the pending accesses to messages (or summaries) just read from the store."""
        pending = self._pending_summaries if summaries else self._pending
        if not pending:
            return
        with self._lock:
            for m in rows:
                if (p := pending.get(m.id)) is not None:
                    m.access_count += p[0]
                    m.last_accessed_at = p[1]

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, {}
            summaries, self._pending_summaries = self._pending_summaries, {}
            self._flushed = time.monotonic()
        try:
            self._write(pending, self.store.touch, self._pending)
        finally:
            self._write(summaries, self.store.touch_summaries, self._pending_summaries)

    def _write(self, pending: Pending, touch: Callable[[list[str], str], None], back: Pending) -> None:
        if not pending:
            return
        # one write per distinct count (nearly always just 1), stamped with the latest
        # access of the group: last_accessed_at is exact to within FLUSH_S
        by_count: dict[int, tuple[list[str], str]] = {}
        for mid, (count, at) in pending.items():
            ids, latest = by_count.get(count, ([], at))
            ids.append(mid)
            by_count[count] = (ids, max(latest, at))
        groups = sorted(by_count.items())
        for i, (count, (ids, at)) in enumerate(groups):
            try:
                for _ in range(count):
                    touch(ids, at)
            except Exception:
                with self._lock:  # the groups not written wait for the next flush
                    for later_count, (later_ids, later_at) in groups[i:]:
                        for mid in later_ids:
                            c, a = back.get(mid, (0, later_at))
                            back[mid] = (c + later_count, max(a, later_at))
                raise
