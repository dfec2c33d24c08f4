"""Every error Palimpsest raises on purpose.

    PalimpsestError
    ├── InvalidInput          the caller sent something we refuse (HTTP 400, exit 2)
    │   └── PayloadTooLarge   one event above the size limit (HTTP 413)
    ├── NotFound              an unknown id (HTTP 404, exit 3)
    ├── WriteDisabled         a write tool while writes are off (HTTP 403, exit 4)
    ├── JournalError          the journal could not be made durable: disk full,
    │                         read-only home (HTTP 507, exit 5); nothing was acknowledged
    ├── StoreUnavailable      the index database cannot be reached (HTTP 503, exit 6);
    │   │                     journaled writes are still safe and index later
    │   ├── StoreBusy         a transaction rolled back for another writer's (a deadlock): done again later
    │   ├── StoreCorrupt      the index file is damaged (HTTP 503, exit 6): `palimpsest
    │   │                     rebuild` moves it aside and rebuilds it from the journals
    │   └── StoreRefused      the database answered and refused (password, database, extension)
    ├── ModelMismatch         vectors of another embedding model (HTTP 409, exit 7)
    ├── Conflict              the state changed under the caller: a fact already superseded,
    │                         closed or retracted, or a concurrent writer won (HTTP 409, exit 9)
    ├── EmbedderError         the embedding model failed (HTTP 502, exit 8)
    ├── LLMError              the language model could not be reached or kept failing
    │                         (HTTP 502, exit 10); its reply broke the schema: InvalidReply (llm.py)
    ├── Interrupted           the server stopped the work (exit 13): a job gives its attempt
    │                         back; a model's call closed at shutdown is one (Cancelled, llm.py)
    ├── DeadlineExceeded      a request ran past the server's deadline (HTTP 503, exit 11);
    │                         its work was left to finish: retry writes with their event_key
    └── Closed                a `Memory` (or its store) used after `close()`; nothing was written

Adapters translate these in exactly one place each (`cli/__init__.py`, `server/http.py`).
"""

from __future__ import annotations

import logging
import time
import unicodedata

_LOGGED: dict[str, float] = {}  # when each kind of error told clients less was last logged (`for_clients`)


class PalimpsestError(Exception):
    """Base of every error Palimpsest raises on purpose."""

    code = "error"
    http_status = 500
    exit_code = 1
    told_clients: str | None = None  # what a server's client is told instead of the message (see `for_clients`)

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": str(self)}

    def for_clients(self, log: logging.Logger | None = None) -> dict[str, str]:
        """What a server answers its HTTP and MCP clients: `to_dict`, but an error whose message
        names the server's own database says `told_clients` instead (with PostgreSQL down, API
        clients were told `postgresql://palimpsest:***@127.0.0.1:18729/palimpsest is
        unavailable`: its user, host, port and name); `log`, the server's, keeps the detail (a
        warning once a minute per kind of error: an outage answers every request with one)."""
        if self.told_clients and log is not None:
            now = time.monotonic()
            if now - _LOGGED.get(self.code, -60.0) >= 60.0:
                _LOGGED[self.code] = now
                log.warning("told a client %r for: %s", self.told_clients, self)
        return {"code": self.code, "message": self.told_clients or str(self)}


class InvalidInput(PalimpsestError, ValueError):
    code = "invalid_input"
    http_status = 400
    exit_code = 2


class PayloadTooLarge(InvalidInput):
    code = "payload_too_large"
    http_status = 413


class NotFound(PalimpsestError, LookupError):
    code = "not_found"
    http_status = 404
    exit_code = 3


EMPTY_QUERY = "query must be a non-empty string: give the words to search for"


def blank(query: str) -> bool:
    """Whether a query holds nothing to search for: white space, or characters that show nothing (U+200B, U+FEFF: a query
    of a copied zero-width space had been searched and answered "no hits" where "" is refused; marks with no letter to
    sit on, the Hangul fillers)."""
    return all(c.isspace() or c in _FILLERS or unicodedata.category(c) in ("Cf", "Mn", "Me") for c in query)


