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

import fcntl
import functools
import json
import logging
import math
import os
import re
import secrets
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from .errors import Conflict, InvalidInput, NotFound, PalimpsestError, StoreUnavailable
from .journal import Journal
from .records import check_text, iso, parse_time, utcnow
from .store.facts_base import Attestation, FactChange, FactLink, FactQuery, FactRow, FactUpdate, FactVault, ReviewUpdate

log = logging.getLogger(__name__)
DEFAULT_VAULT = "facts"
VAULT_TYPES = ("episodic",)
SYSTEM_SESSION = "facts"
IMPORTANCE_BY_KIND = {"correction": 0.9, "preference": 0.8, "decision": 0.7, "fact": 0.6, "task": 0.5}
MAX_TEXT = 8000
MAX_ENTITIES = 64
VAULT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
KIND_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
SOURCE_TYPES = ("event", "document", "person", "system")
OPEN = ("expired_at", "invalidated_at", "valid_to", "ended_at", "superseded_by")  # must be NULL to end a fact
BELIEVED = ("expired_at", "invalidated_at")
MIN_SEMANTIC = 0.35  # below this a vector neighbour alone does not make a search hit

Clock = Callable[[], datetime]
F = TypeVar("F", bound=Callable[..., Any])


def operation(method: F) -> F:
    """Every time an operation writes (recorded_at, ended_at, attestations, links) is one
    moment, read once from the clock, so `known_at` never sees half an operation."""

    @functools.wraps(method)
    def wrapper(self: Facts, *args: Any, **kwargs: Any) -> Any:
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


def view(row: FactRow, as_of: str, others: dict[str, FactRow] | None = None) -> Fact | None:
    """The fact as the system knew it at `as_of`; None if it was not recorded yet.

    `others` (rows of linked facts) lets disputes show only while both sides are open."""
    if row.recorded_at > as_of:
        return None

    def known(value: str | None, when: str | None) -> str | None:
        return value if value is not None and when is not None and when <= as_of else None

    ended_at = known(row.ended_at, row.ended_at)
    expired_at = known(row.expired_at, row.expired_at)
    succ_time = row.expired_at if row.expired_at else row.ended_at
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


def _status(f: Fact, links: list[FactLink], as_of: str) -> str:
    if f.invalidated_at:
        return "retracted"
    if f.expired_at:
        return "merged" if any(x.type == "merged_into" and x.src == f.id for x in links) else "revised"
    if f.superseded_by:
        return "superseded"
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
    if not isinstance(value, str) or not KIND_RE.match(value.lower()):
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


