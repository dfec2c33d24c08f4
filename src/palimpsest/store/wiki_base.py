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

import json
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import Conflict

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


# -- the SQL both backends share ----------------------------------------------------
_TOP = "id, title, kind, tag, entities, aliases, version, merged_into, created_at, updated_at"
_STM = ("id, topic_id, text, norm, state, who, said_at, summaries, messages, facts, disputed_with, retired_by, note, "
        "created_at, updated_at")
_PAT = "id, topic_id, version, summary_id, origin, pipeline_version, ops, created_at"
_J = json.dumps


def _topic(r: Any) -> Topic:
    return Topic(id=r[0], title=r[1], kind=r[2], tag=r[3], entities=json.loads(r[4]), aliases=json.loads(r[5]), version=r[6],
                 merged_into=r[7], created_at=r[8], updated_at=r[9])


def _statement(r: Any) -> Statement:
    return Statement(id=r[0], topic_id=r[1], text=r[2], norm=r[3], state=r[4], who=r[5], said_at=r[6], summaries=json.loads(r[7]),
                     messages=json.loads(r[8]), facts=json.loads(r[9]), disputed_with=json.loads(r[10]), retired_by=r[11],
                     note=r[12], created_at=r[13], updated_at=r[14])


class SQLWikiMixin(WikiStoreContract):
    """The wiki SQL, portable; a backend supplies `_wiki_in`, `_wiki_rows`, `_wiki_tx` and
    `_wiki_unique` (its unique-violation exception) and sets `_WP`, its placeholder."""

    _WP = "?"

    @abstractmethod
    def _wiki_in(self, column: str, values: list[str]) -> tuple[str, Any]:
        """An `IN` clause for `column` and its parameter, in the backend's dialect."""

    @abstractmethod
    def _wiki_rows(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        """Run a read query, all rows."""

    @abstractmethod
    def _wiki_tx(self) -> Any:
        """A write transaction (a context manager yielding the connection)."""

    _wiki_unique: type[BaseException] = Exception

    def _w(self, sql: str) -> str:
        return sql if self._WP == "?" else sql.replace("?", self._WP)

    def apply_wiki_change(self, change: WikiChange) -> bool:
        from ..records import iso, utcnow

        try:
            with self._wiki_tx() as run:
                if change.op_key is not None:
                    if run(self._w("SELECT 1 FROM wiki_ops WHERE op_key = ?"), (change.op_key,)):
                        return False
                    run(self._w("INSERT INTO wiki_ops VALUES (?, ?)"), (change.op_key, iso(utcnow())))
                self._apply(run, change)
        except self._wiki_unique as exc:
            raise Conflict(f"the page was patched meanwhile: {str(exc)[:200]}") from None
        return True

    def _apply(self, run: Any, c: WikiChange) -> None:
        for p in c.patches:  # first: a stale writer fails before it writes anything
            run(self._w(f"INSERT INTO wiki_patches ({_PAT}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                (p.id, p.topic_id, p.version, p.summary_id, p.origin, p.pipeline_version, _J(p.ops), p.created_at))
        for t in c.topics:
            run(self._w(f"""INSERT INTO wiki_topics ({_TOP}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET title = excluded.title, kind = excluded.kind, tag = excluded.tag,
                entities = excluded.entities, aliases = excluded.aliases, version = excluded.version,
                merged_into = excluded.merged_into, updated_at = excluded.updated_at"""),
                (t.id, t.title, t.kind, t.tag, _J(t.entities), _J(t.aliases), t.version, t.merged_into, t.created_at, t.updated_at))
        for key, topic in c.drop_keys:
            run(self._w("DELETE FROM wiki_keys WHERE key = ? AND topic_id = ?"), (key, topic))
        for key, topic, origin in c.keys:
            run(self._w("INSERT INTO wiki_keys VALUES (?, ?, ?) ON CONFLICT (key, topic_id) DO UPDATE SET origin = excluded.origin"),
                (key, topic, origin))
        for s in c.statements:
            run(self._w(f"""INSERT INTO wiki_statements ({_STM}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET topic_id = excluded.topic_id, text = excluded.text, norm = excluded.norm,
                state = excluded.state, who = excluded.who, said_at = excluded.said_at, summaries = excluded.summaries,
                messages = excluded.messages, facts = excluded.facts, disputed_with = excluded.disputed_with,
                retired_by = excluded.retired_by, note = excluded.note, updated_at = excluded.updated_at"""),
                (s.id, s.topic_id, s.text, s.norm, s.state, s.who, s.said_at, _J(s.summaries), _J(s.messages), _J(s.facts),
                 _J(s.disputed_with), s.retired_by, s.note, s.created_at, s.updated_at))
        for x in c.leaves:
            run(self._w("""INSERT INTO wiki_leaves (summary_id, session_id, version, origin, topics, mined_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (summary_id) DO UPDATE SET version = excluded.version, origin = excluded.origin,
                topics = excluded.topics, mined_at = excluded.mined_at"""),
                (x.summary_id, x.session_id, x.version, x.origin, _J(x.topics), x.mined_at))
        for m in c.mentions:
            run(self._w("INSERT INTO wiki_mentions VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key, summary_id) DO NOTHING"),
                (m.key, m.summary_id, m.session_id, m.title, m.kind, m.created_at))

    def wiki_ops_applied(self) -> set[str]:
        return {r[0] for r in self._wiki_rows("SELECT op_key FROM wiki_ops")}

    def wiki_has_ops(self) -> bool:
        return bool(self._wiki_rows("SELECT 1 FROM wiki_ops LIMIT 1"))

    def wiki_topics(self, ids: list[str] | None = None, *, kind: str | None = None, query: str | None = None,
                    limit: int = 100, offset: int = 0, merged: bool = False, tagged: bool = False) -> list[Topic]:
        clauses, params = [], []  # type: list[str], list[Any]
        if ids is not None:
            sql, param = self._wiki_in("id", ids)
            clauses.append(sql)
            params.append(param)
        elif not merged:
            clauses.append("merged_into IS NULL")
        if tagged:
            clauses.append("tag IS NOT NULL")
        if kind is not None:
            clauses.append("kind = ?")
            params.append(kind)
        if query:
            clauses.append("lower(title) LIKE ?")
            params.append("%" + query.lower().replace("%", "").replace("_", "") + "%")
        where = " AND ".join(clauses) or "1 = 1"
        rows = self._wiki_rows(self._w(f"SELECT {_TOP} FROM wiki_topics WHERE {where} ORDER BY lower(title), id LIMIT ? OFFSET ?"),
                               (*params, limit, offset))
        return [_topic(r) for r in rows]

    def wiki_topics_by_keys(self, keys: list[str], origins: list[str] | None = None) -> list[tuple[str, str]]:
        if not keys:
            return []
        sql, param = self._wiki_in("key", sorted(set(keys)))
        params: list[Any] = [param]
        if origins is not None:
            more, p2 = self._wiki_in("origin", origins)
            sql += f" AND {more}"
            params.append(p2)
        return [(r[0], r[1]) for r in self._wiki_rows(self._w(f"SELECT key, topic_id FROM wiki_keys WHERE {sql} ORDER BY key, topic_id"), tuple(params))]

    def wiki_statements(self, topic_ids: list[str], states: list[str] | None = None) -> list[Statement]:
        if not topic_ids:
            return []
        sql, param = self._wiki_in("topic_id", topic_ids)
        params: list[Any] = [param]
        if states is not None:
            more, p2 = self._wiki_in("state", states)
            sql += f" AND {more}"
            params.append(p2)
        rows = self._wiki_rows(self._w(f"SELECT {_STM} FROM wiki_statements WHERE {sql} ORDER BY created_at, id"), tuple(params))
        return [_statement(r) for r in rows]

    def wiki_statements_by_id(self, ids: list[str]) -> list[Statement]:
        if not ids:
            return []
        sql, param = self._wiki_in("id", ids)
        return [_statement(r) for r in self._wiki_rows(self._w(f"SELECT {_STM} FROM wiki_statements WHERE {sql}"), (param,))]

    def wiki_patches(self, topic_id: str) -> list[Patch]:
        rows = self._wiki_rows(self._w(f"SELECT {_PAT} FROM wiki_patches WHERE topic_id = ? ORDER BY version"), (topic_id,))
        return [Patch(id=r[0], topic_id=r[1], version=r[2], summary_id=r[3], origin=r[4], pipeline_version=r[5], ops=json.loads(r[6]),
                      created_at=r[7]) for r in rows]

    def wiki_leaf_marks(self, summary_ids: list[str]) -> dict[str, LeafMark]:
        if not summary_ids:
            return {}
        sql, param = self._wiki_in("summary_id", summary_ids)
        rows = self._wiki_rows(self._w(f"SELECT summary_id, session_id, version, origin, mined_at, topics FROM wiki_leaves WHERE {sql}"),
                               (param,))
        return {r[0]: LeafMark(r[0], r[1], r[2], r[3], r[4], json.loads(r[5])) for r in rows}

    def wiki_stale_leaves(self, version: int, limit: int) -> list[tuple[str, str]]:
        sql = """SELECT s.id, s.session_id FROM summaries s LEFT JOIN wiki_leaves w ON w.summary_id = s.id
                 WHERE s.depth = 0 AND (w.summary_id IS NULL OR w.version < ?) ORDER BY s.created_at, s.id LIMIT ?"""
        return [(r[0], r[1]) for r in self._wiki_rows(self._w(sql), (version, limit))]

    def wiki_mentions(self, keys: list[str]) -> list[Mention]:
        if not keys:
            return []
        sql, param = self._wiki_in("key", sorted(set(keys)))
        rows = self._wiki_rows(self._w(f"SELECT key, summary_id, session_id, title, kind, created_at FROM wiki_mentions WHERE {sql} "
                                       "ORDER BY created_at, summary_id"), (param,))
        return [Mention(*r) for r in rows]

    def wiki_search(self, terms: list[str], limit: int) -> list[tuple[str, int]]:
        terms = [t.lower().replace("%", "").replace("_", "") for t in terms if t.strip()][:16]
        if not terms:
            return []
        score = " + ".join("CASE WHEN lower(text) LIKE ? THEN 1 ELSE 0 END" for _ in terms)
        likes = [f"%{t}%" for t in terms]
        sql = f"""SELECT id, n FROM (SELECT id, ({score}) AS n FROM wiki_statements WHERE state != 'retired') x
                  WHERE n > 0 ORDER BY n DESC, id LIMIT ?"""
        return [(r[0], int(r[1])) for r in self._wiki_rows(self._w(sql), (*likes, limit))]

    def wiki_stats(self) -> dict[str, int]:
        out = {}
        for name, sql in (("topics", "SELECT count(*) FROM wiki_topics WHERE merged_into IS NULL"),
                          ("statements", "SELECT count(*) FROM wiki_statements WHERE state = 'current'"),
                          ("disputed", "SELECT count(*) FROM wiki_statements WHERE state = 'disputed'"),
                          ("retired", "SELECT count(*) FROM wiki_statements WHERE state = 'retired'"),
                          ("patches", "SELECT count(*) FROM wiki_patches"), ("leaves_mined", "SELECT count(*) FROM wiki_leaves")):
            out[name] = int(self._wiki_rows(sql)[0][0])
        return out
