"""Palimpsest: long-term memory for LLM agents that keeps every word."""

from .errors import (
    InvalidInput,
    JournalError,
    ModelMismatch,
    NotFound,
    PalimpsestError,
    PayloadTooLarge,
    StoreUnavailable,
    WriteDisabled,
)
from .memory import Memory
from .settings import Settings

__all__ = [
    "InvalidInput",
    "JournalError",
    "Memory",
    "ModelMismatch",
    "NotFound",
    "PalimpsestError",
    "PayloadTooLarge",
    "Settings",
    "StoreUnavailable",
    "WriteDisabled",
]
__version__ = "0.1.0"
