"""Turn-close distillation: each finished turn becomes typed memories, through the curator.

A turn is a user message and everything after it up to the next user message. It closes
when that next user message is indexed (a `distill` job is queued for it, keyed by the
turn's first message so it runs once) or when the harness says so
(`memory.distiller.close_turn(session)`, `palimpsest distill SESSION`). Instant sessions never
distill.

One structured call with a fixed schema of four fields — `summary` (one sentence),
`facts` (text, kind, entities, valid_from), `corrections` (the new statement and the
earlier fact it replaces, by id or text), `tasks` (open items) — constrained by the
schema (see `palimpsest.llm`) and validated. Every message line of the prompt carries an
absolute ISO-minute timestamp and the whole message: a turn longer than
`summary_leaf_tokens` is distilled in parts of whole messages (`batches`), one call each,
their outputs merged, and only a single message longer than the whole budget is cut, its
line saying so. The open facts nearest the turn are listed with their ids so a correction
can name what it replaces. Without an LLM, or when the model's replies stay invalid until
the job's last attempt, `local_distill` (`palimpsest.facts.local`) extracts the same shape
deterministically.

Every item is attested by the message that said it (`said_by`) and holds from that
message's time, or from the date the statement names as its start, resolved against it (`named_start`;
a task from when it was said): valid time is when it held, known time (`recorded_at`) is
when Palimpsest learned it, so imported and backfilled history is dated right.

Each result is journaled once per turn (`<home>/system/sessions/distill/events.jsonl`,
the whole validated output), then every item goes to `facts.curator.write`.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from jsonschema import Draft202012Validator

from .credentials import holds_credential
from .errors import InvalidInput, LLMError
from .facts.local import local_distill, named_start, sentences
from .jobs import last_attempt
from .kernel import Kernel
from .pipeline import TAIL_DELAY
from .records import OFFSET_KEY, Message, iso, parse_time
from .search.floor import beyond_model
from .search.query import STOP_WORDS
from .store import Filters, Job, NewJob

log = logging.getLogger(__name__)
SYSTEM_SESSION = "distill"
MAX_TURN_MESSAGES = 400
KINDS = ["fact", "preference", "decision", "event", "plan"]

# what the facts layer takes (facts/model.py: a fact's text, an entity of at most 200 characters), so a reply the curator
# would refuse is an invalid reply — parked, retried, then the local rules — never a fact silently lost
STATEMENT: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": r"\S"}
DISTILL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["summary", "facts", "corrections", "tasks"],
    "properties": {
        "summary": {"type": "string", "minLength": 1, "maxLength": 2000},
        "facts": {"type": "array", "maxItems": 20, "items": {
            "type": "object", "additionalProperties": False, "required": ["text", "kind", "entities", "valid_from"],
            "properties": {
                "text": STATEMENT,
                "kind": {"enum": KINDS},
                "entities": {"type": "array", "maxItems": 10, "items": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": r"\S"}},
                "valid_from": {"type": ["string", "null"], "format": "date-time"},
            }}},
        "corrections": {"type": "array", "maxItems": 10, "items": {
            "type": "object", "additionalProperties": False, "required": ["text", "replaces"],
            "properties": {"text": STATEMENT, "replaces": STATEMENT}}},
        "tasks": {"type": "array", "maxItems": 10, "items": STATEMENT},
    },
}
_VALIDATOR = Draft202012Validator(DISTILL_SCHEMA)

SYSTEM_PROMPT = """You distill one turn of a conversation into long-term memory.
Return JSON with exactly these fields:
- summary: one sentence saying what happened in the turn.
- facts: durable statements worth remembering later (about the user, their work, people, plans, decisions).
  Each: text (a self-contained sentence; name people and things, no pronouns), kind (fact, preference,
  decision, event or plan), entities (names, identifiers), valid_from (ISO 8601 time the statement starts
  to hold, absolute, computed from the message timestamps; null if unknown).
