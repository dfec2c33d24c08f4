"""What each panel page shows and what each panel action does: library calls, no HTML.

A page function takes the memory and the request's parameters (query string and path,
all strings) and returns (template, context); an action takes the memory and a JSON
object and returns a JSON value. Bad parameters raise `InvalidInput` like everywhere else.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from ...errors import InvalidInput, NotFound
from ...memory import Memory
from ...records import Hit, iso, parse_time
from ...search import SearchResult

PAGE = 50
AROUND_BEFORE = 5  # a message opened from a hit: the turns shown before it
COUNT_PAGE, MAX_BEFORE = 1000, 1_000_000  # how the turns before it are counted, and how many at most
EVENTS_PAGE = 200
SEARCH_FILTERS = ("session", "agent", "channel", "role", "since", "until", "tag")
SEARCH_OPTIONS = ("recipe", "valid_at", "known_at")  # ranked search only, as in memory_search
MAX_PARAM = 2000


def _param(params: dict[str, Any], name: str, default: str = "") -> str:
    value = str(params.get(name, default) or "").strip()
    if len(value) > MAX_PARAM:
        raise InvalidInput(f"{name} is longer than {MAX_PARAM} characters")
    return value


def _int(params: dict[str, Any], name: str, default: int, top: int = 1_000_000, least: int = 0) -> int:
    raw = _param(params, name)
    if not raw:
        return default
    if not raw.isdigit() or not least <= int(raw) <= top:
        raise InvalidInput(f"{name} must be a whole number from {least} to {top}")
    return int(raw)


# -- pages ---------------------------------------------------------------------
def sessions(memory: Memory, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    offset = _int(params, "offset", 0)
    f = {k: _param(params, k) or None for k in ("agent", "channel")}
    rows = memory.sessions(limit=PAGE, offset=offset, **f)
    tags = memory.tags.session_tags([s.id for s in rows])
    return "sessions.html", {"view": "sessions", "sessions": rows, "tags": tags, "offset": offset, "page": PAGE,
                             "filters": {k: v or "" for k, v in f.items()}}


def session(memory: Memory, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    sid = _param(params, "session")
    info = memory.get_session(sid)
    if info is None:
        raise NotFound(f"no session {sid[:80]!r}")
    offset, around = _int(params, "offset", 0), _param(params, "around")
    if around:
        found = _message(memory, around, session=sid)
        if found is None or found.session != sid:
            raise NotFound(f"no message {around[:80]!r} in this session")
        around = found.id  # a short id typed by hand highlights its turn too
        if "offset" not in params:  # the page that holds it, opening a few turns before it (the question that led to it)
            # the messages before it in the session's order, those said at its very moment included (`(created_at, id)`)
            until, before, read = iso(parse_time(found.created_at) + timedelta(microseconds=1)), 0, 0
            while read < MAX_BEFORE:
                rows = memory.browse(session=sid, until=until, limit=COUNT_PAGE, offset=read)
                read += len(rows)
                before += sum(1 for r in rows if (r.created_at, r.id) < (found.created_at, found.id))
                if len(rows) < COUNT_PAGE:
                    break
            offset = max(0, before - AROUND_BEFORE)
    rows = memory.browse(session=sid, limit=EVENTS_PAGE + 1, offset=offset)
    messages, more = rows[:EVENTS_PAGE], len(rows) > EVENTS_PAGE  # ("Later →" had led to an empty page)
    summaries = sorted(memory.summaries.of_session(sid), key=lambda x: (-x.depth, x.earliest_at))
    return "session.html", {"view": "sessions", "info": info, "messages": messages, "offset": offset, "page": EVENTS_PAGE,
                            "more": more, "around": around, "tags": memory.tags.list(session=sid, limit=200),
                            "summaries": summaries}


def find(memory: Memory, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Jump to an id: a message (evt_…, or the short id a recall block shows), a fact (fct_…), a document chunk (chk_…,
    which recall blocks show too: it had answered "no message, fact or session") or a session."""
    ident = _param(params, "id")
    if not ident:
        raise InvalidInput("give an id: a message (evt_… or its short id), a fact, a document chunk or a session")
    if ident.startswith("chk_"):
        return "__redirect__", {"url": f"/panel/chunks/{ident}"}
    try:
        found, shared = _message(memory, ident), None
    except InvalidInput as exc:  # a short id two messages share: it may still name a session
        found, shared = None, exc
    if found is not None:
        return "__redirect__", {"url": f"/panel/sessions/{found.session}?around={found.id}#{found.id}"}
    if _fact(memory, ident):
        return "__redirect__", {"url": f"/panel/facts/{ident}"}
    if memory.get_session(ident) is not None:
        return "__redirect__", {"url": f"/panel/sessions/{ident}"}
    if shared is not None:
        raise shared
    raise NotFound(f"no message, fact or session with id {ident[:80]!r}")


