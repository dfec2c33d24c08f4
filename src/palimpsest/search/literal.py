"""The literal modes of message search: substring (any fragment) and regex."""

from __future__ import annotations

import time

import regex

from ..errors import InvalidInput
from ..records import Message
from ..store import Filters, Store


def regex_search(store: Store, pattern: str, filters: Filters, limit: int, budget_s: float = 2.0) -> tuple[list[Message], list[str]]:
    """Messages whose content or tool result match `pattern`, in index order. The whole
    scan, including each single match attempt, is bounded by `budget_s` seconds (the
    `regex` module's timeout), so a pathological pattern cannot hang the server."""
    try:
        rx = regex.compile(pattern)
    except regex.error as exc:
        raise InvalidInput(f"invalid regular expression: {exc}") from None
    found: list[Message] = []
    deadline = time.monotonic() + budget_s
    after = 0
    try:
        while len(found) < limit and (page := store.scan(filters, 500, after)):
            for rowid, m in page:
                after = rowid
                left = max(0.001, deadline - time.monotonic())
                if rx.search(m.content, timeout=left) or (m.tool_result and rx.search(m.tool_result, timeout=left)):
                    found.append(m)
                    if len(found) >= limit:
                        break
            if time.monotonic() > deadline:
                raise TimeoutError
    except TimeoutError:
        return found, [f"regex scan stopped after {budget_s:.1f}s; results are partial"]
    return found, []
