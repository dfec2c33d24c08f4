"""From source bytes to definitions, references and import bindings, with tree-sitter.

Each language is a subclass of `Extractor` holding one tree-sitter query. The query runs
in C and captures only the nodes that matter — definitions (`@def.KIND` with `@name`),
call sites (`@call` with `@callee`) and imports (`@import`) — so Python touches a few
nodes per definition and per call, never the whole tree. Nesting (which definition
encloses which, and which one a call sits in) is then found by one sweep over byte spans
instead of walking parents.

A file with syntax errors still yields everything outside the broken region: tree-sitter
recovers around an `ERROR` node, and the lines of those nodes are reported.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from .model import CLASS_KINDS, Binding, Def, Extraction, Hint, Ref

_SPACE = re.compile(r"\s+")
SIGNATURE_MAX = 240


@dataclass
class FileContext:
    """What an extractor needs to know about the file beyond its bytes."""

    path: str  # relative to the repository root, with `/`
    module: str  # qnorm of the file's module (`palimpsest.code.graph`, `src.util`, `pkg.util`)
    is_package: bool = False  # Python `__init__.py`, JS `index.*`, Rust `mod.rs` / `lib.rs`
    extra: dict[str, str] = field(default_factory=dict)  # language specifics (Go module paths)


def text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


class Extractor(ABC):
    """Base of every language. Subclasses set `QUERY`, `language()` and the `on_*` hooks."""

    name = ""
    QUERY = ""
    ATTRIBUTE_TYPES: ClassVar[dict[str, tuple[str, str]]] = {}  # node type → (object field, member field)
    IDENT_TYPES = frozenset({"identifier"})
    SELF_TYPES = frozenset({"self", "this"})
    member_sep = "."
    LINE_COMMENT = re.compile(r"//[^\n]*")  # dropped from signatures

    def __init__(self) -> None:
        self._language = Language(self.language())
        self._parser = Parser(self._language)
        self._query = Query(self._language, self.QUERY)

    @abstractmethod
    def language(self) -> object:
        """The tree-sitter language capsule of this extractor's grammar wheel."""

    def extract(self, source: bytes, ctx: FileContext) -> Extraction:
        tree = self._parser.parse(source)
        out = Extraction()
        for _, caps in QueryCursor(self._query).matches(tree.root_node):
            self._dispatch(caps, ctx, out)
        _nest(out)
        if tree.root_node.has_error:
            out.error_lines = _error_lines(tree.root_node)
        return out

    def _dispatch(self, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        if "call" in caps:
            name = self.callee(caps["callee"][0], ctx)
            node = caps["call"][0]
            if name and name != "?":
                out.refs.append(Ref("call", name, node.start_point.row + 1, node.start_byte))
            return
        if "import" in caps:
            self.on_import(caps, ctx, out)
            return
        for key, nodes in caps.items():
            if key.startswith("def."):
                self.on_def(key[4:], nodes[0], caps, ctx, out)
                return
            if key == "hint.local":
                for target in caps.get("target", ()):
                    self.local(out, text(target), nodes[0])
                return
            if key.startswith("hint."):
                self.on_hint(key[5:], nodes[0], caps, ctx, out)
                return

    # -- hooks ---------------------------------------------------------------------------

    def on_def(self, kind: str, node: Node, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        name = text(caps["name"][0])
        if name:
            out.defs.append(self.make_def(name, kind, node))

    @abstractmethod
    def on_import(self, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        """Record the imports an `@import` capture names."""

    def on_hint(self, kind: str, node: Node, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        """A typed assignment or a constructor call assigned to a name (`@hint.*` captures)."""

    def type_name(self, node: Node | None, ctx: FileContext) -> str:
        """The class a type annotation names (`Foo`, `mod.Foo`), or "" when it is not one."""
        if node is None:
            return ""
        name = self.callee(node, ctx)
        return "" if name.startswith("?") or name == "self" else name

    def hint(self, out: Extraction, name: str, type_name: str, node: Node, owner: int | None = None) -> None:
        if name and type_name:
            out.hints.append(Hint(name, type_name, node.start_byte, owner=owner))

    def local(self, out: Extraction, name: str, node: Node, owner: int | None = None) -> None:
        """A name bound inside a function (parameter, assignment, loop variable), type unknown:
        inside that function it hides any module-level symbol or import of the same name."""
        if name:
            out.hints.append(Hint(name, "", node.start_byte, owner=owner))

    def callee(self, node: Node, ctx: FileContext) -> str:
        """The dotted name of what is called: `a.b.c`, `self.save`, `?.append`."""
        t = node.type
        if t in self.IDENT_TYPES:
            return text(node)
        if t in self.SELF_TYPES:
            return "self"
        if t == "super":
            return "super"
        fields = self.ATTRIBUTE_TYPES.get(t)
        if fields is not None:
            obj = node.child_by_field_name(fields[0])
            member = text(node.child_by_field_name(fields[1]))
            if not member:
                return "?"
            head = self.callee(obj, ctx) if obj is not None else "?"
            return f"{head}.{member}"
        return "?"

    def doc(self, node: Node) -> str:
        return comment_doc(node)

    def signature(self, node: Node) -> str:
        body = node.child_by_field_name("body")
        end = body.start_byte if body is not None else node.end_byte
        raw = (node.text or b"")[: end - node.start_byte].decode("utf-8", "replace")
        raw = self.LINE_COMMENT.sub("", raw)
        sig = _SPACE.sub(" ", raw).strip().rstrip(":{").strip()
        return sig[:SIGNATURE_MAX]

    def make_def(self, name: str, kind: str, node: Node, **extra: object) -> Def:
        return Def(
            name=name,
            kind=kind,
            start_line=node.start_point.row + 1,
            end_line=node.end_point.row + 1,
            start_byte=node.start_byte,
            end_byte=node.end_byte,
            signature=self.signature(node),
            doc=self.doc(node),
            **extra,  # type: ignore[arg-type]
        )

    def add_bases(self, out: Extraction, nodes: list[Node], ctx: FileContext) -> None:
        """Inheritance refs owned by the definition appended last."""
        owner = len(out.defs) - 1
        for n in nodes:
            name = self.callee(n, ctx)
            if name and not name.startswith("?"):
                out.refs.append(Ref("inherit", name, n.start_point.row + 1, n.start_byte, owner=owner))

    def bind(self, out: Extraction, alias: str, target: str, node: Node) -> None:
        if alias and target:
            out.bindings.append(Binding(alias, target, node.start_point.row + 1))
            out.refs.append(Ref("import", target, node.start_point.row + 1, node.start_byte))


_COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment"})
_SKIP_BEFORE = frozenset({"attribute_item", "decorator"})
_COMMENT_MARKS = re.compile(r"^\s*(/{2,}!?|/\*+!?|\*+/?|#+)\s?")


def comment_doc(node: Node) -> str:
    """First line of the comment block right above `node` (or above its `export`)."""
    anchor = node.parent if node.parent is not None and node.parent.type == "export_statement" else node
    prev = anchor.prev_named_sibling
    while prev is not None and prev.type in _SKIP_BEFORE:
        prev = prev.prev_named_sibling
    block: list[Node] = []
    line = anchor.start_point.row
    while prev is not None and prev.type in _COMMENT_TYPES and prev.end_point.row >= line - 1:
        block.append(prev)
        line = prev.start_point.row
        prev = prev.prev_named_sibling
    for comment in reversed(block):
        for raw in text(comment).splitlines():
            cleaned = _COMMENT_MARKS.sub("", raw).strip().rstrip("*/").strip()
            if cleaned:
                return cleaned[:SIGNATURE_MAX]
    return ""


def _nest(out: Extraction) -> None:
    """Set each def's parent and local name, and each ref's enclosing def, by span."""
    order = sorted(range(len(out.defs)), key=lambda i: (out.defs[i].start_byte, -out.defs[i].end_byte))
    stack: list[int] = []
    for i in order:
        d = out.defs[i]
        while stack and out.defs[stack[-1]].end_byte <= d.start_byte:
            stack.pop()
        d.parent = stack[-1] if stack else None
        stack.append(i)
    for i in order:  # parents come before children in this order
        d = out.defs[i]
        prefix = _prefix(out.defs[d.parent]) if d.parent is not None else []
        d.local = [*(d.container if d.container is not None else prefix), d.name]
        if d.kind == "function" and _in_class(out.defs, d):
            d.kind = "method"
    _attach_refs(out, order)
    _attach_hints(out, order)


def _prefix(parent: Def) -> list[str]:
    """What a child's name starts with: its parent's name, or for an `impl` its type's."""
    if parent.container_only:
        return list(parent.container or [])
    return parent.local


def _in_class(defs: list[Def], d: Def) -> bool:
    return d.container is not None or (d.parent is not None and defs[d.parent].kind in CLASS_KINDS)


def _attach_refs(out: Extraction, order: list[int]) -> None:
    """Each ref's enclosing def; inside a Go method, the receiver variable becomes `self`."""
    refs = sorted(out.refs, key=lambda r: r.byte)
    for ref, src in zip(refs, _innermost(out.defs, order, [r.byte for r in refs]), strict=True):
        ref.src = ref.owner if ref.owner is not None else src
        receiver = out.defs[ref.src].receiver if ref.src is not None else ""
        if receiver and (ref.name == receiver or ref.name.startswith(receiver + ".")):
            ref.name = "self" + ref.name[len(receiver) :]


def _attach_hints(out: Extraction, order: list[int]) -> None:
    """A hint's scope: its owner (a parameter's function) or the innermost enclosing def."""
    hints = sorted(out.hints, key=lambda h: h.byte)
    for hint, src in zip(hints, _innermost(out.defs, order, [h.byte for h in hints]), strict=True):
        if src is not None and out.defs[src].start_byte == hint.byte:  # `const f = () => …` binds f outside f
            src = out.defs[src].parent
            while src is not None and out.defs[src].container_only:
                src = out.defs[src].parent
        hint.src = hint.owner if hint.owner is not None else src


def _innermost(defs: list[Def], order: list[int], positions: list[int]) -> list[int | None]:
    """For ascending byte positions, the innermost def (not an `impl` block) around each."""
    found: list[int | None] = []
    stack: list[int] = []
    pos = 0
    for byte in positions:
        while pos < len(order) and defs[order[pos]].start_byte <= byte:
            d = defs[order[pos]]
            while stack and defs[stack[-1]].end_byte <= d.start_byte:
                stack.pop()
            stack.append(order[pos])
            pos += 1
        while stack and defs[stack[-1]].end_byte <= byte:
            stack.pop()
        found.append(next((i for i in reversed(stack) if not defs[i].container_only), None))
    return found


def _error_lines(root: Node, limit: int = 20) -> list[int]:
    """Lines of ERROR and MISSING nodes, descending only into subtrees that hold errors."""
    lines: list[int] = []
    todo = [root]
    while todo and len(lines) < limit:
        node = todo.pop()
        if node.is_error or node.is_missing:
            lines.append(node.start_point.row + 1)
            continue
        todo.extend(c for c in reversed(node.children) if c.has_error or c.is_missing)
    return sorted(set(lines))
