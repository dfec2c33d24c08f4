"""The learned pair decision: what the gate's rules leave at related or new, read again by a small model.

The rules of `curator.judge` confirm and supersede with high precision, but on pairs
written by people who never read them they link whatever shares a word or a verb ("I'm a
Chelsea fan." / "Our Chelsea flat has a leaking roof.") and confirm few paraphrases (bench
`curation.py`, held-out sets blind4 and blind5). This module reads those pairs again with a
multinomial logistic regression over the signals the curator already computes — cosine,
word and bigram overlaps, the differing words, the slot reading, the rules' own answer, the
slot parser's markers of a change and of an addition — trained on the development pair
sets (`bench/train_curator.py`, which writes `data/curator-pairs.json`; the weights ship in
the package, nothing is fetched).

What it may do is narrower than what it was trained to say, because on conversation (the
LongMemEval haystacks, `bench/recall.py knowledge --embedder local`) it was wrong where the
bench pairs had taught it to be bold:

- it **unlinks**: a pair the rules called related that it reads as new is written as new
  (on conversation mostly "I'm interested in X" / "I'm interested in Y");
- it **confirms**, at a probability of `confirm_at` or more, never where the words say two
  things (a number, a negation, a name, an opposite, a permutation of the same words, a slot
  of another value) nor where one statement says all the other does and more: a wrong merge
  hides a statement;
- it **links** what the rules called new only between short statements the vectors hold close
  (`link_words`, `link_cosine`: unrestricted it linked whatever said "also" or "as
  well", "Let's do this!" to "I'm also thinking of gift ideas"), and never **supersedes** (it retired "I'm also thinking of gift ideas for my
  sister" by "Now I'm thinking of investing in a new tent"): a supersession stays the rules'.

Only with an embedder (it was trained with the cosine), and only for statements no longer
than the longest it was trained on (`max_words`). `confirm_at` and the L2 strength were
chosen by leaving one development set out at a time (the file says which).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import files
from typing import Any

import numpy as np

Signals = Any  # curator.Signals (not imported: the curator imports this module)

LABELS = ("confirm", "supersede", "related", "new")
DIFFERS = ("number", "numbers", "negation", "name", "opposite")
SLOTS = ("same", "changed", "negated", "beside", "topic", None)
FEATURES = ("cosine", "words", "order", "lexical", "rest", *(f"differs:{d}" for d in DIFFERS), "swap",
            *(f"slot:{s}" for s in SLOTS), *(f"rule:{r}" for r in LABELS), "says a change", "says an addition",
            "a name shared", "names differ")


def features(s: Signals, rule: str) -> list[float]:
    """The pair's features in `FEATURES` order (`rule`: the rules' answer, dispute as supersede)."""
    rule = "supersede" if rule == "dispute" else rule
    return [s.semantic or 0.0, s.words, s.order, s.lexical, s.rest, *(float(d in s.differs) for d in DIFFERS), float(s.swap),
            *(float(s.slot == x) for x in SLOTS), *(float(rule == r) for r in LABELS),
            float(s.says_change), float(s.says_also), float(s.named), float("name" in s.differs)]


def says_two_things(s: Signals) -> bool:
    """The words keep the two apart whatever a model says: never merged into one."""
    permutation = s.words == 1.0 and s.order < 0.5  # "Alice reports to Bob" / "Bob reports to Alice"
    return permutation or bool(s.differs) or s.others or s.slot in ("changed", "negated", "beside")


class PairModel:
    """The shipped weights (`data/curator-pairs.json`) and the thresholds they were chosen with."""

    def __init__(self, spec: dict) -> None:
        if tuple(spec["features"]) != FEATURES or tuple(spec["labels"]) != LABELS:
            raise ValueError("curator-pairs.json was trained on other features: run bench/train_curator.py")
        self.mean = np.asarray(spec["mean"], dtype=np.float64)
        self.scale = np.asarray(spec["scale"], dtype=np.float64)
        self.weights = np.asarray(spec["weights"], dtype=np.float64)  # (features + 1) x labels, the last row the bias
        self.confirm_at = float(spec["confirm_at"])
        # it links what the rules called new only for short statements that the vectors hold close (`link_words`, `link_cosine`)
        self.link_words = int(spec.get("link_words", 0))
        self.link_cosine = float(spec.get("link_cosine", 1.0))
        self.max_words = int(spec["max_words"])  # the longest statement it was trained on

    def probabilities(self, x: list[float]) -> np.ndarray:
        z = np.append((np.asarray(x) - self.mean) / self.scale, 1.0) @ self.weights
        e = np.exp(z - z.max())
        return e / e.sum()  # type: ignore[no-any-return]

    def decide(self, s: Signals, rule: str, candidate: str, existing: str) -> str:
        """confirm | related | new for a pair the rules called related or new: the rules'
        answer for statements longer than any it was trained on, never a supersession."""
        words = max(len(candidate.split()), len(existing.split()))
        if words > self.max_words:
            return rule
        p = self.probabilities(features(s, rule))
        if says_two_things(s) or s.refines or p[0] < self.confirm_at:
            p[0] = 0.0
        p[1] = 0.0  # on conversation it took "Now I'm thinking of a tent" to replace "I'm thinking of gift ideas"
        if rule == "new" and not (words <= self.link_words and (s.semantic or 0.0) >= self.link_cosine):
            p[2] = 0.0  # on conversation it linked whatever said "also" or "as well" ("…a question about the campground")
        return LABELS[int(p.argmax())]


@lru_cache(maxsize=1)
def shipped() -> PairModel:
    return PairModel(json.loads(files("palimpsest").joinpath("data/curator-pairs.json").read_text(encoding="utf-8")))
