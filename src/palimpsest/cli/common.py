"""Helpers every command module shares: sub-command creation, opening memory, output."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any


def add_command(sub: Any, name: str, func: Callable[..., Any], help: str, *, json_flag: bool = True) -> argparse.ArgumentParser:
    """A sub-command whose `func(args)` returns something to print."""
    p = sub.add_parser(name, help=help, description=help)
    p.set_defaults(func=func)
    if json_flag:
        p.add_argument("--json", action="store_true", help="print one JSON document")
    return p


def open_memory(args: argparse.Namespace) -> Any:
    from ..memory import Memory

    return Memory(home=args.home, store=args.store)


def emit(args: argparse.Namespace, result: Any, human: Callable[[Any], None] | None = None) -> None:
    if getattr(args, "json", False) or human is None:
        sys.stdout.write(json.dumps(result, ensure_ascii=False, default=_default) + "\n")
    else:
        human(result)


def _default(obj: Any) -> Any:
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    raise TypeError(f"cannot serialise {type(obj).__name__}")
