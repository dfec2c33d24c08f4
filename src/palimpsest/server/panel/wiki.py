"""The wiki's pages in the memory panel (`/panel/wiki`, `/panel/wiki/{topic}`): library
calls only, like `views.py`; the page routes of `__init__.py` serve them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import InvalidInput
from ...wiki import KINDS

if TYPE_CHECKING:
    from ...memory import Memory

MAX_PARAM = 500


def _param(params: dict[str, Any], name: str) -> str:
    value = str(params.get(name, "") or "").strip()
    if len(value) > MAX_PARAM:
        raise InvalidInput(f"{name} is longer than {MAX_PARAM} characters")
    return value


def wiki(memory: Memory, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Topics by title, filtered by kind and a part of the title; or pages matching `search`."""
    q, kind, search = _param(params, "q"), _param(params, "kind"), _param(params, "search")
    w = memory.wiki
    hits = w.search(search, limit=20) if search else None
    topics = w.list(kind=kind or None, query=q or None, limit=500)
    return "wiki.html", {"view": "wiki", "topics": topics, "q": q, "kind": kind, "kinds": KINDS, "search": search, "hits": hits}


def wiki_page(memory: Memory, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """One page: statements by state with their sources one click away, and the page's history."""
    w = memory.wiki
    page = w.show(_param(params, "topic"))
    return "wiki_page.html", {"view": "wiki", **page, "history": w.history(page["topic"]["id"])}
