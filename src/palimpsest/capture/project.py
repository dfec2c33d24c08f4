"""The project a working folder belongs to, for the session's `project` setting and tag."""

from __future__ import annotations

import subprocess
from pathlib import Path


def project_of(cwd: str | None) -> str | None:
    """The project a folder belongs to: origin remote name → git root → folder name.

    A worktree resolves to its main repository (`--git-common-dir` points there)."""
    if not cwd or not Path(cwd).is_dir():
        return None
    url = _git(cwd, "config", "--get", "remote.origin.url")
    if url:
        name = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
        name = name.removesuffix(".git")
        if name:
            return name
    common = _git(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if common:
        root = Path(common)
        return (root.parent if root.name == ".git" else root).name or None
    return Path(cwd).resolve().name or None


def _git(cwd: str, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", cwd, *args], check=False, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
