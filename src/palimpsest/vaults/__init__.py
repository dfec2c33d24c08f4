"""Vaults: named, typed collections an agent reads — documents, skills and facts.

    vaults = memory.vaults
    vaults.init("handbook", "semantic", path="docs/")     # a local vault (or global: no path)
    vaults.index("handbook")                              # extract, chunk, embed
    vaults.query("handbook", "how do I install on Linux?").hits
    vaults.attach("handbook", agent="coder")              # search and recall of coder's sessions read it

`registry.py` holds the registry and the facade, `documents.py` document vaults,
`chunking.py` and `extract.py` the text, `skills.py` skill vaults (and the recall hook),
`files.py` the folder walk. See docs/vaults.md.
"""

from __future__ import annotations

from ..store.documents_base import OWNER, Reader
from .registry import Vaults


def pages_said(pages: list[int]) -> str:
    """Where a chunk is in its PDF, in words: "page 4", "pages 1–3" (a chunk's `pages` are
    its first and last page; "page 1, 3" read as two pages)."""
    if not pages:
        return ""
    first, last = min(pages), max(pages)
    return f"page {first}" if first == last else f"pages {first}–{last}"


__all__ = ["OWNER", "Reader", "Vaults", "pages_said"]
