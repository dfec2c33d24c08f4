"""Reading a leaf summary for the wiki: its sentences (each traced to the message it came
from, with who said it and when), the names and identifiers they mention, and the
normalised keys that identify topics.

A leaf written by the extractive fallback keeps each message line's `[#NN ISO who]` tag:
line NN is the leaf's NN-th source message. A leaf written by a model has no tags; its
sentences are traced to the source message that contains them, else to the leaf only.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from ..facts.local import CALENDAR_WORDS, sentences
from ..records import Message
from ..store.summaries_base import Summary

LINE = re.compile(r"^\[#(\d+) (\S+) ([^\]]*)\]\s?(.*)$")
_CAP = re.compile(r"[A-Z][\w'’-]*")
# Capitalised words that name nothing: interjections, pronouns, forms of address.
NOT_NAMES = {"i", "i'm", "i've", "i'll", "i'd", "ok", "okay", "hey", "hi", "hello", "thanks", "thank", "yes", "yeah", "no",
             "wow", "oh", "omg", "lol", "haha", "aw", "aww", "awesome", "congrats", "congratulations", "sure", "great", "cool",
             "nice", "good", "bye", "then", "let", "just", "sorry", "yep", "please", "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun", "jan", "feb", "mar",
             "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "the", "a", "an", "and", "but", "so", "it", "it's", "that", "this", "what", "how", "why",
             "when", "where", "who", "my", "your", "we", "you", "he", "she", "they", "me", "mom", "dad", "also", *CALENDAR_WORDS,
             *(f"{day.lower()}s" for day in calendar.day_name)}  # ("can't do Fridays": a page titled Fridays)
# Capitalised words that name a kind of thing, not a thing: "the PR", "an API", "the CI" are
# no topic of their own (a page titled "PR" gathered every pull request ever mentioned).
NOT_TOPICS = {"pr", "prs", "mr", "mrs", "ms", "dr", "api", "apis", "url", "urls", "ui", "ux", "ci", "cd", "id", "ids", "todo",
              "todos", "fyi", "asap", "eta", "tbd", "tba", "wip", "lgtm", "imo", "imho", "btw", "afaik", "json", "yaml", "xml",
              "html", "css", "sql", "http", "https", "cli", "sdk", "faq", "pdf", "csv", "readme", "am", "pm", "utc", "gmt", "etc",
              "vs", "ps", "re", "fwd", "diy", "tv", "dm", "dms", "ok"}
NOT_NAMES |= NOT_TOPICS
_BRACKETS = re.compile(r"\[[^\]]*\]")
_GREETING = re.compile(r"^\s*(?:hey|hi|hello|wow|yeah|yep|yes|thanks|thank you|sorry|congrats|aw+|oh|omg)\b", re.IGNORECASE)
CONNECTORS = {"of", "the", "de", "la", "van", "von", "du", "del", "da", "&"}  # ("Hartley & Sons": one name, not two pages)
_WORD = re.compile(r"[\w'’]+")
_STOP = {"the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "is", "are", "was", "were", "it", "that", "this", "for",
         "with", "i", "you", "we", "my", "me", "be", "so", "but", "just", "really", "actually", "not", "no", "have", "has", "had"}


@dataclass
class Unit:
    """One sentence of a leaf: where it came from and what it names."""

    text: str
    message: str | None
    who: str | None
    at: str | None
    names: list[str] = field(default_factory=list)
    idents: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        """Informative first: identifiers, names, numbers, length; photo captions and greetings count less."""
        said = _BRACKETS.sub("", self.text)
        words = len(said.split())
        greeting = 3 if _GREETING.match(said) else 0
        return 3 * len(self.idents) + 2 * len(self.names) + min(words, 30) / 5 + len(re.findall(r"\d+", said)) - greeting


def key(text: str) -> str:
    """The identity of a name: NFKC, case-folded, inner whitespace collapsed, a trailing 's dropped."""
    norm = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return re.sub(r"['’]s$", "", norm).strip(" .,:;!?\"'()[]")


def norm(text: str) -> str:
    """A statement's identity within its page: words only, case-folded."""
    return " ".join(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP and len(w) > 2}


def overlap(a: str, b: str) -> float:
    x, y = words(a), words(b)
    return len(x & y) / len(x | y) if x and y else 0.0


