"""Palimpsest: long-term memory for LLM agents that keeps every word.

`Memory` and `Settings` are imported on first use, so a command that needs neither (the
recall hook a harness starts before every turn) does not pay for loading them.
"""

TYPE_CHECKING = False  # not `typing`'s: importing `typing` costs the recall hook ~10 ms

from .errors import (
    Closed,
    Conflict,
    DeadlineExceeded,
    EmbedderError,
    Interrupted,
    InvalidInput,
    JournalError,
    LLMError,
    ModelMismatch,
    NotFound,
    PalimpsestError,
    PayloadTooLarge,
    SchemaTooNew,
    StoreBusy,
    StoreCorrupt,
    StoreRefused,
    StoreUnavailable,
    WriteDisabled,
)

if TYPE_CHECKING:
    from .memory import Memory
    from .service import background
    from .settings import Settings

__all__ = [
    "Closed",
    "Conflict",
    "DeadlineExceeded",
    "EmbedderError",
    "Interrupted",
    "InvalidInput",
    "JournalError",
    "LLMError",
    "Memory",
    "ModelMismatch",
    "NotFound",
    "PalimpsestError",
    "PayloadTooLarge",
    "SchemaTooNew",
    "Settings",
    "StoreBusy",
    "StoreCorrupt",
    "StoreRefused",
    "StoreUnavailable",
    "WriteDisabled",
    "background",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    if name == "Memory":
        from .memory import Memory

        return Memory
    if name == "background":
        from .service import background

        return background
    if name == "Settings":
        from .settings import Settings

        return Settings
    raise AttributeError(f"module 'palimpsest' has no attribute {name!r}")
