"""The project a working folder belongs to, for the session's `project` setting and tag: one
answer for live capture (`capture.hooks`) and for an imported transcript (`importers`)."""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePath
from typing import Any


def project_of(cwd: str | None) -> str | None:
    """The project a folder belongs to: origin remote name → git root → folder name.

    A worktree resolves to its main repository (`--git-common-dir` points there)."""
    if not cwd or not Path(cwd).is_dir():
        return None
    url = _git(cwd, "config", "--get", "remote.origin.url")
    if url:
        name = _repository_name(url)
        if name:
            return name
    common = _git(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if common:
        root = Path(common)
        return (root.parent if root.name == ".git" else root).name or None
    return Path(cwd).resolve().name or None


def project_of_session(settings: dict[str, Any]) -> str | None:
    """The project of a transcript's session from what it says of itself: its folder's, when
    the folder is here; else the name of the repository its `git` record names; else the
    folder's own name (a transcript copied from another machine)."""
    cwd = settings.get("cwd") if isinstance(settings.get("cwd"), str) else None
    found = project_of(cwd)
    if found:
        return found
    git = settings.get("git") if isinstance(settings.get("git"), dict) else {}
    url = git.get("repository_url") if isinstance(git.get("repository_url"), str) else ""
    return _repository_name(url) or (PurePath(cwd).name if cwd else None) or None


def _repository_name(url: str) -> str:
    """The repository a remote URL names: `git@github.com:acme/billing.git` → `billing`."""
    return url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git") if url else ""


def _git(cwd: str, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", cwd, *args], check=False, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
