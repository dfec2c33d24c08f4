"""What an operator had erased (`palimpsest erase`), as the system journal remembers it, and the one
rule that takes erased things out of a journal line.

"Nothing is deleted by the system" (DESIGN.md, principle 1) — an erasure is not the system
deciding: an operator ordered it (a customer's GDPR article 17 request, found by a support
bot's operator whose customer asked to be forgotten). It is journaled like every decision, in
the domain `erasure`, without a word of what went: the sessions by the SHA-256 of their ids (an
id like `cus_lnovak-1` names its customer), the ids of the messages, summaries and facts (random
ids, no content), when, and counts. Whatever brings old lines back — an import of an earlier
export, a restore of an older facts snapshot — passes them through `Erased`, so what was erased
stays erased; the journals themselves were rewritten by the erasure, so `rebuild` and `replay`
never meet it.

The rule (`scrub_line`): a line that names nothing erased is kept as it is. A decision whose
`change` holds lists of rows keeps the rows whose identity (`id`, `fact_id`, `session_id`, a
`source`, a link's ends, a statement's sources) is not erased, with references to erased things
cleared in the rows it keeps (a kept fact that an erased one superseded no longer points at
it); when no row is left, or the line has no `change` (a distilled turn, a synthesized
sentence), the line goes. An erased message, summary, fact or page is named by its own random
id wherever it appears; an erased session only in a field that says it is a session
(`_SESSION_FIELDS`): session ids are the client's, and a session called `billing` had cleared
the word "billing" from other customers' tags and facts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .decisions import DecisionLog
from .errors import PalimpsestError
from .records import SESSION_ID_RE

if TYPE_CHECKING:
    from .store import Store

DOMAIN = "erasure"
ERASED = "(erased)"
# the fields that say which thing a row of a decision's change is: a row naming an erased thing there goes whole
_IDENTITY = ("id", "fact_id", "session_id", "summary_id", "target_id", "source", "src", "dst", "session", "summaries", "messages")
_KEEP_AS_IS = ("id", "event_key")  # a kept line's own id and key (they name no erased thing: the system journal's own)
# the fields whose value is a session id (a distilled turn's `subject`, a tag's `target_id`), the only places one is looked for
_SESSION_FIELDS = ("session", "session_id", "subject", "target_id")
_ID_PREFIXES = ("evt_", "sum_", "fct_", "wtp_")  # the ids an erasure records (`Eraser._record`)


def session_digest(session: str) -> str:
    return hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Erased:
    """The sessions (by digest) and the ids of messages, summaries and facts erased from this home."""

    sessions: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, decisions: DecisionLog) -> Erased:
        found = cls()
        for d in decisions.taken(DOMAIN):
            found.sessions.update(d.change.get("sessions", []))
            for kind in ("messages", "summaries", "facts", "wiki_topics"):
                found.ids.update(d.change.get(kind, []))
        return found

    def __bool__(self) -> bool:
        return bool(self.sessions or self.ids)

    def session(self, session: str) -> bool:
        return session_digest(session) in self.sessions

    def names(self, value: Any, field: str | None = None) -> bool:
        """Whether `value` (any JSON value, held in `field`) names an erased message, summary, fact or page anywhere
        (alone or as a source, `event:evt_…`), or an erased session in a session field."""
        if isinstance(value, str):
            return self._is_id(value) or (field in _SESSION_FIELDS and self._is_session(value))
        if isinstance(value, dict):
            return any(self.names(v, k) for k, v in value.items())
        if isinstance(value, list):
            return self._session_tuple(value) or any(self.names(v, field) for v in value)
        return False

    def _is_id(self, text: str) -> bool:
        return any(part in self.ids for part in {text, *text.split(":")} if part.startswith(_ID_PREFIXES))

    def _is_session(self, text: str) -> bool:
        return len(text) <= 200 and SESSION_ID_RE.fullmatch(text) is not None and self.session(text)

    def _session_tuple(self, row: list[Any]) -> bool:
        """A tag's delete, `[target_type, target_id, key, value]`, of an erased session."""
        return len(row) > 1 and row[0] == "session" and isinstance(row[1], str) and self._is_session(row[1])

    # -- journal lines ---------------------------------------------------------
    def scrub_line(self, line: dict[str, Any]) -> dict[str, Any] | None:
        """The journal line without what was erased, or None when nothing of it is left (see the module's doc)."""
        if not self.names(line):
            return line
        meta = line.get("metadata")
        change = meta.get("change") if isinstance(meta, dict) else None
        if not isinstance(meta, dict) or not isinstance(change, dict):
            return None
        kept = self.scrub_change(change)
        if kept is None:
            return None
        head = {k: (v if k in _KEEP_AS_IS else self._cleared(v, ERASED, k)) for k, v in line.items() if k != "metadata"}
        return {**head, "metadata": {**{k: self._cleared(v, ERASED, k) for k, v in meta.items() if k != "change"}, "change": kept}}

    def scrub_change(self, change: dict[str, Any]) -> dict[str, Any] | None:
        """A decision's change without the rows of erased things; None when no row is left."""
        out: dict[str, Any] = {}
        for key, value in change.items():
            if isinstance(value, list):
                out[key] = [self._cleared(row, None, key) for row in value if not self._erased_row(row)]
            elif isinstance(value, dict) and self._erased_row(value):
                return None  # the one thing the decision is about (a summary put) was erased
            else:
                out[key] = self._cleared(value, None, key)
        return out if any(isinstance(v, list) and v for v in out.values()) or not any(isinstance(v, list) for v in change.values()) else None

    def _erased_row(self, row: Any) -> bool:
        if isinstance(row, dict):
            return any(self.names(row.get(k), k) for k in _IDENTITY)
        return self.names(row)  # a tuple row (a tag's delete, a key) is its identity

    def _cleared(self, value: Any, instead: Any = None, field: str | None = None) -> Any:
        """`value` with each string that names an erased thing replaced (None in a row: the reference is gone)."""
        if isinstance(value, str):
            return instead if self.names(value, field) else value
        if isinstance(value, dict):
            return {k: self._cleared(v, instead, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self._cleared(v, instead, field) for v in value if not (isinstance(v, str) and self.names(v, field))]
        return value


class ErasedSessions:
    """Whether a session was erased, by the system journal as it is now and, given one, by the store: a capture
    client's spool on another machine resent a customer's batches after her erasure, and the server journaled and
    indexed them anew; a second home on the store took her session after the erasure ran in the first. The erasure
    journal is read again when it grew (an erasure run by the CLI while the server was stopped)."""

    def __init__(self, decisions: DecisionLog, store: Store | None = None) -> None:
        """`store`: its `erased_sessions` are every home's on it (None: a writer while the store is away)."""
        self.decisions, self.store = decisions, store
        self._read: tuple[int, Erased] = (0, Erased())

    def __contains__(self, session: object) -> bool:
        if not isinstance(session, str):
            return False
        try:
            size = self.decisions.size(DOMAIN)
            if size != self._read[0]:
                self._read = (size, Erased.of(self.decisions))
        except (OSError, PalimpsestError):  # a home that cannot hold folders: the write's own journaling says so, clearly
            return self._recorded(session)  # ("nothing was stored", not a NotADirectoryError from here)
        return self._read[1].session(session) or self._recorded(session)

    def _recorded(self, session: str) -> bool:
        if self.store is None:
            return False
        try:
            return bool(self.store.erased_sessions([session_digest(session)]))
        except PalimpsestError:  # the store is away: the write is journaled, and the indexer skips the session when it is back
            return False
