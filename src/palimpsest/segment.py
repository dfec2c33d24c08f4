"""Words of Chinese and Japanese text, for the keyword index.

FTS5's `unicode61` tokenizer and PostgreSQL's default parser cut text at spaces and
punctuation. Chinese and Japanese put no space between words, so a whole clause — with any
Latin word glued to it — is one token: "我们决定把数据库迁移到PostgreSQL。" was found neither
by 数据库 nor by PostgreSQL. The usual remedy without a dictionary (Lucene's CJK analyzer,
Elasticsearch's `cjk_bigram`) is overlapping character bigrams: 数据库迁移 → 数据 据库 库迁
迁移; a lone character stays a unigram, and the index holds each character of a longer run
too (a word of one character, 狗, is found). A query is cut into pairs the same way, so 数据库
asks for 数据 and 据库, which the message holds.

`cjk_words(text)` gives those bigrams and the other words glued to such a run, as one
string the indexer adds to a message's keyword-only search context (both backends index
it; the vector text leaves it out). Text without Han or kana costs one `isascii` test or
one regex scan. Thai and other scripts whose vowels are combining marks need a real
segmenter (the tokenizers drop the marks), and are left as they are cut.

Emoji are no word characters to either tokenizer: "Shipped the release today 🎉🚀" was not
found by 🎉. `emoji_words(text)` names each as a word the tokenizers keep (`emoji1f389`),
added to the same keyword-only context, and a query's emoji are asked for by those names; a
flag is its two regional-indicator letters.

Compatibility forms are other words to both tokenizers: "ＡＰＩ" typed with a Japanese input
method, "ﬁnancial" with its ligature, "Mül\u200bler" split by a zero-width space were found by
no query. `folded(text)` is the form a query is read in (NFKC, invisible format marks dropped);
`folded_words(text)` the words that form adds to the keyword-only context.

A terminal's colour and cursor codes glue to the words they paint: "\x1b[31mERROR\x1b[0m" is
the token "31merror" to both tokenizers, and a red ERROR in a pasted build log was found by
no query. `painted_words(text)` gives the words as the terminal showed them, for the same
keyword-only context; `unpainted(text)` is the text without the codes (the vector text, a
tool call's summary).
"""

from __future__ import annotations

import unicodedata

import regex

# scripts written without spaces between words
RUN = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}ー]+")
TOKEN = regex.compile(r"\w+")
EMOJI = regex.compile(r"[\p{Extended_Pictographic}\p{Regional_Indicator}]")
INVISIBLE = regex.compile(r"[\u00ad\u200b-\u200d\u2060\ufeff]")  # soft hyphen, zero-width space and joiners, word joiner
# a terminal's colour and cursor codes (CSI "\x1b[33m", OSC "\x1b]0;title\x07", the rest: "\x1b(B", "\x1b7")
# a line that says something went wrong (a long field's middle keeps it for keywords, a snippet for a question about it);
# an exception's name too, its word glued to the one before ("KeyError: 'FALL25'", the last line of a pasted traceback)
TROUBLE = regex.compile(r"\b(?:error|errno|fail(?:ed|ure|s)?|fatal|panic|exception|traceback|denied|refused|timed? ?out|"
                        r"warn(?:ing)?|critical|abort(?:ed)?)\b|(?-i:(?<=[a-z])(?:Error|Exception|Failure)\b)", regex.IGNORECASE)
TERMINAL_CODES = regex.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -/]*[0-~]")


def bigrams(run: str) -> list[str]:
    """Overlapping character pairs of one run; a lone character as it is."""
    return [run] if len(run) < 2 else [run[i:i + 2] for i in range(len(run) - 1)]


def pieces(token: str) -> list[str]:
    """One token as the index should see it: each run of a spaceless script as its bigrams,
    and what is glued to it (PostgreSQL, 3点) as words of their own."""
    out: list[str] = []
    at = 0
    for m in RUN.finditer(token):
        out += TOKEN.findall(token[at:m.start()])
        out += bigrams(m.group())
        at = m.end()
    out += TOKEN.findall(token[at:])
    return out


# a piece of hiragana alone (one or two characters) is Japanese grammar (です, すか, まし, した): to a query, a snippet
# and the panel's highlight what "the" and "is" are to English (the index keeps them)
_KANA_ONLY = regex.compile(r"[\u3041-\u309f]{1,2}")


def kana_grammar(piece: str) -> bool:
    """Whether a piece of a spaceless run is grammar, not a word (`_KANA_ONLY`)."""
    return _KANA_ONLY.fullmatch(piece) is not None


