"""Go: a package is a directory; every file in it shares one namespace.

Import paths are mapped to directories through the `go.mod` files found in the
repository (`example.com/m/pkg/util` → `pkg/util` when `go.mod` says `module
example.com/m`). Methods are named by their receiver type (`pkg/util.Point.Move`) wherever
the file defining them lies; inside a method, calls on the receiver variable are calls on
`self`. Embedded struct fields and embedded interfaces are inheritance edges, so promoted
methods resolve.
"""

from __future__ import annotations

from typing import ClassVar

import tree_sitter_go
from tree_sitter import Node

from ..extract import Extractor, FileContext, comment_doc, text
from ..model import Extraction

QUERY = """
(function_declaration name: (identifier) @name) @def.function
(method_declaration name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name) @def.type
(type_alias name: (type_identifier) @name) @def.type
(method_elem name: (field_identifier) @name) @def.method
(call_expression function: (_) @callee) @call
(import_spec) @import
(short_var_declaration left: (expression_list . (identifier) @target) right: (expression_list . (_) @value)) @hint.assigned
(var_spec name: (identifier) @target type: (_) @type) @hint.annotated
(short_var_declaration left: (expression_list (identifier) @target)) @hint.local
(range_clause left: (expression_list (identifier) @target)) @hint.local
"""

_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}


class GoExtractor(Extractor):
    name = "go"
    QUERY = QUERY
    ATTRIBUTE_TYPES: ClassVar[dict[str, tuple[str, str]]] = {
        "selector_expression": ("operand", "field"),
        "qualified_type": ("package", "name"),
    }
    IDENT_TYPES = frozenset({"identifier", "type_identifier", "field_identifier", "package_identifier"})

    def language(self) -> object:
        return tree_sitter_go.language()

    def callee(self, node: Node, ctx: FileContext) -> str:
        if node.type in ("generic_type", "parenthesized_expression", "pointer_type") and node.named_children:
            return self.callee(node.named_children[0], ctx)
        return super().callee(node, ctx)

    def on_def(self, kind: str, node: Node, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        name = text(caps["name"][0])
        if not name:
            return
        if node.type == "method_declaration":
            recv_type, recv_name = _receiver(node)
            out.defs.append(self.make_def(name, "method", node, container=[recv_type] if recv_type else None, receiver=recv_name))
            self._signature_hints(node, ctx, out)
            return
        if node.type in ("type_spec", "type_alias"):
            type_node = node.child_by_field_name("type")
            kind = _TYPE_KINDS.get(type_node.type if type_node is not None else "", "type")
            out.defs.append(self.make_def(name, kind, node))
            out.defs[-1].signature = f"type {name} {kind if kind != 'type' else text(type_node)[:80]}"
            if type_node is not None and kind != "type":
                self.add_bases(out, _embedded(type_node), ctx)
            return
        out.defs.append(self.make_def(name, kind, node))
        if node.type == "function_declaration":
            self._signature_hints(node, ctx, out)

    def type_name(self, node: Node | None, ctx: FileContext) -> str:
        while node is not None and node.type in ("pointer_type", "parameter_list", "parameter_declaration"):
            node = node.child_by_field_name("type") if node.type == "parameter_declaration" else _first(node)
        return super().type_name(node, ctx)

    def on_hint(self, kind: str, node: Node, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        name = text(caps["target"][0])
        if kind == "annotated":
            self.hint(out, name, self.type_name(caps["type"][0], ctx), node)
            return
        value = caps["value"][0]
        if value.type == "unary_expression":  # &T{...}
            value = value.child_by_field_name("operand") or value
        if value.type == "composite_literal":
            self.hint(out, name, self.type_name(value.child_by_field_name("type"), ctx), node)
        elif value.type == "call_expression":  # NewT(...): the class its result names
            self.hint(out, name, self.callee(value.child_by_field_name("function"), ctx), node)  # type: ignore[arg-type]

    def _signature_hints(self, node: Node, ctx: FileContext, out: Extraction) -> None:
        owner = len(out.defs) - 1
        params = node.child_by_field_name("parameters")
        for decl in params.named_children if params is not None else []:
            if decl.type == "parameter_declaration":
                type_name = self.type_name(decl.child_by_field_name("type"), ctx)
                for n in decl.children_by_field_name("name"):
                    self.hint(out, text(n), type_name, node, owner)
        self.hint(out, "->", self.type_name(node.child_by_field_name("result"), ctx), node, owner)

    def doc(self, node: Node) -> str:
        parent = node.parent
        if node.type in ("type_spec", "type_alias") and parent is not None and parent.type == "type_declaration":
            return comment_doc(parent)
        return comment_doc(node)

    def on_import(self, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        node = caps["import"][0]
        path = text(node.child_by_field_name("path")).strip('"`')
        if not path:
            return
        target = _package(path, ctx)
        alias_node = node.child_by_field_name("name")
        alias = text(alias_node) if alias_node is not None else _default_alias(path)
        if alias == "_":
            return
        self.bind(out, "*" if alias == "." else alias, target, node)


def _first(node: Node) -> Node | None:
    return node.named_children[0] if node.named_children else None


def _receiver(node: Node) -> tuple[str, str]:
    params = node.child_by_field_name("receiver")
    decl = next((c for c in params.named_children if c.type == "parameter_declaration"), None) if params else None
    if decl is None:
        return "", ""
    type_node = decl.child_by_field_name("type")
    while type_node is not None and type_node.type in ("pointer_type", "generic_type"):
        type_node = type_node.named_children[0] if type_node.named_children else None
    return text(type_node), text(decl.child_by_field_name("name"))


def _embedded(type_node: Node) -> list[Node]:
    found: list[Node] = []
    if type_node.type == "struct_type":
        fields = next((c for c in type_node.named_children if c.type == "field_declaration_list"), None)
        for decl in fields.named_children if fields is not None else []:
            if decl.type == "field_declaration" and decl.child_by_field_name("name") is None:
                t = decl.child_by_field_name("type")
                if t is not None:
                    found.append(t.named_children[0] if t.type == "pointer_type" and t.named_children else t)
    else:
        for elem in type_node.named_children:
            if elem.type == "type_elem":
                found.extend(c for c in elem.named_children if c.type in ("type_identifier", "qualified_type"))
    return found


def _default_alias(path: str) -> str:
    parts = path.split("/")
    if len(parts) > 1 and parts[-1].startswith("v") and parts[-1][1:].isdigit():
        parts = parts[:-1]  # example.com/m/v2 is package m
    return parts[-1].replace("-", "_").replace(".", "_")


def _package(path: str, ctx: FileContext) -> str:
    """Import path → the qnorm of its directory when a go.mod in the repository owns it."""
    best = ""
    for module_path in ctx.extra:
        if (path == module_path or path.startswith(module_path + "/")) and len(module_path) > len(best):
            best = module_path
    if not best:
        return path.replace("/", ".")
    rest = path[len(best) :].strip("/")
    directory = "/".join(p for p in (ctx.extra[best], rest) if p)
    return directory.replace("/", ".")


def module_name(path: str) -> tuple[str, bool]:
    """A Go file's module is its directory (`pkg/util/a.go` → `pkg/util`)."""
    return path.rsplit("/", 1)[0] if "/" in path else "", True
