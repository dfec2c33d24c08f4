"""The summary DAG: `compactor.py` writes it, `part.py` is `memory.summaries`."""

from .compactor import LEAF_MAX_MESSAGES, SUMMARY_SCHEMA, SYSTEM_SESSION, Compactor, SummaryHit, extractive, identifiers
from .part import Summaries, SummarySource

__all__ = ["LEAF_MAX_MESSAGES", "SUMMARY_SCHEMA", "SYSTEM_SESSION", "Compactor", "Summaries", "SummaryHit", "SummarySource",
           "extractive", "identifiers"]
