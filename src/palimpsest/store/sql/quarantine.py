"""Events the indexer could not index, in SQL both backends run (`store/sql/dialect.py`).

A quarantined event is one the store refused (a value it cannot hold, a constraint it
breaks). Recording it and moving the session's cursor past it happen in one transaction,
like rows and cursor in `insert_messages`, so the event is either indexed, or quarantined,
or still ahead of the cursor — never lost between the two. The table is derived like every
index row: `reset` empties it and the rebuild records again what still fails.
"""

from __future__ import annotations

from typing import Any

from ...records import iso, utcnow
from ..base import Quarantined
from .dialect import SQLBackend

_COLUMNS = "journal_id, session_id, line, byte_offset, end_offset, event_id, reason, quarantined_at"
REASON_CHARS = 1000


class SQLQuarantineMixin(SQLBackend):
    def quarantine(self, q: Quarantined) -> None:
        clean = self.dialect.clean
        reason = clean(q.reason[:REASON_CHARS])
        with self._writing() as run:
            run(f"""INSERT INTO index_quarantine ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (journal_id, session_id, byte_offset) DO UPDATE SET reason = excluded.reason,
                    quarantined_at = excluded.quarantined_at""",
                (q.journal, q.session, q.line, q.offset, q.end, clean(q.event_id), reason, q.at or iso(utcnow())))
            run("""INSERT INTO journal_cursors (journal_id, session_id, line, byte_offset) VALUES (?, ?, ?, ?)
                   ON CONFLICT (journal_id, session_id) DO UPDATE SET line = excluded.line, byte_offset = excluded.byte_offset
                   WHERE excluded.byte_offset > journal_cursors.byte_offset""",
                (q.journal, q.session, q.line, q.end))

    def quarantined(self, journal: str | None = None, limit: int = 100) -> list[Quarantined]:
        where, params = ("journal_id = ?", [journal]) if journal is not None else ("1 = 1", [])
        rows = self._fetch(f"SELECT {_COLUMNS} FROM index_quarantine WHERE {where} "
                           "ORDER BY quarantined_at DESC, session_id, byte_offset LIMIT ?", (*params, limit))
        return [_row(r) for r in rows]

    def quarantine_count(self, journal: str | None = None) -> int:
        where, params = ("journal_id = ?", (journal,)) if journal is not None else ("1 = 1", ())
        return int(self._fetch(f"SELECT count(*) FROM index_quarantine WHERE {where}", params)[0][0])

    def release_quarantined(self, journal: str, session: str, offset: int) -> None:
        with self._writing() as run:
            run("DELETE FROM index_quarantine WHERE journal_id = ? AND session_id = ? AND byte_offset = ?",
                (journal, session, offset))


def _row(r: tuple[Any, ...]) -> Quarantined:
    return Quarantined(journal=r[0], session=r[1], line=int(r[2]), offset=int(r[3]), end=int(r[4]), event_id=r[5],
                       reason=r[6], at=r[7])
