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


# -- the SQL both backends share ----------------------------------------------------
# The tag tables use only portable SQL (text times, upserts with ON CONFLICT); the backends
# differ in the placeholder, how a list is bound, and how a statement runs (`_tag_exec`,
# `_tag_rows`, `_tag_in`), which `sqlite_tags.py` and `postgres_tags.py` supply.
_T = "target_type, target_id, session_id, key, value, state, origin, created_at, source, note, decided_at"
_X = "key, value, state, origin, created_at, description, merged_into, decided_at"


class SQLTagsMixin(TagStoreContract):
    _P = "?"

    @abstractmethod
    def _tag_in(self, column: str, values: list[str]) -> tuple[str, Any]:
        """An `IN` clause for `column` and its parameter, in the backend's dialect."""

    @abstractmethod
    def _tag_rows(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        """Run a read query, all rows."""

    @abstractmethod
    def _tag_tx(self) -> Any:
        """A write transaction (a context manager yielding the connection)."""

    def _sql(self, sql: str) -> str:
        return sql if self._P == "?" else sql.replace("?", self._P)

    def apply_tag_change(self, change: TagChange) -> bool:
        from ..records import iso, utcnow

        with self._tag_tx() as run:
            if change.op_key is not None:
                if run(self._sql("SELECT 1 FROM tag_ops WHERE op_key = ?"), (change.op_key,)):
                    return False
                run(self._sql("INSERT INTO tag_ops VALUES (?, ?)"), (change.op_key, iso(utcnow())))
            for x in change.taxonomy:
                run(self._sql(f"""INSERT INTO tag_taxonomy ({_X}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (key, value) DO UPDATE SET state = excluded.state, origin = excluded.origin,
                    description = coalesce(excluded.description, tag_taxonomy.description),
                    merged_into = excluded.merged_into, decided_at = excluded.decided_at"""),
                    (x.key, x.value, x.state, x.origin, x.created_at, x.description, x.merged_into, x.decided_at))
            for key, old, new in change.merges:
                self._merge(run, key, old, new)
            for t in change.tags:
                run(self._sql(f"""INSERT INTO tags ({_T}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (target_type, target_id, key, value) DO UPDATE SET state = excluded.state,
                    origin = excluded.origin, source = coalesce(excluded.source, tags.source),
                    note = coalesce(excluded.note, tags.note), decided_at = excluded.decided_at"""),
                    (t.target_type, t.target_id, t.session_id, t.key, t.value, t.state, t.origin, t.created_at, t.source,
                     t.note, t.decided_at))
            for d in change.deletes:
                run(self._sql("DELETE FROM tags WHERE target_type = ? AND target_id = ? AND key = ? AND value = ?"), tuple(d))
        return True

    def _merge(self, run: Any, key: str, old: str, new: str) -> None:
        same = "o.target_type = tags.target_type AND o.target_id = tags.target_id"
        # a target holding both values keeps the new one, accepted if either was
        run(self._sql(f"""UPDATE tags SET state = 'accepted' WHERE key = ? AND value = ? AND state != 'accepted' AND EXISTS
            (SELECT 1 FROM tags o WHERE o.key = ? AND o.value = ? AND {same} AND o.state = 'accepted')"""), (key, new, key, old))
        run(self._sql(f"""DELETE FROM tags WHERE key = ? AND value = ? AND EXISTS
            (SELECT 1 FROM tags o WHERE o.key = ? AND o.value = ? AND {same})"""), (key, old, key, new))
        run(self._sql("UPDATE tags SET value = ? WHERE key = ? AND value = ?"), (new, key, old))
        run(self._sql("UPDATE tag_taxonomy SET merged_into = ? WHERE key = ? AND merged_into = ?"), (new, key, old))

    def tag_ops_applied(self) -> set[str]:
        return {r[0] for r in self._tag_rows("SELECT op_key FROM tag_ops")}

    def query_tags(self, q: TagQuery) -> list[TagRow]:
        clauses, params = [], []  # type: list[str], list[Any]
        for column, value in (("target_type", q.target_type), ("key", q.key), ("value", q.value), ("origin", q.origin)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        for column, values in (("target_id", q.target_ids), ("session_id", q.session_ids), ("state", q.states)):
            if values is not None:
                sql, param = self._tag_in(column, values)
                clauses.append(sql)
                params.append(param)
        where = " AND ".join(clauses) or "1 = 1"
        sql = f"SELECT {_T} FROM tags WHERE {where} ORDER BY created_at DESC, key, value, target_id LIMIT ? OFFSET ?"
        return [TagRow(*r) for r in self._tag_rows(self._sql(sql), (*params, q.limit, q.offset))]

    def count_tags(self, states: list[str] | None = None) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self._tag_rows("SELECT state, count(*) FROM tags GROUP BY state")
                if states is None or r[0] in states}

    def tag_counts(self, key: str | None = None, limit: int = 500) -> list[dict[str, Any]]:
        where, params = ("AND t.key = ?", [key]) if key is not None else ("", [])
        sql = f"""SELECT t.key, t.value, count(DISTINCT t.session_id),
                  (SELECT count(*) FROM messages m WHERE m.session_id IN (SELECT t2.session_id FROM tags t2
                   WHERE t2.key = t.key AND t2.value = t.value AND t2.state = 'accepted'))
                  FROM tags t WHERE t.state = 'accepted' {where} GROUP BY t.key, t.value
                  ORDER BY count(DISTINCT t.session_id) DESC, t.key, t.value LIMIT ?"""
        return [{"tag": f"{r[0]}:{r[1]}", "key": r[0], "value": r[1], "sessions": int(r[2]), "messages": int(r[3])}
                for r in self._tag_rows(self._sql(sql), (*params, limit))]

    def session_tag_map(self, session_ids: list[str]) -> dict[str, list[str]]:
        if not session_ids:
            return {}
        sql, param = self._tag_in("session_id", session_ids)
        out: dict[str, set[str]] = {}
        for sid, key, value in self._tag_rows(self._sql(f"SELECT session_id, key, value FROM tags WHERE state = 'accepted' AND {sql}"), (param,)):
            out.setdefault(sid, set()).add(f"{key}:{value}")
        return {sid: sorted(tags) for sid, tags in out.items()}

    def taxonomy_rows(self, key: str | None = None, states: list[str] | None = None) -> list[TaxonomyRow]:
        clauses, params = [], []  # type: list[str], list[Any]
        if key is not None:
            clauses.append("key = ?")
            params.append(key)
        if states is not None:
            sql, param = self._tag_in("state", states)
            clauses.append(sql)
            params.append(param)
        where = " AND ".join(clauses) or "1 = 1"
        rows = self._tag_rows(self._sql(f"SELECT {_X} FROM tag_taxonomy WHERE {where} ORDER BY key, value"), tuple(params))
        return [TaxonomyRow(key=r[0], value=r[1], state=r[2], origin=r[3], created_at=r[4], description=r[5], merged_into=r[6],
                            decided_at=r[7]) for r in rows]

    def tag_orphans(self, limit: int = 1000) -> list[TagRow]:
        sql = f"""SELECT {_T} FROM tags t WHERE
                  (t.target_type = 'session' AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = t.target_id)) OR
                  (t.target_type = 'summary' AND NOT EXISTS (SELECT 1 FROM summaries s WHERE s.id = t.target_id)) LIMIT ?"""
        return [TagRow(*r) for r in self._tag_rows(self._sql(sql), (limit,))]

    def sessions_by_key(self, key: str, limit: int = 20) -> list[str]:
        sql = self._sql("SELECT id FROM sessions WHERE key = ? ORDER BY updated_at DESC, id LIMIT ?")
        return [r[0] for r in self._tag_rows(sql, (key, limit))]
