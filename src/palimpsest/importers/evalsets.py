"""The two evaluation sets of `eval/README.md`: LoCoMo and LongMemEval.

LoCoMo (a JSON list of conversations, or one conversation): each `session_N` of a
conversation becomes the session `<sample_id>:session_N`, channel `<sample_id>` (so a
search can be scoped to one conversation with `channel=`), title "A & B, session N".
A turn's `created_at` is the session's `session_N_date_time` plus one second per turn
(order survives time sorting); its role is `user` for `speaker_a` and `assistant` for
`speaker_b`; `metadata` holds `speaker`, `dia_id` (and `img_url`, `query` when present);
a shared photo's `blip_caption` is appended to the text as "[shared a photo: …]".
The `qa` items are not imported (they are the questions, not the memory).

LongMemEval (JSONL, plain or gzipped, or the original JSON list): for each question,
each haystack session becomes `<question_id>:<haystack_session_id>` with channel
`<question_id>`; `created_at` is its `haystack_dates` entry plus one second per turn;
`has_answer` is kept in metadata. A session id repeated in one haystack with the same
turns is imported once. Questions themselves are not imported.

Both are all-or-nothing: a benchmark imported in part would measure something else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from ..errors import InvalidInput
from ..records import check_session_id
from .base import Plan

SESSION_KEY = re.compile(r"^session_(\d+)$")


def _wall(moment: datetime) -> str:
    """A turn's time as the dataset gives it: a wall time with no zone (written without an
    offset, so the day it names is kept whatever the importing machine's zone)."""
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds")


def parse_locomo_time(text: Any) -> datetime:
    """"1:56 pm on 8 May, 2023" (UTC: the data set gives no zone)."""
    if not isinstance(text, str):
        raise InvalidInput("date_time must be a string")
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        raise InvalidInput(f"unreadable date_time {text[:40]!r}") from None


def parse_longmemeval_time(text: Any) -> datetime:
    """"2023/05/20 (Sat) 15:08" (UTC)."""
    if not isinstance(text, str):
        raise InvalidInput("date must be a string")
    try:
        return datetime.strptime(re.sub(r"\s*\([A-Za-z]+\)\s*", " ", text.strip()), "%Y/%m/%d %H:%M").replace(tzinfo=UTC)
    except ValueError:
        raise InvalidInput(f"unreadable date {text[:40]!r}") from None


def plan_locomo(doc: Any, agent: str | None) -> Plan:
    plan = Plan("locomo", all_or_nothing=True)
    conversations = doc if isinstance(doc, list) else [doc]
    for i, conv in enumerate(conversations):
        where = f"conversation {i}"
        if not isinstance(conv, dict) or not isinstance(conv.get("conversation"), dict):
            plan.problem(where, "expected an object with a 'conversation' object")
            continue
        sample = conv.get("sample_id", str(i))
        try:
            _locomo_conversation(plan, str(sample), conv["conversation"], agent)
        except InvalidInput as exc:
            plan.problem(f"{where} ({sample})", str(exc))
        plan.skipped["qa items (questions, not memory)"] += len(conv.get("qa") or [])
    return plan


def _locomo_conversation(plan: Plan, sample: str, conv: dict[str, Any], agent: str | None) -> None:
    a, b = conv.get("speaker_a"), conv.get("speaker_b")
    if not isinstance(a, str) or not isinstance(b, str):
        raise InvalidInput("speaker_a and speaker_b must be strings")
    numbers = sorted(int(m.group(1)) for k in conv if (m := SESSION_KEY.match(k)))
    for n in numbers:
        turns = conv[f"session_{n}"]
        if not isinstance(turns, list):
            raise InvalidInput(f"session_{n} must be a list of turns")
        start = parse_locomo_time(conv.get(f"session_{n}_date_time"))
        sid = check_session_id(f"{sample}:session_{n}")
        sp = plan.session(sid)
        sp.attrs = {"channel": sample, "title": f"{a} & {b}, session {n}",
                    "settings": {"speaker_a": a, "speaker_b": b, "date_time": conv[f"session_{n}_date_time"]}}
        if agent:
            sp.attrs["agent"] = agent
        for j, turn in enumerate(turns):
            sp.messages.append(_locomo_turn(turn, j, start, a, f"{sid}[{j}]"))


