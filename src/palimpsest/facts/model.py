"""Facts with history: bi-temporal, curated statements (DESIGN.md, "Curation (facts)").

A fact holds in the world from `valid_from` until `valid_to` (world time), and the system
believed it from `recorded_at` until it was retracted (`invalidated_at`: it was never
true) or replaced by a revision or a merge (`expired_at`). When the system learned of an
end is `ended_at`. The vocabulary follows graphiti (`valid_at`, `invalid_at`,
`expired_at`); the names follow DESIGN.md's data model.

Nothing is ever deleted or overwritten. A row is written once; each end column is set at
most once, and only by a guarded update that fails with `Conflict` when another writer
got there first — so any past state can be recomputed: `known_at(T)` masks every column
set after T, every attestation and link recorded after T, and answers exactly what a
query at T answered then. Confidence and `last_seen` are derived from the attestations
(each one more hearing closes half the gap to 1), so they replay exactly too.

Every operation is one `FactChange`: journaled first as a decision event in the system
journal (`<home>/system/sessions/facts/events.jsonl`), then applied in one store
transaction, then the snapshot `<home>/facts.jsonl` is rewritten. A change that loses a
race is followed by a `rejected` event, so `restore_from_journal` replays exactly the
operations that took effect. Times: ISO 8601 strings, epoch seconds or datetimes; a time
without a zone is UTC.
"""

from __future__ import annotations

import functools
import logging
import math
import re
import secrets
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from ..errors import InvalidInput, StoreUnavailable
from ..records import check_text, iso, parse_time
from ..store.facts_base import Attestation, FactLink, FactRow

log = logging.getLogger(__name__)
DEFAULT_VAULT = "facts"
VAULT_TYPES = ("episodic",)
SYSTEM_SESSION = "facts"
IMPORTANCE_BY_KIND = {"correction": 0.9, "preference": 0.8, "decision": 0.7, "fact": 0.6, "task": 0.5}
MAX_TEXT = 8000
MAX_ENTITIES = 64
SETTLEMENTS = ("same", "replaces", "keep")  # how a review is settled (`Facts.settle`)
VAULT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
KIND_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
SOURCE_TYPES = ("event", "document", "person", "system")
OPEN = ("expired_at", "invalidated_at", "valid_to", "ended_at", "superseded_by")  # must be NULL to end a fact
BELIEVED = ("expired_at", "invalidated_at")

DOMAIN = SYSTEM_SESSION  # the facts' session of the decision log
Clock = Callable[[], datetime]
F = TypeVar("F", bound=Callable[..., Any])


