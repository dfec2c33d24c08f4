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
numbers, a negation (counted by parity; "closed" is "not open"), names and acronyms, and
opposite words ("begins" / "ends": `OPPOSITES`) — embeddings blur exactly those.

    confirm    exact; or no difference in those words and either cosine > 0.9 with
               lexical ≥ 0.6 and bigram overlap ≥ 0.3 (embeddings ignore who did what to
               whom), or cosine ≥ 0.85 with lexical ≥ 0.7 and bigrams ≥ 0.5, or lexical
               > 0.9 with cosine ≥ 0.8 (or no embedder)
    supersede  the candidate names what it corrects (`corrects`: an id or the old text);
               or it differs from a fact only by one number or a negation, the rest agreeing
               (lexical of the rest ≥ 0.6, and cosine ≥ 0.5 with an embedder), and starts
               later — an update; or one number swapped for another with a word shared and
               cosine ≥ 0.75 ("Node 18" / "Production runs Node 20"); or a slot changed
               (`slots.relation`: another value, a named thing said to be gone, a change
               said in one clause of several)
    dispute    the same kind of difference, but the candidate is not later
    related    similarity (the largest of cosine, lexical and plain word overlap) of 0.7 or
               more without being the same: a new fact linked `related_to`, listed for review
    new        otherwise

Only facts of the candidate's owner are compared: not those heard only in sessions of another
channel, `user:` or `project:` tag than the candidate's — or agent, where the setting `fact_owners`
names it (`Facts.owners`).

With an embedder and no LLM, what these rules leave at related or new is read again by
the pair model (`pairs`: a logistic regression over the same signals, trained on the
development pair sets and shipped in the package), which may confirm (probability ≥ 0.95,
never where the words above differ) or unlink a related pair into new — never link, never
supersede: those stay the rules'; its decisions say so in their reason. With an LLM
configured, the LLM decides that band instead (`arbiter`).

A candidate that cannot be curated now (the store is unreachable) is journaled as a
`pending_semantic` event and curated later by `drain()` — never dropped. Invalid
candidates are refused with `InvalidInput`: they would fail again on every retry.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import timedelta
from functools import lru_cache
from itertools import pairwise
from typing import Any

from .. import when
from ..errors import InvalidInput, NotFound, PalimpsestError, StoreUnavailable
from ..records import iso, parse_time, speaker_in
from ..search.floor import beyond_model
from ..segment import SPELLED, fold
from ..store.facts_base import FactQuery
from . import arbiter, local, pairs, slots
from .arbiter import in_band
from .casing import cased, typed_lower
from .model import DOMAIN, Fact, JournaledDecision, _new_id, normalise, parse_source

log = logging.getLogger(__name__)

CONFIRM = 0.9
RELATED = 0.7
REST_AGREES = 0.6
PARAPHRASE = 0.85  # chosen on the dev pairs: their non-paraphrases without a differing word stay under 0.63, their paraphrases reach 0.88
SWAP = 0.75  # chosen on blind, blind2, blind3: one number swapped for another, a word shared, said in other words
SLOT_CONFIRM = 0.5  # the cosine under which one slot with one value is still not taken as the same statement
CHANGE_SAID = 0.4  # a change said by a marker supersedes from this cosine (0.3–0.4 a plateau on both halves of the development pairs)
# a change said after a fact, of a time at most this long before it ("we moved to GitHub Actions yesterday", after "Our CI
# runs on Jenkins" said this morning) is the news: the fact was already stale when said. Further back ("In 2010 I switched to
# a Mac", after "I use Linux" said last week) it is history told, held until the fact began.
STALE_SAID = timedelta(days=14)
FLIP = 0.75  # a negation flipped, said as a change or a return ("I stopped drinking coffee" / "I started drinking coffee again"), supersedes from this cosine
SCOPED_RELATED = 0.45  # a statement for one time or one version of a thing, this close, stands beside what holds
DATE_MOVED = 0.6  # a date said to have moved supersedes from this cosine (the development pairs: see docs/facts.md)
CHANGE_WORDS = 13  # … between statements of at most this many words (the longest development pair; chat's sentences are longer)
NEIGHBOURS = 10
OWNERS_WIDEN = 64  # how much further the neighbours are looked for when other owners' facts crowd the nearest
NAMED_TIE = 0.02  # facts this close to the text a correction names are alike: its own words choose, or it asks which
# what tells whose a statement is (`Facts.owners`, setting `fact_owners`): by default the channel of the session it was
# heard in and its accepted `user:` and `project:` tags (a chat bot's users, a coding agent's repositories), and the
# session's agent where each agent serves other people; statements heard only where these differ are never one slot
_FIRST_PERSON_SINGULAR = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine)\b", re.IGNORECASE)
NEGATIONS = frozenset(["not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "can't", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't", "weren't", "won't", "wouldn't", "shouldn't", "haven't", "hasn't", "hadn't", "stopped", "quit", "stop", "stops", "quits",
                       # the same in the other languages a user writes in (German, Spanish, French, Italian, Portuguese,
                       # Dutch, Swedish): "Ich trinke keinen Kaffee." is no second hearing of "Ich trinke Kaffee."
                       "nicht", "kein", "keine", "keinen", "keinem", "keiner", "keines", "nie", "niemals", "nichts",
                       "nunca", "jamás", "tampoco", "pas", "jamais", "aucun", "aucune", "non", "niente", "nessuno",
                       "não", "nenhum", "nenhuma", "niet", "geen", "nooit", "niets", "inte", "aldrig", "ingen"])
NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "first": "1st", "third": "3rd", "fourth": "4th",
                     "fifth": "5th"})
NUMBER_WORDS.update({w: f"{i}th" for i, w in enumerate(["sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth",
                     "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth"], start=6)})
