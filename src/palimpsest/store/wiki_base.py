"""The wiki part of the Store contract: topics, their statements, the patches that made
each page version, which leaves were mined at which pipeline version, and the mentions
that make a subject recurring.

Every change is one `WikiChange` of whole rows, applied in one transaction together with
its `op_key` in `wiki_ops`, so replaying the system journal applies each journaled change
exactly once. A patch is unique per (topic, version): two writers that patch one page from
the same version collide (`Conflict`) instead of losing an update. The rules (what a
topic is, how a leaf is mined) live in `palimpsest.wiki`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any

STATES = ("current", "disputed", "retired")


def _from(cls: Any, d: dict[str, Any]) -> Any:
    return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


@dataclass
class Topic:
    id: str
    title: str
    kind: str
    created_at: str
    updated_at: str
    tag: str | None = None
    entities: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    version: int = 0
    merged_into: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Topic:
        return _from(cls, d)  # type: ignore[no-any-return]


@dataclass
class Statement:
    id: str
    topic_id: str
    text: str
    norm: str
    state: str  # current | disputed | retired
    created_at: str
    updated_at: str
    who: str | None = None
    said_at: str | None = None
    summaries: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    disputed_with: list[str] = field(default_factory=list)
    retired_by: str | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Statement:
        return _from(cls, d)  # type: ignore[no-any-return]


@dataclass
class Patch:
    """One version of one page: the operations (`add`, `update`, `retire`, `dispute`,
    `entities`, `retitle`, `merge`) and what they came from (a leaf summary, a person, a tag merge)."""

    id: str
    topic_id: str
    version: int
    origin: str
    pipeline_version: int
    ops: list[dict[str, Any]]
    created_at: str
    summary_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Patch:
        return _from(cls, d)  # type: ignore[no-any-return]


@dataclass
class LeafMark:
    summary_id: str
    session_id: str
    version: int
    origin: str
    mined_at: str
    topics: list[str] = field(default_factory=list)


@dataclass
class Mention:
    key: str
    summary_id: str
    session_id: str
    title: str
    kind: str
    created_at: str


@dataclass
class WikiChange:
    topics: list[Topic] = field(default_factory=list)
    keys: list[tuple[str, str, str]] = field(default_factory=list)  # key, topic id, origin
    drop_keys: list[tuple[str, str]] = field(default_factory=list)  # key, topic id
    statements: list[Statement] = field(default_factory=list)
    patches: list[Patch] = field(default_factory=list)
    leaves: list[LeafMark] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    op_key: str | None = None

    def empty(self) -> bool:
        return not (self.topics or self.keys or self.drop_keys or self.statements or self.patches or self.leaves or self.mentions)

    def to_dict(self) -> dict[str, Any]:
        return {"topics": [asdict(t) for t in self.topics], "keys": [list(k) for k in self.keys],
                "drop_keys": [list(k) for k in self.drop_keys], "statements": [asdict(s) for s in self.statements],
                "patches": [asdict(p) for p in self.patches], "leaves": [asdict(x) for x in self.leaves],
                "mentions": [asdict(m) for m in self.mentions]}

    @classmethod
    def from_dict(cls, d: dict[str, Any], op_key: str | None = None) -> WikiChange:
        return cls([Topic.from_dict(t) for t in d.get("topics", [])], [(k[0], k[1], k[2]) for k in d.get("keys", [])],
                   [(k[0], k[1]) for k in d.get("drop_keys", [])], [Statement.from_dict(s) for s in d.get("statements", [])],
                   [Patch.from_dict(p) for p in d.get("patches", [])], [_from(LeafMark, x) for x in d.get("leaves", [])],
                   [_from(Mention, m) for m in d.get("mentions", [])], op_key)


class WikiStoreContract(ABC):
    @abstractmethod
    def apply_wiki_change(self, change: WikiChange) -> bool:
        """Apply one change in one transaction; False when its `op_key` was applied before,
        `Conflict` when a patch's (topic, version) exists (another writer got there first)."""

    @abstractmethod
    def wiki_ops_applied(self) -> set[str]: ...

    @abstractmethod
    def wiki_topics(self, ids: list[str] | None = None, *, kind: str | None = None, query: str | None = None,
                    limit: int = 100, offset: int = 0, merged: bool = False, tagged: bool = False) -> list[Topic]:
        """Topics by id (in any order), or all live ones (not merged away) by title, filtered
        by kind, by a substring of the title, and to those named by a tag (`tagged`)."""

    @abstractmethod
    def wiki_has_ops(self) -> bool:
        """Whether any wiki change was ever applied (a restored or new store has none)."""

    @abstractmethod
    def wiki_topics_by_keys(self, keys: list[str], origins: list[str] | None = None) -> list[tuple[str, str]]:
        """(key, topic id) for the keys (normalised titles, aliases, tag values) that name topics."""

    @abstractmethod
    def wiki_statements(self, topic_ids: list[str], states: list[str] | None = None) -> list[Statement]:
        """Statements of these topics, oldest first."""

    @abstractmethod
    def wiki_statements_by_id(self, ids: list[str]) -> list[Statement]: ...

    @abstractmethod
    def wiki_patches(self, topic_id: str) -> list[Patch]:
        """A page's patches, oldest first."""

    @abstractmethod
    def wiki_leaf_marks(self, summary_ids: list[str]) -> dict[str, LeafMark]: ...

    @abstractmethod
    def wiki_stale_leaves(self, version: int, limit: int) -> list[tuple[str, str]]:
        """(summary id, session) of leaf summaries never mined or mined below `version`, oldest first."""

    @abstractmethod
    def wiki_mentions(self, keys: list[str]) -> list[Mention]: ...

    @abstractmethod
    def wiki_search(self, terms: list[str], limit: int) -> list[tuple[str, int]]:
        """(statement id, number of terms it contains) of current and disputed statements
        holding any term (case-insensitive), most terms first."""

    @abstractmethod
    def wiki_stats(self) -> dict[str, int]: ...
