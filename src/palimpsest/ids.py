"""Session ids: the one check, and the one mapping of a harness's own id onto it.

Apart from `records.py` (which re-exports both) because the recall hook — a process a
harness starts before every turn — needs the mapping, and importing `records` (its
dataclasses, `datetime`, `typing`) would cost that process ~20 ms.
"""

from __future__ import annotations

import re

from .errors import InvalidInput

SESSION_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,199}$")


def check_session_id(session: object) -> str:
    if not isinstance(session, str) or not SESSION_ID_RE.fullmatch(session) or ".." in session:
        raise InvalidInput(
            f"session id {str(session)[:80]!r} is not allowed: use 1–200 letters, digits and ._:@+=- "
            "(no path separators, no '..', not starting with punctuation)"
        )
    return session


def session_id_of(raw: object) -> str:
    """A harness's session id as a Palimpsest id: itself when valid, else a stable hash of it
    (capture and the recall hook must name a harness's session alike)."""
    text = str(raw or "").strip()
    try:
        return check_session_id(text)
    except InvalidInput:
        import hashlib  # only here: a harness's usual ids (UUIDs) are valid as they are

        return "s-" + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]