# -- the facts ---------------------------------------------------------------
class Facts:
    """Fact vaults of one memory: operations, queries, history, snapshot and replay.

    Reach it as `memory.facts`; the curator is `memory.facts.curator`."""

    def __init__(self, store: Any, home: Path, *, embedder: Callable[[], Any] | None = None, clock: Clock = utcnow,
                 snapshot: bool = True, weights: dict[str, float] | None = None) -> None:
        self.store = store
        self.home = Path(home)
        self.journal = Journal(self.home / "system")
        self.clock = clock
        self.snapshot_on_change = snapshot
        self._embedder = embedder or (lambda: None)
        self.weights = weights or {"fts": 0.3, "semantic": 0.3, "temporal": 0.3, "importance": 0.1}
        self._curator: Any = None
        self._local = threading.local()
        self._snapshot_cache: tuple[tuple[int, int, int] | None, dict[tuple[str, str], str]] | None = None
        self.needs_replay = False  # a decision was journaled but the store went away before it was applied
        self._restore_if_lost()

    def _restore_if_lost(self) -> None:
        """A store with no fact operation at all next to a system journal that has some was
        rebuilt or replaced: bring the facts back from the journal (principle 2)."""
        if self.journal.size(SYSTEM_SESSION) == 0:
            return
        try:
            if not self.store.fact_stats()["facts"] and not self.store.fact_ops_applied():
                log.info("restoring facts from the system journal: %d decisions", self.replay())
        except PalimpsestError as exc:
            log.warning("facts not restored now: %s", exc)

    @property
    def embedder(self) -> Any:
        """The embedder, or None when there is none or it cannot load: facts never fail
        for want of vectors (keyword search and the lexical gate still work)."""
        try:
            return self._embedder()
        except Exception as exc:  # noqa: BLE001 - a model that cannot load (missing runtime, bad file)
            log.warning("facts without embedder: %s", exc)
            return None

    @property
    def curator(self) -> Any:
        if self._curator is None:
            from .curator import Curator

            self._curator = Curator(self)
        return self._curator

    def now(self) -> str:
        """The current operation's moment, or the clock's time outside one."""
        return getattr(self._local, "now", None) or iso(self.clock())

    # -- vaults --------------------------------------------------------------
    @operation
    def init_vault(self, name: str, type: str = "episodic", description: str | None = None) -> FactVault:
        """Register a fact vault (idempotent when it exists with the same type)."""
        if not isinstance(name, str) or not VAULT_RE.match(name):
            raise InvalidInput("vault names are 1–64 letters, digits and ._- (not starting with punctuation)")
        if type not in VAULT_TYPES:
            raise InvalidInput(f"fact vaults are of type {', '.join(VAULT_TYPES)}; got {type!r}")
        existing = {v.name: v for v in self.store.fact_vaults()}
        if name in existing:
            if existing[name].type != type:
                raise Conflict(f"vault {name!r} exists with type {existing[name].type!r}")
            return existing[name]
        vault = FactVault(name, type, self.now(), check_text(description, "description"))
        self._commit("init_vault", FactChange(vaults=[vault]), name)
        return vault

    def vaults(self) -> list[FactVault]:
        return self.store.fact_vaults()

    def _vault(self, name: str | None, change: FactChange) -> str:
        name = name or DEFAULT_VAULT
        if name in {v.name for v in self.store.fact_vaults()}:
            return name
        if name != DEFAULT_VAULT:
            raise NotFound(f"no fact vault named {name!r}; create it with `palimpsest vault init {name} --type episodic`")
        change.vaults.append(FactVault(DEFAULT_VAULT, "episodic", self.now(), "facts the system writes"))
        return name

    # -- writing -------------------------------------------------------------
    @operation
    def write(self, text: str, *, vault: str | None = None, kind: str = "fact", entities: Any = None,
              salience: float = 0.5, confidence: float = 0.7, valid_from: Any = None, valid_to: Any = None,
              source: Any = None, at: Any = None, metadata: dict[str, Any] | None = None) -> Fact:
        """A new fact, open-ended unless `valid_to` is given (world time; default: now)."""
        change = FactChange()
        row = self._new_row(change, text, vault=vault, kind=kind, entities=entities, salience=salience,
                            confidence=confidence, valid_from=valid_from, valid_to=valid_to, metadata=metadata)
        change.attestations.append(self._attestation(row.id, source, at or row.valid_from))
        self._commit("write", change, row.id)
        return self.get(row.id)

    def _new_row(self, change: FactChange, text: Any, *, vault: str | None, kind: Any, entities: Any, salience: Any,
                 confidence: Any, valid_from: Any, valid_to: Any = None, metadata: Any = None,
                 supersedes: str | None = None) -> FactRow:
        now = self.now()
        text = _text(text)
        start = _time(valid_from, "valid_from") if valid_from is not None else now
        end = _time(valid_to, "valid_to") if valid_to is not None else None
        if end is not None and end <= start:
            raise InvalidInput(f"valid_to ({end}) must be after valid_from ({start})")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInput("metadata must be an object")
        try:
            metadata = json.loads(json.dumps(metadata or {}, ensure_ascii=False, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"metadata must be plain JSON (no NaN, no objects of other types): {exc}") from None
        row = FactRow(
            id=_new_id(), vault=self._vault(vault, change), text=text, norm=normalise(text), kind=_kind(kind),
            entities=_entities(entities), salience=_unit(salience, "salience"), base_confidence=_unit(confidence, "confidence"),
            valid_from=start, recorded_at=now, valid_to=end, ended_at=now if end else None, supersedes=supersedes,
            metadata=metadata,
        )
        change.facts.append(row)
        return row

    def _attestation(self, fact_id: str, source: Any, at: Any = None, note: str | None = None) -> Attestation:
        kind, ref = parse_source(source)
        when = _time(at, "at") if at is not None else self.now()
        return Attestation(fact_id, kind, ref, when, self.now(), check_text(note, "note"))

    @operation
    def confirm(self, fact_id: str, *, source: Any = None, at: Any = None, note: str | None = None) -> Fact:
        """Heard again: one more attestation (confidence and `last_seen` go up), no new fact."""
        row = self._row(fact_id)
        self._need(row, BELIEVED, "confirm")
        change = FactChange(attestations=[self._attestation(row.id, source, at, note)],
                            updates=[FactUpdate(row.id, {}, BELIEVED)])
        self._commit("confirm", change, row.id)
        return self.get(row.id)

    @operation
    def revise(self, fact_id: str, text: str, *, entities: Any = None, kind: str | None = None, source: Any = None) -> Fact:
        """The same statement said better: a new version with the new text, the same valid
        time and every attestation; the old version is kept, expired, and linked."""
        row = self._row(fact_id)
        self._need(row, ("expired_at", "invalidated_at", "superseded_by"), "revise")
        change = FactChange()
        new = self._new_row(change, text, vault=row.vault, kind=kind or row.kind,
                            entities=row.entities if entities is None else entities, salience=row.salience,
                            confidence=row.base_confidence, valid_from=row.valid_from, valid_to=row.valid_to,
                            metadata=row.metadata, supersedes=row.id)
        new.ended_at = row.ended_at
        now = new.recorded_at
        change.attestations += [Attestation(new.id, a.source_type, a.source, a.at, a.recorded_at, a.note) for a in row.attestations]
        if source is not None:
            change.attestations.append(self._attestation(new.id, source))
        change.updates.append(FactUpdate(row.id, {"expired_at": now, "superseded_by": new.id}, ("invalidated_at",)))
        change.links.append(FactLink(new.id, row.id, "revises", now))
        change.links += self._carried_links(row, new.id, now)
        self._commit("revise", change, new.id)
        return self.get(new.id)

    @staticmethod
    def _carried_links(row: FactRow, new_id: str, now: str) -> list[FactLink]:
        out = []
        for x in row.links:
            if x.type in ("related_to", "disputed_with") and x.review != "same":
                other = x.dst if x.src == row.id else x.src
                out.append(FactLink(new_id, other, x.type, now, "pending" if x.review == "pending" else x.review,
                                    None if x.review == "pending" else now))
        return out

    @operation
    def supersede(self, fact_id: str, text: str | None = None, *, by: str | None = None, valid_from: Any = None,
                  kind: str | None = None, entities: Any = None, salience: float | None = None,
                  confidence: float = 0.7, source: Any = None, at: Any = None, metadata: dict[str, Any] | None = None) -> Fact:
        """A correction: the old fact ends exactly where the new one starts (`valid_from`,
        default now); both are kept and linked. Give the new `text`, or `by` an existing fact."""
        row = self._row(fact_id)
        if (text is None) == (by is None):
            raise InvalidInput("supersede needs the new text or `by` (the id of the fact that replaces it), not both")
        if by is not None:
            return self._supersede_by(row, by)
        self._need(row, OPEN, "supersede")
        change = FactChange()
        new = self._new_row(change, text, vault=row.vault, kind=kind or row.kind,
                            entities=row.entities if entities is None else entities,
                            salience=row.salience if salience is None else salience, confidence=confidence,
                            valid_from=valid_from, metadata=metadata, supersedes=row.id)
        if new.valid_from <= row.valid_from:
            raise InvalidInput(f"the correction must start after the fact it supersedes ({row.valid_from}); "
                               "to say the old fact was never true, retract it")
        change.attestations.append(self._attestation(new.id, source, at or new.valid_from))
        self._end_by(change, row, new.id, new.valid_from, new.recorded_at)
        self._commit("supersede", change, new.id)
        return self.get(new.id)

    def _supersede_by(self, row: FactRow, by: str) -> Fact:
        new = self._row(by)
        if new.id == row.id or row.id in self._ancestors(new) or new.id in self._ancestors(row):
            raise InvalidInput(f"{new.id} superseding {row.id} would make a cycle of supersessions")
        self._need(row, OPEN, "supersede")
        self._need(new, OPEN, "supersede with")
        if new.supersedes:
            raise Conflict(f"{new.id} already supersedes {new.supersedes}")
        if new.valid_from <= row.valid_from:
            raise InvalidInput(f"{new.id} starts at {new.valid_from}, not after {row.id} ({row.valid_from})")
        change = FactChange()
        now = self.now()
        self._end_by(change, row, new.id, new.valid_from, now)
        change.updates.append(FactUpdate(new.id, {"supersedes": row.id}, OPEN))
        self._commit("supersede", change, new.id)
        return self.get(new.id)

    @staticmethod
    def _end_by(change: FactChange, row: FactRow, new_id: str, at: str, now: str) -> None:
        change.updates.append(FactUpdate(row.id, {"valid_to": at, "ended_at": now, "superseded_by": new_id}, OPEN))
        change.links.append(FactLink(new_id, row.id, "supersedes", now))

    def _ancestors(self, row: FactRow) -> set[str]:
        seen: set[str] = set()
        current: FactRow | None = row
        while current is not None and current.supersedes and current.supersedes not in seen:
            seen.add(current.supersedes)
            found = self.store.get_facts([current.supersedes])
            current = found[0] if found else None
        return seen

    @operation
    def close(self, fact_id: str, *, at: Any = None, source: Any = None) -> Fact:
        """The fact stopped holding at `at` (default now). Not a retraction: it was true until then."""
        row = self._row(fact_id)
        self._need(row, OPEN, "close")
        end = _time(at, "at") if at is not None else self.now()
        if end <= row.valid_from:
            raise InvalidInput(f"a fact cannot end ({end}) before or when it starts ({row.valid_from}); retract it instead")
        change = FactChange(updates=[FactUpdate(row.id, {"valid_to": end, "ended_at": self.now()}, OPEN)])
        if source is not None:
            change.attestations.append(self._attestation(row.id, source, note="closed"))
        self._commit("close", change, row.id)
        return self.get(row.id)

    @operation
    def retract(self, fact_id: str, *, reason: str | None = None, source: Any = None) -> Fact:
        """It was never true: `invalidated_at` is set; the fact stays, out of every query
        except `known_at` before the retraction and `history`."""
        row = self._row(fact_id)
        self._need(row, ("expired_at", "invalidated_at", "superseded_by"), "retract")
        change = FactChange(updates=[FactUpdate(row.id, {"invalidated_at": self.now()}, ("expired_at", "superseded_by"))])
        self._commit("retract", change, row.id, {"reason": check_text(reason, "reason"), "source": source})
        return self.get(row.id)

    @operation
    def dispute(self, fact_id: str, other_id: str) -> list[Fact]:
        """Two open facts that cannot both hold: both stay, flagged with each other until one
        is superseded, closed or retracted."""
        a, b = self._row(fact_id), self._row(other_id)
        if a.id == b.id:
            raise InvalidInput("a fact cannot dispute itself")
        self._need(a, OPEN, "dispute")
        self._need(b, OPEN, "dispute")
        if not any(x.type == "disputed_with" and {x.src, x.dst} == {a.id, b.id} for x in a.links):
            change = FactChange(links=[FactLink(a.id, b.id, "disputed_with", self.now())],
                                updates=[FactUpdate(a.id, {}, OPEN), FactUpdate(b.id, {}, OPEN)])
            self._commit("dispute", change, a.id)
        return [self.get(a.id), self.get(b.id)]

    @operation
    def relate(self, fact_id: str, other_id: str, *, review: bool = True) -> None:
        """Link two facts `related_to` (listed for review unless `review=False`)."""
        a, b = self._row(fact_id), self._row(other_id)
        if a.id == b.id:
            raise InvalidInput("a fact cannot relate to itself")
        now = self.now()
        link = FactLink(a.id, b.id, "related_to", now, "pending" if review else None)
        self._commit("relate", FactChange(links=[link]), a.id)

    # -- review --------------------------------------------------------------
    def reviews(self, vault: str | None = None) -> list[dict[str, Any]]:
        """Pairs the curator linked `related_to` and left for a person to settle."""
        out = []
        for link in self.store.pending_reviews(vault):
            facts = {f.id: f for f in self._views(self.store.get_facts([link.src, link.dst]))}
            if link.src in facts and link.dst in facts:
                out.append({"new": facts[link.src], "existing": facts[link.dst], "recorded_at": link.recorded_at})
        return out

    @operation
    def settle(self, new_id: str, existing_id: str, decision: str) -> Fact:
        """`same`: the new fact is merged into the existing one (its attestations move over,
        it expires, linked `merged_into`); `keep`: both stay, the link is kept."""
        if decision not in ("same", "keep"):
            raise InvalidInput("decision is `same` (merge) or `keep` (keep both)")
        new, old = self._row(new_id), self._row(existing_id)
        now = self.now()
        change = FactChange(reviews=[ReviewUpdate(new.id, old.id, "related_to", "same" if decision == "same" else "kept", now)])
        if decision == "same":
            self._need(new, BELIEVED + ("superseded_by",), "merge")
            self._need(old, BELIEVED, "merge into")
            change.attestations += [Attestation(old.id, a.source_type, a.source, a.at, now, a.note) for a in new.attestations]
            change.updates.append(FactUpdate(new.id, {"expired_at": now, "superseded_by": old.id}, ("invalidated_at",)))
            change.links.append(FactLink(new.id, old.id, "merged_into", now))
        self._commit("review", change, old.id if decision == "same" else new.id)
        return self.get(old.id if decision == "same" else new.id)

    # -- committing ----------------------------------------------------------
    def _commit(self, op: str, change: FactChange, subject: str, extra: dict[str, Any] | None = None) -> None:
        """Journal the decision, apply it in one transaction, then refresh the snapshot."""
        key = _new_id("op")
        change.op_key = key
        meta = {"domain": "facts", "op": op, "subject": subject, "change": change.to_dict(), **(extra or {})}
        self.journal.append(SYSTEM_SESSION, [{"type": "decision", "role": "system", "content": f"{op} {subject}",
                                              "metadata": meta, "event_key": key, "created_at": self.now()}])
        try:
            self.store.apply_fact_change(change)
        except StoreUnavailable as exc:
            self.needs_replay = True
            # The outcome is unknown (the store may have committed and then gone away): the
            # decision stays journaled and `replay()` applies it exactly once (`fact_ops`).
            raise JournaledDecision(f"{exc}; decision {key} is journaled and will be applied by replay "
                                    "when the store is back", key) from exc
        except BaseException as exc:
            self._reject(key, exc)
            raise
        self._embed([f.id for f in change.facts])
        if self.snapshot_on_change:
            touched = {f.id for f in change.facts} | {u.fact_id for u in change.updates} | {a.fact_id for a in change.attestations}
            touched |= {x.src for x in change.links} | {r.src for r in change.reviews}
            self.snapshot(touched=touched)

    def _reject(self, key: str, exc: BaseException) -> None:
        try:
            self.journal.append(SYSTEM_SESSION, [{"type": "decision", "role": "system", "content": f"rejected {key}",
                                                  "metadata": {"domain": "facts", "op": "rejected", "rejects": key,
                                                               "error": str(exc)[:500]},
                                                  "event_key": f"rej_{key}", "created_at": self.now()}])
        except PalimpsestError:
            pass  # replay then re-applies it and meets the same guard

    def _embed(self, ids: list[str]) -> int:
        """Vectors for new facts, best effort: a fact never fails for want of a vector
        (`embed_missing` catches up)."""
        embedder = self.embedder
        if embedder is None or not ids:
            return 0
        rows = [r for r in self.store.get_facts(ids)]
        try:
            vectors = embedder.checked([r.text for r in rows])
            self.store.put_fact_vectors(embedder.model_id, [(r.id, v) for r, v in zip(rows, vectors)])
        except PalimpsestError:
            return 0
        return len(rows)

    def embed_missing(self, batch: int = 256) -> int:
        """Embed every believed fact that has no vector of the current model."""
        embedder = self.embedder
        total = 0
        while embedder is not None:
            todo = self.store.facts_without_vectors(embedder.model_id, batch)
            if not todo:
                break
            vectors = embedder.checked([t for _, t in todo])
            self.store.put_fact_vectors(embedder.model_id, [(i, v) for (i, _), v in zip(todo, vectors)])
            total += len(todo)
        return total

    # -- reading -------------------------------------------------------------
    def _row(self, fact_id: Any) -> FactRow:
        if not isinstance(fact_id, str) or not fact_id:
            raise InvalidInput("a fact id is a non-empty string")
        found = self.store.get_facts([fact_id])
        if not found:
            raise NotFound(f"no fact with id {fact_id!r}")
        return found[0]

    @staticmethod
    def _need(row: FactRow, nulls: tuple[str, ...], verb: str) -> None:
        reasons = {"invalidated_at": "was retracted", "expired_at": f"was replaced by {row.superseded_by} (revision or merge)",
                   "superseded_by": f"is already superseded by {row.superseded_by}",
                   "valid_to": f"is closed (valid_to {row.valid_to})", "ended_at": "is closed"}
        for column in sorted(nulls, key=list(reasons).index):  # the most telling reason first
            if getattr(row, column) is not None:
                raise Conflict(f"cannot {verb} {row.id}: it {reasons[column]}")

    def _views(self, rows: list[FactRow], as_of: str | None = None) -> list[Fact]:
        moment = as_of or self.now()
        linked = {x.dst if x.src == r.id else x.src for r in rows for x in r.links if x.type == "disputed_with"}
        others = {r.id: r for r in self.store.get_facts(sorted(linked))} if linked else {}
        return [f for f in (view(r, moment, others) for r in rows) if f is not None]

    def get(self, fact_id: str, *, known_at: Any = None) -> Fact:
        """One fact as known now (or at `known_at`), whatever its status."""
        moment = _time(known_at, "known_at") if known_at is not None else None
        facts = self._views([self._row(fact_id)], moment)
        if not facts:
            raise NotFound(f"fact {fact_id!r} was not recorded yet at {moment}")
        return facts[0]

    def query(self, vault: str | list[str] | None = None, *, entity: str | None = None, kind: str | None = None,
              source: Any = None, valid_at: Any = None, known_at: Any = None, limit: int | None = None) -> list[Fact]:
        """Facts that hold now — or at world time `valid_at`, as known at system time
        `known_at` (what a query at that moment returned; `valid_at` defaults to it)."""
        vaults = self._known_vaults(vault)
        known = _time(known_at, "known_at") if known_at is not None else None
        moment = _time(valid_at, "valid_at") if valid_at is not None else (known or self.now())
        ref = parse_source(source)[1] if source is not None else None
        q = FactQuery(vaults=vaults, entity=entity, kind=_kind(kind) if kind else None, source=ref)
        if known is None:
            q.believed, q.open_at = True, moment
        else:
            q.recorded_by = known
        facts = [f for f in self._views(self.store.query_facts(q), known)
                 if f.invalidated_at is None and f.expired_at is None and f.holds_at(moment)]
        if ref is not None:
            facts = [f for f in facts if any(a.source == ref for a in f.attestations)]
        facts.sort(key=lambda f: (f.valid_from, f.id))
        return facts[:limit] if limit else facts

    def _known_vaults(self, vault: str | list[str] | None) -> list[str] | None:
        vaults = [vault] if isinstance(vault, str) else vault
        if vaults is not None:
            missing = set(vaults) - {v.name for v in self.store.fact_vaults()} - {DEFAULT_VAULT}  # exists implicitly
            if missing:
                raise NotFound(f"no fact vault named {', '.join(sorted(missing))}")
        return vaults

    def history(self, fact_id: str) -> list[Fact]:
        """The whole chain the fact belongs to, oldest first: every version (superseded,
        revised, closed, retracted) with its attestations."""
        row = self._row(fact_id)
        while row.supersedes:
            found = self.store.get_facts([row.supersedes])
            if not found:
                break
            row = found[0]
        chain, seen = [row], {row.id}
        while chain[-1].superseded_by and chain[-1].superseded_by not in seen:
            found = self.store.get_facts([chain[-1].superseded_by])
            if not found:
                break
            chain.append(found[0])
            seen.add(found[0].id)
        return self._views(chain)

    def search(self, query: str, *, vault: str | list[str] | None = None, limit: int = 10, valid_at: Any = None,
               known_at: Any = None, kind: str | None = None, query_vector: Any = None, semantic: bool = True) -> list[FactHit]:
        return search_facts(self, query, vault=vault, limit=limit, valid_at=valid_at, known_at=known_at, kind=kind,
                            query_vector=query_vector, semantic=semantic)

    def stats(self) -> dict[str, Any]:
        return self.store.fact_stats()

    # -- snapshot and replay -------------------------------------------------
    @property
    def snapshot_path(self) -> Path:
        return self.home / "facts.jsonl"

    def export_lines(self) -> list[str]:
        """Vaults, then every fact (sorted by vault and id) with its attestations and the
        links it is the source of: one JSON object per line, keys sorted; `record` says
        which (vault or fact)."""
        return self._vault_lines() + [self._fact_line(r) for r in self.store.query_facts(FactQuery())]

    def _vault_lines(self) -> list[str]:
        return [json.dumps({"record": "vault", **v.to_dict()}, ensure_ascii=False, sort_keys=True) for v in self.store.fact_vaults()]

    @staticmethod
    def _fact_line(row: FactRow) -> str:
        d = row.to_dict()
        d["links"] = [x for x in d["links"] if x["src"] == row.id]
        return json.dumps({"record": "fact", **d}, ensure_ascii=False, sort_keys=True)

    def snapshot(self, path: str | Path | None = None, touched: Iterable[str] | None = None) -> Path:
        """Write the snapshot atomically (a lock serialises writers of one home).

        After a change only the lines of the `touched` facts are rebuilt, as long as the
        file is still the one this process wrote last (another writer makes it rebuild all)."""
        target = Path(path) if path else self.snapshot_path
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target.with_name(target.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            own = target == self.snapshot_path
            lines = self._snapshot_lines(target, touched if own else None)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            with open(tmp, "w", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in self._vault_lines() + [lines[k] for k in sorted(lines)]))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
            if own:
                self._snapshot_cache = (_stat_key(target), lines)
        return target

    def _snapshot_lines(self, target: Path, touched: Iterable[str] | None) -> dict[tuple[str, str], str]:
        cached = self._snapshot_cache
        if touched is not None and cached is not None and cached[0] == _stat_key(target):
            lines = dict(cached[1])
            lines.update({(r.vault, r.id): self._fact_line(r) for r in self.store.get_facts(sorted(set(touched)))})
            return lines
        return {(r.vault, r.id): self._fact_line(r) for r in self.store.query_facts(FactQuery())}

    def _require_empty(self) -> None:
        if self.store.fact_stats()["facts"]:
            raise Conflict("the store already holds facts; restore into an empty store")

    def restore_snapshot(self, path: str | Path | None = None) -> int:
        """Load a snapshot into a store without facts, identical (one transaction)."""
        self._require_empty()
        source = Path(path) if path else self.snapshot_path
        change = FactChange()
        with open(source, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    d = json.loads(line)
                    kind = d.pop("record")
                    if kind == "vault":
                        change.vaults.append(FactVault(**d))
                    elif kind == "fact":
                        row = FactRow.from_dict(d)
                        change.attestations += row.attestations
                        change.links += row.links
                        row.attestations, row.links = [], []
                        change.facts.append(row)
                except (ValueError, TypeError, KeyError) as exc:
                    raise InvalidInput(f"{source}:{n}: not a snapshot line ({exc})") from None
        self.store.apply_fact_change(change)
        self._embed([f.id for f in change.facts])
        return len(change.facts)

    def decisions(self) -> list[tuple[str, dict[str, Any]]]:
        """(op key, metadata) of every fact decision in the system journal that took effect."""
        events = [e for e in self.journal.read(SYSTEM_SESSION) if e.type == "decision" and (e.metadata or {}).get("domain") == "facts"]
        rejected = {e.metadata.get("rejects") for e in events if e.metadata.get("op") == "rejected"}
        return [(e.event_key, e.metadata) for e in events if "change" in e.metadata and e.event_key not in rejected]

    def replay(self) -> int:
        """Apply every journaled decision the store has not applied yet, in journal order
        (idempotent; after a crash between journal and store, this catches up)."""
        done = self.store.fact_ops_applied()
        self.needs_replay = False
        applied = 0
        for key, meta in self.decisions():
            if key in done:
                continue
            try:
                applied += self.store.apply_fact_change(FactChange.from_dict(meta["change"], key))
            except (Conflict, NotFound) as exc:
                self._reject(key, exc)  # lost its race while the store was away: settled for every later replay
        if applied:
            self.embed_missing()
            if self.snapshot_on_change:
                self.snapshot()
        return applied

    def restore_from_journal(self) -> int:
        """Rebuild every fact vault into a store without facts from the system journal."""
        self._require_empty()
        return self.replay()


# -- search ------------------------------------------------------------------
def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def search_facts(facts: Facts, query: str, *, vault: str | list[str] | None = None, limit: int = 10,
                 valid_at: Any = None, known_at: Any = None, kind: str | None = None,
                 query_vector: Any = None, semantic: bool = True) -> list[FactHit]:
    """Facts matching `query`, best first, scored like messages (DESIGN.md, "Search and
    scoring"): `w_fts·fts + w_semantic·cosine + w_temporal·e^(−0.05·days since last_seen)
    + w_importance·importance`, where importance is the mean of the kind's (correction 0.9,
    preference 0.8, decision 0.7, fact 0.6, task 0.5) and the fact's salience. Only facts that
    hold now are searched, unless `valid_at` / `known_at` ask for another moment; superseded,
    retracted, closed and revised facts never come back otherwise. A hit needs a keyword
    match or a cosine of at least 0.35. Pass `query_vector` to reuse an embedding already
    computed with the same embedder, and `semantic=False` when the caller already knows the
    embedder cannot answer; without an embedder search is keyword-only."""
    from .search import check_query, query_terms
    from .search import normalise as normalise_scores

    query = check_query(query)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 1000:
        raise InvalidInput("limit must be an integer from 1 to 1000")
    vaults = facts._known_vaults(vault)
    known = _time(known_at, "known_at") if known_at is not None else None
    moment = _time(valid_at, "valid_at") if valid_at is not None else (known or facts.now())
    q = FactQuery(vaults=vaults, kind=_kind(kind) if kind else None)
    if known is None:
        q.believed, q.open_at = True, moment
    else:
        q.recorded_by = known
    pool = max(limit * 5, 50)
    terms = query_terms(query)
    found = facts.store.fact_keyword_search(terms, q, pool, True)
    if not found and len(terms) > 1:
        found = facts.store.fact_keyword_search(terms, q, pool, False)
    fts = dict(zip([i for i, _ in found], normalise_scores([s for _, s in found])))
    cosines = _semantic(facts, query, q, pool, query_vector) if semantic else {}
    ids = sorted(set(fts) | {i for i, s in cosines.items() if s >= MIN_SEMANTIC})
    hits = []
    now = known or facts.now()
    for fact in facts._views(facts.store.get_facts(ids), known):
        if fact.invalidated_at or fact.expired_at or not fact.holds_at(moment):
            continue
        parts = {"fts": fts.get(fact.id, 0.0), "semantic": max(0.0, cosines.get(fact.id, 0.0)),
                 "temporal": _decay(fact.last_seen, now),
                 "importance": (IMPORTANCE_BY_KIND.get(fact.kind, 0.5) + fact.salience) / 2}
        score = sum(facts.weights.get(k, 0.0) * v for k, v in parts.items())
        hits.append(FactHit(fact, score, parts))
    hits.sort(key=lambda h: (-h.score, h.fact.id))
    return hits[:limit]


def _semantic(facts: Facts, query: str, q: FactQuery, pool: int, query_vector: Any) -> dict[str, float]:
    embedder = facts.embedder
    if embedder is None or not query.strip():
        return {}
    try:
        vector = query_vector if query_vector is not None else embedder.checked([query])[0]
        return dict(facts.store.fact_vector_search(embedder.model_id, vector, q, pool))
    except PalimpsestError:
        return {}


def _decay(last_seen: str, now: str) -> float:
    days = max(0.0, (parse_time(now) - parse_time(last_seen)).total_seconds() / 86400)
    return math.exp(-0.05 * days)
