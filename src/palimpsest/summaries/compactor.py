"""The summary DAG: old messages compacted into leaf → branch → root summaries.

A `compact` job (queued for a session whenever it gets new messages, at most one waiting
per session) looks at the session's messages that are in no leaf. With more than
`compact_after` of them, it takes the oldest — leaving the newest `compact_keep` alone —
in batches of whole messages of at most `summary_leaf_tokens` tokens (and
`LEAF_MAX_MESSAGES` messages; a message longer than the budget is a leaf of its own, its
prompt line cut at the budget and saying so), and writes one leaf per batch with
`summary_sources` links to its messages; the work per batch is bounded, so a session of
100,000 messages is compacted in constant memory. Leaves with no parent are rolled into a
branch once they add up to `summary_branch_tokens` (a branch closes before the leaf that
would overflow it); whenever a branch is written the session's root is rewritten over
every branch (within `summary_root_tokens`, each branch trimmed alike if they do
not fit) and the old root is kept, marked superseded. `compact(final=True)` (the CLI's
`summaries compact --final`) summarises every message and rolls whatever is left, so
the tree is complete: every message in exactly one leaf, every leaf under a branch,
every branch under the session's one live root.

Prompts: every level's system prompt shares the rules (cover every distinct topic, invent
nothing, copy identifiers verbatim, plain Unicode); each user prompt starts with a
preamble (session id, agent, channel, title, span, count) and every message line
carries `[#NN ISO-minute agent/role]`. The model answers `{"summary", "identifiers"}`
(validated); identifiers it names that the sources do not hold are dropped. Without an
LLM — or when its replies stay invalid until the job's last attempt — the summary is
extractive: the messages themselves when they fit, else the most informative sentence of
each stretch of messages, in order, with its line tag, and every identifier found (PR and issue numbers, commit hashes, file
names, URLs, versions, `code spans`) listed verbatim.

Every summary is journaled (`<home>/system/sessions/summaries/events.jsonl`) before it is
stored, so `replay` restores the DAG into a new store; summaries are embedded and
searched (`Summaries.search`), and `Summaries.expand` returns a summary's children and messages.
Tokens are estimated as characters / 4.
"""

from __future__ import annotations

import logging
import math
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..distill import batches, message_line, minute
from ..facts.local import sentences
from ..records import Message, iso, utcnow
from ..store.summaries_base import DEPTHS, Summary
from ..tokens import truncate_to_tokens

log = logging.getLogger(__name__)
SYSTEM_SESSION = "summaries"
LEAF_MAX_MESSAGES = 400
LINE_CHARS = 4000
# Identifiers are found token by token (linear in the text): one regex over whole messages
# backtracked badly on long words.
_EXT = "py|js|ts|tsx|jsx|go|rs|md|json|yaml|yml|toml|sql|sh|txt|c|h|cpp|hpp|java|rb|lock|cfg|ini|html|css"
_TOKEN = re.compile(rf"#\d+|[0-9a-f]{{7,40}}|https?://\S+|[\w./-]*\w\.(?:{_EXT})|v?\d+\.\d+\.\d+")
_HEX_DIGIT = re.compile(r"\d")
_CODE = re.compile(r"`[^`\n]{2,80}`")
SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["summary", "identifiers"],
    "properties": {"summary": {"type": "string", "minLength": 1, "maxLength": 32000},  # (an endpoint once wrote 2 MB)
                   "identifiers": {"type": "array", "maxItems": 200, "items": {"type": "string", "maxLength": 500}}},
}
RULES = """Rules:
- Cover every distinct topic in the input, however brief; do not drop a topic to save words.
- Invent nothing: no fact, name, number or date that the input does not state.
- Copy identifiers verbatim (PR and issue numbers, commit hashes, file names, skill names, URLs, versions) and list them in "identifiers".
- Keep who said what and when; use absolute dates from the line tags.
- Plain Unicode text, no Markdown headings, no emoji.
Answer JSON: {{"summary": "...", "identifiers": ["..."]}}."""
PROMPTS = {
    0: "You summarise a stretch of one conversation (a leaf summary) in at most {words} words.\n" + RULES,
    1: "You merge consecutive leaf summaries of one conversation into a branch summary of at most {words} words.\n" + RULES,
    2: "You merge the branch summaries of one whole conversation into its root summary of at most {words} words.\n" + RULES,
}


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def identifiers(text: str) -> list[str]:
    """PR and issue numbers, commit hashes, file names, URLs, versions and `code spans`, verbatim, in order."""
    out: list[str] = []
    previous = ""
    for raw in text.split():
        token = raw.strip(",;:()[]<>\"'!?").rstrip(".")
        found = None
        if token.isalpha():  # most words: nothing to look at
            previous = token
            continue
        if raw.startswith("[#"):
            found = None  # a prompt line tag
        elif token.isdigit() and previous.lower() in ("pr", "issue", "pull"):
            found = f"{previous} {token}"
        elif _TOKEN.fullmatch(token) and (not token[0].isalnum() or token[0] == "v" or not token.isalnum() or _HEX_DIGIT.search(token)):
            found = token
        if found and found not in out:
            out.append(found)
        previous = token
    for m in _CODE.finditer(text):
        if m.group(0) not in out:
            out.append(m.group(0))
    return out


