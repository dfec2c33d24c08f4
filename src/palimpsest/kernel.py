"""The kernel: what the parts of one memory share, built once by `Memory`.

Each part (facts, summaries, tags, wiki, vaults, search, recall, jobs) takes the kernel —
or the few collaborators it needs from it — instead of the whole `Memory`, so no module
below the facade imports `Memory` and a part can be built alone in a test. The kernel
holds no behaviour of its own beyond building the LLM client on first use and telling
whether a session exists (`known_session`, one answer for every part).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from functools import cached_property
from pathlib import Path

from .access import AccessLog
from .decisions import DecisionLog
from .embed import Embedding
from .errors import PalimpsestError, unknown_session
from .journal import Journal
from .llm import LLM
from .records import Message, Session, utcnow
from .settings import Settings
from .store import Store

Clock = Callable[[], datetime]


class Kernel:
    """Store, session journals, decision log, embedding, access log, settings and clock."""

    def __init__(self, settings: Settings, store: Store, journal: Journal, *, clock: Clock = utcnow) -> None:
        self.settings = settings
        self.home: Path = settings.home_path
        self.store = store
        self.journal = journal
        self.decisions = DecisionLog(self.home)
        self.embedding = Embedding(settings, self.home)
        self.accesses = AccessLog(store)
        self.clock = clock

    @cached_property
    def llm(self) -> LLM | None:
        """The configured chat endpoint, or None: local fallbacks then."""
        return LLM.from_settings(self.settings, self.store, self.decisions)

    def whole(self, m: Message) -> Message:
        """The message with its fields as journaled where the index holds a capped copy (its first `field_cap`
        characters): what a model is asked to read whole (a distilled turn, a summary's lines, a tool's output);
        the index's copy when the journal cannot give it."""
        if not m.truncated:
            return m
        try:
            event = self.journal.get(m.session, m.journal_line, m.journal_offset)
        except PalimpsestError:
            return m
        if event is None or event.id != m.id:
            return m
        return replace(m, content=event.content, tool_result=event.tool_result, truncated=False)

    def known_session(self, session: str) -> Session | None:
        """The session's index row; `NotFound` when neither the index nor a journal has it
        (a journaled session the index has not reached yet is known: its row is None)."""
        info = self.store.get_session(session)
        if info is None and not self.journal.path(session).exists():
            raise unknown_session(session)
        return info
