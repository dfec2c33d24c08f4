"""`palimpsest recall --hook`: the recall block a harness adds to the model's context.

Claude Code and Codex run it before every user turn (their `UserPromptSubmit` hook) with
the hook's JSON on stdin — `session_id`, `prompt`, `cwd`, `hook_event_name`, … It asks
the running server for the turn's recall block (`POST /api/memory/tool/memory_recall`,
the prompt as the query, the session's live tail left out since the harness shows that
conversation already) and prints it in the form both harnesses add to the model's
context: `{"hookSpecificOutput": {"hookEventName": …, "additionalContext": BLOCK}}`
(`--format text`: the bare block).

It must never get in the harness's way. The whole call is bounded by `--timeout` seconds;
when the input is not a hook's JSON, the prompt is empty, the server cannot be reached,
answers an error or answers too late, it prints nothing and exits 0. It asks the server
rather than opening the store because the server has the embedder loaded and the index
warm, and it imports only the standard library, `settings` and `records`, so that process
start — most of its cost — stays small (`cli/__init__.py` sends it here before building
the parser of every other command).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import urllib.request
from collections.abc import Sequence
from typing import Any

DEFAULT_BUDGET = 2000  # tokens: added to every turn, so smaller than an explicit recall's 4000
DEFAULT_TIMEOUT = 2.0  # seconds: the harness waits on this before the model sees the prompt
MAX_INPUT = 4 * 1024 * 1024


class _Late(Exception):
    """The time limit passed."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="palimpsest recall --hook", description="Answer a harness's prompt hook with the recall block.")
    p.add_argument("--hook", action="store_true", help="read the hook's JSON on stdin")
    p.add_argument("--home", help="home folder (default: PALIMPSEST_HOME or ~/.palimpsest)")
    p.add_argument("--store", help="ignored: the hook asks the server")
    p.add_argument("--url", help="server URL (default: PALIMPSEST_URL or http://127.0.0.1:8765)")
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help=f"token budget of the block (default {DEFAULT_BUDGET})")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help=f"seconds before answering nothing (default {DEFAULT_TIMEOUT})")
    p.add_argument("--format", choices=["json", "text"], default="json", help="hookSpecificOutput JSON (default) or the bare block")
    return p


def main(argv: Sequence[str]) -> int:
    args, _ = parser().parse_known_args([a for a in argv if a != "recall"])
    try:
        hook = json.loads(sys.stdin.buffer.read(MAX_INPUT) or b"null")
    except (ValueError, OSError):
        return 0
    if not isinstance(hook, dict):
        return 0
    try:
        block = _within(args.timeout, lambda: recall_block(hook, args))
    except Exception:  # noqa: BLE001 — anything at all: the harness gets nothing, not an error
        return 0
    if block:
        sys.stdout.write(render(hook, block, args.format))
    return 0


def recall_block(hook: dict[str, Any], args: argparse.Namespace) -> str:
    """The block for this hook's prompt, or "" when there is nothing to recall."""
    from ..records import session_id_of
    from ..settings import Settings

    prompt = hook.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return ""
    settings = Settings.load()
    body: dict[str, Any] = {"query": prompt, "budget": max(0, args.budget), "live_tail": 0}
    raw_session = hook.get("session_id") or hook.get("sessionId")
    if raw_session:
        body["session"] = session_id_of(raw_session)
    url = (args.url or settings.url).rstrip("/") + "/api/memory/tool/memory_recall"
    headers = {"Content-Type": "application/json"}
    if settings.token:
        headers["Authorization"] = f"Bearer {settings.token}"
    request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
    # no proxies: the server is ours (usually loopback), and a proxy would only add delay
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=args.timeout) as response:
        answer = json.loads(response.read())
    block = answer.get("result", {}).get("block") if isinstance(answer, dict) and answer.get("ok") else ""
    return block if isinstance(block, str) else ""


def render(hook: dict[str, Any], block: str, form: str) -> str:
    if form == "text":
        return block + "\n"
    event = hook.get("hook_event_name") if isinstance(hook.get("hook_event_name"), str) else "UserPromptSubmit"
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": block}}, ensure_ascii=False) + "\n"


def _within(seconds: float, work: Any) -> Any:
    """`work()`, abandoned after `seconds` (a wall-clock alarm: DNS and connect included)."""

    def late(*_: object) -> None:
        raise _Late()

    previous = signal.signal(signal.SIGALRM, late)
    signal.setitimer(signal.ITIMER_REAL, max(0.05, seconds))
    try:
        return work()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
