"""The wiki part of the Store contract in SQL both backends run (`store/sql/dialect.py`)."""

from __future__ import annotations

import json
from typing import Any

from ...errors import Conflict
from ...records import iso, utcnow
from ..wiki_base import LeafMark, Mention, Patch, Statement, Topic, WikiChange, WikiStoreContract
from .dialect import SQLBackend

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


class SQLWikiMixin(SQLBackend, WikiStoreContract):
    def apply_wiki_change(self, change: WikiChange) -> bool:
        try:
            with self._writing() as run:
                if change.op_key is not None:
                    if run("SELECT 1 FROM wiki_ops WHERE op_key = ?", (change.op_key,)):
                        return False
                    run("INSERT INTO wiki_ops VALUES (?, ?)", (change.op_key, iso(utcnow())))
                self._apply(run, change)
        except self.dialect.unique_violation as exc:
            raise Conflict(f"the page was patched meanwhile: {str(exc)[:200]}") from None
        return True

    def _apply(self, run: Any, c: WikiChange) -> None:
        for p in c.patches:  # first: a stale writer fails before it writes anything
            run(f"INSERT INTO wiki_patches ({_PAT}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (p.id, p.topic_id, p.version, p.summary_id, p.origin, p.pipeline_version, _J(p.ops), p.created_at))
        for t in c.topics:
            run(f"""INSERT INTO wiki_topics ({_TOP}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET title = excluded.title, kind = excluded.kind, tag = excluded.tag,
                entities = excluded.entities, aliases = excluded.aliases, version = excluded.version,
                merged_into = excluded.merged_into, updated_at = excluded.updated_at""",
                (t.id, t.title, t.kind, t.tag, _J(t.entities), _J(t.aliases), t.version, t.merged_into, t.created_at, t.updated_at))
        for key, topic in c.drop_keys:
            run("DELETE FROM wiki_keys WHERE key = ? AND topic_id = ?", (key, topic))
        for key, topic, origin in c.keys:
            run("INSERT INTO wiki_keys VALUES (?, ?, ?) ON CONFLICT (key, topic_id) DO UPDATE SET origin = excluded.origin",
                (key, topic, origin))
        for s in c.statements:
            run(f"""INSERT INTO wiki_statements ({_STM}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET topic_id = excluded.topic_id, text = excluded.text, norm = excluded.norm,
                state = excluded.state, who = excluded.who, said_at = excluded.said_at, summaries = excluded.summaries,
                messages = excluded.messages, facts = excluded.facts, disputed_with = excluded.disputed_with,
                retired_by = excluded.retired_by, note = excluded.note, updated_at = excluded.updated_at""",
                (s.id, s.topic_id, s.text, s.norm, s.state, s.who, s.said_at, _J(s.summaries), _J(s.messages), _J(s.facts),
                 _J(s.disputed_with), s.retired_by, s.note, s.created_at, s.updated_at))
        for x in c.leaves:
            run("""INSERT INTO wiki_leaves (summary_id, session_id, version, origin, topics, mined_at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (summary_id) DO UPDATE SET version = excluded.version, origin = excluded.origin,
                topics = excluded.topics, mined_at = excluded.mined_at""",
                (x.summary_id, x.session_id, x.version, x.origin, _J(x.topics), x.mined_at))
        for m in c.mentions:
            run("INSERT INTO wiki_mentions VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key, summary_id) DO NOTHING",
                (m.key, m.summary_id, m.session_id, m.title, m.kind, m.created_at))

    def wiki_ops_applied(self) -> set[str]:
        return {r[0] for r in self._fetch("SELECT op_key FROM wiki_ops")}

    def wiki_has_ops(self) -> bool:
        return bool(self._fetch("SELECT 1 FROM wiki_ops LIMIT 1"))

    def wiki_topics(self, ids: list[str] | None = None, *, kind: str | None = None, query: str | None = None,
                    limit: int = 100, offset: int = 0, merged: bool = False, tagged: bool = False) -> list[Topic]:
        clauses, params = [], []  # type: list[str], list[Any]
        if ids is not None:
            sql, param = self.dialect.in_list("id", ids)
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
        rows = self._fetch(f"SELECT {_TOP} FROM wiki_topics WHERE {where} ORDER BY lower(title), id LIMIT ? OFFSET ?",
                               (*params, limit, offset))
        return [_topic(r) for r in rows]

    def wiki_topics_by_keys(self, keys: list[str], origins: list[str] | None = None) -> list[tuple[str, str]]:
        if not keys:
            return []
        sql, param = self.dialect.in_list("key", sorted(set(keys)))
        params: list[Any] = [param]
        if origins is not None:
            more, p2 = self.dialect.in_list("origin", origins)
            sql += f" AND {more}"
            params.append(p2)
        return [(r[0], r[1]) for r in self._fetch(f"SELECT key, topic_id FROM wiki_keys WHERE {sql} ORDER BY key, topic_id", tuple(params))]

    def wiki_statements(self, topic_ids: list[str], states: list[str] | None = None) -> list[Statement]:
        if not topic_ids:
            return []
        sql, param = self.dialect.in_list("topic_id", topic_ids)
        params: list[Any] = [param]
        if states is not None:
            more, p2 = self.dialect.in_list("state", states)
            sql += f" AND {more}"
            params.append(p2)
        rows = self._fetch(f"SELECT {_STM} FROM wiki_statements WHERE {sql} ORDER BY created_at, id", tuple(params))
        return [_statement(r) for r in rows]

    def wiki_statements_by_id(self, ids: list[str]) -> list[Statement]:
        if not ids:
            return []
        sql, param = self.dialect.in_list("id", ids)
        return [_statement(r) for r in self._fetch(f"SELECT {_STM} FROM wiki_statements WHERE {sql}", (param,))]

    def wiki_patches(self, topic_id: str) -> list[Patch]:
        rows = self._fetch(f"SELECT {_PAT} FROM wiki_patches WHERE topic_id = ? ORDER BY version", (topic_id,))
        return [Patch(id=r[0], topic_id=r[1], version=r[2], summary_id=r[3], origin=r[4], pipeline_version=r[5], ops=json.loads(r[6]),
                      created_at=r[7]) for r in rows]

    def wiki_leaf_marks(self, summary_ids: list[str]) -> dict[str, LeafMark]:
        if not summary_ids:
            return {}
        sql, param = self.dialect.in_list("summary_id", summary_ids)
        rows = self._fetch(f"SELECT summary_id, session_id, version, origin, mined_at, topics FROM wiki_leaves WHERE {sql}",
                               (param,))
        return {r[0]: LeafMark(r[0], r[1], r[2], r[3], r[4], json.loads(r[5])) for r in rows}

    def wiki_stale_leaves(self, version: int, limit: int) -> list[tuple[str, str]]:
        sql = """SELECT s.id, s.session_id FROM summaries s LEFT JOIN wiki_leaves w ON w.summary_id = s.id
                 WHERE s.depth = 0 AND (w.summary_id IS NULL OR w.version < ?) ORDER BY s.created_at, s.id LIMIT ?"""
        return [(r[0], r[1]) for r in self._fetch(sql, (version, limit))]

    def wiki_mentions(self, keys: list[str]) -> list[Mention]:
        if not keys:
            return []
        sql, param = self.dialect.in_list("key", sorted(set(keys)))
        rows = self._fetch(f"SELECT key, summary_id, session_id, title, kind, created_at FROM wiki_mentions WHERE {sql} "
                                       "ORDER BY created_at, summary_id", (param,))
        return [Mention(*r) for r in rows]

    def wiki_search(self, terms: list[str], limit: int) -> list[tuple[str, int]]:
        terms = [t.lower().replace("%", "").replace("_", "") for t in terms if t.strip()][:16]
        if not terms:
            return []
        score = " + ".join("CASE WHEN lower(text) LIKE ? THEN 1 ELSE 0 END" for _ in terms)
        likes = [f"%{t}%" for t in terms]
        sql = f"""SELECT id, n FROM (SELECT id, ({score}) AS n FROM wiki_statements WHERE state != 'retired') x
                  WHERE n > 0 ORDER BY n DESC, id LIMIT ?"""
        return [(r[0], int(r[1])) for r in self._fetch(sql, (*likes, limit))]

    def wiki_stats(self) -> dict[str, int]:
        out = {}
        for name, sql in (("topics", "SELECT count(*) FROM wiki_topics WHERE merged_into IS NULL"),
                          ("statements", "SELECT count(*) FROM wiki_statements WHERE state = 'current'"),
                          ("disputed", "SELECT count(*) FROM wiki_statements WHERE state = 'disputed'"),
                          ("retired", "SELECT count(*) FROM wiki_statements WHERE state = 'retired'"),
                          ("patches", "SELECT count(*) FROM wiki_patches"), ("leaves_mined", "SELECT count(*) FROM wiki_leaves")):
            out[name] = int(self._fetch(sql)[0][0])
        return out