_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")


def unknown_session(session: str) -> NotFound:
    """The one error for a session that memory does not hold (CLI exit 3, HTTP 404, MCP error)."""
    return NotFound(f"no session {session!r}")


class WriteDisabled(PalimpsestError):
    code = "write_disabled"
    http_status = 403
    exit_code = 4


class JournalError(PalimpsestError, OSError):
    code = "journal_error"
    http_status = 507
    exit_code = 5


class StoreUnavailable(PalimpsestError):
    code = "store_unavailable"
    http_status = 503
    exit_code = 6
    told_clients = "the server's store does not answer (its log says why): writes are journaled and indexed when it is back"


class StoreCorrupt(StoreUnavailable):
    code = "store_corrupt"
    told_clients = "the server's store is damaged (its log says why): `palimpsest rebuild` where the server runs rebuilds it"


class StoreBusy(StoreUnavailable):
    """The database rolled one transaction back for another writer's (a deadlock, a serialization failure): it is up,
    and the work is done again later, as for any outage; nothing of it was written."""

    told_clients = None  # (its message names no database: the rollback's reason)


class StoreRefused(StoreUnavailable):
    """The database answered and refused: a wrong password, an unknown database or role, an
    extension it lacks. Waiting does not help (`serve` waits for a store that does not answer)."""

    code = "store_refused"
    told_clients = "the server's store refused its role (its log says why)"


class SchemaTooNew(StoreUnavailable):
    """The index was migrated by a newer Palimpsest: this one would write rows it does not
    know how to keep (an older server on a shared database indexed nothing, or missed
    words, and said nothing)."""

    code = "schema_too_new"
    told_clients = None  # (its message names the versions, not the database)



class ModelMismatch(PalimpsestError):
    code = "model_mismatch"
    http_status = 409
    exit_code = 7


class EmbedderError(PalimpsestError):
    code = "embedder_error"
    http_status = 502
    exit_code = 8


class Conflict(PalimpsestError):
    """The operation lost to the current state (another writer won, or the target is no
    longer open); nothing of it was written."""

    code = "conflict"
    http_status = 409
    exit_code = 9


class LLMError(PalimpsestError):
    code = "llm_error"
    http_status = 502
    exit_code = 10


class Interrupted(PalimpsestError):
    """The work was stopped, not failed: the server is shutting down. A job stopped this way
    gives its attempt back and runs again, whole, after the restart."""

    code = "interrupted"
    exit_code = 13


class DeadlineExceeded(PalimpsestError, TimeoutError):
    """A request ran past the server's `request_timeout`; its work is left to finish."""

    code = "deadline_exceeded"
    http_status = 503
    exit_code = 11


def redact_url(url: str) -> str:
    """`url` with the password of its user info hidden ("postgresql://me:***@db/x"), a user info
    of one part ("//***@host", a token) and every query value ("?key=***"): what `settings`,
    `doctor` and error messages show, and users paste into bug reports."""
    import re

    if not isinstance(url, str):
        return url
    url = re.sub(r"(//[^:/@\s]*):[^/\s]*@", r"\1:***@", url)  # (to the last "@": "p@ss")
    url = re.sub(r"//(?![^/@\s]*:\*\*\*@)[^/@\s]+@", "//***@", url)  # a user info of one part is a token: "//SECRET@host"
    return re.sub(r"([?&][^=&#\s]+)=[^&#\s]*", r"\1=***", url)  # query values ("?key=…")


class Closed(PalimpsestError, RuntimeError):
    """A `Memory` or its store used after `close()`: nothing was journaled or indexed (a write
    after close had been journaled, then quarantined by the closed index)."""

    code = "closed"
    exit_code = 12

    def __init__(self, what: str = "this Memory") -> None:
        super().__init__(f"{what} was closed: open a new Memory to go on")
