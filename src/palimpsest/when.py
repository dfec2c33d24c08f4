"""Time expressions: what day, week, month or year a text speaks of, from the moment it was said.

`resolve(text, anchor)` finds the English time expressions of a text — "yesterday", "two
days ago", "last week", "next month", "on Friday", "the 11th", "in 2019", "this summer",
"March 12", "12 May, 2022", "for three years" — and the common Japanese and Chinese ones
("昨日", "先週", "3日前", "2026年10月16日", "上个月", "三天前", "10月16号"), and resolves each
against `anchor` (when the text was written; for a query, its `now`) into a `Span`: a first
and last day, a grain (day, week, weekend, month, season, year) and whether the reading is
`certain`. `words` spells a span the way a question would name it ("1 May 2022 Sunday",
"May 2022", "summer 2023 June July August", "2019"), which is what the indexer adds to a
message's search context so "What did Joanna watch on 1 May, 2022?" finds "I watched it
yesterday" said on 2 May.

Pure and deterministic: the standard library only, no clock (every relative reading needs
an explicit anchor), no locale, nothing from the rest of Palimpsest — so facts can use it
too. It never raises on text: a date that does not exist ("February 30"), a year out of
range, a relative expression with no anchor, or text in another language than these three
resolve to nothing rather than to a guess. Readings that depend on what the speaker meant —
"on Friday" (the last or the next?), "the 11th", "in March" without a year, "for three
years" (since when, exactly?) — come back with `certain=False`, and the ambiguous day ones
with both nearest candidates.

Why no library: dateparser (on the package list, well kept) parses one date string well
but finding expressions inside free text (`search_dates`) is slow — tens of milliseconds a
message, which the indexer cannot pay per turn — and it reads words like "may", "sun" or
"march" as dates; parsedatetime and ctparse are unmaintained since 2020 and 2022. For
Japanese and Chinese, ja-timex reads Japanese only (last released 2023), jionlp Chinese
only (a whole NLP toolkit), chinesetimenlp and its forks are unmaintained: two libraries
beside this table for a few dozen words. The expressions that matter for conversation
memory are a short, testable table.
"""

from __future__ import annotations

import calendar
import re
import string
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name and name.lower() != "may"})
MONTHS["sept"] = 9
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
           "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a couple": 2, "couple of": 2, "a few": 3}
SEASONS = {"spring": (3, 4, 5), "summer": (6, 7, 8), "fall": (9, 10, 11), "autumn": (9, 10, 11), "winter": (12, 1, 2)}
UNCERTAIN_NUMBERS = {"a few", "a couple", "a couple of", "couple of"}
MIN_YEAR, MAX_YEAR = 1000, 2999
# Which words of a text are time expressions, and of what grain, does not depend on the day
# they are read from (but for a 29 February said without its year): a reader that asks only
# that (the facts' classifier and slots) passes this.
ANY_DAY = date(2001, 1, 3)

_MONTH = r"(?P<{g}>" + "|".join(sorted((m for m in MONTHS), key=len, reverse=True)) + r")\.?"
_NUM = r"(?P<n>\d{1,3}|" + "|".join(sorted(map(re.escape, NUMBERS), key=len, reverse=True)) + r")"
_UNIT = r"(?P<unit>day|weekend|week|month|year)s?"
_ORD = r"(?:st|nd|rd|th)?"
_DAY_NAME = r"(?P<wd>" + "|".join(WEEKDAYS) + r")s?"

