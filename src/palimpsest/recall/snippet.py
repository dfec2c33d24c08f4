"""A recalled text cut to the part a query asks about: the sentences that share most of its
words, in their order, each gap marked `…` (used by `pack.py` for all but the best hits)."""

from __future__ import annotations

import re

import regex

from ..facts.slots import _CLOCKISH
from ..segment import TROUBLE, cjk_words, has_runs, kana_grammar
from ..tokens import count_tokens, estimate_tokens, truncate_to_tokens

GAP = "…"
CHARS_PER_TOKEN = 4
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*(?=\S)")  # Chinese and Japanese end a sentence with no space after
_WORD = re.compile(r"\d+(?:[.,:]\d+)*(?:st|nd|rd|th|am|pm)?|[^\W\d_]+")
# a code, a seat or a part number: letters and digits mixed, hyphens inside ("FSP-99X3Q7", "3A"), not a number `_WORD`
# reads whole ("7pm", "3rd"). One word, with its pieces of letters alone ("covid" of "COVID-19"): split, "is FSP-99X3Q7 the
# fasano code?" had been fsp, 99, x, 3, q and 7, and every "03NOV … seat 3A" line of a pasted itinerary shared two of them
_IDENTIFIER = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[^\W\d_])[^\W_]+(?:-[^\W_]+)*(?![\w-])")
# what a question about an error and a line saying one share, however each says it ("the error I pasted" / "KeyError:
# 'FALL25'", the last line of a pasted traceback); no text's word
TROUBLE_WORD = "\x00trouble"


def query_words(query: str) -> set[str]:
    """The query's content words as the snippet compares them (stems, numbers as digits)."""
    from ..facts.curator import tokens

    rest, named = _identifiers(query.lower())
    return set(tokens(rest)) | named | _pairs(query) | _trouble(query)


def _identifiers(text: str) -> tuple[str, set[str]]:
    """`text` without its identifiers (`_IDENTIFIER`), and their words: each whole, and its pieces of letters alone."""
    named: set[str] = set()

    def take(m: re.Match[str]) -> str:
        if _WORD.fullmatch(m.group()):
            return m.group()
        named.add(m.group())
        return " ".join(p for p in m.group().split("-") if p.isalpha())

    return _IDENTIFIER.sub(take, text), named


def _pairs(text: str) -> set[str]:
    """A Chinese or Japanese run's pairs of characters (none of hiragana alone: grammar), as search cuts it."""
    return {w for w in cjk_words(text).split() if len(w) == 2 and not kana_grammar(w)} if has_runs(text) else set()


def _trouble(text: str) -> set[str]:
    return {TROUBLE_WORD} if TROUBLE.search(text) else set()


def _words(sentence: str) -> set[str]:
    """A sentence's words, stemmed as `query_words` stems them (stop words are harmless
    here: the query has none) — lighter than `curator.tokens`, which ran per sentence."""
    from ..facts.slots import clock, clocks, stem

    # (a time as `tokens` reads it: "at 4 pm" is "16" there, and the sentence saying it had lost to one saying "Room 16")
    rest, named = _identifiers(clocks(sentence).lower())
    return {clock(w) or stem(w) for w in _WORD.findall(rest)} | named | _pairs(sentence) | _trouble(sentence)


def shared_words(text: str, words: set[str]) -> int:
    """How many of the query's `words` (`query_words`) `text` says, as a snippet weighs its sentences."""
    return len(words.intersection(_words(text))) if may_say(text, words) else 0


def may_say(text: str, words: set[str]) -> bool:
    """Whether `text` may say one of `words`, by a substring test: each of its words is a stem (a prefix), a whole
    identifier or a pair of characters of it, lowered, but for a time on the 12-hour clock ("4 pm" is "16") and an
    error word. `_words` on each of a 25 KB paste's 500 lines had made recall 2–3 times slower (review)."""
    low = text.lower()
    return any(w in low for w in words) or _CLOCKISH.search(text) is not None \
        or TROUBLE_WORD in words and TROUBLE.search(text) is not None


def unsaid(text: str, words: set[str]) -> set[str]:
    """The `words` `text` may not say (as `may_say` tests one): a long message's capped copy that may say them all
    needs no journal read for its snippet, and past it only the lines that may say one of the rest are read."""
    low, clockish = text.lower(), _CLOCKISH.search(text) is not None
    return {w for w in words if not (w in low or clockish or w == TROUBLE_WORD and TROUBLE.search(text) is not None)}