NUMBER_WORDS.update({"thirtieth": "30th", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90"})
_TENS = {w: NUMBER_WORDS[w][0] for w in ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")}
_UNITS = {w: str(i) for i, w in enumerate(["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"], start=1)}
_UNITS.update({"first": "1st", "second": "2nd", "third": "3rd", **{w: NUMBER_WORDS[w] for w in ("fourth", "fifth", "sixth", "seventh", "eighth", "ninth")}})
del NUMBER_WORDS["one"]  # more often a pronoun ("a new one") than a count; "second" is left out too (a unit)
_WORD = re.compile(r"\d+(?:[.,:]\d+)*(?:st|nd|rd|th|am|pm|k|m|%)?|[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
# Only words that never change what a statement says: prepositions, quantifiers and
# "before/after" stay, since "before midnight" is not "after midnight".
STOP_WORDS = frozenset(["a", "an", "the", "of", "to", "is", "am", "are", "was", "were", "be", "been", "being", "have", "has", "had", "do", "does", "did", "i", "i'm", "i've", "me", "my", "mine", "we", "our", "ours", "us", "you", "your", "yours", "it", "it's", "its", "and", "that", "this", "these", "those", "there", "here", "very", "really", "just", "also", "so", "actually", "currently", "now", "still", "by", "as"])


# one name said two ways; and a weekday said of every week ("on Thursdays") is the weekday
ALIASES = {"postgresql": "postgres", "golang": "go", "k8s": "kubernetes", "mongo": "mongodb", "js": "javascript", "ts": "typescript",
           "prod": "production", "repo": "repository", "repos": "repositories", "db": "database", "dbs": "databases",
           "infra": "infrastructure",
           **{f"{d}days": f"{d}day" for d in ("mon", "tues", "wednes", "thurs", "fri", "satur", "sun")},
           # a day said short ("wed 14:00" / "Wednesdays 2-4pm")
           **dict.fromkeys(("mons",), "monday"), **dict.fromkeys(("tue", "tues"), "tuesday"),
           **dict.fromkeys(("wed", "weds"), "wednesday"), **dict.fromkeys(("thu", "thur", "thurs"), "thursday"),
           **dict.fromkeys(("fri", "fris"), "friday"), **dict.fromkeys(("sats",), "saturday"), **dict.fromkeys(("suns",), "sunday"),
           # (not "sat", "sun", "mon": "I sat the bar exam in the sun" names no days)
           # a unit said two ways ("82 kilos" / "77 kg")
           **dict.fromkeys(("kilo", "kilos", "kilogram", "kilograms", "kgs"), "kg"), **dict.fromkeys(("lbs", "pounds"), "lb"),
           **dict.fromkeys(("kilometre", "kilometres", "kilometer", "kilometers", "kms"), "km")}

# words whose swap says another thing of the same subject, not a change of its value (stems, as `tokens` gives them)
OPPOSITES = [(slots.stem(x), slots.stem(y)) for x, y in (("begins", "ends"), ("starts", "ends"), ("starts", "finishes"), ("begins", "finishes"),
             ("arrives", "leaves"), ("arrives", "departs"), ("opens", "closes"), ("buys", "sells"), ("bought", "sold"),
             ("before", "after"), ("above", "below"), ("earliest", "latest"), ("minimum", "maximum"), ("min", "max"),
             # a decision turned: "We decided to drop offline mode." / "… to keep offline mode." had been confirmed
             ("keep", "drop"), ("kept", "dropped"), ("add", "remove"), ("added", "removed"), ("enable", "disable"),
             ("enabled", "disabled"), ("include", "exclude"), ("included", "excluded"))]
# loving and hating one thing: "I hate oatmeal." / "Actually I like oatmeal now." was confirmed (a cosine of 0.85); said as a
# change, the later feeling is the news
FEELINGS = [(slots.stem(x), slots.stem(y)) for x in ("love", "loves", "loved", "like", "likes", "liked", "enjoy", "enjoys", "enjoyed",
                                                    "adore", "adores")
            for y in ("hate", "hates", "hated", "dislike", "dislikes", "disliked", "detest", "detests", "loathe", "loathes")]
# successive states of one thing: the later one is news of it, never the same statement ("Yusuf is engaged to Leila." /
# "Yusuf and Leila are married.", a cosine of 0.92, was merged)
STAGES = [(slots.stem(x), slots.stem(y)) for x, y in (("dating", "engaged"), ("dating", "married"), ("engaged", "married"),
          ("married", "divorced"), ("married", "separated"), ("married", "widowed"), ("engaged", "divorced"),
          ("pregnant", "born"), ("applied", "hired"), ("interviewing", "hired"), ("applied", "rejected"))] + [
          # a fault, then its repair: "gpu-07 is fixed, the NVLink bridge was replaced." had confirmed "gpu-07 has a bad NVLink."
          (slots.stem(x), slots.stem(y)) for x in ("broken", "bad", "faulty", "failing", "dead", "flaky", "crashing", "leaking")
          for y in ("fixed", "repaired", "resolved", "mended")]


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
        if "text" not in value:
            raise InvalidInput("a candidate needs `text`: the statement to curate")
        return cls(**value)

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        d = asdict(self)
        if d["valid_from"] is not None and not isinstance(d["valid_from"], (str, int, float)):
            d["valid_from"] = iso(parse_time(d["valid_from"]))
        return d


@dataclass
class Signals:
    exact: bool
    lexical: float  # mean of the word and bigram overlaps
    semantic: float | None
    differs: list[str]  # number (one changed), numbers (several), negation, name, opposite, stage
    rest: float  # lexical similarity with the differing words left out
    words: float = 1.0  # Dice overlap of the words alone (order-blind)
    order: float = 1.0  # Dice overlap of the word bigrams (who did what to whom)
    slot: str | None = None  # same | changed | negated | beside (slots.relation), or None
    swap: bool = False  # one number for another ("Node 18" / "Node 20"), not a number added
    named: bool = False  # a name or acronym in both ("Marco leads …" / "Marco also mentors …")
    refines: bool = False  # one says all the other does and more ("verify: require a certificate" / "… with matching host name")
    says_change: bool = False  # the candidate says a value changed ("now", "switched to", "no longer"; slots' reading)
    says_also: bool = False  # the candidate says it adds to what holds ("also", "too"; slots' reading)
    apart: bool = False  # both have a slot, and they are different slots of different things (slots.relation None)
    count: bool = False  # the one number swapped counts the same thing ("6 engineers" / "down to 4 engineers"), for one holder
    moved: bool = False  # the candidate's verb says the change ("upgraded to", "moved to", "switched"), not only an adverb ("now")
    marked: bool = False  # the candidate says a change by a marker of its own, as the marker rule reads it (`_marked`)
    scoped: bool = False  # said of two things: each for a version of its own ("for Llama 2" / "For Llama 3 …", `_scoped`), or
    # named by their subjects ("the staging server" / "the production server", `slots.two_things`)
    resumed: bool = False  # the candidate says something holds again ("again", "back to", "back on")
    others: bool = False  # said of two people ("My sister lives in Braga." / "I live in Braga.", `slots.others`)
    added: bool = False  # the candidate keeps every number of the fact (none, or all) and adds one ("… on port 5432 and Redis on 6379")
    named_in_reason: bool = False  # the names the candidate brings are all in its reason ("… since Elm Street is 40 min away now")

    @property
    def change_said(self) -> bool:
        """The marker rule's reading: a change said (`marked`) of a value the words name — two names, or one number for another."""
        return self.marked and not self.scoped and ("name" in self.differs and not self.named_in_reason or self.swap)

    @property
    def similarity(self) -> float:
        """How close the two are in topic: the best of cosine, lexical and word overlap."""
        return max(self.lexical, self.words, self.semantic if self.semantic is not None else 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {"exact": self.exact, "lexical": round(self.lexical, 4), "words": round(self.words, 4),
                "order": round(self.order, 4), "semantic": None if self.semantic is None else round(self.semantic, 4),
                "differs": self.differs, "rest": round(self.rest, 4), "slot": self.slot}


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
        # a new fact has no target: the nearest fact it was compared with is no business of the caller's (a bot's
        # `memory_remember` had answered with another user's launch code, "no close fact")
        shown = self.target if self.target is not None and self.action != "new" else None
        return {"action": self.action, "fact": self.fact.to_dict() if self.fact else None,
                "target": shown.to_dict() if shown else None,
                "signals": self.signals.to_dict() if self.signals else None, "reason": self.reason}


# -- signals -------------------------------------------------------------------
def tokens(text: str, spans: bool = True) -> list[str]:
    """Content words of a statement: case-folded, number words as digits, stop words out
    (negations kept), light suffix stemming; with `spans`, a number and a unit of time as one
    word ("two weeks" is "14d": recall's revisions read the number beside its unit instead)."""
    out = []
    folded = _PHRASES.sub(lambda m: _PHRASE[m.group(0)],  # "Köln" and "Koln", "Ødegaard" and "Odegaard" are one word
                          slots.unhedged(fold(unicodedata.normalize("NFKC", text).casefold()).translate(SPELLED)))
    words = _compound_numbers([w.replace("’", "'") for w in _WORD.findall(folded)])
    words = _durations(words) if spans else words
    for i, w in enumerate(words):
        w = ALIASES.get(w, NUMBER_WORDS.get(w, w))
        positive = slots.opposite(words, i)
        if w[0].isdigit():
            out.append(_number(slots.unordinal(w.replace(",", ""))))
        elif w in NEGATIONS or w.endswith("n't"):
            out.append("not")
        elif positive is not None:
            out += ["not", positive]  # "closed" says "not open"
        elif w not in STOP_WORDS:
            out.append(slots.stem(w))
    return out


_THOUSANDS = re.compile(r"(\d+(?:\.\d+)?)k")


def _number(w: str) -> str:
    """One number said two ways as one: "10:00", "10am" and "10" (an hour: "02:00" is "2", "2pm" is "14"); "12k" is "12000"."""
    if (hour := slots.clock(w)) is not None:
        return hour
    if m := _THOUSANDS.fullmatch(w):
        thousands = float(m.group(1)) * 1000
        return str(int(thousands)) if thousands.is_integer() else str(thousands)
    return w


_MULTIPLIERS = {"hundred": 100, "thousand": 1000}

# a span of time in one unit of its kind: "two weeks" and "14 days" are "14d", "half an hour" and "30 minutes" "1800s",
# "two decades" and "20 years" "240mo" (a month is no fixed number of days: months and years are counted apart)
_DURATION = {**dict.fromkeys(("second", "seconds", "sec", "secs"), (1, "s")), **dict.fromkeys(("minute", "minutes", "mins"), (60, "s")),
             **dict.fromkeys(("hour", "hours", "hr", "hrs"), (3600, "s")), **dict.fromkeys(("day", "days"), (1, "d")),
             **dict.fromkeys(("week", "weeks"), (7, "d")), "fortnight": (14, "d"), "fortnights": (14, "d"),
             **dict.fromkeys(("month", "months"), (1, "mo")), **dict.fromkeys(("year", "years"), (12, "mo")),
             **dict.fromkeys(("decade", "decades"), (120, "mo"))}


def _durations(words: list[str]) -> list[str]:
    """A number and a unit of time as one word in the unit of its kind ("2", "weeks" → "14d"; "half", "an", "hour" → "1800s")."""
    out: list[str] = []
    for i, w in enumerate(words):
        unit = _DURATION.get(w) if words[i + 1:i + 2] != ["old"] else None  # "7 years old" is an age: "is 7", "is seven"
        if unit and out and (n := _amount(out[-1])) is not None:
            out[-1] = _in_unit(n * unit[0], unit[1])
        elif unit and out[-2:] in (["half", "an"], ["half", "a"]):
            out[-2:] = [_in_unit(unit[0] / 2, unit[1])]
        else:
            out.append(w)
    return out


def _amount(word: str) -> float | None:
    """The number a word says ("2", "two", "1.5"), or None."""
    number = NUMBER_WORDS.get(word, word)
    return float(number) if _DECIMAL.fullmatch(number) else None


_DECIMAL = re.compile(r"\d+(?:\.\d+)?")


def _in_unit(n: float, unit: str) -> str:
    if unit == "d" and n < 1:
        n, unit = n * 86400, "s"  # half a day
    return f"{int(n) if float(n).is_integer() else n}{unit}"


# one thing named two ways in the words of software teams ("PRs" / "pull requests", "CI" / "continuous integration")
_PHRASE = {"pull requests": "prs", "pull request": "pr", "merge requests": "mrs", "merge request": "mr", "continuous integration": "ci",
           "continuous deployment": "cd", "continuous delivery": "cd", "amazon web services": "aws"}
_PHRASES = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, _PHRASE), key=len, reverse=True)) + r")\b")


def _compound_numbers(words: list[str]) -> list[str]:
    """"thirty-two" and "twenty first" as one number ("32", "21st"), as a digit would be."""
    out: list[str] = []
    for w in words:
        if out and out[-1] in _TENS and w in _UNITS:
            out[-1] = _TENS[out[-1]] + _UNITS[w]
        elif out and w in _MULTIPLIERS and (n := _count_of(out[-1])) is not None:
            out[-1] = str(n * _MULTIPLIERS[w])  # "eighteen hundred" is 1800, "a hundred" 100, "12 thousand" 12000
        else:
            out.append(w)
    return out


def _count_of(word: str) -> int | None:
    if word in ("a", "one"):
        return 1
    n = _amount(word)
    return int(n) if n is not None and n.is_integer() else None


def overlaps(a: list[str], b: list[str]) -> tuple[float, float]:
    """Dice overlap of the words, and of the word bigrams (1.0 for one-word statements)."""
    uni = slots.dice(a, b)
    if len(a) < 2 or len(b) < 2:
        return uni, uni
    return uni, slots.dice(pairwise(a), pairwise(b))


def lexical(a: list[str], b: list[str]) -> float:
    return sum(overlaps(a, b)) / 2


def _quotes(quoted: str, fact: str) -> bool:
    """Whether a correction's quoted text names this fact: half its words at least are the fact's. A cosine is no
    proof outside English ("José vive en Valencia.", stored nowhere, had ended "La hermana de José se llama Zoë.")."""
    # (the stop words known are English: "en", "de", "no"; a model quotes in the third person: "The user lives in Berlin")
    words = {w[:5] for w in tokens(quoted) if len(w) > 2 and w not in ("not", "user", "user'")}
    # a name both say is whose fact, not which: "Svetlana Ivanova expects 110k" is half her name, and had named "Svetlana
    # Ivanova lives in Oslo." (a recruiter's `--corrects`; it was retired by her new salary)
    words -= {w[:5] for name in _names(quoted) & _names(fact) for w in tokens(name)}
    return not words or len(words & {w[:5] for w in tokens(fact)}) * 2 >= len(words)


def _names(text: str) -> set[str]:
    """Acronyms, capitalised words not opening a sentence, and identifiers: words with
    digits and letters, or with @ / . inside (addresses, versions, host names)."""
    words = re.findall(r"[\w'’.@/-]+", fold(text))  # "Köln" said "Koln" is one name
    out = set()
    for i, w in enumerate(words):
        w = re.sub(r"['’]s$", "", w.strip(".'’-:"))
        opening = i == 0 or words[i - 1].endswith((".", "!", "?", ":"))
        if not w or w.lower() in STOP_WORDS and not (w in ("A", "B") and not opening):
            continue  # but "Server A" / "Server B" name two things
        letters = re.search(r"[^\W\d_]", w)
        ident = re.search(r"[@/]", w) or (letters and (re.search(r"\w\.\w", w) or re.search(r"\d", w))
                                          and not (_THOUSANDS.fullmatch(w.lower()) or slots.ORDINAL.fullmatch(w.lower())))  # "130k", "4th": a number's value
        if (w.isupper() and (len(w) > 1 or w != "I")) or (w[0].isupper() and not opening) or ident:
            out.add(ALIASES.get(w.lower(), w.lower()))
    return out


def compare(candidate: str, existing: str, semantic: float | None = None) -> Signals:
    candidate, existing = cased(candidate, existing), cased(existing, candidate)  # "maria took over as …": read with its capitals
    candidate, existing = _ENUMERATOR.sub("", candidate), _ENUMERATOR.sub("", existing)  # "(2) I used to pass the park": a list's number
    a, b = tokens(candidate), tokens(existing)
    if normalise(candidate) == normalise(existing):
        return Signals(True, 1.0, semantic, [], 1.0, slot="same")
    numbers_a, numbers_b = _values(candidate, a) - _how_long(a, b), _values(existing, b) - _how_long(b, a)
    differs = []
    if numbers_a != numbers_b:
        # one value changed is an update; several usually name other things ("Room 101 has 4")
        differs.append("number" if len(numbers_a - numbers_b) <= 1 and len(numbers_b - numbers_a) <= 1 else "numbers")
    main_a, main_b = tokens(slots.main_clause(candidate)), tokens(slots.main_clause(existing))
    if main_a.count("not") % 2 != main_b.count("not") % 2:  # "not unlocked" is "locked"; "items that I don't use" denies nothing
        differs.append("negation")
    if _one_each(OPPOSITES, a, b):
        differs.append("opposite")  # "the workshop begins at 10" is not "ends at 10", whatever the vectors say
    if _one_each(FEELINGS, a, b):
        differs.append("feeling")
    if _one_each(STAGES, a, b):
        differs.append("stage")  # "engaged" / "married": one thing later, never merged (a value that changed)
    names_a, names_b = _names(candidate), _names(existing)
    if names_a != names_b and (names_a - names_b) and (names_b - names_a):
        differs.append("name")
    dates_a, dates_b = _dates(candidate), _dates(existing)
    if dates_a - dates_b and dates_b - dates_a:
        differs.append("date")  # "… on November 12." / "… on November 14.": never one statement said twice ("on 12 May 1990" may be)
    skip = (numbers_a ^ numbers_b) | {"not"}
    rest = lexical([w for w in a if w not in skip], [w for w in b if w not in skip])
    words, order = overlaps(a, b)
    before, (whole, parts, says_change, says_also) = slots.parse(existing), _read(candidate)
    slot = slots.relation(before, whole, existing, candidate)
    if slot not in ("changed", "negated"):  # a change said in one clause of several ("I'm no longer vegetarian, I eat fish again")
        shared = set(b) - {"not"}  # a clause about what the fact says
        changes = (r for text, words, parsed in parts if words & shared
                   and (r := slots.relation(before, parsed, existing, text)) in ("changed", "negated"))
        slot = next(changes, slot)
    if slot not in ("changed", "negated") and _ends_what_it_names(candidate, existing):
        slot = "negated"  # "she STOPPED the lisinopril" of "lisinopril stays at 10 for now": the thing it held is ended
    if slot == "changed" and re.search(r"\bstill\b", slots.main_clause(candidate), re.IGNORECASE) and not says_change:
        slot = "beside"  # "Your king is still on e1": what held holds, said with more or less around it
    versions = _scoped(candidate, existing) or slots.two_of_a_series(candidate, existing) \
        or _for_once(candidate, existing) and not says_change and not (whole and whole.change)
    # (each for a version of its own, or one for a day: "I moved to Lisbon today" is a change said, not an exception)
    if versions and slot in ("changed", "negated"):
        slot = "beside"  # "For Llama 2 the window is 4096" / "For Llama 3 … 8192": one attribute of two things
    things = slot in ("changed", "topic", None) and before is not None and whole is not None and slots.two_things(before, whole)
    if things and slot == "changed" and not says_change:
        slot = "beside"  # "The Go services are built with Go 1.22." / "The Rust services … with 1.78": two subjects, no change said
    swap = len(numbers_a - numbers_b) == 1 and len(numbers_b - numbers_a) == 1 and not versions \
        and not _numbers_of_two_things(a, b, numbers_a - numbers_b, numbers_b - numbers_a, before, whole)
    # or the change told with both values: "Postgres now runs on port 5433 because 5432 clashes …" of "… runs on port 5432."
    # — not where the number it adds is the one it says was before ("increased amlodipine from 5 to 10 mg" of "… amlodipine
    # 10 mg": the fact already says the new value)
    swap = swap or says_change and bool(numbers_b) and numbers_b < numbers_a and len(numbers_a - numbers_b) == 1 and not versions \
        and not (whole is not None and numbers_a - numbers_b <= set(tokens(" ".join(whole.old_value))))
    count = swap and _counted(a, numbers_a - numbers_b) is not None and _counted(a, numbers_a - numbers_b) == _counted(b, numbers_b - numbers_a) \
        and not (before is not None and whole is not None and not slots.same_holder(before, whole))
    x, y = set(a), set(b)
    return Signals(False, (words + order) / 2, semantic, differs, rest, words, order, slot, swap, bool(names_a & names_b),
                   x != y and (x <= y or y <= x), says_change, says_also,
                   slot is None and before is not None and whole is not None, count,
                   moved=whole is not None and whole.verb == "change",
                   marked=_marked(candidate, existing, before, whole, says_also),  # read through `change_said`, which weighs `scoped`
                   scoped=versions or slot in ("topic", None) and things, resumed=bool(_RESUMED.search(candidate)),
                   others=slots.others(candidate, existing) and not _acted(before, whole) or _two_named(candidate, whole, existing, before),
                   added=numbers_b < numbers_a,  # (where the fact said none: "… does great croissants." / "… closes at 3 pm.")
                   named_in_reason=bool(names_a - names_b) and not (names_a - names_b) & _names(_without_reason(candidate)))


# a clause giving a reason: "since" or "as" before a clause of its own ("since Elm Street is 40 min away now"), not a time
# ("since March", "as of May")
_REASON = re.compile(r"[,;]?\s*\b(?:since|as)\s+(?=[^,.;]{0,40}?\b(?:is|are|was|were|has|have|had|can|will|'s|'re)\b)", re.IGNORECASE)


def _without_reason(text: str) -> str:
    """The statement's main clause, without a reason given for it: a family assistant's "we switched pediatricians
    since Elm Street is 40 min away now." names no new value (it had retired "Sam goes to Little Acorns daycare.")."""
    main = slots.main_clause(text)
    m = _REASON.search(main)
    return main[:m.start()] if m and m.start() > 0 else main


def _heard_in_one(c: Candidate, target: Fact) -> bool:
    """Whether the candidate comes from a message `target` was heard in (or either names none): two turns stamped with
    one moment are two messages, and the later still supersedes (a test's frozen clock had made it a revision)."""
    kind, ref = parse_source(c.source)
    heard = {a.source for a in target.attestations if a.source_type == "event"}
    return kind != "event" or not heard or ref in heard


def _names_its_old_value(candidate: str, existing: str) -> bool:
    """Whether a change names, as the value it leaves ("from zod", "instead of Elena"), a value `existing` says — not
    what `existing` is said of ("zod is 13.2kB gz." stays true of zod after the move)."""
    slot, before = slots.parse(candidate), slots.parse(existing)
    if slot is None or before is None or not slot.old_value or not slots.mentions(slot.old_value, existing) or before.additive:
        return False  # ("At home I use Firefox too." is no fact "I switched from Firefox to Chrome at work." ends: review)
    subject = slots.clean(existing)[0].split()[:1]
    if subject and slots.mentions(slot.old_value, subject[0]):
        return False
    # what moved, when the change names it: "We moved the API from Heroku to Fly.io." ends no "The marketing site is hosted
    # on Heroku." (review); with nothing named ("we move from zod to valibot"), what the change's holder said of it
    moved = slots.content(slot.attribute)
    return slots.mentions(moved, existing) if moved else before.holder in ("", slot.holder)


def _acted(before: slots.Slot | None, whole: slots.Slot | None) -> bool:
    """One of the two is a change made by someone to another's thing: "doctor lowered the sertraline to 75mg" is said of
    my dose, not of the doctor (it had been another person's, and "I take sertraline 100mg" stayed current beside it)."""
    return any(s is not None and s.actor for s in (before, whole))


_NO_SUBJECT_NAMES = frozenset(["finally", "again", "suddenly", "apparently", "basically", "honestly", "luckily", "sadly"])


def _subject_named(text: str, slot: Any) -> str:
    """The name a statement opens with as its subject, before its verb (`local._NAME_FIRST`: "Tomás lives in Sintra.",
    "Jake moved to Porto."), folded; "" for none, or when the name is the value said ("Priya leads the project.")."""
    m = local._NAME_FIRST.match(fold(text).lstrip()) or _FULL_NAME_FIRST.match(fold(text).lstrip())
    name = m.group(1).lower() if m else ""
    if not name or local._opener(name) or name in STOP_WORDS or name in _NO_SUBJECT_NAMES \
            or slot is not None and set(name.split()) <= set(slot.value):
        return ""
    return name


# a first and last name opening a statement, before its verb or as its label ("Gabriel Souza now lives in Porto.",
# "Tomás Pereira — Lisbon too, backend in Go": a recruiter's notes, each of one candidate)
_FULL_NAME_FIRST = re.compile(rf"([{local._UPPER}][^\W_]+\s+[{local._UPPER}][^\W_]+)(?=\s*[—–:]\s|\s+(?:{local.NAME_VERBS})\b)")


def _two_named(candidate: str, whole: Any, existing: str, before: Any) -> bool:
    """Two statements of two people or things each opens with by name, neither naming the other's ("Tomás lives in
    Sintra." / "Jake moved to Porto.": a friend's move had retired a brother's home)."""
    a, b = _subject_named(candidate, whole), _subject_named(existing, before)
    return bool(a and b and a != b) and a not in fold(existing).lower() and b not in fold(candidate).lower()


_FACT_ID = re.compile(r"fct_\w+")
_RESUMED = re.compile(r"\b(?:again|back (?:on|to|in(?:to)?)|resumed|restarted)\b", re.IGNORECASE)

# what a statement holds for, by a version: "for Llama 2", "For Python 3.11, …", "On Ubuntu 22.04 install …" (a sentence's
# opening "on", "in", "with" or "under"; elsewhere "on Node 18" is what something runs, a value)
_SCOPE = re.compile(r"(?:\b[Ff]or|^\s*(?:[Ii]n|[Oo]n|[Ww]ith|[Uu]nder))\s+(?:the\s+)?(?:[A-Z][\w.+#-]*\s+){1,2}v?(\d+(?:\.\d+)*)\b")


# a statement of one day or one time ("The standup is off today", "I'm working from home today", "just this once"): an
# exception to what holds, not a change of it (it retired the standup's time for good)
_FOR_ONCE = re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening)|just this (?:once|time|week)|for today|for tonight|"
                       r"except (?:this|next|on|for|today|tomorrow)\b|"  # "PE is on Friday afternoons, except this week it's on Thursday"
                       r"just for once\b|(?:just )?for (?:this|the|one) (?:(?:first|last|next|debug|test|\w+ing) )?(?:run|night|day|trip|time|week|session|"
                       r"sprint|release|meeting|demo|test|weekend|visit|flight|build)\b)", re.IGNORECASE)
