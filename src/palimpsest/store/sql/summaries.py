"""The summaries part of the Store contract in SQL both backends run (`store/sql/dialect.py`).

What differs stays with each backend: writing a summary with its full-text row, finding
the messages in no leaf, full text, vectors and writing synthesized tool-call content.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..base import Filters
from ..summaries_base import Summary, SummaryStoreContract
from .dialect import SQLBackend

SUMMARY_COLUMNS = ("s.id, s.session_id, s.depth, s.content, s.message_count, s.earliest_at, s.latest_at, s.model, s.created_at, s.superseded_by, "
                   "s.access_count, s.last_accessed_at")
_USAGE = ("calls", "prompt_tokens", "completion_tokens", "failures", "invalid")


class SQLSummariesMixin(SQLBackend, SummaryStoreContract):
    _filter_sql: Callable[..., tuple[str, list[Any]]]  # the backend's Filters as SQL (`rows.filter_sql`)

    def _summary_rows(self, sql: str, params: Any = ()) -> list[Summary]:
        t = self.dialect.load_time
        out = [Summary(id=r[0], session_id=r[1], depth=r[2], content=r[3], message_count=r[4], earliest_at=t(r[5]),
                       latest_at=t(r[6]), model=r[7], created_at=t(r[8]), superseded_by=r[9], access_count=r[10],
                       last_accessed_at=t(r[11])) for r in self._fetch(sql, params)]
        if not out:
            return out
        ids = [s.id for s in out]
        summaries, param = self.dialect.in_list("summary_id", ids)
        sources_in, _ = self.dialect.in_list("ss.source_id", ids)
        sources: dict[str, list[str]] = {}
        for sid, src in self._fetch(f"SELECT summary_id, source_id FROM summary_sources WHERE {summaries} ORDER BY ordinal", (param,)):
            sources.setdefault(sid, []).append(src)
        parents = dict(self._fetch(  # type: ignore[arg-type]
            f"""SELECT ss.source_id, ss.summary_id FROM summary_sources ss JOIN summaries p ON p.id = ss.summary_id
                WHERE {sources_in} AND p.superseded_by IS NULL""", (param,)))
        for s in out:
            s.sources, s.parent_id = sources.get(s.id, []), parents.get(s.id)
        return out

    def get_summaries(self, ids: list[str]) -> list[Summary]:
        if not ids:
            return []
        where, param = self.dialect.in_list("s.id", list(ids))
        by_id = {s.id: s for s in self._summary_rows(f"SELECT {SUMMARY_COLUMNS} FROM summaries s WHERE {where}", (param,))}
        return [by_id[i] for i in ids if i in by_id]

    def session_summaries(self, session_id: str, depth: int | None = None, *, orphans: bool = False, live: bool = True) -> list[Summary]:
        clauses, params = ["s.session_id = ?"], [session_id]  # type: list[str], list[Any]
        if depth is not None:
            clauses.append("s.depth = ?")
            params.append(depth)
        if live:
            clauses.append("s.superseded_by IS NULL")
        if orphans:
            clauses.append("""NOT EXISTS (SELECT 1 FROM summary_sources ss JOIN summaries p ON p.id = ss.summary_id
                              WHERE ss.source_id = s.id AND p.superseded_by IS NULL)""")
        return self._summary_rows(f"SELECT {SUMMARY_COLUMNS} FROM summaries s WHERE {' AND '.join(clauses)} "
                                  "ORDER BY s.depth, s.earliest_at, s.rowid", params)

    def touch_summaries(self, ids: list[str], at: str) -> None:
        if not ids:
            return
        d = self.dialect
        where, param = d.in_list("id", sorted(set(ids)))
        with self._writing() as run:  # rows locked in id order, so two overlapping touches cannot deadlock
            run(f"""UPDATE summaries SET access_count = access_count + 1, last_accessed_at = {d.time_param}
                    WHERE rowid IN (SELECT rowid FROM summaries WHERE {where} ORDER BY id{d.lock_rows})""", (at, param))

    def count_unsummarised(self, session_id: str) -> int:
        total = self._fetch("SELECT count(*) FROM messages WHERE session_id = ?", (session_id,))[0][0]
        done = self._fetch("""SELECT count(*) FROM summary_sources ss JOIN messages m ON m.id = ss.source_id
                              WHERE ss.session_id = ? AND ss.kind = 'message'""", (session_id,))[0][0]
        return int(total - done)

    def _summary_where(self, f: Any) -> tuple[str, list[Any]]:
        """Filters on summaries `s`: session, agent, channel, tag, and the time span overlapping."""
        if f is None:
            return self.dialect.true, []
        where, params = self._filter_sql(Filters(session=f.session, sessions=f.sessions, agent=f.agent, channel=f.channel,
                                                    tag=f.tag, apart=f.apart), "s")
        if f.since is not None:
            where += f" AND s.latest_at >= {self.dialect.time_param}"
            params.append(f.since)
        if f.until is not None:
            where += f" AND s.earliest_at < {self.dialect.time_param}"
            params.append(f.until)
        return where, params

    def summaries_without_vectors(self, model: str, limit: int) -> list[Summary]:
        return self._summary_rows(f"""SELECT {SUMMARY_COLUMNS} FROM summaries s WHERE NOT EXISTS (SELECT 1 FROM summary_vectors v
                                      WHERE v.model = ? AND v.summary_rowid = s.rowid) ORDER BY s.rowid LIMIT ?""", (model, limit))

    def summary_stats(self) -> dict[str, Any]:
        rows = self._fetch("SELECT depth, count(*) FROM summaries WHERE superseded_by IS NULL GROUP BY depth")
        covered = self._fetch("SELECT count(*) FROM summary_sources WHERE kind = 'message'")[0][0]
        return {"leaf": 0, "branch": 0, "root": 0, **{("leaf", "branch", "root")[d]: n for d, n in rows if d in (0, 1, 2)},
                "messages_summarised": covered}

    def add_llm_usage(self, task: str, calls: int = 0, prompt_tokens: int = 0, completion_tokens: int = 0,
                      failures: int = 0, invalid: int = 0) -> None:
        with self._writing() as run:
            run("""INSERT INTO llm_usage AS u VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (task) DO UPDATE SET
                   calls = u.calls + excluded.calls, prompt_tokens = u.prompt_tokens + excluded.prompt_tokens,
                   completion_tokens = u.completion_tokens + excluded.completion_tokens,
                   failures = u.failures + excluded.failures, invalid = u.invalid + excluded.invalid""",
                (task, calls, prompt_tokens, completion_tokens, failures, invalid))

    def llm_usage(self) -> dict[str, dict[str, int]]:
        rows = self._fetch(f"SELECT task, {', '.join(_USAGE)} FROM llm_usage ORDER BY task")
        return {r[0]: {k: int(v) for k, v in zip(_USAGE, r[1:])} for r in rows}