def lines_saying(text: str, words: set[str], room: int) -> str:
    """The lines of `text` that may say one of `words` (as `may_say` tests a line), in their order, `…` where lines are
    left out, until the next would pass `room` characters (a first line longer than that: its stretch around the word).
    Found by one scan of the text, not a test of each line: a support bot's customer had pasted a 5 MB log (65,000
    lines), and `_words` on each of them took every recall of hers past its 60 s deadline."""
    said = _saying(words)
    parts: list[str] = []
    size = at = 0
    while (m := said.search(text, at)) is not None:
        start, end = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
        end = len(text) if end < 0 else end
        if end - start > room - size:
            if parts:
                break
            start = max(start, m.start() - room // 2)
            end = min(end, start + room)
        parts += [GAP, text[start:end]] if start > at else [text[start:end]]
        size, at = size + end - start, end + 1
    return "\n".join([*parts, GAP] if at < len(text) else parts)


def _saying(words: set[str]) -> regex.Pattern[str]:
    """What `may_say` finds of `words` in a line, as one pattern: a word as a substring in any case, a time on the
    12-hour clock where a word is a time ("16" of "at 4 pm": `_CLOCKISH` on every digit of a log's timestamps was most
    of a scan's time), an error word where the query asks about one."""
    times = [_CLOCKISH.pattern] if any(w[:1].isdigit() for w in words) else []
    trouble = [TROUBLE.pattern] if TROUBLE_WORD in words else []
    return regex.compile("|".join([*map(regex.escape, sorted(words - {TROUBLE_WORD})), *times, *trouble]), regex.IGNORECASE)


def snippet(text: str, keep: int, words: set[str], cap: int, over: bool = False) -> str:
    """`text` within `cap` tokens: its first `keep` characters (the speaker), then the
    sentences that share most words with the query (earlier first on a tie), in their
    order, each gap marked `…`. The best of them is never left out for sentences that share
    fewer words: when it alone is over the room, it is cut to the room (its start, or the
    stretch from a little before its first query word). A text within the cap comes back as
    it is (`over`: the caller has counted it and knows it is not, so it is not tokenized again)."""
    if not over and count_tokens(text) <= cap:
        return text
    head, body = text[:keep], text[keep:]
    head += " " if body[:1].isspace() and not head.endswith(" ") else ""  # (its pieces are flattened: the space after it kept)
    # a sentence, or a line of a pasted block (JSON, a log, a traceback: no sentence ends in them), flattened
    sentences = [" ".join(s.split()) for line in body.splitlines() for s in _SENTENCE.split(line) if s.strip()] or [""]
    room = cap - count_tokens(head) - 2  # the gap marks
    # estimated, not counted: one tokenizer call per sentence was most of a recall's time; the caller cuts the result to
    # the exact cap. ~4 characters a token for prose, by words and marks where those are more (code and JSON: a line of
    # an order's JSON, 250 characters, is 110 tokens, not 63 — a sentence "within" the room pushed the error line after
    # it past the cap); a Japanese character is about a token, not a quarter of one
    costs = [max(len(s) // CHARS_PER_TOKEN, estimate_tokens(s)) + 1 if s.isascii() or not has_runs(s) else estimate_tokens(s) + 1
             for s in sentences]
    shared = [shared_words(s, words) for s in sentences]
    kept = _chosen(sentences, costs, sorted(range(len(sentences)), key=lambda i: (-shared[i], i)), words, room)
    while True:
        out = head + _joined(sentences, kept)
        # the costs are estimates, and the caller cuts what is over the cap off the end, where the best sentence may be:
        # the last chosen go first (a pasted itinerary's rows, each under-estimated by a third, pushed its last line,
        # the reservation code asked about, past the cap)
        if len(kept) <= 1 or count_tokens(out) <= cap:
            return out
        kept.popitem()


def _chosen(sentences: list[str], costs: list[int], order: list[int], words: set[str], room: int) -> dict[int, str]:
    """The sentences that fit `room`, best first (`order`), in the order they were chosen."""
    kept: dict[int, str] = {}
    for i in order:
        if costs[i] <= room:
            kept[i] = sentences[i]
            room -= costs[i]
        elif not kept:  # the best sentence is too long: cut it rather than show others instead
            kept[i] = _cut(sentences[i], words, max(1, room))
            break
    return kept


def _joined(sentences: list[str], kept: dict[int, str]) -> str:
    """The kept sentences in their order, each gap marked `…`."""
    parts, last = [], -1
    for i in sorted(kept):
        if i != last + 1:
            parts.append(GAP)
        parts.append(kept[i])
        last = i
    if last != len(sentences) - 1 or kept[last] is not sentences[last]:
        parts.append(GAP)
    return " ".join(parts)


def fit(text: str, cap: int) -> tuple[str, int]:
    """`text` within `cap` tokens, `…` where it was cut short (a line cut at the cap without it read as whole: an email
    address cut in two looked like a wrong one, found by a studio's assistant), and its token count."""
    cut, tokens = truncate_to_tokens(text, cap)
    if cut == text or cap < 4:
        return cut, tokens
    cut = truncate_to_tokens(text, cap - 2)[0].rstrip()
    cut = f"{cut} {GAP}" if not cut.endswith(GAP) else cut
    return cut, count_tokens(cut)


def _cut(sentence: str, words: set[str], room: int) -> str:
    """`sentence` within about `room` tokens: from its start when its first query word is
    there, else from a few words before that word, marked `…` where it starts later."""
    first = next((m.start() for m in _WORD.finditer(sentence.lower()) if _words(m.group()) & words), 0)
    start = 0
    if first // CHARS_PER_TOKEN > room // 2:
        start = sentence.rfind(" ", 0, max(0, first - 4 * CHARS_PER_TOKEN)) + 1
    cut = truncate_to_tokens(sentence[start:], room)[0]
    return f"{GAP} {cut}" if start else cut