PATTERNS: list[tuple[str, re.Pattern[str]]] = [(kind, re.compile(p, re.IGNORECASE)) for kind, p in [
    # first: "the 2nd week of November" is a week, not the 2nd
    ("part_month", r"\b(?:the\s+)?(?:(?P<nth>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+(?P<part>week|weekend)|"
                   r"(?P<edge>beginning|start|middle|end))\s+of\s+" + _MONTH.format(g="mon") + r"(?:,?\s+(?P<y>\d{4}))?\b"),
    # "between January and April", "from March to May 2024": one span of the months between
    ("month_range", r"\b(?:between|from)\s+" + _MONTH.format(g="mon") + r"(?:,?\s+(?P<y1>\d{4}))?\s*(?:and|to|until|till|through|thru|-|–)\s*"
                    + _MONTH.format(g="mon2") + r"(?:,?\s+(?P<y>\d{4}))?\b(?!\s+\d)"),
    ("iso", r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b"),
    ("day_month", r"\b(?P<d>\d{1,2})" + _ORD + r"\s+(?:of\s+)?" + _MONTH.format(g="mon") + r"(?:,?\s+(?P<y>\d{4}))?\b"),
    ("month_day", r"\b" + _MONTH.format(g="mon") + r"\s+(?P<d>\d{1,2})" + _ORD + r"(?:,?\s+(?P<y>\d{4}))?\b(?!:)"),
    ("month_year", r"\b" + _MONTH.format(g="mon") + r",?\s+(?:of\s+)?(?P<y>\d{4})\b"),
    ("rel_month", r"\b(?P<rel>last|next|this|in|since|during|early|late|mid)(?:\s+|(?<=mid|rly|ate)-)" + _MONTH.format(g="mon") + r"\b(?!\s+\d)"),
    # a month said alone after a word that bounds a time ("as of April", "by June", "until March"): the word stays out
    ("bare_month", r"(?:(?<=\bof\s)|(?<=\bby\s)|(?<=\bbefore\s)|(?<=\bafter\s)|(?<=\buntil\s)|(?<=\btill\s)|(?<=\bthrough\s))"
                   + _MONTH.format(g="mon") + r"\b(?!\s+\d)"),
    ("year", r"\b(?P<pre>in|since|of|during|from|by|year|back in)\s+(?P<y>\d{4})\b"),
    ("ago", r"\b" + _NUM + r"\s+" + _UNIT + r"\s+(?P<dir>ago|before now|from now)\b"),
    ("in_n", r"\bin\s+" + _NUM + r"\s+" + _UNIT + r"\b"),
    ("for_n", r"\b(?:for|over)\s+(?:the\s+(?:past|last)\s+)?" + _NUM + r"\s+(?P<unit>month|year)s?\b"),
    ("beyond", r"\bthe\s+(?P<unit>week|weekend|month|year)\s+(?P<rel>before\s+last|after\s+next)\b"),  # two back, two on
    ("rel_unit", r"\b(?P<rel>last|next|this|past|coming)\s+(?P<unit>week|weekend|month|year|spring|summer|fall|autumn|winter)\b"),
    ("rel_day", r"\b(?P<rel>last|next|this|on|coming)\s+" + _DAY_NAME + r"\b"),
    ("the_nth", r"\b(?:on\s+)?the\s+(?P<d>\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?(?:century|floor|time|place|grade|birthday|anniversary|week|weekend))"),
    ("holiday", (r"\b(?P<h>christmas eve|christmas day|christmas|xmas|boxing day|new year[’']?s eve|new year[’']?s day|new year[’']?s|"
                 r"valentine[’']?s day|valentines day|valentine[’']?s|halloween|easter sunday|easter monday|easter|thanksgiving|"
                 r"st\.? patrick[’']?s day|independence day)(?:,?\s+(?P<y>\d{4}))?\b")),
    ("deictic", (r"\b(?P<w>the day before yesterday|the day after tomorrow|yesterday|last night|today|tonight|this morning|"
                 r"this afternoon|this evening|tomorrow)\b")),
]]
# every pattern holds one of these words: the text is scanned once for them, and the
# patterns run only on a short window around each (a message of 1,000 characters costs
# tens of microseconds, not the milliseconds of every pattern over all of it)
CATEGORY = {**{w: "deictic" for w in ("yesterday", "today", "tonight", "tomorrow", "morning", "afternoon", "evening", "night")},
            **{w: "unit" for u in ("day", "week", "weekend", "month", "year", *SEASONS) for w in (u, u + "s")},
            **{w: "weekday" for d in WEEKDAYS for w in (d, d + "s")}, **{m: "month" for m in MONTHS},
            **{w: "holiday" for w in ("christmas", "xmas", "boxing", "valentine", "valentines", "halloween", "easter",
                                      "thanksgiving", "patrick", "independence")}}
# the words a pattern cannot match without; a window runs only the patterns it has words for
NEEDS = {"part_month": "month", "iso": "year", "day_month": "month", "month_day": "month", "month_year": "month", "rel_month": "month",
         "month_range": "month", "bare_month": "month", "holiday": ("holiday", "unit"),
         "year": "year", "ago": "unit", "in_n": "unit", "for_n": "unit", "beyond": "unit", "rel_unit": "unit", "rel_day": "weekday",
         "the_nth": "ordinal", "deictic": "deictic"}
DIGITS = re.compile(r"\d+[a-z]*", re.IGNORECASE)
WORD = re.compile(r"[a-z]+")
GATE = frozenset(CATEGORY)
# punctuation, quotes and dashes read as spaces before the gate splits a text into words: "on Saturday!!!", "(yesterday)",
# "yesterday—finally" and a quoted "yesterday" were read as no time when only a few endings were listed
_SPACED = str.maketrans(dict.fromkeys(string.punctuation + "‘’“”„«»‹›—–…¡¿", " "))
PREFIXES = sorted({w[:3] for w in CATEGORY})  # one `find` per three-letter opening, not per word
MAX_CHARS = 4000  # a message's time expressions are looked for in its first 4,000 characters


def _triggers(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every trigger word. A `str.find` per three-letter opening (C
    speed), then the whole word looked up, beats one regular expression with an
    alternation of sixty words by an order of magnitude."""
    low = text.lower()
    if GATE.isdisjoint(low.translate(_SPACED).split()) and not any(map(low.__contains__, "0123456789")):
        return []  # most messages: a few passes in C (a generator here cost as much as the split), no trigger word
    out = []
    for m in DIGITS.finditer(low):
        token = m.group()
        year = token.isdigit() and len(token) == 4
        ordinal = len(token) in (3, 4) and token[-2:] in ("st", "nd", "rd", "th") and token[:-2].isdigit()
        if (year or ordinal) and (m.start() == 0 or not low[m.start() - 1].isalnum()):
            out.append((m.start(), m.end(), "year" if token.isdigit() else "ordinal"))
    for prefix in PREFIXES:
        i = low.find(prefix)
        while i >= 0:
            if i == 0 or not low[i - 1].isalnum():
                word = WORD.match(low, i)
                kind = CATEGORY.get(word.group()) if word else None
                if kind is not None and (word.end() == len(low) or not low[word.end()].isalnum()):  # type: ignore[union-attr]
                    out.append((i, word.end(), kind))  # type: ignore[union-attr]
            i = low.find(prefix, i + 3)
    out.sort()
    return out


WINDOW = 32  # characters either side of a trigger: the longest pattern reaches ~30 from its trigger word


@dataclass(frozen=True)
class Span:
    """The days a time expression speaks of, inclusive, and how sure the reading is."""

    text: str
    first: date
    last: date
    grain: str  # day | week | weekend | month | season | year
    certain: bool = True
    kind: str = field(default="", compare=False)  # the pattern read ("for_n": a duration, how long rather than when)
    at: int = field(default=0, compare=False)  # where the expression starts in the text


def _is_month(token: str, day: bool = False) -> bool:
    """A month name in any case, but "May", "March" and the abbreviations only capitalised
    ("I may go", "we march on", "jan" the name are not months) — unless a day's number is
    beside it and no count's unit after it (`day`, `_NOT_A_DATE`): "appt moved to aug 21", "dec 3
    at 10" (a fast typist's dates had read as no time at all; "2 dec places", "set sep 2 spaces
    wide" are no dates). "may" and "march" with a day are weighed by `_verb_not_date`."""
    full = token.lower() in {n.lower() for n in calendar.month_name if n} - {"may", "march"}
    return full or day or token[:1].isupper()


# "may" or "march" in lower case after a bare number is a verb ("all 14 may come", "the 3 march on") unless the number
# is written as a day ("14th may", "14 of may") or stands where a date does: after "on", "by", "until", … (not "up to":
# "up to 3 may join") or with nothing after the month but punctuation or a year ("my shift on the 14th of may is
# changed" had been the 14th of April: said in chat, where nobody capitalises; found by a Spanish tutor's user). The
# text's end is no such place ("Children under 12 may" had been 12 May: found in review), but at its start a number is
# ("14 may"). Before a number, the same: "may 5 people come?", "may 2 of us join?" are the verb (they had been May 5 and
# May 2), "may 14", "on may 3rd", "march 3, 2027" dates.
_DATE_BEFORE = re.compile(r"(?:^|\b(?:on|by|until|till|from|since|before|after|of|(?<!\bup\s)to)\s+)$", re.IGNORECASE)
_WRITTEN_AS_DAY = re.compile(r"\d+(?:(?:st|nd|rd|th)\b|\s+of\s)", re.IGNORECASE)
_DATE_AFTER = re.compile(r"\s*(?:[^\w\s]|\d{4}\b)")
_DAY_AFTER = re.compile(r"\s*(?:[^\w\s]|$)")  # after "may 14": the text's end or punctuation


def _verb_not_date(kind: str, m: re.Match[str]) -> bool:
    """Whether a lower-case "may" or "march" beside a day's number (`m`, of `kind`) is the verb."""
    if m.group("mon")[:1].isupper() or m.group("mon").lower() not in ("may", "march"):
        return False
    before = m.string[:m.start()]
    if kind == "month_day":  # "may 14", "on may 3rd"
        written_as_day = re.search(r"\d(?:st|nd|rd|th)\b", m.group(0), re.IGNORECASE) or m.group("y")
        return not (written_as_day or before.strip() and _DATE_BEFORE.search(before) or _DAY_AFTER.match(m.string, m.end()))
    written_as_day = _WRITTEN_AS_DAY.match(m.group(0))
    return not (written_as_day or _DATE_BEFORE.search(before) or _DATE_AFTER.match(m.string, m.end()))


# what never follows a date written in lower case: a count's unit ("2 dec places", "set sep 2 spaces wide", "mar 3 of the
# panels"); any other word may ("appt moved to aug 21 w dr patel", "flight dec 20 to lisbon": found in review)
_NOT_A_DATE = re.compile(r"\s*(?:places|spaces|points|digits|decimals|bits|bytes|chars|characters|px|pt|lines|columns|rows|"
                         r"times|miles|km|kilometres|kilometers|hours|steps|blocks|abreast|of the|of a|of an)\b", re.IGNORECASE)


def _day(anchor: datetime | date | None) -> date | None:
    if anchor is None:
        return None
    return anchor.date() if isinstance(anchor, datetime) else anchor


def _month_span(text: str, year: int, month: int, certain: bool = True) -> Span | None:
    if not MIN_YEAR <= year <= MAX_YEAR:
        return None
    return Span(text, date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]), "month", certain)


