"""The tags part of the Store contract: `key:value` tags on sessions and summaries, the
reviewed vocabulary (taxonomy) with its aliases, and the log of applied tag operations.

Every change is one `TagChange`, applied in one transaction together with its `op_key`
(when it has one) in `tag_ops`, so replaying the system journal applies each journaled
decision exactly once. Rows carry the session their target belongs to (`session_id`):
the tag filter and the counts are both "the session carries this accepted tag, on itself
or on one of its summaries" (`Filters.tag`, `tag_counts`), one definition in two places.
The rules (states, origins, aliases, what may be proposed) live in `palimpsest.tags`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any

TARGETS = ("session", "summary")
STATES = ("suggested", "accepted", "rejected")
ORIGINS = ("rule", "model", "person")


@dataclass
class TagRow:
    target_type: str
    target_id: str
    session_id: str
    key: str
    value: str
    state: str
    origin: str
    created_at: str
    source: str | None = None
    note: str | None = None
    decided_at: str | None = None

    @property
    def tag(self) -> str:
        return f"{self.key}:{self.value}"

    def to_dict(self) -> dict[str, Any]:
        return {"tag": self.tag, **asdict(self)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TagRow:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


@dataclass
class TaxonomyRow:
    key: str
    value: str
    state: str  # suggested | accepted | rejected | merged
    origin: str
    created_at: str
    description: str | None = None
    merged_into: str | None = None  # an alias: this value now means (key, merged_into)
    decided_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"tag": f"{self.key}:{self.value}", **asdict(self)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TaxonomyRow:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


@dataclass
class TagChange:
    """One operation: rows to upsert (insert, or overwrite state/origin/source/note/decided_at),
    taxonomy rows to upsert, merges (`key`, `from`, `into`: every tag of the old value re-pointed,
    a target holding both keeps one row, accepted winning), rows to delete (reaped orphans)."""

    tags: list[TagRow] = field(default_factory=list)
    taxonomy: list[TaxonomyRow] = field(default_factory=list)
    merges: list[tuple[str, str, str]] = field(default_factory=list)
    deletes: list[tuple[str, str, str, str]] = field(default_factory=list)  # target_type, target_id, key, value
    op_key: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"tags": [asdict(t) for t in self.tags], "taxonomy": [asdict(t) for t in self.taxonomy],
                "merges": [list(m) for m in self.merges], "deletes": [list(d) for d in self.deletes]}

    @classmethod
    def from_dict(cls, d: dict[str, Any], op_key: str | None = None) -> TagChange:
        return cls([TagRow.from_dict(t) for t in d.get("tags", [])], [TaxonomyRow.from_dict(t) for t in d.get("taxonomy", [])],
                   [(m[0], m[1], m[2]) for m in d.get("merges", [])], [(x[0], x[1], x[2], x[3]) for x in d.get("deletes", [])], op_key)


@dataclass
class TagQuery:
    target_type: str | None = None
    target_ids: list[str] | None = None
    session_ids: list[str] | None = None
    key: str | None = None
    value: str | None = None
    states: list[str] | None = None
    origin: str | None = None
    limit: int = 100
    offset: int = 0


class TagStoreContract(ABC):
    @abstractmethod
    def apply_tag_change(self, change: TagChange) -> bool:
        """Apply one change in one transaction; False (nothing done) when its `op_key` was applied before."""

    @abstractmethod
    def tag_ops_applied(self) -> set[str]: ...

    @abstractmethod
    def query_tags(self, q: TagQuery) -> list[TagRow]:
        """Tags matching the query, newest first (created_at, then key and value)."""

    @abstractmethod
    def count_tags(self, states: list[str] | None = None) -> dict[str, int]:
        """{state: number of tag rows}."""

    @abstractmethod
    def tag_counts(self, key: str | None = None, limit: int = 500) -> list[dict[str, Any]]:
        """Per accepted `key:value`: how many sessions carry it (on the session or one of its
        summaries) and how many messages those sessions hold — what `Filters.tag` matches."""

    @abstractmethod
    def sessions_with_key(self, key: str) -> dict[str, list[str]]:
        """Every session carrying an accepted tag of `key` on itself, with those tags ("key:value"), in no order."""

    @abstractmethod
    def session_tag_map(self, session_ids: list[str]) -> dict[str, list[str]]:
        """{session: sorted accepted `key:value` tags of the session and its summaries}."""

    @abstractmethod
    def taxonomy_rows(self, key: str | None = None, states: list[str] | None = None) -> list[TaxonomyRow]: ...

    @abstractmethod
    def tag_orphans(self, limit: int = 1000) -> list[TagRow]:
        """Tags whose target (session row, or summary row) is not in the index."""

    @abstractmethod
    def sessions_by_key(self, key: str, limit: int = 20) -> list[str]:
        """Ids of sessions whose client key is `key`, most recently active first."""
