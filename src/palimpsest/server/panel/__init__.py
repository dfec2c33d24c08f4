"""The memory panel: server-rendered pages at `/panel` over the same library calls as the API.

Pages are Jinja2 templates with autoescape on (every stored text is escaped; highlighting
builds its markup from escaped pieces), one stylesheet and one small script, no build
step. Reading needs nothing more than the API does; mutating actions (accept or reject a
tag, merge, supersede or retract a fact, retry failed jobs) are `fetch` POSTs of JSON to
`/panel/action/<name>`, so they fit the server guard's JSON-only rule unchanged, and they
are refused unless:

- writes are enabled (`PALIMPSEST_ENABLE_WRITE=1`), as for every other write;
- the body is `application/json` (a cross-site page cannot send that without a CORS
  preflight, which the server refuses);
- the `X-Palimpsest-CSRF` header and the `palimpsest_csrf` cookie (SameSite=Strict, set
  with every page) both hold this process's random token (constant-time comparison).

On a server with a token (`PALIMPSEST_TOKEN`), a browser signs in at `/panel/login` with
that token and gets an HttpOnly, SameSite=Strict cookie derived from it (valid a week),
which the guard accepts on panel pages only (never on `/api/` or MCP); after ten wrong
tokens in a minute from one address, sign-ins from it answer 429 (`SignInLimit`). See
docs/panel.md.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.staticfiles import StaticFiles

from ...errors import InvalidInput, PalimpsestError, WriteDisabled
from ...memory import Memory
from ..deadline import in_thread
from ..guard import PANEL_LOGIN, PANEL_SIGN_IN_S, SignInLimit, panel_cookie, panel_cookie_name
from . import views, wiki
from .render import render

COOKIE = "palimpsest_csrf"
HEADER = "x-palimpsest-csrf"
MAX_ACTION_BYTES = 64 * 1024

# a page: the memory and the request's parameters in, (template, context) out
Page = Callable[[Memory, dict[str, Any]], tuple[str, dict[str, Any]]]


class Panel:
    def __init__(self, memory: Memory, write: bool, token: str = "") -> None:
        self.memory, self.write = memory, write
        self.token = token.encode("utf-8")
        self.csrf = secrets.token_urlsafe(32)

    def page(self, request: Request, template: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
        html = render(template, {**context, "csrf": self.csrf, "write": self.write, "path": request.url.path,
                                 "auth": bool(self.token), "zone": self.memory.settings.zone})
        response = HTMLResponse(html, status_code=status)
        response.set_cookie(COOKIE, self.csrf, httponly=True, samesite="strict", path="/panel")
        response.headers["content-security-policy"] = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                                       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
        response.headers["x-content-type-options"] = "nosniff"
        response.headers["referrer-policy"] = "same-origin"
        return response

    def check(self, request: Request) -> None:
        """CSRF and write checks of a mutating action."""
        if not self.write:
            raise WriteDisabled("the panel is read-only: start the server with PALIMPSEST_ENABLE_WRITE=1 to change memory")
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise InvalidInput("panel actions are JSON")
        presented = request.headers.get(HEADER, "").encode()
        cookie = request.cookies.get(COOKIE, "").encode()
        token = self.csrf.encode()
        if not (hmac.compare_digest(presented, token) and hmac.compare_digest(cookie, token)):
            raise CSRFRefused("this action needs the panel's token: reload the page and try again")


class CSRFRefused(PalimpsestError):
    code = "csrf"
    http_status = 403


def mount(app: FastAPI, memory: Memory, write: bool, token: str = "") -> None:
    """Add the panel's pages, actions and static files to `app`; `token`: the server's
    bearer token, which a browser types in at the sign-in page."""
    panel = Panel(memory, write, token)
    app.mount("/panel/static", StaticFiles(directory=Path(__file__).parent / "static"), name="panel-static")

    @app.get("/", include_in_schema=False)
    async def root() -> Response:
        return RedirectResponse("/panel", status_code=303)

    @app.get("/favicon.ico", include_in_schema=False)  # (what a browser asks for before it reads a page's <link>)
    async def favicon() -> Response:
        return RedirectResponse("/panel/static/favicon.svg", status_code=301)

    expected = panel.token
    limit = SignInLimit()

    @app.get(PANEL_LOGIN, include_in_schema=False)
    async def login_form(request: Request) -> Response:
        return panel.page(request, "login.html", {"needed": bool(expected)})

    @app.post(PANEL_LOGIN, include_in_schema=False)
    async def login(request: Request) -> Response:
        """The server's token typed into a form (a browser cannot send a bearer header):
        right, the sign-in cookie the guard accepts on panel pages; wrong, the form again."""
        raw = await request.body()
        if len(raw) > MAX_ACTION_BYTES:
            raise InvalidInput(f"a sign-in is at most {MAX_ACTION_BYTES} bytes")
        client = request.client.host if request.client else ""
        wait = limit.wait(client)
        if wait:
            page = panel.page(request, "login.html", {"needed": bool(expected), "wait": int(wait) + 1}, 429)
            page.headers["retry-after"] = str(int(wait) + 1)
            return page
        presented = (parse_qs(raw.decode("utf-8", "replace")).get("token") or [""])[0].strip().encode("utf-8")
        if not expected or not hmac.compare_digest(presented, expected):
            if expected:
                limit.failed(client)
            return panel.page(request, "login.html", {"needed": bool(expected), "refused": bool(expected)}, 401 if expected else 200)
        response = RedirectResponse("/panel", status_code=303)
        expires = int(time.time()) + PANEL_SIGN_IN_S
        response.set_cookie(panel_cookie_name(request.scope), panel_cookie(expected, expires), max_age=PANEL_SIGN_IN_S,
                            httponly=True, samesite="strict", path="/panel", secure=request.url.scheme == "https")
        return response

    @app.post("/panel/logout", include_in_schema=False)
    async def logout(request: Request) -> Response:
        response = RedirectResponse(PANEL_LOGIN, status_code=303)
        response.delete_cookie(panel_cookie_name(request.scope), path="/panel")
        return response

    def page_route(path: str, build: Page) -> None:
        async def show(request: Request) -> Response:
            params = dict(request.query_params)
            params.update(request.path_params)
            try:
                template, context = await in_thread(build, memory, params)
            except PalimpsestError as exc:
                return panel.page(request, "error.html", {"error": exc.for_clients()["message"], "code": exc.code}, exc.http_status)
            if template == "__redirect__":
                return RedirectResponse(quote(context["url"], safe="/?=&#"), status_code=303)
            return panel.page(request, template, context)

        app.add_api_route(path, show, methods=["GET"], include_in_schema=False, name=f"panel-{build.__name__}")

    for path, build in (("/panel", views.sessions), ("/panel/sessions", views.sessions), ("/panel/sessions/{session}", views.session),
                        ("/panel/find", views.find), ("/panel/search", views.search), ("/panel/facts", views.facts),
                        ("/panel/facts/{fact_id}", views.fact), ("/panel/chunks/{chunk_id}", views.chunk),
                        ("/panel/tags", views.tags), ("/panel/health", views.health),
                        ("/panel/wiki", wiki.wiki), ("/panel/wiki/{topic}", wiki.wiki_page)):
        page_route(path, build)

    @app.post("/panel/action/{name}", include_in_schema=False)
    async def action(name: str, request: Request) -> JSONResponse:
        panel.check(request)
        raw = await request.body()
        if len(raw) > MAX_ACTION_BYTES:
            raise InvalidInput(f"a panel action is at most {MAX_ACTION_BYTES} bytes")
        body = views.json_body(raw)
        return JSONResponse({"ok": True, "result": await in_thread(views.act, memory, name, body)})

    @app.get("/panel/{rest:path}", include_in_schema=False)  # last: a mistyped page is a page that says so, not raw JSON
    async def no_such_page(rest: str, request: Request) -> Response:
        return panel.page(request, "error.html", {"error": f"there is no panel page /panel/{rest[:200]}", "code": "not_found"}, 404)


__all__ = ["mount"]
