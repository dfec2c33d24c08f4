"""`palimpsest serve`: uvicorn serving the API and MCP, the background loop in a thread.

The listening socket is bound before uvicorn starts, so the URL printed is the real one
(also with port 0) and a port in use fails at once. Uvicorn owns SIGINT/SIGTERM: it stops
accepting, lets in-flight requests finish (up to `GRACE` seconds), then returns (the process exits 0); the
background loop (`service.run_background`: indexer, instant sweep, workers) is told to stop
and joined, and the model's calls still running are waited for, before the store is closed.

At start a thread warms search (`warm_up`): it loads the embedder and the vector index
(SQLite's in-memory matrix, and past `ann_threshold` vectors its HNSW graph — minutes at
100,000 vectors on a loaded machine) before any turn needs them, so the first recalls do
not pay for the load nor search exactly while a graph is built. `/readyz` says where it
is (`search_index`: warming, ready, unavailable); requests are served meanwhile. Once warm,
what is loaded is moved out of the garbage collector's sight (`settle_heap`).
"""

from __future__ import annotations

import gc
import logging
import signal
import socket
import sys
import threading
import time
from typing import Any, TextIO

import uvicorn

from ..errors import InvalidInput
from ..memory import Memory
from ..service import run_background, settle
from ..settings import loopback_host as is_loopback
from .http import create_app
from .protocol import header_deadline_protocol

log = logging.getLogger("palimpsest.serve")
GRACE = 10
MAX_CONNECTIONS = 1024  # beyond this uvicorn answers 503 instead of exhausting file descriptors

# Idle keep-alive connections are closed after this. Longer than clients keep theirs
# (httpx: 5 s), so a client never sends on a connection the server is closing at that
# moment: with both at 5 s, POSTs under load got "connection reset" (bench/load.py).
KEEP_ALIVE_S = 30


MIN_TOKEN_CHARS = 16  # beyond loopback: a one-character token was found in 0.6 s


def check_bind(host: str, token: str) -> None:
    """Refuse to listen beyond loopback without a token, or with a token no client can send."""
    if token and not (token.isascii() and token.isprintable() and token == token.strip()):
        # the server compares the token it is given with the header's value stripped: a
        # token ending in a newline (an `echo` into a file) would let no client in
        raise InvalidInput("PALIMPSEST_TOKEN must be printable ASCII without spaces at either end (no newline)")
    if not is_loopback(host) and not token:
        raise InvalidInput(f"refusing to listen on {host} without a token: set PALIMPSEST_TOKEN (loopback needs none)")
    if not is_loopback(host) and len(token) < MIN_TOKEN_CHARS:
        raise InvalidInput(f"refusing to listen on {host} with a token of {len(token)} characters: the network can guess it; "
                           f"use at least {MIN_TOKEN_CHARS} (python -c 'import secrets; print(secrets.token_urlsafe(24))')")


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say so, and
    # without it Nagle + delayed ACK add 40 ms to every response written in two parts.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise InvalidInput(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


WARM_WAIT_S = 3600  # how long warm_up waits for a graph build before reporting search as exact


def settle_heap() -> None:
    """Collect once, then leave every object alive now out of later collections.

    A full collection walks every tracked object while it holds the GIL: ~130 ms for the
    ~140,000 of a warm server on a loaded 2-core machine, and every request, `/healthz`
    included, waits for it (a test process hosting a server after hundreds of tests: up to
    0.9 s). What is loaded at start (modules, the app, the model's tokenizer) lives as long
    as the process, so scanning it again finds nothing: frozen, a collection walks only what
    requests made since."""
    gc.collect()
    gc.freeze()


def warm_up(memory: Memory, state: Any) -> None:
    """Load the embedder and the vector index now; `state.search_index` says how far it got."""
    try:
        state.search_index = "ready" if memory.warm(WARM_WAIT_S) else "unavailable"
    except Exception as exc:  # noqa: BLE001 — search still answers (keyword-only or exact); the log says why
        log.warning("warming search failed: %s", exc)
        state.search_index = "unavailable"
    settle_heap()


def serve(memory: Memory, host: str, port: int, *, interval: float = 2.0, worker: bool = True, out: TextIO = sys.stdout) -> None:
    """Serve until SIGINT/SIGTERM; returns after a clean shutdown."""
    check_bind(host, memory.settings.token)
    sock = bind(host, port)
    url = url_of(sock)
    app = create_app(memory, host=host)
    config = uvicorn.Config(app, log_level="info", timeout_graceful_shutdown=GRACE, timeout_keep_alive=KEEP_ALIVE_S,
                            limit_concurrency=MAX_CONNECTIONS, proxy_headers=False, server_header=False, access_log=False,
                            http=header_deadline_protocol(memory.settings.header_timeout))
    server = uvicorn.Server(config)
    stop = threading.Event()
    background = threading.Thread(target=run_background, args=(memory, stop, interval), kwargs={"worker": worker}, name="palimpsest-background", daemon=True)
    background.start()
    app.state.search_index = "warming"
    threading.Thread(target=warm_up, args=(memory, app.state), name="palimpsest-warm", daemon=True).start()
    writes = ("on" if memory.settings.enable_write else
              ("off for tools; capture from this machine on" if memory.settings.capture_loopback else "off")
              + " (PALIMPSEST_ENABLE_WRITE=1 enables the write tools, and capture from anywhere)")
    print(f"Palimpsest serving {memory.home} at {url}  (panel: {url}/panel, MCP: {url}/mcp, writes {writes})", file=out, flush=True)
    # Uvicorn handles the signals while it runs, then re-raises them to the handlers it found;
    # ours only ask the background loop to stop, so the shutdown below still runs.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        server.run(sockets=[sock])
    finally:
        stop.set()
        background.join(timeout=60)  # the worker finishes the job in hand or hands it back (service.run_background)
        settle()  # no call of the model runs as the process exits
        sock.close()
        log.info("stopped")


class ServerThread:
    """The real server (uvicorn) on a free loopback port in a thread — for tests and benchmarks.

        with ServerThread(memory) as url:
            httpx.get(url + "/healthz")
    """

    def __init__(self, memory: Memory, host: str = "127.0.0.1", port: int = 0, *, app: Any = None) -> None:
        """`app`: one made by `create_app` (a test adds its own routes to it), else a new one."""
        self.sock = bind(host, port)
        self.url = url_of(self.sock)
        config = uvicorn.Config(app or create_app(memory, host=host), log_level="warning", timeout_graceful_shutdown=GRACE,
                                timeout_keep_alive=KEEP_ALIVE_S, access_log=False, server_header=False,
                                http=header_deadline_protocol(memory.settings.header_timeout))
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.02)
        gc.freeze()  # as `serve` does once warm (`settle_heap`); thawed at exit, so a test process collects them again
        return self.url

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=GRACE + 5)
        self.sock.close()
        gc.unfreeze()
