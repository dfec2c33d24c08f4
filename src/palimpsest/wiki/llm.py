"""The wiki patch written by the configured LLM: one structured call per leaf.

The prompt holds the candidate topics found as in the fallback (tags, speakers, known and
recurring names) with each page's current statements and their ids, then the leaf and its
source messages, every line tagged `[#NN ISO-minute who]`. The reply (`PATCH_SCHEMA`,
constrained by the grammar and validated) names per topic the statements to add — each
citing the `#NN` lines it rests on; a statement citing no real line is dropped (invent
nothing) — and the statements that no longer hold. A retirement stands when the facts
store has superseded a fact the statement stands for; otherwise the page keeps both sides
as a dispute, visible, until a person settles it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..distill import message_line
from . import text as tx
from .mine import KINDS, Candidate, Hints, Miner
from .text import Unit

if TYPE_CHECKING:
    from ..records import Message
    from ..store.wiki_base import Statement, Topic

PROMPT_CHARS = 40_000
PAGE_STATEMENTS = 30
PATCH_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["topics"],
    "properties": {"topics": {"type": "array", "maxItems": 12, "items": {
        "type": "object", "additionalProperties": False, "required": ["title", "kind", "entities", "add", "retire"],
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": 120},
            "kind": {"enum": list(KINDS)},
            "entities": {"type": "array", "maxItems": 16, "items": {"type": "string", "maxLength": 120}},
            "add": {"type": "array", "maxItems": 8, "items": {
                "type": "object", "additionalProperties": False, "required": ["text", "sources"],
                "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 600},
                               "sources": {"type": "array", "minItems": 1, "maxItems": 8, "items": {"type": "string", "pattern": "^#[0-9]+$"}},
                               "replaces": {"type": "string", "maxLength": 64}}}},
            "retire": {"type": "array", "maxItems": 8, "items": {
                "type": "object", "additionalProperties": False, "required": ["id", "reason"],
                "properties": {"id": {"type": "string", "maxLength": 64}, "reason": {"type": "string", "maxLength": 300}}}},
        }}}},
}
SYSTEM = """You keep a wiki of topics (people, projects, systems, recurring subjects) for a long-term memory.
From one excerpt of a conversation, write patches to the topic pages it speaks of.
- Use the candidate topics below when they fit (same title); add a new topic only for a person, project, system or
  subject the excerpt clearly speaks of.
- "add": short self-contained statements (name people and things, absolute dates from the line tags), each citing
  the message lines it rests on by their tags ("#03"). Invent nothing; skip what the page already says.
- "replaces": the id of a page statement the new one corrects or updates.
- "retire": page statements (by id) the excerpt shows are no longer true, with the reason.
- "entities": names and identifiers (verbatim) the topic is known by.
Answer JSON only."""


def mine_llm(miner: Miner, units: list[Unit], hints: Hints) -> None:
    """Ask the model for the leaf's patches and apply them through the miner."""
    assert miner.llm is not None
    candidates = miner.candidates(units, hints)
    messages = {m.id: m for m in miner.store.get_messages(miner.leaf.sources)}
    prompt = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": _prompt(miner, candidates, messages)}]
    reply = miner.llm.structured_call(prompt, PATCH_SCHEMA, task="extract-wiki", name="wiki_patch", max_tokens=2000,
                                      context={"summary": miner.leaf.id, "session": miner.leaf.session_id})
    by_title = {(tx.key(c.topic.title), c.topic.kind): c for c in candidates}
    for item in reply.data["topics"]:
        title = _title(item["title"])
        if not title:
            continue
        key = tx.key(title)
        c = by_title.get((key, item["kind"])) or next((c for (k, _), c in by_title.items() if k == key), None)
        if c is None and not any(_cited(miner, add, messages) for add in item["add"]):
            continue  # a new topic none of whose statements cites a real line is no page
        topic = c.topic if c is not None else miner._topic_for(key, title, item["kind"], hints)
        _apply(miner, topic, item, messages, hints)


