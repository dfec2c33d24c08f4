"""The project a working folder belongs to, for the session's `project` setting and tag: one
answer for live capture (`capture.hooks`) and for an imported transcript (`importers`), settled
by the server against the sessions it holds (`as_its_folder_has`).

A project is named so that two repositories with one folder name are two projects: by its origin
remote's `owner/name` (`acme/api`, `jdoe/api`), and without a remote by its root's path (found by a
user whose `api` repositories at work and at home shared one project, and recall in one showed the
other's conventions). Earlier versions named a project by its last part alone (`api`); sessions
stored so keep that tag, and recall in `acme/api` still reads them as its own (`legacy_name`).
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import urlparse


def project_of(cwd: str | None) -> str | None:
    """The project a folder belongs to: its origin remote's `owner/name` → its git root's path → its own path.

    A worktree resolves to its main repository (`--git-common-dir` points there)."""
    if not cwd or not Path(cwd).is_dir():
        return None
    return repository_of(cwd) or _short(str(Path(cwd).resolve()))


def repository_of(cwd: str) -> str | None:
    """The project of a folder inside a git repository (`project_of`'s first two answers), None outside one."""
    url = _git(cwd, "config", "--get", "remote.origin.url")
    if url:
        name = _repository_name(url)
        if name:
            return name
    common = _git(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if common:
        root = Path(common)
        return _short(str(root.parent if root.name == ".git" else root))
    return None


MAX_CHARS = 200  # a tag's value (`tags`): a deeper folder's path is named by its end and a hash of the whole


def _short(path: str) -> str:
    """`path`, or when longer than a tag holds, its last parts after a hash of it (the recall hook of a deep folder had
    failed: "tag values are 1–200 characters", found in review)."""
    if len(path) <= MAX_CHARS:
        return path
    digest = hashlib.sha256(path.encode()).hexdigest()[:12]
    return f"{digest}-{path[-(MAX_CHARS - len(digest) - 1):]}"  # (ASCII: a tag is read NFKC, "…" as "...")


def project_of_session(settings: dict[str, Any]) -> str | None:
    """The project of a transcript's session from what it says of itself: its folder's, when
    the folder is here; else the repository its `git` record names; else the folder's last part,
    as earlier versions named every project (a transcript copied from another machine, or of a
    folder since moved: by its path it had been a project of its own, outside its repository's
    recall; by its last part, recall in `acme/api` reads it as its own, `legacy_name`). The
    server then gives it the project another session of that folder has in the home, when one
    does (`as_its_folder_has`, from `ingest.Writer`): this module knows transcripts, not memory."""
    cwd = settings.get("cwd") if isinstance(settings.get("cwd"), str) else None
    found = project_of(cwd)
    if found:
        return found
    git = settings.get("git") if isinstance(settings.get("git"), dict) else {}
    url = git.get("repository_url") if isinstance(git.get("repository_url"), str) else ""
    return _repository_name(url) or (PurePath(cwd).name if cwd else None) or None


def as_its_folder_has(settings: dict[str, Any], projects_of_folder: Callable[[str], list[str]]) -> dict[str, Any]:
    """`settings`, or when its project is only its folder's last part (`project_of_session`'s last answer) and a session
    of that folder already has a project of that name (`projects_of_folder(cwd)`, newest first), settings with that
    project: its `project:` tag replaced in place, every other tag kept. Of a Codex user's rollouts of one folder not on
    this machine, those whose session_meta named the remote were `project:mei-lab/docsnap-vit`, one without the `git`
    record `project:docsnap-vit`, and `--tag project:mei-lab/docsnap-vit` left it out. A folder elsewhere of the same
    name stays apart; a repository cloned under another name is not found."""
    cwd, project = settings.get("cwd"), settings.get("project")
    if not isinstance(cwd, str) or not isinstance(project, str) or project != PurePath(cwd).name:
        return settings
    found = next((p for p in projects_of_folder(cwd) if legacy_name(p) == project), None)
    if found is None:
        return settings
    tags = settings.get("tags")
    if isinstance(tags, list):  # (a `user:mei` beside it had been dropped with the rest of the list: found in review)
        tags = [f"project:{found}" if t == f"project:{project}" else t for t in tags]
    return {**settings, "project": found, **({"tags": tags} if tags is not None else {})}


def legacy_name(project: str) -> str | None:
    """The name earlier versions gave `project` (its last part: `acme/api` → `api`), or None when it is that name."""
    last = project.rstrip("/").rsplit("/", 1)[-1]
    return last if last and last != project else None


def _repository_name(url: str) -> str:
    """The repository a remote URL names, as `owner/name`: `git@github.com:acme/billing.git` → `acme/billing`,
    `https://gitlab.com/acme/tools/billing` → `tools/billing` (its last two parts)."""
    url = url.strip().rstrip("/").removesuffix(".git")
    if "://" in url:
        path = urlparse(url).path
    elif ":" in url.split("/", 1)[0]:  # scp-like: [user@]host:owner/name
        path = url.split(":", 1)[1]
    else:  # a folder on this machine
        path = url
    parts = [p for p in path.split("/") if p and p != "_git"]  # (Azure DevOps: …/org/project/_git/name)
    return _short("/".join(parts[-2:]))


def _git(cwd: str, *args: str) -> str:
    try:
        done = subprocess.run(["git", "-C", cwd, *args], check=False, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
