"""The write path: validation (`messages.py`), journal → index (`indexer.py`), and the
writer every surface shares (`writer.py`)."""

from .indexer import Indexer
from .writer import Writer

__all__ = ["Indexer", "Writer"]
