"""One hybrid ranking for every kind of record (DESIGN.md, "Search and scoring").

Messages, facts, summaries and document chunks are all ranked here, by
`relevance = w_fts·fts + w_semantic·semantic + w_temporal·temporal + w_importance·importance`,
over a `Source` each kind supplies from its own package: its keyword search (BM25), its
vector search, its rows, and the features only it knows (how old a row is, how important
its kind). What is the same for every kind is written once:

- the words of the query and the fallback: a query is matched with all its words; when
  fewer than the pool hold them all, the pool is filled from any-word matches ranked by
  the same BM25 (which puts all-word matches first), and when none held them all the
  result says so (`match: "any"`);
- BM25 normalised within the query by its best score;
- the vector threshold: a vector neighbour with no keyword match is a hit only from the
  source's `min_semantic` on (`MIN_SEMANTIC` unless the kind is re-ranked further on);
- the decay `e^(−rate·days)`, and the one `Weights`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .query import query_terms

MIN_SEMANTIC = 0.35  # below this cosine a vector neighbour alone does not make a hit
RRF_K = 60


@dataclass
class Weights:
    """The weights of the ranking and of the message stages (settings `w_*`)."""

    fts: float = 0.3
    semantic: float = 0.3
    temporal: float = 0.05
    importance: float = 0.1
    decay_clock: str = "created"
    reinforcement_cap: int = 10
    decay_rate: float = 0.05
    reply: float = 0.5  # share of its reply's lead a turn inherits (conversation_rerank)
    speaker: float = 0.15  # bonus for turns by whom the query is about (conversation_rerank)
    session: float = 0.0  # share of its session's mean a hit gains (session_boost)
    when: float = 0.2  # bonus for messages of the time the query names (timeframe.when_boost)
    seed: float = 0.05  # weight of the entity-seeded second keyword round (seeded.seeded_round)
    dated: float = 0.1  # bonus for messages naming a time, when the query asks one (timeframe.dated_boost)
    answer: float = 0.3  # share of a best hit's lead its reply inherits when the hit asks (conversation.answers)
    follow: float = 0.3  # share of a best hit's lead its follow-up answer inherits (conversation.answers)
    topic: float = 0.3  # share of a best hit's lead the turn its follow-up question was about inherits (conversation.answers)

    @classmethod
    def from_settings(cls, s: Any) -> Weights:
        return cls(s.w_fts, s.w_semantic, s.w_temporal, s.w_importance, s.decay_clock, s.reinforcement_cap,
                   reply=s.w_reply, speaker=s.w_speaker, session=s.w_session, when=s.w_when, seed=s.w_seed,
                   dated=s.w_dated, answer=s.w_answer, follow=s.w_follow, topic=s.w_topic)

    def score(self, parts: dict[str, float]) -> float:
        return (self.fts * parts.get("fts", 0.0) + self.semantic * parts.get("semantic", 0.0)
                + self.temporal * parts.get("temporal", 0.0) + self.importance * parts.get("importance", 0.0))


def normalise(scores: list[float]) -> list[float]:
    """BM25 scores within one query, mapped to [0, 1] by the best one."""
    top = max(scores, default=0.0)
    return [s / top if top > 0 else 0.0 for s in scores]


def stretch(scores: dict[str, float]) -> dict[str, float]:
    """Cosines mapped to [0, 1] within one query (best → 1, worst candidate → 0), so the
    semantic part spreads like the normalised BM25 part instead of sitting in 0.2–0.6."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    span = hi - lo
    return {k: ((v - lo) / span if span > 1e-9 else 1.0) for k, v in scores.items()}


def decay(days: float, rate: float = 0.05) -> float:
    """The time decay of every kind: e^(−rate·days), days counted from the row's clock."""
    return math.exp(-rate * max(0.0, days))