def _message(memory: Memory, ident: str, session: str | None = None) -> Any:
    try:
        return memory.get_message(ident, session=session)
    except NotFound:
        return None


def _fact(memory: Memory, ident: str) -> bool:
    try:
        memory.facts.get(ident)
    except NotFound:
        return False
    return True


def search(memory: Memory, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    query, mode = _param(params, "q"), _param(params, "mode", "ranked") or "ranked"
    filters = {k: _param(params, k) for k in SEARCH_FILTERS}
    context: dict[str, Any] = {"view": "search", "q": query, "mode": mode, "filters": filters, "result": None, "options": {},
                               "scores": bool(_param(params, "scores"))}
    used: dict[str, Any] = {k: v for k, v in filters.items() if v}
    limit = _int(params, "limit", 20, MAX_SEARCH, least=1)
    options = {k: _param(params, k) for k in SEARCH_OPTIONS}
    context["options"] = options
    if query:
        extra: dict[str, Any] = {k: v for k, v in options.items() if v}
        context["result"] = memory.search(query, limit=limit, mode=mode, touch=False, **extra, **used)
    elif used:  # no words, only filters: browse what they match, newest first
        rows = memory.browse(limit=limit, newest_first=True, **used)
        carried = memory.tags.session_tags([m.session for m in rows])
        context["result"] = SearchResult([Hit(m, 0.0, session_tags=carried.get(m.session, [])) for m in rows], mode="browse")
    result = context["result"]
    if result is not None and len(result.hits) >= limit and limit < MAX_SEARCH:  # there may be more: a longer page
        more = min(MAX_SEARCH, limit * 2)
        asked = {k: v for k, v in params.items() if isinstance(v, str) and v and k != "limit"}
        context["more"] = {"n": more, "url": "/panel/search?" + urlencode({**asked, "limit": more})}
    return "search.html", context


MAX_SEARCH = 200  # the most hits the search page shows ("Show 40 →" doubles a page up to it)
FACTS_PAGE = 200  # the facts page lists this many of what holds now at a time, oldest first
REVIEWS_SHOWN = 50  # the facts page lists this many pairs to review at a time (settling them brings the next)
RETIRED_SHOWN = 50  # the facts page lists this many of the latest retired (superseded, merged, retracted, revised)


def facts(memory: Memory, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    offset = _int(params, "offset", 0)
    holding = memory.facts.query()  # oldest first; a page of them is shown, the count is of all
    current = holding[offset:offset + FACTS_PAGE]
    every = memory.facts.query(status="all")  # the latest change of status first
    retired = [f for f in every if f.status in ("superseded", "merged", "retracted", "revised")][:RETIRED_SHOWN]
    by_id = {f.id: f for f in every}
    reviews, review_total = memory.facts.review_page(limit=REVIEWS_SHOWN)
    return "facts.html", {"view": "facts", "facts": current, "total": len(holding), "offset": offset, "page": FACTS_PAGE,
                          "reviews": reviews, "review_total": review_total,
                          "disputes": [f for f in holding if f.disputed_with], "retired": retired,
                          "replaced_by": {f.id: by_id[f.superseded_by].text for f in retired if f.superseded_by in by_id}}


def fact(memory: Memory, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    f = memory.facts.get(_param(params, "fact_id"))
    return "fact.html", {"view": "facts", "fact": f, "history": memory.facts.history(f.id)}


def chunk(memory: Memory, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A document chunk (`chk_…`) as `get-full` gives it: its vault, document, heading path, pages and text."""
    return "chunk.html", {"view": "search", "chunk": memory.vaults.chunk(_param(params, "chunk_id"))}


def tags(memory: Memory, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    t = memory.tags
    return "tags.html", {"view": "tags", "pending": t.pending(limit=200), "taxonomy": t.taxonomy(),
                         "counts": t.counts(), "recent": t.list(limit=50)}


def health(memory: Memory, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    stats = memory.stats()
    jobs = memory.jobs()
    return "health.html", {"view": "health", "stats": stats, "jobs": jobs, "tags": memory.tags.counts()["states"],
                           "vaults": _vaults(memory)}


def _vaults(memory: Memory) -> list[dict[str, Any]] | str:
    """The vaults with their state, or why they cannot be listed (health never fails for it)."""
    try:
        return memory.vaults.list()
    except Exception as exc:
        return f"vaults unavailable: {exc}"


# -- actions ---------------------------------------------------------------------
def json_body(raw: bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        raise InvalidInput("the action's body is not JSON") from None
    if not isinstance(value, dict) or any(not isinstance(v, (str, int, float, bool, type(None))) for v in value.values()):
        raise InvalidInput("an action's body is one JSON object of plain values")
    return value


def _text(body: dict[str, Any], name: str, required: bool = True) -> str | None:
    value = body.get(name)
    if value in (None, "") and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{name} is required")
    return value.strip()


def _target(body: dict[str, Any]) -> dict[str, str]:
    kind, ident = _text(body, "target_type"), _text(body, "target_id")
    if kind not in ("session", "summary"):
        raise InvalidInput("target_type is session or summary")
    return {kind: ident}  # type: ignore[dict-item]


def act(memory: Memory, name: str, body: dict[str, Any]) -> Any:
    t, f = memory.tags, memory.facts
    if name == "tag-decide":
        return t.decide(_text(body, "tag"), _text(body, "decision"), **_target(body))  # type: ignore[arg-type]
    if name == "tag-add":
        return t.add(_text(body, "tag"), **_target(body))  # type: ignore[arg-type]
    if name == "taxonomy-decide":
        return t.taxonomy_decide(_text(body, "tag"), _text(body, "decision"))  # type: ignore[arg-type]
    if name == "taxonomy-upsert":
        return t.taxonomy_upsert(_text(body, "tag"), description=_text(body, "description", False))  # type: ignore[arg-type]
    if name == "tag-merge":
        return t.merge(_text(body, "tag"), _text(body, "into"))  # type: ignore[arg-type]
    if name == "fact-supersede":
        return f.supersede(_text(body, "fact_id"), _text(body, "text"), source="person:panel").to_dict()  # type: ignore[arg-type]
    if name == "fact-retract":
        return f.retract(_text(body, "fact_id"), reason=_text(body, "reason", False), source="person:panel").to_dict()  # type: ignore[arg-type]
    if name == "fact-settle":
        return f.settle(_text(body, "new_id"), _text(body, "existing_id"), _text(body, "decision")).to_dict()  # type: ignore[arg-type]
    if name == "jobs-retry":
        return {"retried": memory.retry_failed(_text(body, "task", False), None, False)}
    raise NotFound(f"no panel action {name[:80]!r}")


__all__ = ["act", "json_body"]
