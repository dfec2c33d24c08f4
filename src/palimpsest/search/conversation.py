"""The stages that re-rank message hits by the shape of a conversation.

They run after the hybrid ranking (`hybrid.rank`) of messages, on the weighted sum's
scale, and read only the candidates (no store access): a turn inherits part of its
reply's lead, turns by whom the query is about gain a bonus, and a session that answers
in several turns rises together.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from ..ingest.indexer import CONTEXT_PREVIOUS_CHARS, split_context
from ..records import Hit
from .hybrid import Weights

# Who a query is about. A query written in the first person is the user's (recall builds
# its query from the user's turn): "my dog" was talked about in the user's own turns. A
# query about what the assistant said ("you recommended", "our previous conversation")
# is about the assistant's turns; a query naming a speaker is about that speaker's turns.
FIRST_PERSON = re.compile(r"\b(?:i|i'm|i’m|i've|i’ve|i'd|i’d|i'll|i’ll|me|my|mine|myself)\b", re.IGNORECASE)
ABOUT_ASSISTANT = re.compile(
    r"\byou(?:\s+\w+)?\s+(?:told|said|mentioned|recommended|suggested|provided|gave|listed|shared|wrote|explained|described|showed)\b"
    r"|\bdid you\s+(?:\w+\s+)?(?:tell|say|mention|recommend|suggest|provide|give|list|share|write|explain|describe|show)\b"
    r"|\b(?:we|you and i)\s+(?:\w+\s+)?(?:discuss(?:ed)?|talk(?:ed)?|spoke|speak|chat(?:ted)?|went over|go over)\b"
    r"|\bour\s+(?:previous|last|earlier|past)\s+(?:conversation|chat|discussion|talk)\b",
    re.IGNORECASE,
)
def query_subject(query: str, speakers: set[str]) -> tuple[str, str] | None:
    """Whose turns a query is about: ("speaker", name) when it names exactly one of
    `speakers`, else ("role", "assistant") when it asks what the assistant said, else
    ("role", "user") when it speaks in the first person; None when it says nothing of it."""
    named = {s for s in speakers if re.search(r"(?<!\w)" + re.escape(s) + r"(?!\w)", query, re.IGNORECASE)}
    if len(named) == 1:
        return "speaker", named.pop()
    if named:
        return None
    if ABOUT_ASSISTANT.search(query):
        return "role", "assistant"
    if FIRST_PERSON.search(query):
        return "role", "user"
    return None

# a bare acknowledgement: by itself it tells the model nothing, and a block showed "assistant: Noted." for "where do
# I live?" (found by the words of the turn before it, which a correction had retired)
_ACK = re.compile(r"\W*(?:(?:ok(?:ay)?|k|(?:i'?ve |i have )?noted(?: that| it)?|updated|saved|changed|got that|"
                  r"i'?ll remember(?: that)?|i will remember(?: that)?|sure|got it|gotcha|thanks?(?: you)?(?: so much)?|thx|ty|great|cool|nice|perfect|"
                  r"yes|yep|yup|yeah|alright|all right|understood|will do|done|sounds good|of course|right|roger(?: that)?|"
                  r"no problem|np|you'?re welcome|anything else)\W*){1,3}", re.IGNORECASE)


def acknowledges(m: Any) -> bool:
    """A message that is a bare acknowledgement ("Okay!", "Noted.", "Sure. Anything else?") and no tool call."""
    return bool(_ACK.fullmatch(m.content or "")) and not (m.tool_name or m.tool_result)


def acknowledgements_last(hits: list[Hit]) -> list[Hit]:
    """The hits with bare acknowledgements after the others, in order: their search context (the turn before them) is
    what matched, and that turn is a hit of its own ("Okay!" was second for "marisol's number?", after the number)."""
    return sorted(hits, key=lambda h: acknowledges(h.message))  # (a stable sort: each part keeps its order)



def _replies(hits: list[Hit]) -> dict[str, Hit]:
    """Candidate id → the candidate that is its reply: the next message of the same
    session, recognised by its search context, which ends with the turn it follows."""
    by_journal: dict[tuple[str, str], list[Hit]] = {}
    for h in hits:
        by_journal.setdefault((h.message.session, h.message.journal_path), []).append(h)
    out: dict[str, Hit] = {}
    for group in by_journal.values():
        group.sort(key=lambda h: h.message.journal_line)
        for turn, reply in itertools.pairwise(group):
            if replies_to(reply.message, turn.message):
                out[turn.message.id] = reply
    return out


def replies_to(reply: Any, turn: Any) -> bool:
    """Whether `reply` is the message after `turn` in its session: its search context ends with that turn's text."""
    head = (turn.content or "")[:CONTEXT_PREVIOUS_CHARS]
    return bool(head) and split_context(reply.context or "")[0].endswith(head)


