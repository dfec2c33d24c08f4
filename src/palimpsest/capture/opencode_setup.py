"""`palimpsest setup opencode`: a plugin file and the MCP entry in OpenCode's configuration.

OpenCode runs no shell hooks; it loads JavaScript plugins from `plugin/*.{js,ts}` of its
configuration folder (`$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`) and calls
their hooks in its own process. Setup writes two files there:

- `plugin/palimpsest.js` (from `data/opencode-plugin.js`, the command lines filled in with
  absolute paths): `chat.message` runs `palimpsest recall --hook --format text` with the
  user's prompt, and `experimental.chat.system.transform` adds the block to that turn's
  system prompt; the `session.idle` event runs `palimpsest capture --agent opencode`,
  which reads the turn from OpenCode's database (`capture/opencode.py`). One export, a
  function (`PalimpsestPlugin`), the form every OpenCode 1.x loader accepts.
- `opencode.json`: the `palimpsest` entry of its `mcp` section (`type: local`, the command
  as a list, `environment` naming the agent), which OpenCode merges with `opencode.jsonc`.

The system-prompt hook is marked experimental in `@opencode-ai/plugin` (checked against
1.18.33); an OpenCode without it runs the plugin's other hooks and gets no block, so the
plan's notes tell the model to call `memory_recall` first, through the MCP entry.
"""

from __future__ import annotations

import json
import re
import shlex
from importlib import resources
from pathlib import Path
from typing import Any

PLUGIN = "palimpsest.js"
MARK = "written by `palimpsest setup opencode`"  # the plugin's first line says so; undo and doctor look for it
FALLBACK = ("OpenCode adds the recall block through its experimental `experimental.chat.system.transform` plugin hook. "
            "If your OpenCode has no such hook (doctor cannot tell), the plugin still captures every turn but recall "
            "reaches the model only through the MCP tool: add to its instructions (AGENTS.md): \"Before answering each "
            "user message, call the memory_recall tool with the message as the query.\"")
_ARGV = re.compile(r"^const (RECALL|CAPTURE) = (\[.*\])$", re.MULTILINE)


def config_dir(env: dict[str, str]) -> Path:
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or "~").expanduser() / ".config")
    return Path(base).expanduser() / "opencode"


def files(env: dict[str, str]) -> list[Path]:
    """The plugin file first (doctor reads it), then the configuration."""
    return [config_dir(env) / "plugin" / PLUGIN, config_dir(env) / "opencode.json"]


def plugin_text(recall: list[str], capture: list[str], recall_wait: int) -> bytes:
    """The plugin with its two command lines (JSON arrays are JavaScript array literals) and how many seconds it waits
    for recall (setup's `RECALL_TIMEOUT`, as the other harnesses are told)."""
    template = resources.files("palimpsest").joinpath("data/opencode-plugin.js").read_text(encoding="utf-8")
    return (template.replace("__RECALL__", json.dumps(recall), 1).replace("__CAPTURE__", json.dumps(capture), 1)
            .replace("__RECALL_WAIT_MS__", str(recall_wait * 1000), 1).encode("utf-8"))


def mcp_entry(argv: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    return {"type": "local", "command": argv, "environment": {"PALIMPSEST_AGENT": "opencode", **(env or {})}, "enabled": True}


def add_mcp(doc: dict[str, Any], argv: list[str], env: dict[str, str] | None = None) -> None:
    from ..errors import InvalidInput

    servers = doc.setdefault("mcp", {})
    if not isinstance(servers, dict):
        raise InvalidInput("its `mcp` is not an object; fix it, then run setup again")
    servers["palimpsest"] = mcp_entry(argv, env)


def ours(data: bytes | None) -> bool:
    return data is not None and MARK.encode() in data.split(b"\n", 1)[0]


def installed(path: Path) -> dict[str, list[str]]:
    """The plugin's command lines, by the hook events `doctor` knows them as."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    if MARK not in text.split("\n", 1)[0]:
        return {}
    event = {"RECALL": "UserPromptSubmit", "CAPTURE": "Stop"}
    found: dict[str, list[str]] = {}
    for name, argv in _ARGV.findall(text):
        try:
            words = json.loads(argv)
        except ValueError:
            continue
        if isinstance(words, list) and words and all(isinstance(w, str) for w in words):
            found[event[name]] = [shlex.join(words)]
    return found