def _nearest_year(anchor: date, month: int, day: int = 1) -> list[int]:
    """Years that put month/day nearest the anchor: the closest occurrence first, then the other side."""
    out = []
    for year in (anchor.year, anchor.year - 1, anchor.year + 1):
        try:
            out.append((abs((date(year, month, day) - anchor).days), year))
        except ValueError:
            continue
    return [y for _, y in sorted(out)][:1]


def _year_of(anchor: date, month: int, day: int, tense: str | None) -> int:
    """The year of a month and day said without one: the one gone by when the words around
    are in the past tense ("What happened on March 3?" asked in December), the coming one in
    the future tense, else the nearest."""
    if tense == "past":
        return anchor.year if (month, day) <= (anchor.month, anchor.day) else anchor.year - 1
    if tense == "future":
        return anchor.year if (month, day) >= (anchor.month, anchor.day) else anchor.year + 1
    return (_nearest_year(anchor, month, day) or [0])[0]


def _shift_month(d: date, months: int) -> tuple[int, int]:
    total = d.year * 12 + d.month - 1 + months
    return total // 12, total % 12 + 1


def _number(text: str) -> int | None:
    text = " ".join(text.lower().split())
    if text.isdigit():
        return int(text)
    return NUMBERS.get(text)


def _absolute(kind: str, m: re.Match[str], anchor: date | None, tense: str | None = None) -> list[Span]:
    g = m.groupdict()
    month = int(g["m"]) if kind == "iso" else MONTHS[g["mon"].lower()]
    if kind != "iso" and not _is_month(g["mon"], day=kind in ("day_month", "month_day") and not _NOT_A_DATE.match(m.string, m.end())):
        return []
    if kind in ("day_month", "month_day") and _verb_not_date(kind, m):
        return []
    year = int(g["y"]) if g.get("y") else None
    if kind == "month_year":
        span = _month_span(m.group(0), year or 0, month)
        return [span] if span else []
    day = int(g["d"])
    certain = year is not None
    if year is None:
        if anchor is None:
            return []
        year = _year_of(anchor, month, min(day, 28), tense)
    if not MIN_YEAR <= year <= MAX_YEAR:
        return []
    try:
        d = date(year, month, day)
    except ValueError:  # February 30: no such day, so no reading
        return []
    if _WEEK_OF.search(m.string[max(0, m.start() - 20):m.start()]):
        # "the week of March 17": the week that day is in, Monday to Sunday (it had been the one day, and a question
        # about that week missed what was said on the 19th: found by a French-speaking architect)
        monday = d - timedelta(days=d.weekday())
        return [Span(m.group(0), monday, monday + timedelta(days=6), "week", certain)]
    return [Span(m.group(0), d, d, "day", certain)]


_WEEK_OF = re.compile(r"\bweek\s+of\s+(?:the\s+)?$", re.IGNORECASE)


def _relative_month(m: re.Match[str], anchor: date, tense: str | None = None) -> list[Span]:
    rel, month = (m.groupdict().get("rel") or "").lower(), MONTHS[m.group("mon").lower()]
    if not _is_month(m.group("mon")):
        return []
    if rel == "last":
        year = anchor.year if month < anchor.month else anchor.year - 1
    elif rel == "next":
        year = anchor.year if month > anchor.month else anchor.year + 1
    elif rel == "this":
        year = anchor.year
    elif rel == "since" or tense == "past":  # "What did I do in February?" asked in December: the February gone by
        year = anchor.year if month <= anchor.month else anchor.year - 1  # (it had been the coming one)
    elif tense == "future":
        year = anchor.year if month >= anchor.month else anchor.year + 1
    else:  # in / during / early / late / mid, no tense said: the nearest one, past or coming
        year = _nearest_year(anchor, month, 15)[0]
    span = _month_span(m.group(0), year, month, certain=rel in ("last", "next", "this"))
    return [span] if span else []


def _month_range(m: re.Match[str], anchor: date | None, tense: str | None = None) -> list[Span]:
    """"between January and April" (all of both and the months between), in the year said, or
    else the one the tense gives the first month."""
    if not (_is_month(m.group("mon")) and _is_month(m.group("mon2"))):
        return []
    first, last = MONTHS[m.group("mon").lower()], MONTHS[m.group("mon2").lower()]
    wraps = last < first  # "from November to February"
    if m.group("y1"):
        year = int(m.group("y1"))
    elif m.group("y"):
        year = int(m.group("y")) - wraps
    elif anchor is not None:
        year = _year_of(anchor, first, 1, tense) if tense else _nearest_year(anchor, first, 15)[0]
    else:
        return []
    end_year = year + wraps
    if not (MIN_YEAR <= year and end_year <= MAX_YEAR):
        return []
    return [Span(m.group(0), date(year, first, 1), date(end_year, last, calendar.monthrange(end_year, last)[1]), "month",
                 certain=bool(m.group("y1") or m.group("y")))]


FIXED_HOLIDAYS = {"christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25), "xmas": (12, 25),
                  "boxing day": (12, 26), "new year's eve": (12, 31), "new year's day": (1, 1), "new year's": (1, 1),
                  "valentine's day": (2, 14), "valentines day": (2, 14), "valentine's": (2, 14), "halloween": (10, 31),
                  "st patrick's day": (3, 17), "st. patrick's day": (3, 17), "independence day": (7, 4)}


