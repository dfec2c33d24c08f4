"""The server's front door: token, body size, content type — before any route runs.

When the server listens on loopback, a request must also name a loopback host (`Host:`
`localhost` or a loopback address such as 127.0.0.2), which defeats DNS rebinding: a
rebound name is a name, never an address literal. A plain ASGI middleware rather than FastAPI dependencies, so it also covers the MCP
endpoint and routes that do not exist (an unauthenticated caller learns nothing, not even
which paths are there). The token is compared with `hmac.compare_digest`. A body larger
than the limit is refused from its `Content-Length` without reading it, and a chunked body
is counted as it arrives and refused when it crosses the limit (`PayloadTooLarge`, which the
app's one error handler turns into 413). A body that stalls longer than `body_timeout` between
pieces answers 408, so slow clients cannot hold a request open.
"""

from __future__ import annotations

import hmac
import json
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio
from starlette.exceptions import HTTPException
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import PayloadTooLarge
from ..settings import loopback_host as is_loopback

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
# The panel is opened in a browser, which cannot send a bearer header: on a server with a
# token, its pages also accept the sign-in cookie (`panel_cookie`) that `/panel/login` sets
# for the right token, and an unauthorised page view is sent to the sign-in page.
PANEL_LOGIN = "/panel/login"
PANEL_STATIC = "/panel/static/"
PANEL_SIGN_IN_S = 7 * 24 * 3600  # a sign-in lasts a week
DRAIN_BYTES = 64 * 1024 * 1024  # a refused body up to this size (twice the default limit) is read before the 413, so the client hears it


def panel_cookie(token: bytes, expires: int) -> str:
    """The sign-in cookie's value: when it expires, and an HMAC of that under the token
    (never the token itself; a copied cookie stops working when it expires)."""
    return f"{expires}.{hmac.new(token, f'palimpsest panel sign-in {expires}'.encode(), 'sha256').hexdigest()}"


def panel_cookie_name(scope: Scope) -> str:
    """Named after the server's port: browsers send a host's cookies to all its ports, and
    two servers on one host must not overwrite each other's sign-in."""
    server = scope.get("server")
    return f"palimpsest_auth_{server[1]}" if server and server[1] else "palimpsest_auth"


