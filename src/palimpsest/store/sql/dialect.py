"""What the shared SQL needs to know of a backend: a `Dialect` and the `SQLBackend` hooks.

Much of the SQL of the two backends differs only in the placeholder (`?` or `%s`), how a
list is bound (`json_each` or `ANY`), how a time parameter is typed and how a row's JSON
and time columns come back. That SQL is written once, in `?` form, by the mixins of this
package; a backend supplies its `Dialect` (a value, no connection) and two hooks, `_fetch`
(a read) and `_writing` (a write transaction yielding a `Runner`). SQL that really
differs — full text (FTS5 against tsvector/BM25), vectors, HNSW, connection handling —
stays in `store/sqlite/` and `store/postgres/`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, ClassVar


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Dialect:
    """How one backend spells the SQL the shared mixins write in `?` form."""

    name: str
    placeholder: str  # "?" | "%s"
    true: str  # an always-true WHERE: "1" | "true"
    in_list: Callable[[str, list[Any]], tuple[str, Any]]  # (`column IN …` with one `?`, its parameter)
    unique_violation: type[BaseException]  # what a broken UNIQUE constraint raises
    time_param: str = "?"  # a parameter compared with a time column ("?::timestamptz" on PostgreSQL)
    bytewise: str = ""  # after an ORDER BY column: sort by bytes (PostgreSQL: ' COLLATE "C"'; SQLite's default)
    lock_rows: str = ""  # after a SELECT: lock the rows read until commit (PostgreSQL: " FOR UPDATE")
    contains: str = "instr"  # position of a substring: instr(haystack, needle) | strpos(…)
    clean: Callable[[Any], Any] = _same  # a text parameter or a JSON value before dumping, as the database takes it (PostgreSQL: no NUL)
    load_json: Callable[[Any], Any] = _same  # a JSON column as read back, as a Python value
    load_time: Callable[[Any], Any] = _same  # a time column as read back, as an ISO string (None stays None)

    def sql(self, text: str) -> str:
        """`text`, written with `?` placeholders, in this dialect."""
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)


class Runner:
    """Statements inside one write transaction: `run(sql, params)` gives the rows (none for a
    statement that returns nothing), `run.count(...)` the rows changed, `run.many(...)` one
statement over many rows."""

    def __init__(self, conn: Any, dialect: Dialect) -> None:
        self.conn = conn
        self.dialect = dialect

    def __call__(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        cur = self.conn.execute(self.dialect.sql(sql), params)
        return cur.fetchall() if cur.description else []

    def count(self, sql: str, params: Any = ()) -> int:
        return int(self.conn.execute(self.dialect.sql(sql), params).rowcount)

    def many(self, sql: str, rows: Iterable[Any]) -> int:
        """One statement over many rows; the rows changed, summed (both drivers sum them)."""
        cur = self.conn.cursor()
        try:
            cur.executemany(self.dialect.sql(sql), list(rows))
            return max(0, int(cur.rowcount))
        finally:
            cur.close()


class SQLBackend(ABC):
    """The hooks a backend gives the shared mixins."""

    dialect: ClassVar[Dialect]
    closed: bool = False  # after close(): every read and write raises `Closed`

    @abstractmethod
    def _fetch(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        """Run a read query written with `?` placeholders; all its rows."""

    @abstractmethod
    def _writing(self) -> AbstractContextManager[Runner]:
        """A write transaction: commits when the block ends, rolls back if it raises."""
