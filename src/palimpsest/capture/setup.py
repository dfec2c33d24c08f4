"""`palimpsest setup`: plug Palimpsest into a harness by writing the harness's own configuration.

For each harness the plan names the files it changes and what goes in them (all commands
with absolute paths, since a harness does not run in the shell that installed Palimpsest):

- **claude-code** — `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json`): a
  `UserPromptSubmit` hook running `palimpsest recall --hook` (the recall block reaches the
  model before every user turn) and a `Stop` hook running `palimpsest capture` (the turn,
  tool calls and outputs included, is captured when it ends); `~/.claude.json`
  (`$CLAUDE_CONFIG_DIR/.claude.json`): the `palimpsest` entry of `mcpServers`.
- **codex** — `~/.codex/hooks.json` (`$CODEX_HOME`): the same two hooks (Codex's hooks take
  Claude Code's shape); `~/.codex/config.toml`: a marked block with `[mcp_servers.palimpsest]`
  and, when the file has no `[features]` table, `codex_hooks = true` (older Codex versions
  run hooks only with it).
- **qwen-code** — `~/.qwen/settings.json` (`$QWEN_HOME`): the same two hooks (qwen-code's hooks
  take Claude Code's shape, with timeouts in milliseconds) and the `palimpsest` entry of its
  `mcpServers`, in the one file.
- **opencode** — `~/.config/opencode/` (`$XDG_CONFIG_HOME/opencode`): the plugin file
  `plugin/palimpsest.js` (recall into the system prompt of each turn, capture when a turn
  ends) and the `palimpsest` entry of `mcp` in `opencode.json` (see `capture/opencode_setup.py`).
- **mcp-client** — any other MCP client: the `palimpsest` entry of `mcpServers` in the JSON
  file given with `--file`. Such a client has no hook before each turn: nothing can inject
  the recall block, so the plan's notes give the instructions that tell the model to call
  `memory_recall` first.

Every change keeps the user's other settings, is idempotent (a second run finds its
entries in place and writes nothing), and backs the file up beside it first
(`<file>.before-palimpsest`). What was written is recorded under `<home>/setup/`;
`undo` restores the backup byte for byte when the file is still exactly as setup left it,
and otherwise removes only Palimpsest's entries, keeping what changed since.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import shlex
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..settings import loopback, private_home
from . import opencode_setup

HARNESSES = ("claude-code", "codex", "qwen-code", "opencode", "mcp-client")
RECALL_TIMEOUT = 10  # seconds the harness allows the recall hook
# the hook's own bound, written on its command line: a second under the harness's, so the hook answers nothing before
# the harness kills it. Without it the hook gave up at its default 2 s while Codex would have waited 10: an SRE's hook
# returned nothing on 2 of 5 turns while the server embedded an import's backlog
HOOK_TIMEOUT = RECALL_TIMEOUT - 1
CAPTURE_TIMEOUT = 60
BACKUP_SUFFIX = ".before-palimpsest"
BLOCK_START = "# >>> palimpsest: written by `palimpsest setup codex`; `palimpsest setup codex --undo` removes it"
BLOCK_END = "# <<< palimpsest"
OURS = re.compile(r"palimpsest\S*[\"']?(?:\s+--home\s+\S+)?\s+(?:capture|recall\s+--hook)\b")
MCP_INSTRUCTIONS = (
    "This client runs no command before each turn, so Palimpsest cannot put the recall block in front of the model "
    "by itself. Add to the model's instructions (system prompt, rules or custom instructions): \"Before answering "
    "each user message, call the memory_recall tool with the message as the query and use what it returns; "
    "search older conversations with memory_search.\""
)


@dataclass
class Command:
    """How the harness starts Palimpsest: the binary and the options every command gets."""

    binary: str
    home: str | None = None
    url: str | None = None

    def argv(self, *words: str, url: bool = False) -> list[str]:
        head = [self.binary, *(["--home", self.home] if self.home else [])]
        return [*head, *words, *(["--url", self.url] if url and self.url else [])]

    def line(self, *words: str, url: bool = False) -> str:
        return shlex.join(self.argv(*words, url=url))

    def mcp_argv(self) -> list[str]:
        """`palimpsest mcp`, with `--remote` for a server on another machine (a host not loopback): its tools then
        read and write that server's memory (they had served this machine's empty home)."""
        return self.argv("mcp", *(["--remote"] if self.url and not loopback(self.url) else []))


@dataclass
class Change:
    """One file: its bytes before (None: absent) and after."""

    path: Path
    before: bytes | None
    after: bytes

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        old = (self.before or b"").decode("utf-8", "replace").splitlines(keepends=True)
        new = self.after.decode("utf-8", "replace").splitlines(keepends=True)
        return "".join(difflib.unified_diff(old, new, f"{self.path} (before)", f"{self.path} (after)"))


@dataclass
class Plan:
    harness: str
    changes: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"harness": self.harness, "notes": self.notes,
                "files": [{"path": str(c.path), "changed": c.changed, "existed": c.before is not None} for c in self.changes]}


# -- where each harness keeps its configuration ------------------------------------
def claude_dir(env: dict[str, str]) -> Path:
    return Path(env["CLAUDE_CONFIG_DIR"]).expanduser() if env.get("CLAUDE_CONFIG_DIR") else Path(env.get("HOME") or "~").expanduser() / ".claude"


def claude_state_file(env: dict[str, str]) -> Path:
    """Claude Code keeps user-scoped MCP servers in `~/.claude.json` (inside CLAUDE_CONFIG_DIR when set)."""
    if env.get("CLAUDE_CONFIG_DIR"):
        return Path(env["CLAUDE_CONFIG_DIR"]).expanduser() / ".claude.json"
    return Path(env.get("HOME") or "~").expanduser() / ".claude.json"


def codex_dir(env: dict[str, str]) -> Path:
    return Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else Path(env.get("HOME") or "~").expanduser() / ".codex"


def qwen_dir(env: dict[str, str]) -> Path:
    return Path(env["QWEN_HOME"]).expanduser() if env.get("QWEN_HOME") else Path(env.get("HOME") or "~").expanduser() / ".qwen"


def harness_dirs(env: dict[str, str]) -> dict[str, Path]:
    """The folder each hooked harness keeps its configuration in (for `doctor`)."""
    return {"claude-code": claude_dir(env), "codex": codex_dir(env), "qwen-code": qwen_dir(env),
            "opencode": opencode_setup.config_dir(env)}


def files_of(harness: str, env: dict[str, str], file: str | None = None) -> list[Path]:
    """The files `setup HARNESS` may change."""
    if harness == "claude-code":
        return [claude_dir(env) / "settings.json", claude_state_file(env)]
    if harness == "codex":
        return [codex_dir(env) / "hooks.json", codex_dir(env) / "config.toml"]
    if harness == "qwen-code":
        return [qwen_dir(env) / "settings.json"]
    if harness == "opencode":
        return opencode_setup.files(env)
    return [Path(file).expanduser()] if file else []


# -- planning ------------------------------------------------------------------------
def plan(harness: str, command: Command, env: dict[str, str], file: str | None = None) -> Plan:
    """What `setup HARNESS` would write (nothing is written here)."""
    if harness not in HARNESSES:
        raise InvalidInput(f"unknown harness {harness!r}: use one of {', '.join(HARNESSES)}")
    result = Plan(harness)
    if harness == "claude-code":
        settings, state = files_of(harness, env)
        result.changes.append(_json_change(settings, lambda doc: _add_hooks(doc, command, sessions=True)))
        result.changes.append(_json_change(state, lambda doc: _add_mcp(doc, command, stdio_type=True, agent="claude-code")))
    elif harness == "codex":
        hooks, config = files_of(harness, env)
        result.changes.append(_json_change(hooks, lambda doc: _add_hooks(doc, command)))
        result.changes.append(_toml_change(config, command, result.notes))
    elif harness == "qwen-code":
        (settings,) = files_of(harness, env)

        def hooks_and_mcp(doc: dict[str, Any]) -> None:  # (one file holds both)
            _add_hooks(doc, command, unit=1000, agent="qwen-code")
            _add_mcp(doc, command, agent="qwen-code")

        result.changes.append(_json_change(settings, hooks_and_mcp))
    elif harness == "opencode":
        plugin, config = files_of(harness, env)
        recall, capture = command.argv(*recall_words(), "--format", "text", url=True), command.argv("capture", "--agent", "opencode", url=True)
        result.changes.append(Change(plugin, _read(plugin), opencode_setup.plugin_text(recall, capture, RECALL_TIMEOUT)))
        result.changes.append(_json_change(config, lambda doc: opencode_setup.add_mcp(doc, command.mcp_argv(), _url_env(command))))
        result.notes.append(opencode_setup.FALLBACK)
    else:
        if not file:
            result.notes.append("no --file given: add this entry to the client's MCP configuration (its `mcpServers`): "
                                + json.dumps({"palimpsest": _mcp_entry(command)}))
        else:
            result.changes.append(_json_change(Path(file).expanduser(), lambda doc: _add_mcp(doc, command)))
        result.notes.append(MCP_INSTRUCTIONS)
    return result


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _load_json(path: Path, raw: bytes | None) -> dict[str, Any]:
    if raw is None or not raw.strip():
        return {}
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise InvalidInput(f"{path}: not valid JSON ({exc}); fix or move it, then run setup again") from None
    if not isinstance(doc, dict):
        raise InvalidInput(f"{path}: expected a JSON object")
    return doc


def _dump_json(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _json_change(path: Path, edit: Callable[[dict[str, Any]], None]) -> Change:
    before = _read(path)
    doc = _load_json(path, before)
    original = json.dumps(doc, sort_keys=True)
    edit(doc)
    unchanged = before is not None and json.dumps(doc, sort_keys=True) == original
    return Change(path, before, before if unchanged and before is not None else _dump_json(doc))


def recall_words() -> tuple[str, ...]:
    """The recall hook's words on every harness's command line, its own bound among them."""
    return ("recall", "--hook", "--timeout", str(HOOK_TIMEOUT))


def _hook(command: str, timeout: int) -> dict[str, Any]:
    return {"type": "command", "command": command, "timeout": timeout}


# Claude Code's events past a turn's end that capture reads the transcript at: a session ended (`/exit`, or closed after
# an interrupt, when no `Stop` fires: the turn's last words had never been captured) and a compaction done (its boundary
# captured before the next prompt's recall, which had still counted the compacted turns as in the model's context)
SESSION_HOOKS = {"SessionEnd": None, "SessionStart": "compact"}


def _add_hooks(doc: dict[str, Any], command: Command, unit: int = 1, agent: str | None = None, sessions: bool = False) -> None:
    """Our `UserPromptSubmit` recall hook and `Stop` capture hook (with `sessions`, capture on
    `SESSION_HOOKS` too), replacing older ones of ours; timeouts in seconds × `unit` (qwen-code
    counts milliseconds); `agent` named on the capture line when the hook's JSON alone would not tell it."""
    capture = _hook(command.line(*(("capture", "--agent", agent) if agent else ("capture",)), url=True), CAPTURE_TIMEOUT * unit)
    wanted: dict[str, tuple[dict[str, Any], str | None]] = {
        "UserPromptSubmit": (_hook(command.line(*recall_words(), url=True), RECALL_TIMEOUT * unit), None),
        "Stop": (capture, None), **({event: (capture, matcher) for event, matcher in SESSION_HOOKS.items()} if sessions else {})}
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput("its `hooks` is not an object; fix it, then run setup again")
    for event, (entry, matcher) in wanted.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"its `hooks.{event}` is not a list; fix it, then run setup again")
        group = {**({"matcher": matcher} if matcher else {}), "hooks": [entry]}
        if any(isinstance(g, dict) and g.get("hooks") == [entry] and g.get("matcher") == matcher for g in groups):
            continue  # already in place: idempotent
        _drop_ours(groups)
        groups.append(group)


