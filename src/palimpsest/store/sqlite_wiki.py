"""The wiki on SQLite: a mixin of `SQLiteStore` (the SQL is shared, `wiki_base.SQLWikiMixin`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from .wiki_base import SQLWikiMixin


class SQLiteWikiMixin(SQLWikiMixin):
    _reader: sqlite3.Connection
    _tx: Callable[[], AbstractContextManager[sqlite3.Connection]]
    _WP = "?"
    _wiki_unique = sqlite3.IntegrityError

    def _wiki_in(self, column: str, values: list[str]) -> tuple[str, Any]:
        return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(values))

    def _wiki_rows(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        return self._reader.execute(sql, params).fetchall()

    @contextmanager
    def _wiki_tx(self) -> Iterator[Callable[[str, Any], list[tuple[Any, ...]]]]:
        def run(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
            return conn.execute(sql, params).fetchall()

        with self._tx() as conn:
            yield run
