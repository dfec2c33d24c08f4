"""`palimpsest setup claude-code | codex | qwen-code | opencode | mcp-client` (`--print`, `--undo`): plug Palimpsest
into a harness (see `capture/setup.py` for the files and what goes in them)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from .common import add_command, emit


def register(sub: Any) -> None:
    p = add_command(sub, "setup", setup, "Write a harness's configuration so that it recalls before every turn, captures "
                    "every turn and offers the MCP tools (absolute paths; backed up; idempotent).")
    p.add_argument("harness", choices=["claude-code", "codex", "qwen-code", "opencode", "mcp-client"], help="the harness to configure")
    p.add_argument("--print", dest="dry_run", action="store_true", help="show the changes without writing them")
    p.add_argument("--undo", action="store_true", help="take back what setup wrote (the backup byte for byte when unchanged since)")
    p.add_argument("--file", help="mcp-client: the client's JSON configuration file holding `mcpServers`")
    p.add_argument("--url", help="server URL the hooks use (default: the PALIMPSEST_URL they find, else http://127.0.0.1:8765)")
    p.add_argument("--binary", help="the palimpsest command to write (default: this one, by absolute path)")


def binary() -> str:
    """This `palimpsest` command, by absolute path (a harness does not run in this shell)."""
    me = Path(sys.argv[0])
    if me.name == "palimpsest" and me.is_file():
        return str(me.absolute())
    found = shutil.which("palimpsest")
    return str(Path(found).absolute()) if found else f"{sys.executable} -m palimpsest"


def _installed(harness: str, env: dict[str, str], flag: str) -> str | None:
    """The value of `flag` the installed hooks of `harness` name, when they all name one."""
    from ..capture import setup as harness_setup

    values = harness_setup.installed_flag(harness, env, flag)
    return values.pop() if len(values) == 1 else None


def setup(args: argparse.Namespace) -> None:
    from ..capture import setup as harness_setup
    from ..settings import Settings

    env = dict(os.environ)
    home = Settings.load(**({"home": args.home} if args.home else {})).home_path
    if args.undo:
        done = harness_setup.undo(args.harness, home, env, args.file)
        emit(args, {"harness": args.harness, "undone": done},
             lambda r: print("\n".join(f"{d['path']}: {d['action']}" for d in r["undone"]) or "nothing of palimpsest's to take back"))
        return
    # the server and home of this setup: given, exported, or — run again — the ones the installed hooks name (a plain
    # rerun, as doctor's fix for a moved binary says, had pointed the hooks back at 8765 and the MCP entry at ~/.palimpsest)
    url = args.url or env.get("PALIMPSEST_URL") or _installed(args.harness, env, "--url")
    home_given = args.home or env.get("PALIMPSEST_HOME") or _installed(args.harness, env, "--home")
    if url is not None and not url.startswith(("http://", "https://")):  # ("127.0.0.1:8765" read as another machine)
        raise InvalidInput(f"--url must start with http:// or https://, got {url[:80]!r}")
    command = harness_setup.Command(args.binary or binary(), str(Path(home_given).expanduser().resolve()) if home_given else None, url)
    plan = harness_setup.plan(args.harness, command, env, args.file)
    written = [] if args.dry_run else harness_setup.apply(plan, home)
    result = {**plan.to_dict(), "written": written, "dry_run": args.dry_run}
    if args.dry_run and args.json:
        result["diffs"] = {str(c.path): c.diff() for c in plan.changes if c.changed}

    def human(r: dict[str, Any]) -> None:
        for c in plan.changes:
            if args.dry_run and c.changed:
                print(c.diff())
            state = "would change" if args.dry_run and c.changed else "written" if str(c.path) in written else "already set up"
            print(f"{c.path}: {state}")
        for note in r["notes"]:
            print(f"note: {note}")
        if written:
            backed = any(Path(f"{w}.before-palimpsest").exists() for w in written)  # (a file made new has nothing to back up)
            print(("backups beside the files that were there (*.before-palimpsest); " if backed else "")
                  + f"`palimpsest setup {args.harness} --undo` takes it back. Check with `palimpsest doctor`.")

    emit(args, result, human)
