"""Recall: the block the model sees before every turn (`block.py`: items, budget, fill),
its sources and the working context built on it (`recaller.py`, `context.py`)."""

from .block import DEFAULT_BUDGET, HEADER, Recall, RecallItem, check_budget
from .recaller import Recaller, Turn

__all__ = ["DEFAULT_BUDGET", "HEADER", "Recall", "RecallItem", "Recaller", "Turn", "check_budget"]
