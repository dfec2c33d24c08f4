"""The languages the code graph reads, by file extension, and how each names its modules.

`Layout` is built once per index run from the list of files: which folders are Python
packages (hold an `__init__.py`), which `go.mod` owns which folder, which `Cargo.toml`
makes which crate. A file's module name depends on that, so a file whose module name
changes (an `__init__.py` appeared above it) is parsed again even if its bytes did not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..extract import Extractor, FileContext
from ..model import qnorm
from . import go, javascript, python, rust

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
}

_EXTRACTORS: dict[str, type[Extractor]] = {
    "python": python.PythonExtractor,
    "javascript": javascript.JavaScriptExtractor,
    "typescript": javascript.TypeScriptExtractor,
    "tsx": javascript.TsxExtractor,
    "go": go.GoExtractor,
    "rust": rust.RustExtractor,
}

_GO_MODULE = re.compile(r"^\s*module\s+(\S+)", re.MULTILINE)
_CARGO_NAME = re.compile(r'^\s*\[package\][^\[]*?^\s*name\s*=\s*"([^"]+)"', re.MULTILINE | re.DOTALL)


def language_of(path: str) -> str | None:
    """The language of a path by its extension, or None when the graph does not read it."""
    dot = path.rfind(".")
    return EXTENSIONS.get(path[dot:].lower()) if dot > path.rfind("/") else None


@cache
def extractor(language: str) -> Extractor:
    """One extractor (parser + compiled query) per language and process."""
    return _EXTRACTORS[language]()


@dataclass
class Layout:
    package_dirs: frozenset[str] = frozenset()
    go_modules: dict[str, str] = field(default_factory=dict)  # module path → folder
    crates: dict[str, str] = field(default_factory=dict)  # folder → crate name

    @classmethod
    def scan(cls, root: Path, paths: list[str]) -> Layout:
        package_dirs = frozenset(p.rsplit("/", 1)[0] if "/" in p else "" for p in paths if p.rsplit("/", 1)[-1] == "__init__.py")
        go_modules: dict[str, str] = {}
        crates: dict[str, str] = {}
        for p in paths:
            name = p.rsplit("/", 1)[-1]
            folder = p.rsplit("/", 1)[0] if "/" in p else ""
            if name == "go.mod":
                match = _GO_MODULE.search(_read_small(root / p))
                if match:
                    go_modules[match.group(1)] = folder
            elif name == "Cargo.toml":
                match = _CARGO_NAME.search(_read_small(root / p))
                crate = match.group(1) if match else (folder.rsplit("/", 1)[-1] or root.name)
                crates[folder] = crate.replace("-", "_")
        return cls(package_dirs, go_modules, crates)

    def context(self, path: str, language: str) -> tuple[FileContext, str]:
        """The extraction context of a file and its module's display name."""
        if language == "python":
            display, is_package = python.module_name(path, self.package_dirs)
        elif language == "go":
            display, is_package = go.module_name(path)
        elif language == "rust":
            display, is_package = rust.module_name(path, self.crates)
        else:
            display, is_package = javascript.module_name(path)
        extra = dict(self.go_modules) if language == "go" else {}
        return FileContext(path, qnorm(display), is_package, extra), display


def member_sep(language: str) -> str:
    return extractor(language).member_sep


def _read_small(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            return fh.read(65536).decode("utf-8", "replace")
    except OSError:
        return ""
