"""Newer values: when two recalled items give one quantity two values, the later one is
the current belief, and the earlier one is marked as earlier (issue 20, knowledge updates).

The curator supersedes a fact only when it is sure two statements fill one slot; on real
conversations most updates are said in passing ("I've completed 4 projects since
starting painting classes" … two months later "I just finished my 5th project"), and
both stay current, as do the turns that said them. Recall sees them side by side, so it
makes the softer call the curator cannot: the older item stays in the block (a question
about the change, or about then, needs it) but its line says `earlier; newer: <id>`, and
among the leading facts the newer one moves up to where the older stood — the current
belief first.

Two items give one quantity two values when, the newer said on a later day (within a day,
numbers near each other are more often two things than one thing changed), each has a
number (digits, ordinals, number words; list markers "1." and "first" are not) and:
- the words next to the numbers — the content word before and the two after — share one
  ("4 projects" / "my 5th project", "7:00 pm" / "6:00 pm", "episode 10" / "50 episodes");
- that shared word is one the query asks about ("how many bikes": "two bikes" / "four
  bikes"), or the words within `NEAR` of the two numbers share two of the query's, or the
  query asks how long, the shared word is a unit of time and the words near share one of
  the query's ("How long have I been living …": "living … a month now" / "living … for 3
  months");
- the numbers differ, and neither item also names the other's number (an item that names
  both values is about the change, and is not marked; a later one naming again the older value of that quantity says
  it stands, `_still_stands`), unless the later says the older value is the one it replaced
  ("moved from Nov 6 to 2026-11-13", "(was $1.5M)", ", not 2026-11-06"): then that value and no other is earlier;
- the two count one thing: a number counting a thing by the words right after it ("4 books", "1 Gi"; they are words
  next to it too: "15 Crash Course videos") is no value of
  one that neither counts it nor has it near it (`_counts_other`); two in one unit, of measure or a thing both count, are of two things when
  what each is said of ("target is 110k words" / "i'm at 64k words"; in a measure, else the word before it: "metformin
  1000 mg" / "amlodipine 10 mg") is one the other item never says (`_measure_other`); two items naming whose they are ("Ella", "sam's")
  name one holder, and a line naming the thing a question names is revised only by one that says it;
- the two name no other ones of one series ("PR 42" / "PR 99", "run 1" / "run 2", "the 10k PR is …" / "the 5k PR is …"),
  unless the question asks which one.

A state changes the same way: an item that says a thing is under way ("I've been meaning to
get back to The Nightingale", "halfway through", "still working on") is earlier than a
later one that says it is done ("I finished The Nightingale") when the two share two words
of the query besides the state's own.

Paths, URLs, file names and inline code are no words near a number ("5432 in packages/db/config.ts"
is no count of packages); a version's bound ("numpy<2"), a version of three parts, an issue's number ("#482") and a
command's flag ("tail -50") are no values ("Python 3.11" and "Python 3.12" still are). A number written short is one
number: "1e-4" is 0.0001 and "7b" or "200B" billions (no "e" or "b" beside every learning rate and model size).

Nothing is dropped and no fact changes: a wrong mark costs a few tokens and a hint, where a
wrong supersede would retire a true belief.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache

from .. import when
from ..facts.echoes import FUNCTION_WORDS
from ..facts.slots import QUANTITY, SERIES, unordinal
from ..search.floor import beyond_model
from ..search.query import CONTRACTIONS, STOP_WORDS
from .block import LINE_TOKENS, RecallItem

# a file path, a URL, inline code or a file name: no prose words around a number ("Found 3 references to 5432 in
# packages/db/config.ts" shared "packages" with "412 packages installed", and was marked an earlier value of it)
_CODE_SPANS = re.compile(r"(?<!\S)(?<!\d )(?=\S*[^\W\d_]\S*[/\\]|\S*[/\\]\S*[^\W\d_])\S*[/\\]\S*|`[^`\n]*`|\b[\w-]+\.(?:[a-z]{1,5})\b")
# (a path holds letters: "8/10" and "12/15" are numbers, and keep their marks; a rate after a number is its unit: "600 req/min")
_NAME_PAIR = re.compile(r"\b([A-Z][a-z]+)/([A-Z][a-z]+)\b(?![/\\.])")
# a version's bound, a version of three parts, an issue's number, a command's flag: no value of a quantity ("We decided to
# pin numpy<2" was marked an earlier value of "Why does CI still test numpy 2.1?", of "issue #482" and of "tail -50")
# (a bound's operator is written against its number: "Wow! 124 points" or "~ 5 minutes" bound nothing)
# a log's stamp ("[2025-04-01 03:12:55]", "2025-01-21"): no value either (a pasted sync log was an earlier value of a paste)
# a code of letters and digits joined by a hyphen (an order, a part, a pod: "#ES-21055", "CS-R8000-11-30", "api-3") is a
# name, no value ("Refund … for the CS-R8000-11-30 … on order #ES-21055" had been an earlier value of "#ES-21267 was a
# duplicate", for its "30" and "21055": found by a bike shop's support bot)
_NOT_VALUES = re.compile(r"(?:<=?|>=?|==|!=|~=|\^)v?\d[\w.*]*|\bv\d[\w.]*|\b\d+(?:\.\d+){2,}\w*|#\d+|(?<![\w.-])--?\d+\b"
                         r"|\b\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d)?[\w.:+-]*)?|\b\d\d?:\d\d:\d\d\b"
                         r"|#?\b[^\W\d_]+(?:-[^\W_]+)*-[^\W_]*\d[\w-]*")
# a day written as ISO ("2026-11-13", not a log's stamp with its time) is a day of a month as "Nov 13" is: read as a stamp
# and blanked, "Board meeting moved from Nov 6 to 2026-11-13" had kept only the day it moved from (found by a founder)
_ISO_DAY = re.compile(r"\b\d{4}-(0[1-9]|1[0-2])-(\d\d)\b(?![T ]\d\d:)")
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
# a number written short is one number: a power of ten ("1e-4" is 0.0001; it had been three words, "1", "e" and "4", so every
# two rates shared "e") and billions glued to it ("7b", "200B", as "42k" is 42000: its "b" had been a word beside a model's
# size and a count of tokens alike, so "settle on 1e-4 for the 7b" was an earlier value of "the 200B run can actually
# finish" for "what lr did we settle on for the 7b run?": found by an ML researcher importing Codex sessions)
# (a power of two digits at most: "1e999999999" written out would be a billion digits)
_SHORT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:[eE]([-+]?\d\d?)|[bB])\b")
# the value a later item says it replaced ("Board meeting moved from Nov 6 to 2026-11-13", "Round size updated: $2M (was
# $1.5M)", "(raised from $1.5M)", "is on 2026-11-13, not 2026-11-06"): a verb of change, whole, up to three words, then
# "from X to Y" (or "from X" closing a parenthesis); "(was X"; or ", not X". (Stems had matched ordinary text: "I
# downloaded the report from 2024", "Uploaded the photos from March 5", "Went home from 5th avenue", "Cut the onions from 2
# bulbs" each said a value replaced, and the value they named took the marks of every other earlier one: found in review)
_CHANGED = (r"\b(?:(?:mov|rais|increas|decreas|reduc|chang|updat)(?:e[ds]?|ing)|(?:lower|bump|push|shift)(?:s|es|ed|ing)?"
            r"|upped|drop(?:s|ped|ping)?)\b"
            r"(?:\s+[\w']+){0,3}?\s+from\s+")
_VALUE = r"((?:[^\W\d_]{3,9}\.?\s+)?[~$€£]?\d[\w.,:]*)"
_REPLACED = re.compile(rf"{_CHANGED}{_VALUE}(?=\s+to\b)|\(\s*{_CHANGED}{_VALUE}(?=[^()]*\))|(?:\(was|,\s+not)\s+{_VALUE}", re.IGNORECASE)
_NOT_NUMBERS = re.compile(r"(?:^|(?<=\s))\d{1,2}[.)](?=\s)|\bfirst\b", re.IGNORECASE)  # list markers; "the first course"
# a unit written against its number ("10mg", "1Gi", "2.5ml") is a word of its own, as "10 mg" is (not an ordinal, a time of
# day or thousands: "5th", "9am", "42k"); read as one word, "10mg" had been "10m" and no 10 beside "theo (10)"
_GLUED_UNIT = re.compile(r"(?<=\d)(?!(?:st|nd|rd|th|am|pm|k)\b)(?=[^\W\d_]+\b)", re.IGNORECASE)
# what a number counts or is measured in: the words right after it ("4 books", "10 mg", "1 Gi", "15 Crash Course videos"),
# and what a range's first number counts too ("logo churn in 1-3 chair clinics": its 1 had been a value of "4% logo churn")
_COUNTED = re.compile(r"(\d+(?:[.,]\d+)*(?:[-–]\d+(?:[.,]\d+)*)?)(?:st|nd|rd|th)? ?((?:[^\W\d_][\w'-]*)(?: [^\W\d_][\w'-]*)*)", re.IGNORECASE)
# "a month", "an hour": one of a unit of time ("it's been a month now" → "3 months"); not
# "half an hour", "a quarter of an hour" or "an hour and a half"
_ONE_UNIT = re.compile(r"(?<!half )(?<!quarter of )\b(?:an?|one)\s+"
                       r"(?=(?:minute|hour|day|week|fortnight|month|year|decade)\b(?!\s+and\s+a\s+half))", re.IGNORECASE)
DURATION = {"how", "long"}  # a question of how long: its answer is a length of time, which a later one revises
TIME_UNITS = {"minut", "hour", "day", "week", "fortnight", "month", "year", "decad"}  # as `said` reads them ("minutes" → minut)
# units of money and measure: many quantities are counted in them, so a shared one is no quantity changed unless the
# words near both numbers share another word of the query ("How much is my rent?": "rent is 950 euros" / "rent goes up to
# 1,050 euros"); "raised 340 euros for the shelter" is no newer rent, though a question asks its rent "in euros"; and
# one measure is one quantity only of one thing measured (`_measure_other`: "metformin 1000 mg" / "amlodipine 10 mg")
MEASURES = frozenset("""euro eur dollar buck usd pound gbp quid yen yuan rupee franc chf krona kronor cent pence percent
    km kilometer kilometre mile meter metre cm mm foot feet inch yard kg kilo kilogram gram lb lbs ounce oz ton tonne
    liter litre ml gallon calory calorie kcal mph kph mg milligram mcg microgram""".split())  # noqa: SIM905 (a list of words)
BEFORE, AFTER = 1, 2  # the content words next to a number that say what it counts
TEXT_CHARS = LINE_TOKENS * 16  # of a long text, the part a block can show is read (as `RecallItem.prepare`)
NEAR = 8  # the content words either side of a number that say what it is about
# words next to a number that say nothing of what it counts ("9 months since", "since 2 weeks")
_NOT_UNITS = FUNCTION_WORDS | {"since", "ago", "now", "about", "just", "already", "around", "more", "less", "or", "and", "but",
                               "so", "very", "realli", "only", "almost", "nearly", "least", "most", "other", "another", "it'", "i'v",
                               "final"}
_LITTLE = STOP_WORDS | CONTRACTIONS  # the little words of English: none is what a number counts ("0.805 after the leak fix")
# a month or a weekday next to a number makes it a day, not a count of months: "planned for April 16" is no earlier value
# of "feature freeze from April 11" (the words beside the day still say what happens on it: "launch March 14" / "April 11")
_NOT_UNITS |= set("""january february march april may june july august september october november december jan feb mar apr
    jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday""".split())  # noqa: SIM905 (a list of words)


_UNDER_WAY = re.compile(r"\b(?:meaning to|get back to|getting back to|halfway through|in the middle of|still (?:working on|reading|"
                        r"watching|doing)|currently (?:reading|working on|watching)|haven't finished|have not finished|not finished yet|"
                        r"started (?:reading|watching|working on)|put (?:it|them) down)\b", re.IGNORECASE)
_DONE = re.compile(r"\b(?:finished|completed|done with|wrapped up)\b", re.IGNORECASE)
_ANY_NUMBER = re.compile(r"\d|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|"
                         r"seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|hundred|third)\b", re.IGNORECASE)
_STATE_WORDS = {"finish", "complet", "start", "read", "watch", "work", "done"}


@dataclass
class _Said:
    item: RecallItem
    words: set[str]
    units: dict[str, set[str]]  # number → the words next to it
    before: dict[str, set[str]]  # number → the word before it, what a measure is of ("metformin" of "metformin 1000 mg")
    of: dict[str, set[str]]  # number → what it is said to be (`_said_of`: "target" of "target is 110k words")
    near: dict[str, set[str]]  # number → the words around it
    under_way: bool = False  # says a thing is under way
    done: bool = False  # says a thing is done
    bare: frozenset[str] = frozenset()  # times of day said without their half of the day ("the 10:45 bedtime")
    names: frozenset[str] = frozenset()  # what it names (`_names`): whose quantity it is
    kinds: dict[str, str] = field(default_factory=dict)  # number → "clock", "day" or "label" (`_kinds`); a count has none
    counts: dict[str, str] = field(default_factory=dict)  # number → what it counts or is measured in (`_phrases`)
    numbered: dict[str, str] = field(default_factory=dict)  # its names with a number, each with its kind (`numbered`)
    replaced: frozenset[str] = frozenset()  # the values it says were replaced (`_REPLACED`)


@cache
def _measured() -> frozenset[str]:
    """`MEASURES` as `said` reads them ("euros" → "euro", "kilometres" → its stem)."""
    from ..facts.curator import tokens

    return frozenset(_unit(w) for m in MEASURES for w in tokens(m, spans=False))


def _clock(value: str) -> str:
    """A time of day on a twelve-hour dial (22:45 and 10:45 are one)."""
    m = _CLOCK.fullmatch(value)
    return f"{int(m.group(1)) % 12}:{m.group(2)}" if m else value


def _same(n1: str, old: _Said, n2: str, new: _Said) -> bool:
    """One value: said alike, or a time of day said without its half of the day that is the other's on the dial ("10:45pm"
    is read 22:45, "the 10:45 bedtime" 10:45: the current bedtime had been marked an earlier value of itself; 10:45am and
    10:45pm stay two)."""
    return n1 == n2 or (n1 in old.bare or n2 in new.bare) and _clock(n1) == _clock(n2)


_CLOCK = re.compile(r"(\d{1,2}):(\d\d)")
_BARE_CLOCK = re.compile(r"\b(\d{1,2}:\d\d)\b(?!\s*[ap]\.?m\b)", re.IGNORECASE)


def _unit(word: str) -> str:
    return word[:-1] if word.endswith("e") and len(word) > 3 else word  # "bike" / "bik" (from "bikes")


def _may_change(text: str) -> bool:
    """A cheap first look: only a text with a number or a state of progress can be revised."""
    return bool(_ANY_NUMBER.search(text) or _ONE_UNIT.search(text) or _DONE.search(text) or _UNDER_WAY.search(text))


def said(item: RecallItem) -> _Said:
    from ..facts.curator import tokens

    # (two names joined by a slash are no path: "the Meier/Schulz wedding" names whose order it is)
    text = _NAME_PAIR.sub(r"\1 \2", item.text[:TEXT_CHARS])
    text = _ISO_DAY.sub(lambda d: f"{_MONTHS[int(d.group(1)) - 1]} {int(d.group(2))}", _CODE_SPANS.sub(" ", text))
    text = _SHORT.sub(_written_out, _NOT_VALUES.sub(" ", text))
    text = _ONE_UNIT.sub("1 ", _NOT_NUMBERS.sub(" ", text))
    text = _GLUED_UNIT.sub(" ", text)
    words = [w if w[0].isdigit() else _unit(w) for w in tokens(text, spans=False) if w not in _NOT_UNITS]
    units: dict[str, set[str]] = {}
    before: dict[str, set[str]] = {}
    near: dict[str, set[str]] = {}
    for i, w in enumerate(words):
        if w[0].isdigit():
            value = unordinal(w)
            before.setdefault(value, set()).update(a for a in words[max(0, i - BEFORE): i] if not a[0].isdigit())
            units.setdefault(value, set()).update(before[value] | {a for a in words[i + 1: i + 1 + AFTER] if not a[0].isdigit()})
            near.setdefault(value, set()).update(a for a in words[max(0, i - NEAR): i + 1 + NEAR] if not a[0].isdigit())
    phrases = {value: counted for value, counted in _phrases(text).items() if value in units}  # (not "42" of "42k": 42000)
    for value, counted in phrases.items():
        units[value].update(counted)  # "15 Crash Course videos" counts videos, three words on
    done = bool(_DONE.search(item.text))
    kinds = _kinds(text)
    for value, kind in kinds.items():
        if kind == "clock" and value in units:
            units[value].add("clock")  # two times of day share what they are ("7:00 pm" / "6:00 pm": "pm" had said it, and
            # reads as part of its number since "4 pm" is "4pm")
    return _Said(item, {w for w in words if not w[0].isdigit()}, units, before, _said_of(text), near, not done and bool(_UNDER_WAY.search(item.text)), done,
                 frozenset(_BARE_CLOCK.findall(text)), _names(text), kinds, {n: words[0] for n, words in phrases.items()},
                 numbered(item.text[:TEXT_CHARS]), _replaced(text))


def _replaced(text: str) -> frozenset[str]:
    """The values `text` says were replaced (`_REPLACED`), as `said` reads its numbers."""
    from ..facts.curator import tokens

    said = (tokens(m.group(m.lastindex or 0), spans=False) for m in _REPLACED.finditer(text))  # (one alternative's value)
    return frozenset(unordinal(next(w for w in words if w[0].isdigit())) for words in said if any(w[0].isdigit() for w in words))


def _written_out(short: re.Match[str]) -> str:
    """A number `_SHORT` read written out: "1e-4" → 0.0001, "1.0e-4" → 0.0001, "7b" → 7000000000."""
    return format(Decimal(short.group(1)).scaleb(int(short.group(2) or 9)).normalize(), "f")


def _phrases(text: str) -> dict[str, list[str]]:
    """Each number of `text` with the words right after it that say what it counts or is measured in, as `said` reads
    them, up to the first little word or mark ("4 books out" → book, "15 Crash Course videos in …" → crash, cours,
    video, "10 mg" → mg); none after "(7) and …", "€19.95 with …" or "0.805 after the leak fix" (its "after" had been what
    0.805 counts, no value of "AUC 0.81" then: found in review)."""
    from ..facts.curator import tokens

    phrases: dict[str, list[str]] = {}
    for m in _COUNTED.finditer(text):
        number, words = tokens(m.group(1), spans=False), []
        for word in m.group(2).split():
            said = tokens(word, spans=False)
            if len(said) != 1 or said[0][0].isdigit() or said[0] in _NOT_UNITS or word.lower() in _LITTLE:
                break
            words.append(_unit(said[0]))
        if number and number[0][0].isdigit() and words:
            phrases.setdefault(unordinal(number[0]), words)
    return phrases


# a number said to be what a thing is: the words of its clause before "is", "at", "to", ":" or "=" ("target is 110k words",
# "i'm at 64k words", "chapter 9 (Hesk's Tower) is 6200 words", "cut the target to 95k", "num_leaves=63")
_SAID_OF = re.compile(r"([^.!?;,\n]*?)(?:(?:\s(?:is|was|are|were|am|at|to)|['’](?:s|m|re)|\s?[:=])(?:\s+(?:now|still|only|just|about|around))*"
                      r"\s+|=)[~$€£]?(\d+(?:[.,]\d+)*(?:k\b)?)", re.IGNORECASE)


def _said_of(text: str) -> dict[str, set[str]]:
    """Each number `_SAID_OF` reads with what it is said of, as `said` reads words; a subject of little words only is
    itself ("i'm" of "i'm at 64k words": the speaker)."""
    from ..facts.curator import tokens

    said: dict[str, set[str]] = {}
    for m in _SAID_OF.finditer(text):
        number, subject = tokens(m.group(2), spans=False), m.group(1).strip().lower()
        words = {_unit(w) for w in tokens(subject, spans=False) if not w[0].isdigit() and w not in _NOT_UNITS}
        if number and number[0][0].isdigit() and subject:
            said.setdefault(unordinal(number[0]), words or {subject})
    return said


_KINDS = (
    ("clock", re.compile(r"\b\d{1,2}(?::\d\d)?\s*[ap]\.?m\b\.?|\b\d{1,2}:\d\d\b", re.IGNORECASE)),
    ("label", SERIES),  # one of a series ("book 1", "Chapter 4", "room 2"): `slots.SERIES`
    # … and one named by a code glued to its number ("r02", "A100", "EU4"; not a version, "v2"): "r02 blew up" had been
    # an earlier value of "r05 will be bs 512" (two runs, read as counts of "r": found keeping a lab notebook)
    ("label", re.compile(r"\b(?![vV]\d)([A-Za-z]{1,3})(\d{1,4})\b")),
)
_DAYS = frozenset(["day_month", "month_day"])  # `when`'s readings of a day of a month ("mar 12", "April 9")


def _kinds(text: str) -> dict[str, str]:
    """The numbers of `text` that are no count, by their kind: a time of day ("10:30am"), a day of a month ("mar 12",
    "April 9", as `when` reads one), one of a series ("book 1"). Two values of one quantity are of one kind: "booked …
    mar 12 10:30am bc of the bp" had been marked an earlier value of "bp 138/84 today", and "New title for book 1" of
    "revealed in book 2"."""
    from ..facts.curator import tokens

    kinds: dict[str, str] = {}
    days = [span.text for span in when.resolve(text, when.ANY_DAY) if span.kind in _DAYS]
    for w in (w for day in days for w in tokens(day, spans=False) if w[0].isdigit()):
        kinds.setdefault(unordinal(w), "day")
    for kind, pattern in _KINDS:
        for m in pattern.finditer(text):
            for w in tokens(m.group(), spans=False):
                if w[0].isdigit():
                    if kind == "label":  # one of a series as the subject ("Room 4 has the projector."): never a value
                        opens = _OPENS.search(text[max(0, m.start() - 16):m.start()])
                        kind_of = f"{'subject' if opens else 'label'}:{m.group(1).lower()}"
                    kinds.setdefault(unordinal(w), kind_of if kind == "label" else kind)
    for m in _QUALIFIER.finditer(text):
        number, noun = tokens(m.group(1), spans=False), tokens(m.group(2), spans=False)
        if number and number[0][0].isdigit() and noun and noun[0] not in _NOT_UNITS \
                and _unit(noun[0]) not in _measured() | TIME_UNITS:  # "950 euros a month" names no euro
            kinds.setdefault(unordinal(number[0]), f"label:{m.group(2).lower()}")
    return kinds


# a number before the noun another number is the value of names which one it is, not a value: "The athlete's 10k PR is
# 45:12" / "The athlete's 5k PR is 20:58" are two records (the 10k's had been marked an earlier value of the 5k's, and the
# only 10k record read as replaced: found by a fitness bot's builder); not "from 10s to 25s", two values of one, nor a
# number before its measure ("rent is 950 euros a month")
QUALIFIER_JOINS = r"(?:\s+(?:is|was|are|were|now))?\s*[:=]?"
_QUALIFIER = re.compile(rf"(?<![\w.,:])(\d+(?:[.,]\d+)*k?)\s?([^\W\d_][\w'-]*){QUALIFIER_JOINS}\s+(?=[$€£]?\d)", re.IGNORECASE)


_OPENS = re.compile(r"(?:^|[.!?:]\s+|\n)(?:(?:the|our|my)\s+)?$", re.IGNORECASE)  # what opens a sentence, up to a subject


# a name: a capitalised word inside a sentence ("The Atlas API", "on Redis"), an acronym anywhere ("API", "DB"), or a name
# in code joined by underscores ("STRIPE_WEBHOOK_TIMEOUT", "pool_size": "bump STRIPE_WEBHOOK_TIMEOUT from 10s to 25s" had been
# an earlier value of "bump the JWKS fetch timeout from 2s to 5s", found by a platform team's engineer)
_NAME = re.compile(r"\b[^\W\d_][^\W_]*(?:_[^\W_]+)+\b|(?<![.!?:]\s)(?<!^)(?<![.!?:])(?<![\w+#-])[A-Z][\w+#-]*[a-z0-9]\b|\b[A-Z][A-Z0-9]+\b")
_NOT_NAMES = _NOT_UNITS | {"i", "i'm", "i've", "i'll", "i'd", "today", "tonight", "tomorrow", "yesterday"}


# whose a thing is, said in lower case as often ("ella's bday", "sam's bday"): a name too (not "it's", "that's", "let's")
_POSSESSOR = re.compile(r"\b([^\W\d_]+)['’]s\b")
_NOT_POSSESSORS = frozenset(["it", "that", "what", "there", "here", "he", "she", "who", "let", "where", "how", "when", "this",
                             "one", "everyone", "everybody", "someone", "somebody", "nobody", "today", "tonight", "tomorrow", "yesterday"])


def _names(text: str) -> frozenset[str]:
    """The names a text says (`_NAME`) and whose things it says (`_POSSESSOR`), folded to lower case, leaving out months,
    weekdays and words of time."""
    said = [m.group().lower() for m in _NAME.finditer(text)]
    said += [w for w in (m.group(1).lower() for m in _POSSESSOR.finditer(text)) if w not in _NOT_POSSESSORS]
    return frozenset(n for n in said if n not in _NOT_NAMES)


# a name with a number in it: a model's size, a version, a product ("7b", "13B", "v3", "gpt-4", "A100"), and its kind with
# the number left out ("7b" and "200B" one kind, "v3" another): a question naming one names no other of its kind
_NUMBERED = re.compile(r"(?<![\w.-])(?=[\w.-]*\d)(?=[\w.-]*[^\W\d_])(?![\d.]+(?:st|nd|rd|th|am|pm|s)\b)[\w.-]*\w", re.IGNORECASE)
_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def numbered(text: str) -> dict[str, str]:
    """The names with a number a text says, folded to lower case, each with its kind (`_NUMBERED`); no quantity."""
    return {n: _DIGITS.sub("#", n) for n in (m.group().lower() for m in _NUMBERED.finditer(text)) if not QUANTITY.fullmatch(n)}


def _another(said: _Said, asked: frozenset[str]) -> bool:
    """`said` names a thing of the kind of a numbered name `asked` holds and names none of those asked."""
    kinds = {_DIGITS.sub("#", a) for a in asked}
    return not said.numbered.keys() & asked and any(kind in kinds for kind in said.numbered.values())


def _day(item: RecallItem) -> str:
    """The day an item was said on its speaker's calendar (its shown date), else its time's UTC day."""
    return item.date if len(item.date) == 10 and item.date[4] == "-" else item.at[:10]


def changed(old: _Said, new: _Said, query: set[str], when: bool = False, which: frozenset[str] = frozenset(),
            counted: bool = False, asked: frozenset[str] = frozenset()) -> bool:
    """Whether `new` gives a quantity of `old` another value (see the module doc); `when`: the query asks when (a day
    changed is a value changed only then: "which medications has dad stopped?" had marked "lisinopril stopped April 9"
    an earlier value of "losartan stopped October 14"); `which`: the nouns it asks which one of (one of a series is a
    value then: "Which room is the class in?" of "uses room 4" / "room 2 now"); `counted`: it asks how many of a thing
    (a count of that thing is a value, not every number near it); `asked`: the names the query says (`_NAME`)."""
    if not (old.item.at and new.item.at and _day(old.item) < _day(new.item)) or not old.words & new.words & query:
        return False
    if old.under_way and new.done and len(old.words & new.words & query - _STATE_WORDS) >= 2:
        return True
    if old.names & asked and not asked & (new.names | new.words):
        # the question names the thing whose value it asks, the older says it and the newer does not: "UK shipping is
        # €19.95" was marked an earlier value of "Now free shipping from 75€ (península)" for "How much is shipping to the UK?"
        return False
    if asked and (_another(old, asked) or _another(new, asked)):
        # one says a thing of the asked one's kind, not the asked one: "what lr … for the 7b run?" had marked the 7b's "lr
        # 3e-4" an earlier value of "the 13b pilot should reuse lr 1e-4" (found in an ML researcher's Codex sessions)
        return False
    if _two_of_a_series(old, new, which):
        # each names another one of a series ("PR 42" / "PR 99", "run 1" / "run 2" of one ticket's QA, "the 10k PR" / "the
        # 5k PR"): two things, whatever values they give ("PR 42 approved and merged" had been an earlier value of a pasted
        # "merge PR 99 to prod now" for "did the reviewer approve PR 42?": found by a multi-agent crew's builder)
        return False
    if old.names and new.names and not old.names & new.names:
        # two things' values ("The Atlas API listens on port 8443" / "The Redis cache runs on port 6380"); a named thing's
        # and an unnamed one's may be one (tried: refusing them lost two of LongMemEval's marks)
        return False
    for n1, u1 in old.units.items():
        replaced = any(_same(n1, old, r, new) for r in new.replaced)
        if new.replaced and not replaced:
            continue  # the later item says which value it replaced, another one: "raj set up a partner meeting for sept 9"
            # is no earlier value of "Board meeting moved from Nov 6 to 2026-11-13" (found by a founder)
        for n2, u2 in new.units.items():
            # (an item naming both values is about the change, unless it says the older one is what it replaced)
            if _same(n1, old, n2, new) or any(_same(o, old, n2, new) for o in old.units) \
                    or not replaced and _still_stands(n1, old, new, u1 & u2) or not (u1 & u2 or replaced):
                continue
            kind = old.kinds.get(n1)
            if kind != new.kinds.get(n2) or kind == "day" and not when or kind and kind.startswith("subject:") \
                    or kind and kind.startswith("label:") and kind[6:] not in which:
                continue  # a time of day is no blood pressure, book 1 no earlier book 2
            if not kind and (_counts_other(old.counts.get(n1), new.counts.get(n2), new.near[n2])
                             or _counts_other(new.counts.get(n2), old.counts.get(n1), old.near[n1])):
                continue  # a count of books is no earlier age, 1 Gi no earlier 1200 req/min (see `_counts_other`)
            if kind == "day" and (old.near[n1] & query - new.words or new.near[n2] & query - old.words):
                continue  # a word of the question beside one day the other never says: "Board meeting moved … to 2026-11-13"
                # had been earlier than "Sequoia is in diligence with a partner meeting on 2026-09-09" for "when is the board
                # meeting?" (found by a founder)
            if replaced and old.near[n1] & new.near[n2] & query:
                return True  # "set for nov 6" / "moved from Nov 6 to 2026-11-13": the later one says so
            # a unit of time shared is one quantity only for a question of how long (below): "a day on the fjord" is no
            # earlier value of "Day two at Kinetik" for "When was my last day at Brightline?"
            shared, measured = u1 & u2, _measured()
            if shared and shared <= measured | _counted_alike(old, n1, new, n2) \
                    and _measure_other(old, n1, new, n2, shared <= measured):
                continue  # one unit, two things measured or counted: "Frank takes metformin 1000 mg" is no earlier dose of
                # "Frank takes amlodipine 10 mg" (found by a new user: they shared "Frank" and "takes", words of the
                # question), nor "target is 110k words" an earlier "i'm at 64k words" (found by a novelist: "word" was
                # a word of "what's the target word count?")
            if (shared & query) - TIME_UNITS - measured:
                return True
            if shared & measured and (old.near[n1] & new.near[n2] & query) - measured:
                return True  # one measure, near one thing asked ("rent … 950 euros" / "rent … 1,050 euros")
            if counted:
                continue  # "how many cakes …": a count of what is asked, not of what stands near it ("2 tiers" / "4 tiers")
            if len(old.near[n1] & new.near[n2] & query) >= 2 and shared - TIME_UNITS:
                return True
            if DURATION <= query and u1 & u2 & TIME_UNITS and old.near[n1] & new.near[n2] & query:
                return True  # "how long …": two lengths of time, near one thing asked ("a month now" / "for 3 months")
    return False


def _still_stands(n1: str, old: _Said, new: _Said, shared: set[str]) -> bool:
    """`new` names again `old`'s value `n1`, or, when `n1` is said of a thing `new` never says (`_said_of`: the 63 of
    "num_leaves=63"), another of `old`'s values next to every word `n1` shares with a number of `new` (`shared`): the
    older value stands. Found by a new user: "exp-055 (num_leaves=63): AUC 0.81 — new best." was marked earlier than
    "exp-058 (dart): AUC 0.805 — slightly below exp-055's 0.81. Keeping exp-055.", the 63 before "AUC" read as another
    value of AUC, whose 0.81 the later line says still holds. (Any other value had stood in for `n1`: the "a month" of
    "Rent is 950 euros a month", the deposit of "Rent is 950 euros, deposit 1900 euros" and the amlodipine of "1000 mg
    metformin and 10 mg amlodipine", said again, had left the rent and the metformin unmarked beside their newer values:
    found in review.)"""
    other = bool(old.of.get(n1, set()) - new.words)
    return any(_same(o, old, m, new) for o in old.units if o == n1 or other and shared <= old.units[o] for m in new.units)


def _measure_other(old: _Said, n1: str, new: _Said, n2: str, measure: bool) -> bool:
    """Two numbers in one unit are of two things: what each is said of (`_said_of`: "target is 110k words", "i'm at 64k
    words"), else, in a `measure`, the word before it ("metformin 1000 mg", "amlodipine 10 mg"), is one the other item
    never says ("rent is 950 euros" / "the rent goes up to 1,050 euros" are one rent, "target is 110k words" / "cut the
    target to 95k words" one target). (A count's word before is what was done with the things counted, no other thing:
    "I've completed 4 projects" / "I just finished my 5th project" are one count.)"""
    of1 = old.of.get(n1) or (old.before[n1] if measure else set())
    of2 = new.of.get(n2) or (new.before[n2] if measure else set())
    return bool(of1 - new.words - of2 and of2 - old.words - of1)


def _counted_alike(old: _Said, n1: str, new: _Said, n2: str) -> set[str]:
    """The words right after both numbers, what both count ("110k words" / "6200 words": word): a unit, as a measure is."""
    return (old.units[n1] - old.before[n1]) & (new.units[n2] - new.before[n2])


def _series(said: _Said) -> dict[str, set[str]]:
    """The ones of a series `said` names ("PR 42", "Room 4", "the 10k PR"), each series' noun with their numbers."""
    ones: dict[str, set[str]] = {}
    for number, kind in said.kinds.items():
        if kind.startswith(("label:", "subject:")):
            ones.setdefault(kind.split(":", 1)[1], set()).add(number)
    return ones


def _two_of_a_series(old: _Said, new: _Said, which: frozenset[str]) -> bool:
    """`old` and `new` name other ones of one series and no one both name, and the question does not ask which one."""
    mine, theirs = _series(old), _series(new)
    return any(noun not in which and not mine[noun] & theirs[noun] for noun in mine.keys() & theirs.keys())


def _counts_other(counted: str | None, other: str | None, beside: set[str]) -> bool:
    """A number counts a thing (`counted`: "4 books", "1 Gi") that the other number neither counts nor has near it
    ("episode 10" / "50 episodes" are one, and "10 videos" / "15 Crash Course videos"). Found by a parent and a backend team: "kids are ella (7) and theo (10)" was
    marked an earlier value of "ella has 4 books out", and "raise the api rate limit to 1200 req/min" of "pod api-3 at
    111Mi, under the 1Gi limit": each shared a word beside its number ("ella", "limit"), not what it counts."""
    return counted is not None and counted != other and counted not in beside


# a question asking when something is (not `search.timeframe.ASKS_WHEN`, which asks when a thing was said and reads only a
# question's start): "When is the launch?", "What's the launch day?", "Is the launch still on March 14?" ("… stopped until
# now?" and "any refill due?" ask no day: found in review)
_ASKS_WHEN = re.compile(r"\bwhen\b|\b(?:what|which)(?:'s|’s| is| was)?\s+(?:the\s+)?(?:[\w-]+\s+)?(?:day|date|time|deadline)\b|"
                        r"\bstill on\b|\bdeadline\b", re.IGNORECASE)
_WHICH = re.compile(r"\b(?:which|what)\s+([a-z]+)\b", re.IGNORECASE)  # "which room", "what level": the noun asked of


# a question gathering values, not asking the one that holds: each is one of those asked of ("How much in deposits have we
# received altogether?" had marked every order's deposit an earlier value of the last order's: found by a café owner)
# ("every" and "in total" ask of one value as often: "… go to the gym every Tuesday?", "… completed in total?": found in review)
_GATHERS = re.compile(r"\b(?:altogether|combined|all together|sum of|add(?:ed)? up|each of (?:the|my|our)|list (?:all|every|the))\b",
                      re.IGNORECASE)
_HOW_MANY = re.compile(r"\bhow many\b", re.IGNORECASE)


# a markdown table's row: its cells' numbers stand under column heads, not beside words of one thing ("| 7b | 2.31 | 12 |"
# under "| run | loss @2k | spikes |"), and one run's table had been an earlier value of another's (about 15 of an ML
# researcher's marks)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$", re.MULTILINE)


def _tabled(text: str) -> bool:
    """`text` holds a markdown table (two rows or more)."""
    return len(_TABLE_ROW.findall(text)) >= 2


def mark_earlier(lead: list[RecallItem], ranked: list[RecallItem], query_words: set[str], query: str = "") -> list[RecallItem]:
    """Note on every item that a later one revised (`earlier; newer: <id>`, naming the best
    placed of those); return `lead` with each revising fact moved up to the place of the first
    fact it revised. `query`: the question as asked (whether it asks when); none for a question gathering values."""
    if _GATHERS.search(query):
        return lead
    when, counted = bool(_ASKS_WHEN.search(query)), bool(_HOW_MANY.search(query))
    which = frozenset(m.group(1).lower() for m in _WHICH.finditer(query))
    query_set = {_unit(w) for w in query_words if not w[0].isdigit()}
    asked = frozenset(m.group().lower() for m in _NAME.finditer(query)) - _NOT_NAMES | frozenset(numbered(query))
    # (the rules read English: in other languages they mark too many values of two things — tried in the thirty-ninth
    # session with their little words no units: a French architect's 15 marks were mostly wrong, a German and Spanish
    # couple's 9 half wrong; and in Spanish "de" beside two numbers had been a shared word of the query, a mother's
    # birthday an earlier value of a training plan — found by a Spanish and German chat's evaluator)
    # (nor from a tool's call or output: a test run's "1 failed, 9 passed" and a commit's "2 files changed" were chained
    # as values of one thing — found by a Claude Code user's evaluation)
    statements = [said(i) for i in [*lead, *ranked] if i.kind in ("fact", "message", "summary", "wiki", "document")
                  and not i.tool and _may_change(i.text) and not beyond_model(i.text) and not _tabled(i.text)]
    statements = [s for s in statements if (s.units or s.under_way or s.done) and s.words & query_set]
    newer_of: dict[str, RecallItem] = {}
    for old in statements:
        later = [new.item for new in statements if new is not old and changed(old, new, query_set, when, which, counted, asked)]
        if later:
            newer = later[0]  # the best placed, so the likeliest to be shown too
            old.item.note = f"earlier; newer: {newer.ref}" + (f"; {old.item.note}" if old.item.note else "")
            newer_of[old.item.id] = newer
    order = list(lead)
    for item in lead:
        revising = newer_of.get(item.id)
        if revising is not None and revising in order and order.index(revising) > order.index(item):
            order.remove(revising)
            order.insert(order.index(item), revising)
    return order
