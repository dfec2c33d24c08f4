"""Claiming jobs on SQLite: one writer, so due rows are selected, then locked, inside
`BEGIN IMMEDIATE` (the rest of the queue is `store/sql/jobs.py`)."""

from __future__ import annotations

import json
from typing import Any

from ..base import Job
from ..sql.jobs import JOB_COLUMNS, SQLJobsMixin
from .connection import SQLiteConnection


class SQLiteJobsMixin(SQLJobsMixin, SQLiteConnection):
    def claim_jobs(self, worker: str, tasks: list[str] | None, limit: int, now: str, stale_before: str,
                   keys: list[str] | None = None) -> list[Job]:
        task_clause = "AND task IN (SELECT value FROM json_each(?))" if tasks else ""
        task_clause += " AND job_key IN (SELECT value FROM json_each(?))" if keys is not None else ""
        params: list[Any] = [now, stale_before] + ([json.dumps(tasks)] if tasks else []) + ([json.dumps(keys)] if keys is not None else []) + [limit]
        with self._tx() as conn:
            rows = conn.execute(
                f"""SELECT id FROM jobs WHERE ((state = 'queued' AND run_at <= ?) OR (state = 'running' AND locked_at < ?))
                    {task_clause} ORDER BY run_at, id LIMIT ?""",
                params,
            ).fetchall()
            ids = json.dumps([r[0] for r in rows])
            conn.execute(
                "UPDATE jobs SET state = 'running', locked_by = ?, locked_at = ?, attempts = attempts + 1 WHERE id IN (SELECT value FROM json_each(?))",
                (worker, now, ids),
            )
            claimed = conn.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id", (ids,)).fetchall()
        return [self._job(r) for r in claimed]

    def _sample_errors(self) -> dict[str, str]:
        return {
            task: err
            for task, err, _ in self._reader.execute(
                # the newest failure of each task, failed or waiting on its retry (SQLite takes the other columns from the max row)
                "SELECT task, last_error, max(id) FROM jobs WHERE state IN ('failed', 'queued') AND last_error IS NOT NULL GROUP BY task"
            )
        }
