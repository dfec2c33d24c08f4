"""The HTTP API (FastAPI): tools, capture, journal replay, stats, health, MCP at `/mcp`.

Routes only parse, call one library function and format; errors are translated in one
place (`_error_response`): a `PalimpsestError` answers `{ok: false, error: {code, message}}`
with its `http_status`, anything unexpected answers 500 with no detail (`CrashGuard`; the
log keeps the traceback) and the connection stays open. Bodies are read as raw JSON rather than through pydantic models, so a tool
gets its arguments unchanged and validation has one author (`tools.validate`); the
OpenAPI document still shows each tool's schema as its request body.

Security (see `server/guard.py`): a bearer token on every route but `/healthz` and
`/readyz` when one is set (required to bind beyond loopback; the panel's pages also take
the cookie its sign-in page sets for the right token), a request-body limit, JSON
content type required on POST (a browser cannot send that cross-site without a CORS
preflight, which is refused unless origins are configured), no stack traces to clients.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import FastAPI, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__, tools
from ..errors import InvalidInput, NotFound, PalimpsestError
from ..memory import Memory
from ..records import SESSION_ID_RE, check_session_id
from ..settings import Settings
from ..settings import loopback_host as is_loopback
from ..tools.registry import MAX_DEPTH, json_depth
from . import capture
from .deadline import Deadline, in_thread
from .guard import Guard
from .hook import hook_routes
from .mcp import build_server
from .panel import mount as mount_panel
from .wiki import wiki_routes

log = logging.getLogger("palimpsest.http")
EVENTS_PAGE = 1000

ERROR = {
    "type": "object", "required": ["ok", "error"],
    "properties": {"ok": {"const": False}, "error": {"type": "object", "required": ["code", "message"],
                                                      "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}},
}
OK = {"type": "object", "required": ["ok", "result"], "properties": {"ok": {"const": True}, "result": {}}}


def _error_statuses() -> list[int]:
    """Every status an error of the tree can answer (plus the guard's), for the OpenAPI document."""
    seen, todo = set(), [PalimpsestError]
    while todo:
        cls = todo.pop()
        seen.add(cls.http_status)
        todo.extend(cls.__subclasses__())
    return sorted((seen - {500}) | {401, 403, 404, 408, 413, 415})


def _responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    out: dict[int | str, dict[str, Any]] = {200: {"description": "ok", "content": {"application/json": {"schema": OK}}}}
    for status in statuses:
        out[status] = {"description": "error", "content": {"application/json": {"schema": ERROR}}}
    return out


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


# -- errors, in one place ------------------------------------------------------
def _error_response(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"ok": False, "error": {"code": code, "message": message}}, status_code=status)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(PalimpsestError)
    async def palimpsest_error(request: Request, exc: PalimpsestError) -> JSONResponse:
        return _error_response(exc.http_status, exc.code, exc.for_clients(log)["message"])

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed", 408: "request_timeout"}.get(exc.status_code, "http_error")
        return _error_response(exc.status_code, code, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return _error_response(400, InvalidInput.code, f"{where}: {first.get('msg', 'invalid request')}")


class CrashGuard:
    """An unexpected error answers 500 here, inside the app, and goes no further.

    Not `@app.exception_handler(Exception)`: Starlette's outermost middleware answers with
    that handler and then re-raises, and uvicorn, seeing the error, closes the kept-alive
    connection — the client's next request on it is reset (issue 21)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception:
            log.exception("%s %s failed", scope.get("method"), scope.get("path"))
            if started:  # a stream broke midway: nothing left to answer with
                raise
            await _error_response(500, "internal", "internal error")(scope, receive, send)


# -- request bodies --------------------------------------------------------------
MAX_CONTAINERS = 2_000_000  # objects and arrays one body may open (counted as brackets, strings' included)
PARSE_IN_THREAD = 1 << 20  # bodies past this are parsed off the event loop


async def _json_object(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > PARSE_IN_THREAD:  # a 31 MB body of 10 million `{}` took 22 s and 1.3 GB, every other request waiting
        if raw.count(b"{") + raw.count(b"[") > MAX_CONTAINERS:
            raise InvalidInput(f"request body opens more than {MAX_CONTAINERS:,} JSON objects and arrays")
        return await in_thread(_parsed, raw)
    return _parsed(raw)


def _parsed(raw: bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw) if raw.strip() else {}
    except RecursionError:
        raise InvalidInput(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"request body is not JSON: {str(exc)[:200]}") from None
    if not isinstance(value, dict):
        raise InvalidInput(f"request body must be a JSON object, got {type(value).__name__}")
    if json_depth(value) > MAX_DEPTH:
        raise InvalidInput(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def _ok(result: Any) -> JSONResponse:
    return JSONResponse({"ok": True, "result": result})


# -- the app ----------------------------------------------------------------------
def create_app(memory: Memory, settings: Settings | None = None, *, host: str = "127.0.0.1") -> FastAPI:
    """The ASGI app serving `memory`. `host` is where it will listen (for MCP's host checks)."""
    settings = settings or memory.settings
    write = bool(settings.enable_write)
    mcp_server = build_server(memory, write)
    mcp_routes = mcp_server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, host=host,
                                                max_request_body_size=settings.max_body_bytes).routes

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with mcp_server.session_manager.run():
            yield

    app = FastAPI(title="Palimpsest", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Long-term memory for LLM agents. Errors answer {ok: false, error: {code, message}}.")
    app.state.memory = memory
    _install_error_handlers(app)
    _tool_routes(app, memory, write)
    _capture_route(app, memory, write)
    _read_routes(app, memory)
    _tag_routes(app, memory, write)
    wiki_routes(app, memory, _responses)
    hook_routes(app, memory, _responses, _body)
    mount_panel(app, memory, write, settings.token or "")
    _mcp_get_refused(app)
    app.router.routes.extend(r for r in mcp_routes if isinstance(r, Route))
    origins = [o.strip() for o in str(settings.cors_origins or "").split(",") if o.strip()]
    if "*" in origins and not settings.token:  # (any web page a user opened had read and written their memory)
        raise InvalidInput("PALIMPSEST_CORS_ORIGINS='*' lets any web page call this server: set PALIMPSEST_TOKEN too, "
                           "or list the origins that may")
    if origins:
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version"])
    app.add_middleware(Deadline, seconds=settings.request_timeout)  # first added, so innermost: around the routes
    app.add_middleware(CrashGuard)  # inside CORS and Guard
    app.add_middleware(Guard, token=settings.token or "", max_body=settings.max_body_bytes, loopback_only=is_loopback(host),
                       body_timeout=settings.body_timeout, cors=bool(origins))
    return app


def _mcp_get_refused(app: FastAPI) -> None:
    """The server is stateless (no MCP session), so it has no stream to offer on GET: the
    SDK's route would open one that never closes, each holding a connection slot. The
    protocol lets a server answer 405 there, and clients then carry on with POST."""

    @app.get("/mcp", include_in_schema=False)
    async def mcp_get() -> JSONResponse:
        response = _error_response(405, "method_not_allowed", "this MCP server is stateless: POST requests to /mcp")
        response.headers["allow"] = "POST"
        return response


def _tool_routes(app: FastAPI, memory: Memory, write: bool) -> None:
    def route_for(t: tools.Tool) -> None:
        async def call_tool(request: Request) -> JSONResponse:
            args = await _json_object(request)
            return _ok(await in_thread(tools.call, memory, t.name, args, enable_write=write))

        app.add_api_route(f"/api/memory/tool/{t.name}", call_tool, methods=["POST"], name=t.name, summary=t.description,
                          tags=["tools"], responses=_responses(*_error_statuses()), openapi_extra=_body(t.input_schema))

    for t in tools.available(write):
        route_for(t)

    @app.post("/api/memory/tool/{name}", include_in_schema=False)
    async def unknown_tool(name: str) -> JSONResponse:
        tools.get(name, write)  # raises NotFound: an unknown tool, or a write tool while writes are off
        raise NotFound(f"no tool named {name!r}")

    @app.get("/api/tools", tags=["tools"], summary="The tools this server offers, with their argument schemas.",
             responses=_responses(401))
    async def list_tools() -> JSONResponse:
        return _ok([t.to_dict() for t in tools.available(write)])


def _capture_route(app: FastAPI, memory: Memory, write: bool) -> None:
    """`POST /api/capture`. With writes off it still takes batches from loopback clients
    (`capture_loopback`): capture is how the owner's own harness writes, not a model calling
    a write tool; anyone else gets 404 like the write tools, saying what to set."""
    local_only = not write and bool(memory.settings.capture_loopback)
    if not write and not local_only:
        @app.post("/api/capture", include_in_schema=False)
        async def capture_refused(request: Request) -> JSONResponse:
            capture.refuse()
            raise AssertionError("unreachable")

        return

    @app.post("/api/capture", tags=["capture"], responses=_responses(*_error_statuses()),
              summary="A harness's batch of events for one session: journaled under the session's lock, "
                      "deduped by event_key; answers stored or duplicate per event.",
              openapi_extra=_body(capture.BATCH_SCHEMA))
    async def capture_batch(request: Request) -> JSONResponse:
        if local_only and not (request.client and is_loopback(request.client.host)):
            capture.refuse()
        body = await _json_object(request)
        return _ok(await in_thread(capture.store_batch, memory, body))


TAG_GETS = {"": "list", "/pending": "pending", "/counts": "counts", "/lookup": "lookup", "/taxonomy": "taxonomy"}
TAG_POSTS = {"/decide": "decide", "/add": "add", "/taxonomy": "taxonomy_upsert", "/taxonomy/decide": "taxonomy_decide", "/merge": "merge"}


def _tag_routes(app: FastAPI, memory: Memory, write: bool) -> None:
    """`/api/memory/tags…`: the `memory_tags` tool's actions as GET (query string) and, with
    writes on, POST (JSON body) routes; the tool validates and runs them."""

    def get_route(suffix: str, action: str) -> None:
        async def read(request: Request) -> JSONResponse:
            args: dict[str, Any] = {k: v for k, v in request.query_params.items()}
            for k in ("limit", "offset"):
                if k in args:
                    if not args[k].isdigit():
                        raise InvalidInput(f"{k} must be a whole number")
                    args[k] = int(args[k])
            return _ok(await in_thread(tools.call, memory, "memory_tags", {**args, "action": action}, enable_write=write))

        app.add_api_route(f"/api/memory/tags{suffix}", read, methods=["GET"], tags=["tags"], responses=_responses(400, 401, 404),
                          summary=f"memory_tags {action} (arguments in the query string)", name=f"tags_{action}")

    def post_route(suffix: str, action: str) -> None:
        async def change(request: Request) -> JSONResponse:
            body = await _json_object(request)
            return _ok(await in_thread(tools.call, memory, "memory_tags", {**body, "action": action}, enable_write=write))

        app.add_api_route(f"/api/memory/tags{suffix}", change, methods=["POST"], tags=["tags"], responses=_responses(*_error_statuses()),
                          summary=f"memory_tags {action} (arguments as a JSON object)", name=f"tags_{action}",
                          openapi_extra=_body({"type": "object"}))

    for suffix, action in TAG_GETS.items():
        get_route(suffix, action)
    if write:  # like the write tools: unknown routes until writes are enabled
        for suffix, action in TAG_POSTS.items():
            post_route(suffix, action)


def _read_routes(app: FastAPI, memory: Memory) -> None:
    events_responses = _responses(400, 401, 404)
    events_responses[200]["content"]["application/x-ndjson"] = {"schema": {"type": "string"}}

    @app.get("/api/sessions/{session}/events", tags=["sessions"], responses=events_responses,
             summary="Replay a session's journal: a page of events after line `after` (or from `cursor`, the "
                     "`next_cursor` of the previous page), or with stream=true every event from there on as NDJSON.")
    async def session_events(session: str = Path(pattern=SESSION_ID_RE.pattern), after: int = 0, limit: int = 100,
                             cursor: str = "", stream: bool = False) -> Any:
        check_session_id(session)
        if after < 0 or not 1 <= limit <= EVENTS_PAGE:
            raise InvalidInput(f"after must be >= 0 and limit from 1 to {EVENTS_PAGE}")
        path = memory.journal.path(session)
        elsewhere = await in_thread(memory.journals_elsewhere, session)
        if not path.exists():
            if elsewhere:
                raise NotFound(f"session {session!r} was written through {_homes(elsewhere)} on this store, not through this server's home: "
                               "its journal is there (this server's search and browse read its messages)")
            raise NotFound(f"no session {session!r}")
        start = _cursor(path, cursor) if cursor else (0, 0)
        if stream:
            return StreamingResponse(_stream_lines(memory, session, after, start), media_type="application/x-ndjson")
        page = await in_thread(_events_page, memory, session, after, limit, start)
        if elsewhere:  # a store several homes share: this journal holds only what was written through this home
            page.update(partial=True, note=f"this home's journal only: {_homes(elsewhere)} on this store wrote more of this session "
                                           "(this server's search and browse read all of it)")
        return _ok(page)

    @app.get("/api/stats", tags=["stats"], summary="Counts, journal vs index lag, sizes.", responses=_responses(401, 503))
    async def stats() -> JSONResponse:
        return _ok(await in_thread(memory.stats))

    store = memory.store_fingerprint  # which database this server's worker takes jobs from (`store.fingerprint`)

    @app.get("/healthz", tags=["health"], summary="The process is up.")
    async def healthz() -> JSONResponse:
        return _ok({"status": "ok", "version": __version__, "store": store})

    @app.get("/readyz", tags=["health"], summary="The store answers and the home is writable (and, from `serve`, whether "
             "the vector index is built: `search_index` warming | ready | unavailable).", responses=_responses(503))
    async def readyz() -> JSONResponse:
        try:
            await in_thread(memory.check_store)
        except Exception as exc:  # one warning while the store is away, not one per probe (78 lines in one outage)
            (log.debug if getattr(app.state, "store_away", False) else log.warning)("not ready: %s", exc)
            app.state.store_away = True
            return _error_response(503, "store_unavailable", "the store does not answer")
        if getattr(app.state, "store_away", False):
            app.state.store_away = False
            log.warning("ready again: the store answers")
        if not os.access(memory.home if memory.home.exists() else memory.home.parent, os.W_OK):
            return _error_response(503, "journal_unwritable", "the home folder is not writable")
        warming = getattr(app.state, "search_index", None)  # set by `serve` (run.py: warm_up)
        return _ok({"status": "ready", **({"search_index": warming} if warming else {})})


def _homes(count: int) -> str:
    return "another home" if count == 1 else f"{count} other homes"


def _cursor(path: Any, cursor: str) -> tuple[int, int]:
    """(line, byte offset) from a `next_cursor`; the offset must start a line of the journal."""
    line, _, offset = cursor.partition(".")
    if not (line.isdigit() and offset.isdigit()) or len(cursor) > 40:
        raise InvalidInput("cursor must be a next_cursor value from an earlier page")
    n, at = int(line), int(offset)
    with open(path, "rb") as f:
        if at > os.fstat(f.fileno()).st_size:  # (before the seek: a 31-digit offset had been a 500)
            raise InvalidInput("cursor does not point at a line of this journal")
        f.seek(max(at - 1, 0))
        if at > 0 and f.read(1) != b"\n":
            raise InvalidInput("cursor does not point at a line of this journal")
    return n, at


def _lines(memory: Memory, session: str, start: tuple[int, int]) -> Iterator[tuple[int, int, bytes]]:
    """(absolute line, offset after the line, bytes) from a (line, offset) start."""
    for relative, offset, raw in memory.journal.read_raw(session, start[1]):
        yield start[0] + relative, offset + len(raw), raw


def _events_page(memory: Memory, session: str, after: int, limit: int, start: tuple[int, int]) -> dict[str, Any]:
    """A page of events after line `after`; `next_after` / `next_cursor` ask for the next one
    (the cursor skips straight to the byte where this page ended)."""
    events: list[dict[str, Any]] = []
    last, end = after, start[1]
    for line, offset, raw in _lines(memory, session, start):
        if line <= after:
            continue
        if len(events) == limit:
            return {"session": session, "events": events, "next_after": last, "next_cursor": f"{last}.{end}"}
        events.append({"line": line, **_parse_line(raw)})
        last, end = line, offset
    return {"session": session, "events": events, "next_after": None, "next_cursor": None}


def _parse_line(raw: bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw)
        return value if isinstance(value, dict) else {"type": "_unreadable"}
    except ValueError:
        return {"type": "_unreadable"}


def _stream_lines(memory: Memory, session: str, after: int, start: tuple[int, int]) -> Iterator[bytes]:
    for line, _, raw in _lines(memory, session, start):
        if line > after:
            yield raw
