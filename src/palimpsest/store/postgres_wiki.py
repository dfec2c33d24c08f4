"""The wiki on PostgreSQL: a mixin of `PostgresStore` (the SQL is shared, `wiki_base.SQLWikiMixin`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import psycopg

from .wiki_base import SQLWikiMixin


class PostgresWikiMixin(SQLWikiMixin):
    _tx: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
    _read: Callable[[], AbstractContextManager[psycopg.Connection[Any]]]
    _WP = "%s"
    _wiki_unique = psycopg.errors.UniqueViolation

    def _wiki_in(self, column: str, values: list[str]) -> tuple[str, Any]:
        return f"{column} = ANY(?)", list(values)

    def _wiki_rows(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        with self._read() as conn:
            return conn.execute(sql.replace("?", "%s"), params).fetchall()

    @contextmanager
    def _wiki_tx(self) -> Iterator[Callable[[str, Any], list[tuple[Any, ...]]]]:
        def run(sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
            cur = conn.execute(sql, params)
            return cur.fetchall() if cur.description else []

        with self._tx() as conn:
            yield run
