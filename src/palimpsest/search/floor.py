"""The relevance floor: hits whose evidence is too weak to show are dropped.

Once vectors exist every query has nearest neighbours, so without a floor a query about
nothing stored (`zzqqxx`, a question about a person this memory never met) still returns
`limit` hits and recall fills its budget with them. Two rules, both on the raw cosine
between the query and a message (not the per-query stretched `semantic` part):

- **a hit needs evidence**: a keyword match, or a cosine of at least `similarity`. A
  vector neighbour with no query word and a cosine under it is dropped.
- **a query about someone unknown**: when the query names someone or something
  (a capitalised word inside a sentence: "Melanie", "Nate's") that no message in scope
  holds, and no message is closer than `unknown` in meaning, keyword matches on its other
  words ("paint", "community") are not evidence either: the result is empty.

Both thresholds are cosines of one embedding model and mean nothing for another, so the
settings default to `auto`: the values measured for the local model (docs/retrieval.md,
"The relevance floor"), and no floor for a model they were not measured on. Without
vectors the floor does nothing (it cannot tell weak from strong); keyword search already
returns nothing for words nobody wrote.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import InvalidInput
from ..records import Hit
from .query import STOP_WORDS

# measured on the dev sets (split halves) for the local model; see docs/retrieval.md
MEASURED = {"all-MiniLM-L6-v2-onnx-int8": (0.35, 0.45)}
# a capitalised word that does not open a sentence; a possessive 's is not part of the name
NAME_RE = re.compile(r"(?<![.?!:]\s)(?<![.?!:])(?<!^)\b([A-Z][\w’'-]*)")
POSSESSIVE_RE = re.compile(r"['’]s$")


@dataclass(frozen=True)
class Floor:
    similarity: float = 0.0  # a hit without a keyword match needs at least this cosine
    unknown: float = 0.0  # a query naming only what no message holds needs one message this close

    @property
    def active(self) -> bool:
        return self.similarity > 0 or self.unknown > 0


def _threshold(value: object, measured: float, name: str) -> float:
    if value in ("auto", None, ""):
        return measured
    if value in ("off", "0"):
        return 0.0
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidInput(f"{name} must be auto, off or a cosine from 0 to 1, got {value!r}") from None
    if not 0.0 <= number <= 1.0:
        raise InvalidInput(f"{name} must be auto, off or a cosine from 0 to 1, got {value!r}")
    return number


def floor_for(model: str, similarity: object = "auto", unknown: object = "auto") -> Floor:
    """The floor for vectors of `model`: each setting `auto` (the measured value, or off
    for a model not measured), `off`, or a cosine."""
    sim, unk = MEASURED.get(model, (0.0, 0.0))
    return Floor(_threshold(similarity, sim, "floor_similarity"), _threshold(unknown, unk, "floor_unknown"))


def query_names(query: str) -> list[str]:
    """The names a query uses, lower-cased: capitalised words that do not open a sentence,
    possessive dropped ("What did Nate's dog eat?" → ["nate"]); stop words are not names."""
    out: list[str] = []
    for word in NAME_RE.findall(query):
        name = POSSESSIVE_RE.sub("", word).strip("'’-").lower()
        if name and name not in STOP_WORDS and name not in out:
            out.append(name)
    return out


def apply_floor(hits: list[Hit], cosines: dict[str, float], query: str, floor: Floor,
                known: Callable[[str], bool]) -> tuple[list[Hit], list[str]]:
    """The hits with evidence enough, and a note when the floor emptied the result.
    `cosines`: raw cosine by message id over every candidate; `known(name)`: whether some
    message in scope holds the word."""
    if not floor.active or not cosines or not hits:
        return hits, []
    best = max(cosines.values())
    if floor.unknown > 0 and best < floor.unknown:
        names = query_names(query)
        missing = [n for n in names if not known(n)]
        if names and len(missing) == len(names):
            return [], [(f"nothing stored mentions {', '.join(missing)}, and no message is close in meaning "
                         f"(best similarity {best:.2f} < {floor.unknown:.2f}): no hits")]
    kept = [h for h in hits if h.parts.get("fts", 0.0) > 0 or cosines.get(h.message.id, -1.0) >= floor.similarity]
    if kept or not hits:
        return kept, []
    return [], [("nothing stored matches this query: no keyword match, and no message is close in meaning "
                 f"(best similarity {best:.2f} < {floor.similarity:.2f}): no hits")]
