"""Vaults: named, typed collections an agent reads — documents, skills and facts.

    from palimpsest.vaults import vaults_of
    vaults = vaults_of(memory)
    vaults.init("handbook", "semantic", path="docs/")     # a local vault (or global: no path)
    vaults.index("handbook")                              # extract, chunk, embed
    vaults.query("handbook", "how do I install on Linux?").hits
    vaults.attach("handbook", agent="coder")              # search and recall of coder's sessions read it

`registry.py` holds the registry and the facade, `documents.py` document vaults,
`chunking.py` and `extract.py` the text, `skills.py` skill vaults (and the recall hook),
`files.py` the folder walk. See docs/vaults.md.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

from ..store.documents_base import OWNER, Reader
from .registry import Vaults

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["OWNER", "Reader", "Vaults", "vaults_of"]

_open: weakref.WeakKeyDictionary[Memory, Vaults] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def vaults_of(memory: Memory) -> Vaults:
    """The vaults of a memory, opened once per `Memory` (restoring a lost registry from
    the system journal on first open)."""
    with _lock:
        found = _open.get(memory)
        if found is None or found.store is not memory.store:
            found = _open[memory] = Vaults(memory)
        return found


from . import skills as _skills  # noqa: F401 - registers the recall hook (recall.SKILL_SOURCES)
