"""The files of a vault folder: a walk that reports what it cannot take, and safe paths.

A file is known by its path relative to the vault, as text: a name holding bytes that are
not UTF-8 (a Windows zip unpacked) is indexed under that name with those bytes escaped
(`readable`), not refused.

The walk follows symbolic links that stay inside the vault, and reports (by path) a link
that points outside it, a link loop (a link to itself, or to a folder already walked),
and anything it cannot stat. Hidden files and folders (`.git`, `.DS_Store`) are skipped,
as are files of other types.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import InvalidInput


@dataclass
class FileInfo:
    path: str  # relative, with `/`
    full: Path
    mtime: float
    size: int


def walk(root: Path, extensions: tuple[str, ...]) -> tuple[dict[str, FileInfo], list[dict[str, str]]]:
    """Files of `root` with these extensions, and the problems met, each by path."""
    files: dict[str, FileInfo] = {}
    problems: list[dict[str, str]] = []
    real_root = root.resolve()
    seen = {real_root}
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            problems.append({"path": _rel(root, folder), "error": f"cannot read folder: {exc.strerror}"})
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = _rel(root, Path(entry.path))
            try:
                target = Path(entry.path).resolve(strict=True) if entry.is_symlink() else None
                if target is not None and not target.is_relative_to(real_root):
                    problems.append({"path": rel, "error": f"symbolic link to {readable(str(target))}, outside the vault"})
                    continue
                if entry.is_dir(follow_symlinks=True):
                    real = target or Path(entry.path).resolve()
                    if real in seen:
                        problems.append({"path": rel, "error": "symbolic link loop (a folder already walked)"})
                        continue
                    seen.add(real)
                    stack.append(Path(entry.path))
                elif entry.name.lower().endswith(extensions) and entry.is_file(follow_symlinks=True):
                    if target is not None and target.name.lower().endswith(extensions) \
                            and not any(p.startswith(".") for p in target.relative_to(real_root).parts):
                        continue  # a link to a file of the vault: indexed once, at its own path (it had been twice)
                    st = entry.stat(follow_symlinks=True)
                    files[rel] = FileInfo(rel, Path(entry.path), st.st_mtime, st.st_size)
            except RuntimeError:
                problems.append({"path": rel, "error": "symbolic link loop"})
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    problems.append({"path": rel, "error": "symbolic link loop"})
                elif exc.errno == errno.ENOENT and entry.is_symlink():
                    problems.append({"path": rel, "error": "broken symbolic link"})
                elif exc.errno != errno.ENOENT:  # gone since the listing: not a problem of the vault
                    problems.append({"path": rel, "error": f"cannot read: {exc.strerror}"})
    return files, problems


def _rel(root: Path, path: Path) -> str:
    try:
        return readable(path.relative_to(root).as_posix() or ".")
    except ValueError:
        return readable(str(path))


def readable(name: str) -> str:
    """A name from the file system as text: its bytes that are not UTF-8 shown as `\\xe7`, and a backslash of its own
    as `\\x5c`, so every backslash begins an escape and two files never share a name (`Procura\\xe7\\xe3o.md` spelled
    with real backslashes had been the cp1252 file's name, and one shadowed the other). The OS gives such bytes as
    surrogates, which no store or hash takes: `Procura\\xe7\\xe3o.md` (a Windows zip's cp1252 name) had crashed `index`
    and left every file after it unindexed. The file is read at its own path (`FileInfo.full`)."""
    return os.fsencode(name).replace(b"\\", b"\\x5c").decode("utf-8", "backslashreplace")


def unreadable(name: str) -> str:
    """The name `readable` shows as `name`, as the OS takes it (its escapes the bytes again)."""
    raw = re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m[1], 16)]), name.encode("utf-8", "surrogateescape"))
    return os.fsdecode(raw)


def check_writable_name(root: Path, path: str) -> None:
    """Refuse `path` when it is how a listing shows a file of `root` whose name has an escape: a write reads a
    backslash as a folder's, and `Procura\\xe7\\xe3o.md` with overwrite had gone to a new `Procura/xe7/xe3o.md`."""
    if "\\" in path and (root / unreadable(path)).exists():
        raise InvalidInput(f"path {path!r} is how a listing shows a file whose name is not UTF-8 or holds a backslash: "
                           "not a path a write can take (rename the file, then write to its new name)")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def safe_relative(path: object, extensions: tuple[str, ...]) -> str:
    """A path a caller may write inside a vault: relative, no `..`, no hidden part, a
    known extension. Returns it normalised, with `/`."""
    if not isinstance(path, str) or not path.strip() or "\x00" in path or len(path) > 500:
        raise InvalidInput("path must be a non-empty relative path of at most 500 characters")
    p = PurePosixPath(path.replace("\\", "/"))
    if p.is_absolute() or any(part in ("..", "") or part.startswith(".") for part in p.parts):
        raise InvalidInput(f"path {path!r} must stay inside the vault (relative, no `..`, no hidden parts)")
    if any(len(part.encode("utf-8")) > 255 for part in p.parts):  # (a file system's limit: it had been a 500)
        raise InvalidInput(f"each part of path {path[:80]!r}… holds at most 255 bytes")
    if not p.name.lower().endswith(extensions):
        raise InvalidInput(f"path {path!r} must end with one of {', '.join(extensions)}")
    return p.as_posix()


def resolve_inside(root: Path, rel: str) -> Path:
    """The real path of `rel` (a `safe_relative` path) in the vault folder `root`, every
    symbolic link on the way resolved, or `InvalidInput` when that leaves the folder: as
    the walk refuses such a link for indexing, a write must not follow one out (issue 21)."""
    real_root = root.resolve()
    target = (root / rel).resolve()
    if target == real_root or not target.is_relative_to(real_root):
        raise InvalidInput(f"path {rel!r} leads outside the vault (through a symbolic link); nothing was written")
    return target


def write_inside(root: Path, rel: str, data: bytes) -> Path:
    """Write `data` at `rel` inside the vault folder `root`, atomically, at the path
    `resolve_inside` allows (checked again once its folders exist). Returns that path."""
    target = resolve_inside(root, rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    target = resolve_inside(root, rel)  # a link made meanwhile
    write_atomic(target, data)
    return target


def write_atomic(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")  # unique per writer, threads too
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, target)