_FROM_NOW = re.compile(r"\b(?:(?:from|starting|as of|since|beginning) (?:now|today|tonight|this (?:morning|afternoon|evening|week))|"
                       r"going forward|for good)\b", re.IGNORECASE)


def _for_once(candidate: str, existing: str) -> bool:
    """The later statement holds for one day or one time, the earlier one for good."""
    return bool(_FOR_ONCE.search(candidate)) and not _FOR_ONCE.search(existing) and not _FROM_NOW.search(candidate)


def _scoped(candidate: str, existing: str) -> bool:
    """Each statement holds for a version of its own ("Use [INST] for Llama 2." / "For Llama 3 use
    <|begin_of_text|> instead."): two things, each with its value, not one value that changed."""
    a, b = ({m.group(1) for m in _SCOPE.finditer(text)} for text in (candidate, existing))
    return bool(a) and bool(b) and a != b


# as `tokens` gives them: stemmed ("minutes" is "minut", "minute" is "minute"), kilos and pounds already kg and lb (ALIASES)
_UNITS_OF_MEASURE = frozenset(slots.stem(w) for w in re.findall(r"\w+", """second seconds minute minutes hour hours day days week weeks
    month months year years time times percent dollar dollars euro euros pound cent cents mile miles km meter meters metre metres kg lb
    gram grams gb mb tb k old am pm per"""))