- corrections: statements that replace an earlier fact. Each: text (the corrected statement) and replaces
  (the id of a known fact, e.g. fct_..., or the text of what was said before).
- tasks: open items still to be done, one sentence each.
Rules: invent nothing; use only what the messages say; copy identifiers (PR numbers, commits, file names)
verbatim; resolve relative dates ("tomorrow", "last Friday") against the timestamps; leave lists empty when
there is nothing."""


@dataclass
class Distilled:
    """What one turn gave: the validated output, where it came from, what the curator did."""

    session: str
    output: dict[str, Any]
    origin: str  # llm | local
    decisions: list[dict[str, Any]] = field(default_factory=list)
    skipped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"session": self.session, "origin": self.origin, "output": self.output, "decisions": self.decisions, "skipped": self.skipped}


# -- prompts -------------------------------------------------------------------
def minute(ts: str) -> str:
    """`2026-03-04T10:15Z`: the ISO minute every prompt line carries."""
    return parse_time(ts).strftime("%Y-%m-%dT%H:%MZ")


def message_line(n: int, m: Message, agent: str | None = None, limit: int | None = None) -> str:
    """`[#NN ISO-minute agent/role] text`: the whole message (spacing collapsed). Only a
    message longer than a whole prompt's budget is cut, at `limit` characters, and the
    line says so and names the id that `memory_get_full` restores; a row the index capped
    says that too."""
    who = f"{agent}/{m.role or '?'}" if agent else (m.role or "?")
    text = m.content or ""
    if m.tool_name:
        text = f"(tool {m.tool_name}) {text}".strip()
    text = " ".join(text.split())
    whole = max(len(text), m.full_content_length or 0) if m.truncated else len(text)  # a row the index capped counts its whole
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]} [cut: {whole - limit} more characters over the prompt's budget; whole text: memory_get_full {m.id}]"
    elif m.truncated and m.full_content_length:
        text += (f" [the index holds the first {len(m.content or '')} of {m.full_content_length} characters; whole text: "
                 f"memory_get_full {m.id}]")
    return f"[#{n:02d} {minute(m.created_at)} {who}] {text}"


def line_tokens(m: Message) -> int:
    """A message's prompt line, in tokens (characters / 4, the line tag included)."""
    return (len(m.content or "") + len(m.tool_name or "") + 60) // 4 + 1


def batches(messages: list[Message], budget: int) -> list[list[Message]]:
    """Consecutive runs of `messages` whose lines fit `budget` tokens together: a prompt
    is split between messages, never inside one; a message over the budget alone is one
    run (its line cut by `message_line(limit=...)`)."""
    out: list[list[Message]] = []
    used = 0
    for m in messages:
        cost = line_tokens(m)
        if not out or used + cost > budget:
            out.append([])
            used = 0
        out[-1].append(m)
        used += cost
    return out


def said_by(text: str, messages: list[Message]) -> Message:
    """The message of a turn that says `text` (spacing and case aside), else the turn's
    first user message (a model's paraphrase is quoted from no one line)."""
    want = " ".join(text.split()).casefold()
    for m in messages:
        if want and want in " ".join((m.content or "").split()).casefold():
            return m
    return next((m for m in messages if m.role == "user"), messages[0])


def merge(outputs: list[dict[str, Any]]) -> dict[str, Any]:
    """The outputs of a turn's parts as one: the summaries joined, the lists concatenated
    with repeats dropped (each part was checked against the schema)."""
    if len(outputs) == 1:
        return outputs[0]
    out: dict[str, Any] = {"summary": " ".join(o["summary"] for o in outputs), "facts": [], "corrections": [], "tasks": []}
    for o in outputs:
        for name in ("facts", "corrections", "tasks"):
            out[name] += [x for x in o[name] if x not in out[name]]
    return out


def check_output(data: Any) -> dict[str, Any]:
    errors = sorted(_VALIDATOR.iter_errors(data), key=lambda e: list(e.path))
    if errors:
        raise InvalidInput(f"distill output breaks the schema: {errors[0].message[:200]}")
    return data  # type: ignore[no-any-return]


