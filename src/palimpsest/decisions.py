"""The decision log: every change of state that is not a message, journaled and replayable.

Principle 2 (DESIGN.md) says the journal is the truth and the store is derived. Messages
have their session journals; every other change — a fact operation, a tag decision, a
summary or wiki patch, a vault registered, a distilled turn, a synthesized sentence, a
parked LLM reply — is a *decision* event in the system journal
(`<home>/system/sessions/<domain>/events.jsonl`, one session per domain), written and
fsynced before the store is touched. This module is the only one that writes or reads it.

One shape for every domain: an event of type `decision`, role `system`, its `event_key`
the decision's key, and metadata `{"domain", "op", "subject", "change", ...extra}` where
`change` is what the domain's store applies. One rule for decisions that do not take
effect: a decision whose apply fails (a guard lost its race, an id it names is unknown)
is followed by a `rejected` decision naming it, and every later replay skips it — so
`replay` after `rebuild` applies exactly what took effect the first time. Older journals
wrote some domains without `op`/`change` (summaries, distill, toolsynth); `Decision.change`
reads them as written.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import Conflict, NotFound, PalimpsestError
from .journal import Journal
from .records import Event, iso, utcnow

log = logging.getLogger(__name__)
REJECTED = "rejected"
_HEAD = ("domain", "op", "subject")


def new_key(prefix: str = "op") -> str:
    """`<prefix>_` + 19 digits of nanoseconds + 4 hex: unique and time-ordered enough."""
    return f"{prefix}_{time.time_ns():019d}{secrets.token_hex(2)}"


@dataclass
class Decision:
    """One decision as journaled."""

    key: str
    domain: str
    op: str
    subject: str
    meta: dict[str, Any]
    content: str
    created_at: str

    @property
    def change(self) -> dict[str, Any]:
        """What the store applies (older lines carry it beside the head, not under `change`)."""
        found = self.meta.get("change")
        if isinstance(found, dict):
            return found
        return {k: v for k, v in self.meta.items() if k not in _HEAD}

    @classmethod
    def of(cls, e: Event) -> Decision:
        meta = e.metadata or {}
        return cls(e.event_key or "", str(meta.get("domain", "")), str(meta.get("op", "")), str(meta.get("subject", "")),
                   meta, e.content or "", e.created_at)


class DecisionLog:
    """The system journal of one home: record, reject, read, replay, restore."""

    def __init__(self, home: str | Path) -> None:
        self.journal = Journal(Path(home) / "system")
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[int, dict[str, Decision]]] = {}  # domain -> (offset read to, key -> decision)

    def record(self, domain: str, op: str, change: dict[str, Any] | None = None, *, subject: str = "",
               key: str | None = None, content: str | None = None, created_at: str | None = None,
               kind: str = "decision", **extra: Any) -> str:
        """Journal one decision (fsynced) and return its key. A key already journaled is
        not written twice (the journal dedupes by key). `kind` is the event type: `decision`,
        or `pending_semantic` for a fact candidate parked until the store is back."""
        key = key or new_key()
        meta: dict[str, Any] = {"domain": domain, "op": op, "subject": subject, **extra}
        if change is not None:
            meta["change"] = change
        text = content if content is not None else f"{op} {subject}".strip()
        self.journal.append(domain, [{"type": kind, "role": "system", "content": text, "metadata": meta,
                                      "event_key": key, "created_at": created_at or iso(utcnow())}])
        return key

    def reject(self, domain: str, key: str, error: BaseException | str) -> None:
        """Mark a journaled decision as not taken effect (best effort: a replay that meets
        the same guard rejects it again)."""
        try:
            self.record(domain, REJECTED, subject=key, key=f"rej_{key}", content=f"rejected {key}",
                        rejects=key, error=str(error)[:500])
        except PalimpsestError as exc:
            log.warning("rejection of %s not journaled: %s", key, exc)

    def domains(self) -> list[str]:
        """Every domain this home has journaled a decision in."""
        return self.journal.sessions()

    def rewrite(self, domain: str, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> int:
        """Rewrite `domain`'s journal line by line (`Journal.rewrite`): only for an erasure an operator ordered."""
        with self._lock:
            self._seen.pop(domain, None)
            return self.journal.rewrite(domain, change)

    def size(self, domain: str) -> int:
        return self.journal.size(domain)

    def read(self, domain: str, kinds: tuple[str, ...] = ("decision",)) -> Iterator[tuple[str, Decision]]:
        """(event type, decision) of every event of `domain` of those `kinds`, rejections
        included, in journal order."""
        if not self.journal.size(domain):
            return
        for e in self.journal.read(domain):
            if e.type in kinds and (e.metadata or {}).get("domain", domain) == domain:
                yield e.type, Decision.of(e)

    def tail(self, domain: str, nbytes: int) -> list[Decision]:
        """The decisions of `domain` in its journal's last `nbytes` (the line cut at the start skipped), rejections
        included, in journal order: what was being decided when a process was killed is there."""
        start = max(0, self.journal.size(domain) - nbytes)
        return [Decision.of(e) for e in self.journal.read(domain, start) if e.type == "decision"
                and (e.metadata or {}).get("domain", domain) == domain]

    def taken(self, domain: str, *, changes_only: bool = True) -> list[Decision]:
        """The decisions of `domain` that took effect (rejected ones left out), in order;
        `changes_only`: those that carry a change for the store."""
        every = [d for _, d in self.read(domain)]
        rejected = {d.meta.get("rejects") for d in every if d.op == REJECTED}
        return [d for d in every if d.op != REJECTED and d.key not in rejected and (not changes_only or "change" in d.meta)]

    def replay(self, domain: str, applied: set[str] | Callable[[], set[str]], apply: Callable[[Decision], int], *,
               changes_only: bool = True) -> int:
        """Apply, in journal order, each decision of `domain` whose key is not in `applied`.
        One that cannot apply (`Conflict`, `NotFound`) is rejected for good. Returns how
        many rows the applies reported. `changes_only=False` for domains whose older
        lines carry their change beside the head (summaries)."""
        done = applied() if callable(applied) else applied
        count = 0
        for d in self.taken(domain, changes_only=changes_only):
            if d.key in done:
                continue
            try:
                count += apply(d)
            except (Conflict, NotFound) as exc:
                log.warning("%s decision %s not replayed: %s", domain, d.key, exc)
                self.reject(domain, d.key, exc)
        return count

    def restore_if_lost(self, domain: str, lost: Callable[[], bool], restore: Callable[[], int]) -> int | None:
        """A store that has applied nothing of `domain` beside a journal that holds some of
        it was rebuilt or replaced: bring the domain back (principle 2); returns how many
        decisions were applied, None when nothing was lost. Never raises for a store that is
        down; the next open tries again."""
        if self.journal.size(domain) == 0:
            return None
        try:
            if lost():
                n = restore()
                log.info("restoring %s from the system journal: %d decisions", domain, n)
                return n
        except PalimpsestError as exc:
            log.warning("%s not restored now: %s", domain, exc)
        return None

    def latest(self, domain: str) -> dict[str, Decision]:
        """Key → decision of `domain`, read incrementally (only lines added since the last
        call), for parts that ask "was this decided already?" on every job."""
        with self._lock:
            start, known = self._seen.get(domain, (0, {}))
            size = self.journal.size(domain)
            if size < start:  # a new journal under the same path
                start, known = 0, {}
            if size > start:
                for e in self.journal.read(domain, start):
                    if e.type == "decision":
                        known[e.event_key or ""] = Decision.of(e)
                    start = e.offset + e.nbytes
            self._seen[domain] = (start, known)
            return known
