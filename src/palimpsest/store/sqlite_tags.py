"""Tags on SQLite: a mixin of `SQLiteStore` (the SQL is shared, `tags_base.SQLTagsMixin`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from .tags_base import SQLTagsMixin


class SQLiteTagsMixin(SQLTagsMixin):
    _reader: sqlite3.Connection
    _tx: Callable[[], AbstractContextManager[sqlite3.Connection]]
    _P = "?"

    def _tag_in(self, column: str, values: list[str]) -> tuple[str, Any]:
        return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(values))

    def _tag_rows(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        return self._reader.execute(sql, params).fetchall()

    @contextmanager
    def _tag_tx(self) -> Iterator[Callable[[str, Any], list[tuple[Any, ...]]]]:
        with self._tx() as conn:
            def run(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
                return conn.execute(sql, params).fetchall()

            yield run
