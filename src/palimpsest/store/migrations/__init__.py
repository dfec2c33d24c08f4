"""The schema migrations of each backend (`sqlite/`, `postgres/`), applied in order by their connection modules."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...errors import SchemaTooNew
from ...segment import keyword_words

FACT_KEYWORDS = "_fact_keywords.sql"  # the migration after which the facts written before are given their keywords


def check_schema(done: set[int], known: list[int]) -> None:
    """Refuse an index whose newest migration is one this Palimpsest does not have."""
    if done and known and max(done) > max(known):
        raise SchemaTooNew(f"the index's schema is version {max(done)}, newer than this Palimpsest's {max(known)}: a newer "
                           "Palimpsest migrated it; upgrade this one (pip install -U palimpsest) before using this store")


def fact_keywords(rows: Iterable[tuple[Any, str]]) -> list[tuple[str, Any]]:
    """(keywords, rowid) of each fact of `rows` (rowid, text) that has keyword-only words (`segment.keyword_words`):
    SQL cannot cut them, so the migration that gave facts the column leaves them to its backend's Python."""
    return [(words, rowid) for rowid, text in rows if (words := keyword_words(text))]