def mentions(text: str, name: str) -> bool:
    """`name` occurs in `text` as whole words (case-insensitive)."""
    return bool(re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", text, re.IGNORECASE)) if name.strip() else False


def names(sentence: str) -> list[str]:
    """Proper-noun phrases: runs of capitalised words, joined across `of`, `the`, `and`, …
    when a capitalised word follows (`Lord of the Rings`); the sentence's first word is
    left out (it is capitalised for grammar, not identity), possessives dropped."""
    tokens = [re.sub(r"['’]s$", "", raw.strip(",.;:!?\"()[]“”‘’-")) for raw in sentence.split()]
    ends = [raw[-1:] in ",.;:!?" for raw in sentence.split()]
    def capital(i: int) -> bool:
        w = tokens[i]
        return i > 0 and bool(w) and _CAP.fullmatch(w) is not None and w.casefold() not in NOT_NAMES and not (w.isupper() and len(w) > 5)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if not capital(i):
            i += 1
            continue
        run, i = [tokens[i]], i + 1
        if i >= 3 and tokens[i - 2] == "&" and _CAP.fullmatch(tokens[i - 3]) and not ends[i - 3] and tokens[i - 3].casefold() not in NOT_NAMES:
            run = tokens[i - 3:i]  # "Hartley & Sons it is": the sentence's first word is the firm's, not "Sons" alone
        while i < len(tokens) and not ends[i - 1]:
            j = i
            while j < len(tokens) and tokens[j].lower() in CONNECTORS and not ends[j]:
                j += 1
            if j < len(tokens) and capital(j) and (j == i or j - i <= 2):
                run += tokens[i:j + 1]
                i = j + 1
            else:
                break
        out.append(" ".join(run))
    return list(dict.fromkeys(n for n in out if len(n) > 1))


def opening_name(sentence: str) -> str | None:
    """The sentence's first word when it could be a name (capitalised, letters, not a word
    that opens sentences for grammar: NOT_NAMES), else None."""
    first = sentence.split(maxsplit=1)[0] if sentence.strip() else ""
    word = re.sub(r"['’]s$", "", first.strip(",.;:!?\"()[]“”‘’-"))
    if len(word) < 3 or not word.isalpha() or not word[0].isupper() or word.isupper() or word.casefold() in NOT_NAMES:
        return None
    return word


def speaker(m: Message | None) -> str | None:
    return (m.speaker or None) if m is not None else None


# a list item's marker, in a message a leaf wrote on one line ("Checklist: - [ ] Council tax - [ ] Meter readings"): each
# item opens a sentence, so its first word is no name (pages titled Council, Meter, Car, Keys)
_ITEM = re.compile(r"(?:^|\s)[-*•]\s+(?:\[[ xX]\]\s+(?=\S)|(?=[A-ZÀ-ÖØ-Þ]))")


def units(leaf: Summary, messages: dict[str, Message]) -> tuple[list[Unit], list[str]]:
    """The leaf's sentences, traced to their messages, and its identifiers."""
    from ..summaries import identifiers

    out: list[Unit] = []
    found: list[str] = []
    for line in leaf.content.splitlines():
        line = line.strip()
        if line.startswith("Identifiers:"):
            found += [x.strip() for x in line[len("Identifiers:"):].split(",") if x.strip()]
            continue
        m = LINE.match(line)
        if m:
            n = int(m.group(1))
            mid = leaf.sources[n - 1] if 0 < n <= len(leaf.sources) else None
            body = m.group(4)
        else:
            mid, body = None, line
        if body.startswith("(tool ") or mid and messages.get(mid) is not None and messages[mid].tool_name:
            continue  # a tool call and its output say what was run, no statement of a topic (pages titled "Called": an MCP user's)
        items = _ITEM.split(body)
        items = items if len(items) > 2 else [body]  # a list has two items at least (one dash is prose's)
        for s in [s for item in items for s in sentences(item) or ([item] if item.strip() else [])]:
            msg = messages.get(mid) if mid else _containing(s, leaf, messages)
            out.append(Unit(s, msg.id if msg else None, speaker(msg), msg.created_at if msg else None, names(s), identifiers(s)))
    return out, list(dict.fromkeys(found))


def _containing(sentence: str, leaf: Summary, messages: dict[str, Message]) -> Message | None:
    want = norm(sentence)
    for mid in leaf.sources:
        m = messages.get(mid)
        if m is not None and want and want in norm(m.content or ""):
            return m
    return None


def clean_entities(values: Any, limit: int = 64) -> list[str]:
    out = []
    for v in values or []:
        if isinstance(v, str) and v.strip() and len(v) <= 200:
            out.append(" ".join(v.split()))
    return list(dict.fromkeys(out))[:limit]
