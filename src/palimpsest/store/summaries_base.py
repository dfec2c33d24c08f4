"""The summaries part of the Store contract: the summary DAG, LLM token accounting, and
writing a synthesized description into an empty tool-call message.

A summary is written once, with its `summary_sources` links, in one transaction: a leaf
links the messages it covers, a branch or root the summaries below it. A message is in
at most one leaf (the insert fails with `Conflict` otherwise), so compaction that races
with itself cannot cover a message twice. A root is replaced as the tree grows: the new
root links every branch and the old one is marked `superseded_by` (kept, never searched).
The DAG rules (when to roll leaves up, budgets, prompts) live in `palimpsest.summaries`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..records import Message

DEPTHS = {0: "leaf", 1: "branch", 2: "root"}


@dataclass
class Summary:
    id: str
    session_id: str
    depth: int  # 0 leaf, 1 branch, 2 root
    content: str
    message_count: int
    earliest_at: str
    latest_at: str
    model: str
    created_at: str
    sources: list[str] = field(default_factory=list)  # message ids (leaf) or child summary ids, in order
    parent_id: str | None = None  # the live summary one level up, if any
    superseded_by: str | None = None
    access_count: int = 0  # times a search returned it (derived, like a message's: not journaled)
    last_accessed_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["level"] = DEPTHS.get(self.depth, str(self.depth))
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Summary:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


class SummaryStoreContract(ABC):
    # -- the DAG -------------------------------------------------------------
    @abstractmethod
    def put_summary(self, summary: Summary, supersedes: str | None = None) -> bool:
        """Insert a summary and its sources (and mark `supersedes` superseded by it) in one
        transaction. False if a summary with this id exists (replay); `Conflict` if a leaf
        source is already in another leaf."""

    @abstractmethod
    def get_summaries(self, ids: list[str]) -> list[Summary]:
        """Summaries by id with their sources and live parent, in the order asked."""

    @abstractmethod
    def session_summaries(self, session_id: str, depth: int | None = None, *, orphans: bool = False,
                          live: bool = True) -> list[Summary]:
        """Summaries of a session, oldest first; `orphans`: only those no live summary links;
        `live`: leave out superseded ones."""

    @abstractmethod
    def unsummarised(self, session_id: str, limit: int, after: tuple[str, str] | None = None) -> list[Message]:
        """The oldest messages of a session in no leaf, in (created_at, id) order; `after`
        (created_at, id) starts past a point already done (compaction in one pass)."""

    @abstractmethod
    def touch_summaries(self, ids: list[str], at: str) -> None:
        """Count one more access for each summary id and set its `last_accessed_at`."""

    @abstractmethod
    def count_unsummarised(self, session_id: str) -> int: ...

    @abstractmethod
    def sessions_with_unsummarised(self, minimum: int, limit: int) -> list[tuple[str, int]]:
        """(session, messages in no leaf) of sessions with at least `minimum` such messages."""

    @abstractmethod
    def summary_keyword_search(self, terms: list[str], filters: Any, limit: int, match_all: bool) -> list[tuple[str, float]]:
        """(summary id, score, higher better) of live summaries matching the terms; filters
        by session, agent, channel and time span (overlap)."""

    @abstractmethod
    def put_summary_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None: ...

    @abstractmethod
    def summary_vector_search(self, model: str, query: np.ndarray, filters: Any, limit: int) -> list[tuple[str, float]]: ...

    @abstractmethod
    def summaries_without_vectors(self, model: str, limit: int) -> list[Summary]: ...

    @abstractmethod
    def summary_stats(self) -> dict[str, Any]: ...

    # -- LLM accounting ------------------------------------------------------
    @abstractmethod
    def add_llm_usage(self, task: str, calls: int = 0, prompt_tokens: int = 0, completion_tokens: int = 0,
                      failures: int = 0, invalid: int = 0) -> None: ...

    @abstractmethod
    def llm_usage(self) -> dict[str, dict[str, int]]:
        """{task: {calls, prompt_tokens, completion_tokens, failures, invalid}}."""

    # -- tool-call synthesis -------------------------------------------------
    @abstractmethod
    def set_synthesized_content(self, message_id: str, content: str) -> bool:
        """Write `content` into a message whose content is still empty (full text updated
        with it); False if the message is unknown or has content."""

    @abstractmethod
    def empty_tool_messages(self, after_rowid: int, limit: int) -> list[tuple[int, Message]]:
        """(rowid, message) of messages with a tool name and no content, in index order."""
