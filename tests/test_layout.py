"""The house holds its shape: no import circle between files, no part importing the facade,
no backend named outside `store/`, every package a real package (a folder without an
`__init__.py` is left out of the wheel by setuptools' discovery).

Imports are read with `ast` wherever they stand — module level, under `TYPE_CHECKING`,
inside functions — because each of them ties two files together."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "palimpsest"
# above the facade: what may import `Memory`
ADAPTERS = ("palimpsest.cli", "palimpsest.server", "palimpsest.tools", "palimpsest.capture", "palimpsest.importers",
            "palimpsest.service", "palimpsest.memory", "palimpsest.__init__", "palimpsest.__main__")


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts)


def _package(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rsplit(".", 1)[0]


def _resolve(name: str, files: dict[str, Path]) -> str | None:
    """The file a dotted name is, or lies in (`a.b.c` → `a.b` when `c` is a name in it)."""
    while name:
        if name in files:
            return name
        if f"{name}.__init__" in files:
            return f"{name}.__init__"
        name = name.rpartition(".")[0]
    return None


def _graph() -> dict[str, set[str]]:
    files = {_module(p): p for p in PACKAGE.rglob("*.py")}
    edges: dict[str, set[str]] = {m: set() for m in files}
    for module, path in files.items():
        here = _package(module.removesuffix(".__init__"), path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in node.names] or [base]
            for t in targets:
                found = _resolve(t, files) if t.startswith("palimpsest") else None
                if found and found != module:
                    edges[module].add(found)
    return edges


def _circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one file (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(group)

    for v in edges:
        if v not in index:
            visit(v)
    return out


@pytest.fixture(scope="module")
def edges() -> dict[str, set[str]]:
    return _graph()


def test_no_import_circle_between_files(edges: dict[str, set[str]]) -> None:
    assert _circles(edges) == []


def test_the_reader_finds_a_circle() -> None:
    ring = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(ring) == [{"a", "b", "c"}]


def test_no_part_imports_the_facade(edges: dict[str, set[str]]) -> None:
    below = [m for m, to in edges.items() if "palimpsest.memory" in to and not m.startswith(ADAPTERS)]
    assert below == []


def test_no_backend_is_named_outside_the_store(edges: dict[str, set[str]]) -> None:
    backends = ("palimpsest.store.sqlite", "palimpsest.store.postgres")
    leaks = [(m, t) for m, to in edges.items() for t in to if t.startswith(backends) and not m.startswith("palimpsest.store")]
    assert leaks == []


def test_every_folder_of_code_is_a_package() -> None:
    folders = {p.parent for p in PACKAGE.rglob("*.py")}
    assert [str(f) for f in sorted(folders) if not (f / "__init__.py").exists()] == []