def _easter(year: int) -> date:
    """Easter Sunday of `year` (Gregorian; the anonymous algorithm of Meeus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    w = (32 + 2 * e + 2 * i - h - k) % 7
    n = (a + 11 * h + 22 * w) // 451
    month, day = divmod(h + w - 7 * n + 114, 31)
    return date(year, month, day + 1)


def _holiday(m: re.Match[str], anchor: date | None, tense: str | None = None) -> list[Span]:
    """A holiday's day: Christmas, New Year's Eve, Valentine's Day, Halloween, Easter (Sunday or Monday), US
    Thanksgiving (the fourth Thursday of November); in the year said, or else the one the tense gives, or the nearest."""
    name = " ".join(m.group("h").lower().replace("’", "'").split())
    name = {"new years eve": "new year's eve", "new years day": "new year's day", "new years": "new year's",
            "valentines": "valentine's", "st patricks day": "st patrick's day", "st. patricks day": "st. patrick's day"}.get(name, name)
    movable = {"easter": lambda y: _easter(y), "easter sunday": lambda y: _easter(y),
               "easter monday": lambda y: _easter(y) + timedelta(days=1),
               "thanksgiving": lambda y: date(y, 11, 22 + (3 - date(y, 11, 22).weekday()) % 7)}
    around = FIXED_HOLIDAYS.get(name, (4, 10) if name.startswith("easter") else (11, 25))
    if m.group("y"):
        year, certain = int(m.group("y")), True
    elif anchor is not None:
        year, certain = _year_of(anchor, *around, tense), False
    else:
        return []
    if not MIN_YEAR <= year <= MAX_YEAR:
        return []
    if name not in movable and name not in FIXED_HOLIDAYS:
        return []
    d = movable[name](year) if name in movable else date(year, *FIXED_HOLIDAYS[name])
    return [Span(m.group(0), d, d, "day", certain)]


NTH = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": -1}
EDGES = {"beginning": (1, 10), "start": (1, 10), "middle": (11, 20), "end": (21, 31)}  # the thirds of a month


def _part_of_month(m: re.Match[str], anchor: date | None, tense: str | None = None) -> list[Span]:
    """"the second week of November" (days 8–14), "the last weekend of May" (its last
    Saturday and Sunday), "the beginning / middle / end of March" (a third of it); the
    year named, or else the nearest to the anchor (then not certain)."""
    month = MONTHS[m.group("mon").lower()]
    if not _is_month(m.group("mon")):
        return []
    if m.group("y"):
        year, certain = int(m.group("y")), True
    elif anchor is not None:
        year, certain = _year_of(anchor, month, 15, tense), False
    else:
        return []
    if not MIN_YEAR <= year <= MAX_YEAR:
        return []
    days, text = calendar.monthrange(year, month)[1], m.group(0)
    if m.group("edge"):
        first, last = EDGES[m.group("edge").lower()]
        return [Span(text, date(year, month, first), date(year, month, min(last, days)), "month", certain)]
    n = NTH[m.group("nth").lower()]
    if m.group("part").lower() == "week":
        first = days - 6 if n < 0 else 7 * (n - 1) + 1
        return [Span(text, date(year, month, first), date(year, month, first + 6), "week", certain)]
    saturdays = [d for d in range(1, days + 1) if date(year, month, d).weekday() == 5]
    saturday = date(year, month, saturdays[n if n < 0 else n - 1])
    return [Span(text, saturday, saturday + timedelta(days=1), "weekend", certain)]


def _offset(n: int, unit: str, anchor: date, sign: int, text: str, certain: bool) -> list[Span]:
    try:
        if unit == "day":
            d = anchor + timedelta(days=sign * n)
            return [Span(text, d, d, "day", certain)]
        if unit == "week":
            d = anchor + timedelta(days=sign * 7 * n)
            return [Span(text, d - timedelta(days=3), d + timedelta(days=3), "week", certain)]
        if unit == "weekend":  # "two weekends ago": the weekend before last; said on a weekend, counted from it
            wd = anchor.weekday()
            if wd >= 5:
                saturday = anchor - timedelta(days=wd - 5) + timedelta(weeks=sign * n)
            else:
                nearest = anchor - timedelta(days=wd + 2) if sign < 0 else anchor + timedelta(days=5 - wd)
                saturday = nearest + timedelta(weeks=sign * (n - 1))
            return [Span(text, saturday, saturday + timedelta(days=1), "weekend", certain)]
        if unit == "month":
            span = _month_span(text, *_shift_month(anchor, sign * n), certain=certain)
            return [span] if span else []
        year = anchor.year + sign * n
        return [Span(text, date(year, 1, 1), date(year, 12, 31), "year", certain)] if MIN_YEAR <= year <= MAX_YEAR else []
    except (OverflowError, ValueError):
        return []


def _season(text: str, season: str, year: int, certain: bool) -> Span | None:
    """The `season` that starts in `year` (winter: December to February of the next year)."""
    months = SEASONS[season]
    if not MIN_YEAR <= year < MAX_YEAR:
        return None
    end_year = year + 1 if months[-1] < months[0] else year
    return Span(text, date(year, months[0], 1), date(end_year, months[-1], calendar.monthrange(end_year, months[-1])[1]),
                "season", certain)


def _season_of(text: str, season: str, rel: str, anchor: date) -> Span | None:
    """this / last / next `season` at `anchor`: the one under way or of this year, the
    latest one over before it, the first one starting after it. "Last summer" said in
    October is that year's (marked uncertain: some mean the year before)."""
    occurrences = [o for o in (_season(text, season, y, True) for y in range(anchor.year - 2, anchor.year + 2)) if o]
    if rel == "this":
        inside = [o for o in occurrences if o.first <= anchor <= o.last]
        this_year = [o for o in occurrences if o.first.year == anchor.year]
        found = inside or this_year
        return found[0] if found else None
    if rel in ("last", "past"):
        over = [o for o in occurrences if o.last < anchor]
        if not over:
            return None
        o = over[-1]
        return Span(text, o.first, o.last, "season", certain=o.first.year != anchor.year)
    coming = [o for o in occurrences if o.first > anchor]
    return coming[0] if coming else None


def _relative_unit(m: re.Match[str], anchor: date) -> list[Span]:
    rel, unit, text = " ".join(m.group("rel").lower().split()), m.group("unit").lower(), m.group(0)
    step = {"last": -1, "past": -1, "next": 1, "coming": 1, "this": 0, "before last": -2, "after next": 2}[rel]
    if unit in SEASONS:
        span = _season_of(text, "fall" if unit == "autumn" else unit, rel, anchor)
        return [span] if span else []
    return _step_unit(unit, step, anchor, text)


