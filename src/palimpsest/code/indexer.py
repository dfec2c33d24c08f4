"""One index run: list, compare, parse what changed, store, resolve.

A file is re-parsed only when its content hash (or its module name) changed; when its
size and mtime both match the stored ones it is not even read, as git does. Files that
vanished are dropped with their symbols. Refused files (too large, binary, symlinked out
of the tree) are kept as rows of status `skipped` with the reason, so every run reports
them; files with syntax errors are indexed for what parses, with status `partial`.
The whole run is one write transaction: readers see the previous graph until it commits.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from .extract import FileContext
from .files import Refused, Source, list_files, read_source
from .languages import Layout, extractor, language_of
from .model import Extraction, IndexReport
from .resolve import Pending, resolve_repo
from .store import delete_file_contents, inbound_edges, names_in_files, plain, write

_FULL_RESOLVE_SHARE = 0.3  # re-resolve everything when this share of files changed


@dataclass
class _Known:
    id: int
    sha256: str
    size: int
    mtime_ns: int
    module: str
    status: str


class _Run:
    def __init__(self, db: sqlite3.Connection, repo_id: int, root: Path, max_bytes: int, full: bool, report: IndexReport) -> None:
        self.db, self.repo_id, self.root, self.max_bytes, self.full, self.report = db, repo_id, root, max_bytes, full, report
        self.changed: set[int] = set()
        self.names: set[str] = set()  # names defined or imported by a changed file before or after, not both
        self.inbound: set[int] = set()  # edges elsewhere that pointed into a changed file
        self._old_names: dict[int, set[str]] = {}
        self.next_id = (db.execute("SELECT COALESCE(MAX(id), 0) FROM symbols").fetchone()[0] or 0) + 1
        self.known = {
            row[1]: _Known(row[0], *row[2:])
            for row in db.execute("SELECT id, path, sha256, size, mtime_ns, module, status FROM files WHERE repo_id = ?", (repo_id,))
        }
        self.seen: set[str] = set()
        self.pending: list[Pending] = []  # edges of re-parsed files, stored once resolved

    def file(self, path: str, language: str, layout: Layout) -> None:
        ctx, display = layout.context(path, language)
        row = self.known.get(path)
        try:
            st = os.lstat(self.root / path)
        except OSError:
            return  # vanished since listing: dropped with the deleted files
        self.seen.add(path)
        if row and not self.full and (row.size, row.mtime_ns, row.module) == (st.st_size, st.st_mtime_ns, ctx.module):
            self.report.unchanged += 1
            return
        try:
            src = read_source(self.root, path, self.max_bytes)
        except FileNotFoundError:
            self.seen.discard(path)
            return
        except Refused as why:
            self._skip(path, language, ctx.module, st, str(why), row)
            return
        if row and not self.full and row.status != "skipped" and (row.sha256, row.module) == (src.sha256, ctx.module):
            self.db.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?", (src.size, src.mtime_ns, row.id))
            self.report.unchanged += 1
            return
        self._parse(path, language, ctx, display, src, row)

    def _parse(self, path: str, language: str, ctx: FileContext, display: str, src: Source, row: _Known | None) -> None:
        ex = extractor(language).extract(src.data, ctx)
        notes = [n for n in (src.note, _errors_note(ex)) if n]
        mtime = 0 if src.changed else src.mtime_ns  # 0: never matches, so the next run re-reads it
        if src.changed:
            self.report.changed_during.append(path)
            notes.append("changed while being indexed; indexed as read, re-read next run")
        status = "partial" if ex.error_lines else "ok"
        file_id = self._file_row(path, language, ctx.module, src.sha256, src.size, mtime, status, "; ".join(notes), row)
        self._store(file_id, language, ctx, display, ex, src.data.count(b"\n") + 1)
        self.report.parsed += 1

    def _skip(self, path: str, language: str, module: str, st: os.stat_result, why: str, row: _Known | None) -> None:
        self._file_row(path, language, module, "", st.st_size, st.st_mtime_ns, "skipped", why, row)

    def _file_row(self, path: str, language: str, module: str, sha: str, size: int, mtime: int, status: str, note: str,
                  row: _Known | None) -> int:  # fmt: skip
        if row is None:
            cur = self.db.execute(
                "INSERT INTO files (repo_id, path, language, module, sha256, size, mtime_ns, status, note) VALUES (?,?,?,?,?,?,?,?,?)",
                (self.repo_id, path, language, module, sha, size, mtime, status, note),
            )
            file_id = int(cur.lastrowid or 0)
        else:
            file_id = row.id
            self._old_names[file_id] = names_in_files(self.db, [file_id])
            if row.module != module:  # every qualified name of the file changed
                self.names |= plain(self._old_names[file_id])
            self.inbound.update(inbound_edges(self.db, [file_id]))
            delete_file_contents(self.db, [file_id])
            self.db.execute(
                "UPDATE files SET language=?, module=?, sha256=?, size=?, mtime_ns=?, status=?, note=? WHERE id=?",
                (language, module, sha, size, mtime, status, note, file_id),
            )
        self.changed.add(file_id)
        return file_id

    def _store(self, file_id: int, language: str, ctx: FileContext, display: str, ex: Extraction, lines: int) -> None:
        msep = "::" if language == "rust" else "."
        sep = extractor(language).member_sep
        module_id = self.next_id
        rows = [(module_id, self.repo_id, file_id, _last(display) or _last(ctx.path), display or ctx.path, ctx.module or ctx.path,
                 _parent_module(ctx.module), "module", 1, lines, "", "")]  # fmt: skip
        ids: list[int] = []
        for i, d in enumerate(ex.defs):
            sid = module_id + 1 + i
            ids.append(sid)
            qualname = msep.join(p for p in (display, sep.join(d.local)) if p)
            q = ".".join(p for p in (ctx.module, *d.local) if p)
            parent = ".".join(p for p in (ctx.module, *d.local[:-1]) if p)
            rows.append((sid, self.repo_id, file_id, d.name, qualname, q, parent, d.kind, d.start_line, d.end_line, d.signature, d.doc))
        self.next_id = module_id + 1 + len(ex.defs)
        self.db.executemany("INSERT INTO symbols VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        self.pending.extend(
            (file_id, ids[r.src] if r.src is not None else module_id, r.kind, r.name, r.name.rsplit(".", 1)[-1], r.line) for r in ex.refs
        )
        self.db.executemany("INSERT INTO bindings VALUES (?,?,?)", [(file_id, b.alias, b.target) for b in ex.bindings])
        self.db.executemany(
            "INSERT INTO hints VALUES (?,?,?,?)",
            [(file_id, ids[h.src] if h.src is not None else module_id, h.name, h.type) for h in ex.hints],
        )
        new = {d.name for d in ex.defs} | {f"{b.alias}\0{b.target}" for b in ex.bindings} | {rows[0][3]}
        # Edges elsewhere can only change meaning through names that appeared or vanished
        # (or imports whose target changed); those that pointed into this file are in `inbound`.
        self.names |= plain(new ^ self._old_names.pop(file_id, set()))

    def drop_missing(self) -> None:
        gone = [row.id for path, row in self.known.items() if path not in self.seen]
        if not gone:
            return
        self.names |= plain(names_in_files(self.db, gone))
        self.inbound.update(inbound_edges(self.db, gone))
        delete_file_contents(self.db, gone)
        self.db.executemany("DELETE FROM files WHERE id = ?", [(i,) for i in gone])
        self.report.deleted = len(gone)


def run(db: sqlite3.Connection, repo_id: int, report: IndexReport, exclude: list[str], max_bytes: int, full: bool) -> IndexReport:
    """Index `report.root` into repository `repo_id`; fills and returns `report`."""
    started = time.perf_counter()
    root = Path(report.root)
    paths = list_files(root, exclude)
    layout = Layout.scan(root, paths)
    with write(db):
        job = _Run(db, repo_id, root, max_bytes, full, report)
        for path in paths:
            language = language_of(path)
            if language is not None:
                job.file(path, language, layout)
        job.drop_missing()
        report.files = len(job.seen)
        whole = full or not job.known or len(job.changed) > _FULL_RESOLVE_SHARE * max(1, len(job.seen))
        if job.changed or report.deleted:
            job.names |= plain(n for names in job._old_names.values() for n in names)  # files now skipped
            report.reresolved = resolve_repo(db, repo_id, job.pending, None if whole else job.changed, job.names, job.inbound)
        db.execute("UPDATE repos SET indexed_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?", (repo_id,))
    _totals(db, repo_id, report)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _totals(db: sqlite3.Connection, repo_id: int, report: IndexReport) -> None:
    report.symbols = db.execute("SELECT COUNT(*) FROM symbols WHERE repo_id = ?", (repo_id,)).fetchone()[0]
    report.edges, report.resolved = db.execute("SELECT COUNT(*), COUNT(dst_id) FROM edges WHERE repo_id = ?", (repo_id,)).fetchone()
    for path, status, note in db.execute(
        "SELECT path, status, note FROM files WHERE repo_id = ? AND status != 'ok' ORDER BY path", (repo_id,)
    ):
        entry = {"path": path, "reason": note}
        (report.skipped if status == "skipped" else report.partial).append(entry)


def _errors_note(ex: Extraction) -> str:
    if not ex.error_lines:
        return ""
    shown = ", ".join(str(n) for n in ex.error_lines[:10])
    return f"syntax errors at line{'s' if len(ex.error_lines) > 1 else ''} {shown}; indexed what parses"


def _last(name: str) -> str:
    for sep in ("::", "/", "."):
        name = name.rsplit(sep, 1)[-1]
    return name


def _parent_module(module: str) -> str | None:
    return module.rsplit(".", 1)[0] if "." in module else None
