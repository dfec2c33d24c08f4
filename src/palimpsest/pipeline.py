"""What new messages set in motion: the background jobs queued after indexing, and their
handlers (`distill`, `tool-synth`, `compact`).

`derived_jobs(store, settings, messages)` is called by `Memory` with the newly indexed messages.
It never raises — a write must not fail because derived work could not be queued (the
worst case is a turn that is not distilled; `palimpsest distill` can do it later) — and
it costs one read of the new rows plus one look-up per user message:

- a user message closes the turn before it: `distill` for that turn (sessions not instant,
  setting `distill`), keyed by the turn's first message; and it opens a turn that no later
  message may close (a session's last): `distill` of the session's last turn a minute on,
  at most one waiting per session, which waits while the session is still being written;
- (a message with a tool name and no text: `tool-synth`, queued by `ToolSynth.after_index`);
- every session touched: `compact`, run a minute later, at most one waiting per session
  (`compact_after` of 0 turns compaction off).

The handlers are the parts' (`Distiller`, `ToolSynth`, `Summaries`): they use the LLM
when one is configured, and on a job's last attempt (its replies kept failing or breaking
the schema; each was parked) they take the local fallback instead, so the work is done
either way (`jobs.last_attempt`).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from .records import Message, iso, parse_time, utcnow
from .store import Filters, NewJob, Store

log = logging.getLogger(__name__)
COMPACT_DELAY = timedelta(seconds=60)
TAIL_DELAY = timedelta(seconds=60)  # a session's open last turn is distilled once nothing was said in it for this long


def derived_jobs(store: Store, settings: Any, messages: list[Message]) -> list[NewJob]:
    """The jobs these new messages call for (never raises)."""
    try:
        return _jobs(store, settings, messages)
    except Exception as exc:
        log.warning("no derived jobs for %d new messages: %s", len(messages), exc)
        return []


def _jobs(store: Store, s: Any, messages: list[Message]) -> list[NewJob]:
    if not messages or not (s.distill or s.compact_after > 0):
        return []
    jobs: list[NewJob] = []
    if s.distill:
        for session in dict.fromkeys(m.session for m in messages):
            jobs += _turns_closed(store, session, [m for m in messages if m.session == session])
    if s.compact_after > 0:
        run_at = iso(utcnow() + COMPACT_DELAY)
        jobs += [NewJob("compact", {"session": sid}, job_key=f"compact:{sid}", run_at=run_at) for sid in {m.session for m in messages}]
        if s.compact_quiet_minutes > 0:
            jobs += [quiet_compaction(sid, max(m.created_at for m in messages if m.session == sid), s.compact_quiet_minutes)
                     for sid in dict.fromkeys(m.session for m in messages)]
    return jobs


def quiet_compaction(session: str, newest: str, minutes: float, after: str = "") -> NewJob:
    """The `compact` job that summarises all of a session once nothing was said in it for `minutes`, counted from its
    newest message (an imported session of last year is due now). Routine compaction waits for `compact_after`
    messages: a chat of a few turns a day had no summary and no wiki page, ever (found by a new user)."""
    due = min(utcnow(), parse_time(newest)) + timedelta(minutes=minutes)
    return NewJob("compact", {"session": session, "quiet": True}, job_key=f"compact-quiet:{session}:{after}", run_at=iso(due))


def _turns_closed(store: Store, session: str, new: list[Message]) -> list[NewJob]:
    """A distill job per turn that a new user message closes. Only the first new user
    message looks up the one before it; the others follow it within the batch."""
    users = sorted((m for m in new if m.role == "user"), key=lambda m: (m.created_at, m.id))
    if not users:
        return []
    info = store.get_session(session)
    if info is not None and info.kind == "instant":
        return []
    found = store.browse(Filters(session=session, role="user", until=users[0].created_at), 1, 0, newest_first=True)
    previous = found[0] if found else None
    jobs = []
    for m in users:
        if previous is not None and previous.id != m.id:
            jobs.append(NewJob("distill", {"session": session, "start": previous.created_at, "end": m.created_at},
                               job_key=f"distill:{session}:{previous.id}", max_attempts=4))
        previous = m
    # a user message said before one stored already (a clock stepped back, a late import) is a turn that one closes: no
    # message to come would (found by an SRE: "My colleague Ana works in the Rust team", dated before the session's last
    # turn but written after it, was never distilled)
    batch = {m.id for m in new}
    later = [u for u in store.browse(Filters(session=session, role="user", since=users[-1].created_at), len(batch) + 3, 0)
             if u.id not in batch and (u.created_at, u.id) > (users[-1].created_at, users[-1].id)]  # (past the batch's own)
    if later:
        jobs.append(NewJob("distill", {"session": session, "start": users[-1].created_at, "end": later[0].created_at},
                           job_key=f"distill:{session}:{users[-1].id}", max_attempts=4))
    # the session's last turn, distilled once the session is quiet: no user message comes after it to close it. The
    # handler reads which turn is last when it runs, and waits while the session is still being written (`Distiller.run_job`)
    jobs.append(NewJob("distill", {"session": session, "tail": True}, job_key=f"distill-tail:{session}", max_attempts=4,
                       run_at=iso(utcnow() + TAIL_DELAY)))  # one waiting per session
    return jobs
