"""Templates: one Jinja2 environment with autoescape, and the filters the pages use.

`highlight` finds the query's words in the raw text and escapes every piece itself, so a
stored `<script>` is shown as text and only the `<mark>` around a match is markup.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, pass_context, select_autoescape
from markupsafe import Markup, escape

from ...envelope import bidi_shown
from ...records import local_minute
from ...segment import SPELLED, fold, has_runs, kana_grammar, pieces
from ...vaults import pages_said

SNIPPET = 600


# the bidirectional overrides and isolates: shown as their code points, never obeyed ("\u202eevil\u202c" was shown
# as "live", a stored text steering how the page reads: found by a privacy-minded user)


def reveal(value: Any) -> Any:
    """A string with its bidirectional controls made visible (`⟦U+202E⟧`); anything else as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return bidi_shown(value)
    return value


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(loader=PackageLoader("palimpsest.server.panel", "templates"), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True, finalize=reveal)
    env.filters.update(highlight=highlight, pretty=pretty, short=short, minute=minute, pages=pages_said)
    return env


def render(template: str, context: dict[str, Any]) -> str:
    return environment().get_template(template).render(**context)


def terms(query: str) -> list[str]:
    """The words of a query as search cuts them: a run of Chinese or Japanese as its pairs of characters, its pairs of
    hiragana left out when others are there (公開日の延期 had marked nothing: a studio's)."""
    out: list[str] = []
    for t in re.findall(r"\w[\w.-]*", query or ""):
        if has_runs(t):
            parts = pieces(t)
            out += [p for p in parts if not kana_grammar(p)] or parts
        else:
            out.append(t)
    return list(dict.fromkeys(out))[:20]


def highlight(text: Any, query: str, snippet: bool = True) -> Markup:
    """`text` escaped, with every word of `query` wrapped in `<mark>`, matched as search
    matches them (without accents, case or ß: "Zurich" marks "Zürich", "sao paulo" "São
    Paulo"; one Chinese or Japanese character is a word); a long text is cut to a window
    around its first match."""
    text = "" if text is None else reveal(str(text))
    words = [w for w in (_key(t) for t in terms(query)) if len(w) >= 2 or w and not w.isascii()]
    spans = _matches(text, words)
    tail = ""
    if snippet and len(text) > SNIPPET:
        start = max(0, (spans[0][0] if spans else 0) - SNIPPET // 3)
        text, tail = ("…" if start else "") + text[start:start + SNIPPET], "…"
        shift = start - (1 if start else 0)
        spans = [(a - shift, b - shift) for a, b in spans if a >= start and b <= start + SNIPPET]
    out, at = [], 0
    for a, b in spans:
        out += [escape(text[at:a]), Markup("<mark>") + escape(text[a:b]) + Markup("</mark>")]
        at = b
    out.append(escape(text[at:] + tail))
    return Markup("").join(out)


def _key(text: str) -> str:
    return (text if text.isascii() else fold(text).translate(SPELLED)).casefold()


def _matches(text: str, words: list[str]) -> list[tuple[int, int]]:
    """Where `words` (keys, `_key`) stand in `text`, as (start, end) of `text`, in order, not overlapping."""
    if not words or not text:
        return []
    chars: list[str] = []
    where: list[int] = []
    for i, c in enumerate(text):
        k = c.lower() if c.isascii() else _key(c)
        chars.append(k)
        where += [i] * len(k)
    pattern = re.compile("(?=(" + "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)) + "))")
    spans: list[tuple[int, int]] = []
    for m in pattern.finditer("".join(chars)):  # every match, overlapping ones too (公開 and 開日 of 公開日), merged
        a, b = m.start(1), m.end(1)
        if b <= a:
            continue
        if spans and a < spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], b))
        else:
            spans.append((a, b))
    return [(where[a], where[b - 1] + 1) for a, b in spans]


def pretty(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def short(text: Any, n: int = 160) -> str:
    text = "" if text is None else " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


@pass_context
def minute(context: Any, ts: Any) -> str:
    """A stored time to the minute on the memory's clock (the `timezone` setting, else the
    server machine's: the page's `zone`); the `<time datetime>` beside it keeps UTC's."""
    return local_minute(ts, context.get("zone"))
