"""Every request has a deadline: no request can hold a client, or the server, forever.

`Deadline` runs each HTTP request inside a cancel scope that expires `request_timeout`
seconds after it arrived. Past it, a request that has not started its response answers
503 `deadline_exceeded`; one that has started is cut. Streams are the exception: a journal
stream (`application/x-ndjson`), once started, runs to the end of the journal at the
reader's pace; an MCP call answers on an event stream that starts before its tool runs, so
the tool call keeps the deadline itself (`within`) and answers a tool error past it.

Route work runs in worker threads through `in_thread`, which gives the thread up when the
deadline cancels the request (`abandon_on_cancel`): the answer goes out at the deadline and
the thread finishes on its own, without holding one of the pool's slots. The work is not
undone: a write answered 503 may still land, so clients retry writes with their
`event_key` (deduped). The regex scan, the one search that could run unbounded, already
stops at its own budget in a child process (`search/literal.py`).
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import DeadlineExceeded

log = logging.getLogger("palimpsest.http")
T = TypeVar("T")
STREAMS = (b"application/x-ndjson", b"text/event-stream")  # MCP's tools keep their own (`within`)


async def in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` in a worker thread, given up (left to finish alone) when the
    request's deadline passes."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs), abandon_on_cancel=True)


async def within(seconds: float, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`in_thread`, raising `DeadlineExceeded` past `seconds` (0 or less: no limit): for the
    MCP tools, whose answers go out on an event stream that starts before the tool runs."""
    if seconds <= 0:
        return await in_thread(fn, *args, **kwargs)
    with anyio.move_on_after(seconds):
        return await in_thread(fn, *args, **kwargs)
    raise DeadlineExceeded(_message(seconds))


def _message(seconds: float) -> str:
    return (f"the request did not finish within {seconds:g} s (PALIMPSEST_REQUEST_TIMEOUT); "
            "a write may still complete: retry it with the same event_key")


class Deadline:
    """ASGI middleware: the request's deadline (0 or less: none)."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.seconds <= 0:
            await self.app(scope, receive, send)
            return
        started = False
        with anyio.move_on_after(self.seconds) as cancel:
            async def sending(message: Message) -> None:
                nonlocal started
                if message["type"] == "http.response.start":
                    started = True
                    kind = dict(message.get("headers") or []).get(b"content-type", b"")
                    if kind.startswith(STREAMS):
                        cancel.deadline = math.inf
                await send(message)

            await self.app(scope, receive, sending)
        if not cancel.cancelled_caught:
            return
        log.warning("%s %s passed its deadline of %g s%s", scope.get("method"), scope.get("path"), self.seconds,
                    " (response cut)" if started else "")
        if not started:
            error = DeadlineExceeded(_message(self.seconds))
            await JSONResponse({"ok": False, "error": error.to_dict()}, status_code=error.http_status)(scope, receive, send)