def _drop_ours(groups: list[Any]) -> None:
    """Remove our hook entries from a list of matcher groups (and groups left empty)."""
    for g in list(groups):
        if isinstance(g, dict) and isinstance(g.get("hooks"), list):
            g["hooks"] = [h for h in g["hooks"] if not (isinstance(h, dict) and OURS.search(str(h.get("command", ""))))]
            if not g["hooks"]:
                groups.remove(g)


def _mcp_entry(command: Command, stdio_type: bool = False, agent: str | None = None) -> dict[str, Any]:
    """The MCP server entry; with `agent`, its writes name the harness (`PALIMPSEST_AGENT`)."""
    argv = command.mcp_argv()
    env = {**({"PALIMPSEST_AGENT": agent} if agent else {}), **_url_env(command)}
    return {**({"type": "stdio"} if stdio_type else {}), "command": argv[0], "args": argv[1:], **({"env": env} if env else {})}


def _url_env(command: Command) -> dict[str, str]:
    """The server setup was told of, for `palimpsest mcp` (which has no --url): without it the MCP process asked the
    default port, found no server of its store there and ran a second worker of its own (1.2 GB, jobs left running)."""
    return {"PALIMPSEST_URL": command.url} if command.url else {}


def _add_mcp(doc: dict[str, Any], command: Command, stdio_type: bool = False, agent: str | None = None) -> None:
    servers = doc.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidInput("its `mcpServers` is not an object; fix it, then run setup again")
    servers["palimpsest"] = _mcp_entry(command, stdio_type, agent)


