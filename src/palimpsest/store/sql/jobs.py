"""The jobs part of the Store contract in SQL both backends run (`store/sql/dialect.py`).

Claiming is what differs: PostgreSQL locks due rows with `FOR UPDATE SKIP LOCKED`, so
many workers share the queue without blocking, while SQLite has one writer and selects
then updates inside `BEGIN IMMEDIATE`. Each backend supplies `claim_jobs` and the newest
error of each task (`_sample_errors`); the rest is written here once.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from typing import Any

from ...records import iso, utcnow
from ..base import Job, NewJob
from .dialect import SQLBackend

JOB_COLUMNS = "id, task, payload, job_key, attempts, max_attempts, last_error, run_at, locked_by, locked_at, state"


class SQLJobsMixin(SQLBackend):
    def _job(self, r: tuple[Any, ...]) -> Job:
        d = self.dialect
        return Job(id=r[0], task=r[1], payload=d.load_json(r[2]), job_key=r[3], attempts=r[4], max_attempts=r[5],
                   last_error=r[6], run_at=d.load_time(r[7]), locked_by=r[8], locked_at=d.load_time(r[9]), state=r[10])

    def enqueue(self, jobs: list[NewJob]) -> int:
        t = self.dialect.time_param
        sql = f"""INSERT INTO jobs (task, payload, job_key, max_attempts, run_at, created_at)
                  VALUES (?, ?, ?, ?, {t}, {t}) ON CONFLICT DO NOTHING"""
        if not jobs:
            return 0
        now = iso(utcnow())
        rows = [(j.task, json.dumps(self.dialect.clean(j.payload)), j.job_key, j.max_attempts, j.run_at or now, now) for j in jobs]
        with self._writing() as run:  # one executemany: a statement per job was ~6% of bulk ingest (bench/ingest.py)
            return run.many(sql, rows)

    def finish_job(self, job_id: int) -> None:
        with self._writing() as run:
            run("UPDATE jobs SET state = 'done', locked_by = NULL, last_error = NULL WHERE id = ?", (job_id,))

    def fail_job(self, job_id: int, error: str, retry_at: str | None) -> None:
        t = self.dialect.time_param
        with self._writing() as run:
            run(f"""UPDATE jobs SET last_error = ?, locked_by = NULL, locked_at = NULL,
                    state = CASE WHEN {t} IS NULL OR attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
                    run_at = coalesce({t}, run_at) WHERE id = ?""",
                (self.dialect.clean(error[:2000]), retry_at, retry_at, job_id))

    def renew_job(self, job_id: int, worker: str, now: str) -> bool:
        t = self.dialect.time_param
        with self._writing() as run:
            return run.count(f"UPDATE jobs SET locked_at = {t} WHERE id = ? AND locked_by = ? AND state = 'running'", (now, job_id, worker)) > 0

    def release_job(self, job_id: int, worker: str) -> None:
        with self._writing() as run:
            run("""UPDATE jobs SET state = 'queued', locked_by = NULL, locked_at = NULL,
                    attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END
                    WHERE id = ? AND locked_by = ? AND state = 'running'""", (job_id, worker))

    def job_status(self) -> dict[str, Any]:
        rows = self._fetch("SELECT task, state, count(*) FROM jobs GROUP BY task, state ORDER BY task, state")
        counts: dict[str, dict[str, int]] = {}
        for task, state, n in rows:
            counts.setdefault(task, {})[state] = n
        # when the first queued job of each task is due: compaction and a session's last turn wait for a quiet minute
        due = {task: self.dialect.load_time(first)
               for task, first in self._fetch("SELECT task, min(run_at) FROM jobs WHERE state = 'queued' GROUP BY task")}
        return {"tasks": counts, "sample_errors": self._sample_errors(), "next_run": min(due.values(), default=None), "next_runs": due}

    @abstractmethod
    def _sample_errors(self) -> dict[str, str]:
        """{task: the error of its newest failed job}."""

    def retry_failed(self, task: str | None, error_like: str | None, dry_run: bool) -> int:
        # A failed job whose key is live again (re-enqueued since) stays failed: requeueing
        # it would break the one-live-job-per-key rule; of several failed jobs with one key,
        # the newest is requeued.
        clauses = [
            "j.state = 'failed'",
            """(j.job_key IS NULL OR NOT EXISTS (SELECT 1 FROM jobs o WHERE o.job_key = j.job_key AND
               (o.state IN ('queued', 'running') OR (o.state = 'failed' AND o.id > j.id))))""",
        ]
        params: list[Any] = []
        if task:
            clauses.append("j.task = ?")
            params.append(task)
        if error_like:
            clauses.append(f"{self.dialect.contains}(j.last_error, ?) > 0")
            params.append(self.dialect.clean(error_like))
        where = " AND ".join(clauses)
        with self._writing() as run:
            if dry_run:
                return int(run(f"SELECT count(*) FROM jobs j WHERE {where}", params)[0][0])
            return run.count(f"UPDATE jobs SET state = 'queued', attempts = 0, run_at = {self.dialect.time_param} "
                             f"WHERE id IN (SELECT j.id FROM jobs j WHERE {where})", [iso(utcnow()), *params])