def _step_unit(unit: str, step: int, anchor: date, text: str) -> list[Span]:
    """The week, weekend, month or year `step` of them from the one `anchor` is in (-1: last week, 0: this, 1: next)."""
    if unit == "week":
        monday = anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=step)
        return [Span(text, monday, monday + timedelta(days=6), "week")]
    if unit == "weekend":
        saturday = anchor + timedelta(days=(5 - anchor.weekday()) % 7)  # this or the coming Saturday
        if anchor.weekday() == 6:
            saturday = anchor - timedelta(days=1)
        saturday += timedelta(weeks=step)
        return [Span(text, saturday, saturday + timedelta(days=1), "weekend")]
    if unit == "month":
        span = _month_span(text, *_shift_month(anchor, step))
        return [span] if span else []
    year = anchor.year + step
    return [Span(text, date(year, 1, 1), date(year, 12, 31), "year")] if MIN_YEAR <= year <= MAX_YEAR else []


def _weekday(m: re.Match[str], anchor: date, tense: str | None = None) -> list[Span]:
    """last / next / this / on a day of the week; "on Friday" is either the last or the coming
    one, unless the words around it are told only in the past ("We moved on Saturday!", said on
    a Monday, is the Saturday gone by) or only of what is to come ("I'm flying on Friday")."""
    rel, wd, text = m.group("rel").lower(), WEEKDAYS[m.group("wd").lower()], m.group(0)
    back = (anchor.weekday() - wd) % 7 or 7  # days back to the last such day before the anchor
    ahead = (wd - anchor.weekday()) % 7 or 7
    before, after = anchor - timedelta(days=back), anchor + timedelta(days=ahead)
    if rel == "last":
        return [Span(text, before, before, "day")]
    if rel in ("next", "coming"):
        return [Span(text, after, after, "day", certain=False)]  # next Friday: this coming one, or the one after?
    if rel == "this":
        d = anchor - timedelta(days=anchor.weekday()) + timedelta(days=wd)
        return [Span(text, d, d, "day")]
    if tense == "past":
        return [Span(text, before, before, "day", False)]
    if tense == "future":
        return [Span(text, after, after, "day", False)]
    return [Span(text, before, before, "day", False), Span(text, after, after, "day", False)]  # on Friday: said of either


def _nth(m: re.Match[str], anchor: date, tense: str | None = None) -> list[Span]:
    """The nearest day of that number; said of the future ("I'm going to my parents on the 23rd", on the 24th),
    the nearest one not before the day it was said, of the past the nearest not after (it had been the day before)."""
    day = int(m.group("d"))
    spans = []
    for months in (0, -1, 1):
        year, month = _shift_month(anchor, months)
        try:
            d = date(year, month, day)
        except ValueError:
            continue
        if tense == "future" and d < anchor or tense == "past" and d > anchor:
            continue
        spans.append((abs((d - anchor).days), d))
    return [Span(m.group(0), d, d, "day", False) for _, d in sorted(spans)[:1]]


# the past of the irregular verbs a happening is told with (the regular ones end in -ed); the facts' classifier reads them too
IRREGULAR_PAST = "got|went|had|made|took|met|saw|ran|bought|sold|won|lost|left|began|flew|drove|came|became|gave|found|wrote|built|sent|spent|paid|hit"
# a past verb a day of the week is told with, besides `_BEHIND`'s ("On Saturday I took the kids to the museum"); not
# "had" ("I had planned to fly on Friday" says neither day)
_PAST_VERB = (rf"(?:{'|'.join(v for v in IRREGULAR_PAST.split('|') if v != 'had')}|told|said|ate|drank|felt|kept|held|"
              r"brought|thought|caught|broke|fell|rode|swam|chose|forgot|heard|slept|spoke|stood|threw|woke|wore|\w*[^\We]ed)")
_SAID_PAST = re.compile(rf"\b(?:i|we|he|she|they|you|it)\s+(?:just\s+|finally\s+|already\s+)?{_PAST_VERB}\b|\b(?:took|made|gave|"
                        r"told|ate|spent|paid|lost|won|found|brought|caught|sold|sent|broke|fell|drove)\b", re.IGNORECASE)
# a day something was planned, booked or moved for is still to come ("We planned Dad's 70th: party on May 23", "I moved
# the flight to Wednesday the 18th", "Booked the hotel: 5 nights from the 16th"), though the planning is past
_PLANNED_FOR = re.compile(r"\b(?:plann?(?:ed)?|schedul(?:ed?)?|book(?:ed)?|reserv(?:ed?)?|arrang(?:ed?)?|reschedul(?:ed?)?|postpon(?:ed?)?|"
                          r"set)\b[^.!?;]{0,40}?\b(?:for|on|from|to|until|till)\s+(?:\w+\s+)?$|"
                          r"\b(?:moved?|push(?:ed)?|delay(?:ed)?|bump(?:ed)?|shift(?:ed)?|chang(?:ed?)?)\b[^.!?;]{0,40}?\b(?:to|until|till)\s+(?:\w+\s+)?$|"
                          r"\b(?:is|'s|are|'re)\s+now\s+(?:on\s+|for\s+|set\s+for\s+)?$",  # "it's now September 22"
                          re.IGNORECASE)
_SINCE = re.compile(r"\bsince\s+(?:the\s+)?$", re.IGNORECASE)
_REPLACED = re.compile(r"\b(?:instead\s+of|rather\s+than)\s+(?:on\s+)?$", re.IGNORECASE)  # the day a plan had: the nearest
_AHEAD = re.compile(r"\b(?:will|'ll|shall|won'?t|shan'?t|going to|gonna|plan(?:ning)? to|need to|want to|have to|booked (?:for|on)|scheduled|due|(?:am|'m|are|'re|is|'s)"
                    r"\s+(?!\w+ing\s+(?:on|about)\b)\w+ing)\b", re.IGNORECASE)
# besides the future's verbs, what one "can" still do and "the next" of something are to come: "the next date I can get
# is in November", said in April, is the coming November (it had been the nearest, the last one: found by a Spanish
# tutor's user, whose exam moved from May to November); "the next day" and "the next time" of a story are not. They
# are weaker than a verb told in the past ("the next invoice arrived in December", "I can still remember the trip in
# November", "he can barely walk since his fall in December" had been the coming month: found in review), and "can"
# speaks only of its own clause
_CAN = re.compile(r"\b(?:i|we|you|he|she|they)\s+can\s+\w+", re.IGNORECASE)
_NEXT = re.compile(r"\b(?:the|my|our|your|his|her|their)\s+next\s+(?!(?:day|morning|afternoon|evening|night|week|weekend|month|year|time)s?\b)\w+\b",
                   re.IGNORECASE)
