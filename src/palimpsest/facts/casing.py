"""Capitals for statements typed all in lower case, so the curator's rules read them.

The rules find names, days and sentence openings by their capitals ("Maria took over as
club secretary.", "… on Fridays"); a user typing on a phone writes "wei stepped down and
maria took over as club secretary". `cased` gives such a statement the capitals its words
would have: each sentence's first word, "i", the days and months (the ambiguous ones —
"may", "sat", "sun" — only beside a number), and the words the other statement of the pair
writes with a capital ("node 20" beside "Node 16"). The stored text is never changed:
this is the copy the rules read. A statement with a word written with its capital (a shouted word or an
acronym is none) is left as it is.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .. import when

_I = frozenset(["i", "i'm", "i've", "i'd", "i'll", "i’m", "i’ve", "i’d", "i’ll"])
_DAYS = frozenset([*when.WEEKDAYS, *(d + "s" for d in when.WEEKDAYS), "tues", "thurs", "thur", "weds", "fri"])
# words that are days or months only beside a number ("sat 17 may", "wed 14:00"; not "i sat down", "we may move")
_BESIDE_A_NUMBER = frozenset(["may", "march", "mar", "sat", "sun", "wed", "mon", "tue", "thu", "jan", "jun", "jul", "aug",
                              "sep", "oct", "nov", "dec", "feb", "apr"])
_MONTHS = frozenset(when.MONTHS) - _BESIDE_A_NUMBER
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_CAPITALISED = re.compile(r"(?<=[\w,;:)] )[A-Z][\w-]*")  # a capital after a word: a name, not a sentence's opening


def typed_lower(text: str) -> bool:
    """Whether no word of `text` is written with its capital: typed in lower case (a shouted word or an acronym is no
    capital; a capital "I" is one)."""
    return not any(w[0].isupper() and (any(ch.islower() for ch in w) or w.lower() in _I) for w in _WORD.findall(text))


@lru_cache(maxsize=4096)
def cased(text: str, other: str = "") -> str:
    """`text` with the capitals its words would have, when no word of it is written with one; `other`, the
    statement it is compared with, lends the spelling of the names it capitalises. A word shouted ("AND",
    "AGAIN") or an acronym says nothing of how the rest was typed: "theo is allergic to peanuts AND tree nuts." is read
    with its capitals too."""
    if not typed_lower(text):
        return text  # (a capital "I" is typing with capitals too: "I put black pepper on …" names no Pepper)
    names = {w.lower(): w for w in _CAPITALISED.findall(other) if not w.isupper()}

    def one(m: re.Match[str]) -> str:
        word, low = m.group(0), m.group(0).lower()
        before, after = text[:m.start()].rstrip(), text[m.end():]
        if low in _I:
            return "I" + word[1:]
        if low in names:
            return names[low]
        beside_a_number = bool(re.match(r"\.?\s*\d", after) or re.search(r"\d(?:st|nd|rd|th)?$", before))
        if low in _DAYS or low in _MONTHS or (low in _BESIDE_A_NUMBER and beside_a_number):
            return word[0].upper() + word[1:]
        if not before or before[-1] in ".!?:;\n":
            return word[0].upper() + word[1:]
        return word

    return _WORD.sub(one, text)
