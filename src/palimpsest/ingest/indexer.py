"""Journal → store. The index is derived: a cursor per journal says how far it got.

Indexing a session reads the complete lines after its cursor, turns each event into a
message row (capping long fields, keeping a pointer back to the journal line) and writes
the rows and the new cursor in one transaction, so a crash between the two cannot
duplicate or skip anything. If the store is down the cursor simply stays; the journal
keeps growing and the next pass resumes from the cursor. `rebuild` resets the store and
replays every journal.

A poison event never stops the index. A batch the store refuses for a reason other than
being unavailable (`StoreUnavailable`: down, locked, damaged — the cursor waits for those)
is written again event by event, and an event the store still refuses alone is
quarantined: recorded with the reason in the store (`Store.quarantine`, which moves the
cursor past it in the same transaction), so the later events of its session and every
other session are indexed. `rebuild` and `retry_quarantined` try them again (after an
upgrade that taught the store to hold them). A session whose pass fails does not hold
back the sessions after it in `index_all`.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import date
from functools import lru_cache
from typing import Any

from ..erased import session_digest
from ..errors import InvalidInput, StoreUnavailable
from ..journal import Journal
from ..records import Event, Message, Session, parse_time, said_day, speaker_in
from ..segment import TROUBLE, keyword_words, painted_words
from ..store import Filters, Quarantined, Store
from ..when import time_words

log = logging.getLogger(__name__)

IMPORTANCE_BY_KIND = {"correction": 0.9, "preference": 0.8, "decision": 0.7, "fact": 0.6, "task": 0.5}
DEFAULT_IMPORTANCE = 0.5
INDEXED_TYPES = {"message"}
UNREADABLE = "_unreadable"  # what Journal.read yields for a line it cannot parse
BATCH = 2000


def utf16_len(text: str) -> int:
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def cap_utf16(text: str, cap: int) -> str:
    """The longest prefix of `text` within `cap` UTF-16 code units (never half a pair)."""
    if len(text) <= cap // 2 or utf16_len(text) <= cap:
        return text
    units = 0
    for i, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > cap:
            return text[:i]
    return text


def _index_text(text: str | None) -> str | None:
    # PostgreSQL text cannot hold NUL; the journal keeps it, the index shows U+FFFD.
    return text.replace("\x00", "\ufffd") if text and "\x00" in text else text


def importance_of(event: Event) -> float:
    meta = event.metadata
    if not meta:
        return DEFAULT_IMPORTANCE
    value = meta.get("importance")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    return IMPORTANCE_BY_KIND.get(str(meta.get("kind", "")).lower(), DEFAULT_IMPORTANCE)


CONTEXT_PREVIOUS_CHARS = 500
TAIL = 4  # a field past the cap keeps its last cap / TAIL characters for keywords (4,000 of 16,000)
# ... and as many characters of what stands out in its middle: lines that say something failed, then its words of
# a rare shape (an error code, a host, a name said once among thousands of look-alike lines)
_WORD_EDGES = "\"'`()[]{}<>,;:.!?*"
_RARE_SHAPE = 3  # a word whose shape (digits as one) the middle says at most this often stands out


def standing_out(text: str, budget: int) -> str:
    """What stands out in `text` (a long field's middle, past the index's cap and before its
    kept tail), at most `budget` characters, for the keyword index: first the lines that say
    something went wrong (each shape of line once: a log retrying 5,000 times gives one
    line; at most half the budget), then the words whose shape — digits read as one — it says at most `_RARE_SHAPE`
    times, in the order said. A 300 KB log's one `errno=EQX4471` is found; its 3,000
    `processed batch N` lines are not repeated into the index."""
    out: list[str] = []
    size = 0
    seen: set[str] = set()

    limit = budget // 2  # the lines' share: the rare words keep the rest (a log of 64 shapes of warning had left none)

    def add(piece: str, shape: str) -> bool:
        nonlocal size
        if shape in seen:
            return True
        if size + len(piece) + 1 > limit:
            return False
        seen.add(shape)
        out.append(piece)
        size += len(piece) + 1
        return True

    at = 0
    while (match := TROUBLE.search(text, at)) is not None:
        start, end = text.rfind("\n", 0, match.start()) + 1, text.find("\n", match.end())
        line = text[start:end if end >= 0 else len(text)].strip()[:500]
        shape = _shape(line)
        if shape not in seen:  # (a line of a shape said already costs one lookup: 400,000 retries had taken seconds)
            if not add(line, shape):
                break
            seen.update(word.strip(_WORD_EDGES) for word in shape.split())  # its words are in
        if end < 0:
            break
        at = end
    limit = budget
    # counted over the distinct shapes, each word then looked up (a 12 MB tool output had spent 10 s here word by word)
    words, raw = text.split(), _shape(text).split()
    shapes: Counter[str] = Counter()
    for shape, n in Counter(raw).items():
        shapes[shape.strip(_WORD_EDGES)] += n
    rare = {shape for shape in set(raw) if shapes[shape.strip(_WORD_EDGES)] <= _RARE_SHAPE}
    for word, shape in zip(words, raw):
        if shape not in rare:
            continue
        word, shape = word.strip(_WORD_EDGES), shape.strip(_WORD_EDGES)
        if 3 <= len(word) <= 64 and not word.isdigit() and any(c.isalpha() for c in word) and not add(word, shape):
            break
    return " ".join(out)


_DIGITS = str.maketrans("0123456789", "0000000000")


def _shape(text: str) -> str:
    return text.lower().translate(_DIGITS)


def merge_patch(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """`patch` merged into `target` (RFC 7396, as the stores' `upsert_session` merges a
    session's settings): a null drops a key, an object is merged into the one it meets."""
    out = dict(target)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_patch(out[key], value)
        else:
            out[key] = value
    return out


def search_context(event: Event, previous: str, content: str | None = None, tail: str = "") -> str:
    """What a message is found by besides its own words: who said it, when, the turn
    before it (a reply's subject is often named only in the question it answers), and last,
    for keywords only, the dates its own time expressions speak of ("yesterday" said on 2
    May 2022 → "1 May 2022 Sunday"; `when.time_words`) and `segment.keyword_words`: the words of its Chinese or
    Japanese text (the tokenizers cut no words there), its emoji named as words and its words in compatibility forms
    as a query reads them ("ＡＰＩ" as "API") — the turn before's are left out, or a reply
    would match its question's words as well as the question — and `tail`, the end of a field past the index's cap (its last quarter of a cap). `content`: the
    text as indexed (default the event's)."""
    speaker = speaker_in(event.metadata, event.role)
    # a tool's call or output is found by its own words: with the prose turn before it, every call after a question
    # matched it ("Called Bash with command=make itest" ranked second for "DuplicateColumn": found by a Claude Code user)
    tool = bool(event.tool_name or event.tool_result)
    before = "" if tool else previous[:CONTEXT_PREVIOUS_CHARS].replace("\x1e", " ")  # the mark stays ours
    context = " ".join(part for part in (speaker, _spoken_date(event.created_at, event.metadata), before) if part)
    text = event.content if content is None else content
    keywords = " ".join(part for part in (spoken_dates(text, event.created_at, event.metadata), keyword_words(text or ""), tail)
                        if part)
    return f"{context}{DATES_MARK}{keywords}" if keywords else context


DATES_MARK = " \x1e "  # before the keyword-only words (dates, bigrams): a separator to the keyword index, a cut for the rest


def split_context(context: str) -> tuple[str, str]:
    """A stored search context as (speaker, date and the turn before; the dates its time
    expressions name): the vector text and the reply test read the first part only."""
    head, mark, dates = context.rpartition(DATES_MARK)
    return (head, dates) if mark else (context, "")


def spoken_dates(content: str, created_at: str, metadata: dict[str, Any] | None = None) -> str:
    """The dates a message's time expressions name, in words, resolved against its own
    time on its speaker's calendar (`records.said_day`: "yesterday" said at 20:00 in
    California on 30 November is the 29th, though UTC is already on 1 December); "" for
    none, or when its time cannot be read. The vector text leaves them out
    (`search.embedding_text`), so vectors and their cache do not change with them."""
    return time_words(content, _anchor(said_day(created_at, metadata)))


@lru_cache(maxsize=4096)
def _anchor(day: str) -> date | None:
    """The day a YYYY-MM-DD string names, or None when it cannot be read (then only
    absolute dates resolve)."""
    try:
        return parse_time(day).date()
    except InvalidInput:
        return None


@lru_cache(maxsize=4096)
def _day(day: str) -> str:
    try:
        return parse_time(day).strftime("%-d %B %Y %A")
    except InvalidInput:
        return ""


def _spoken_date(created_at: str, metadata: dict[str, Any] | None = None) -> str:
    """"5 March 2024 Tuesday" (the day a message was said, on its speaker's calendar,
    searchable as words), memoised per day."""
    return _day(said_day(created_at, metadata))


def event_to_message(event: Event, journal_path: str, cap: int, previous: str = "", journal_id: str | None = None) -> Message:
    content = _index_text(event.content) or ""
    result = _index_text(event.tool_result)
    meta = dict(event.metadata) if event.metadata else {}
    capped_content = cap_utf16(content, cap)
    capped_result = cap_utf16(result, cap) if result is not None else None
    truncated = capped_content is not content or capped_result is not result
    source = meta.get("source_lengths") if isinstance(meta.get("source_lengths"), dict) else {}  # (a field cut to fit an event)
    # past the cap, what stands out in the middle and the last lines stay searchable by keywords
    tail = " ".join(_past_cap(full, capped, cap) for full, capped in ((content, capped_content), (result, capped_result))
                    if full is not None and capped is not None and capped is not full)
    tail = f"{tail} {painted_words(capped_result)}".strip() if capped_result else tail  # (the content's: `keyword_words`)
    return Message(
        id=event.id, session=event.session, role=event.role, content=capped_content, created_at=event.created_at,
        type=event.type, tool_name=event.tool_name, tool_args=event.tool_args, tool_result=capped_result,
        metadata=meta, event_key=event.event_key, importance=importance_of(event), truncated=truncated,
        full_content_length=source.get("content") or utf16_len(content) if capped_content is not content else None,
        full_tool_result_length=source.get("tool_result") or utf16_len(result) if result is not None and capped_result is not result else None,
        journal_path=journal_path, journal_line=event.line, journal_offset=event.offset,
        context=_index_text(search_context(event, previous, capped_content, tail)) or "", journal_id=journal_id,
    )


def _past_cap(full: str, capped: str, cap: int) -> str:
    """What stays searchable of a field past the index's cap: what stands out in its middle,
    and its last cap / TAIL characters (the end of a log is where it says what failed)."""
    tail_from = max(len(capped), len(full) - cap // TAIL)
    return " ".join(part for part in (standing_out(full[len(capped):tail_from], cap // TAIL), full[tail_from:]) if part)


class Outage:
    """One warning for a run of failures of one kind: the first said, the rest counted (at
    debug), and one line when it ends. While the store is away every write and every indexer
    pass fails alike: a PostgreSQL paused for 13 s wrote 2,032 warning lines."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.failures = 0
        self._lock = threading.Lock()

    def failed(self, message: str, *args: Any) -> None:
        with self._lock:
            self.failures += 1
            first = self.failures == 1
        if first:
            log.warning(message + " (further failures are counted until it recovers)", *args)
        else:
            log.debug(message, *args)

    def recovered(self) -> None:
        if not self.failures:
            return
        with self._lock:
            n, self.failures = self.failures, 0
        if n:
            log.warning("%s recovered after %d failure%s", self.what, n, "" if n == 1 else "s")


class Indexer:
    def __init__(self, journal: Journal, store: Store, field_cap: int = 16000,
                 on_indexed: Callable[[list[Message]], None] | None = None) -> None:
        self.journal = journal
        self.store = store
        self.field_cap = field_cap
        self.on_indexed = on_indexed
        self.outage = Outage("indexing")  # shared with the writer's index-after-write

    def index_session(self, session: str) -> int:
        """Index what the journal has beyond the cursor. Returns rows inserted."""
        line, offset = self.store.cursor(session, self.journal.id)
        end = self.journal.committed_size(session)  # never a group commit still in flight
        if end <= offset:
            return 0
        return self.index_events(session, self.journal.read(session, offset, line, end), (line, offset))

    def index_events(self, session: str, events: Iterable[Event], start: tuple[int, int]) -> int:
        """Index events known to follow the cursor `start` directly (a fresh append)."""
        total = 0
        batch: list[Event] = []
        for event in events:
            if event.type == UNREADABLE:  # a line that is not an event: reported, never silently passed
                total += self._write_or_quarantine(session, batch) if batch else 0
                batch = []
                self._quarantine(session, event, InvalidInput("the journal line is not a readable event (not JSON, or not an object)"))
                continue
            batch.append(event)
            if len(batch) >= BATCH:
                total += self._write_or_quarantine(session, batch)
                batch = []
        if batch:
            total += self._write_or_quarantine(session, batch)
        return total

    def _write_or_quarantine(self, session: str, events: list[Event]) -> int:
        """`_write`, or — if the store refuses the batch for its content — each event alone,
        quarantining the ones it still refuses."""
        try:
            return self._write(session, events)
        except StoreUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 — whatever the store refuses is this batch's content
            if len(events) == 1:
                self._quarantine(session, events[0], exc)
                return 0
        return sum(self._write_or_quarantine(session, [e]) for e in events)

    def _quarantine(self, session: str, event: Event, exc: Exception) -> None:
        reason = f"{type(exc).__name__}: {exc}"
        log.warning("quarantined event %s (%s line %d): %s", event.id, session, event.line, reason)
        self.store.quarantine(Quarantined(journal=self.journal.id, session=session, line=event.line, offset=event.offset,
                                          end=event.offset + event.nbytes, event_id=event.id, reason=reason))

    def retry_quarantined(self) -> dict[str, int]:
        """Index the quarantined events of this home's journals again (after an upgrade):
        those the store now takes leave the quarantine, the others stay with their reason."""
        retried = indexed = 0
        for q in self.store.quarantined(self.journal.id, limit=1_000_000):
            retried += 1
            event = next(iter(self.journal.read(q.session, q.offset, q.line - 1, q.end)), None)
            if event is None or event.type == UNREADABLE:
                continue  # still not an event (or gone): it stays, with its reason
            try:
                self._write(q.session, [event])
            except StoreUnavailable:
                raise
            except Exception as exc:  # noqa: BLE001 — still refused: the new reason replaces the old
                self._quarantine(q.session, event, exc)
                continue
            self.store.release_quarantined(self.journal.id, q.session, q.offset)
            indexed += 1
        return {"retried": retried, "indexed": indexed, "quarantined": self.store.quarantine_count(self.journal.id)}

    def _write(self, session: str, events: list[Event]) -> int:
        path = str(self.journal.path(session))
        sessions: dict[str, Any] = {}
        messages = []
        previous = self._previous_text(session)
        for e in events:
            if e.type == "session":
                said = {k: v for k, v in (e.metadata or {}).items() if v is not None}
                if isinstance(said.get("settings"), dict):  # merged as the store merges them (a rebuild is the live index)
                    said["settings"] = merge_patch(sessions.get("settings") or {}, said["settings"])
                sessions.update(said)
            elif e.type in INDEXED_TYPES:
                messages.append(event_to_message(e, path, self.field_cap, previous, self.journal.id))
                previous = messages[-1].content or previous
        times = [m.created_at for m in messages] or [e.created_at for e in events]
        settings = sessions.pop("settings", None) or {}
        info = {k: sessions.get(k) for k in ("key", "agent", "channel", "title")}
        self.store.upsert_session(
            Session(id=session, kind=sessions.get("kind") or self._kind(session), settings=settings,
                    created_at=min(times), updated_at=max(times), **info)
        )
        last = events[-1]
        end = (last.line, last.offset + last.nbytes)
        inserted = self.store.insert_messages(session, messages, end, self.journal.id)
        if inserted and self.on_indexed:
            new = set(inserted)
            self.on_indexed([m for m in messages if m.id in new])
        return len(inserted)

    def _previous_text(self, session: str) -> str:
        last = self.store.browse(Filters(session=session), 1, 0, newest_first=True)
        return last[0].content if last else ""

    def _kind(self, session: str) -> str:
        existing = self.store.get_session(session)
        return existing.kind if existing else "normal"

    def index_all(self) -> int:
        """Catch every journal up; a session whose pass fails is retried next pass, and the
        sessions after it are indexed meanwhile; the first failure is raised once every
        session was tried."""
        total = 0
        failure: Exception | None = None
        erased = self.store.erased_sessions()  # (erased through another home on the store: this home still has the journal)
        for session in self.journal.sessions():
            if session_digest(session) in erased:
                continue
            try:
                self.journal.repair(session)
                total += self.index_session(session)
            except Exception as exc:  # noqa: BLE001 — one session's failure must not hold back the others
                self.outage.failed("indexing session %s failed, retried next pass: %s", session, exc)
                failure = failure or exc
        if failure is not None:
            raise failure
        self.outage.recovered()
        return total

    def check_tails(self) -> list[str]:
        """Sessions whose journal no longer holds what the index says it indexed — the cursor
        points past the end of the file, or not just after a line's newline (a journal torn
        or cut after indexing) — each repaired: its rows dropped and indexed anew from the
        journal. Cheap: one stat and one byte read per session."""
        if not self.journal.sessions():
            return []
        cursors = self.store.cursors(self.journal.id)
        repaired = []
        for session, (_, offset) in cursors.items():
            if offset and not self._ends_a_line(session, offset):
                log.warning("journal of %s no longer holds its indexed tail (cursor at byte %d): re-indexing it", session, offset)
                self.store.drop_session_index(session)
                self.store.forget_cursor(session, self.journal.id)
                self.index_session(session)
                repaired.append(session)
        return repaired

    def _ends_a_line(self, session: str, offset: int) -> bool:
        path = self.journal.path(session)
        try:
            if path.stat().st_size < offset:
                return False
            with open(path, "rb") as f:
                f.seek(offset - 1)
                return f.read(1) == b"\n"
        except FileNotFoundError:
            return False

    def lag(self) -> dict[str, int]:
        """Bytes of journal not yet indexed, per session that has any."""
        sessions = self.journal.sessions()
        if not sessions:  # (and no journal id to ask about: a home never written to may have none)
            return {}
        cursors = self.store.cursors(self.journal.id)
        out = {}
        for session in sessions:
            behind = self.journal.size(session) - cursors.get(session, (0, 0))[1]
            if behind > 0:
                out[session] = behind
        return out

    def rebuild(self) -> int:
        """Drop the whole index and replay every journal."""
        self.store.reset()
        return self.index_all()