def conversation_rerank(hits: list[Hit], query: str, w: Weights) -> list[Hit]:
    """Re-rank hybrid hits by the shape of a conversation, in two steps:

    - a turn inherits `w.reply` × how far its reply out-scores it (the reply is about the
      turn: "What breed is Max?" is answered by the assistant's "Golden Retrievers like
      Max…", whose turn before it, the user's, holds the fact in other words);
    - turns by whom the query is about gain `w.speaker` (`query_subject`).

    Both read only the candidates (no store access)."""
    if not hits or (w.reply <= 0 and w.speaker <= 0):
        return hits
    if w.reply > 0:
        base = {h.message.id: h.score for h in hits}
        replies = _replies(hits)
        for h in hits:
            reply = replies.get(h.message.id)
            lead = base[reply.message.id] - base[h.message.id] if reply is not None else 0.0
            if lead > 0:
                h.parts["reply"] = lead
                h.score += w.reply * lead
    speakers = [h.message.speaker for h in hits] if w.speaker > 0 else []
    subject = query_subject(query, set(speakers) - {""}) if w.speaker > 0 else None
    if subject is not None:
        kind, who = subject
        for h, speaker in zip(hits, speakers):
            if (speaker if kind == "speaker" else h.message.role) == who:
                h.parts["speaker"] = 1.0
                h.score += w.speaker
    hits.sort(key=lambda h: (-h.score, h.message.created_at, h.message.id))
    return hits


ANSWERED_TOP = 10  # the best hits whose answers are looked for (3 / 5 / 10 / 20 measured on LoCoMo half a)


def answers(hits: list[Hit], w: Weights) -> list[Hit]:
    """A question and its answer lend each other part of their lead, best first. Three
    shapes, read from the journal's line order among the candidates:

    - a best hit that asks ("Who's your favourite team?") passes `w.answer` × its lead to
      its reply (`_replies`: "The Wolves are solid");
    - a best hit followed by the listener's question ("I had a picnic with friends from
      church, we played games" / "What games?") passes `w.follow` × its lead to the
      speaker's answer two lines on ("Charades and a scavenger hunt"): same speaker, and
      its search context (the turn before it) ends with a question mark;
    - the converse: a best hit that answers such a question passes `w.topic` × its lead
      back to the speaker's turn two lines before, the one the question was about ("Yeah, I
      painted that lake sunrise last year!" → "take a look at this [a painting of a sunset
      over a lake]")."""
    if not hits or (w.answer <= 0 and w.follow <= 0 and w.topic <= 0):
        return hits
    at = {(h.message.session, h.message.journal_path, h.message.journal_line): h for h in hits}
    base = {h.message.id: h.score for h in hits}
    replies = _replies(hits) if w.answer > 0 else {}

    def inherit(to: Hit | None, lead_of: Hit, share: float, part: str) -> None:
        lead = base[lead_of.message.id] - base[to.message.id] if to is not None else 0.0
        if to is not None and share > 0 and lead > 0:
            to.parts[part] = max(to.parts.get(part, 0.0), lead)
            to.score += share * lead

    for h in hits[:ANSWERED_TOP]:
        m = h.message
        if (m.content or "").rstrip().endswith("?"):
            inherit(replies.get(m.id), h, w.answer, "answer")
        follow = at.get((m.session, m.journal_path, m.journal_line + 2))
        if follow is not None and _same_speaker(follow, h) and _asked_before(follow):
            inherit(follow, h, w.follow, "follow")
        topic = at.get((m.session, m.journal_path, m.journal_line - 2))
        if topic is not None and _same_speaker(topic, h) and _asked_before(h):
            inherit(topic, h, w.topic, "topic")
    hits.sort(key=lambda h: (-h.score, h.message.created_at, h.message.id))
    return hits


def _same_speaker(a: Hit, b: Hit) -> bool:
    return a.message.role == b.message.role and a.message.speaker == b.message.speaker


def _asked_before(h: Hit) -> bool:
    """The turn before `h` (its search context) ends with a question mark."""
    return split_context(h.message.context)[0].rstrip().endswith("?")


def session_boost(hits: list[Hit], weight: float) -> list[Hit]:
    """Light re-ranking: a hit gains `weight` × (the mean score of the other candidates
    of its session, relative to the best score), so a session that answers the question
    in several turns rises together — what session-level questions need."""
    if weight <= 0 or not hits:
        return hits
    top = max(h.score for h in hits) or 1.0
    by_session: dict[str, list[float]] = {}
    for h in hits:
        by_session.setdefault(h.message.session, []).append(h.score)
    for h in hits:
        scores = by_session[h.message.session]
        others = (sum(scores) - h.score) / max(1, len(scores) - 1) if len(scores) > 1 else 0.0
        h.parts["session"] = others / top
        h.score += weight * h.parts["session"]
    hits.sort(key=lambda h: (-h.score, h.message.created_at, h.message.id))
    return hits
