"""Session ids: the character check of ids.py (no `re`, for the recall hook's start-up) and
the pattern the schemas and routes publish give the same answer on any text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.ids import SESSION_ID_PATTERN, is_session_id, session_id_of

PATTERN = re.compile(SESSION_ID_PATTERN)
ALPHABET = st.sampled_from("aZ09._:@+=-/ \\\n\u00e9\u0661\U0001f600")


@settings(max_examples=2000)
@given(st.one_of(st.text(alphabet=ALPHABET, max_size=210), st.text(max_size=30)))
def test_the_check_and_the_pattern_agree(text: str) -> None:
    assert is_session_id(text) == (PATTERN.fullmatch(text) is not None and ".." not in text)


def test_edges() -> None:
    assert is_session_id("a" * 200) and not is_session_id("a" * 201) and not is_session_id("")
    assert not is_session_id(".a") and not is_session_id("a..b") and not is_session_id("é")
    assert session_id_of("ok-1") == "ok-1" and session_id_of("a/b").startswith("s-") and len(session_id_of("a/b")) == 34