_NOT_COUNTED = frozenset(["off", "out", "more", "less", "fewer", "other", "times", "each", "every", "into", "onto", "from", "with"])


def _counted(words: list[str], number: set[str]) -> str | None:
    """The thing a statement's one number counts ("6 engineers": engineer), or None: not a
    measure ("30 years old", "$49 a month" are values of many things)."""
    i = next((i for i, w in enumerate(words) if w in number), None)
    if i is None or not words[i].isdigit() or i + 1 >= len(words):  # "7:30", "20%": a time, a share
        return None
    thing = words[i + 1]
    if not thing.isalpha() or len(thing) < 3 or thing in _UNITS_OF_MEASURE or thing in _NOT_COUNTED:
        return None  # "35 minutes", "$4,500 per month", "10% off"
    return thing


def _numbers_of_two_things(a: list[str], b: list[str], number_a: set[str], number_b: set[str],
                           before: slots.Slot | None, whole: slots.Slot | None) -> bool:
    """One holder does one thing to two things, each with its number the other statement does not name: "Frank takes
    atorvastatin 20 mg at night." / "Frank takes amlodipine 5 mg once daily." are two drugs, each with its dose (the
    amlodipine had retired the atorvastatin); "Node 18" / "Node 20", "6 engineers" / "down to 4 engineers" name one thing,
    and "My daily step goal is 8,000." / "I raised my step target to 10k a day." one thing in other words (no one verb)."""
    if before is None or whole is None or before.verb != whole.verb or not slots.same_holder(before, whole):
        return False
    return all(bool(own := _said_of(words, number)) and not own & set(other)
               for words, number, other in ((a, number_a, b), (b, number_b, a)))


def _said_of(words: list[str], number: set[str]) -> set[str]:
    """The words next to a statement's number, across its units ("atorvastatin 20 mg at night": atorvastatin), that name
    a thing: not a unit, a preposition nor a count's word ("for", "off")."""
    i = next((i for i, w in enumerate(words) if w in number), None)
    if i is None:
        return set()
    after = next((w for w in words[i + 1:] if not _a_unit(w)), None)
    return {w for w in (words[i - 1] if i else None, after) if w is not None and _a_thing(w)}


def _a_unit(word: str) -> bool:
    return word in _UNITS_OF_MEASURE or bool(slots.QUANTITY.fullmatch("1" + word))


def _a_thing(word: str) -> bool:
    return word.isalpha() and len(word) >= 3 and word not in _NOT_COUNTED and word not in slots._PREPS and not _a_unit(word)


def _one_each(pairs: list[tuple[str, str]], a: list[str], b: list[str]) -> bool:
    """One word of a pair in one statement and the other in the other ("begins" / "ends")."""
    return any((x in a) != (x in b) and (y in a) != (y in b) and (x in a) != (y in a) for x, y in pairs)


def _marked(candidate: str, existing: str, before: slots.Slot | None, whole: slots.Slot | None, also: bool) -> bool:
    """Whether the candidate says that it replaces what held, as the marker rule (`judge`)
    reads it: by an adverb of its own (`slots.change_adverb`) or a verb of change other than
    "went"; not by "instead of X" (the slot reading names X), not with "also"; both
    statements at most CHANGE_WORDS words; not one attribute of two holders ("my dog" / "my
    neighbour's dog"); and the older one no happening of its own time ("We went to Lisbon in
    May." is not undone by "We're in Porto now.")."""
    said = whole is not None and whole.verb == "change" and not _WENT.search(candidate) or bool(slots.change_adverb(candidate))
    if not said or also or slots.said_instead(candidate) or max(len(candidate.split()), len(existing.split())) > CHANGE_WORDS:
        return False
    if _stops_another(candidate, existing):
        return False
    if before is not None and whole is not None and not slots.same_holder(before, whole) and slots.same_attribute(before, whole):
        return False
    label = _LABEL.match(candidate)  # the name it brings labels what it speaks of, not a new value: "On Lisbon: the trip
    if label and (new := _names(candidate) - _names(existing)) and all(  # moved …" moved no Oslo flight
            re.search(rf"\b{re.escape(n)}\b", label.group(1), re.IGNORECASE) for n in new):
        return False
    return not (_HAPPENED.search(existing) and when.resolve(existing, when.ANY_DAY))


_LABEL = re.compile(r"^\s*(?:(?:on|re|about|regarding|as for|for)\s+)?([^:\n]{1,40}?)\s*:\s", re.IGNORECASE)  # "On Lisbon: …"
# what a change says it ends ("stopping lisinopril", "replacing the Gull's Lament", "switched from Jenkins")
_STOPS = re.compile(r"\b(?:stop(?:ping|ped|s)?|drop(?:ping|ped|s)?|replac(?:ing|ed|es|e)|discontinu(?:ing|ed|es|e)|"
                    r"switch(?:ing|ed)? from|com(?:ing|e) off|renam(?:ing|ed|es|e)|"
                    # ("… joins as co-author and takes over the eval harness from Mei" ends Mei's harness, not her authorship)
                    r"(?:takes|took|taking|take|taken) over)\s+(?:(?:the|his|her|their|my|our)\s+)?"
                    r"(?P<old>[^\W\d_][\w'-]{2,})", re.IGNORECASE)


def _stops_another(candidate: str, existing: str) -> bool:
    """The change says what it ends, and the earlier statement does not name it: "stopping lisinopril today, starting
    losartan 25mg once a day instead" is no update of "he upped the metoprolol to 50mg" (its "instead" had retired it)."""
    said = {w.removesuffix("'s") for w in tokens(existing)}
    gone = [w.removesuffix("'s") for m in _STOPS.finditer(candidate) for w in tokens(m.group("old"))]
    return bool(gone) and not any(w in said for w in gone) and not any(w in slots.PRONOUNS or w in ("it", "that", "this") for w in gone)
# a thing said to have been ended, by the word after the verb ("she stopped the lisinopril", "discontinued metformin")
_ENDED = re.compile(r"\b(?:stopped|stopping|discontinu(?:ed|ing)|came off|coming off|quit)\s+(?:(?:the|his|her|their|my|our)\s+)?"
                    r"(?P<old>[^\W\d_][\w'-]{2,})", re.IGNORECASE)


def _ends_what_it_names(candidate: str, existing: str) -> bool:
    """The candidate says it ended the thing the earlier statement holds of, naming it, in a clause that does not go on
    to something else ("stopping lisinopril, starting losartan instead" ends lisinopril; "stopped the car at …" names a
    thing the fact is no holding of): the thing named is the fact's subject or value, and the fact ends nothing itself."""
    before = slots.parse(existing)
    if before is None or _ENDED.search(existing) or _ENDS.search(existing) or before.negated:
        return False
    held = set(tokens(" ".join([before.holder, *before.attribute, *before.value])))
    # (a doing ended is no thing named: "quit drinking altogether" of "… serve some refreshing drinks", "stopped using
    # bf16" of "We stop using bf16 …", which says the ending itself)
    return any(set(tokens(m.group("old"))) <= held and m.group("old").lower() not in slots.PRONOUNS
               and not m.group("old").lower().endswith("ing") for m in _ENDED.finditer(candidate))


_ENDS = re.compile(r"\b(?:stop|stops|quit|quits|discontinue|discontinues)\b", re.IGNORECASE)


_WENT = re.compile(r"\bwent\b", re.IGNORECASE)  # "I went to Lisbon" / "I went to Porto": two trips, no change said
_HAPPENED = re.compile(r"\b(?:went|visited|travelled|traveled|flew|attended|was|were)\b", re.IGNORECASE)  # past, with its time
_ENUMERATOR = re.compile(r"^\s*(?:\(\d{1,2}\)|\d{1,2}[.)](?!\d))\s*")


def _values(text: str, words: list[str]) -> set[str]:
    """The numbers a statement says as values: not those of when it happened ("about three
    weeks ago", "on June 8th", "in 2020"), which one statement may say and its paraphrase leave out."""
    timed = {w for span in when.resolve(text, when.ANY_DAY) for w in tokens(span.text)}
    return {w for w in words if w[0].isdigit() and w not in timed}


_CALENDAR = frozenset(["iso", "day_month", "month_day", "month_year", "year", "the_nth"])  # `when`'s readings of a date said


def _dates(text: str) -> set[str]:
    """The numbers of the calendar dates a statement names ("on November 12", "the 14th", "in 2019"); a relative time
    ("yesterday", "3 weeks ago") says nothing two statements said on different days could compare."""
    return {w for span in when.resolve(text, when.ANY_DAY) if span.kind in _CALENDAR for w in tokens(span.text) if w[0].isdigit()}


_SPAN = re.compile(r"\d+(?:\.\d+)?(?:s|d|mo)")  # a span of time as `_durations` writes it


def _how_long(words: list[str], other: list[str]) -> set[str]:
    """How long something has held, said by one statement alone ("… for 6 weeks now, and it's been a blast" / "… to help
    with my writing"): no value the other changed. Where both say a span, each is a value ("kept for 30 days" / "for 90")."""
    if any(_SPAN.fullmatch(w) for w in other):
        return set()
    return {w for before, w in pairwise(words) if before == "for" and _SPAN.fullmatch(w)}


@lru_cache(maxsize=256)
def _read(candidate: str) -> tuple[slots.Slot | None, tuple[tuple[str, frozenset[str], slots.Slot | None], ...], bool, bool]:
    """The candidate's slot; each of its clauses when it has several (text, words, slot);
    whether it says a change, and an addition (the slot's markers, or the sentence's when it
    has no slot): read once, not once per neighbour it is compared with (slots are only
    read, never changed)."""
    parts = slots.clauses(candidate)
    whole = slots.parse(candidate)
    notes = slots.clean(candidate)[1] if whole is None else {"change": whole.change, "additive": whole.additive}
    clause_slots = tuple((p, frozenset(tokens(p)), slots.parse(p)) for p in parts) if len(parts) > 1 else ()
    return whole, clause_slots, bool(notes["change"]), bool(notes["additive"])


