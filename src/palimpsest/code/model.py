"""Records of the code graph: what extraction produces and what queries return.

Extraction (`Def`, `Ref`, `Binding`, `Extraction`) is per file and knows nothing of the
database; `Symbol`, `Edge` and `IndexReport` are what the library hands to callers, each
with `to_dict()` for the CLI's `--json` and the tool surface.

Names. A symbol's `qualname` is written the way its language writes it
(`palimpsest.code.graph.CodeGraph.index`, `src/util.Foo.bar` for a TypeScript file
`src/util.ts`, `pkg/util.Point.Move` for a Go package directory, `mycrate::geo::Point::new`
for Rust). Matching uses `qnorm`, the same name with every separator (`::`, `/`, `.`)
written as `.`, so `Point.new`, `Point::new` and `geo/Point.new` all find it.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

_SEPARATORS = re.compile(r"::|/|\.")

CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type", "impl"})
CALLABLE_KINDS = frozenset({"function", "method", "macro"})


def qnorm(name: str) -> str:
    """`a::b/c.d` → `a.b.c.d`: the form every lookup compares."""
    return _SEPARATORS.sub(".", name).strip(".")


@dataclass
class Def:
    """One definition found in a file. `parent` indexes the enclosing `Def` (None: the module)."""

    name: str
    kind: str
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    signature: str = ""
    doc: str = ""
    container: list[str] | None = None  # explicit prefix, e.g. a Go method's receiver type
    container_only: bool = False  # a Rust `impl` block: names its children, is no symbol itself
    receiver: str = ""  # a Go method's receiver variable: `p.Move()` inside it means `self.Move()`
    parent: int | None = None
    local: list[str] = field(default_factory=list)  # qualified name inside the file, filled by nesting


@dataclass
class Ref:
    """A use of a name: `call`, `inherit` (a base class / trait / embedded type) or `import`.

    `name` is dotted (`os.path.join`, `self.save`, `super.close`, `?.append` for a receiver
    the parser cannot name). `src` is filled by nesting: the innermost enclosing `Def`.
    """

    kind: str
    name: str
    line: int
    byte: int
    src: int | None = None
    owner: int | None = None  # inherit refs: the Def whose bases these are


@dataclass
class Hint:
    """A declared or evident type of a name: a parameter annotation, `x = Class()`,
    `self.x: Class`. `name` is `x`, or `self.x` for an attribute of the enclosing class;
    `type` is the dotted type name as written, resolved (to a class) only when used."""

    name: str
    type: str
    byte: int
    owner: int | None = None  # the def whose parameter this is; else found by position
    src: int | None = None


@dataclass
class Binding:
    """A name an import brings into a file's scope: `alias` stands for `target` (qnorm form)."""

    alias: str
    target: str
    line: int


@dataclass
class Extraction:
    defs: list[Def] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    hints: list[Hint] = field(default_factory=list)
    error_lines: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Symbol:
    """A definition as stored: where it is, what it is, how it is called."""

    id: int
    repo: str
    path: str
    language: str
    name: str
    qualname: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    doc: str
    parent: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def brief(self) -> str:
        """One line for people and for recall: `kind qualname — path:line — doc`."""
        text = f"{self.kind} {self.qualname} — {self.path}:{self.start_line}"
        if self.signature:
            text += f" — {self.signature}"
        if self.doc:
            text += f" — {self.doc}"
        return text


@dataclass(frozen=True)
class Edge:
    """A call, import or inheritance from `source` to `target` (None when kept as a name)."""

    kind: str
    name: str
    path: str
    line: int
    source: Symbol
    target: Symbol | None

    @property
    def resolved(self) -> bool:
        return self.target is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "path": self.path,
            "line": self.line,
            "resolved": self.resolved,
            "source": self.source.to_dict(),
            "target": self.target.to_dict() if self.target else None,
        }


@dataclass(frozen=True)
class Impact:
    """A symbol affected by a change, `depth` hops away, reached through `via` (an edge kind)."""

    symbol: Symbol
    depth: int
    via: str

    def to_dict(self) -> dict[str, Any]:
        return {"depth": self.depth, "via": self.via, **self.symbol.to_dict()}


@dataclass
class IndexReport:
    """What one `index` run did. `skipped` and `partial` say which files and why."""

    repo: str
    root: str
    files: int = 0
    parsed: int = 0
    unchanged: int = 0
    deleted: int = 0
    symbols: int = 0
    edges: int = 0
    resolved: int = 0
    reresolved: int = 0
    seconds: float = 0.0
    skipped: list[dict[str, str]] = field(default_factory=list)
    partial: list[dict[str, Any]] = field(default_factory=list)
    changed_during: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
