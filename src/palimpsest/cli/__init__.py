"""The `palimpsest` command: one module per command group, each a thin adapter.

Every command parses its arguments, calls one library method and prints the result —
as a table/text for people, or with `--json` as one JSON document on stdout. Errors are
translated here, in one place: a message (JSON on stderr with `--json`) and the exit
code of the error class (see `errors.py`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..errors import LLMError, PalimpsestError

TYPE_CHECKING = False  # (the recall hook comes through here: neither `typing` nor `argparse` for it)
if TYPE_CHECKING:
    import argparse


# commands a harness waits on after every turn, parsed with their own group's commands only: the
# parser of every command imports numpy, httpx and the store (0.3 s of a Stop hook's 0.4 s)
HOOK_COMMANDS = {"capture": "server"}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or (`only`: a module of `HOOK_COMMANDS`) of one group's."""
    from .. import __version__
    from .common import Parser

    parser = Parser(prog="palimpsest", description="Long-term memory for LLM agents.")
    parser.add_argument("--version", action="version", version=f"palimpsest {__version__}")
    parser.add_argument("--home", help="home folder (default: PALIMPSEST_HOME or ~/.palimpsest)")
    parser.add_argument("--store", help="store URL (default: PALIMPSEST_STORE or sqlite:///<home>/palimpsest.db)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    if only is not None:
        from importlib import import_module

        import_module(f"{__name__}.{only}").register(sub)
        return parser
    from . import admin, code, doctor, erase, facts, jobs, llm, recall, server, setup, tags, transcript, transfer, vaults, wiki

    for group in (transcript, recall, transfer, jobs, admin, erase, server, setup, doctor, facts, vaults, code, llm, tags, wiki):
        group.register(sub)
    from .helps import fill

    fill(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if _is_recall_hook(argv):  # a harness waits on this one: no parser of every command
        from .hook import main as hook_main

        return hook_main(argv)
    from .common import Parser

    Parser.json_errors = "--json" in argv
    parser = build_parser(HOOK_COMMANDS.get(_command(argv) or ""))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # a usage error (exit 2, message already written) or --help / --version
        return exc.code if isinstance(exc.code, int) else 0
    try:
        code = args.func(args)
        return int(code or 0)
    except PalimpsestError as exc:
        error = exc.to_dict()
        if isinstance(exc, LLMError) and hasattr(args, "no_llm") and not args.no_llm:
            error["message"] += " (--no-llm runs the local fallback instead)"  # a model down or garbling: the command still has a way
        return _fail(args, error, exc.exit_code)
    except KeyboardInterrupt:
        embed = sys.modules.get("palimpsest.embed")
        if embed is not None:  # let a model call in flight end first: exiting inside it aborted the process (exit 134)
            embed.settle()
        return _fail(args, {"code": "interrupted", "message": "interrupted"}, 130)
    except BrokenPipeError:
        return 0


def _command(argv: list[str]) -> str | None:
    """The command of `[--home H] [--store S] COMMAND …`."""
    i = 0
    while i < len(argv) and argv[i] in ("--home", "--store"):
        i += 2
    return argv[i] if i < len(argv) else None


def _is_recall_hook(argv: list[str]) -> bool:
    """`[--home H] [--store S] recall … --hook …`"""
    return _command(argv) == "recall" and "--hook" in argv[argv.index("recall") + 1:]


def _fail(args: argparse.Namespace, error: dict[str, str], code: int) -> int:
    if getattr(args, "json", False):
        import json  # (not at the top: the recall hook comes through this module)

        sys.stderr.write(json.dumps({"ok": False, "error": error}, ensure_ascii=False) + "\n")
    else:
        sys.stderr.write(f"palimpsest: {error['message']}\n")
    return code