def judge(s: Signals, candidate_later: bool) -> str:
    """The gate: confirm | supersede | dispute | related | new for one pair."""
    if s.exact:
        return "confirm"
    sem = s.semantic
    if s.others:  # "My sister lives in Braga." / "I live in Braga.": one value of two people, neither the same nor an update
        return "related" if s.similarity >= RELATED or s.slot is not None else "new"
    if s.slot in ("changed", "negated"):  # one slot, another value: whatever the word overlap
        return "supersede" if candidate_later else "dispute"
    if s.slot == "beside":
        return "related"
    if s.slot == "same" and not {"negation", "number", "numbers", "stage", "date", "feeling"} & set(s.differs) and (sem is None or sem >= SLOT_CONFIRM):
        return "confirm"  # one slot, one value, said differently
    if not s.differs:
        if sem is not None and sem > CONFIRM and s.lexical >= 0.6 and s.order >= 0.3:
            return "confirm"
        if sem is not None and sem >= 0.85 and s.lexical >= 0.7 and s.order >= 0.5:
            return "confirm"  # two strong signals agreeing, neither alone past its bar
        if s.lexical > CONFIRM and (sem is None or sem >= 0.8):
            return "confirm"
        if sem is not None and sem >= PARAPHRASE and s.words >= 0.5 and not (s.words == 1.0 and s.order < 0.5):
            return "confirm"  # said in other words: nothing differs, the vectors agree, half the words too (not a permutation)
    if s.swap and s.differs == ["number"] and s.rest > 0 and not s.scoped and (sem is not None and sem >= SWAP or s.count and (sem is None or sem >= 0.5)
                                                                   or s.moved and sem is not None and sem >= 0.5):
        # "We're on Node 18" / "Production runs Node 20": one number swapped; "… upgraded the services to Node 22", said by its verb
        # (with the vectors agreeing: in chat, "now" and "for about 9 weeks now" say nothing changed)
        return "supersede" if candidate_later else "dispute"
    if s.differs == ["feeling"] and (s.says_change or s.resumed) and sem is not None and sem >= FLIP and s.words > 0 and not s.scoped:
        # "I hate oatmeal." / "Actually I like oatmeal now.": the feeling of one thing turned, said as a change
        return "supersede" if candidate_later else "dispute"
    if "date" in s.differs and (s.moved or s.says_change) and sem is not None and sem >= DATE_MOVED and s.words >= 0.3 and not s.scoped \
            and not {"negation", "numbers", "opposite", "stage", "feeling"} & set(s.differs):
        # "My flight to Tokyo is on October 3." / "The airline moved my flight to Tokyo to October 4.": a date said to have moved
        return "supersede" if candidate_later else "dispute"
    value_change = bool(set(s.differs) - {"date", "feeling"}) and not {"name", "numbers", "opposite"} & set(s.differs) \
        and not (s.differs == ["number"] and s.added and not s.says_change)  # a number added to those that hold is no change of them
    if value_change and s.rest >= REST_AGREES and (sem is None or sem >= 0.5) and not s.apart and not s.scoped:
        return "supersede" if candidate_later else "dispute"
    if "negation" in s.differs and (s.says_change or s.resumed) and sem is not None and sem >= FLIP and s.words > 0 and not s.scoped \
            and not {"name", "numbers", "opposite"} & set(s.differs):
        # "I stopped drinking coffee." / "I started drinking coffee again.", "I love sushi." / "I don't like sushi anymore.":
        # what held is denied, or what was denied holds again, said as a change, of the same thing (the vectors close)
        return "supersede" if candidate_later else "dispute"
    if s.change_said and not {"negation", "opposite"} & set(s.differs) and sem is not None and sem >= CHANGE_SAID:
        # "Our docs site is hosted on Netlify." / "The documentation now lives on Cloudflare Pages.": a change said, of a value
        # the words name, close in topic, in two short statements (chat's long sentences say "now" of anything)
        return "supersede" if candidate_later else "dispute"
    if s.similarity >= RELATED or s.slot == "topic" or s.scoped and sem is not None and sem >= SCOPED_RELATED:
        return "related"  # (an exception for one day or one run, a value of another version: beside what holds)
    return "new"


def decide(s: Signals, candidate_later: bool, candidate: str, existing: str, model: pairs.PairModel | None) -> tuple[str, str]:
    """The gate's rules, then (with an embedder) the pair model for what they left at
    related or new: (action, why), `why` empty when the rules decided."""
    typed, candidate, existing = candidate, cased(candidate, existing), cased(existing, candidate)
    action = judge(s, candidate_later)
    if action in ("supersede", "dispute") and _hedged(candidate) and not _hedged(existing):
        # "Parents' evening might be moved to 21 November.": a change that may come retires nothing yet
        return "related", "a change said with a hedge: listed for review"
    if action == "confirm" and not s.exact and _for_once(candidate, existing):
        return "related", "an exception for one time beside what holds: listed for review"  # ("…, except this week it's on Thursday")
    if action == "confirm" and not s.exact and s.slot == "topic" and _two_slots_one_value(candidate, existing):
        # "Our bassist lives in Glasgow." / "Our guitarist lives in Glasgow.": one value of two slots, however alike (a
        # confirmation had hidden the guitarist for good)
        return "related", "another slot of the same subject: listed for review"
    if action == "confirm" and not s.exact and s.says_change and (_names(candidate) - _names(existing) or _unnamed(typed, existing)):
        # "I'm reading Piranesi." / "I finished Piranesi, and now I'm reading The Overstory.": a change said, naming what the
        # fact does not, is no restatement of it (its confirmation had hidden the new book for good)
        return "related", "says a change and names what the fact does not: listed for review"
    if model is None or s.semantic is None or action not in ("related", "new"):
        return action, ""
    learned = model.decide(s, action, candidate, existing)
    if learned == action:
        return action, ""
    what = {"confirm": "the same statement in other words", "related": "about the same subject: listed for review",
            "new": "not the same subject"}[learned]
    return learned, f"{what} (read by the pair model)"


def _unnamed(candidate: str, existing: str) -> bool:
    """Typed in lower case (no capital to tell a name by: "carpool is now mon grace, tue will, … fri mark" of "… fri bill"),
    the candidate says a word the fact does not, beyond the little ones and its marks of change."""
    return typed_lower(candidate) and bool(set(tokens(slots.clean(candidate)[0])) - set(tokens(existing)) - STOP_WORDS)


def _two_slots_one_value(candidate: str, existing: str) -> bool:
    """One value said of two people by their roles, each one word naming a doer ("Our bassist lives in Glasgow." / "Our
    guitarist lives in Glasgow."), by one verb of one holder; not "My GP is Dr. Patel." / "My doctor is Dr. Patel." nor
    "My wife …" / "My partner …" (one of the two no doer's word: likely one person named two ways)."""
    x, y = slots.parse(candidate), slots.parse(existing)
    if x is None or y is None:
        return False
    a, b = slots.content(x.attribute), slots.content(y.attribute)
    return (len(a) == len(b) == 1 and a != b and all(_DOER.search(w) for w in (*a, *b)) and x.verb == y.verb
            and x.holder == y.holder and slots.same_value(x, y))


_DOER = re.compile(r"(?:ist|er|or|ian|ant|ent)$")  # a word naming who does a thing: bassist, drummer, editor, librarian


# a change that may come, not one that came ("might be moved", "we could switch", "thinking about switching"); "may" before
# a day is the month ("moved to May 6")
_HEDGED = re.compile(r"\b(?:might|could|(?-i:may)(?=\s+[a-z])|probably|possibly|maybe|perhaps|thinking (?:about|of)|considering|"
                     r"not sure (?:if|whether))\b", re.IGNORECASE)  # ("may" the verb, not the month: "I quit smoking in May.")
# a clause of purpose or result, whose modal says nothing of the change ("… at 10:30 now so the US team could join")
_PURPOSE = re.compile(r"[,;]?\s+(?:so(?: that)?|so as to|in order to|because|since|as)\s+[^.;]*[.!]?\s*$", re.IGNORECASE)


def _hedged(text: str) -> bool:
    """Whether a statement says a change that may come, not one that came: a modal or a hedge outside a clause of
    purpose ("might be moved", "will probably move", "is thinking about moving"; not "… now so the team could join")."""
    return bool(_HEDGED.search(_PURPOSE.sub("", text)))


def _update_reason(text: str, s: Signals | None, old: str = "") -> str:
    if s is not None and s.slot in ("changed", "negated"):
        if old and slots.retired(text, old):
            return "what the fact names is said to be gone: an update"
        slot = slots.parse(text)
        what = f" ({' '.join(slot.attribute)})" if slot is not None and slot.attribute else ""
        return f"the same slot{what} " + ("with another value: an update" if s.slot == "changed" else "denied or affirmed now: an update")
    if s is not None and s.change_said:
        said = f"“{adverb}”" if (adverb := slots.change_adverb(text)) else "by its verb"
        return f"says it changed ({said}), with {'another name' if 'name' in s.differs else 'one number for another'}: an update"
    return f"an update of the same statement ({', '.join(s.differs) if s is not None and s.differs else 'value'} changed)"


def slot_terms(text: str) -> list[str]:
    """Words that find earlier statements of the same slot when the candidate shares no
    word with them ("I moved to Munich" → live, home, …; "the Q3 budget was raised" → budget)."""
    slot = slots.parse(text)
    if slot is None:
        return []
    words = [w for w in slot.attribute if w not in slots.DETERMINERS and w.isalpha() and len(w) > 2]
    words += [w for g in slots.SYNONYMS if set(map(slots.stem, words)) & g for w in sorted(g)]
    words += [w for w in slot.old_value if w.isalnum()]
    # a value of a kind that holds one at a time finds the others of its kind ("I'm vegan now." shares no word with "I'm
    # going vegetarian starting today.", and without an embedder the two had stayed current)
    words += [w for kind in slots.EXCLUSIVE if set(slot.value) & kind for w in sorted(kind)]
    return list(dict.fromkeys(words))[:12]


RANK = {"confirm": 5, "supersede": 4, "dispute": 3, "related": 2, "new": 1}


# -- the curator ---------------------------------------------------------------
def _same_speaker(a: dict[str, Any] | None, b: dict[str, Any] | None, a_text: str = "", b_text: str = "") -> bool:
    """Whether two statements may be one: not when each names who said it, they differ, and either speaks of
    its speaker ("I live in Boston" from Caroline is no news of Melanie's "I live in Denver"); a statement of
    neither speaker is a team's ("The staging DB is on port 5433." from Amy, "… moved to port 5434." from Ben:
    a teammate could never correct it)."""
    x, y = (speaker_in(m) for m in (a, b))
    if not x or not y or x.casefold() == y.casefold():
        return True
    return not (_PERSONAL.search(a_text) or _PERSONAL.search(b_text))


_PERSONAL = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'll|we'd|us|our|ours|you|your|yours)\b",
                       re.IGNORECASE)


