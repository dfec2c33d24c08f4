"""Tags with a review loop: `key:value` on sessions and summaries (DESIGN.md, "Tag").

A tag is `suggested` until a person accepts or rejects it; its origin says who put it
there: a `rule` (the `project:<repo>` of a session's cwd, which capture writes into the
session's settings — a fact, accepted without review), the `model` (the `suggest-tags`
job), or a `person`. Rejected tags are kept: a tag rejected anywhere in a session is never
proposed for that session again, and a value rejected from the taxonomy is never
proposed at all. The taxonomy is the reviewed vocabulary: a value a model invents enters
it as `suggested`; merging a value into another re-points every tag and leaves the old
value as an alias (`merged_into`), so typing the old name still finds the new one.

Text is normalised with NFKC first, so `project：x` (a full-width colon) is `project:x`;
keys are lower-case `[a-z0-9_.-]`, values are trimmed with inner whitespace collapsed.

One definition everywhere: a session *carries* `k:v` when `k:v` is accepted on the
session or on one of its summaries. The search filter (`Filters.tag`, inside the SQL),
`session_tags` on hits and the counts all use it.

Every decision (suggest, decide, add, taxonomy, merge, reap) is journaled first as a
decision event in `<home>/system/sessions/tags/events.jsonl`, then applied in one store
transaction recorded in `tag_ops`; `replay()` applies what the store lacks, and a store
with no tag operation next to a journal that has some is restored on open. Rule tags are
not journaled: they are recomputed from the session settings whenever a session is
indexed, so `rebuild` brings them back by itself.
"""

from __future__ import annotations

import builtins
import logging
import re
import secrets
import time
import unicodedata
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from .errors import InvalidInput, NotFound
from .kernel import Kernel
from .records import iso, parse_time, utcnow
from .settings import OWNER_TAGS  # whose a session is: cus_Q8dK2x and cus_q8dk2X are two customers
from .store import Job, NewJob
from .store.tags_base import TagChange, TagQuery, TagRow, TaxonomyRow

log = logging.getLogger(__name__)
SYSTEM_SESSION = "tags"
KEY_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
MAX_VALUE = 200
MAX_NOTE = 2000
MAX_TEXT = 20_000  # characters of a leaf or session given to the suggester
DECISIONS = {"accept": "accepted", "reject": "rejected"}
SUGGEST_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["tags"],
    "properties": {"tags": {"type": "array", "maxItems": 12, "items": {
        "type": "object", "additionalProperties": False, "required": ["tag"],
        "properties": {"tag": {"type": "string", "maxLength": 120}, "why": {"type": "string", "maxLength": 200}}}}},
}
PROMPT = """You tag conversation excerpts for a long-term memory so a person can filter them later.
Answer with at most {n} tags as key:value (keys lower-case: project, topic, person, system, kind, …).
Prefer values from the vocabulary below, exactly as written; propose a new value only when none fits.
Tag what the excerpt is about, not words that merely occur in it.

Vocabulary:
{vocabulary}"""


def parse_tag(text: Any) -> tuple[str, str]:
    """(`key`, `value`) of a tag typed as `key:value` (NFKC: a full-width colon is a colon)."""
    if not isinstance(text, str):
        raise InvalidInput(f"a tag is a string key:value, got {type(text).__name__}")
    norm = unicodedata.normalize("NFKC", text).strip()
    key, sep, value = norm.partition(":")
    key, value = key.strip().lower(), " ".join(value.split())
    if not sep:
        raise InvalidInput(f"a tag is key:value, got {text[:80]!r}")
    if not KEY_RE.fullmatch(key):
        raise InvalidInput(f"tag keys are 1–64 of a-z 0-9 _ . - (starting with a letter or digit), got {key[:80]!r}")
    if not value or len(value) > MAX_VALUE:
        raise InvalidInput(f"tag values are 1–{MAX_VALUE} characters")
    if any(unicodedata.category(c)[0] == "C" for c in value):
        raise InvalidInput("tag values may not hold control characters")
    return key, value


