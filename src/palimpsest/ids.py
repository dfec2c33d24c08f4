"""Session ids: the one check, and the one mapping of a harness's own id onto it; and
the short id a recall block shows for a message.

Apart from `records.py` (which re-exports both) because the recall hook — a process a
harness starts before every turn — needs the mapping, and importing `records` (its
dataclasses, `datetime`, `typing`) would cost that process ~20 ms. For the same reason the
check tests characters rather than `SESSION_ID_PATTERN` (`re` is another ~10 ms);
tests/test_ids.py holds the two to the same answers.
"""

from __future__ import annotations

from .errors import InvalidInput

# A message's id is `evt_` + 19 digits of nanoseconds + 4 random hex digits (journal.py):
# 21 tokens on a recall block's line, where the recalled text takes ~35. The block shows
# the last `SHORT_ID_CHARS` characters instead (6 digits, 4 hex: 11 tokens with the line's
# brackets), and everything that takes a message id takes those too (`Memory.get_message`).
# They are the id's own characters, so they never change (a rebuild keeps them). Six
# digits, not four: where the clock counts only microseconds (macOS) the last three are
# 000 for a message appended alone (or its place in a batch), so the microseconds must be
# in the short id too; then 10^3 × 16^4 values at the least (10^6 × 16^4 with nanoseconds)
# make a second message with the same short id rare (about 1 in 650 for a given id at
# 100,000 messages on such a clock, 1 in 650,000 with nanoseconds), and an ambiguous one is
# a clear error naming the full ids.
SHORT_ID_CHARS = 10
_SHORT = frozenset("0123456789abcdef")

SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@+=-]{0,199}$"  # (schemas and routes use it; records.py compiles it)
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_REST = _ALNUM | frozenset("._:@+=-")


def is_session_id(text: str) -> bool:
    """Whether `text` matches `SESSION_ID_PATTERN` and holds no `..`."""
    return 0 < len(text) <= 200 and text[0] in _ALNUM and all(c in _REST for c in text) and ".." not in text


def check_session_id(session: object) -> str:
    if session is None or session == "":
        raise InvalidInput("session is required: the id of the conversation (1–200 ASCII letters, digits and ._:@+=-)")
    if not isinstance(session, str) or not is_session_id(session):
        raise InvalidInput(
            f"session id {str(session)[:80]!r} is not allowed: use 1–200 ASCII letters, digits and ._:@+=- "
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


def short_id(message_id: str) -> str:
    """What a recall block shows for a message: the last `SHORT_ID_CHARS` characters of
    an event id (`evt_` + 23); any other id as it is."""
    if len(message_id) == 27 and message_id.startswith("evt_") and message_id[4:23].isdigit() and is_short_id(message_id[-SHORT_ID_CHARS:]):
        return message_id[-SHORT_ID_CHARS:]
    return message_id


def is_short_id(text: str) -> bool:
    """Whether `text` has a short id's shape: 6 digits, then 4 lower-case hex digits."""
    return len(text) == SHORT_ID_CHARS and text[:6].isdigit() and text[:6].isascii() and all(c in _SHORT for c in text[6:])