def _locomo_turn(turn: Any, j: int, start: datetime, speaker_a: str, where: str) -> dict[str, Any]:
    if not isinstance(turn, dict):
        raise InvalidInput(f"{where}: a turn must be an object")
    text, speaker = turn.get("text"), turn.get("speaker")
    if not isinstance(text, str) or not isinstance(speaker, str):
        raise InvalidInput(f"{where}: text and speaker must be strings")
    caption = turn.get("blip_caption")
    if isinstance(caption, str) and caption.strip():
        text = f"{text} [shared a photo: {caption.strip()}]"
    meta = {"speaker": speaker, "dia_id": turn.get("dia_id")}
    meta.update({k: turn[k] for k in ("img_url", "query") if turn.get(k)})
    return {"role": "user" if speaker == speaker_a else "assistant", "content": text, "metadata": meta,
            "created_at": _wall(start + timedelta(seconds=j)), "event_key": f"locomo:{j}:{turn.get('dia_id')}", "_where": where}


def plan_longmemeval(records: Iterable[tuple[int | None, Any]], agent: str | None) -> Plan:
    plan = Plan("longmemeval", all_or_nothing=True)
    for n, (line, q) in enumerate(records):
        where = f"line {line}" if line is not None else f"question {n}"
        try:
            _longmemeval_question(plan, q, agent)
        except InvalidInput as exc:
            plan.problem(where, str(exc), line)
    return plan


def _longmemeval_question(plan: Plan, q: Any, agent: str | None) -> None:
    if not isinstance(q, dict) or not isinstance(q.get("question_id"), str):
        raise InvalidInput("expected a question object with a question_id")
    qid = q["question_id"]
    ids, dates, sessions = q.get("haystack_session_ids"), q.get("haystack_dates"), q.get("haystack_sessions")
    if not (isinstance(ids, list) and isinstance(dates, list) and isinstance(sessions, list)) or not len(ids) == len(dates) == len(sessions):
        raise InvalidInput(f"{qid}: haystack_session_ids, haystack_dates and haystack_sessions must be lists of one length")
    seen: dict[str, Any] = {}
    for h, (hid, date, turns) in enumerate(zip(ids, dates, sessions)):
        if not isinstance(turns, list):
            raise InvalidInput(f"{qid}: haystack session {h} must be a list of turns")
        if seen.get(str(hid)) == turns:
            plan.skipped["repeated haystack sessions"] += 1
            continue
        seen[str(hid)] = turns
        sid = check_session_id(f"{qid}:{hid}")
        start = parse_longmemeval_time(date)
        sp = plan.session(sid)
        sp.attrs = {"channel": qid, "settings": {"question_id": qid, "haystack_session_id": hid, "date": date}}
        if agent:
            sp.attrs["agent"] = agent
        for j, turn in enumerate(turns):
            sp.messages.append(_longmemeval_turn(turn, h, j, start, f"{qid} session {hid} turn {j}"))
    plan.skipped["questions (not memory)"] += 1


def _longmemeval_turn(turn: Any, h: int, j: int, start: datetime, where: str) -> dict[str, Any]:
    if not isinstance(turn, dict):
        raise InvalidInput(f"{where}: a turn must be an object")
    meta = {"has_answer": turn["has_answer"]} if "has_answer" in turn else {}
    return {"role": turn.get("role"), "content": turn.get("content"), "metadata": meta,
            "created_at": _wall(start + timedelta(seconds=j)), "event_key": f"lme:{h}:{j}", "_where": where}