def operation(method: F) -> F:
    """Every time an operation writes (recorded_at, ended_at, attestations, links) is one
    moment, read once from the clock, so `known_at` never sees half an operation."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(self._local, "now", None) is not None:
            return method(self, *args, **kwargs)
        self._local.now = iso(self.clock())
        try:
            return method(self, *args, **kwargs)
        finally:
            self._local.now = None

    return wrapper  # type: ignore[return-value]


class JournaledDecision(StoreUnavailable):
    """The store went away while applying a decision that is already journaled: it will be
    applied by `Facts.replay()` (run by the curator's drain) once the store is back."""

    def __init__(self, message: str, key: str) -> None:
        super().__init__(message)
        self.key = key
        # (a client must learn the decision is kept, and not send it again: the store's address it is not told)
        self.told_clients = f"the server's store went away: decision {key} is journaled and is applied when it is back"


# -- the view of a fact ---------------------------------------------------------
@dataclass
class Fact:
    """A fact as the system knows it at one moment (`as_of`), with derived fields."""

    id: str
    vault: str
    text: str
    kind: str
    entities: list[str]
    salience: float
    confidence: float
    valid_from: str
    valid_to: str | None
    recorded_at: str
    ended_at: str | None
    invalidated_at: str | None
    expired_at: str | None
    supersedes: str | None
    superseded_by: str | None
    related_to: list[str]
    disputed_with: list[str]
    attestations: list[Attestation]
    last_seen: str
    status: str
    metadata: dict[str, Any] = field(default_factory=dict)
    as_of: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def holds_at(self, t: str) -> bool:
        return self.valid_from <= t and (self.valid_to is None or t < self.valid_to)

    def held_during(self, since: str | None, until: str | None) -> bool:
        """Whether it held at some time from `since` until `until` (exclusive; None: unbounded)."""
        return (until is None or self.valid_from < until) and (since is None or self.valid_to is None or self.valid_to > since)


def view(row: FactRow, as_of: str, others: dict[str, FactRow] | None = None) -> Fact | None:
    """The fact as the system knew it at `as_of`; None if it was not recorded yet.

    `others` (rows of linked facts) lets disputes show only while both sides are open."""
    if row.recorded_at > as_of:
        return None

    def known(value: str | None, when: str | None) -> str | None:
        return value if value is not None and when is not None and when <= as_of else None

    ended_at = known(row.ended_at, row.ended_at)
    expired_at = known(row.expired_at, row.expired_at)
    succ_time = _succeeded_at(row)
    atts = [a for a in row.attestations if a.recorded_at <= as_of]
    links = [x for x in row.links if x.recorded_at <= as_of]
    # `supersedes` is set at insert, except when an existing fact is named successor later
    supersedes = row.supersedes
    if supersedes and any(x.src == row.id and x.dst == supersedes and x.type == "supersedes" and x.recorded_at > as_of
                          for x in row.links):
        supersedes = None
    n = len(atts)
    confidence = 1 - (1 - row.base_confidence) * 0.5 ** max(n - 1, 0)
    fact = Fact(
        id=row.id, vault=row.vault, text=row.text, kind=row.kind, entities=list(row.entities), salience=row.salience,
        confidence=round(confidence, 6), valid_from=row.valid_from, valid_to=row.valid_to if ended_at else None,
        recorded_at=row.recorded_at, ended_at=ended_at, invalidated_at=known(row.invalidated_at, row.invalidated_at),
        expired_at=expired_at, supersedes=supersedes, superseded_by=known(row.superseded_by, succ_time),
        related_to=sorted({x.dst if x.src == row.id else x.src for x in links if x.type == "related_to" and x.review != "same"}),
        disputed_with=_open_disputes(row, links, as_of, others),
        attestations=atts, last_seen=max((a.at for a in atts), default=row.recorded_at), status="",
        metadata=dict(row.metadata), as_of=as_of,
    )
    fact.status = _status(fact, links, as_of)
    return fact


SUCCESSIONS = ("supersedes", "revises", "merged_into")  # the links written with `superseded_by`


def _succeeded_at(row: FactRow) -> str | None:
    """When `superseded_by` was set: when the link that set it was recorded. A version can be superseded and later expire
    (a retracted correction reinstates what it superseded, `Facts.retract`), and its expiry is not when it was superseded."""
    for x in row.links:
        if x.type in SUCCESSIONS and {x.src, x.dst} == {row.id, row.superseded_by}:
            return x.recorded_at
    return row.expired_at if row.expired_at else row.ended_at


def _open_disputes(row: FactRow, links: list[FactLink], as_of: str, others: dict[str, FactRow] | None) -> list[str]:
    out = []
    for x in links:
        if x.type != "disputed_with":
            continue
        other = x.dst if x.src == row.id else x.src
        if others is not None and other in others:
            o = view(others[other], as_of)
            if o is None or o.status not in ("current", "future"):
                continue
        out.append(other)
    return sorted(out)


STATUSES = ("current", "future", "superseded", "closed", "revised", "merged", "retracted")  # what `_status` says


def _status(f: Fact, links: list[FactLink], as_of: str) -> str:
    if f.invalidated_at:
        return "retracted"
    if f.expired_at:
        return "merged" if any(x.type == "merged_into" and x.src == f.id for x in links) else "revised"
    if f.superseded_by and not (f.valid_to is not None and f.valid_to > as_of):
        return "superseded"  # (a successor that starts later leaves it current until then: "we're moving on June 1")
    if f.valid_to is not None and f.valid_to <= as_of:
        return "closed"
    if f.valid_from > as_of:
        return "future"
    return "current"


@dataclass
class FactHit:
    """One search result: the fact and the parts of its score."""

    fact: Fact
    score: float
    parts: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = self.fact.to_dict()
        d["score"] = round(self.score, 6)
        d["score_parts"] = {k: round(v, 6) for k, v in self.parts.items()}
        return d


# -- normalisation and validation ---------------------------------------------------
def normalise(text: str) -> str:
    """The form two statements must share to be the same words: NFKC, case-folded,
    punctuation dropped (except inside numbers), whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"(?<=\d)[,.](?=\d)", "\x00", text)
    text = re.sub(r"[^\w\x00]+", " ", text).replace("\x00", ".")
    return " ".join(text.split())


def _time(value: Any, name: str) -> str:
    return iso(parse_time(value, name))


def _unit(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not 0 <= value <= 1:
        raise InvalidInput(f"{name} must be a number from 0 to 1")
    return float(value)


def _text(value: Any) -> str:
    text = check_text(value, "text", allow_none=False) or ""
    if not text.strip():
        raise InvalidInput("text must not be empty")
    if len(text) > MAX_TEXT:
        raise InvalidInput(f"text is {len(text)} characters; a fact holds at most {MAX_TEXT}")
    return text.strip()


def _kind(value: Any) -> str:
    if not isinstance(value, str) or not KIND_RE.fullmatch(value.lower()):
        raise InvalidInput("kind must be a short lower-case word (correction, preference, fact, decision, task, …)")
    return value.lower()


def _entities(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidInput("entities must be a list of strings")
    out: list[str] = []
    for e in value:
        e = check_text(e, "entity", allow_none=False)
        if not e or not e.strip() or len(e) > 200:
            raise InvalidInput("each entity must be a non-empty string of at most 200 characters")
        if e.strip() not in out:
            out.append(e.strip())
    if len(out) > MAX_ENTITIES:
        raise InvalidInput(f"at most {MAX_ENTITIES} entities")
    return out


def parse_source(value: Any) -> tuple[str, str]:
    """`evt_…` or `event:ID`, `doc:PATH` / `document:PATH`, `person:NAME`, `system:…`,
    a dict {type, ref}, or None (the person `user`)."""
    if value is None:
        return "person", "user"
    if isinstance(value, dict):
        kind, ref = value.get("type"), value.get("ref") or value.get("source")
    elif isinstance(value, str):
        if value.startswith("evt_"):
            kind, ref = "event", value
        elif ":" in value:
            kind, _, ref = value.partition(":")
            kind = {"doc": "document", "evt": "event"}.get(kind, kind)
        else:
            kind, ref = "person", value
    else:
        raise InvalidInput("source must be a string like evt_…, doc:PATH, person:NAME, or {type, ref}")
    if kind not in SOURCE_TYPES or not isinstance(ref, str) or not ref.strip() or len(ref) > 1000:
        raise InvalidInput(f"source type must be one of {SOURCE_TYPES} with a non-empty reference")
    check_text(ref, "source")
    return kind, ref.strip()


class _Ids:
    """`fct_` + 19 digits of nanoseconds + 4 hex: unique, time-ordered within a process."""

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def __call__(self, prefix: str = "fct") -> str:
        with self._lock:
            self._last = max(time.time_ns(), self._last + 1)
            return f"{prefix}_{self._last:019d}{secrets.token_hex(2)}"


_new_id = _Ids()