def _about(correction: str, fact: str, cosine: float | None = None) -> bool:
    """Whether a correction speaks of the fact at all: one slot (or a topic of it), a name shared, or — with the vectors
    (`cosine`) — as close as a change said must be (`CHANGE_SAID`), else a fifth of their words shared. (By words alone,
    "now i need to find a flat in berlin, any tips?" spoke of "any good bouldering gyms around?" and ended it, and "my
    physio says i can drop to every other wednesday now" did not speak of "the physio moved my appointment to
    thursdays …": a life-assistant bot's builder.)"""
    s = compare(correction, fact, None)
    if cosine is not None and (beyond_model(correction) or beyond_model(fact)):
        cosine = None  # the English model puts any two Japanese (or Russian, or emoji) texts 0.4 apart: their words decide
    return s.slot is not None or s.named or (cosine >= CHANGE_SAID if cosine is not None else s.similarity >= 0.2)


def _retires(correction: str, fact: str, cosine: float | None = None) -> bool:
    """Whether a model's correction may end the fact it names: it speaks of it (`_about`), and the slots do not read
    another attribute of one person or thing, a value held beside it, or two people or things. A name shared is whose
    fact, not which: "Gabriel Souza now lives in Porto" had ended "Gabriel Souza knows Rust well", and a correction of
    Ana Reyes's offer "Ana Ruiz moved to Berlin" (a recruiter's thirty candidates)."""
    s = compare(correction, fact, None)
    if s.slot in ("topic", "beside") or s.apart or s.others:
        return False
    return _about(correction, fact, cosine)


def _sibling(c: Candidate, f: Fact) -> bool:
    """A fact only the candidate's own message says, in other words: another sentence of one message is beside it, never
    its earlier value ("… the appointment is with Dr. Ruiz, not Ramos. Ramos was the receptionist." had retired its own
    second sentence, and the earlier appointment stayed; two evaluators found it), unless it is the one a correction names
    or the same slot with another value."""
    kind, ref = parse_source(c.source)
    if kind != "event" or isinstance(c.corrects, str) and normalise(c.corrects) == normalise(f.text):
        return False  # (a person's or a document's facts are many statements of one source; a correction names its own)
    if {(a.source_type, str(a.source).removeprefix("event:")) for a in f.attestations} != {("event", ref)} \
            or normalise(f.text) == normalise(c.text):
        return False
    # one slot said twice with two values: the message corrects itself ("I live in Lisbon. Sorry, I live in Porto.")
    return slots.relation(slots.parse(f.text), slots.parse(c.text), f.text, c.text) not in ("changed", "negated")