def _toml_block(command: Command, features: bool) -> str:
    argv = command.mcp_argv()
    lines = [BLOCK_START, "[mcp_servers.palimpsest]", f"command = {json.dumps(argv[0])}",
             f"args = [{', '.join(json.dumps(a) for a in argv[1:])}]",
             "env = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in {"PALIMPSEST_AGENT": "codex", **_url_env(command)}.items()) + " }"]
    if features:
        lines += ["", "[features]", "codex_hooks = true"]
    return "\n".join([*lines, BLOCK_END]) + "\n"


def _toml_change(path: Path, command: Command, notes: list[str]) -> Change:
    before = _read(path)
    text = _strip_block((before or b"").decode("utf-8"))
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{path}: not valid TOML ({exc}); fix it, then run setup again") from None
    if "palimpsest" in (config.get("mcp_servers") or {}):
        notes.append(f"{path} already has [mcp_servers.palimpsest] of its own: left as it is")
        return Change(path, before, (before or b""))
    features = config.get("features")
    if isinstance(features, dict):
        off = [k for k in ("codex_hooks", "hooks") if features.get(k) is False]
        if off:
            notes.append(f"{path} turns hooks off in [features] ({', '.join(f'{k} = false' for k in off)}): set "
                         f"{' and '.join(f'{k} = true' for k in off)} there, or recall and capture will not run")
        elif "codex_hooks" not in features:
            notes.append(f"{path} has a [features] table without codex_hooks: add codex_hooks = true to it (older Codex "
                         "versions run hooks only with it)")
    if text and not text.endswith("\n"):
        text += "\n"
    after = text + ("\n" if text.strip() else "") + _toml_block(command, features=not isinstance(features, dict))
    return Change(path, before, after.encode("utf-8"))