def _op_key() -> str:
    return f"tag_{time.time_ns():x}{secrets.token_hex(3)}"


def _note(note: Any) -> str | None:
    if note is None or note == "":
        return None
    if not isinstance(note, str) or len(note) > MAX_NOTE:
        raise InvalidInput(f"a note is a string of at most {MAX_NOTE} characters")
    return note


@dataclass
class Target:
    type: str  # session | summary
    id: str
    session: str


class Tags:
    """`memory.tags`: tagging, review, the taxonomy, suggestions and replay."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.store = kernel.store
        self.decisions = kernel.decisions
        self._rules_seen: dict[str, tuple[str, ...]] = {}  # session -> rule tags already synced (this process)
        self.decisions.restore_if_lost(SYSTEM_SESSION, lambda: not self.store.tag_ops_applied(), self.replay)

    # -- reading ---------------------------------------------------------------
    def list(self, *, session: str | None = None, summary: str | None = None, session_key: str | None = None,
             state: str | None = None, tag: str | None = None, origin: str | None = None, limit: int = 100,
             offset: int = 0) -> builtins.list[dict[str, Any]]:
        """Tags, newest first: of one session (its own and its summaries'), one summary, or all."""
        q = TagQuery(limit=limit, offset=offset, origin=origin)
        if state is not None:
            if state not in ("suggested", "accepted", "rejected"):
                raise InvalidInput("state is suggested, accepted or rejected")
            q.states = [state]
        if tag is not None:
            q.key, q.value = self.resolve(tag)
        if summary is not None:
            q.target_type, q.target_ids = "summary", [summary]
        elif session is not None or session_key is not None:
            q.session_ids = [self.target(session=session, session_key=session_key).session]
        return [t.to_dict() for t in self.store.query_tags(q)]

    def pending(self, *, limit: int = 100, offset: int = 0) -> builtins.list[dict[str, Any]]:
        """Suggestions waiting for a person, newest first."""
        return self.list(state="suggested", limit=limit, offset=offset)

    def counts(self, key: str | None = None) -> dict[str, Any]:
        """Per accepted tag: sessions carrying it and their messages (what the filter matches)."""
        return {"tags": self.store.tag_counts(key.lower() if key else None), "states": self.store.count_tags()}

    def lookup(self, session_key: str) -> dict[str, Any]:
        """Sessions whose client key is `session_key`, with the tags each carries."""
        ids = self.store.sessions_by_key(session_key)
        if not ids:
            raise NotFound(f"no session with key {session_key[:80]!r}")
        return {"sessions": [{"session": sid, "tags": self.list(session=sid)} for sid in ids]}

    def session_tags(self, session_ids: builtins.list[str]) -> dict[str, builtins.list[str]]:
        return self.store.session_tag_map(sorted(set(session_ids)))

    def sessions_keyed(self, key: str) -> dict[str, builtins.list[str]]:
        """Every session carrying an accepted tag of `key`, with those tags (`project` → which sessions are whose)."""
        return self.store.sessions_with_key(key)

    def taxonomy(self, key: str | None = None, state: str | None = None) -> builtins.list[dict[str, Any]]:
        rows = self.store.taxonomy_rows(key.lower() if key else None, [state] if state else None)
        return [r.to_dict() for r in rows]

    def resolve(self, tag: str) -> tuple[str, str]:
        """The tag's (key, value) with aliases followed to the value they were merged into. A word typed in other
        capitals is the value known ("Topic: Novel" had made topic:Novel beside topic:novel); an identity's value, or
        any with a digit (an id), only ever itself."""
        key, value = parse_tag(tag)
        taxonomy = self.store.taxonomy_rows(key)
        if key not in OWNER_TAGS and not any(c.isdigit() for c in value) and not any(r.value == value for r in taxonomy):
            value = next((r.value for r in taxonomy if r.value.casefold() == value.casefold()), value)
        for _ in range(16):
            rows = [r for r in taxonomy if r.value == value]
            if not rows or not rows[0].merged_into:
                break
            value = rows[0].merged_into
        return key, value

    def filter_value(self, tag: str) -> str:
        key, value = self.resolve(tag)
        return f"{key}:{value}"

    def target(self, *, session: str | None = None, summary: str | None = None, session_key: str | None = None) -> Target:
        """The session or summary named (exactly one); NotFound when it is not in the index."""
        if sum(x is not None for x in (session, summary, session_key)) != 1:
            raise InvalidInput("name exactly one of session, summary or session_key")
        if summary is not None:
            found = self.store.get_summaries([summary]) if isinstance(summary, str) else []
            if not found:
                raise NotFound(f"no summary {str(summary)[:80]!r}")
            return Target("summary", summary, found[0].session_id)
        if session_key is not None:
            ids = self.store.sessions_by_key(session_key)
            if not ids:
                raise NotFound(f"no session with key {session_key[:80]!r}")
            return Target("session", ids[0], ids[0])
        if not isinstance(session, str) or self.store.get_session(session) is None:
            raise NotFound(f"no session {str(session)[:80]!r}")
        return Target("session", session, session)

    # -- decisions ---------------------------------------------------------------
    def add(self, tag: str, *, note: str | None = None, **target: Any) -> dict[str, Any]:
        """A person tags a session or summary: accepted at once (its value joins the taxonomy)."""
        t = self.target(**target)
        key, value = self.resolve(tag)
        now = iso(utcnow())
        change = TagChange(tags=[TagRow(t.type, t.id, t.session, key, value, "accepted", "person", now, None, _note(note), now)])
        change.taxonomy += self._vocabulary_entry(key, value, "accepted", "person", now)
        self._commit("add", change, f"{t.type}:{t.id} {key}:{value}")
        return change.tags[0].to_dict()

    def decide(self, tag: str, decision: str, *, note: str | None = None, **target: Any) -> dict[str, Any]:
        """Accept or reject a tag of a session or summary (any state; a suggestion usually).
        Accepting a tag whose value is still a suggestion accepts the value too."""
        if decision not in DECISIONS:
            raise InvalidInput("decision is accept or reject")
        t = self.target(**target)
        key, value = self.resolve(tag)
        found = [r for r in self.store.query_tags(TagQuery(target_type=t.type, target_ids=[t.id], key=key, value=value))]
        if not found:
            raise NotFound(f"{t.type} {t.id[:80]!r} has no tag {key}:{value}")
        row, now = found[0], iso(utcnow())
        row.state, row.decided_at, row.note = DECISIONS[decision], now, _note(note) or row.note
        change = TagChange(tags=[row])
        if decision == "accept":
            change.taxonomy += self._vocabulary_entry(key, value, "accepted", row.origin, now, only_if=("suggested",))
        self._commit(decision, change, f"{t.type}:{t.id} {key}:{value}")
        return row.to_dict()

    def suggest(self, tags: builtins.list[str], *, source: str | None = None, origin: str = "model", session_too: bool = False,
                **target: Any) -> builtins.list[dict[str, Any]]:
        """Propose tags for a session or summary. Left out: a tag the session already has in
        any state (so a rejected tag is never proposed twice), a value the taxonomy rejected,
        and duplicates. A value new to the taxonomy enters it as `suggested`. With
        `session_too`, a summary's proposals go on its session as well (unless the session
        has the tag itself, or it was rejected anywhere in the session)."""
        t = self.target(**target)
        rows = self.store.query_tags(TagQuery(session_ids=[t.session], limit=100_000))
        seen = {(r.key, r.value) for r in rows}
        on_session = {(r.key, r.value) for r in rows if r.target_type == "session" or r.state == "rejected"}
        also = session_too and t.type == "summary"
        rejected = {(r.key, r.value) for r in self.store.taxonomy_rows(None, ["rejected"])}
        now, change = iso(utcnow()), TagChange()
        for text in tags:
            try:
                key, value = self.resolve(text)
            except InvalidInput:
                continue  # a model's malformed proposal is dropped, not an error
            if (key, value) in rejected:
                continue
            if (key, value) not in seen:
                change.tags.append(TagRow(t.type, t.id, t.session, key, value, "suggested", origin, now, source))
            if also and (key, value) not in on_session:
                change.tags.append(TagRow("session", t.session, t.session, key, value, "suggested", origin, now, source))
            elif (key, value) in seen:
                continue
            seen.add((key, value))
            on_session.add((key, value))
            change.taxonomy += self._vocabulary_entry(key, value, "suggested", origin, now)
        if change.tags:
            self._commit("suggest", change, f"{t.type}:{t.id}")
        return [r.to_dict() for r in change.tags]

    def _vocabulary_entry(self, key: str, value: str, state: str, origin: str, now: str,
                          only_if: tuple[str, ...] | None = None) -> builtins.list[TaxonomyRow]:
        """The taxonomy row to write for a value: a new one, or a state change allowed by `only_if`."""
        found = [r for r in self.store.taxonomy_rows(key) if r.value == value]
        if not found:
            return [] if only_if else [TaxonomyRow(key, value, state, origin, now, decided_at=now if state == "accepted" else None)]
        row = found[0]
        if only_if is None or row.state not in only_if:
            return []
        row.state, row.decided_at = state, now
        return [row]

    # -- taxonomy ----------------------------------------------------------------
    def taxonomy_upsert(self, tag: str, *, description: str | None = None, state: str = "accepted") -> dict[str, Any]:
        """A person adds a value to the vocabulary (or edits its description / state)."""
        if state not in ("suggested", "accepted", "rejected"):
            raise InvalidInput("state is suggested, accepted or rejected")
        key, value = self.resolve(tag)
        now = iso(utcnow())
        found = [r for r in self.store.taxonomy_rows(key) if r.value == value]
        row = found[0] if found else TaxonomyRow(key, value, state, "person", now)
        row.state, row.description, row.decided_at = state, _note(description) or row.description, now
        self._commit("taxonomy", TagChange(taxonomy=[row]), f"{key}:{value}")
        return row.to_dict()

    def taxonomy_decide(self, tag: str, decision: str) -> dict[str, Any]:
        """Accept or reject a value of the vocabulary; a rejected value is never proposed."""
        if decision not in DECISIONS:
            raise InvalidInput("decision is accept or reject")
        key, value = self.resolve(tag)
        found = [r for r in self.store.taxonomy_rows(key) if r.value == value]
        if not found:
            raise NotFound(f"the taxonomy has no value {key}:{value}")
        row = found[0]
        row.state, row.decided_at = DECISIONS[decision], iso(utcnow())
        self._commit("taxonomy-" + decision, TagChange(taxonomy=[row]), f"{key}:{value}")
        return row.to_dict()

    def merge(self, tag: str, into: str) -> dict[str, Any]:
        """Merge a value into another of the same key: every tag re-pointed, the old value
        kept as an alias of the new one. `into` is a value or a whole `key:value`."""
        key, old = self.resolve(tag)
        into_key, new = self.resolve(into if ":" in unicodedata.normalize("NFKC", into) else f"{key}:{into}")
        if into_key != key:
            raise InvalidInput(f"merge within one key: {key}:… into {into_key}:…")
        if new == old:
            raise InvalidInput(f"{key}:{old} is already {key}:{new}")
        now = iso(utcnow())
        rows = {r.value: r for r in self.store.taxonomy_rows(key)}
        if old not in rows:  # a typo had created both values, one merged into the other
            raise NotFound(f"no tag {key}:{old} to merge (`palimpsest tags taxonomy list --key {key}` lists the values)")
        alias = rows[old]
        alias.state, alias.merged_into, alias.decided_at = "merged", new, now
        target = rows.get(new) or TaxonomyRow(key, new, "accepted", "person", now, decided_at=now)
        if target.state != "accepted":
            target.state, target.decided_at = "accepted", now
        self._commit("merge", TagChange(taxonomy=[target, alias], merges=[(key, old, new)]), f"{key}:{old} -> {key}:{new}")
        return {"from": f"{key}:{old}", "into": f"{key}:{new}", "alias": alias.to_dict()}

    # -- rules, reaping ----------------------------------------------------------
    def sync_rules(self, session: str) -> int:
        """Rule tags of a session from its settings (`tags`, written by capture): accepted,
        origin rule (a matching suggestion is promoted; a person's rejection stands). Not
        journaled — they are recomputed whenever the session is indexed."""
        info = self.store.get_session(session)
        wanted = tuple(sorted(str(t) for t in (info.settings.get("tags") or []))) if info and isinstance(info.settings, dict) else ()
        if self._rules_seen.get(session) == wanted:
            return 0
        now, change = iso(utcnow()), TagChange()
        have = {(r.key, r.value): r for r in self.store.query_tags(TagQuery(target_type="session", target_ids=[session], limit=10_000))}
        for text in wanted:
            try:
                key, value = self.resolve(text)
            except InvalidInput:
                continue
            row = have.get((key, value))
            if row is None or row.state == "suggested":  # a person's rejection of a rule tag stands
                change.tags.append(TagRow("session", session, session, key, value, "accepted", "rule", now, "settings", None, now))
        if change.tags:
            self.store.apply_tag_change(change)
        self._rules_seen[session] = wanted
        return len(change.tags)

    def reap(self) -> int:
        """Drop tags whose session or summary is gone from the index and, for a session,
        from the journal too (a session being rebuilt is not an orphan). Journaled."""
        orphans = [r for r in self.store.tag_orphans() if r.target_type == "summary" or not self.kernel.journal.path(r.target_id).exists()]
        if not orphans:
            return 0
        change = TagChange(deletes=[(r.target_type, r.target_id, r.key, r.value) for r in orphans])
        self._commit("reap", change, f"{len(orphans)} orphaned tags", {"reaped": [r.to_dict() for r in orphans]})
        return len(orphans)

    # -- journal -----------------------------------------------------------------
    def _commit(self, op: str, change: TagChange, subject: str, extra: dict[str, Any] | None = None) -> None:
        key = change.op_key = _op_key()
        self.decisions.record(SYSTEM_SESSION, op, change.to_dict(), subject=subject, key=key, content=f"{op} {subject}"[:500],
                              **(extra or {}))
        self.store.apply_tag_change(change)

    def replay(self) -> int:
        """Apply every journaled decision the store has not applied, in journal order."""
        return self.decisions.replay(SYSTEM_SESSION, self.store.tag_ops_applied(),
                                     lambda d: self.store.apply_tag_change(TagChange.from_dict(d.change, d.key)))

    # -- suggesting ----------------------------------------------------------------
    def vocabulary(self) -> builtins.list[str]:
        """What suggestions draw on: accepted taxonomy values and accepted tags in use."""
        words = {f"{r.key}:{r.value}" for r in self.store.taxonomy_rows(None, ["accepted"])}
        words |= {c["tag"] for c in self.store.tag_counts(limit=500)}
        return sorted(words)

    def propose(self, text: str, *, use_llm: bool = True, session: str = "") -> builtins.list[str]:
        """Tags for `text`: the LLM's (vocabulary first, new values allowed) or, without one,
        every vocabulary value that occurs in the text as whole words, most frequent first."""
        n = max(0, int(self.kernel.settings.tags_max_suggestions))
        vocabulary = self.vocabulary()
        llm = self.kernel.llm if use_llm else None
        if llm is not None and n:
            prompt = [{"role": "system", "content": PROMPT.format(n=n, vocabulary="\n".join(vocabulary[:300]) or "(empty)")},
                      {"role": "user", "content": text[:MAX_TEXT]}]
            reply = llm.structured_call(prompt, SUGGEST_SCHEMA, task="suggest-tags", name="tags", max_tokens=400,
                                        context={"session": session})
            return [t["tag"] for t in reply.data["tags"]][:n]
        return keyword_tags(text, vocabulary, n)

    def after_index(self, ids: builtins.list[str]) -> builtins.list[NewJob]:
        """Called with newly indexed message ids (all of one session): sync the session's
        rule tags, and queue a suggestion for when it goes quiet. Never raises."""
        try:
            found = self.store.get_messages(list(dict.fromkeys([ids[0], ids[-1]])))
            if not found:
                return []
            session = found[0].session
            self.sync_rules(session)
            if not self.kernel.settings.tags_suggest:
                return []
            # quiet since its newest message: an imported session of last year is due now, not half an hour after the
            # import (300 imported sessions' suggestions had all waited 30 minutes: found by a new user)
            quiet = timedelta(minutes=self.kernel.settings.tags_quiet_minutes)
            newest = max(parse_time(m.created_at) for m in found)
            run_at = iso(min(utcnow(), newest) + quiet)
            return [NewJob("suggest-tags", {"session": session}, job_key=f"suggest-tags:{session}", run_at=run_at, max_attempts=3)]
        except Exception as exc:
            log.warning("tags after indexing: %s", exc)
            return []

    def after_summary(self, summary: Any) -> builtins.list[NewJob]:
        """Tags are proposed per leaf summary (`suggest-tags`)."""
        return [leaf_job(summary.id, summary.session_id)] if summary.depth == 0 and self.kernel.settings.tags_suggest else []

    def handlers(self) -> dict[str, Any]:
        return {"suggest-tags": self.run_job}

    def run_job(self, job: Job) -> None:
        """For a leaf: propose tags for it and its session. For a session: only while it has no leaf, and only
        once it has been quiet for `tags_quiet_minutes` (else it is looked at again then)."""
        tags, p = self, job.payload
        use_llm = job.attempts < job.max_attempts  # the last attempt takes the fallback
        if p.get("summary"):
            found = self.store.get_summaries([p["summary"]])
            if found:
                s = found[0]
                proposed = tags.propose(s.content, use_llm=use_llm, session=s.session_id)
                tags.suggest(proposed, summary=s.id, source=s.id, session_too=True)  # the leaf, and its conversation
            return
        session = p["session"]
        info = self.store.get_session(session)
        if info is None or info.kind == "instant" or self.store.session_summaries(session, 0):
            return  # instant sessions are scratch; a session with leaves is tagged per leaf
        from .store import Filters

        recent = self.store.browse(Filters(session=session), 200, 0, newest_first=True)
        if not recent:
            return
        quiet = timedelta(minutes=self.kernel.settings.tags_quiet_minutes)
        due = parse_time(recent[0].created_at) + quiet
        if due > utcnow():
            self.store.enqueue([NewJob("suggest-tags", {"session": session}, job_key=f"suggest-tags:{session}:{recent[0].id}",
                                         run_at=iso(due), max_attempts=3)])
            return
        text = "\n".join(m.content for m in reversed(recent) if m.content)
        tags.suggest(tags.propose(text, use_llm=use_llm, session=session), session=session, source="session")

def keyword_tags(text: str, vocabulary: list[str], n: int) -> list[str]:
    """The deterministic fallback: vocabulary values found in `text` as whole words."""
    lowered = unicodedata.normalize("NFKC", text).lower()
    scored = []
    for tag in vocabulary:
        value = tag.split(":", 1)[1].lower()
        hits = len(re.findall(r"(?<![\w-])" + re.escape(value) + r"(?![\w-])", lowered)) if len(value) >= 2 else 0
        if hits:
            scored.append((-hits, tag))
    return [t for _, t in sorted(scored)[:n]]


def leaf_job(summary_id: str, session: str) -> NewJob:
    """The `suggest-tags` job for a new leaf summary."""
    return NewJob("suggest-tags", {"session": session, "summary": summary_id}, job_key=f"suggest-tags:{summary_id}", max_attempts=3)


__all__ = ["Tags", "keyword_tags", "leaf_job", "parse_tag"]