_TOLD_BEFORE = re.compile(rf"\b(?:since|remember(?:s|ed)?|recall(?:s|ed)?|{_PAST_VERB})\b", re.IGNORECASE)
_BEHIND = re.compile(r"\b(?:was|were|did|had|went|got|came|left|ago|finished|happened|met|flew|saw|bought|quit)\b|"
                     r"\b(?:i|we|he|she|they|you)\s+(?:just\s+|finally\s+|already\s+)?\w*[^\We]ed\b", re.IGNORECASE)  # not "need"


def _tense(text: str, clause: str | None = None) -> str | None:
    """"future" or "past" when the words around a date (`text`; the date's own `clause` of it, if given) say only one
    of them, else None."""
    maybe_ahead = bool(_NEXT.search(text) or _CAN.search(text if clause is None else clause))
    ahead = bool(_AHEAD.search(text)) or maybe_ahead and not _TOLD_BEFORE.search(text)
    behind = bool(_BEHIND.search(text))
    return "future" if ahead and not behind else "past" if behind and not ahead else None


def _verb_tense(before: str, after: str = "") -> str | None:
    """The tense of the verb a day of the week is said with: the last three words before it, in its sentence ("We moved on
    Saturday", "I'm flying out on Friday"), else the first three after it, in its clause ("Sintra on Friday was the
    highlight", "On Saturday I took the kids"), else a subject's past verb earlier in its sentence ("I twisted my knee on
    Sunday"); "The party was great. See you on Friday" and "I was thinking we go on Saturday" say neither of the day,
    which stays either the last or the coming one."""
    sentence = re.split(r"[.!?;]\s", before)[-1]
    near = " ".join(sentence.split()[-3:])
    tense = _tense(near) or ("past" if _SAID_PAST.search(near) else None)
    if tense:
        return tense
    clause = re.split(r"[.!?;,]\s|\s[-–—]\s", after.lstrip(" ,"))[0]
    following = " ".join(clause.split()[:3])
    tense = _tense(following) or ("past" if _SAID_PAST.search(following) else None)
    if tense or any(p.search(sentence + " " + clause) for p in (_AHEAD, _NEXT, _CAN)):
        return tense
    return "past" if _SAID_PAST.search(sentence) else None


def _date_tense(text: str, start: int, end: int) -> str | None:
    """The tense a date (at `start`–`end` of `text`) is told in: "future" when it is what something was planned, booked,
    moved or changed for, or what it is "now"; none said for the day a plan had ("instead of September 8"); else the tense of the words of its own sentence alone ("Birthday yesterday was great. On May 23 we fly"
    is not told in the past)."""
    cuts = [c.end() for c in re.finditer(r"[.!?;]\s", text[:start])]
    begin = cuts[-1] if cuts else 0
    if _PLANNED_FOR.search(text[begin:start]):
        return "future"
    if _REPLACED.search(text[begin:start]):
        return None
    if _SINCE.search(text[begin:start]):  # "since 4 may we've been here", said on 14 April: the May gone by (it was the coming one)
        return "past"
    after = re.search(r"[.!?;](?:\s|$)", text[end:])
    sentence = text[begin:end + after.start() if after else len(text)]
    clause = re.split(r"[,:]\s|\s[-–—]\s", text[begin:start])[-1] + re.split(r"[,:]\s|\s[-–—]\s", text[start:])[0]
    return _tense(sentence, clause)


DEICTIC = {"the day before yesterday": -2, "yesterday": -1, "last night": -1, "today": 0, "tonight": 0, "this morning": 0,
           "this afternoon": 0, "this evening": 0, "tomorrow": 1, "the day after tomorrow": 2}


TENSED = frozenset(["day_month", "month_day", "part_month", "rel_month", "bare_month", "month_range", "holiday", "the_nth"])  # read with the tense of the words around them


def _one(kind: str, m: re.Match[str], anchor: date | None, tense: str | None = None) -> list[Span]:
    if kind in ("iso", "day_month", "month_day", "month_year"):
        return _absolute(kind, m, anchor, tense)
    if kind == "part_month":
        return _part_of_month(m, anchor, tense)
    if kind == "month_range":
        return _month_range(m, anchor, tense)
    if kind == "holiday":
        return _holiday(m, anchor, tense)
    if kind == "year":
        year = int(m.group("y"))
        return [Span(m.group(0), date(year, 1, 1), date(year, 12, 31), "year")] if MIN_YEAR <= year <= MAX_YEAR else []
    if anchor is None:
        return []  # every other reading counts from when it was said
    if kind == "deictic":
        d = anchor + timedelta(days=DEICTIC[" ".join(m.group("w").lower().split())])
        return [Span(m.group(0), d, d, "day")]
    if kind in ("ago", "in_n", "for_n"):
        n = _number(m.group("n"))
        if n is None or n > 200:
            return []
        sign = 1 if kind == "in_n" or m.groupdict().get("dir", "").lower() == "from now" else -1
        certain = kind != "for_n" and m.group("n").lower() not in UNCERTAIN_NUMBERS
        return _offset(n, m.group("unit").lower(), anchor, sign, m.group(0), certain)
    if kind in ("rel_unit", "beyond"):
        return _relative_unit(m, anchor)
    return {"rel_month": _relative_month, "bare_month": _relative_month, "rel_day": _weekday, "the_nth": _nth}[kind](m, anchor, tense)


def _windows(text: str) -> list[tuple[int, int, set[str]]]:
    """Stretches of `text` around trigger words, merged, widened to whole words, each with
    the kinds of trigger it holds."""
    out: list[tuple[int, int, set[str]]] = []
    for t_start, t_end, category in _triggers(text):
        start, end = max(0, t_start - WINDOW), min(len(text), t_end + WINDOW)
        while start > 0 and not text[start - 1].isspace():
            start -= 1
        while end < len(text) and not text[end].isspace():
            end += 1
        if out and start <= out[-1][1]:
            out[-1][2].add(category)
            out[-1] = (out[-1][0], max(out[-1][1], end), out[-1][2])
        else:
            out.append((start, end, {category}))
    return out


# Japanese and Chinese write their times without spaces ("先週パブリッシャーから何が来た？", "三天前李伟报告了什么问题？"),
# so the English gate, which looks for whole words between spaces, never saw them and a Japanese game developer's
# questions named no time (nor did her Chinese collaborator's messages at index time). They have a table of their own,
# read in the same kinds as the English ones (a reader of `Span.kind` — the facts, the earlier-and-newer marks — takes
# "2026年10月16日" as it takes "16 October 2026"). `\d` is Unicode's, and `int` reads it: full-width "２０２７年６月" too.
CJK_DAYS = {"一昨日": -2, "おととい": -2, "前天": -2, "昨日": -1, "きのう": -1, "昨天": -1, "今日": 0, "今天": 0,
            "明後日": 2, "あさって": 2, "后天": 2, "後天": 2, "明日": 1, "あした": 1, "明天": 1}
