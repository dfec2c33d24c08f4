"""The curator: the gate every fact candidate passes before it becomes a fact.

A candidate is compared with the open facts of its vault found by the normalised text,
by keywords and (with an embedder) by vectors. Three signals judge each pair, and no
decision rests on one alone (DESIGN.md, "Curation (facts)"):

- exact: the normalised texts are equal (case, punctuation, spacing);
- lexical: the mean of the Dice overlap of content-word stems and of their bigrams
  (so "Alice reports to Bob" is not "Bob reports to Alice"), and the word overlap alone
  (for topic: "related");
- semantic: the cosine of the two embeddings, when there is an embedder.

Besides, the words that make two similar sentences say different things are compared:
numbers, a negation, names and acronyms (embeddings blur exactly those).

    confirm    exact; or no difference in those words and either cosine > 0.9 with
               lexical ≥ 0.6 and bigram overlap ≥ 0.3 (embeddings ignore who did what to
               whom), or cosine ≥ 0.85 with lexical ≥ 0.7 and bigrams ≥ 0.5, or lexical
               > 0.9 with cosine ≥ 0.8 (or no embedder)
    supersede  the candidate names what it corrects (`corrects`: an id or the old text);
               or it differs from a fact only by one number or a negation, the rest agreeing
               (lexical of the rest ≥ 0.6, and cosine ≥ 0.5 with an embedder), and starts
               later — an update
    dispute    the same kind of difference, but the candidate is not later
    related    similarity (the largest of cosine, lexical and plain word overlap) of 0.7 or
               more without being the same: a new fact linked `related_to`, listed for review
    new        otherwise

A candidate that cannot be curated now (the store is unreachable) is journaled as a
`pending_semantic` event and curated later by `drain()` — never dropped. Invalid
candidates are refused with `InvalidInput`: they would fail again on every retry.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from ..errors import InvalidInput, NotFound, PalimpsestError, StoreUnavailable
from ..store.facts_base import FactQuery
from .model import DOMAIN, Fact, JournaledDecision, _new_id, normalise

log = logging.getLogger(__name__)

CONFIRM = 0.9
RELATED = 0.7
REST_AGREES = 0.6
NEIGHBOURS = 10
NEGATIONS = frozenset(["not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "can't", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't", "weren't", "won't", "wouldn't", "shouldn't", "haven't", "hasn't", "hadn't", "stopped", "quit"])
NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "first": "1st", "third": "3rd"})
del NUMBER_WORDS["one"]  # more often a pronoun ("a new one") than a count; "second" is left out too (a unit)
_WORD = re.compile(r"\d+(?:[.,:]\d+)*(?:st|nd|rd|th|am|pm|k|m|%)?|[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ies", "ied", "es", "ed", "ly", "s")
# Only words that never change what a statement says: prepositions, quantifiers and
# "before/after" stay, since "before midnight" is not "after midnight".
STOP_WORDS = frozenset(["a", "an", "the", "of", "to", "is", "am", "are", "was", "were", "be", "been", "being", "have", "has", "had", "do", "does", "did", "i", "i'm", "i've", "me", "my", "mine", "we", "our", "ours", "us", "you", "your", "yours", "it", "it's", "its", "and", "that", "this", "these", "those", "there", "here", "very", "really", "just", "also", "so", "actually", "currently", "now", "still", "by", "as"])


@dataclass
class Candidate:
    """A statement offered to the curator. `corrects` names the fact it corrects (an id,
    or the old statement's text); `source` is where it was heard (an event id, …)."""

    text: str
    vault: str | None = None
    kind: str = "fact"
    entities: list[str] = field(default_factory=list)
    salience: float = 0.5
    confidence: float = 0.7
    valid_from: Any = None
    source: Any = None
    corrects: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    at: Any = None  # when it was heard (the attestation's time; default: valid_from, else now)

    @classmethod
    def of(cls, value: Any) -> Candidate:
        if isinstance(value, Candidate):
            return value
        if isinstance(value, str):
            return cls(text=value)
        if not isinstance(value, dict):
            raise InvalidInput("a candidate is a text or an object with `text`")
        unknown = set(value) - set(cls.__dataclass_fields__)
        if unknown:
            raise InvalidInput(f"unknown candidate fields: {sorted(unknown)}")
        return cls(**value)

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        d = asdict(self)
        if d["valid_from"] is not None and not isinstance(d["valid_from"], (str, int, float)):
            from ..records import iso, parse_time

            d["valid_from"] = iso(parse_time(d["valid_from"]))
        return d


@dataclass
class Signals:
    exact: bool
    lexical: float  # mean of the word and bigram overlaps
    semantic: float | None
    differs: list[str]  # number (one changed), numbers (several), negation, name
    rest: float  # lexical similarity with the differing words left out
    words: float = 1.0  # Dice overlap of the words alone (order-blind)
    order: float = 1.0  # Dice overlap of the word bigrams (who did what to whom)

    @property
    def similarity(self) -> float:
        """How close the two are in topic: the best of cosine, lexical and word overlap."""
        return max(self.lexical, self.words, self.semantic if self.semantic is not None else 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {"exact": self.exact, "lexical": round(self.lexical, 4), "words": round(self.words, 4),
                "order": round(self.order, 4), "semantic": None if self.semantic is None else round(self.semantic, 4),
                "differs": self.differs, "rest": round(self.rest, 4)}


@dataclass
class Decision:
    """What the curator did: `action` confirm | supersede | dispute | related | new, or
    parked (store unreachable: journaled, curated later) or skipped (from an instant session)."""

    action: str
    fact: Fact | None = None
    target: Fact | None = None
    signals: Signals | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "fact": self.fact.to_dict() if self.fact else None,
                "target": self.target.to_dict() if self.target else None,
                "signals": self.signals.to_dict() if self.signals else None, "reason": self.reason}


# -- signals -------------------------------------------------------------------
def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def tokens(text: str) -> list[str]:
    """Content words of a statement: case-folded, number words as digits, stop words out
    (negations kept), light suffix stemming."""
    out = []
    for w in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        w = w.replace("’", "'")
        w = NUMBER_WORDS.get(w, w)
        if w[0].isdigit():
            out.append(w.replace(",", ""))
        elif w in NEGATIONS or w.endswith("n't"):
            out.append("not")
        elif w not in STOP_WORDS:
            out.append(_stem(w))
    return out


def _dice(a: set[Any], b: set[Any]) -> float:
    if not a and not b:
        return 1.0
    return 2 * len(a & b) / (len(a) + len(b)) if a or b else 0.0


def overlaps(a: list[str], b: list[str]) -> tuple[float, float]:
    """Dice overlap of the words, and of the word bigrams (1.0 for one-word statements)."""
    uni = _dice(set(a), set(b))
    if len(a) < 2 or len(b) < 2:
        return uni, uni
    return uni, _dice(set(pairwise(a)), set(pairwise(b)))


def lexical(a: list[str], b: list[str]) -> float:
    return sum(overlaps(a, b)) / 2


def _names(text: str) -> set[str]:
    """Acronyms, capitalised words not opening a sentence, and identifiers: words with
    digits and letters, or with @ / . inside (addresses, versions, host names)."""
    words = re.findall(r"[\w'’.@/-]+", text)
    out = set()
    for i, w in enumerate(words):
        w = re.sub(r"['’]s$", "", w.strip(".'’-:"))
        if not w or w.lower() in STOP_WORDS:
            continue
        opening = i == 0 or words[i - 1].endswith((".", "!", "?", ":"))
        letters = re.search(r"[^\W\d_]", w)
        ident = re.search(r"[@/]", w) or (letters and (re.search(r"\w\.\w", w) or re.search(r"\d", w)))
        if (w.isupper() and len(w) > 1) or (w[0].isupper() and not opening) or ident:
            out.add(w.lower())
    return out


def compare(candidate: str, existing: str, semantic: float | None = None) -> Signals:
    a, b = tokens(candidate), tokens(existing)
    if normalise(candidate) == normalise(existing):
        return Signals(True, 1.0, semantic, [], 1.0)
    numbers_a, numbers_b = {w for w in a if w[0].isdigit()}, {w for w in b if w[0].isdigit()}
    differs = []
    if numbers_a != numbers_b:
        # one value changed is an update; several usually name other things ("Room 101 has 4")
        differs.append("number" if len(numbers_a - numbers_b) <= 1 and len(numbers_b - numbers_a) <= 1 else "numbers")
    if ("not" in a) != ("not" in b):
        differs.append("negation")
    names_a, names_b = _names(candidate), _names(existing)
    if names_a != names_b and (names_a - names_b) and (names_b - names_a):
        differs.append("name")
    skip = (numbers_a ^ numbers_b) | {"not"}
    rest = lexical([w for w in a if w not in skip], [w for w in b if w not in skip])
    words, order = overlaps(a, b)
    return Signals(False, (words + order) / 2, semantic, differs, rest, words, order)


def judge(s: Signals, candidate_later: bool) -> str:
    """The gate: confirm | supersede | dispute | related | new for one pair."""
    if s.exact:
        return "confirm"
    sem = s.semantic
    if not s.differs:
        if sem is not None and sem > CONFIRM and s.lexical >= 0.6 and s.order >= 0.3:
            return "confirm"
        if sem is not None and sem >= 0.85 and s.lexical >= 0.7 and s.order >= 0.5:
            return "confirm"  # two strong signals agreeing, neither alone past its bar
        if s.lexical > CONFIRM and (sem is None or sem >= 0.8):
            return "confirm"
    value_change = bool(s.differs) and not {"name", "numbers"} & set(s.differs)
    if value_change and s.rest >= REST_AGREES and (sem is None or sem >= 0.5):
        return "supersede" if candidate_later else "dispute"
    if s.similarity >= RELATED:
        return "related"
    return "new"


RANK = {"confirm": 5, "supersede": 4, "dispute": 3, "related": 2, "new": 1}


# -- the curator ---------------------------------------------------------------
class Curator:
    """`memory.facts.curator.write(candidate)`: dedupe, link, correct, or add."""

    def __init__(self, facts: Any) -> None:  # `operations.Facts`, which builds its curator
        self.facts = facts
        self._pending_known: bool | None = None

    def write(self, candidate: Any) -> Decision:
        """Curate one candidate (a text, a dict or a `Candidate`); see the module doc."""
        c = Candidate.of(candidate)
        self._check(c)
        try:
            if self._pending_known is not False or self.facts.needs_replay:
                self.drain()
            return self._curate(c)
        except JournaledDecision as exc:  # already journaled: replay applies it, parking would repeat it
            return Decision("parked", reason=str(exc))
        except StoreUnavailable as exc:
            return self._park(c, str(exc))
        except PalimpsestError:
            raise
        except Exception as exc:
            return self._park(c, f"{type(exc).__name__}: {exc}")

    def _check(self, c: Candidate) -> None:
        from .model import _entities, _kind, _text, _time, _unit, parse_source

        c.text = _text(c.text)
        c.kind = _kind(c.kind)
        c.entities = _entities(c.entities)
        _unit(c.salience, "salience")
        _unit(c.confidence, "confidence")
        if c.valid_from is not None:
            c.valid_from = _time(c.valid_from, "valid_from")
        if c.at is not None:
            c.at = _time(c.at, "at")
        parse_source(c.source)
        if c.corrects is not None and (not isinstance(c.corrects, str) or not c.corrects.strip()):
            raise InvalidInput("corrects must be a fact id or the text of the fact it corrects")

    def neighbours(self, c: Candidate) -> list[tuple[Fact, Signals]]:
        """Open facts of the candidate's vault near it, each with the pair's signals."""
        from ..search import query_terms

        facts, store = self.facts, self.facts.store
        vault = c.vault or "facts"
        if vault not in {v.name for v in store.fact_vaults()}:
            return []
        q = FactQuery(vaults=[vault], believed=True)
        ids = [r.id for r in store.query_facts(FactQuery(vaults=[vault], believed=True, norm=normalise(c.text), limit=NEIGHBOURS))]
        ids += [i for i, _ in store.fact_keyword_search(query_terms(c.text), q, NEIGHBOURS, False)]
        cosines: dict[str, float] = {}
        embedder = facts.embedder
        if embedder is not None:
            try:
                vector = embedder.checked([c.text])[0]
                cosines = dict(store.fact_vector_search(embedder.model_id, vector, q, NEIGHBOURS))
                ids += list(cosines)
            except PalimpsestError as exc:
                log.warning("curating without the embedder: %s", exc)
                embedder = None
        rows = store.get_facts(list(dict.fromkeys(ids)))
        out = []
        for fact in facts._views(rows):
            if fact.status not in ("current", "future"):
                continue
            cos = cosines.get(fact.id) if embedder is not None else None
            if embedder is not None and cos is None:
                cos = 0.0
            out.append((fact, compare(c.text, fact.text, cos)))
        return out

    def _curate(self, c: Candidate) -> Decision:
        # compare, then write: serialised per vault across every process on the store, or
        # two workers curating one statement at once would both find nothing and write it
        with self.facts.store.exclusive(f"curate:{c.vault or 'facts'}"):
            return self._curate_alone(c)

    def _curate_alone(self, c: Candidate) -> Decision:
        if self._from_instant_session(c):
            return Decision("skipped", reason="heard in an instant session: scratch is never promoted into facts")
        if c.corrects is not None:
            return self._correct(c)
        start = c.valid_from or self.facts.now()
        best: tuple[int, float, Fact, Signals, str] | None = None
        for fact, s in self.neighbours(c):
            action = judge(s, start > fact.valid_from)
            key = (RANK[action], s.similarity)
            if best is None or key > best[:2]:
                best = (key[0], key[1], fact, s, action)
        if best is None or best[4] == "new":
            fact = self._write(c)
            return Decision("new", fact, best[2] if best else None, best[3] if best else None, "no close fact")
        _, _, target, s, action = best
        if action == "confirm":
            fact = self.facts.confirm(target.id, source=c.source, at=c.at or c.valid_from)
            return Decision("confirm", fact, target, s, "the same statement heard again")
        if action == "supersede":
            fact = self._supersede(c, target)
            return Decision("supersede", fact, target, s, f"an update of the same statement ({', '.join(s.differs)} changed)")
        fact = self._write(c)
        if action == "dispute":
            self.facts.dispute(fact.id, target.id)
            return Decision("dispute", self.facts.get(fact.id), target, s, f"cannot both hold ({', '.join(s.differs)}) and nothing says which is wrong")
        self.facts.relate(fact.id, target.id)
        return Decision("related", self.facts.get(fact.id), target, s, "close but not the same: listed for review")

    def _from_instant_session(self, c: Candidate) -> bool:
        from .model import parse_source

        kind, ref = parse_source(c.source)
        if kind != "event":
            return False
        found = self.facts.store.get_messages([ref])
        session = self.facts.store.get_session(found[0].session) if found else None
        return session is not None and session.kind == "instant"

    def _write(self, c: Candidate) -> Fact:
        return self.facts.write(c.text, vault=c.vault, kind=c.kind, entities=c.entities, salience=c.salience,
                                confidence=c.confidence, valid_from=c.valid_from, source=c.source, at=c.at, metadata=c.metadata or None)

    def _supersede(self, c: Candidate, target: Fact) -> Fact:
        valid_from = c.valid_from
        if valid_from is None or valid_from <= target.valid_from:
            valid_from = None  # now
        return self.facts.supersede(target.id, c.text, valid_from=valid_from, kind=c.kind,
                                    entities=c.entities or None, salience=c.salience, confidence=c.confidence,
                                    source=c.source, at=c.at, metadata=c.metadata or None)

    def _correct(self, c: Candidate) -> Decision:
        """An explicit correction supersedes what it names: a fact id, or the closest open
        fact to the text it quotes (similarity at least 0.5), else it is written as new."""
        assert c.corrects is not None
        target: Fact | None = None
        try:
            target = self.facts.get(c.corrects)
        except (NotFound, InvalidInput):
            probe = Candidate(text=c.corrects, vault=c.vault)
            scored = [(max(s.similarity, 1.0 if s.exact else 0.0), f) for f, s in self.neighbours(probe)]
            scored = [x for x in scored if x[0] >= 0.5]
            target = max(scored, key=lambda x: x[0])[1] if scored else None
        if target is None or target.status not in ("current", "future"):
            fact = self._write(c)
            return Decision("new", fact, target, None, "the fact it corrects is not open; written as new")
        return Decision("supersede", self._supersede(c, target), target, None, "an explicit correction")

    # -- parking -------------------------------------------------------------
    def _park(self, c: Candidate, reason: str) -> Decision:
        key = _new_id("pend")
        self.facts.decisions.record(DOMAIN, "parked", key=key, content=c.text[:200], kind="pending_semantic",
                                    created_at=self.facts.now(), candidate=c.to_dict(), reason=reason[:500])
        self._pending_known = True
        log.warning("fact candidate parked (%s): %s", reason, key)
        return Decision("parked", reason=f"cannot curate now ({reason}); journaled as {key}")

    def pending(self) -> list[tuple[str, dict[str, Any]]]:
        """(key, candidate) of parked candidates not curated yet."""
        parked: dict[str, dict[str, Any]] = {}
        for kind, d in self.facts.decisions.read(DOMAIN, ("pending_semantic", "decision")):
            if kind == "pending_semantic":
                parked[d.key] = d.meta.get("candidate") or {}
            elif d.op == "drained":
                parked.pop(d.meta.get("drains", ""), None)
        return list(parked.items())

    def drain(self) -> list[Decision]:
        """Apply journaled decisions the store missed, then curate every parked candidate,
        oldest first; stops (keeping the rest parked) if the store is still unreachable.
        Each one is marked drained once curated."""
        self.facts.replay()  # decisions journaled while the store was away come first
        done = []
        waiting = self.pending()
        for key, raw in waiting:
            try:
                decision = self._curate(Candidate.of(raw))
            except InvalidInput as exc:
                decision = Decision("rejected", reason=str(exc))
            self.facts.decisions.record(DOMAIN, "drained", key=f"drain_{key}", content=f"drained {key}",
                                        created_at=self.facts.now(), drains=key, action=decision.action,
                                        fact=decision.fact.id if decision.fact else None)
            done.append(decision)
        self._pending_known = False
        return done
