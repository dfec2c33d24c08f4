"""A second keyword round seeded by the first round's entities (issue 18, third pass).

Multi-hop questions ("What activities has Melanie done with her family?") need turns that
share no word with the question but name what the best turns name (a place, a pet, a
friend). One any-word BM25 search over those names finds them; its score, on the weighted
sum's scale and small, lifts such turns without reordering the first hits much.
"""

from __future__ import annotations

from typing import Any

from ..records import Hit
from .floor import query_names
from .hybrid import normalise
from .query import query_terms


def seeded_round(hits: list[Hit], query: str, source: Any, depth: int, weight: float, top: int = 5) -> list[Hit]:
    """Names in the first `top` hits that the query does not hold and no speaker bears
    seed one any-word keyword search; its normalised BM25 × `weight` is added to each hit
    it finds (new ones join with that alone), best first."""
    if weight <= 0 or not hits:
        return hits
    skip = set(query_names(query)) | {t.lower() for t in query_terms(query)}
    skip |= {h.message.speaker.lower() for h in hits if h.message.speaker}
    seeds: list[str] = []
    for h in hits[:top]:
        for n in query_names(h.message.content):
            if n not in skip and n not in seeds:
                seeds.append(n)
    if not seeds:
        return hits
    found = source.keyword(seeds, False, depth)
    extra = dict(zip([i for i, _ in found], normalise([s for _, s in found])))
    for h in hits:  # as the other boosts: on the weighted sum's scale, in place
        if h.message.id in extra:
            h.parts["seed"] = weight * extra.pop(h.message.id)
            h.score += h.parts["seed"]
    rows = source.rows(list(extra))
    hits += [Hit(rows[i], weight * v, {"seed": weight * v}) for i, v in extra.items() if i in rows]
    hits.sort(key=lambda h: (-h.score, h.message.created_at, h.message.id))
    return hits