CJK_UNITS = {word: unit_step for unit_step, said in {
    ("week", -2): "先々週 上上周", ("week", -1): "先週 上週 上周 上星期 上个星期 上個星期",
    ("week", 0): "今週 本周 这周 這週 这星期 这个星期 這個星期", ("week", 1): "来週 下週 下周 下星期 下个星期 下個星期",
    ("week", 2): "再来週 下下周", ("weekend", -1): "先週末 上周末", ("weekend", 0): "今週末 这周末 本周末", ("weekend", 1): "来週末 下周末",
    ("month", -2): "先々月", ("month", -1): "先月 上个月 上個月", ("month", 0): "今月 本月 这个月 這個月",
    ("month", 1): "来月 下个月 下個月", ("month", 2): "再来月", ("year", -2): "一昨年 おととし", ("year", -1): "去年 昨年",
    ("year", 0): "今年", ("year", 1): "来年 明年", ("year", 2): "再来年"}.items() for word in said.split()}
CJK_COUNTED = {"日": "day", "天": "day", "週間": "week", "週": "week", "周": "week", "星期": "week", "个星期": "week",
               "個星期": "week", "ヶ月": "month", "ケ月": "month", "か月": "month", "カ月": "month", "ヵ月": "month",
               "箇月": "month", "个月": "month", "個月": "month", "年": "year"}


def _longest_first(words: Iterable[str]) -> str:
    """An alternation of `words`, the longest first: 一昨日 is read before 昨日 can be."""
    return "|".join(sorted(words, key=len, reverse=True))


_CJK_NUM = r"(?P<n>(?<!\d)\d{1,3}|[一二三四五六七八九十两兩]{1,3})"
_NO_DAY = r"(?!\s*\d{1,2}\s*[日号號])"
CJK_PATTERNS: list[tuple[str, re.Pattern[str]]] = [(kind, re.compile(p)) for kind, p in [
    ("iso", r"(?<!\d)(?P<y>\d{4})\s*年\s*(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号號]"),
    ("iso", r"(?<![\d/])(?P<y>\d{4})/(?P<m>\d{1,2})/(?P<d>\d{1,2})(?![\d/])"),  # 2026/10/16: a date in digits
    # a day that does not exist (2026年2月30日) leaves no reading of its month or year either, as "February 30, 2026"
    ("month_year", r"(?<!\d)(?P<y>\d{4})\s*年\s*(?P<m>\d{1,2})\s*月" + _NO_DAY),
    ("month_day", r"(?<!\d)(?P<m>\d{1,2})\s*月\s*(?P<d>\d{1,2})\s*[日号號]"),
    ("rel_month", r"(?<!\d)(?P<m>\d{1,2})\s*月" + _NO_DAY),  # 10月: "3ヶ月", "3个月" (three months) hold a counter between
    ("year", r"(?<!\d)(?P<y>\d{4})\s*年(?!\s*\d{1,2}\s*月)"),
    ("ago", _CJK_NUM + r"\s*(?P<unit>" + _longest_first(CJK_COUNTED) + r")\s*前(?!後|半)"),  # 3日前; 3日前後 is "about"
    ("in_n", _CJK_NUM + r"\s*(?P<unit>" + _longest_first(CJK_COUNTED) + r")\s*[後后]"),
    # 以上 / 以下 are "above" and "below", 日本周辺 Japan's surroundings, 基本月額 a basic monthly fee: no times
    ("rel_unit", r"(?<![以日基])(?P<w>" + _longest_first(CJK_UNITS) + r")(?![期辺边长長围圍額额])"),
    ("deictic", r"(?P<w>" + _longest_first(CJK_DAYS) + r")"),
]]
# every pattern holds one of these, and the patterns run only on a short stretch around each (over a whole message of
# 234 characters they had cost ~100 µs, ten times its English reading); an English message holds none, a test in C
_CJK_TIME = re.compile(r"[年月日号號周週期天]|きのう|おととい|あした|あさって|\d/\d{1,2}/\d")
CJK_WINDOW = 12  # characters either side: "二十五个星期前" and "2026 年 10 月 16 日" reach no further from a time character


def _cjk_windows(text: str) -> list[tuple[int, int]]:
    """Stretches of `text` around its time characters, merged, not ending inside a number."""
    if text.isascii() and "/" not in text:
        return []  # most messages
    out: list[tuple[int, int]] = []
    for m in _CJK_TIME.finditer(text):
        start, end = max(0, m.start() - CJK_WINDOW), min(len(text), m.end() + CJK_WINDOW)
        while end < len(text) and text[end].isdigit():
            end += 1
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _cjk_number(said: str) -> int:
    """12, １２ (full-width), 三, 十, 十二, 二十五: a count in digits or in Chinese numerals to ninety-nine (0: none)."""
    if said.isdigit():
        return int(said)
    tens, ten, ones = said.partition("十")
    if not ten:
        return _cjk_digit(said) if len(said) == 1 else 0
    if len(tens) > 1 or len(ones) > 1:
        return 0
    return (_cjk_digit(tens) if tens else 1) * 10 + (_cjk_digit(ones) if ones else 0)


def _cjk_digit(said: str) -> int:
    return 2 if said == "两" else int(unicodedata.numeric(said))  # 两 ("two of") has no numeric value in Unicode's tables


def _cjk_one(kind: str, m: re.Match[str], anchor: date | None) -> list[Span]:
    """One Japanese or Chinese expression, read as the English of its kind reads."""
    g, text = m.groupdict(), m.group(0)
    if kind == "year":
        year = int(g["y"])
        return [Span(text, date(year, 1, 1), date(year, 12, 31), "year")] if MIN_YEAR <= year <= MAX_YEAR else []
    if kind in ("iso", "month_year", "month_day", "rel_month"):
        return _cjk_calendar(kind, m, anchor)
    if anchor is None:
        return []  # every other reading counts from when it was said
    if kind == "deictic":
        d = anchor + timedelta(days=CJK_DAYS[g["w"]])
        return [Span(text, d, d, "day")]
    if kind == "rel_unit":
        return _step_unit(*CJK_UNITS[g["w"]], anchor, text)
    n = _cjk_number(g["n"])
    if not 0 < n <= 200:
        return []
    return _offset(n, CJK_COUNTED[g["unit"]], anchor, -1 if kind == "ago" else 1, text, True)


