"""Which words of a turn look like code, for recall to look them up in the code graph.

Prose is full of words that are also symbol names (`index`, `save`, `run`), so a plain
lowercase word counts only inside backticks. Outside them a token counts when it is
shaped like code: `snake_case`, `camelCase`, `PascalCase` with two capitals or more,
a dotted or `::` path (`store.save`, `Point::new`), or a name followed by `()`.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?")
_TICKS = re.compile(r"`([^`\n]{1,200})`")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
_MAX_CANDIDATES = 30


def candidates(text: str) -> list[str]:
    """Code-shaped names in `text`, in order of first mention, without duplicates."""
    found: list[tuple[int, str]] = []
    for span in _TICKS.finditer(text):
        found += [(span.start(1) + t.start(), t.group()) for t in _TOKEN.finditer(span.group(1))]
    outside = _TICKS.sub(lambda m: " " * len(m.group()), text)
    found += [(t.start(), t.group()) for t in _TOKEN.finditer(outside) if _code_shaped(t.group())]
    names = dict.fromkeys(token.removesuffix("()") for _, token in sorted(found))
    return [t for t in names if len(t) > 1][:_MAX_CANDIDATES]


def _code_shaped(token: str) -> bool:
    if token.endswith("()") or "::" in token:
        return True
    if "." in token:
        parts = token.split(".")
        return all(parts) and not all(p.isalpha() and p.islower() and len(p) <= 3 for p in parts)  # not "e.g", "i.e"
    if "_" in token.strip("_") or token.startswith("__"):
        return True
    return bool(_CAMEL.search(token)) or sum(c.isupper() for c in token) >= 2 and not token.isupper()
