"""The schema migrations of each backend (`sqlite/`, `postgres/`), applied in order by their connection modules."""

from __future__ import annotations

from ...errors import SchemaTooNew


def check_schema(done: set[int], known: list[int]) -> None:
    """Refuse an index whose newest migration is one this Palimpsest does not have."""
    if done and known and max(done) > max(known):
        raise SchemaTooNew(f"the index's schema is version {max(done)}, newer than this Palimpsest's {max(known)}: a newer "
                           "Palimpsest migrated it; upgrade this one (pip install -U palimpsest) before using this store")
