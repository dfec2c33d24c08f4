"""Server commands: serve (HTTP API + MCP + background work), worker (jobs only), mcp (stdio), capture (hooks)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, PalimpsestError
from ..settings import Settings
from .common import add_command, emit, open_memory


def register(sub: Any) -> None:
    p = add_command(sub, "serve", serve, "Run Palimpsest's main job: the HTTP API, the MCP endpoint (/mcp), the indexer, "
                    "the workers and the instant-session sweep.", json_flag=False)
    p.add_argument("--host", help="address to bind (default: PALIMPSEST_HOST or 127.0.0.1; beyond loopback needs PALIMPSEST_TOKEN)")
    p.add_argument("--port", type=int, help="port (default: PALIMPSEST_PORT or 8765; 0 picks a free one)")
    p.add_argument("--interval", type=float, default=2.0, help="seconds between indexer passes")
    p.add_argument("--once", action="store_true", help="one indexer and sweep pass without HTTP, then exit")
    p.add_argument("--no-worker", action="store_true", help="run no job worker here (leave the jobs to `palimpsest worker` processes)")

    p = add_command(sub, "worker", worker, "Run the job worker alone (no HTTP, no indexer) until SIGINT/SIGTERM; "
                    "several share one queue (give them the servers' home: jobs journal their decisions there).", json_flag=False)
    p.add_argument("--task", action="append", help="only jobs of this task (repeatable)")

    p = add_command(sub, "mcp", mcp, "Serve the memory tools over MCP on stdin/stdout (for MCP clients that launch a command).",
                    json_flag=False)
    p.add_argument("--remote", action="store_true",
                   help="serve the tools of the server at PALIMPSEST_URL (with PALIMPSEST_TOKEN), not this home's memory: "
                        "an MCP client on another machine than the shared server (`setup --url` writes this)")

    p = add_command(sub, "capture", capture, "Read a harness hook's JSON on stdin (Claude Code, Codex, qwen-code, OpenCode) and post the "
                    "conversation's new events to the server; spool them when it is unreachable.")
    p.add_argument("payload", nargs="?", help="the hook's JSON as an argument (Codex `notify`); default: read stdin")
    p.add_argument("--url", help="server URL (default: PALIMPSEST_URL)")
    p.add_argument("--agent", help="agent name to record (default: detected, claude-code, codex or qwen-code); opencode reads OpenCode's database")
    p.add_argument("--replay", action="store_true", help="only replay spooled batches (no stdin)")
    p.add_argument("--requeue-dead", action="store_true", help="move rejected batches from dead/ back to the spool, then replay")


def _logging(level: int) -> None:
    """Log lines on stderr. psycopg's pool says each failed reconnection in several lines: a
    32-second PostgreSQL restart wrote 20–40 of them beside our one warning and one recovery
    line per outage (a shared server's user); its errors still show."""
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request, with the URL as given (a password in it too)


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.load(**{k: v for k, v in (("home", args.home), ("store", args.store)) if v})


def serve(args: argparse.Namespace) -> None:
    from ..server.run import check_bind
    from ..server.run import serve as run_server
    from ..service import run_background

    _logging(logging.INFO)
    settings = _settings(args)
    host = args.host or settings.host
    port = settings.port if args.port is None else args.port
    check_bind(host, settings.token)
    with _waiting_for_the_store(args, settings) as memory:
        if args.once:
            import threading

            run_background(memory, threading.Event(), args.interval, once=True, worker=not args.no_worker)
            return
        run_server(memory, host, port, interval=args.interval, worker=not args.no_worker)


def worker(args: argparse.Namespace) -> None:
    import signal
    import threading

    from ..service import run_worker

    _logging(logging.INFO)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with _waiting_for_the_store(args, _settings(args), stop) as memory:
        run_worker(memory, stop, args.task)


def _waiting_for_the_store(args: argparse.Namespace, settings: Settings, stop: Any = None) -> Any:
    """`open_memory`, retried while the store does not answer, for `store_wait` seconds: a server or worker started
    before its PostgreSQL (at boot) had exited 6 after five tries in 5 s, while one already running rides out an outage."""
    import time

    from ..errors import SchemaTooNew, StoreCorrupt, StoreRefused, StoreUnavailable

    deadline, said = time.monotonic() + float(settings.store_wait), False
    while True:
        try:
            return open_memory(args, serving=True)
        except (StoreCorrupt, SchemaTooNew, StoreRefused):  # (a wrong password had been retried for 300 s)
            raise
        except StoreUnavailable as exc:
            if time.monotonic() >= deadline or (stop is not None and stop.is_set()):
                raise
            if not said:
                print(f"palimpsest: the store does not answer yet ({exc}); waiting for it, up to {float(settings.store_wait):g} s "
                      "(PALIMPSEST_STORE_WAIT)", file=sys.stderr, flush=True)
                said = True
            time.sleep(2.0)


def mcp(args: argparse.Namespace) -> None:
    import threading

    import anyio

    from ..server.mcp import run_stdio

    _logging(logging.WARNING)  # (on stderr: stdout carries the protocol)
    from ..service import COMPACT_SECONDS, compact_index, run_background
    from .common import server_answers

    if args.remote:
        from ..server.mcp import Remote, run_remote_stdio

        settings = Settings.load()
        timeout = float(settings.request_timeout) + 5 if settings.request_timeout else None
        remote = Remote(settings.url, settings.token or None, timeout)
        try:
            anyio.run(run_remote_stdio, remote, settings)
        finally:
            remote.close()
        return

    with open_memory(args) as memory:
        memory.catch_up()
        compact_index(memory, 4 * COMPACT_SECONDS)  # (no idle passes here: a little at each start)
        stop = threading.Event()
        background = None
        if not server_answers(memory.settings.url, memory.store_fingerprint):
            # no server of this store to run the derived work: this process runs it while the client is connected (an MCP
            # client's writes were never embedded, distilled or described without one: a new user's)
            background = threading.Thread(target=run_background, args=(memory, stop), name="palimpsest-background", daemon=True)
            background.start()
        try:
            anyio.run(run_stdio, memory, bool(memory.settings.enable_write))
        finally:
            stop.set()
            if background is not None:
                background.join(timeout=30)  # the job in hand finishes before the store closes


def capture(args: argparse.Namespace) -> int:
    """Exit 0 when the batch was stored or spooled while the server is away; 1 when the hook's
    input was unusable or the server refused the batch (writes off, a token: spooled; rejected: set
    aside in dead/), with the reason and the fix on stderr, which the harness shows for 1.

    Never 2: Claude Code reads exit code 2 from a hook as "block this prompt / tool call",
    and a memory hook must never block its harness, so errors are reported here, not by
    the CLI's usual translation."""
    try:
        return _capture(args)
    except PalimpsestError as exc:
        sys.stderr.write(json.dumps({"ok": False, "error": exc.to_dict()}) + "\n" if args.json else f"palimpsest capture: {exc}\n")
        return 1


def _capture(args: argparse.Namespace) -> int:
    from ..capture import CaptureClient, Report, Spool, capture_hook

    settings = _settings(args)
    home = settings.home_path
    if args.requeue_dead:
        Spool(home).requeue_dead()
    url = args.url
    if url is None and (args.replay or args.requeue_dead) and "PALIMPSEST_URL" not in os.environ:
        from ..capture.setup import hooks_url

        # the spool holds what the hooks captured: it goes where they send it (to the default port, it had gone to whoever
        # listened there)
        url = hooks_url(dict(os.environ))
    client = CaptureClient(url or settings.url, home, token=settings.token, timeout=settings.capture_timeout, zone=settings.zone)
    try:
        if args.replay or args.requeue_dead:
            report = Report()
            client.replay(report)
        else:
            text = args.payload if args.payload is not None else sys.stdin.read()
            try:
                hook = json.loads(text)
            except ValueError as exc:
                raise InvalidInput(f"stdin is not the hook's JSON: {exc}") from None
            report = capture_hook(hook, client, home, agent=args.agent, codex_home=Path(settings.codex_home).expanduser(),
                                  env=dict(os.environ))  # (where OpenCode keeps its database: XDG_DATA_HOME)
    finally:
        client.close()
    result = {**report.to_dict(), "pending": client.spool.pending()}
    emit(args, result, _human)
    if report.refused or report.dead:  # kept, but nothing fixes this by itself: 1 makes the harness show stderr
        if args.json:  # (the human form printed the notes already)
            for err in dict.fromkeys(report.errors):
                print(f"palimpsest capture: {err}", file=sys.stderr)
        return 1
    return 0  # stored, or spooled while the server is away: replayed at the next capture


def _human(r: dict[str, Any]) -> None:
    print(f"stored {r['stored']}, duplicates {r['duplicates']}, replayed {r['replayed']}, spooled {r['spooled']}, "
          f"dead {r['dead']}, pending {r['pending']}", file=sys.stderr)
    for name in r["corrupt"]:
        print(f"corrupt spool file set aside: {name}", file=sys.stderr)
    for err in dict.fromkeys(r["errors"]):
        print(f"note: {err}", file=sys.stderr)
