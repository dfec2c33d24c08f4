"""`palimpsest recall --hook`: the recall block a harness adds to the model's context.

Claude Code, Codex and qwen-code run it before every user turn (their `UserPromptSubmit`
hook) with the hook's JSON on stdin — `session_id`, `prompt`, `cwd`, `hook_event_name`, …;
the OpenCode plugin runs it on `chat.message`. It forwards that JSON as it is to the
running server (`POST /api/hook/recall`) — with the repository of the hook's `cwd` as this machine reads it
(`project`) when the server is on another machine, where that folder is not — and the server answers with what to print: the turn's
recall block (the prompt as the query, the session's live tail left out since the harness
shows that conversation already) in the form the harnesses add to the model's context,
`{"hookSpecificOutput": {"hookEventName": …, "additionalContext": BLOCK}}` (`--format
text`: the bare block), or nothing (`capture/recall_hook.py`).

It must never get in the harness's way. The whole call is bounded by `--timeout` seconds,
counted from the process's start on Linux (its interpreter's start, imports, stdin read, DNS,
connect and answer; elsewhere from the hook's start, a few tens of ms later); when the input is not a hook's JSON, the prompt is empty, the server cannot be reached,
answers an error or answers too late, it prints nothing and exits 0. It asks the server
rather than opening the store because the server has the embedder loaded and the index
warm. Process start is most of its cost, so it imports only what it needs: `socket`,
`signal` and `settings` — not even `json` (and the `re` it imports): the server reads the
hook's JSON (`cli/__init__.py` sends it here before building the parser of every other
command). Only for a server on another machine does it read the hook's `cwd` itself
(`folder_project`). It speaks HTTP/1.1 over a bare socket to an `http://` server — `urllib.request`
took this process 65 ms of imports, more than the request itself — and through
`http.client` to an `https://` one, where the TLS handshake dwarfs the imports.
bench/hook.py measures the whole call against a bare `python -c pass`.
"""

from __future__ import annotations

import signal
import socket
import sys
from collections.abc import Sequence

TYPE_CHECKING = False  # not `typing`'s: importing `typing` costs this process ~10 ms
if TYPE_CHECKING:
    from typing import Any

DEFAULT_BUDGET = 2000  # tokens (capture/recall_hook.py's, not imported: it needs `json`)
DEFAULT_TIMEOUT = 2.0  # seconds: the harness waits on this before the model sees the prompt
MAX_INPUT = 4 * 1024 * 1024


class _Late(Exception):
    """The time limit passed."""


HELP = f"""usage: palimpsest recall --hook [--url URL] [--budget N] [--timeout S] [--format json|text] [--home H]

Answer a harness's prompt hook (its JSON on stdin) with the recall block.

  --url URL      server URL (default: PALIMPSEST_URL or http://127.0.0.1:8765)
  --budget N     token budget of the block (default {DEFAULT_BUDGET})
  --timeout S    seconds before answering nothing (default {DEFAULT_TIMEOUT})
  --format F     json: hookSpecificOutput for the harness (default); text: the bare block
  --home H, --store S   accepted and ignored: the hook asks the server
"""


class Options:
    """The hook's options. Parsed by hand, not by argparse: argparse and the `re` it needs
    cost this process ~25 ms, and the command line is the one `setup` wrote."""

    __slots__ = ("budget", "format", "timeout", "url")

    def __init__(self, argv: Sequence[str]) -> None:
        self.url: str | None = None
        self.budget, self.timeout, self.format = DEFAULT_BUDGET, DEFAULT_TIMEOUT, "json"
        kinds = {"--url": str, "--budget": int, "--timeout": float, "--format": str, "--home": str, "--store": str}
        words, i = list(argv), 0
        while i < len(words):
            name, eq, value = words[i].partition("=")
            if name in kinds:
                if not eq:
                    i += 1
                    value = words[i] if i < len(words) else ""
                try:
                    parsed = kinds[name](value)
                except ValueError:  # a value that does not parse keeps the default: the hook must not fail
                    parsed = None
                if parsed is not None and name[2:] in self.__slots__:
                    setattr(self, name[2:], parsed)
            i += 1
        if self.format not in ("json", "text"):
            self.format = "json"


def main(argv: Sequence[str]) -> int:
    if "--help" in argv or "-h" in argv:
        sys.stdout.write(HELP)
        return 0
    args = Options(argv)
    try:  # the bound counts from the process's start: a silent server's call took 2,784 ms with `--timeout 2` (a
        # Claude Code user's), the interpreter's start, the imports and the stdin read having come before the alarm
        answer = _within(args.timeout - _age(), lambda: _answer(args))
    except Exception:  # noqa: BLE001 — anything at all: the harness gets nothing, not an error
        return 0
    if answer:
        sys.stdout.buffer.write(answer)
    return 0


