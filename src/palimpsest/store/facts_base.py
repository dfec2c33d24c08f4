"""The facts part of the Store contract: rows, one atomic change, and coarse queries.

Backends store fact rows and apply a `FactChange` in one transaction; they know nothing
of the bi-temporal rules, which live in `palimpsest.facts`. A change inserts rows and
sets "end" columns that may each be set only once (`valid_to`/`ended_at`,
`invalidated_at`, `expired_at`, `superseded_by`); every `FactUpdate` names the columns
that must still be NULL, so two writers racing to end the same fact cannot both win:
the loser's guard fails, its transaction rolls back and it gets `Conflict`. A change
carries the journal key of the decision event it applies, recorded in the same
transaction, so replaying the journal never applies an operation twice.

Queries are deliberately coarse (by vault, id, entity, kind, source, "live" or not):
the domain layer decides exactly what held when.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

# Columns a FactUpdate may set, each at most once (`supersedes` only when an existing fact
# is named as the successor of another).
END_COLUMNS = ("valid_to", "ended_at", "invalidated_at", "expired_at", "superseded_by", "supersedes")


@dataclass
class Attestation:
    """One hearing of a fact: who or what said it (`source_type` event | document |
    person | system, and `source`), when it was said (`at`) and when it was recorded."""

    fact_id: str
    source_type: str
    source: str
    at: str
    recorded_at: str
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FactLink:
    """`src` → `dst` of `type` related_to | disputed_with | supersedes | revises | merged_into | reinstates (a retraction
    wrote `src` again as `dst` held, `Facts.retract`).
    `review` is pending | same | kept for related_to links the curator listed for review."""

    src: str
    dst: str
    type: str
    recorded_at: str
    review: str | None = None
    reviewed_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FactRow:
    """A fact as stored. Derived fields (confidence, last_seen, status) are computed by
    `palimpsest.facts` from this row, its attestations and its links."""

    id: str
    vault: str
    text: str
    norm: str
    kind: str
    entities: list[str]
    salience: float
    base_confidence: float
    valid_from: str
    recorded_at: str
    valid_to: str | None = None
    ended_at: str | None = None
    invalidated_at: str | None = None
    expired_at: str | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    attestations: list[Attestation] = field(default_factory=list)
    links: list[FactLink] = field(default_factory=list)  # every link with this fact at either end

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FactRow:
        d = dict(d)
        d["attestations"] = [Attestation(**a) for a in d.get("attestations") or []]
        d["links"] = [FactLink(**x) for x in d.get("links") or []]
        return cls(**d)


@dataclass
class FactVault:
    name: str
    type: str
    created_at: str
    description: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FactUpdate:
    """Set end columns of one fact, only if every column in `require_null` is still NULL
    (the columns set are always required NULL too). An empty `set` just checks and locks."""

    fact_id: str
    set: dict[str, str] = field(default_factory=dict)
    require_null: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"fact_id": self.fact_id, "set": self.set, "require_null": list(self.require_null)}


@dataclass
class ReviewUpdate:
    """Settle a pending review of the link (src, dst, type)."""

    src: str
    dst: str
    type: str
    review: str
    reviewed_at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FactChange:
    """Everything one operation writes, applied in one transaction."""

    op_key: str | None = None
    vaults: list[FactVault] = field(default_factory=list)
    facts: list[FactRow] = field(default_factory=list)
    attestations: list[Attestation] = field(default_factory=list)
    links: list[FactLink] = field(default_factory=list)
    updates: list[FactUpdate] = field(default_factory=list)
    reviews: list[ReviewUpdate] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "vaults": [v.to_dict() for v in self.vaults],
            "facts": [{k: v for k, v in f.to_dict().items() if k not in ("attestations", "links")} for f in self.facts],
            "attestations": [a.to_dict() for a in self.attestations],
            "links": [x.to_dict() for x in self.links],
            "updates": [u.to_dict() for u in self.updates],
            "reviews": [r.to_dict() for r in self.reviews],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any], op_key: str | None = None) -> FactChange:
        return cls(
            op_key=op_key,
            vaults=[FactVault(**v) for v in d.get("vaults", [])],
            facts=[FactRow.from_dict(f) for f in d.get("facts", [])],
            attestations=[Attestation(**a) for a in d.get("attestations", [])],
            links=[FactLink(**x) for x in d.get("links", [])],
            updates=[FactUpdate(u["fact_id"], u.get("set", {}), tuple(u.get("require_null", ()))) for u in d.get("updates", [])],
            reviews=[ReviewUpdate(**r) for r in d.get("reviews", [])],
        )


@dataclass
class FactQuery:
    """Coarse selection of fact rows; every given field narrows it."""

    vaults: list[str] | None = None
    ids: list[str] | None = None
    entity: str | None = None  # listed in `entities`, or a phrase of its words (coarse: stems; `Facts.query` checks words)
    kind: str | None = None
    source: str | list[str] | None = None  # an attestation's source (any type), or any of several
    norm: str | None = None
    recorded_by: str | None = None  # recorded_at <= this
    believed: bool = False  # not expired (revised, merged) and not invalidated (retracted)
    open_at: str | None = None  # valid_from <= open_at < valid_to (or no valid_to)
    during: tuple[str | None, str | None] | None = None  # (since, until exclusive): held at some time in it
    open_after: str | None = None  # not superseded, and no valid_to at or before it: current or future then
    limit: int | None = None


class FactStoreContract(ABC):
    """What the facts layer asks of an index database (mixed into every backend)."""

    @abstractmethod
    def apply_fact_change(self, change: FactChange) -> bool:
        """Apply `change` in one transaction. Returns False (and writes nothing) when its
        `op_key` was applied before. Raises `Conflict` when an update's guard fails or a
        fact id already exists, `NotFound` when an updated fact or a linked id is unknown."""

    @abstractmethod
    def fact_vaults(self) -> list[FactVault]: ...

    @abstractmethod
    def get_facts(self, ids: list[str]) -> list[FactRow]:
        """Rows with their attestations and links, in the order asked; unknown ids left out."""

    @abstractmethod
    def query_facts(self, q: FactQuery) -> list[FactRow]:
        """Rows with attestations and links, ordered by (vault, id)."""

    @abstractmethod
    def pending_reviews(self, vault: str | None) -> list[FactLink]: ...

    @abstractmethod
    def fact_keyword_search(self, terms: list[str], q: FactQuery, limit: int, match_all: bool) -> list[tuple[str, float]]:
        """(fact id, BM25-like score, higher better) of facts selected by `q` whose text or
        entities match the terms (all, or any). Terms are plain words: the backend quotes them."""

    @abstractmethod
    def put_fact_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        """One unit vector per fact id for `model`; a different dimension than stored is refused."""

    @abstractmethod
    def fact_vector_search(self, model: str, query: np.ndarray, q: FactQuery, limit: int) -> list[tuple[str, float]]:
        """(fact id, cosine) of the nearest fact vectors of `model` among facts selected by `q`."""

    @abstractmethod
    def facts_without_vectors(self, model: str, limit: int) -> list[tuple[str, str]]:
        """(id, text) of believed facts that have no vector of `model` yet."""

    @abstractmethod
    def fact_ops_applied(self) -> set[str]:
        """Journal keys of every decision event applied to this store."""

    @abstractmethod
    def fact_ops_count(self) -> int:
        """How many decision events this store has applied, any home's (a snapshot kept from an older count misses what
        other homes changed)."""

    @abstractmethod
    def fact_stats(self) -> dict[str, Any]: ...
