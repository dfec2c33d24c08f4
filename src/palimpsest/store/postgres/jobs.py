"""Claiming jobs on PostgreSQL: `FOR UPDATE SKIP LOCKED`, so any number of workers share
the queue without blocking (the rest of the queue is `store/sql/jobs.py`)."""

from __future__ import annotations

from typing import Any

from ..base import Job
from ..sql.jobs import JOB_COLUMNS, SQLJobsMixin
from .connection import PostgresConnection


class PostgresJobsMixin(SQLJobsMixin, PostgresConnection):
    def claim_jobs(self, worker: str, tasks: list[str] | None, limit: int, now: str, stale_before: str,
                   keys: list[str] | None = None) -> list[Job]:
        task_clause = "AND task = ANY(%s)" if tasks else ""
        task_clause += " AND job_key = ANY(%s)" if keys is not None else ""
        params: list[Any] = [now, stale_before] + ([list(tasks)] if tasks else []) + ([list(keys)] if keys is not None else []) + [limit, worker, now]
        sql = f"""WITH due AS (
                    SELECT id FROM jobs
                    WHERE ((state = 'queued' AND run_at <= %s::timestamptz) OR (state = 'running' AND locked_at < %s::timestamptz))
                    {task_clause} ORDER BY run_at, id LIMIT %s FOR UPDATE SKIP LOCKED)
                  UPDATE jobs j SET state = 'running', locked_by = %s, locked_at = %s::timestamptz, attempts = j.attempts + 1
                  FROM due WHERE j.id = due.id RETURNING {', '.join('j.' + c for c in JOB_COLUMNS.split(', '))}"""
        with self._tx() as conn:
            rows = conn.execute(sql, params).fetchall()
        return sorted((self._job(r) for r in rows), key=lambda j: j.id)

    def _sample_errors(self) -> dict[str, str]:
        return dict(self._all(  # type: ignore[arg-type]
            """SELECT DISTINCT ON (task) task, last_error FROM jobs
               WHERE state IN ('failed', 'queued') AND last_error IS NOT NULL ORDER BY task, id DESC"""))
