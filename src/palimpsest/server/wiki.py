"""HTTP routes of the wiki: `GET /api/wiki`, `/api/wiki/{topic}`, `/api/wiki/{topic}/history`.

Each parses, calls one `Wiki` method in the thread pool and answers `{ok, result}`;
errors are translated by the app's handlers (`http.py`), in one place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi.responses import JSONResponse

from .deadline import in_thread

if TYPE_CHECKING:
    from fastapi import FastAPI

    from ..memory import Memory


def wiki_routes(app: FastAPI, memory: Memory, responses: Any) -> None:
    def ok(result: Any) -> JSONResponse:
        return JSONResponse({"ok": True, "result": result})

    @app.get("/api/wiki", tags=["wiki"], summary="Topic pages by title (kind, query: part of the title, limit, offset).",
             responses=responses(400, 401))
    async def wiki_list(kind: str | None = None, query: str | None = None, limit: int = 100, offset: int = 0) -> JSONResponse:
        return ok(await in_thread(lambda: memory.wiki.list(kind=kind, query=query, limit=limit, offset=offset)))

    @app.get("/api/wiki/search", tags=["wiki"], summary="Pages matching q, each with its best statements and their sources.",
             responses=responses(400, 401))
    async def wiki_search(q: str = "", limit: int = 10) -> JSONResponse:
        return ok(await in_thread(lambda: memory.wiki.search(q, limit=max(1, min(limit, 100)))))

    @app.get("/api/wiki/{topic}", tags=["wiki"], summary="One page (by id, title or alias) with every statement's sources.",
             responses=responses(400, 401, 404))
    async def wiki_show(topic: str) -> JSONResponse:
        return ok(await in_thread(lambda: memory.wiki.show(topic)))

    @app.get("/api/wiki/{topic}/history", tags=["wiki"], summary="A page's patches, oldest first.", responses=responses(400, 401, 404))
    async def wiki_history(topic: str) -> JSONResponse:
        return ok(await in_thread(lambda: memory.wiki.history(topic)))
