"""The recall envelope and its escaping: stored text can never speak as the system.

Recalled memory goes inside `<system-reminder> … </system-reminder>`. Stored text may
hold anything — a page copied off the web included — so before a text is inserted,
every tag of the envelope's name inside it, opening or closing, is defused. "A tag" is
judged the way a model would read it, not byte for byte: case-insensitive; any spacing,
attributes or self-closing slash; lookalike brackets and hyphens (full-width `＜／＞`,
`﹤`, `‹`, `〈`, …, folded by NFKC plus a small table); invisible characters inside the
name (zero-width, soft hyphen, other format characters); and bracket encodings a model
decodes on sight (`&lt;`, `&#60;`, `&#x3c;`, `%3C`, `\\u003c`, `\\x3c`). Each such tag is
replaced by the inert text `[tag removed: /system-reminder]`.

The matcher works on a "skeleton" of the text — each original character folded to what
it reads as, with a map back to original positions — so a match removes exactly the
characters that formed the tag.
"""

from __future__ import annotations

import re
import unicodedata

TAG = "system-reminder"
OPEN = f"<{TAG}>"
CLOSE = f"</{TAG}>"

_LOOKALIKE = {
    "‹": "<", "›": ">", "〈": "<", "〉": ">", "⟨": "<", "⟩": ">", "《": "<", "》": ">", "❮": "<", "❯": ">",
    "❬": "<", "❭": ">", "˂": "<", "˃": ">", "ᐸ": "<", "ᐳ": ">", "⧼": "<", "⧽": ">", "⁄": "/", "∕": "/", "⧸": "/",
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-", "﹣": "-", "－": "-", "_": "-",
}
_ENCODED = re.compile(r"&(?:lt|gt|sol|#0*60|#0*62|#0*47|#x0*3c|#x0*3e|#x0*2f);?|%3c|%3e|%2f|\\u003c|\\u003e|\\u002f|\\x3c|\\x3e|\\x2f", re.I)
_DECODED = {"lt": "<", "gt": ">", "sol": "/", "60": "<", "62": ">", "47": "/", "3c": "<", "3e": ">", "2f": "/"}
_TAG_RE = re.compile(r"<\s*/?\s*system\s*-?\s*reminder\b[^<>]{0,200}>?|<\s*/?\s*system\s*-?\s*reminder", re.I)


def _decode_entity(token: str) -> str:
    t = token.lower().strip("&;%\\").lstrip("#").lstrip("x").lstrip("u").lstrip("0")
    return _DECODED.get(t, _DECODED.get(t[-2:], "?"))


def skeleton(text: str) -> tuple[str, list[int]]:
    """The text as a model reads it, and for each skeleton character its source index."""
    out: list[str] = []
    where: list[int] = []
    i = 0
    while i < len(text):
        m = _ENCODED.match(text, i)
        if m:
            out.append(_decode_entity(m.group()))
            where.append(i)
            i = m.end()
            continue
        ch = text[i]
        if unicodedata.category(ch) in ("Cf", "Mn", "Me") or ch in "\u00ad\u034f":
            i += 1
            continue
        folded = _LOOKALIKE.get(ch) or unicodedata.normalize("NFKC", ch)
        for f in _LOOKALIKE.get(folded, folded).casefold():
            out.append(_LOOKALIKE.get(f, f))
            where.append(i)
        i += 1
    return "".join(out), where


def escape(text: str) -> str:
    """`text` with every envelope tag, in any form a model would read as one, defused."""
    if text.isascii() and "reminder" not in text.lower():
        return text  # no tag of the envelope can be spelled without its name
    skel, where = skeleton(text)
    spans = []
    for m in _TAG_RE.finditer(skel):
        start = where[m.start()]
        last = m.end() - 1
        end = where[last] + 1
        # swallow the rest of a multi-character source token (an entity like `&gt;`)
        while end < len(text) and last + 1 < len(where) and where[last + 1] == where[last]:
            last += 1
        m2 = _ENCODED.match(text, where[m.end() - 1])
        if m2:
            end = max(end, m2.end())
        closing = "/" in skel[m.start() : m.start() + 4]
        spans.append((start, end, closing))
    if not spans:
        return text
    pieces = []
    pos = 0
    for start, end, closing in spans:
        pieces.append(text[pos:start])
        pieces.append(f"[tag removed: {'/' if closing else ''}{TAG}]")
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def count_tags(text: str) -> int:
    """How many envelope tags a model would see in `text` (used by the tests)."""
    return len(_TAG_RE.findall(skeleton(text)[0]))


def wrap(body: str) -> str:
    return f"{OPEN}\n{body}\n{CLOSE}"
