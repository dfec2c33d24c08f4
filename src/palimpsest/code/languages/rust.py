"""Rust: modules follow the crate's file layout; `impl` blocks name their methods.

A crate is the folder of a `Cargo.toml`; `src/lib.rs` and `src/main.rs` are its root
module, `src/geo.rs` and `src/geo/mod.rs` its module `geo` (qualnames read
`mycrate::geo::Point::new`). Paths starting with `crate::`, `self::` or `super::` are made
absolute while extracting. Each `impl` block is kept as a symbol of kind `impl` (so an
outline shows it) whose methods are named by the type; `impl Trait for Type` is an
inheritance edge from the type to the trait, as is a supertrait bound.
"""

from __future__ import annotations

from typing import ClassVar

import tree_sitter_rust
from tree_sitter import Node

from ..extract import Extractor, FileContext, text
from ..model import Extraction

QUERY = """
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(union_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(trait_item name: (type_identifier) @name) @def.trait
(type_item name: (type_identifier) @name) @def.type
(mod_item name: (identifier) @name body: (declaration_list)) @def.module
(macro_definition name: (identifier) @name) @def.macro
(impl_item type: (_) @name) @def.impl
(call_expression function: (_) @callee) @call
(macro_invocation macro: (_) @callee) @call
(use_declaration) @import
(let_declaration pattern: (identifier) @target) @hint.local
(let_declaration pattern: (identifier) @target type: (_) @type) @hint.annotated
(let_declaration pattern: (identifier) @target value: [(call_expression function: (_) @ctor) (struct_expression name: (_) @ctor)]) @hint.assigned
"""

_PATH_HEADS = frozenset({"crate", "self", "super"})