def _cjk_calendar(kind: str, m: re.Match[str], anchor: date | None) -> list[Span]:
    """A day or month of the calendar; said without its year, the nearest one (not certain: no tense is read in these
    languages, so "10月に何を決めた？" asked in December is this October, and "6月に出す" said in November last June)."""
    g, text = m.groupdict(), m.group(0)
    month = int(g["m"])
    if not 1 <= month <= 12:
        return []
    if g.get("y"):
        year = int(g["y"])
    elif anchor is not None:
        year = _nearest_year(anchor, month, min(int(g.get("d") or 15), 28))[0]
    else:
        return []
    if kind in ("month_year", "rel_month"):
        span = _month_span(text, year, month, certain=kind == "month_year")
        return [span] if span else []
    try:
        d = date(year, month, int(g["d"]))
    except ValueError:  # 2月30日: no such day, so no reading
        return []
    return [Span(text, d, d, "day", certain=kind == "iso")] if MIN_YEAR <= year <= MAX_YEAR else []


def _japanese_and_chinese(text: str, anchor: date | None, taken: list[tuple[int, Span]]) -> list[tuple[int, Span]]:
    """The Japanese and Chinese time expressions of `text`, where no English reading (`taken`) already stands."""
    windows = _cjk_windows(text)
    held = [(at, at + len(s.text)) for at, s in taken]
    found: list[tuple[int, Span]] = []
    for (start, end), (kind, pattern) in ((w, p) for p in CJK_PATTERNS for w in windows):
        for m in pattern.finditer(text, start, end):  # (a lookbehind still sees the characters before `start`)
            if any(m.start() < end and start < m.end() for start, end in held):
                continue  # a longer reading of the same characters came first
            spans = _cjk_one(kind, m, anchor)
            if spans:
                held.append((m.start(), m.end()))
                found.extend((m.start(), replace(s, kind=kind, at=m.start())) for s in spans)
    return found


def resolve(text: str, anchor: datetime | date | None = None) -> list[Span]:
    """The time expressions of `text` resolved against `anchor`, in order of appearance.
    Never raises for any text; an expression it cannot resolve is left out."""
    if not isinstance(text, str) or not text:
        return []
    text = text[:MAX_CHARS]
    day = _day(anchor)
    found = _agree(_english(text, day), text)
    found += _japanese_and_chinese(text, day, found)
    return [s for _, s in sorted(found, key=lambda p: p[0])]


def _english(text: str, day: date | None) -> list[tuple[int, Span]]:
    """The English time expressions of `text`, each with where it starts."""
    found: list[tuple[int, Span]] = []
    for w_start, w_end, held in _windows(text):  # none in most messages
        window = text[w_start:w_end]
        taken: list[tuple[int, int]] = []
        here: list[tuple[int, Span]] = []
        for kind, pattern in PATTERNS:
            needs = NEEDS[kind]
            if (needs not in held) if isinstance(needs, str) else held.isdisjoint(needs):
                continue
            for m in pattern.finditer(window):
                if any(m.start() < end and start < m.end() for start, end in taken):
                    continue  # a longer reading of the same words came first
                tense = (_date_tense(window, m.start(), m.end()) if kind in TENSED else
                         _verb_tense(window[:m.start()], window[m.end():]) if kind == "rel_day" else None)
                spans = _one(kind, m, day, tense)
                if spans:
                    taken.append((m.start(), m.end()))
                    here.extend((w_start + m.start(), replace(s, kind=kind, at=w_start + m.start())) for s in spans)
        found.extend(_one_year(here, text))
    return found


def _agree(found: list[tuple[int, Span]], text: str) -> list[tuple[int, Span]]:
    """A month said without its year ("in November") takes the year of a day of that month said in the same sentence
    ("13 November"): the day is the more specific reading, and one sentence speaks of one November ("the next date I
    can get is in November — the DELE B1 is now on 13 November" had read the November gone by and the coming 13th)."""
    days = [(_sentence(text, at), s) for at, s in found if s.grain == "day" and s.kind in ("iso", "day_month", "month_day")]
    out = []
    for at, s in found:
        same = [d for sentence, d in days if sentence == _sentence(text, at) and d.first.month == s.first.month]
        if s.kind in ("rel_month", "bare_month") and not s.certain and same and same[0].first.year != s.first.year:
            s = replace(_month_span(s.text, same[0].first.year, s.first.month, certain=False) or s, kind=s.kind, at=s.at)
        out.append((at, s))
    return out


def _sentence(text: str, at: int) -> int:
    """Which sentence of `text` the character at `at` is in (0: the first)."""
    return len(re.findall(r"[.!?;]\s", text[:at]))


_JOINED = re.compile(r"\s*(?:,|-|–|—|to|and|or|until|till|through|thru)?\s*", re.IGNORECASE)


def _one_year(spans: list[tuple[int, Span]], text: str) -> list[tuple[int, Span]]:
    """A year said once covers the dates said without one joined to it: "between August 11 and
    August 15 2023" is August 11 of 2023, whatever the tense; "born on May 3, 1990 and my
    next appointment is on June 5" says two years."""
    dated = [(at, s) for at, s in spans if s.certain and s.kind in ("iso", "day_month", "month_day", "month_year")]
    if len({s.first.year for _, s in dated}) != 1:
        return spans
    year = dated[0][1].first.year
    out = []
    for at, s in spans:
        joined = any(_JOINED.fullmatch(text[min(at + len(s.text), d_at + len(d.text)):max(at, d_at)]) for d_at, d in dated)
        if joined and not s.certain and s.kind in ("day_month", "month_day", "part_month") and s.first.year != year:
            try:
                s = replace(s, first=s.first.replace(year=year),
                            last=s.last.replace(year=year + s.last.year - s.first.year))
            except ValueError:  # February 29 of another year: the reading stays
                pass
        out.append((at, s))
    return out


def words(span: Span) -> str:
    """A span in the words a question would use."""
    if span.grain == "day":
        return span.first.strftime("%-d %B %Y %A")
    if span.grain == "weekend":
        return f"weekend {span.first.strftime('%-d')} {span.last.strftime('%-d %B %Y')}"
    if span.grain == "week":
        months = dict.fromkeys([span.first.strftime("%B %Y"), span.last.strftime("%B %Y")])
        return " ".join([f"week of {span.first.strftime('%-d %B %Y')}", *(m for m in months if m not in span.first.strftime("%-d %B %Y"))])
    if span.grain == "month":
        return span.first.strftime("%B %Y")
    if span.grain == "season":
        season = next((k for k, v in SEASONS.items() if v[0] == span.first.month and k != "autumn"), "")
        return f"{season} {span.first.year} " + " ".join(date(2000, mo, 1).strftime("%B") for mo in SEASONS[season])
    return str(span.first.year)


def time_words(text: str, anchor: datetime | date | None) -> str:
    """The dates `text` speaks of, in words, each once ("" when it names none)."""
    spans = resolve(text, anchor)
    return " ".join(dict.fromkeys(words(s) for s in spans)) if spans else ""
