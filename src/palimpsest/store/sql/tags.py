"""The tags part of the Store contract in SQL both backends run (`store/sql/dialect.py`).

The tag tables use only portable SQL (text times, upserts with ON CONFLICT); only the
placeholder and how a list is bound differ, and the dialect supplies both.
"""

from __future__ import annotations

from typing import Any

from ...records import iso, utcnow
from ..tags_base import TagChange, TagQuery, TagRow, TagStoreContract, TaxonomyRow
from .dialect import SQLBackend

_T = "target_type, target_id, session_id, key, value, state, origin, created_at, source, note, decided_at"
_X = "key, value, state, origin, created_at, description, merged_into, decided_at"


class SQLTagsMixin(SQLBackend, TagStoreContract):
    def apply_tag_change(self, change: TagChange) -> bool:
        with self._writing() as run:
            if change.op_key is not None:
                if run("SELECT 1 FROM tag_ops WHERE op_key = ?", (change.op_key,)):
                    return False
                run("INSERT INTO tag_ops VALUES (?, ?)", (change.op_key, iso(utcnow())))
            for x in change.taxonomy:
                run(f"""INSERT INTO tag_taxonomy ({_X}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (key, value) DO UPDATE SET state = excluded.state, origin = excluded.origin,
                    description = coalesce(excluded.description, tag_taxonomy.description),
                    merged_into = excluded.merged_into, decided_at = excluded.decided_at""",
                    (x.key, x.value, x.state, x.origin, x.created_at, x.description, x.merged_into, x.decided_at))
            for key, old, new in change.merges:
                self._merge(run, key, old, new)
            for t in change.tags:
                run(f"""INSERT INTO tags ({_T}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (target_type, target_id, key, value) DO UPDATE SET state = excluded.state,
                    origin = excluded.origin, source = coalesce(excluded.source, tags.source),
                    note = coalesce(excluded.note, tags.note), decided_at = excluded.decided_at""",
                    (t.target_type, t.target_id, t.session_id, t.key, t.value, t.state, t.origin, t.created_at, t.source,
                     t.note, t.decided_at))
            for d in change.deletes:
                run("DELETE FROM tags WHERE target_type = ? AND target_id = ? AND key = ? AND value = ?", tuple(d))
        return True

    def _merge(self, run: Any, key: str, old: str, new: str) -> None:
        same = "o.target_type = tags.target_type AND o.target_id = tags.target_id"
        # a target holding both values keeps the new one, accepted if either was
        run(f"""UPDATE tags SET state = 'accepted' WHERE key = ? AND value = ? AND state != 'accepted' AND EXISTS
            (SELECT 1 FROM tags o WHERE o.key = ? AND o.value = ? AND {same} AND o.state = 'accepted')""", (key, new, key, old))
        run(f"""DELETE FROM tags WHERE key = ? AND value = ? AND EXISTS
            (SELECT 1 FROM tags o WHERE o.key = ? AND o.value = ? AND {same})""", (key, old, key, new))
        run("UPDATE tags SET value = ? WHERE key = ? AND value = ?", (new, key, old))
        run("UPDATE tag_taxonomy SET merged_into = ? WHERE key = ? AND merged_into = ?", (new, key, old))

    def tag_ops_applied(self) -> set[str]:
        return {r[0] for r in self._fetch("SELECT op_key FROM tag_ops")}

    def query_tags(self, q: TagQuery) -> list[TagRow]:
        clauses, params = [], []  # type: list[str], list[Any]
        for column, value in (("target_type", q.target_type), ("key", q.key), ("value", q.value), ("origin", q.origin)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        for column, values in (("target_id", q.target_ids), ("session_id", q.session_ids), ("state", q.states)):
            if values is not None:
                sql, param = self.dialect.in_list(column, values)
                clauses.append(sql)
                params.append(param)
        where = " AND ".join(clauses) or "1 = 1"
        sql = f"SELECT {_T} FROM tags WHERE {where} ORDER BY created_at DESC, key, value, target_id LIMIT ? OFFSET ?"
        return [TagRow(*r) for r in self._fetch(sql, (*params, q.limit, q.offset))]

    def count_tags(self, states: list[str] | None = None) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self._fetch("SELECT state, count(*) FROM tags GROUP BY state")
                if states is None or r[0] in states}

    def tag_counts(self, key: str | None = None, limit: int = 500) -> list[dict[str, Any]]:
        where, params = ("AND t.key = ?", [key]) if key is not None else ("", [])
        sql = f"""SELECT t.key, t.value, count(DISTINCT t.session_id),
                  (SELECT count(*) FROM messages m WHERE m.session_id IN (SELECT t2.session_id FROM tags t2
                   WHERE t2.key = t.key AND t2.value = t.value AND t2.state = 'accepted'))
                  FROM tags t WHERE t.state = 'accepted' {where} GROUP BY t.key, t.value
                  ORDER BY count(DISTINCT t.session_id) DESC, t.key, t.value LIMIT ?"""
        return [{"tag": f"{r[0]}:{r[1]}", "key": r[0], "value": r[1], "sessions": int(r[2]), "messages": int(r[3])}
                for r in self._fetch(sql, (*params, limit))]

    def sessions_with_key(self, key: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for sid, value in self._fetch("SELECT session_id, value FROM tags WHERE key = ? AND state = 'accepted' "
                                      "AND target_type = 'session'", (key,)):
            out.setdefault(sid, []).append(f"{key}:{value}")
        return out

    def session_tag_map(self, session_ids: list[str]) -> dict[str, list[str]]:
        if not session_ids:
            return {}
        sql, param = self.dialect.in_list("session_id", session_ids)
        out: dict[str, set[str]] = {}
        for sid, key, value in self._fetch(f"SELECT session_id, key, value FROM tags WHERE state = 'accepted' AND {sql}", (param,)):
            out.setdefault(sid, set()).add(f"{key}:{value}")
        return {sid: sorted(tags) for sid, tags in out.items()}

    def taxonomy_rows(self, key: str | None = None, states: list[str] | None = None) -> list[TaxonomyRow]:
        clauses, params = [], []  # type: list[str], list[Any]
        if key is not None:
            clauses.append("key = ?")
            params.append(key)
        if states is not None:
            sql, param = self.dialect.in_list("state", states)
            clauses.append(sql)
            params.append(param)
        where = " AND ".join(clauses) or "1 = 1"
        rows = self._fetch(f"SELECT {_X} FROM tag_taxonomy WHERE {where} ORDER BY key, value", tuple(params))
        return [TaxonomyRow(key=r[0], value=r[1], state=r[2], origin=r[3], created_at=r[4], description=r[5], merged_into=r[6],
                            decided_at=r[7]) for r in rows]

    def tag_orphans(self, limit: int = 1000) -> list[TagRow]:
        sql = f"""SELECT {_T} FROM tags t WHERE
                  (t.target_type = 'session' AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = t.target_id)) OR
                  (t.target_type = 'summary' AND NOT EXISTS (SELECT 1 FROM summaries s WHERE s.id = t.target_id)) LIMIT ?"""
        return [TagRow(*r) for r in self._fetch(sql, (limit,))]

    def sessions_by_key(self, key: str, limit: int = 20) -> list[str]:
        sql = "SELECT id FROM sessions WHERE key = ? ORDER BY updated_at DESC, id LIMIT ?"
        return [r[0] for r in self._fetch(sql, (key, limit))]