def check_local(output: dict[str, Any]) -> dict[str, Any]:
    """The local distiller's output, each item checked against the schema. Its caps bound
    one model reply; a long turn said plainly may hold more, and all of it is kept (the
    lists are checked in slices the caps allow, as the model's parts of a long turn are)."""
    caps = {name: DISTILL_SCHEMA["properties"][name]["maxItems"] for name in ("facts", "corrections", "tasks")}
    slices = max([-(-len(output[name]) // cap) for name, cap in caps.items()] + [1])
    for i in range(slices):
        check_output({**output, **{name: output[name][i * cap:(i + 1) * cap] for name, cap in caps.items()}})
    return output


# -- running -------------------------------------------------------------------
MAX_TURN_PROBES = 20  # a turn's first messages asked whether a fact came of them (`_distilled_elsewhere`)


def nobodys_word(m: Message) -> bool:
    """A message no one said as a statement of theirs: a harness's instructions (`boilerplate`),
    the summary a compaction wrote (`compact_summary`: a restatement, "Summary: the user switched
    the repo from pnpm to bun." had superseded the turn it restated), and the prompt an agent
    wrote to its sub-agent (a `sidechain` user turn: the model's words, not the person's), and a branch the conversation
    left (`Message.alternate`: an imported ChatGPT prompt "リリースを2027年4月に延期しようかな", edited into "…2027年6月に
    延期する", had given the release's history an April never decided)."""
    meta = m.metadata or {}
    return bool(meta.get("boilerplate") or meta.get("compact_summary") or (meta.get("sidechain") and m.role == "user")
                or m.alternate)


_PARAGRAPH = re.compile(r"\n\s*\n")


def english_part(text: str) -> str:
    """The paragraphs of `text` the local rules can read: of a text mostly in another language (`beyond_model`), those
    in English, with two of English's little words (not the pasted email's greeting, price list or signature, "Riegel am
    Kaiserstuhl")."""
    if not beyond_model(text):
        return text
    return "\n\n".join(p for p in _PARAGRAPH.split(text) if not beyond_model(p) and len(STOP_WORDS & set(_WORD.findall(p.lower()))) >= 2)


_WORD = re.compile(r"[a-z']+")


class Distiller:
    """`memory.distiller`: distill a turn (the LLM, or the local fallback) and curate what
    it gave into the facts. Each turn is journaled once (its key), so a retried job or a
    rebuilt index never distills it twice."""

    def __init__(self, kernel: Kernel, facts: Any) -> None:
        self.kernel, self.facts = kernel, facts
        self.store = kernel.store

    def handlers(self) -> dict[str, Any]:
        return {"distill": self.run_job}

    def run_job(self, job: Job) -> None:
        p = job.payload
        if p.get("tail"):  # the session's last turn, once it is quiet (`pipeline.TAIL_DELAY`)
            if self._quiet(p["session"], job):
                self.last_turn(p["session"], use_llm=not last_attempt(job))
            return
        self.turn(p["session"], self.turn_messages(p["session"], p.get("start"), p.get("end")), use_llm=not last_attempt(job))

    def _quiet(self, session: str, job: Job) -> bool:
        """Whether nothing was said in the session for `TAIL_DELAY` (and something before); if
        something was, the job is queued again for when it will have been (its key names the newest message)."""
        newest = self.store.browse(Filters(session=session), 1, 0, newest_first=True)
        if not newest:
            return False  # forgotten since: nothing to distill
        said, now = parse_time(newest[0].created_at), self.kernel.clock()
        if said > now:  # dated ahead of this clock (another machine's, or 9999-12-31): quiet once its job is due, as written
            return True
        due = said + TAIL_DELAY
        if due <= now:
            return True
        self.store.enqueue([NewJob("distill", job.payload, job_key=f"distill-tail:{session}:{newest[0].id}", max_attempts=job.max_attempts,
                                   run_at=iso(due))])
        return False

    def turn_messages(self, session: str, start: str | None, end: str | None) -> list[Message]:
        """Messages of a session from `start` (inclusive) to `end` (exclusive), oldest first."""
        return self.store.browse(Filters(session=session, since=start, until=end), MAX_TURN_MESSAGES, 0)

    def close_turn(self, session: str, *, use_llm: bool = True) -> Distilled:
        """Distill the session's last turn now (the harness says the turn is over); an
        unknown session is `NotFound`. When the model fails (unreachable, out of schema: parked), nothing is distilled
        and `skipped` says why: the session's waiting tail job distils the turn, its last try by the local rules (an agent
        loop calling this after each turn had crashed on the endpoint's first 500 — found by an on-call lead)."""
        try:
            return self.last_turn(session, use_llm=use_llm)
        except LLMError as exc:
            return Distilled(session, {}, "none", skipped=f"the model failed ({exc}): the turn is left to the background distillation")

    def last_turn(self, session: str, *, use_llm: bool = True) -> Distilled:
        """`close_turn`, with the model's failure raised (the job retries it; `palimpsest distill` says how to go on)."""
        self.kernel.known_session(session)
        last_user = self.store.browse(Filters(session=session, role="user"), 1, 0, newest_first=True)
        start = last_user[0].created_at if last_user else None
        return self.turn(session, self.turn_messages(session, start, None), use_llm=use_llm)

    def turn(self, session: str, messages: list[Message], *, key: str | None = None, use_llm: bool = True,
             cancel: threading.Event | None = None) -> Distilled:
        """Distill one turn and curate what it gave. `key` makes it run once (journaled)."""
        info = self.store.get_session(session)
        if info is not None and info.kind == "instant":
            return Distilled(session, {}, "none", skipped="instant session: never distilled")
        if not messages:
            return Distilled(session, {}, "none", skipped="no messages")
        key = key or f"turn:{session}:{messages[0].id}"
        said = [m for m in messages if not nobodys_word(m)]
        if not said:
            return Distilled(session, {}, "none", skipped="only harness boilerplate, compaction summaries, sub-agent prompts or branches not kept")
        messages = said
        if key in self.kernel.decisions.latest(SYSTEM_SESSION) or self._distilled_elsewhere(messages):
            return Distilled(session, {}, "none", skipped=f"already distilled ({key})")
        # read whole: a message past the index's cap had gone to the model cut at 16,000 characters, its last lines
        # ("Final note: the gunicorn worker count is 12.") never distilled (found by an agent-loop builder)
        messages = [self.kernel.whole(m) for m in messages]
        llm = self.kernel.llm if use_llm else None
        if llm is not None:
            # a turn longer than the budget is distilled in parts, each of whole messages
            parts = batches(messages, self.kernel.settings.summary_leaf_tokens)
            output = merge([llm.structured_call(self.prompt(session, part), DISTILL_SCHEMA, task="distill", name="distill", cancel=cancel,
                                                context={"job_key": key, "session": session, "part": i}).data
                            for i, part in enumerate(parts)])
            origin = "llm"
        else:
            # the local rules read English: a turn in another language gives no fact ("Wir treffen uns am Montag" had
            # read "am" as "I am", and one appointment retired another: found by a Spanish and German chat's evaluator)
            # (read paragraph by paragraph: a supplier's German email pasted above "I think we switch. Müller wants 0.68
            # now." had made the whole message another language's, and the user's own words gave no fact: a café owner's)
            english = [replace(m, content=text) for m in messages if (text := english_part(m.content or ""))]
            output = local_distill(english or messages)
            if not english:
                output.update(facts=[], corrections=[], tasks=[])  # its summary line stays
            output, origin = check_local(output), "local"
        result = Distilled(session, output, origin)
        result.decisions = self.curate(output, messages)
        # journaled once every statement is curated: a worker killed between the two (or a store away mid-curation) had
        # left the turn "already distilled" with its facts never written (found by an SRE killing `jobs run`); a turn
        # curated again confirms what it had written (one message is one hearing) and writes the rest
        self.kernel.decisions.record(SYSTEM_SESSION, "distill", key=key, subject=session, content=output.get("summary", "")[:500],
                                     session=session, origin=origin, output=output, messages=[m.id for m in messages])
        return result

    def _distilled_elsewhere(self, messages: list[Message]) -> bool:
        """Whether a fact distilled from one of these messages is in the store: the turn was distilled by a worker of
        another home on the same database, whose journal holds the key this home's lacks (after a `rebuild` queued
        every turn again, a second home's worker distilled them all once more: facts added, superseded, confirmed)."""
        from .store.facts_base import FactQuery

        found = self.store.query_facts(FactQuery(source=[m.id for m in messages[:MAX_TURN_PROBES]], limit=20))
        # (not this home's own: a turn whose curation was cut short here is curated again)
        return any((f.metadata or {}).get("origin") == "distill" and (f.metadata or {}).get("home") != self.kernel.journal.id
                   for f in found)

    def curate(self, output: dict[str, Any], messages: list[Message]) -> list[dict[str, Any]]:
        """Every fact, correction and task of a distilled turn through the curator, each
        attested by the message that said it and valid from when it was said (or from the
        time it names); the facts' known time stays when this runs."""
        from .facts import Candidate

        def candidate(text: str, kind: str, valid_from: str | None = None, **more: Any) -> Candidate:
            m = said_by(text, messages)
            valid_from = _a_time(valid_from)  # a model's "next Monday" or "2025-13-45": the time the text names, else when said
            if valid_from and kind != "task" and parse_time(valid_from, "valid_from") > parse_time(m.created_at):
                # a later time is what the statement is about, unless its words say it starts then (`named_start`): "I'm
                # flying to Tokyo next Friday" holds from when it was said (a model's Friday had hidden it from recall)
                valid_from = None
            # a task's date is its deadline, not when it starts to hold
            start = valid_from or (named_start(text, m.created_at, m.metadata) if kind != "task" else None) or m.created_at
            # who said it, when the turn names them ("Melanie"): "I painted a sunrise" is theirs, not the user's
            said = {"speaker": m.speaker} if m.speaker else {}
            if OFFSET_KEY in m.metadata:  # the calendar it was said on: the day its valid time falls on there
                said[OFFSET_KEY] = m.metadata[OFFSET_KEY]
            return Candidate(text=text, kind=kind, valid_from=start, source=m.id, at=m.created_at,
                             metadata={"origin": "distill", "home": self.kernel.journal.id, **said}, **more)

        candidates = [candidate(f["text"], f["kind"], f.get("valid_from"), entities=f["entities"]) for f in output.get("facts", [])]
        candidates += [candidate(c["text"], "correction", corrects=c["replaces"]) for c in output.get("corrections", [])]
        candidates += [candidate(t, "task") for t in output.get("tasks", [])]
        out: list[dict[str, Any]] = []
        turn_text = " ".join(f"{m.content or ''} {m.speaker or ''}" for m in messages)
        heard = _content_words(turn_text)
        # (a turn in another language, or Chinese or Japanese, shares no words a model's statement must keep: not judged)
        judged = not beyond_model(turn_text)
        for c in candidates:
            if holds_credential(c.text):  # a model's fact of a credential: kept in its message, never recalled as a fact
                out.append({"action": "refused", "text": "(a credential)", "reason": "a credential is not made a fact"})
                continue
            said = _content_words(c.text)
            if judged and c.kind != "task" and said and not said & heard:  # a model's invention: no word of it was said (a task is
                # what the turn asks for, in the model's words: "Book movers" of a move)
                out.append({"action": "refused", "text": c.text, "reason": "no word of it is in the turn it was distilled from"})
                log.warning("a distilled statement shares no word with its turn, not written: %.120s", c.text)
                continue
            try:
                d = self.facts.curator.write(c)
            except InvalidInput as exc:
                out.append({"action": "refused", "text": c.text, "reason": str(exc)})
                continue
            out.append({"action": d.action, "text": c.text, "fact": d.fact.id if d.fact else None})
        return out

    def prompt(self, session: str, messages: list[Message]) -> list[dict[str, str]]:
        info = self.store.get_session(session)
        agent = info.agent if info else None
        limit = self.kernel.settings.summary_leaf_tokens * 4  # reached only by a message over the whole budget
        lines = [message_line(i + 1, m, agent, limit) for i, m in enumerate(messages)]
        said = " ".join(m.content for m in messages if m.role == "user")[:2000]
        known = self._known_facts(said, next((m.id for m in messages if m.role == "user"), messages[0].id))
        head = f"Session {session}" + (f", agent {agent}" if agent else "") + f", {len(messages)} messages, now {minute(messages[-1].created_at)}."
        parts = [head]
        if known:
            parts.append("Known facts (id, since, text):\n" + "\n".join(known))
        parts.append("Turn:\n" + "\n".join(lines))
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n\n".join(parts)}]

    def _known_facts(self, text: str, source: str) -> list[str]:
        """The facts a turn may speak of (by its words and its slots' words), its owner's only (`Curator.owned`), one
        per line with their ids: what a model's correction can name."""
        if not text.strip():
            return []
        from .facts.curator import slot_terms

        # and the facts of the slots it speaks of, in words it need not share with them ("Actually I moved to Lisbon
        # now." names no word of "I live in Berlin", which a correction must be able to name)
        terms = list(dict.fromkeys(t for sentence in sentences(text[:4000]) for t in slot_terms(sentence)))[:12]
        try:
            hits = self.facts.search(text, limit=10)
            if terms:
                seen = {h.fact.id for h in hits}
                hits += [h for h in self.facts.search(" ".join(terms), limit=5) if h.fact.id not in seen]
        except Exception as exc:
            log.warning("no known facts for the distill prompt: %s", exc)
            return []
        facts = self.facts.curator.owned(text, source, [h.fact for h in hits])
        # each on one line, as a message is: a fact's line break had opened a second "Turn:" with a forged message line
        return [f"[{f.id} {minute(f.valid_from)}] {' '.join(f.text.split())}" for f in facts]


# words of a statement about its speaker that no turn needs to say ("The user prefers …")
_GENERIC = frozenset({"user", "user's", "users", "assistant", "assistant's", "they", "their", "also", "now"})


def _content_words(text: str) -> set[str]:
    """The content words of a text, lower-cased, a plural's s dropped: what a statement and the
    turn it came from must share one of (a model wrote "The user's manager is Zelda Quux." of
    "The build takes about 12 minutes on CI.", and it was current at once)."""
    from .search.query import STOP_WORDS
    from .segment import cjk_words, has_runs

    words = (w.strip("'’-.").lower() for w in _WORD.findall(text) if not has_runs(w))
    kept = {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words
            if (len(w) > 2 or any(c.isdigit() for c in w)) and w not in STOP_WORDS and w not in _GENERIC}
    # Chinese and Japanese as their character pairs: a clause is no one word ("佐藤由紀の好きなラーメン店は渋谷の一蘭。"
    # shared none with the turn that named 一蘭 and 渋谷, and was refused)
    return kept | {w for w in cjk_words(text).split() if has_runs(w) and len(w) > 1}


_WORD = re.compile(r"[\w'’.-]+")


def _a_time(value: Any) -> str | None:
    """`value` when it is an ISO 8601 time, else None: a fact whose model-written date is no
    time is still the fact (it was refused, and lost with the job done)."""
    if value is None:
        return None
    try:
        parse_time(value, "valid_from")
    except InvalidInput:
        log.warning("a distilled fact's valid_from is no ISO 8601 time (%r): its text's time, else when it was said", str(value)[:60])
        return None
    return str(value)
