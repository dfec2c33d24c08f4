"""Codebase memory: the symbols of a repository and who calls, imports and extends whom.

`CodeGraph` indexes trees with tree-sitter (Python, JavaScript/TypeScript, Go, Rust) into
its own SQLite file and answers `find`, `definition`, `callers`, `callees`, `impact` and
`outline`. `symbols_mentioned` is the hook for recall: the symbols a turn names. The
design — storage, naming, resolution, incremental runs — is in docs/codegraph.md.
"""

from __future__ import annotations

from pathlib import Path

from ..settings import Settings
from .graph import CodeGraph, OutlineItem, Repo, default_path
from .model import Edge, Impact, IndexReport, Symbol


def symbols_mentioned(text: str, repo: str, *, settings: Settings | None = None, limit: int = 8) -> list[Symbol]:
    """The symbols of indexed repository `repo` (its name — a `project:` tag value — or root
    path) that `text` names in code-shaped words. [] when nothing is indexed; never raises
    for a missing repository or graph, so recall can call it on every turn."""
    settings = settings if settings is not None else Settings.load()
    path: Path = default_path(settings)
    if not path.exists() or not text:
        return []
    with CodeGraph(path, settings=settings) as graph:
        return graph.symbols_mentioned(text, repo, limit=limit)


__all__ = ["CodeGraph", "Edge", "Impact", "IndexReport", "OutlineItem", "Repo", "Symbol", "symbols_mentioned"]
