"""Message vectors on SQLite: stored as float32 blobs, searched through `ann.VectorCache`."""

from __future__ import annotations

import json

import numpy as np

from ...errors import InvalidInput, ModelMismatch
from ...records import Message
from ..base import Filters
from ..sql.messages import M
from .ann import VectorCache
from .connection import SQLiteConnection
from .rows import filter_sql, row_to_message


class SQLiteVectorsMixin(SQLiteConnection):
    # set by the store
    _generation: int
    _vectors: VectorCache

    def put_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        if not rows:
            return
        dims = {v.shape[0] for _, v in rows}
        known = self.vector_models()
        for other, info in known.items():
            if other != model:
                raise ModelMismatch(
                    f"the index holds vectors of {other!r}; refusing to mix in {model!r}. Run `palimpsest reindex` after a model change."
                )
            dims.add(info["dim"])
        if len(dims) != 1:
            raise InvalidInput(f"vectors of {model!r} must all have one dimension, got {sorted(dims)}")
        with self._tx() as conn:
            ids = json.dumps([i for i, _ in rows])
            rowids = dict(conn.execute("SELECT id, rowid FROM messages WHERE id IN (SELECT value FROM json_each(?))", (ids,)).fetchall())
            replaced = conn.execute("SELECT count(*) FROM vectors WHERE model = ? AND message_rowid IN (SELECT value FROM json_each(?))",
                                    (model, json.dumps(list(rowids.values())))).fetchone()[0]
            conn.executemany(
                # an upsert, not INSERT OR REPLACE: REPLACE deletes without firing the
                # delete trigger, which would leave vector_counts counting twice
                """INSERT INTO vectors (message_rowid, model, dim, vector) VALUES (?, ?, ?, ?)
                   ON CONFLICT(model, message_rowid) DO UPDATE SET dim = excluded.dim, vector = excluded.vector""",
                [(rowids[i], model, v.shape[0], np.asarray(v, dtype=np.float32).tobytes()) for i, v in rows if i in rowids],
            )
        if replaced:  # new vectors only are loaded incrementally (`ann.py`); changed ones need a reload
            self._generation += 1

    def load_vectors(self, model: str, after_rowid: int) -> tuple[np.ndarray, np.ndarray, int, dict[str, list[str]]]:
        """(rowids, matrix) of stored vectors above `after_rowid`, the total count, and each
        row's session, role and time (what vector filters test, in memory)."""
        rows = self._reader.execute(
            """SELECT v.message_rowid, v.vector, m.session_id, coalesce(m.role, char(0)), m.created_at
               FROM vectors v JOIN messages m ON m.rowid = v.message_rowid
               WHERE v.model = ? AND v.message_rowid > ? ORDER BY v.message_rowid""", (model, after_rowid)
        ).fetchall()
        found = self._reader.execute("SELECT count FROM vector_counts WHERE model = ?", (model,)).fetchone()
        total = found[0] if found else 0
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32), total, {"session": [], "role": [], "created_at": []}
        rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        meta = {"session": [r[2] for r in rows], "role": [r[3] for r in rows], "created_at": [r[4] for r in rows]}
        return rowids, matrix, total, meta

    def sessions_matching(self, filters: Filters) -> list[str]:
        """Sessions passing the session-level filters (agent, channel, tag) of `filters`."""
        only = Filters(agent=filters.agent, channel=filters.channel, tag=filters.tag)
        where, params = filter_sql(only, alias="x")
        return [r[0] for r in self._reader.execute(f"SELECT x.session_id FROM (SELECT id AS session_id FROM sessions) x WHERE {where}", params)]

    def rowids_to_ids(self, rowids: list[int]) -> dict[int, str]:
        rows = self._reader.execute("SELECT rowid, id FROM messages WHERE rowid IN (SELECT value FROM json_each(?))", (json.dumps(rowids),))
        return dict(rows.fetchall())

    def vector_search(self, model: str, query: np.ndarray, filters: Filters, limit: int) -> list[tuple[str, float]]:
        return self._vectors.search(model, query, filters, limit)

    def warm_vectors(self, model: str, wait: float = 0.0) -> bool:
        return self._vectors.warm(model, wait)

    def get_vectors(self, model: str, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        rows = self._reader.execute(
            # CROSS JOIN: look the few ids up first, then each vector by its primary key
            # (a plain JOIN let the planner walk every vector of the model)
            """SELECT m.id, v.vector FROM messages m CROSS JOIN vectors v
               WHERE m.id IN (SELECT value FROM json_each(?)) AND v.model = ? AND v.message_rowid = m.rowid""",
            (json.dumps(ids), model),
        ).fetchall()
        return {i: np.frombuffer(b, dtype=np.float32) for i, b in rows}

    def vector_models(self) -> dict[str, dict[str, int]]:
        rows = self._reader.execute("SELECT model, dim, count FROM vector_counts ORDER BY model").fetchall()
        return {m: {"dim": d, "count": n} for m, d, n in rows}

    def messages_without_vectors(self, model: str, limit: int) -> list[Message]:
        sql = f"""SELECT {M} FROM messages m WHERE NOT EXISTS
                  (SELECT 1 FROM vectors v WHERE v.model = ? AND v.message_rowid = m.rowid) ORDER BY m.rowid LIMIT ?"""
        return [row_to_message(r) for r in self._reader.execute(sql, (model, limit))]

    def drop_vectors(self, model: str | None = None) -> int:
        with self._tx() as conn:
            if model is None:
                n = conn.execute("DELETE FROM vectors").rowcount
            else:
                n = conn.execute("DELETE FROM vectors WHERE model = ?", (model,)).rowcount
        self._generation += 1
        return n

    @property
    def generation(self) -> tuple[int, int]:
        """Changes whenever vectors may have changed, in this process or another."""
        return self._generation, self._reader.execute("PRAGMA data_version").fetchone()[0]
