"""Session ids: the one check, and the one mapping of a harness's own id onto it.

Apart from `records.py` (which re-exports both) because the recall hook — a process a
harness starts before every turn — needs the mapping, and importing `records` (its
dataclasses, `datetime`, `typing`) would cost that process ~20 ms. For the same reason the
check tests characters rather than `SESSION_ID_PATTERN` (`re` is another ~10 ms);
tests/test_ids.py holds the two to the same answers.
"""

from __future__ import annotations

from .errors import InvalidInput

SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,199}$"  # (schemas and routes use it; records.py compiles it)
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_REST = _ALNUM | frozenset("._:@+=-")


def is_session_id(text: str) -> bool:
    """Whether `text` matches `SESSION_ID_PATTERN` and holds no `..`."""
    return 0 < len(text) <= 200 and text[0] in _ALNUM and all(c in _REST for c in text) and ".." not in text


def check_session_id(session: object) -> str:
    if not isinstance(session, str) or not is_session_id(session):
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
