"""Job queue commands (filled in by the retrieval work)."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    return None
