"""The MCP server: the tools of `palimpsest.tools`, over stdio or streamable HTTP.

Built on the official `mcp` SDK (2.x). The tools are declared once, with JSON schemas, in
`palimpsest.tools`, so this module uses the SDK's low-level `Server` (`on_list_tools` /
`on_call_tool`), which publishes those schemas as they are; `MCPServer` (1.x's `FastMCP`)
derives schemas from Python signatures, which would declare every tool a second time.
Write tools are listed and callable only when writes are enabled.

A tool's result is returned as JSON text and, when it is an object, as
`structured_content` too. A Palimpsest error (bad arguments, unknown id) is a tool result
with `is_error` set and `{code, message}` as its text, so the model can read and correct it.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any, Self

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from pydantic import ValidationError

from .. import __version__, tools
from ..errors import PalimpsestError
from ..harness.project import repository_of
from ..memory import Memory
from .deadline import within

log = logging.getLogger("palimpsest.mcp")

INSTRUCTIONS = (
    "Palimpsest is long-term memory: every message of past conversations is kept. Before answering each user "
    "message, call memory_recall with the message as the query and use what it returns (unless your harness already "
    "injects the recall block). Use memory_search to find what was said or decided before, memory_browse to read a "
    "session in order, memory_get_full for a whole message."
)


def _tool(t: tools.Tool) -> types.Tool:
    return types.Tool(
        name=t.name, description=t.description, input_schema=t.input_schema,
        # nothing is deleted by any tool (a correction supersedes), and memory is a closed world
        annotations=types.ToolAnnotations(read_only_hint=t.read_only, destructive_hint=False, idempotent_hint=t.idempotent,
                                          open_world_hint=False),
    )


def _text(value: Any) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=json.dumps(value, ensure_ascii=False, default=str))]


def build_server(memory: Memory, enable_write: bool, project: str | None = None) -> Server[Any]:
    """A low-level MCP server whose tools are the registry's (write tools only with the flag);
    `project`: the repository its recall is kept to when a call names none (`with_defaults`)."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_tool(t) for t in await anyio.to_thread.run_sync(tools.available, enable_write, memory)])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = with_defaults(params.name, params.arguments or {}, memory.settings, project)
        try:
            result = await within(memory.settings.request_timeout, tools.call, memory, params.name, args, enable_write=enable_write)
        except PalimpsestError as exc:
            return types.CallToolResult(content=_text(exc.for_clients(log)), is_error=True)
        except Exception:  # never a stack trace to the client; the log keeps it
            log.exception("tool %s failed", params.name)
            return types.CallToolResult(content=_text({"code": "internal", "message": "internal error"}), is_error=True)
        structured = result if isinstance(result, dict) else None
        return types.CallToolResult(content=_text(result), structured_content=structured)

    return Server(
        "palimpsest", version=__version__, instructions=INSTRUCTIONS,
        get_tool_input_schema=lambda name: _schema_of(name, enable_write),
        on_list_tools=list_tools, on_call_tool=call_tool,
    )


SESSION_WRITES = ("memory_append", "memory_ingest_session")
PROJECT_SCOPED = ("memory_recall", "memory_context")  # the tools that take the recall hook's `project`


def with_defaults(name: str, args: dict[str, Any], settings: Any, project: str | None = None) -> dict[str, Any]:
    """A call's arguments with what the process knows where they name none: a session write's
    identity (an MCP client launches `palimpsest mcp` with PALIMPSEST_AGENT / _CHANNEL /
    _PERSONA in its environment rather than asking the model to say who it is on every call),
    and a recall's `project`, the repository the process was started in (`launching_project`).
    What the call names wins; other tools' arguments pass unchanged (so do ill-typed ones: the
    schema check reports them)."""
    if not isinstance(args, dict):
        return args
    if name in PROJECT_SCOPED and project and "project" not in args:
        return {**args, "project": project}
    if name not in SESSION_WRITES:
        return args
    out = dict(args)
    for field, value in (("agent", settings.mcp_agent), ("channel", settings.mcp_channel)):
        if value and field not in out:
            out[field] = value
    if settings.mcp_persona and isinstance(out.get("settings", {}), dict) and "persona" not in out.get("settings", {}):
        out["settings"] = {**out.get("settings", {}), "persona": settings.mcp_persona}
    return out


def _schema_of(name: str, enable_write: bool) -> dict[str, Any] | None:
    try:
        return tools.get(name, enable_write).input_schema
    except PalimpsestError:
        return None


def launching_project() -> str | None:
    """The repository this process was started in, as the recall hook names it from its `cwd`:
    Claude Code starts a stdio MCP server in the project's folder, and without it memory_recall
    from acme/platform's billing service led with acme/search-infra's "now uses PASETO
    v4.public" while the hook's block held none of it (a shared server's user). A folder in
    no repository is no project here: Claude Desktop and Cline start servers in `/` or the
    home folder, which would have kept every repository's sessions out. Nor is the home folder
    itself, even when it is a repository: a user who keeps dotfiles as a git repository in `~`
    had every Claude Desktop recall kept to `you/dotfiles`."""
    try:
        cwd = Path.cwd()
        return None if cwd.resolve() == Path.home().resolve() else repository_of(str(cwd))
    except (OSError, RuntimeError):  # (a folder deleted under it; no home folder to be found)
        return None


