"""Erasing the rows of sessions and facts an operator ordered erased, in SQL both backends run.

Nothing else in the store deletes what was said (DESIGN.md, principle 1): these statements
run only for `palimpsest erase` (`erase.py`), which also rewrites the journals they were
derived from. What differs per backend is how a deleted text leaves the full-text index
(SQLite's external-content FTS5 tables are told each row's old text; PostgreSQL's tsvector
columns go with their rows), which caches forget, and how the files are made to forget
(`scrub`): those are the hooks below.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..base import NewJob
from .dialect import Runner, SQLBackend

# the tables whose rows name the session they belong to (summary rows go first, by their rowids)
_BY_SESSION = ("summary_sources", "summaries", "tags", "journal_cursors", "index_quarantine", "wiki_leaves", "wiki_mentions",
               "messages", "sessions")


class SQLEraseMixin(SQLBackend):
    enqueue: Callable[[list[NewJob]], int]  # (the backend's jobs mixin)

    def _unindex_summaries(self, run: Runner, where: str, param: Any) -> None:
        """Take the summaries `where` selects out of the full-text index (SQLite; PostgreSQL: nothing to do)."""

    def _unindex_facts(self, run: Runner, where: str, param: Any) -> None:
        """Take the facts `where` selects out of the full-text index and the entity index (SQLite; PostgreSQL keeps
        both in the row)."""

    def _forget_cached(self) -> None:
        """Drop what the backend caches of the rows just deleted (statistics, vector caches)."""

    def erase_sessions(self, sessions: list[str]) -> dict[str, int]:
        if not sessions:
            return {}
        in_sessions, param = self.dialect.in_list("session_id", sessions)
        counts: dict[str, int] = {}
        with self._writing() as run:
            summaries = f"SELECT rowid FROM summaries WHERE {in_sessions}"
            self._unindex_summaries(run, f"rowid IN ({summaries})", param)
            run(f"DELETE FROM summary_vectors WHERE summary_rowid IN ({summaries})", (param,))
            messages = {r[0] for r in run(f"SELECT id FROM messages WHERE {in_sessions}", (param,))}
            summary_ids = {r[0] for r in run(f"SELECT id FROM summaries WHERE {in_sessions}", (param,))}
            counts["wiki_statements"] = self._erase_statements(run, messages | summary_ids)
            in_summary, summary_param = self.dialect.in_list("summary_id", sorted(summary_ids))
            run(f"DELETE FROM wiki_patches WHERE {in_summary}", (summary_param,))
            for table in _BY_SESSION:
                column = "id" if table == "sessions" else "session_id"
                where, p = self.dialect.in_list(column, sessions)
                counts[table] = run.count(f"DELETE FROM {table} WHERE {where}", (p,))
            counts["jobs"], requeue = _erase_jobs(run, set(sessions) | messages | summary_ids)
        self.enqueue(requeue)
        self._forget_cached()
        return counts

    def _erase_statements(self, run: Runner, sources: set[str]) -> int:
        """Delete the wiki statements drawn from any of `sources` (a statement is one sentence: it is
        not cut down to its other sources, which may say it only together with the erased one)."""
        rows = run("SELECT id, summaries, messages FROM wiki_statements")
        gone = [r[0] for r in rows if sources & {*_ids(r[1]), *_ids(r[2])}]
        if not gone:
            return 0
        where, param = self.dialect.in_list("id", gone)
        return run.count(f"DELETE FROM wiki_statements WHERE {where}", (param,))

    def erase_facts(self, facts: list[str], attestations: list[tuple[str, str, str]]) -> int:
        with self._writing() as run:
            for fact_id, source_type, source in attestations:
                run("DELETE FROM fact_attestations WHERE fact_id = ? AND source_type = ? AND source = ?",
                    (fact_id, source_type, source))
            if not facts:
                return 0
            in_facts, param = self.dialect.in_list("id", facts)
            rowids = f"SELECT rowid FROM facts WHERE {in_facts}"
            self._unindex_facts(run, f"rowid IN ({rowids})", param)
            run(f"DELETE FROM fact_vectors WHERE fact_rowid IN ({rowids})", (param,))
            where, p = self.dialect.in_list("fact_id", facts)
            run(f"DELETE FROM fact_attestations WHERE {where}", (p,))
            for column in ("src", "dst"):
                where, p = self.dialect.in_list(column, facts)
                run(f"DELETE FROM fact_links WHERE {where}", (p,))
            for column in ("supersedes", "superseded_by"):  # a kept fact no longer points at an erased one
                where, p = self.dialect.in_list(column, facts)
                run(f"UPDATE facts SET {column} = NULL WHERE {where}", (p,))
            n = run.count(f"DELETE FROM facts WHERE {in_facts}", (param,))
        self._forget_cached()
        return n

    def erase_topics(self, topics: list[str]) -> int:
        if not topics:
            return 0
        with self._writing() as run:
            where, param = self.dialect.in_list("topic_id", topics)
            run(f"DELETE FROM wiki_keys WHERE {where}", (param,))
            where, param = self.dialect.in_list("id", topics)
            return run.count(f"DELETE FROM wiki_topics WHERE {where}", (param,))

    def record_erased(self, digests: list[str], at: str) -> None:
        with self._writing() as run:
            for digest in digests:
                run("INSERT INTO erased_sessions (digest, erased_at) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING", (digest, at))

    def erased_sessions(self, digests: list[str] | None = None) -> set[str]:
        if digests is None:
            return {r[0] for r in self._fetch("SELECT digest FROM erased_sessions", ())}
        if not digests:
            return set()
        where, param = self.dialect.in_list("digest", digests)
        return {r[0] for r in self._fetch(f"SELECT digest FROM erased_sessions WHERE {where}", (param,))}

    def journals_of(self, sessions: list[str]) -> list[str]:
        if not sessions:
            return []
        where, param = self.dialect.in_list("session_id", sessions)
        return sorted({r[0] for r in self._fetch(f"SELECT DISTINCT journal_id FROM journal_cursors WHERE {where}", (param,))})

    def drop_unused_taxonomy(self, key: str, values: list[str]) -> int:
        """Forget these values of the taxonomy of `key` that no tag carries any more (an erased customer's
        `user:` tag: its value is her identity)."""
        if not values:
            return 0
        where, param = self.dialect.in_list("value", values)
        with self._writing() as run:
            return run.count(f"""DELETE FROM tag_taxonomy WHERE key = ? AND {where}
                                 AND NOT EXISTS (SELECT 1 FROM tags t WHERE t.key = tag_taxonomy.key AND t.value = tag_taxonomy.value)""",
                             (key, param))


def _ids(value: Any) -> list[str]:
    loaded = json.loads(value) if isinstance(value, str) else value
    return [str(x) for x in loaded or []]


def _erase_jobs(run: Runner, names: set[str]) -> tuple[int, list[NewJob]]:
    """Delete the jobs whose payload names an erased session, message or summary; of a queued batch of
    message ids (`embed`) that names others too, the others are queued again (returned)."""
    deleted, requeue = 0, []
    for job_id, task, state, payload in run("SELECT id, task, state, payload FROM jobs"):
        data = json.loads(payload) if isinstance(payload, str) else payload
        if not isinstance(data, dict) or not _names(data, names):
            continue
        kept = [i for i in data.get("ids") or [] if i not in names]
        if kept and state == "queued" and not _names({k: v for k, v in data.items() if k != "ids"}, names):
            requeue.append(NewJob(task, {**data, "ids": kept}))
        deleted += run.count("DELETE FROM jobs WHERE id = ?", (job_id,))
    return deleted, requeue


def _names(value: Any, names: set[str]) -> bool:
    if isinstance(value, str):
        return value in names
    if isinstance(value, dict):
        return any(_names(v, names) for v in value.values())
    if isinstance(value, list):
        return any(_names(v, names) for v in value)
    return False