class Source(Protocol):
    """What one kind of record supplies to `rank`.

    `min_semantic`: the cosine from which a vector neighbour alone is a hit; `stretch`:
    whether cosines are spread within the query (messages) or taken as they are."""

    min_semantic: float
    stretch: bool

    def keyword(self, terms: list[str], match_all: bool, limit: int) -> list[tuple[str, float]]:
        """(id, raw BM25) best first."""

    def count(self, terms: list[str], limit: int) -> int:
        """How many rows hold every term, counted up to `limit`."""

    def vectors(self, vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        """(id, cosine) of the nearest rows; [] without vectors."""

    def cosines(self, ids: list[str], vector: np.ndarray) -> dict[str, float]:
        """Cosines of rows the vector search did not reach ({} when the kind does not fill them)."""

    def rows(self, ids: list[str]) -> dict[str, Any]:
        """The rows to rank, by id (a row the kind does not admit is left out)."""

    def features(self, row: Any) -> dict[str, float]:
        """The kind's own parts in [0, 1]: `temporal`, `importance` (or none)."""

    def tiebreak(self, row: Any) -> tuple[Any, ...]:
        """The order among equal scores."""


@dataclass
class Scored:
    id: str
    row: Any
    score: float
    parts: dict[str, float]


@dataclass
class Ranking:
    hits: list[Scored]
    match: str = "all"  # "any" when no row held every word
    cosines: dict[str, float] = field(default_factory=dict)


def keyword_pool(source: Source, terms: list[str], pool: int) -> tuple[list[tuple[str, float]], str]:
    """BM25 candidates and whether some held every word ("all") or none did ("any")."""
    if not terms:
        return [], "all"
    if len(terms) == 1:
        return source.keyword(terms, True, pool), "all"
    held = source.count(terms, pool)  # counting is cheaper than ranking
    if held >= pool:
        return source.keyword(terms, True, pool), "all"
    return source.keyword(terms, False, pool), ("all" if held else "any")


def rank(source: Source, query: str, weights: Weights, *, pool: int, vector: np.ndarray | None = None,
         recipe: str = "hybrid", keyword: tuple[list[tuple[str, float]], str] | None = None) -> Ranking:
    """Every candidate of `source` for `query`, best first. `vector`: the query's
    embedding (None: keyword, time and importance only); `recipe`: `hybrid` (the weighted
    sum) or `rrf` (reciprocal rank fusion, time and importance as tie-breaks);
    `keyword`: a keyword pool already fetched."""
    found, match = keyword if keyword is not None else keyword_pool(source, query_terms(query), pool)
    fts = dict(zip([i for i, _ in found], normalise([s for _, s in found])))
    fts_rank = {i: r for r, (i, _) in enumerate(found)}
    cosines: dict[str, float] = {}
    sem_rank: dict[str, int] = {}
    if vector is not None:
        for r, (i, cos) in enumerate(source.vectors(vector, pool)):
            cosines[i], sem_rank[i] = cos, r
        cosines.update(source.cosines([i for i in fts if i not in cosines], vector))
    ids = list(dict.fromkeys([*fts, *[i for i, c in cosines.items() if c >= source.min_semantic]]))
    rows = source.rows(ids)
    semantic = stretch(cosines) if source.stretch else {i: min(1.0, max(0.0, c)) for i, c in cosines.items()}
    if vector is not None:
        # a keyword candidate without a vector yet (written a moment ago, its embedding queued): the keyword side speaks
        # for both. Scored 0 on the vector side, the one message holding every word of the query ranked 12th, below
        # eleven that shared one word and had vectors (a data steward's, after `--no-derive`)
        semantic.update({i: fts[i] for i in fts if i not in cosines})
    hits = []
    for i in ids:
        row = rows.get(i)
        if row is None:
            continue
        parts = {"fts": fts.get(i, 0.0), "semantic": semantic.get(i, 0.0), **source.features(row)}
        if recipe == "rrf":
            score = sum(1.0 / (RRF_K + r) for r in (fts_rank.get(i), sem_rank.get(i)) if r is not None)
            score += 0.001 * (parts.get("temporal", 0.0) + parts.get("importance", 0.0))  # tie-break only
        else:
            score = weights.score(parts)
        hits.append(Scored(i, row, score, parts))
    hits.sort(key=lambda h: (-h.score, *source.tiebreak(h.row)))
    return Ranking(hits, match, cosines)