async def run_stdio(memory: Memory, enable_write: bool) -> None:
    """Serve MCP on stdin/stdout until the client closes the stream."""
    from mcp.server.stdio import stdio_server

    server = build_server(memory, enable_write, launching_project())
    async with stdio_server() as (read_stream, write_stream):
        await server.run(BadLinesAnswered(read_stream, write_stream), write_stream, server.create_initialization_options())


_TOOL_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


class Remote:
    """The tools of a Palimpsest server elsewhere, over its HTTP API (`palimpsest mcp --remote`):
    an MCP client on a second machine launches `palimpsest mcp`, and its tools must read and
    write the shared server's memory, not an empty store in this machine's home (a new user's:
    `setup claude-code --url http://server` gave the model a memory of 0 messages)."""

    def __init__(self, url: str, token: str | None, timeout: float) -> None:
        import httpx

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.url = url.rstrip("/")
        self._http = httpx.Client(headers=headers, timeout=timeout, trust_env=False)

    def _answer(self, response: Any) -> Any:
        from ..errors import redact_url

        try:
            body = response.json()
        except ValueError:
            raise PalimpsestError(f"{redact_url(self.url)} answered HTTP {response.status_code}, not Palimpsest's JSON") from None
        if isinstance(body, dict) and body.get("ok") is True:
            return body.get("result")
        error = body.get("error") if isinstance(body, dict) else None
        exc = PalimpsestError(str((error or {}).get("message") or f"HTTP {response.status_code}"))
        exc.code = str((error or {}).get("code") or "error")
        raise exc

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx

        from ..errors import StoreUnavailable, redact_url

        try:
            return self._answer(self._http.request(method, self.url + path, **kwargs))
        except httpx.HTTPError as exc:
            raise StoreUnavailable(f"the Palimpsest server at {redact_url(self.url)} cannot be reached: {exc}") from None

    def tools(self) -> list[types.Tool]:
        return [types.Tool(name=t["name"], description=t.get("description"), input_schema=t["input_schema"],
                           annotations=types.ToolAnnotations(read_only_hint=t.get("read_only"), destructive_hint=False,
                                                             idempotent_hint=t.get("idempotent"), open_world_hint=False))
                for t in self._request("GET", "/api/tools")]

    def call(self, name: str, args: dict[str, Any]) -> Any:
        if not _TOOL_NAME.fullmatch(name or ""):  # ("../../capture" had posted to /api/capture with the token)
            from ..errors import NotFound

            raise NotFound(f"no tool named {str(name)[:80]!r}")
        return self._request("POST", f"/api/memory/tool/{name}", json=args)

    def close(self) -> None:
        self._http.close()


def build_remote_server(remote: Remote, settings: Any, project: str | None = None) -> Server[Any]:
    """An MCP server whose tools are the remote server's: listed and called over its HTTP API
    (`project` as `build_server` takes it)."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        try:
            return types.ListToolsResult(tools=await anyio.to_thread.run_sync(remote.tools))
        except PalimpsestError as exc:  # the server's refusal or absence, said: a client lists tools first, and saw
            raise MCPError(INTERNAL_ERROR, f"{exc.code}: {exc}") from exc  # only "Internal server error"

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = with_defaults(params.name, params.arguments or {}, settings, project)
        try:
            result = await anyio.to_thread.run_sync(remote.call, params.name, args)
        except PalimpsestError as exc:
            return types.CallToolResult(content=_text(exc.to_dict()), is_error=True)
        structured = result if isinstance(result, dict) else None
        return types.CallToolResult(content=_text(result), structured_content=structured)

    return Server("palimpsest", version=__version__, instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool)


async def run_remote_stdio(remote: Remote, settings: Any) -> None:
    """Serve the remote server's tools on stdin/stdout until the client closes the stream."""
    from mcp.server.stdio import stdio_server

    server = build_remote_server(remote, settings, launching_project())
    async with stdio_server() as (read_stream, write_stream):
        await server.run(BadLinesAnswered(read_stream, write_stream), write_stream, server.create_initialization_options())


class BadLinesAnswered:
    """The stdio read stream, a line that is no JSON-RPC message answered with its error (id null) and
    skipped. The SDK (2.3.0) passes such a line's exception on as an item that its server only logs at
    debug (modelcontextprotocol/python-sdk#2751; the fix proposed there is not in 2.3.0): a Claude Code user's
    client sent a malformed line and waited for its answer forever. Not JSON is -32700 Parse error;
    JSON that is no message, -32600 Invalid Request."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self.inner, self.write_stream = inner, write_stream

    @property
    def last_context(self) -> Any:  # (the sender's contextvars, which the SDK's dispatcher reads off the stream)
        return getattr(self.inner, "last_context", None)

    async def receive(self) -> Any:
        while isinstance(item := await self.inner.receive(), Exception):
            log.info("a line that is no JSON-RPC message: %s", item)
            await self.write_stream.send(SessionMessage(_line_error(item)))
        return item

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _line_error(exc: Exception) -> types.JSONRPCError:
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    not_json = any(e["type"] == "json_invalid" for e in errors) or not errors
    error = types.ErrorData(code=PARSE_ERROR, message="Parse error") if not_json else \
        types.ErrorData(code=INVALID_REQUEST, message="Invalid Request")
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