class Curator:
    """`memory.facts.curator.write(candidate)`: dedupe, link, correct, or add."""

    def __init__(self, facts: Any) -> None:  # `operations.Facts`, which builds its curator
        self.facts = facts
        self._pending_known: bool | None = None
        self.use_llm = True  # off while draining candidates the LLM could not decide
        self.learned: bool = facts.pair_model  # the pair model reads again what the rules leave at related or new
        self.counts: Counter[str] = Counter()  # llm_decided, llm_parked, refused

    def write(self, candidate: Any) -> Decision:
        """Curate one candidate (a text, a dict or a `Candidate`); see the module doc."""
        c = Candidate.of(candidate)
        self._check(c)
        try:
            self._cite(c)  # a short id resolves through the store: unreachable, it is parked as given
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

    def _cite(self, c: Candidate) -> Candidate:
        """The candidate with its source as stored: a short id as `event:<message id>`; with no time of its own, it holds
        from the time its message names, or was said (a support bot's `memory_remember` of each customer's plan, citing
        the message, had every plan dated the day the facts were written: "Free", "Pro", "Enterprise", one day)."""
        c.source = self.facts.cited(c.source)
        c.valid_from, c.at = self.facts.heard(c.text, c.source, c.valid_from, c.at)
        return c

    def neighbours(self, c: Candidate, named: bool = False) -> list[tuple[Fact, Signals]]:
        """Open facts of the candidate's vault near it, each with the pair's signals (`named`: for a correction's quoted
        text, which says whose fact it is its own way, `_named`)."""
        from ..search import query_terms

        facts, store = self.facts, self.facts.store
        vault = c.vault or "facts"
        if vault not in {v.name for v in store.fact_vaults()}:
            return []
        # the open facts only, before the limit: after twenty versions of one fact, its retired versions filled the ten
        # places and the current one was not among them (a new user's: the 21st port became a second current fact)
        q = FactQuery(vaults=[vault], believed=True, open_after=facts.now())
        embedder = facts.embedder
        vector = None
        if embedder is not None:
            try:
                vector = embedder.checked([c.text])[0]
            except PalimpsestError as exc:
                log.warning("curating without the embedder: %s", exc)
                embedder = None
        limit = NEIGHBOURS
        while True:
            ids = [r.id for r in store.query_facts(replace(q, norm=normalise(c.text), limit=limit))]
            ids += [i for i, _ in store.fact_keyword_search(query_terms(c.text), q, limit, False)]
            ids += [i for i, _ in store.fact_keyword_search(slot_terms(c.text), q, limit, False)]
            cosines: dict[str, float] = dict(store.fact_vector_search(embedder.model_id, vector, q, limit)) if vector is not None else {}
            ids += list(cosines)
            found = [f for f in facts._views(store.get_facts(list(dict.fromkeys(ids))))
                     if f.status in ("current", "future") and _same_speaker(c.metadata, f.metadata, c.text, f.text)
                     and not _sibling(c, f)]
            views = self._same_owner(c, found, named)
            # others' facts took places among the nearest: look further, or the candidate's own may not be among them (30
            # users' "I live in Berlin.", and a user's "I moved to Lisbon now." found only the others': a second current fact)
            if len(views) == len(found) or len(dict.fromkeys(ids)) < limit or limit >= NEIGHBOURS * OWNERS_WIDEN:
                break
            limit *= 8
        if embedder is not None and vector is not None:
            cosines.update(self._cosines(embedder, vector, [f for f in views if f.id not in cosines]))
        return [(f, compare(c.text, f.text, cosines.get(f.id, 0.0) if embedder is not None else None)) for f in views]

    def _same_owner(self, c: Candidate, views: list[Fact], named: bool = False) -> list[Fact]:
        """The facts that may be the candidate's slot: not those heard only in sessions of
        another channel, user or project (`Facts.owners`) than the candidate's — Bob's "My door code is
        1234." is no news of Alice's "My door code is 4711." A fact or candidate heard in no
        session, or in sessions that do not say one of these, is compared as before."""
        if not views:
            return views
        kind, ref = parse_source(c.source)
        mine = self._marks([ref]).get(ref) if kind == "event" else None
        heard = {f.id: [a.source for a in f.attestations if a.source_type == "event"][:20] for f in views}
        marks = self._marks([e for events in heard.values() for e in events])

        # a person's own statement ("I live in Berlin") is theirs in every repository: `project:` parts only the others
        keys = [k for k in self.facts.owners if not (k == "project" and _FIRST_PERSON_SINGULAR.search(c.text))]
        if not mine and named:
            return views
        if not mine:
            # said by no one the store can name (written without a source, a visitor's session): beside the facts of
            # several owners it is none of theirs to change (a visitor's "My account PIN is 8080 now." had retired
            # Alice's PIN); beside one owner's, or none's, it is compared as before
            owner = {f.id: frozenset((k, v) for e in heard[f.id] for k, values in marks.get(e, {}).items() if k in keys for v in values)
                     for f in views}
            return [f for f in views if not owner[f.id]] if len({o for o in owner.values() if o}) > 1 else views

        def apart(events: list[str]) -> bool:
            theirs: dict[str, set[str]] = {}
            for e in events:
                for key, values in marks.get(e, {}).items():
                    theirs.setdefault(key, set()).update(values)
            return any(mine.get(k) and theirs.get(k) and not mine[k] & theirs[k] for k in keys)

        return [f for f in views if not apart(heard[f.id])]

    def owned(self, text: str, source: str, facts: list[Fact]) -> list[Fact]:
        """Of `facts`, those `text`, heard in message `source`, may speak of: not another channel's, user's or project's
        (`_same_owner`). The distiller shows a model only these: it had shown one end user's phone number, address and
        order number in another's prompt, and the model's correction naming one retired it (found by a bot builder)."""
        return self._same_owner(Candidate(text=text, source=source), facts)

    def _marks(self, events: list[str]) -> dict[str, dict[str, set[str]]]:
        """Per message id, the owner marks of its session (`Facts.owners`): {"channel": {...}, "user": {...}, …}."""
        store, owners = self.facts.store, self.facts.owners
        sessions = {m.id: m.session for m in store.get_messages(list(dict.fromkeys(events)))}
        per_session: dict[str, dict[str, set[str]]] = {}
        for sid in set(sessions.values()):
            row = store.get_session(sid)
            per_session[sid] = {key: {getattr(row, key)} for key in ("agent", "channel") if key in owners and row is not None and getattr(row, key)}
        for sid, tags in store.session_tag_map(sorted(per_session)).items():
            for tag in tags:
                key, _, value = tag.partition(":")
                if key == "project":  # one repository's sessions stored before projects were named `owner/name` (`api`)
                    value = value.rstrip("/").rsplit("/", 1)[-1]  # are its own (found in review)
                if key in owners and key not in ("agent", "channel"):
                    per_session[sid].setdefault(key, set()).add(value)
        return {mid: per_session[sid] for mid, sid in sessions.items() if per_session[sid]}

    @staticmethod
    def _cosines(embedder: Any, vector: Any, facts: list[Fact]) -> dict[str, float]:
        """Cosines with facts that have no vector yet (written a moment ago, or before the
        embedder was set up): the curator never waits for a background job."""
        if not facts:
            return {}
        try:
            vectors = embedder.checked([f.text for f in facts])
        except PalimpsestError as exc:
            log.warning("no vectors for %d neighbours: %s", len(facts), exc)
            return {}
        return {f.id: float(vector @ v) for f, v in zip(facts, vectors)}

    def _cosine(self, a: str, b: str) -> float | None:
        """The two texts' cosine by the facts' embedder; None without one (or when it fails)."""
        embedder = self.facts.embedder
        if embedder is None:
            return None
        try:
            x, y = embedder.checked([a, b])
        except PalimpsestError as exc:
            log.warning("no vectors to compare a correction with the fact it names: %s", exc)
            return None
        return float(x @ y)

    def _curate(self, c: Candidate) -> Decision:
        # compare, then write: serialised per vault across every process on the store, or
        # two workers curating one statement at once would both find nothing and write it
        with self.facts.store.exclusive(f"curate:{c.vault or 'facts'}"):
            return self._curate_alone(c)

    def _curate_alone(self, c: Candidate) -> Decision:
        if self._from_instant_session(c):
            return Decision("skipped", reason="heard in an instant session: scratch is never promoted into facts")
        if c.corrects is None and (retracted := self._retracted_said_again(c)) is not None:
            self.counts["refused"] += 1
            self.facts.decisions.record(DOMAIN, "refused", key=_new_id("ref"), subject=retracted.id, content=c.text[:200],
                                        created_at=self.facts.now(), candidate=c.to_dict(), reason="says a retracted fact")
            return Decision("refused", None, retracted, None, f"{retracted.id} says this and was retracted: nothing written")
        if c.corrects is not None:
            return self._correct(c)
        return self._gate(c)

    def _retracted_said_again(self, c: Candidate) -> Fact | None:
        """A retracted fact a distilled statement says again: "it was never true" holds against the conversation that
        said it (a developer retracted "The staging db host is db-staging-2.internal.", and the next turn's "also the
        staging db host is db-staging-2.internal, put that in the README" made it current again, first in recall). Your
        own `facts write` is yours to make."""
        from ..search import query_terms

        if (c.metadata or {}).get("origin") != "distill":
            return None
        store = self.facts.store
        q = FactQuery(vaults=[c.vault or "facts"], limit=NEIGHBOURS)
        ids = [r.id for r in store.query_facts(replace(q, norm=normalise(c.text)))]
        ids += [i for i, _ in store.fact_keyword_search(query_terms(c.text), q, NEIGHBOURS, False)]
        retracted = [f for f in self.facts._views(store.get_facts(list(dict.fromkeys(ids)))) if f.status == "retracted"]
        return next((f for f in retracted if judge(compare(c.text, f.text, self._cosine(c.text, f.text)), True) == "confirm"), None)

    def _gate(self, c: Candidate, prefer: Fact | None = None) -> Decision:
        """The gate's decision for a candidate against its nearest open facts (`prefer`, a
        fact the candidate says it corrects, wins ties)."""
        start = c.valid_from or self.facts.now()
        llm = self.facts.llm if self.use_llm else None
        model = self._pair_model() if self.learned and llm is None else None  # with an LLM it settles the band the rules leave
        best: tuple[int, float, Fact, Signals, str, str] | None = None
        ended: list[Fact] = []  # the facts this change says it ends
        for fact, s in self.neighbours(c):
            action, why, s = self._decide(c, start, fact, s, model)
            key = (RANK[action], s.similarity + (1.0 if prefer is not None and fact.id == prefer.id else 0.0))
            if best is None or key > best[:2]:
                best = (key[0], key[1], fact, s, action, why)
            if action == "supersede" and s.slot == "changed" and _names_its_old_value(c.text, fact.text):
                ended.append(fact)
        if best is None or best[4] == "new":
            fact = self._write(c)
            return Decision("new", fact, best[2] if best else None, best[3] if best else None, (best[5] if best else "") or "no close fact")
        _, _, target, s, action, why = best
        if llm is not None and in_band(action, s.slot):
            return self._arbitrated(c, target, s, llm)
        decision = self._act(c, target, s, action, why)
        if decision.action == "supersede" and decision.fact is not None:
            self._also_ended(decision.fact, [f for f in ended if f.id != target.id])
        return decision

    def _also_ended(self, change: Fact, facts: list[Fact]) -> None:
        """Close the other facts a change names the old value of, where it holds from: "Decision: we move from zod to
        valibot" superseded "i lean zod" and left "Decision: add zod@3.23.8 …" current, first in the block for "which
        validation library do we use?" (a Claude Code user's). A fact supersedes one other; the rest end, journaled why."""
        for fact in facts:
            current = self.facts.get(fact.id)
            if current.status == "current" and current.valid_from < change.valid_from:
                self.facts.close(fact.id, at=change.valid_from, reason=f"ended by {change.id}, which changes what it says")

    def _decide(self, c: Candidate, start: str, fact: Fact, s: Signals, model: pairs.PairModel | None) -> tuple[str, str, Signals]:
        """The gate's decision for one pair, read from the side of the newer statement whichever was curated first:
        (action, why, the signals it rests on). A change is said by the newer one ("CI is GitHub Actions now." of "Our CI
        runs on Jenkins."); read from the older side it was related, and a chat's old passport, curated after the new one
        (its turn closed first), stayed current beside it. Older news that the newer would supersede is `outdated` (`_act`)."""
        if not self._said_before(c, start, fact):
            return *decide(s, start > fact.valid_from, c.text, fact.text, model), s
        newer = compare(fact.text, c.text, s.semantic)
        return *decide(newer, True, fact.text, c.text, model), newer

    def _pair_model(self) -> pairs.PairModel | None:
        """The shipped pair model; a file that cannot be read leaves the rules alone (logged once)."""
        try:
            return pairs.shipped()
        except (OSError, ValueError, KeyError) as exc:
            if self.learned:
                log.warning("the curator's pair model cannot be read (%s): its rules decide alone", exc)
            self.learned = False
            return None

    def _act(self, c: Candidate, target: Fact, s: Signals | None, action: str, why: str = "") -> Decision:
        if action == "confirm":
            fact = self.facts.confirm(target.id, source=c.source, at=c.at or c.valid_from)
            return Decision("confirm", fact, target, s, why or "the same statement heard again")
        if action in ("supersede", "dispute") and self._older(c, target, s is not None and (s.says_change or s.moved)):
            # older news of a slot a later fact already holds (imports out of order): it held until then
            fact = self._write(c)
            why = why or "said of a time before the fact that replaced it: written as held until then"
            self.facts.supersede(fact.id, by=target.id, reason=why) if target.supersedes is None \
                else self.facts.close(fact.id, at=target.valid_from, reason=why)
            return Decision("outdated", self.facts.get(fact.id), target, s, why)
        if action in ("supersede", "dispute") and self._said_together(c, target):
            # two values for one slot said at one moment ("I live in Lisbon. Sorry, Porto."): the later
            # said revises the earlier — one current fact, and the valid time stays the moment it was said (a change
            # naming its own earlier day, "we used to deploy with jenkins. update: we moved from Jenkins to GitHub Actions
            # yesterday", had been written as older news the "used to" replaced: the move was lost)
            fact = self.facts.revise(target.id, c.text, kind=c.kind, source=c.source)
            return Decision("revise", fact, target, s, why or "another value for the same slot said at the same moment: the later "
                            "said revises the earlier")
        if action in ("supersede", "dispute"):
            why = why or _update_reason(c.text, s, target.text)
            return Decision("supersede", self._supersede(c, target, why), target, s, why)
        fact = self._write(c)
        if action == "related":
            why = why or "close but not the same: listed for review"
            self.facts.relate(fact.id, target.id, reason=why)
            return Decision("related", self.facts.get(fact.id), target, s, why)
        return Decision("new", fact, target, s, why or "not the same subject")

    def _arbitrated(self, c: Candidate, target: Fact, s: Signals, llm: Any) -> Decision:
        from ..errors import Interrupted, LLMError

        said = c.valid_from or self.facts.now()
        try:
            verdict = arbiter.ask(llm, c.text, said, target)
        except Interrupted:  # the server stops: the job runs again after it, nothing is parked
            raise
        except LLMError as exc:  # InvalidReply is one: the reply itself is parked and counted by the client
            self.counts["llm_parked"] += 1
            return self._park(c, f"the LLM could not decide: {exc}", deterministic=True)
        arbiter.journal(self.facts, c.text, target, verdict, getattr(llm, "model", ""))
        self.counts["llm_decided"] += 1
        action = verdict["action"]
        if action in ("confirm", "supersede", "dispute") and (c.kind == "task") != (target.kind == "task"):
            # a to-do never replaces nor restates a fact (a model's verdict turned a fact into a task: found by a new user)
            return self._act(c, target, s, "related", f"the LLM said {action}, but a task and a fact are two things: kept both")
        return self._act(c, target, s, action, f"decided by the LLM (slot: {verdict['slot'] or '-'})")

    def _from_instant_session(self, c: Candidate) -> bool:
        kind, ref = parse_source(c.source)
        if kind != "event":
            return False
        found = self.facts.store.get_messages([ref])
        session = self.facts.store.get_session(found[0].session) if found else None
        return session is not None and session.kind == "instant"

    def _write(self, c: Candidate) -> Fact:
        return self.facts.write(c.text, vault=c.vault, kind=c.kind, entities=c.entities, salience=c.salience,
                                confidence=c.confidence, valid_from=c.valid_from, source=c.source, at=c.at, metadata=c.metadata or None)

    def _older(self, c: Candidate, target: Fact, change: bool = False) -> bool:
        """Whether the candidate speaks of a time before `target` held: it starts before it,
        and either it was said before `target` started too (an import out of order) or the
        time it names ends before then. "Actually I moved to Munich last month", said on 3
        December, starts on 1 November, before "I live in Berlin" said on 20 November — but
        "last month" runs to the 30th and it was said after: it is the news. So is a change
        said after the fact of a time shortly before it (`STALE_SAID`): "we moved to GitHub
        Actions yesterday", said after "Our CI runs on Jenkins" this morning."""
        start = c.valid_from or self.facts.now()
        if start >= target.valid_from:
            return False
        if self._said_before(c, start, target):
            return True
        if change and c.at is not None and c.at > _heard(target) and not local.named_certain(c.text, c.at, c.metadata):
            # the year of a month or a day said without one is a guess ("the next date I can get is in November", said on
            # 14 April, was read as the November gone by): it cannot put a change said after the fact before it
            return False
        end = local.named_end(c.text, c.at, c.metadata)
        if end is not None and change and end > iso(parse_time(target.valid_from) - STALE_SAID):
            return False
        return end is None or end <= target.valid_from

    def _said_together(self, c: Candidate, target: Fact) -> bool:
        """The candidate holds from the moment `target` does, or was said at that moment: one message's two values."""
        start = c.valid_from or self.facts.now()
        return start == target.valid_from or start < target.valid_from and c.at == target.valid_from

    @staticmethod
    def _said_before(c: Candidate, start: str, fact: Fact) -> bool:
        """The candidate holds from before `fact` and was said before it started too (an import out of order, a turn
        closed late): older news whatever the words say. Said at the moment it started (one message) is not before."""
        return start < fact.valid_from and (c.at is None or c.at < fact.valid_from)

    def _supersede(self, c: Candidate, target: Fact, why: str | None = None) -> Fact:
        if target.superseded_by:  # still current, its successor starting later ("we're moving on June 1"): what comes after that
            target = self._head(target)
        valid_from = c.valid_from
        if valid_from is None or valid_from <= target.valid_from:  # from when it was said, else now
            valid_from = c.at if c.at is not None and c.at > target.valid_from else None
        return self.facts.supersede(target.id, c.text, valid_from=valid_from, kind=c.kind,
                                    entities=c.entities or local.entities_of(c.text),  # its own: "I report to Aisha now" had Karen's
                                    salience=c.salience, confidence=c.confidence, source=c.source, at=c.at, metadata=c.metadata or None,
                                    reason=why)

    def _correct(self, c: Candidate) -> Decision:
        """An explicit correction ends what it names — a fact id, or the open fact closest
        to the text it quotes — and its text holds from then on. When an open fact already
        says that text, it is confirmed instead of written twice. Naming a retracted fact is
        refused (nothing written); naming no known fact, the gate decides as for any statement."""
        assert c.corrects is not None
        target = self._named(c.corrects, c)
        if target is not None and target.status == "retracted":
            self.counts["refused"] += 1
            self.facts.decisions.record(DOMAIN, "refused", key=_new_id("ref"), subject=target.id, content=c.text[:200],
                                        created_at=self.facts.now(), candidate=c.to_dict(), reason="corrects a retracted fact")
            return Decision("refused", None, target, None, f"{target.id} was retracted: there is nothing to correct; nothing written")
        named = target
        target = self._head(target) if target is not None else None
        if target is not None and (c.metadata or {}).get("origin") == "distill" and _FACT_ID.fullmatch(c.corrects.strip()) \
                and not _retires(c.text, target.text, self._cosine(c.text, target.text)):
            # a model's id of a fact the correction does not speak of (a small model gave the one id it was shown for every
            # correction of a turn: "… the deploy target is Fly.io now" ended "I live in Berlin"), or of another slot of its
            # person ("Gabriel Souza now lives in Porto" ended "Gabriel Souza knows Rust well"): the gate decides instead
            self._refuse_named(c, target, "names a fact it does not correct (another slot, person or thing): decided as a statement")
            named = target = None
        # a correction of a fact corrected meanwhile (two writers at once) corrects what replaced it, and says so
        via = f" ({named.id} was already corrected, now {target.id}: this corrects that)" if named and target and named.id != target.id else ""
        same = self._open_with_text(c)
        if same is not None:
            if target is not None and target.id != same.id and target.status in ("current", "future"):
                self._end(target, same)
            fact = self.facts.confirm(same.id, source=c.source, at=c.valid_from)
            return Decision("confirm", fact, target, None, "a current fact already says this: confirmed"
                            + (f", and {target.id} ended by it" if target is not None and target.id != same.id else "") + via)
        if target is None or target.status not in ("current", "future"):
            d = self._gate(c)
            d.reason = f"{d.reason} (the fact it corrects, {c.corrects[:80]!r}, is not an open fact: decided as a statement)"
            return d
        if self._older(c, target, change=True):
            return self._act(c, target, None, "supersede", "a correction said of a time before the fact it corrects" + via)
        if self._said_together(c, target) and _heard_in_one(c, target):  # (two corrections of one fact in one message: it cannot start after itself)
            return self._act(c, target, None, "supersede", "an explicit correction said at the moment of the fact it corrects" + via)
        return Decision("supersede", self._supersede(c, target, "an explicit correction" + via), target, None, "an explicit correction" + via)

    def _refuse_named(self, c: Candidate, target: Fact, why: str) -> None:
        """Journal that a correction does not end the fact it names (`refused`, with why); the gate decides it then."""
        log.info("a correction names %s: %s", target.id, why)
        self.facts.decisions.record(DOMAIN, "refused", key=_new_id("ref"), subject=target.id, content=c.text[:200],
                                    created_at=self.facts.now(), candidate=c.to_dict(), reason=why)

    def _named(self, corrects: str, c: Candidate) -> Fact | None:
        """The fact a correction names: by id, or the open fact nearest the quoted text (not
        one that says the correction itself). The local distiller quotes the correction itself
        ("I'm going to look into moisturizers now", "The basil is doing really well now"): then
        the fact must be one the gate reads as this slot or a change of it — a cosine of 0.5, or
        even 0.7, is any chat on one topic."""
        try:
            fact = self.facts.get(corrects)
        except (NotFound, InvalidInput):
            if _FACT_ID.fullmatch(corrects.strip()):  # an id no fact has names no text to look for
                if (c.metadata or {}).get("origin") == "distill":
                    return None  # a model's invention: the gate decides its statement
                # a caller's typo is theirs to hear of, as any unknown id (a new user's `corrects: "fct_nonexistent"` had
                # answered ok/supersede: the gate had ended the nearest fact)
                raise NotFound(f"corrects names no fact {corrects.strip()[:80]!r}: nothing written (give a fact's id, "
                               "or the text of the fact it corrects)") from None
        else:
            # another owner's fact is none of this statement's to end, named or not (a model's correction of Carol's
            # turn named Dave's phone number, shown to it by another user's turn, and retired it: found by a bot builder)
            return fact if self._same_owner(c, [fact], named=True) else None  # type: ignore[no-any-return]
        probe = Candidate(text=corrects, vault=c.vault, source=c.source, metadata=c.metadata)
        quoted_self = normalise(corrects) == normalise(c.text)  # it names no other fact: what it changes is for the words to say
        # (not another slot the slots read, whatever the gate's marker rule says: "Gabriel Souza now lives in Porto, not
        # Lisbon anymore." had ended "Tomás Pereira — Lisbon too, …", a slot of another person: a recruiter's assistant)
        scored = [(max(s.similarity, 1.0 if s.exact else 0.0), f) for f, s in self.neighbours(probe, named=True)
                  if not quoted_self or s.slot in ("same", "changed", "negated")
                  or s.slot != "topic" and judge(s, True) in ("supersede", "dispute")]
        scored = [x for x in scored if x[0] >= 0.5 and normalise(x[1].text) != normalise(c.text)
                  and (quoted_self or _quotes(corrects, x[1].text))]
        if not scored:
            return None
        best = max(x[0] for x in scored)
        tied = [f for score, f in scored if score >= best - NAMED_TIE]
        if len(tied) > 1:  # the correction's own words tell them apart ("My sister lives in Paris now." of two "… in Berlin.")
            near = {f.id: compare(c.text, f.text, None).similarity for f in tied}
            top = max(near.values())
            tied = [f for f in tied if near[f.id] >= top - 1e-9]
        if len(tied) > 1 and parse_source(c.source)[0] != "event" and self._owners_apart(tied):
            # whose it is cannot be told (no message said it): thirty users' "I live in Berlin." are thirty facts, and a
            # correction written by hand had ended the first of them, another user's
            raise InvalidInput(f"corrects names {len(tied)} open facts alike ({', '.join(f.id for f in tied[:5])}"
                               f"{', …' if len(tied) > 5 else ''}): name one by its id, or give the message that said it as source")
        return tied[0]

    def _owners_apart(self, facts: list[Fact]) -> bool:
        """Whether the facts were heard in sessions of more than one owner (`Facts.owners` marks)."""
        heard = [[a.source for a in f.attestations if a.source_type == "event"][:20] for f in facts]
        marks = self._marks([e for events in heard for e in events])
        owners = {tuple(sorted((k, tuple(sorted(v))) for e in events for k, v in marks.get(e, {}).items())) for events in heard}
        return len(owners) > 1

    def _head(self, fact: Fact) -> Fact:
        """The current end of a fact's chain of corrections (a correction of a corrected fact
        corrects what replaced it)."""
        seen = {fact.id}
        while fact.superseded_by:  # (a fact still current whose successor starts later leads to that successor too)
            nxt = self.facts.get(fact.superseded_by)
            if nxt.id in seen:
                break
            seen.add(nxt.id)
            fact = nxt
        return fact

    def _open_with_text(self, c: Candidate) -> Fact | None:
        vault = c.vault or "facts"
        if vault not in {v.name for v in self.facts.store.fact_vaults()}:
            return None
        rows = self.facts.store.query_facts(FactQuery(vaults=[vault], believed=True, open_after=self.facts.now(), norm=normalise(c.text),
                                                      limit=NEIGHBOURS))
        views = [f for f in self.facts._views(rows) if f.status in ("current", "future")
                 and _same_speaker(c.metadata, f.metadata, c.text, f.text)]
        return next(iter(self._same_owner(c, views)), None)  # (Ben's "Update: my timezone is PST." had confirmed Amy's)

    def _end(self, target: Fact, by: Fact) -> None:
        """`target` stops holding where `by` starts (or now, when `by` is older): superseded by it, or
        closed there when `by` already replaced another fact (a chain has one predecessor). It had
        been closed now even then: "Priya is our reviewer" (a second copy) held on 2025-06-01 beside
        "Marco takes over code review from Priya starting today", said on 2025-03-10."""
        if by.valid_from > target.valid_from and by.supersedes is None:
            self.facts.supersede(target.id, by=by.id)
        elif by.valid_from > target.valid_from:
            self.facts.close(target.id, at=by.valid_from)
        else:
            self.facts.close(target.id, at=max(self.facts.now(), target.valid_from))

    # -- parking -------------------------------------------------------------
    def _park(self, c: Candidate, reason: str, deterministic: bool = False) -> Decision:
        """Journal a candidate that cannot be curated now; `deterministic`: the drain decides
        it without the LLM (which could not)."""
        key = _new_id("pend")
        self.facts.decisions.record(DOMAIN, "parked", key=key, content=c.text[:200], kind="pending_semantic",
                                    created_at=self.facts.now(), candidate=c.to_dict(), reason=reason[:500],
                                    deterministic=deterministic)
        self._pending_known = True
        log.warning("fact candidate parked (%s): %s", reason, key)
        return Decision("parked", reason=f"cannot curate now ({reason}); journaled as {key}")

    def pending(self) -> list[tuple[str, dict[str, Any]]]:
        """(key, candidate) of parked candidates not curated yet."""
        parked: dict[str, dict[str, Any]] = {}
        for kind, d in self.facts.decisions.read(DOMAIN, ("pending_semantic", "decision")):
            if kind == "pending_semantic":
                parked[d.key] = {**(d.meta.get("candidate") or {}), "_deterministic": bool(d.meta.get("deterministic"))}
            elif d.op == "drained":
                parked.pop(d.meta.get("drains", ""), None)
        return list(parked.items())

    def _drained(self, raw: dict[str, Any]) -> Decision:
        """A parked candidate curated; one whose source is no stored message (an id made up, parked before it was checked)
        is kept without it: refused, it had stopped every later write, which drains first (a review's)."""
        try:
            return self._curate(self._cite(Candidate.of(raw)))
        except NotFound as exc:
            log.warning("a parked fact's source is gone (%s): curated without it", exc)
            return self._curate(self._cite(Candidate.of({k: v for k, v in raw.items() if k != "source"})))

    def drain(self) -> list[Decision]:
        """Apply journaled decisions the store missed, then curate every parked candidate,
        oldest first; stops (keeping the rest parked) if the store is still unreachable.
        Each one is marked drained once curated."""
        self.facts.replay()  # decisions journaled while the store was away come first
        done = []
        waiting = self.pending()
        for key, raw in waiting:
            deterministic = bool(raw.pop("_deterministic", False))
            try:
                self.use_llm = not deterministic
                decision = self._drained(raw)
            except (InvalidInput, NotFound) as exc:  # (a parked correction naming an id no fact has)
                decision = Decision("rejected", reason=str(exc))
            finally:
                self.use_llm = True
            self.facts.decisions.record(DOMAIN, "drained", key=f"drain_{key}", content=f"drained {key}",
                                        created_at=self.facts.now(), drains=key, action=decision.action,
                                        fact=decision.fact.id if decision.fact else None)
            done.append(decision)
        self._pending_known = False
        return done


def _heard(fact: Fact) -> str:
    """When `fact` was first said: its earliest hearing, else when it holds from."""
    return min((a.at for a in fact.attestations), default=fact.valid_from)
