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

__all__ = ["OWNER", "Reader", "Vaults"]