class RustExtractor(Extractor):
    name = "rust"
    QUERY = QUERY
    ATTRIBUTE_TYPES: ClassVar[dict[str, tuple[str, str]]] = {"field_expression": ("value", "field")}
    IDENT_TYPES = frozenset({"identifier", "type_identifier", "field_identifier"})
    member_sep = "::"

    def language(self) -> object:
        return tree_sitter_rust.language()

    def callee(self, node: Node, ctx: FileContext) -> str:
        if node.type in ("scoped_identifier", "scoped_type_identifier"):
            return ".".join(_absolute(_path(node), ctx))
        if node.type in ("generic_function", "generic_type"):
            inner = node.child_by_field_name("function") or node.child_by_field_name("type")
            return self.callee(inner, ctx) if inner is not None else "?"
        return super().callee(node, ctx)

    def on_def(self, kind: str, node: Node, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        if kind != "impl":
            super().on_def(kind, node, caps, ctx, out)
            if kind == "function":
                self._signature_hints(node, ctx, out)
            if kind == "trait":
                bounds = node.child_by_field_name("bounds")
                self.add_bases(out, bounds.named_children if bounds is not None else [], ctx)
            return
        type_name = self.callee(caps["name"][0], ctx).rsplit(".", 1)[-1]
        trait = node.child_by_field_name("trait")
        trait_name = self.callee(trait, ctx).rsplit(".", 1)[-1] if trait is not None else ""
        label = f"impl {trait_name} for {type_name}" if trait_name else f"impl {type_name}"
        out.defs.append(self.make_def(label, "impl", node, container=[type_name], container_only=True))
        if trait is not None:
            self.add_bases(out, [trait], ctx)

    def on_hint(self, kind: str, node: Node, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        name = text(caps["target"][0])
        type_node = caps["type"][0] if kind == "annotated" else caps["ctor"][0]
        self.hint(out, name, self.type_name(type_node, ctx) if kind == "annotated" else self.callee(type_node, ctx), node)

    def type_name(self, node: Node | None, ctx: FileContext) -> str:
        while node is not None and node.type in ("reference_type", "pointer_type", "generic_type"):
            node = node.child_by_field_name("type")
        return super().type_name(node, ctx)

    def _signature_hints(self, node: Node, ctx: FileContext, out: Extraction) -> None:
        owner = len(out.defs) - 1
        params = node.child_by_field_name("parameters")
        for param in params.named_children if params is not None else []:
            pattern = param.child_by_field_name("pattern")
            if param.type == "parameter" and pattern is not None and pattern.type == "identifier":
                self.hint(out, text(pattern), self.type_name(param.child_by_field_name("type"), ctx), node, owner)
        returned = self.type_name(node.child_by_field_name("return_type"), ctx)
        if returned == "Self":  # inside `impl Point`: the impl's type
            impl = next((d for d in reversed(out.defs[:-1]) if d.container_only and d.start_byte <= node.start_byte < d.end_byte), None)
            returned = impl.container[0] if impl is not None and impl.container else ""
        self.hint(out, "->", returned, node, owner)

    def on_import(self, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        node = caps["import"][0]
        argument = node.child_by_field_name("argument")
        if argument is not None:
            self._use(argument, [], ctx, node, out)

    def _use(self, tree: Node, prefix: list[str], ctx: FileContext, node: Node, out: Extraction) -> None:
        t = tree.type
        if t in ("identifier", "scoped_identifier", "crate", "self", "super"):
            path = _absolute(prefix + _path(tree), ctx)
            if t == "self" and prefix:  # `use a::b::{self}` binds `b`
                path = _absolute(prefix, ctx)
            self.bind(out, path[-1] if path else "", ".".join(path), node)
        elif t == "use_as_clause":
            path = _absolute(prefix + _path(tree.child_by_field_name("path")), ctx)
            self.bind(out, text(tree.child_by_field_name("alias")), ".".join(path), node)
        elif t == "scoped_use_list":
            base = tree.child_by_field_name("path")
            inner = prefix + (_path(base) if base is not None else [])
            self._use(tree.child_by_field_name("list"), inner, ctx, node, out)  # type: ignore[arg-type]
        elif t == "use_list":
            for item in tree.named_children:
                self._use(item, prefix, ctx, node, out)
        elif t == "use_wildcard":
            base = tree.named_children[0] if tree.named_children else None
            self.bind(out, "*", ".".join(_absolute(prefix + (_path(base) if base is not None else []), ctx)), node)


def _path(node: Node | None) -> list[str]:
    """`crate::a::B` → ['crate', 'a', 'B'] (heads `crate`, `self`, `super` kept as words)."""
    if node is None:
        return []
    if node.type in ("scoped_identifier", "scoped_type_identifier"):
        return _path(node.child_by_field_name("path")) + [text(node.child_by_field_name("name"))]
    if node.type == "generic_type":
        return _path(node.child_by_field_name("type"))
    return [text(node)]


def _absolute(parts: list[str], ctx: FileContext) -> list[str]:
    if not parts or parts[0] not in _PATH_HEADS:
        return [p for p in parts if p]
    module = ctx.module.split(".") if ctx.module else []
    if parts[0] == "crate":
        return module[:1] + parts[1:]
    if parts[0] == "self":
        return module + parts[1:]
    ups = 0
    while ups < len(parts) and parts[ups] == "super":
        ups += 1
    return module[: max(1, len(module) - ups)] + parts[ups:]


def module_name(path: str, crates: dict[str, str]) -> tuple[str, bool]:
    """`mycrate/src/geo/mod.rs` → `mycrate::geo`; `crates` maps a Cargo folder to its crate name."""
    folder = max((d for d in crates if d == "" or path.startswith(d + "/")), key=len, default=None)
    crate = crates.get(folder, "crate") if folder is not None else "crate"
    rel = path[len(folder) + 1 :] if folder else path
    rel = rel.removeprefix("src/")
    parts = rel[:-3].split("/") if rel.endswith(".rs") else rel.split("/")
    is_package = parts[-1] in ("mod", "lib", "main")
    if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ("lib", "main")):
        parts = parts[:-1]
    return "::".join([crate, *parts]), is_package