_TAG_LIKE = re.compile(r"#?\d+|[SL]\d+")  # a prompt's own line tag ("#01", "S1") or a bare number: no topic


def _title(said: str) -> str:
    """A model's topic title: its first line, without Markdown's marks ("Payments\\n# Injected
    heading" had been stored whole and shown as a heading of its own; "#01" made a page)."""
    first = next((line for line in said.splitlines() if line.strip()), "")
    title = " ".join(first.split()).strip("#*>-_` ")
    return "" if not title or _TAG_LIKE.fullmatch(title) or not any(ch.isalpha() for ch in title) else title


def _cited(miner: Miner, add: dict[str, Any], messages: dict[str, Message]) -> list[str]:
    """The ids of the leaf's messages a statement cites by line (`#03`), those it has."""
    lines = [int(x[1:]) for x in add["sources"] if x[1:].isdigit()]
    return [m for m in (miner.leaf.sources[n - 1] for n in lines if 0 < n <= len(miner.leaf.sources)) if m in messages]


def _prompt(miner: Miner, candidates: list[Candidate], messages: dict[str, Message]) -> str:
    parts = ["Candidate topics:"]
    for c in candidates:
        t = c.topic
        parts.append(f"- {t.title} ({t.kind}{', tag ' + t.tag if t.tag else ''}{', the whole excerpt is about it' if c.whole_leaf else ''})")
        for s in [s for s in miner.statements_of(t) if s.state != "retired"][-PAGE_STATEMENTS:]:
            parts.append(f"    {s.id}: {s.text}")
    parts += ["", f"Leaf summary {miner.leaf.id}:", miner.leaf.content, "", "Its messages:"]
    lines = [message_line(i + 1, messages[mid], tx.speaker(messages[mid])) for i, mid in enumerate(miner.leaf.sources) if mid in messages]
    text = "\n".join(parts)
    for line in lines:
        if len(text) + len(line) > PROMPT_CHARS:
            break
        text += "\n" + line
    return text


def _apply(miner: Miner, t: Topic, item: dict[str, Any], messages: dict[str, Message], hints: Hints) -> None:
    page = {s.id: s for s in miner.statements_of(t)}
    for add in item["add"]:
        cited = _cited(miner, add, messages)
        if not cited:
            continue  # a statement with no real source is not written
        first = messages[cited[0]]
        u = Unit(add["text"].strip(), first.id, tx.speaker(first), first.created_at, tx.names(add["text"]), [])
        facts = [f for mid in cited for f in miner.facts_of(mid)]
        s = miner.add(t, u, miner.leaf, facts)
        if s is not None:
            s.messages = list(dict.fromkeys(s.messages + cited))
            old = page.get(add.get("replaces") or "")
            if old is not None and old.state != "retired":
                _settle(miner, t, old, s, facts)
    for r in item["retire"]:
        old = page.get(r["id"])
        if old is not None and old.state == "current":
            _settle(miner, t, old, None, [], r["reason"])
    miner.entities(t, ([t.tag.split(":", 1)[1]] if t.tag else []) + item.get("entities", []), hints)


def _settle(miner: Miner, t: Topic, old: Statement, new: Statement | None, facts: list[Any], reason: str = "") -> None:
    """Retire `old` when the facts store backs it (a fact it stands for was superseded, or a
    fact heard here supersedes one); otherwise keep both sides as a visible dispute."""
    replaced = [f.supersedes for f in facts if f.supersedes]
    mine = miner.store.get_facts(old.facts) if old.facts else []
    backed = [fid for fid in replaced if fid in old.facts] + [f.id for f in mine if f.superseded_by or f.expired_at]
    if backed:
        miner.retire(t, old, list(dict.fromkeys(backed)), new)
    elif new is not None:
        miner.dispute(t, old, new)
    else:
        old.state, old.note, old.updated_at = "disputed", f"leaf {miner.leaf.id} says this no longer holds: {reason}"[:500], miner.now
        miner._keep(old)
        miner._op(t, {"op": "dispute", "id": old.id, "reason": reason[:300]})
