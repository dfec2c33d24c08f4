"""The recall hook's protocol: what `palimpsest recall --hook` prints for a harness's hook JSON.

Claude Code, Codex and qwen-code send `session_id`, `prompt`, `hook_event_name`, … and add
`{"hookSpecificOutput": {"hookEventName": …, "additionalContext": BLOCK}}` to the model's
context (`form` json); the OpenCode plugin takes the bare block (`form` text). The server
answers it (`POST /api/hook/recall`, `server/hook.py`) so the hook process, started before
every turn, only forwards its stdin and prints the answer: parsing JSON there cost it the
`json` and `re` imports. No prompt, or no block → "" (the harness gets nothing, not an error).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from ..errors import InvalidInput
from ..harness.common import repaired_fields
from ..harness.project import project_of
from ..ids import session_id_of

DEFAULT_BUDGET = 2000  # tokens: added to every turn, so smaller than an explicit recall's 4000
FORMS = ("json", "text")
# the hook events of a prompt: Claude Code's, Codex's and qwen-code's, and the OpenCode plugin's (`chat.message`)
PROMPT_EVENTS = ("UserPromptSubmit", "chat.message")


def answer(recall: Callable[..., Any], raw: bytes, budget: int = DEFAULT_BUDGET, form: str = "json",
           project: str | None = None) -> str:
    """The hook's output for the harness's JSON `raw`; `recall` is `Memory.recall`. The
    running session's live tail is left out: the harness shows that conversation already.
    `project`: the repository the client names for its `cwd` ("" for none); None when it names
    nothing (an older client), and the folder is read here."""
    if form not in FORMS:
        raise InvalidInput(f"format must be one of {', '.join(FORMS)}")
    if budget < 0:  # (`?budget=-5` answered 200 and nothing: a caller's mistake looked like an empty memory)
        raise InvalidInput(f"budget must be 0 or more tokens, got {budget}")
    try:
        hook = json.loads(raw or b"null")
    except (ValueError, RecursionError):  # the prompt goes through without a block, as for any JSON that is no hook's
        return ""
    if isinstance(hook, dict):  # its fields read as capture reads them: a lone surrogate ("Bad \ud800 Heizung warm") as U+FFFD
        hook = repaired_fields(hook)
    prompt = hook.get("prompt") if isinstance(hook, dict) else None
    if not isinstance(prompt, str) or not prompt.strip() or not _a_prompt_event(hook):
        return ""
    raw_session = hook.get("session_id") or hook.get("sessionId")
    # the repository the harness works in: another repository's decisions stay out of this one's block
    if project is None:
        project = _project(hook.get("cwd")) if isinstance(hook.get("cwd"), str) else None
    block = recall(session_id_of(raw_session) if raw_session else None, prompt, budget, live_tail=0, project=project or None,
                   harness_shows=True).block
    return render(hook.get("hook_event_name") or PROMPT_EVENTS[0], block, form) if block else ""


def _a_prompt_event(hook: dict[str, Any]) -> bool:
    """The hook is a prompt's (one of `PROMPT_EVENTS`, or no event named: an older harness). A block came back for
    `"hook_event_name": "FooBar"`, marked `hookEventName: "FooBar"`: an event whose output takes no context."""
    event = hook.get("hook_event_name")
    return event is None or event in PROMPT_EVENTS


_PROJECTS: dict[str, tuple[float, str | None]] = {}
PROJECT_TTL = 60.0  # seconds a folder's project is kept: a `git init` or a new remote is seen within a minute


def _project(cwd: str) -> str | None:
    """`project_of(cwd)`, asked of git at most once a minute per folder (the hook runs before every prompt)."""
    now = time.monotonic()
    known = _PROJECTS.get(cwd)
    if known is None or now - known[0] > PROJECT_TTL:
        if len(_PROJECTS) > 256:
            _PROJECTS.clear()
        known = _PROJECTS[cwd] = (now, project_of(cwd))
    return known[1]


def render(event: str, block: str, form: str) -> str:
    if form == "text":
        return block + "\n"
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": block}}, ensure_ascii=False) + "\n"