def has_runs(text: str) -> bool:
    return not text.isascii() and RUN.search(text) is not None


def cjk_words(text: str) -> str:
    """The words of `text`'s spaceless-script tokens, bigrams and glued words, space
    separated ("" when it has none)."""
    if not text or not has_runs(text):
        return ""
    out: list[str] = []
    for token in TOKEN.findall(text):
        if RUN.search(token):
            out += pieces(token)
            # and each character of a longer run, so a word of one character is found: 狗 had found no "我的狗叫豆豆"
            # (its bigrams 的狗 狗叫 only; Lucene's CJK analyzer has the same `outputUnigrams` for it); a query is cut into
            # bigrams still, so a word of two characters asks for its pair, not for every message sharing a character
            out += [c for run in RUN.findall(token) if len(run) > 1 for c in dict.fromkeys(run)]
    return " ".join(out)


def emoji_words(text: str) -> str:
    """The names of `text`'s emoji as words of the keyword index ("🎉" → "emoji1f389"), each
    once, space separated ("" when it has none)."""
    if not text or text.isascii():
        return ""
    return " ".join(dict.fromkeys(f"emoji{ord(c):x}" for c in EMOJI.findall(text)))


def folded(text: str) -> str:
    """`text` in the form the index and a query agree on: compatibility forms folded (NFKC:
    "ＡＰＩ" is "API", "ﬁ" is "fi"), invisible format marks dropped."""
    if not text or text.isascii():
        return text
    return unicodedata.normalize("NFKC", INVISIBLE.sub("", text))


def fold(text: str) -> str:
    """`text` with its accents dropped and compatibility forms folded, as the keyword index
    reads it: "José Núñez", typed decomposed or not, is "Jose Nunez"."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c) or c in _VOICING))


_VOICING = frozenset("\u3099\u309a")  # kana's voicing marks make other letters, not accents: "データ" is no "テータ" (a studio's)


def folded_words(text: str) -> str:
    """The words `folded(text)` holds that `text` does not, space separated ("" when none)."""
    norm = folded(text)
    if norm == text:
        return ""
    own = set(TOKEN.findall(text))
    return " ".join(dict.fromkeys(w for w in TOKEN.findall(norm) if w not in own))


# letters that decompose to no base letter, spelled as their languages write them without them: SQLite's tokenizer kept
# "Straße", "Øresund", "Łódź" whole, so "strasse", "oresund", "lodz" found them on PostgreSQL (unaccent) and not on SQLite
SPELLED = str.maketrans({"ß": "ss", "ẞ": "SS", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "æ": "ae", "Æ": "AE", "œ": "oe",
                         "Œ": "OE", "đ": "d", "Đ": "D", "þ": "th", "Þ": "Th", "ð": "d", "Ð": "D", "ı": "i"})


def spelled_words(text: str) -> str:
    """The words of `text` with those letters spelled out, where that changes them ("" when none)."""
    spelled = text.translate(SPELLED)
    if spelled == text:
        return ""
    own = set(TOKEN.findall(text))
    return " ".join(dict.fromkeys(w for w in TOKEN.findall(spelled) if w not in own))


def keyword_words(text: str) -> str:
    """What the keyword index should hold of `text` beside its own words: its words in
    compatibility forms as a query reads them, spelled without ß, ø, ł, æ …, the bigrams of its
    spaceless-script runs, its emoji by name ("" for most text)."""
    if not text:
        return ""
    if text.isascii():
        return painted_words(text)
    return " ".join(part for part in (folded_words(text), spelled_words(folded(text)), cjk_words(folded(text)), emoji_words(text),
                                      painted_words(text)) if part)


def unpainted(text: str) -> str:
    """`text` without a terminal's colour and cursor codes."""
    return TERMINAL_CODES.sub("", text) if "\x1b" in text else text


_CONTROL = regex.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def plain(text: str) -> str:
    """`text` as a block for a model shows it: without a terminal's codes and other control characters (no words to a
    model; printed by `recall` or `briefing`, a pasted build log's "\x1b[2J" had cleared the screen)."""
    return _CONTROL.sub("", unpainted(text))


def painted_words(text: str) -> str:
    """The words a terminal's codes glued to others, as the terminal showed them ("31mERROR" → "ERROR"); "" when the
    text has no codes."""
    if "\x1b" not in text:
        return ""
    own = set(TOKEN.findall(text))
    return " ".join(dict.fromkeys(w for w in TOKEN.findall(TERMINAL_CODES.sub(" ", text)) if w not in own))
