"""Import and export commands: `palimpsest import FILE`, `palimpsest export [FILE|-]`."""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from . import derive
from .common import EXIT_PARTIAL, add_command, emit, open_memory, progress


def register(sub: Any) -> None:
    from ..importers import FORMATS

    p = add_command(sub, "import", import_, "Import transcript files (messages JSONL, OpenAI, Claude Code, Codex, qwen-code, "
                    "ChatGPT's conversations.json, LoCoMo, LongMemEval) or a Palimpsest export; plain or gzipped. A folder is "
                    "walked for .jsonl/.json files.")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--format", choices=("auto", *FORMATS), default="auto", help="default: tell from the content")
    p.add_argument("--session", help="put every message in this session (messages, openai, claude-code, codex, chatgpt)")
    p.add_argument("--agent", help="set the agent of the imported sessions")
    derive.add_flag(p)

    p = add_command(sub, "export", export, "Write every session and journal event as JSONL (re-importable with `palimpsest import`); a name "
                    "ending .gz writes gzip.")
    p.add_argument("file", nargs="?", default="-", help="output path (an existing folder: a new "
                   "palimpsest-export-<time>.jsonl in it), or '-' for stdout")


def import_(args: argparse.Namespace) -> int:
    from ..importers import expand_paths, import_file, import_paths
    from ..service import BULK_COMPACT_SECONDS, compact_index

    options = {"format": args.format, "session": args.session, "agent": args.agent}
    single = len(args.files) == 1 and not Path(args.files[0]).expanduser().is_dir()
    if not single and not expand_paths(args.files):
        raise InvalidInput("no .jsonl or .json file found there")
    with open_memory(args) as memory:
        with progress(args, "importing") as update:
            if single:  # one file: its report, and a refusal is an error like any other
                report = import_file(memory, args.files[0], progress=update, **options).to_dict()
            else:
                reports = import_paths(memory, args.files, progress=update, **options)
            compact_index(memory, BULK_COMPACT_SECONDS)
        stored = report["stored"] if single else sum(r.get("stored", 0) for r in reports)
        if stored:  # (after "nothing was imported", "12 derived jobs queued" spoke of an earlier write's: a paralegal's)
            derive.after_writes(args, memory)
    if single:
        emit(args, report, _print_report)
        return 0 if report["ok"] else EXIT_PARTIAL
    result = {"ok": all(r["ok"] for r in reports), "stored": stored,
              "duplicates": sum(r.get("duplicates", 0) for r in reports), "files": reports}
    emit(args, result, _print_reports)
    return 0 if result["ok"] else EXIT_PARTIAL


def _print_reports(result: dict[str, Any]) -> None:
    for r in result["files"]:
        if "error" in r:
            print(f"palimpsest: {r['path']}: {r['error']['message']}", file=sys.stderr)
        else:
            print(f"{r['path']}: ", end="")
            _print_report(r)
    print(f"{len(result['files'])} files: {result['stored']} stored, {result['duplicates']} already there")


def _print_report(r: dict[str, Any]) -> None:
    print(f"{r['format']}: {r['stored']} stored, {r['duplicates']} already there, in {len(r['sessions'])} session(s)")
    for what, n in sorted(r["skipped"].items()):
        print(f"  {n} {what}")
    if r["truncated"]:
        print(f"  {r['truncated']} shortened to fit an event (whole payload kept in the source file)")
    if r["ids_reassigned"]:
        print(f"  {r['ids_reassigned']} event ids reassigned (the session already had later events)")
    for v in r.get("vaults", []):
        failed = f", {v['failed']} failed (`palimpsest docs {v['vault']} --status`)" if v["failed"] else ""
        print(f"  vault {v['vault']} restored: {v['indexed']} files indexed, {v['chunks']} chunks{failed}")
    if not r["indexed"]:
        print("  indexing deferred: the store was unavailable; the journal holds everything")
    for p in r["problems"]:
        print(f"palimpsest: {p['where']}: {p['message']}", file=sys.stderr)
    if r["problems"]:
        rest = "the rest was imported" if r.get("stored") or r.get("duplicates") else "nothing was imported"
        print(f"palimpsest: {len(r['problems'])} problem(s); {rest}", file=sys.stderr)


def export(args: argparse.Namespace) -> None:
    from ..importers import export_memory

    with open_memory(args) as memory, progress(args, "exporting") as update:
        target = _export_target(args.file)
        if target is None:
            counts = export_memory(memory, sys.stdout, update)
        else:
            counts = _export_to_file(memory, target, update)
        elsewhere = memory.sessions_elsewhere()
    result = {"file": str(target) if target is not None else "-", **counts, "sessions_elsewhere": elsewhere}
    if elsewhere:  # a backup that silently left out what other homes wrote, or its corrections (a shared server's user)
        print(f"palimpsest: this export holds what was written through this home; {len(elsewhere)} sessions of the store have "
              f"messages written through other homes ({', '.join(elsewhere[:5])}{', …' if len(elsewhere) > 5 else ''}): "
              "export from those homes too", file=sys.stderr)
    if args.file == "-":  # stdout holds the export itself; the summary goes to stderr
        if args.json:
            print(json.dumps(result), file=sys.stderr)
        return
    emit(args, result, lambda r: print(f"{r['sessions']} sessions, {r['events']} events → {r['file']}"))


def _export_target(file: str) -> Path | None:
    """The file to write: None for stdout; in an existing folder, a new timestamped file."""
    if file == "-":
        return None
    path = Path(file).expanduser()
    if path.is_dir():
        return path / time.strftime("palimpsest-export-%Y%m%d-%H%M%S.jsonl")
    return path


def _export_to_file(memory: Any, path: Path, update: Callable[[int, int], None]) -> dict[str, Any]:
    """Write beside the target and rename, so a failed export never leaves a half file."""
    from ..importers import export_memory

    directory = path.expanduser().resolve().parent
    if not directory.is_dir():
        raise InvalidInput(f"no such folder: {directory}")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    except OSError as exc:
        raise InvalidInput(f"cannot write in {directory}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as raw:
            # what its name says: gzip for a .gz name (it had been plain text under one, found by a user)
            sink = gzip.GzipFile(filename=path.stem, mode="wb", fileobj=raw, mtime=0) if path.suffix.lower() == ".gz" else None
            out = io.TextIOWrapper(sink or raw, encoding="utf-8", newline="")
            try:
                counts = export_memory(memory, out, update)
                out.flush()
            finally:
                out.detach()
            if sink is not None:
                sink.close()
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return counts
