"""`palimpsest doctor`: one screen on whether capture and recall work, with the fix for each problem."""

from __future__ import annotations

import argparse
import os
from typing import Any

from .common import add_command, cell, console, emit, table


def register(sub: Any) -> None:
    p = add_command(sub, "doctor", doctor, "Check the server, capture, the harness hooks, the embedder, the job backlog, "
                    "the last capture, the spool and the dead letters; print the fix for each problem (exit 1 if any).")
    p.add_argument("--url", help="server URL (default: PALIMPSEST_URL)")


def doctor(args: argparse.Namespace) -> int:
    from ..capture.doctor import PROBLEM, run
    from ..settings import Settings

    settings = Settings.load(**{k: v for k, v in (("home", args.home), ("store", args.store)) if v})
    result = run(settings, dict(os.environ), args.url)

    def human(r: dict[str, Any]) -> None:
        t = table("check", "state", "what was seen", "fix")
        for c in r["checks"]:
            # (cells as plain text: a detail quotes what a server or an endpoint said, escape sequences included)
            t.add_row(cell(c["name"]), {"ok": "ok", "warn": "warn", PROBLEM: "PROBLEM"}[c["state"]], cell(c["detail"]), cell(c["fix"]))
        console().print(t)

    emit(args, result, human)
    return 0 if result["ok"] else 1