def _answer(args: Options) -> bytes:
    raw = sys.stdin.buffer.read(MAX_INPUT)
    return hook_answer(raw, args) if raw.strip() else b""


def _age() -> float:
    """Seconds since this process started: Linux's /proc/self/stat start time (clock ticks since boot) against the
    boot clock, read by hand (psutil is no dependency, and each import costs the hook's every call); 0 elsewhere."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()  # (after the command's name, which may hold spaces)
        import os
        import time

        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


def hook_answer(raw: bytes, args: Options) -> bytes:
    """What the server says to print for the hook's JSON `raw` (b"" for anything but a 200)."""
    from ..settings import Settings

    settings = Settings.load()
    server = (args.url or settings.url).rstrip("/")
    url = f"{server}/api/hook/recall?budget={max(0, args.budget)}&format={args.format}"
    return post(url + folder_project(raw, server), raw, settings.token, args.timeout) or b""


def folder_project(raw: bytes, server: str) -> str:
    """`&project=…`: the repository of the hook's `cwd` as this machine reads it (`harness.project.project_of`, as
    capture tags the session; "" for a folder in none), for a server on another machine, which reads its own disk: a
    client of a shared server was in no repository there, and its block held other repositories' decisions. A server
    of this machine reads the folder as the client would (and keeps its reading a minute); asking it here would
    cost every prompt the imports of `harness` and git (a whole call 91 → 184 ms, p50, on a loaded 2-core box)."""
    from ..settings import loopback

    if loopback(server):
        return ""
    import json
    from urllib.parse import quote

    from ..harness.project import project_of

    try:
        cwd = json.loads(raw).get("cwd")
    except (ValueError, RecursionError, AttributeError):  # no hook's JSON: the server answers nothing for it anyway
        return ""
    return f"&project={quote(project_of(cwd) or '', safe='')}" if isinstance(cwd, str) else ""


def post(url: str, body: bytes, token: str | None, timeout: float) -> bytes | None:
    """POST the JSON `body` to `url`: the body of a 200 answer, None for any other status.
    No proxies: the server is ours (usually loopback), and a proxy would only add delay."""
    scheme, _, rest = url.partition("://")
    netloc, slash, path = rest.partition("/")
    headers = {"Host": netloc, "Content-Type": "application/json", "Content-Length": str(len(body)), "Connection": "close"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if scheme == "https":
        import http.client

        conn = http.client.HTTPSConnection(netloc, timeout=timeout)
        conn.request("POST", slash + path, body, headers)
        response = conn.getresponse()
        return response.read() if response.status == 200 else None
    if scheme != "http":
        return None
    host, port = _host_port(netloc)
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    # a bytes host: getaddrinfo encodes a str one with the `idna` codec, an import of its own
    with socket.create_connection((host.encode("ascii"), port), timeout=timeout) as sock:  # type: ignore[arg-type]
        sock.sendall(f"POST {slash + path} HTTP/1.1\r\n{head}\r\n".encode("latin-1") + body)
        raw = b"".join(iter(lambda: sock.recv(65536), b""))
    status, _, rest_of = raw.partition(b"\r\n")
    fields, _, payload = rest_of.partition(b"\r\n\r\n")
    if status.split(b" ")[1:2] != [b"200"]:
        return None
    if b"transfer-encoding: chunked" in fields.lower():
        payload = _dechunk(payload)
    return payload


def _host_port(netloc: str) -> tuple[str, int]:
    """`host:port`, `[v6]:port` or a bare host (port 80)."""
    if netloc.startswith("["):
        host, _, port = netloc[1:].partition("]")
        return host, int(port.lstrip(":") or 80)
    host, _, port = netloc.partition(":")
    return host, int(port or 80)


def _dechunk(data: bytes) -> bytes:
    out = []
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";")[0] or b"0", 16)
        if size == 0:
            break
        out.append(data[:size])
        data = data[size + 2:]
    return b"".join(out)


def _within(seconds: float, work: Any) -> Any:
    """`work()`, abandoned after `seconds` (a wall-clock alarm: the stdin read, DNS and connect included)."""

    def late(*_: object) -> None:
        raise _Late()

    if seconds <= 0:
        raise _Late()
    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return work()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
