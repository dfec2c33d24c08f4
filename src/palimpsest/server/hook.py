"""`POST /api/hook/recall`: the answer to a harness's prompt hook, ready to print.

The body is the hook's JSON as the harness gave it; `budget`, `format` and `project` (the
repository of the hook's `cwd` as the client's machine reads it) come in the query. The answer is the text `palimpsest recall --hook` writes to its stdout — the
`hookSpecificOutput` JSON, the bare block, or nothing (see `capture/recall_hook.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import Request
from fastapi.responses import PlainTextResponse

from ..capture import recall_hook
from .deadline import in_thread

if TYPE_CHECKING:
    from fastapi import FastAPI

    from ..memory import Memory


def hook_routes(app: FastAPI, memory: Memory, responses: Any, body: Any) -> None:
    text = {200: {"description": "what the hook prints (may be empty)", "content": {"text/plain": {"schema": {"type": "string"}}}}}

    @app.post("/api/hook/recall", tags=["harness"], response_class=PlainTextResponse, responses={**responses(400, 401, 413, 415), **text},
              openapi_extra=body({"type": "object"}),
              summary="The recall hook's output for a harness's hook JSON (the body): hookSpecificOutput JSON "
                      "(format=json), the bare block (format=text), or empty.")
    async def hook_recall(request: Request, budget: int = recall_hook.DEFAULT_BUDGET, format: str = "json",
                          project: str | None = None) -> PlainTextResponse:
        raw = await request.body()
        return PlainTextResponse(await in_thread(recall_hook.answer, memory.recall, raw, budget, format, project))