def _new_id() -> str:
    return f"sum_{time.time_ns():019d}{secrets.token_hex(2)}"


@dataclass
class SummaryHit:
    summary: Summary
    score: float
    parts: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary.to_dict(), "score": round(self.score, 6), "score_parts": {k: round(v, 6) for k, v in self.parts.items()}}


# -- writing -------------------------------------------------------------------
class Compactor:
    """Writes one session's summaries (see the module doc)."""

    def __init__(self, part: Any, session: str, *, use_llm: bool = True, cancel: threading.Event | None = None) -> None:
        self.part, self.session, self.cancel = part, session, cancel  # part: `Summaries`, which runs its compactors
        self.store, self.s = part.store, part.settings
        self.llm = part.kernel.llm if use_llm else None
        self.info = self.store.get_session(session)
        self.written: dict[str, int] = {"leaf": 0, "branch": 0, "root": 0}

    def run(self, final: bool = False) -> dict[str, int]:
        """One pass from the oldest unsummarised message on: each batch is read past the
        previous one (a cursor), counted down rather than recounted; a message indexed
        meanwhile with an older time is picked up by the next run."""
        store = self.store
        keep = 0 if final else max(self.s.compact_keep, 0)
        pending = store.count_unsummarised(self.session)
        if not final and pending <= self.s.compact_after:
            return self.written
        after: tuple[str, str] | None = None
        fetch = 64  # rows read per batch, adapted to how many the budget took last time
        while pending > keep:
            cap = min(LEAF_MAX_MESSAGES, pending - keep)
            while True:
                rows = [self.part.kernel.whole(r) for r in store.unsummarised(self.session, min(cap, fetch), after)]
                batch = self._batch(rows)  # of whole messages, as journaled (the index caps a long one)
                if len(batch) < len(rows) or len(rows) < min(cap, fetch) or fetch >= cap:
                    break
                fetch *= 4
            fetch = max(64, 2 * len(batch))
            if not batch:
                break
            self._leaf(batch)
            after, pending = (batch[-1].created_at, batch[-1].id), pending - len(batch)
            self._roll(final and pending <= 0)
        if final:
            self._roll(True)
        return self.written

    def _batch(self, messages: list[Message]) -> list[Message]:
        """The first run of whole messages that fits the leaf budget (`distill.batches`)."""
        return batches(messages, self.s.summary_leaf_tokens)[0] if messages else []

    def _leaf(self, batch: list[Message]) -> Summary:
        limit = self.s.summary_leaf_tokens * 4  # only a message over the whole budget (alone in its leaf) is cut
        lines = [message_line(i + 1, m, self.info.agent if self.info else None, limit) for i, m in enumerate(batch)]
        content, model = self._write(0, lines, batch[0].created_at, batch[-1].created_at, len(batch))
        s = Summary(_new_id(), self.session, 0, content, len(batch), batch[0].created_at, batch[-1].created_at, model,
                    iso(utcnow()), [m.id for m in batch])
        return self._put(s)

    def _roll(self, final: bool) -> None:
        store = self.store
        leaves = store.session_summaries(self.session, 0, orphans=True)
        new_branch = False
        group: list[Summary] = []
        budget, used = self.s.summary_branch_tokens, 0
        for leaf in leaves:  # a branch closes before the leaf that would overflow it: leaves are never cut to fit
            if group and used + tokens(leaf.content) > budget:
                self._parent(1, group)
                group, used, new_branch = [], 0, True
            group.append(leaf)
            used += tokens(leaf.content)
            if used >= budget:
                self._parent(1, group)
                group, used, new_branch = [], 0, True
        if group and final:
            self._parent(1, group)
            new_branch = True
        roots = store.session_summaries(self.session, 2)
        if new_branch or (final and not roots and store.session_summaries(self.session, 1)):
            branches = store.session_summaries(self.session, 1)
            self._parent(2, branches, supersedes=roots[-1].id if roots else None)

    def _parent(self, depth: int, children: list[Summary], supersedes: str | None = None) -> Summary:
        budget = self.s.summary_branch_tokens if depth == 1 else self.s.summary_root_tokens
        share = max(200, budget // max(1, len(children)))  # tokens per child if they do not all fit
        fits = sum(tokens(c.content) for c in children) <= budget
        blocks = [f"[S{i + 1} {minute(c.earliest_at)} to {minute(c.latest_at)}, {DEPTHS[c.depth]}, {c.message_count} messages]\n"
                  + (c.content if fits else c.content[: share * 4]) for i, c in enumerate(children)]
        first, last = children[0].earliest_at, max(c.latest_at for c in children)
        count = sum(c.message_count for c in children)
        # a parent of one child says what its child says, word for word, with no call: a model asked to "merge" one
        # summary paraphrased it, and the copies (a branch, a root) filled 77 of an on-call lead's 176 summary lines, where
        # recall leaves out a text said word for word before it (`recall._once`)
        content, model = (children[0].content, children[0].model) if len(children) == 1 and fits \
            else self._write(depth, blocks, first, last, count)
        s = Summary(_new_id(), self.session, depth, content, count, first, last, model, iso(utcnow()), [c.id for c in children])
        return self._put(s, supersedes)

    def _write(self, depth: int, lines: list[str], first: str, last: str, count: int) -> tuple[str, str]:
        source = "\n".join(lines)
        if self.llm is not None:
            words = int(self.s.summary_max_tokens * 0.7)
            prompt = [{"role": "system", "content": PROMPTS[depth].format(words=words)},
                      {"role": "user", "content": self._preamble(first, last, count) + "\n\n" + source}]
            reply = self.llm.structured_call(prompt, SUMMARY_SCHEMA, task=f"summarize-{DEPTHS[depth]}", name="summary",
                                             max_tokens=self.s.summary_max_tokens + 400, cancel=self.cancel,
                                             context={"session": self.session, "depth": depth})
            said = _LINE_TAG.sub("", source)  # the messages' own words: a line's tag (#01) is no identifier of theirs
            kept = [x for x in reply.data["identifiers"] if x and _whole(x, said)]
            summary = _within(reply.data["summary"].strip(), self.s.summary_max_tokens)
            text = summary + (f"\nIdentifiers: {', '.join(kept)}" if kept else "")
            return text, reply.model or self.llm.model
        return extractive(lines, self.s.summary_max_tokens, depth), "extractive"

    def _preamble(self, first: str, last: str, count: int) -> str:
        i = self.info
        return (f"Session {self.session}; agent {i.agent if i and i.agent else '-'}; channel {i.channel if i and i.channel else '-'}; "
                f"title {i.title if i and i.title else '-'}; span {minute(first)} to {minute(last)}; {count} messages.")

    def _put(self, s: Summary, supersedes: str | None = None) -> Summary:
        self.part.decisions.record(SYSTEM_SESSION, "put", {"summary": s.to_dict(), "supersedes": supersedes}, subject=s.id,
                                   key=s.id, content=f"{DEPTHS[s.depth]} {s.id}", created_at=s.created_at)
        self.store.put_summary(s, supersedes)
        self.written[DEPTHS[s.depth]] += 1
        self.part.stored(s)  # tags proposed and the wiki mined per leaf (set by Memory), its vector
        return s


_LINE_TAG = re.compile(r"^\[#\d+ [^\]\n]*\]\s?", re.MULTILINE)
# a message line's tag anywhere in a child summary's line (a branch written before tags were read as words holds one
# mid-line), or its start where a child too long for its share was cut
_ANY_TAG = re.compile(r"\[#\d+ \d{4}-\d\d-\d\dT\d\d:\d\dZ[^\]\n]*(?:\]|$)|\[#[\d :TZ-]*$")


def _whole(identifier: str, text: str) -> bool:
    """Whether `text` holds `identifier` whole: not "v2.1" of "v2.12.0", "#452" of "#4521" or
    "app.py" of "app.py.x" (a model's invention that a substring test let through)."""
    return re.search(rf"(?<!\w){re.escape(identifier)}(?!\w|[.\-/#:]\w)", text) is not None


def _within(text: str, tokens: int) -> str:
    """`text` within `tokens`, cut at a sentence's end when one is in its second half, else where
    the room ends (`summary_max_tokens` holds for a model's summary too: an endpoint that ignores
    `max_tokens` had stored 31,000 characters)."""
    cut, _ = truncate_to_tokens(text, tokens)
    if len(cut) == len(text):
        return text
    end = max(cut.rfind(". "), cut.rfind(".\n"), cut.rfind("。"), cut.rfind("! "), cut.rfind("? "))
    return cut[: end + 1] if end > len(cut) // 2 else cut.rstrip()


def extractive(lines: list[str], max_tokens: int, depth: int = 0) -> str:
    """The local fallback: informative sentences spread over the input, in order, and
    every identifier verbatim."""
    budget = max_tokens * 4
    found = identifiers("\n".join(lines))
    ident_line = f"Identifiers: {', '.join(found)}" if found else ""
    room = max(200, budget - min(len(ident_line), budget // 3))
    whole = [line.strip()[:LINE_CHARS] for line in lines if line.strip()]
    if depth == 0 and sum(len(w) + 1 for w in whole) <= room:  # everything fits: keep every word
        return "\n".join(whole + ([ident_line] if ident_line else []))
    picks = [_best(line, depth) for line in lines]
    picks = [p for p in picks if p[1]]
    if sum(len(p[1]) + 1 for p in picks) > room:
        groups = max(1, room // 160)
        size = math.ceil(len(picks) / groups)
        picks = [max(picks[i:i + size], key=lambda p: p[0]) for i in range(0, len(picks), size)]
        picks = [(s, t[: max(40, room // max(1, len(picks)) - 1)]) for s, t in picks]
    text = "\n".join(t for _, t in picks)
    if ident_line:
        text += ("\n" if text else "") + ident_line[: budget - len(text)]
    return text or "(no text)"


def _best(block: str, depth: int) -> tuple[float, str]:
    """(score, text) of the most informative sentence of one message line or child summary."""
    tag, _, body = block.partition("] ") if block.startswith("[") else ("", "", block)
    pieces = [body]
    if depth > 0:  # a child summary: the words of its lines, each message's apart, minus its identifier list and its
        # line tags. A leaf's "[#02 2025-02-14T10:21Z assistant]" had been read as words (its digits outscored a
        # sentence's names and amounts) and printed mid-pick: "… within the year [#02 2025-02-14T10:21Z assistant]
        # Good news.", where the repair, the technician and the €480 were lost (a new user's, without an LLM)
        tag, _, body = block.partition("\n")
        pieces = [p for x in body.splitlines() if not x.startswith("Identifiers:") for p in _ANY_TAG.split(x) if p.strip()]
    scored = [(_score(s), s) for p in pieces for s in sentences(p) or [p.strip()] if s]
    if not scored:
        return 0.0, ""
    score, best = max(scored, key=lambda x: x[0])
    return score, (f"{tag}] " if depth == 0 and tag else "") + best[:600]


def _score(sentence: str) -> float:
    return 3 * len(identifiers(sentence)) + len(re.findall(r"\b[A-Z][a-z]+|\d+", sentence)) + min(len(sentence), 300) / 100
