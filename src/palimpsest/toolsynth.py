"""Tool-call synthesis: a message with a tool name and no text gets a one-sentence,
past-tense description written back as its content, so it can be found by words.

It runs as a `tool-synth` job per message (deduped by `job_key`), queued after the
message is indexed: an insert is never blocked or failed by it. The LLM writes the
sentence when one is configured; otherwise (or when it keeps failing) a template does:
"Called read_file with path=src/app.py." The sentence is journaled first (a decision in
`<home>/system/sessions/toolsynth/events.jsonl`) and then written into the index, only
into a message whose content is still empty. After `rebuild` the same jobs are queued
again by the indexer and find their sentence in the journal, so no model is asked twice.
`ToolSynth.backfill()` queues every historical empty row (`palimpsest backfill-tool-synth`).

Answer synthesis lives here too: `ToolSynth.answer(query, hits)` asks the LLM
for a short answer drawn only from the hits, citing their ids (off unless
`synthesize_answers` is set; without an LLM it says synthesis is unavailable, and when
the LLM cannot be reached or its reply stays invalid it says the answer could not be
made — the caller's hits come back either way).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from .distill import minute
from .errors import LLMError
from .jobs import embed_jobs, last_attempt
from .kernel import Kernel
from .records import Message
from .search.query import STOP_WORDS
from .segment import unpainted
from .store import Job, NewJob

log = logging.getLogger(__name__)
SYSTEM_SESSION = "toolsynth"
MAX_ARG_CHARS = 80
SYNTH_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": False, "required": ["sentence"],
                                "properties": {"sentence": {"type": "string", "minLength": 3, "maxLength": 300}}}
ANSWER_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": False, "required": ["answer", "cited"],
                                 "properties": {"answer": {"type": "string", "maxLength": 4000},
                                                "cited": {"type": "array", "maxItems": 50, "items": {"type": "string", "maxLength": 100}}}}
PROMPT = ("Describe this tool call in one past-tense sentence of at most 30 words, naming what was done and to what "
          "(file names, commands, queries verbatim). Invent nothing. Answer JSON: {\"sentence\": \"...\"}.")


def needs_synthesis(m: Message) -> bool:
    return bool(m.tool_name) and not (m.content or "").strip()


def job_for(message_id: str) -> NewJob:
    return NewJob("tool-synth", {"id": message_id}, job_key=f"tool-synth:{message_id}")


_WORD = re.compile(r"[^\W_]{4,}|\d+")


def _told_by(sentence: str, call: str) -> bool:
    """Whether a description is borne out by its call: one of its words of substance in the call (another form of five
    letters alike counted), and every number it says there too. (Asked only of a call with an output of some words: "ls"
    with none is rightly told as "Listed the files of the repository root.")"""
    have = {w.lower()[:5] for w in _WORD.findall(call[:200_000])}
    words = [w.lower() for w in _WORD.findall(sentence) if w.lower() not in STOP_WORDS]
    numbers = [w for w in words if w.isdigit()]
    return any(w[:5] in have for w in words if not w.isdigit()) and all(n[:5] in have for n in numbers)


def template(m: Message) -> str:
    """The local fallback: "Called grep with pattern=TODO, path=src." (and how it ended)."""
    args = m.tool_args
    if isinstance(args, dict):
        shown = ", ".join(f"{k}={_short(v)}" for k, v in list(args.items())[:4])
    elif args not in (None, "", [], {}):
        shown = _short(args)
    else:
        shown = ""
    text = f"Called {m.tool_name}" + (f" with {shown}" if shown else "")
    failed = bool((m.metadata or {}).get("is_error"))
    # a terminal's codes ("\x1b[33mWARN\x1b[0m") say how a line was painted, not what it says (they were shown as
    # "\x1b[33m" in the recall block: found by a Claude Code user)
    lines = [line.strip() for line in unpainted(m.tool_result or "").splitlines() if any(c.isalnum() for c in line)]
    if lines:
        said = _telling(lines)
        text += ("; it failed with " if failed else "; it returned ") + " … ".join(repr(_short(line)) for line in said)
    elif failed:
        text += "; it failed"
    return text + "."


_FAILURE = re.compile(r"\b(?:error|exception|fail(?:ed|ure|s)?|fatal|denied|not found|no such|cannot|can't|panic|abort(?:ed)?|"
                      r"traceback|segmentation fault|exit (?:code|status) [1-9])\b"
                      r"|\b[A-Z]\w*(?:Error|Exception|Exit|Interrupt)\b(?::|$)", re.IGNORECASE)  # "ModuleNotFoundError: …"


def _telling(lines: list[str]) -> list[str]:
    """What an output says in a line or two: its only line; else its first and, where it says how
    it ended, its last failure line (a traceback's "ModuleNotFoundError: …", a compiler's
    "error: …") or its last line (pytest's "1200 passed in 3.2s")."""
    if len(lines) == 1:
        return lines
    failures = [line for line in lines[1:] if _FAILURE.search(line)]
    return [lines[0], failures[-1] if failures else lines[-1]]


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= MAX_ARG_CHARS else text[: MAX_ARG_CHARS - 1] + "…"


class ToolSynth:
    """`memory.toolsynth`: a sentence for each tool call without text, written back into its
    row (and journaled, so a rebuilt index gets the same sentence without a new LLM call),
    and short answers drawn from search hits."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.store, self.settings = kernel.store, kernel.settings

    def after_index(self, messages: list[Message]) -> list[NewJob]:
        """A `tool-synth` job for each new message with a tool name and no text (setting `tool_synth`)."""
        return [job_for(m.id) for m in messages if needs_synthesis(m)] if self.settings.tool_synth else []

    def handlers(self) -> dict[str, Any]:
        return {"tool-synth": self.run_job}

    def run_job(self, job: Job) -> None:
        self.synthesize(job.payload["id"], last_attempt=last_attempt(job))

    def synthesize(self, message_id: str, *, use_llm: bool = True, last_attempt: bool = False) -> str | None:
        """Describe one message (if it still needs it) and write the sentence back."""
        found = self.store.get_messages([message_id])
        if not found or not needs_synthesis(found[0]):
            return None
        m = found[0]
        known = self.kernel.decisions.latest(SYSTEM_SESSION).get(f"synth:{m.id}")
        sentence = known.meta["sentence"] if known is not None else None
        if sentence is None:
            sentence, origin = self._compose(self.kernel.whole(m), use_llm and not last_attempt)
            self.kernel.decisions.record(SYSTEM_SESSION, "synthesize", key=f"synth:{m.id}", content=sentence, subject=m.id,
                                         message=m.id, sentence=sentence, origin=origin)
        if self.store.set_synthesized_content(m.id, sentence) and self.settings.embedder != "none":
            self.store.enqueue(embed_jobs([m.id]))
        return sentence

    def _compose(self, m: Message, use_llm: bool) -> tuple[str, str]:
        llm = self.kernel.llm if use_llm else None
        if llm is None:
            return template(m), "template"
        call = {"tool": m.tool_name, "at": minute(m.created_at), "arguments": m.tool_args, "result": ends(m.tool_result or "")}
        said = json.dumps(call, ensure_ascii=False)
        reply = llm.structured_call([{"role": "system", "content": PROMPT}, {"role": "user", "content": said}],
                                    SYNTH_SCHEMA, task="tool-synth", name="tool_call", max_tokens=120, context={"message": m.id})
        sentence = " ".join(reply.data["sentence"].split())
        if len(_WORD.findall((m.tool_result or "")[:2000])) >= 12 and not _told_by(sentence, f"{said} {m.tool_result or ''}"):
            # a sentence the call does not bear out ("Deleted the production database …" of a `read_file`, found with a
            # sloppy small model: it had become the message's searchable text): the template says what is known
            log.warning("the model's description of tool call %s names nothing of the call: the template is used", m.id)
            return template(m), "template"
        return sentence, "llm"

    def backfill(self, *, dry_run: bool = False, batch: int = 1000) -> dict[str, int]:
        """Queue a `tool-synth` job for every indexed message with a tool name and no text."""
        after, found, queued = 0, 0, 0
        while rows := self.store.empty_tool_messages(after, batch):
            after = rows[-1][0]
            found += len(rows)
            if not dry_run:
                queued += self.store.enqueue([job_for(m.id) for _, m in rows])
        return {"empty_tool_messages": found, "queued": queued, "dry_run": dry_run}

    def answer(self, query: str, hits: list[Any], *, max_hits: int = 20) -> dict[str, Any]:
        """A short answer to `query` drawn only from `hits` (messages, facts or summaries with
        `to_dict()`), citing their ids; `available: False` with the reason otherwise."""
        if not self.settings.synthesize_answers:
            return {"available": False, "reason": "answer synthesis is off (set PALIMPSEST_SYNTHESIZE_ANSWERS=1)"}
        llm = self.kernel.llm
        if llm is None:
            return {"available": False, "reason": "synthesis is unavailable: no LLM is configured (PALIMPSEST_LLM_URL)"}
        lines, ids = [], []
        shown = hits[:max_hits]
        each = max(LINE_CHARS, ANSWER_CHARS // max(1, len(shown)))  # a few hits are shown whole, many each in part
        for h in shown:
            d = h.to_dict() if hasattr(h, "to_dict") else dict(h)
            hid = str(d.get("id"))
            text = d.get("content") or d.get("text") or ""
            when = d.get("created_at") or d.get("valid_from") or d.get("latest_at") or ""
            lines.append(f"[{hid} {minute(when) if when else '-'}] {passage(' '.join(str(text).split()), query, each)}")
            ids.append(hid)
        system = ("Answer the question using only the numbered memory lines. Cite the ids of the lines you used in \"cited\". "
                  "If they do not answer it, say so. Invent nothing. Answer JSON: {\"answer\": \"...\", \"cited\": [\"id\"]}.")
        try:
            reply = llm.structured_call([{"role": "system", "content": system},
                                         {"role": "user", "content": f"Question: {query}\n\nMemory:\n" + "\n".join(lines)}],
                                        ANSWER_SCHEMA, task="answer", name="answer", max_tokens=400,
                                        patience=getattr(llm, "wait", None))  # a search waits on it: tried once, briefly
        except LLMError as exc:  # InvalidReply too: the hits still stand without an answer
            log.warning("no answer synthesized: %s", exc)
            return {"available": False, "reason": f"the answer could not be made ({exc.code}): {str(exc)[:300]}"}
        cited = [c for c in reply.data["cited"] if c in ids]
        # an id the answer names that no line had is the model's invention: out of the text as out of `cited`
        answer = _ID_LIKE.sub(lambda m: m.group(0) if m.group(0) in ids else "[no such line]", reply.data["answer"])
        return {"available": True, "answer": answer, "cited": cited, "model": reply.model}


ANSWER_CHARS = 24_000  # of the hits' words an answer's prompt holds (about 6,000 tokens), shared among them
LINE_CHARS = 1_500  # each hit's share at least


def passage(text: str, query: str, chars: int) -> str:
    """`text` whole when it fits in `chars`, else the stretch of `chars` that holds most of the
    query's words, its cuts said ("[… 9,000 characters before …]"): a deploy log's last line
    "The nginx version is 1.25.3." answers "which nginx version is deployed?" (found by an
    agent-loop builder: each hit was its first 1,500 characters, cut without a word)."""
    if len(text) <= chars:
        return text
    low = text.lower()
    spots = sorted((m.start(), w) for w in set(re.findall(r"\w{3,}", query.lower())) - _QUESTION_WORDS
                   for m in re.finditer(re.escape(w), low))[:2000]
    start, best = 0, 0
    for i, (at, _) in enumerate(spots):  # the window around the spots from one on that hold most of the query's words
        inside = [(other, w) for other, w in spots[i:] if other < at + chars - 200]
        if len({w for _, w in inside}) > best:
            best, start = len({w for _, w in inside}), max(0, (at + inside[-1][0]) // 2 - chars // 2)
    start = min(start, len(text) - chars)
    before, after = start, len(text) - start - chars
    return "".join([f"[… {before:,} characters before …] " if before else "", text[start:start + chars],
                    f" [… {after:,} characters after …]" if after else ""])


_QUESTION_WORDS = STOP_WORDS | {"whose"}  # (the search's stop words)
_ID_LIKE = re.compile(r"\b(?:evt|msg|fct|sum|chk|wtp|wst)_[A-Za-z0-9]+\b")  # what an id in a memory line looks like
RESULT_HEAD, RESULT_TAIL = 1200, 800  # of a long output the model is shown its start and its end


def ends(result: str) -> str:
    """A tool's output as the model is shown it: whole when short, else its start and its end
    (how a run ended is at its end: a model shown the first 2,000 characters of a failing test
    run described a passing one)."""
    if len(result) <= RESULT_HEAD + RESULT_TAIL + 100:
        return result
    return f"{result[:RESULT_HEAD]}\n[… {len(result) - RESULT_HEAD - RESULT_TAIL} characters left out …]\n{result[-RESULT_TAIL:]}"
