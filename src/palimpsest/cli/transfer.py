"""Import and export commands."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    return None