class SignInLimit:
    """At most `failures` wrong tokens per `window` seconds from one client address; past
    that, every sign-in (and every bearer token) from it answers 429 until its oldest failure ages out, so a token
    cannot be guessed at the speed of the network."""

    def __init__(self, failures: int = 10, window: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.failures, self.window, self.clock = failures, window, clock
        self.seen: dict[str, deque[float]] = {}

    def wait(self, client: str) -> float:
        """Seconds before `client` may try again (0: now)."""
        times = self.seen.get(client)
        if not times:
            return 0.0
        now = self.clock()
        while times and times[0] <= now - self.window:
            times.popleft()
        return times[0] + self.window - now if len(times) >= self.failures else 0.0

    def failed(self, client: str) -> None:
        if len(self.seen) > 10_000:  # forget the clients that are quiet again
            cutoff = self.clock() - self.window
            self.seen = {k: v for k, v in self.seen.items() if v and v[-1] > cutoff}
        self.seen.setdefault(client, deque()).append(self.clock())


class Guard:
    def __init__(self, app: ASGIApp, token: str = "", max_body: int = 32 * 1024 * 1024, loopback_only: bool = False,
                 body_timeout: float = 30.0, cors: bool = False) -> None:
        self.app = app
        self.cors = cors  # origins are configured: their preflights pass the token check (CORS middleware answers them)
        self.body_timeout = body_timeout
        self.loopback_only = loopback_only
        self.token = token.encode("utf-8")
        self.guesses = SignInLimit()  # wrong bearer tokens: 282 guesses a second found a short one
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        refusal = self._refuse(scope, headers)
        if refusal:
            if refusal[0] == 413:
                await self._drain(receive, headers)
            await _send_error(send, *refusal)
            return
        await self.app(scope, self._counting(receive), send)

    def _refuse(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str, str, dict[str, str]] | None:
        path = scope.get("path", "")
        if self.loopback_only and not is_loopback(_hostname(headers.get("host", ""))):
            # DNS rebinding: a web page whose name now points at 127.0.0.1 would be "same origin".
            return 403, "forbidden_host", "this server answers only to loopback host names", {}
        presented = headers.get("authorization", "")
        preflight = self.cors and scope.get("method") == "OPTIONS" and "origin" in headers and "access-control-request-method" in headers
        # (a browser's CORS preflight carries no credentials, by the standard: refused, no configured origin could ever call)
        if (self.token and path not in OPEN_PATHS and not preflight and not self._authorised(presented)
                and not self._panel_allowed(scope, path, headers)):
            client = (scope.get("client") or ("?",))[0]
            if presented and (wait := self.guesses.wait(client)):  # (the right token always passes: a neighbour's guesses lock no one out)
                return 429, "too_many_attempts", f"too many wrong tokens from this address: try again in {wait:.0f} s", \
                    {"retry-after": str(max(1, round(wait)))}
            if presented:
                self.guesses.failed(client)
            if _is_panel(path) and scope.get("method") == "GET":
                return 303, "sign_in", "sign in to the panel", {"location": PANEL_LOGIN}
            return 401, "unauthorized", "a valid bearer token is required (Authorization: Bearer …)", {"www-authenticate": "Bearer"}
        length = headers.get("content-length", "")
        if length and (not length.isdigit() or int(length) > self.max_body):
            return 413, "payload_too_large", f"request body exceeds {self.max_body:,} bytes (PALIMPSEST_MAX_BODY_BYTES)", {"connection": "close"}
        if scope.get("method") == "POST" and path.startswith("/api/"):
            ctype = headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype != "application/json":
                return 415, "unsupported_media_type", "send the body as application/json", {}
        return None

    async def _drain(self, receive: Receive, headers: dict[str, str]) -> None:
        """Read and drop a refused body of at most `DRAIN_BYTES` before answering: a client that
        sends the whole body before it reads (Python's urllib, requests) otherwise meets a
        closed socket — a broken pipe — and never sees the 413 that says why."""
        length = headers.get("content-length", "")
        if not length.isdigit() or int(length) > DRAIN_BYTES or headers.get("expect", "").lower() == "100-continue":
            return  # (a client that waits for "100 Continue" has sent nothing: reading would invite the body)
        with anyio.move_on_after(self.body_timeout):
            while (message := await receive())["type"] == "http.request" and message.get("more_body", False):
                pass

    def _authorised(self, header: str) -> bool:
        scheme, _, presented = header.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(presented.strip().encode("utf-8"), self.token)

    def _panel_allowed(self, scope: Scope, path: str, headers: dict[str, str]) -> bool:
        """A panel path open to all (the sign-in page, static files) or a signed-in browser."""
        if not _is_panel(path):
            return False
        if path == PANEL_LOGIN or path.startswith(PANEL_STATIC):
            return True
        # starlette's parser: lenient, so another cookie it cannot read hides nothing
        value = cookie_parser(headers.get("cookie", "")).get(panel_cookie_name(scope), "")
        expires = value.partition(".")[0]
        if not expires.isdigit() or len(expires) > 12 or int(expires) < time.time():
            return False
        return hmac.compare_digest(value.encode("utf-8", "replace"), panel_cookie(self.token, int(expires)).encode())

    def _counting(self, receive: Receive) -> Receive:
        seen, complete = 0, False

        async def counted() -> Message:
            nonlocal seen, complete
            if complete:  # later receives wait for a disconnect (streams): no deadline
                return await receive()
            try:
                with anyio.fail_after(self.body_timeout):
                    message = await receive()
            except TimeoutError:
                raise HTTPException(408, f"the request body stalled for {self.body_timeout:g} s") from None
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise PayloadTooLarge(f"request body exceeds {self.max_body:,} bytes (PALIMPSEST_MAX_BODY_BYTES)")
                complete = not message.get("more_body", False)
            return message

        return counted


def _is_panel(path: str) -> bool:
    return path == "/panel" or path.startswith("/panel/")




def _hostname(host: str) -> str:
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


async def _send_error(send: Send, status: int, code: str, message: str, extra: dict[str, Any]) -> None:
    body = json.dumps({"ok": False, "error": {"code": code, "message": message}}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
