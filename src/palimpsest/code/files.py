"""Which files of a tree to read, and reading one safely.

Listing. Inside a git work tree the listing is `git ls-files -co --exclude-standard`:
tracked files plus untracked ones that no `.gitignore` (nor `.git/info/exclude`, nor the
user's global excludes) hides — exactly what `git status` considers. Elsewhere the tree
is walked and every `.gitignore` on the way is applied with `pathspec`'s git semantics,
and a few folders no one wants indexed (`.git`, `node_modules`, `__pycache__`, virtual
environments) are skipped. Extra patterns (`exclude`) use gitignore syntax in both cases.

Reading. A file is read once; its hash, its symbols and its edges all come from those
same bytes, so a file rewritten while it is being indexed is indexed consistently as the
version read and is re-read next time (its size or mtime no longer match). Files are
refused, with the reason reported, when they are symlinks leaving the tree, larger than
the size limit (generated code, vendored bundles), or binary. Text that is not UTF-8 is
decoded by its BOM, by a Python coding cookie, or else as Latin-1, and re-encoded as
UTF-8 for the parser — line numbers stay the file's own.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pathspec

ALWAYS_SKIP = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache"})
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))  # fmt: skip


@dataclass
class Source:
    """One file as read: UTF-8 bytes for the parser, the hash of the bytes on disk, a note."""

    data: bytes
    sha256: str
    size: int
    mtime_ns: int
    note: str = ""
    changed: bool = False  # size or mtime moved while we read it


class Refused(Exception):
    """A file we will not parse; the message says why (reported, never raised to callers)."""


def list_files(root: Path, exclude: Iterable[str] = ()) -> list[str]:
    """Every file under `root` (relative, `/`-separated, sorted) that is not ignored."""
    patterns = list(exclude)
    listed = _git_files(root)
    if listed is None:
        listed = _walk(root)
    if patterns:
        spec = pathspec.GitIgnoreSpec.from_lines(patterns)
        listed = [p for p in listed if not spec.match_file(p)]
    return sorted(set(listed))


def _git_files(root: Path) -> list[str] | None:
    try:
        inside = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"], check=False, capture_output=True, text=True, timeout=30
        )
        if inside.returncode != 0 or inside.stdout.strip() != "true":
            return None
        # A tree inside an enclosing repository's ignored folder (pyenv's versions/, a
        # vendored checkout) lists nothing there: walk it instead.
        ignored = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", "."], check=False, capture_output=True, timeout=30)
        if ignored.returncode == 0:
            return None
        done = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-co", "--exclude-standard", "-z"], check=False, capture_output=True, timeout=300
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    names = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [n for n in names if n and not any(part in ALWAYS_SKIP for part in n.split("/")[:-1])]


def _walk(root: Path) -> list[str]:
    found: list[str] = []
    specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        rel = os.path.relpath(folder, root).replace(os.sep, "/")
        rel = "" if rel == "." else rel
        specs = [(base, spec) for base, spec in specs if rel == base or base == "" or rel.startswith(base + "/")]
        ignore_file = Path(folder) / ".gitignore"
        if ignore_file.is_file():
            lines = ignore_file.read_text("utf-8", "replace").splitlines()
            specs.append((rel, pathspec.GitIgnoreSpec.from_lines(lines)))
        dirs[:] = sorted(d for d in dirs if d not in ALWAYS_SKIP and not _ignored(specs, _join(rel, d) + "/"))
        found.extend(_join(rel, f) for f in files if not _ignored(specs, _join(rel, f)))
    return found


def _join(base: str, name: str) -> str:
    return f"{base}/{name}" if base else name


def _ignored(specs: list[tuple[str, pathspec.GitIgnoreSpec]], path: str) -> bool:
    for base, spec in specs:
        local = path[len(base) + 1 :] if base else path
        if spec.match_file(local):
            return True
    return False


def read_source(root: Path, rel: str, max_bytes: int) -> Source:
    """Read `rel` under `root`. Raises `Refused` (with the reason) or `FileNotFoundError`."""
    path = root / rel
    before = path.lstat()
    if path.is_symlink():
        target = path.resolve()
        if not target.is_relative_to(root.resolve()):
            raise Refused("symlink pointing outside the tree")
        raise Refused("symlink (its target is indexed under its own path)")
    if not path.is_file():
        raise Refused("not a regular file")
    if before.st_size > max_bytes:
        raise Refused(f"larger than the limit ({before.st_size} > {max_bytes} bytes; generated?)")
    raw = path.read_bytes()
    after = path.stat()
    changed = (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns) or len(raw) != before.st_size
    if len(raw) > max_bytes:
        raise Refused(f"larger than the limit ({len(raw)} > {max_bytes} bytes; generated?)")
    data, note = decode(raw, rel)
    return Source(data, hashlib.sha256(raw).hexdigest(), len(raw), before.st_mtime_ns, note, changed)


def decode(raw: bytes, rel: str = "") -> tuple[bytes, str]:
    """UTF-8 bytes for the parser and a note naming any other encoding found."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(encoding).encode("utf-8"), f"decoded from {encoding} (BOM)"
            except UnicodeDecodeError:
                break
    if b"\0" in raw[:8192]:
        raise Refused("binary file (NUL bytes)")
    try:
        raw.decode("utf-8")
        return raw, ""
    except UnicodeDecodeError:
        pass
    cookie = _cookie(raw) if rel.endswith(".py") else None
    if cookie:
        try:
            return raw.decode(cookie).encode("utf-8"), f"decoded from {cookie} (coding cookie)"
        except (LookupError, UnicodeDecodeError):
            pass
    return raw.decode("latin-1").encode("utf-8"), "not UTF-8; decoded as Latin-1"


def _cookie(raw: bytes) -> str | None:
    for line in raw.splitlines()[:2]:
        match = _COOKIE.match(line)
        if match:
            return match.group(1).decode("ascii", "replace")
    return None