def _strip_block(text: str) -> str:
    """The TOML text without our marked block (and the blank line setup put before it)."""
    pattern = re.compile(r"\n?" + re.escape(BLOCK_START) + r".*?" + re.escape(BLOCK_END) + r"\n?", re.DOTALL)
    return pattern.sub("", text)


# -- applying and undoing ----------------------------------------------------------------
def _sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _state_path(home: Path, harness: str) -> Path:
    return home / "setup" / f"{harness}.json"


def _load_state(home: Path, harness: str) -> dict[str, Any]:
    try:
        state = json.loads(_state_path(home, harness).read_text(encoding="utf-8"))
        return state if isinstance(state, dict) else {}
    except (OSError, ValueError):
        return {}


def _write(path: Path, data: bytes, like: Path | None = None) -> None:
    """Write `path` whole (through a temporary file), with the mode of the file it replaces, or of `like`: the
    backup of a private `~/.claude.json` (its MCP servers' tokens) had been made readable by every account."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.palimpsest-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    model = like if like is not None and like.exists() else path
    if model.exists():  # (a new file stays 0600: the harness reads it as its owner)
        os.chmod(tmp, model.stat().st_mode & 0o777)
    os.replace(tmp, path)


def apply(p: Plan, home: Path) -> list[str]:
    """Write the plan's changed files (each backed up first); what was written is recorded."""
    state = _load_state(home, p.harness)
    files = state.setdefault("files", {})
    written = []
    for c in p.changes:
        if not c.changed:
            continue
        record = files.get(str(c.path))
        if record is None:  # the first change: keep the original
            backup = c.path.with_name(c.path.name + BACKUP_SUFFIX)
            if c.before is not None:
                _write(backup, c.before, like=c.path)
            record = {"existed": c.before is not None, "backup": str(backup) if c.before is not None else None,
                      "made_dirs": [str(d) for d in _missing_dirs(c.path.parent)]}
        _write(c.path, c.after)
        record["written"] = _sha(c.after)
        files[str(c.path)] = record
        written.append(str(c.path))
    if written:
        private_home(home)  # created 0700, as every command creates it (it had been made 0755 here)
        _write(_state_path(home, p.harness), json.dumps(state, indent=2).encode("utf-8"))
    return written


def _missing_dirs(folder: Path) -> list[Path]:
    """The folders `_write` will create for a file in `folder`, deepest first."""
    made = []
    while not folder.exists() and folder != folder.parent:
        made.append(folder)
        folder = folder.parent
    return made


def _remove_empty(folders: list[str]) -> None:
    """Remove the folders setup created, deepest first, while they are empty (a file the
    user put there since keeps its folder)."""
    for folder in folders:
        try:
            Path(folder).rmdir()
        except OSError:
            return


def undo(harness: str, home: Path, env: dict[str, str], file: str | None = None) -> list[dict[str, str]]:
    """Take setup's changes back: the backup byte for byte when the file is as setup left it,
    else only Palimpsest's entries removed."""
    if harness not in HARNESSES:
        raise InvalidInput(f"unknown harness {harness!r}: use one of {', '.join(HARNESSES)}")
    state = _load_state(home, harness).get("files", {})
    done = []
    for path in files_of(harness, env, file) or [Path(p) for p in state]:
        current = _read(path)
        record = state.get(str(path))
        if record and _sha(current) == record.get("written"):
            if record.get("existed") and record.get("backup"):
                _write(path, Path(record["backup"]).read_bytes())
                Path(record["backup"]).unlink(missing_ok=True)
                done.append({"path": str(path), "action": "restored"})
            else:
                path.unlink(missing_ok=True)
                _remove_empty(record.get("made_dirs", []))
                done.append({"path": str(path), "action": "removed (setup created it)"})
        elif opencode_setup.ours(current):  # our plugin, changed since: nothing in it is the user's
            path.unlink()
            done.append({"path": str(path), "action": "removed (palimpsest's plugin)"})
        elif current is not None:
            cleaned = _without_ours(path, current)
            if cleaned != current:
                _write(path, cleaned)
                done.append({"path": str(path), "action": "palimpsest's entries removed (the file changed since setup)"})
    _state_path(home, harness).unlink(missing_ok=True)
    return done


def _without_ours(path: Path, current: bytes) -> bytes:
    if path.suffix == ".toml":
        return _strip_block(current.decode("utf-8")).encode("utf-8")
    doc = _load_json(path, current)
    hooks = doc.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            if isinstance(hooks[event], list):
                _drop_ours(hooks[event])
                if not hooks[event]:
                    del hooks[event]
        if not hooks:
            del doc["hooks"]
    for key in ("mcpServers", "mcp"):  # (OpenCode's is `mcp`)
        servers = doc.get(key)
        if isinstance(servers, dict) and "palimpsest" in servers:
            del servers["palimpsest"]
    return _dump_json(doc)


def installed(harness: str, env: dict[str, str]) -> dict[str, list[str]]:
    """The commands of our hooks found in a harness's configuration, by event (for `doctor`); none
    for a harness without a file of its own (an MCP client)."""
    files = files_of(harness, env)
    if not files:
        return {}
    path = files[0]
    if harness == "opencode":
        return opencode_setup.installed(path)
    try:
        doc = _load_json(path, _read(path))
    except InvalidInput:
        return {}
    found: dict[str, list[str]] = {}
    for event, groups in (doc.get("hooks") or {}).items() if isinstance(doc.get("hooks"), dict) else []:
        for g in groups if isinstance(groups, list) else []:
            for h in g.get("hooks", []) if isinstance(g, dict) else []:
                if isinstance(h, dict) and OURS.search(str(h.get("command", ""))):
                    found.setdefault(event, []).append(str(h["command"]))
    return found


def installed_flag(harness: str, env: dict[str, str], flag: str) -> set[str]:
    """The values of `flag` (`--url`, `--home`) the installed hooks of `harness` name."""
    values: set[str] = set()
    for commands in installed(harness, env).values():
        for command in commands:
            try:
                words = shlex.split(command)
            except ValueError:
                continue
            values.update(words[i + 1] for i, w in enumerate(words[:-1]) if w == flag)
    return values


def hooks_urls(env: dict[str, str]) -> set[str]:
    """Every server URL the installed hooks of this machine's harnesses name (`--url`)."""
    return {url for harness, folder in harness_dirs(env).items() if folder.is_dir() for url in installed_flag(harness, env, "--url")}


def hooks_url(env: dict[str, str]) -> str | None:
    """The server this machine's hooks capture to, when `setup … --url` named one (and they all name the same): a
    harness does not run in the user's shell, so the hooks hold the URL and PALIMPSEST_URL is often not exported."""
    urls = hooks_urls(env)
    return urls.pop() if len(urls) == 1 else None
