"""Python: modules are dotted package paths; `import` and `from … import` bind names."""

from __future__ import annotations

import re
from typing import ClassVar

import tree_sitter_python
from tree_sitter import Node

from ..extract import Extractor, FileContext, text
from ..model import Binding, Extraction, Ref

QUERY = """
(function_definition name: (identifier) @name) @def.function
(class_definition name: (identifier) @name) @def.class
(call function: (_) @callee) @call
(decorator (identifier) @callee) @call
(decorator (attribute) @callee) @call
(import_statement) @import
(import_from_statement) @import
(assignment left: (_) @target type: (type) @type) @hint.annotated
(assignment left: (_) @target right: (call function: (_) @ctor)) @hint.assigned
(assignment left: (identifier) @target) @hint.local
(pattern_list (identifier) @target) @hint.local
(for_statement left: (identifier) @target) @hint.local
(with_item value: (as_pattern alias: (as_pattern_target (identifier) @target))) @hint.local
"""


class PythonExtractor(Extractor):
    name = "python"
    QUERY = QUERY
    ATTRIBUTE_TYPES: ClassVar[dict[str, tuple[str, str]]] = {"attribute": ("object", "attribute")}
    SELF_TYPES = frozenset()  # `self` is an ordinary identifier in Python; see callee()
    LINE_COMMENT = re.compile(r"#[^\n]*")

    def language(self) -> object:
        return tree_sitter_python.language()

    def callee(self, node: Node, ctx: FileContext) -> str:
        if node.type == "call":  # super().method(): the call to super() is the receiver
            fn = node.child_by_field_name("function")
            return "super" if text(fn) == "super" else "?"
        if node.type == "identifier" and text(node) == "super":
            return ""  # the bare super() call; its `super().x` use is the edge that matters
        name = super().callee(node, ctx)
        head, _, rest = name.partition(".")
        if head == "cls" and rest:
            return "self." + rest
        return name

    def on_def(self, kind: str, node: Node, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        super().on_def(kind, node, caps, ctx, out)
        if kind == "function":
            self._parameter_hints(node, ctx, out)
        if kind == "class":
            bases = node.child_by_field_name("superclasses")
            if bases is not None:
                self.add_bases(out, [b for b in bases.named_children if b.type in ("identifier", "attribute")], ctx)

    def on_hint(self, kind: str, node: Node, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        target = caps["target"][0]
        if target.type == "identifier":
            name = text(target)
        elif target.type == "attribute" and text(target.child_by_field_name("object")) == "self":
            name = "self." + text(target.child_by_field_name("attribute"))
        else:
            return
        if kind == "annotated":
            self.hint(out, name, self.type_name(caps["type"][0], ctx), node)
        elif node.child_by_field_name("type") is None:  # `x: T = make()` is the annotated hint's
            self.hint(out, name, self.callee(caps["ctor"][0], ctx), node)

    def _parameter_hints(self, node: Node, ctx: FileContext, out: Extraction) -> None:
        params = node.child_by_field_name("parameters")
        owner = len(out.defs) - 1
        for param in params.named_children if params is not None else []:
            plain = (
                param if param.type == "identifier" else param.child_by_field_name("name") if param.type == "default_parameter" else None
            )
            if param.type in ("list_splat_pattern", "dictionary_splat_pattern") and param.named_children:
                plain = param.named_children[0]
            if plain is not None:
                self.local(out, text(plain), node, owner)
            if param.type in ("typed_parameter", "typed_default_parameter"):
                name_node = param.child_by_field_name("name") or param.named_children[0]
                if name_node.type == "identifier":
                    self.hint(out, text(name_node), self.type_name(param.child_by_field_name("type"), ctx), node, owner)
        self.hint(out, "->", self.type_name(node.child_by_field_name("return_type"), ctx), node, owner)

    def type_name(self, node: Node | None, ctx: FileContext) -> str:
        """`Foo`, `mod.Foo`, `"Foo"`, `Foo | None`, `Optional[Foo]` → the class; else ""."""
        if node is None:
            return ""
        if node.type == "type" and node.named_children:
            return self.type_name(node.named_children[0], ctx)
        if node.type == "string":
            content = "".join(text(c) for c in node.named_children if c.type == "string_content")
            return content if content.replace(".", "").replace("_", "").isalnum() else ""
        if node.type == "binary_operator":  # X | None
            sides = [node.child_by_field_name("left"), node.child_by_field_name("right")]
            real = [n for n in sides if n is not None and n.type != "none"]
            return self.type_name(real[0], ctx) if len(real) == 1 else ""
        if node.type == "generic_type" and node.named_children and text(node.named_children[0]) == "Optional":
            inner = node.named_children[-1]
            return self.type_name(inner.named_children[0], ctx) if inner.named_children else ""
        if node.type in ("identifier", "attribute"):
            return super().type_name(node, ctx)
        return ""

    def doc(self, node: Node) -> str:
        body = node.child_by_field_name("body")
        first = body.named_children[0] if body is not None and body.named_children else None
        if first is None or first.type != "expression_statement" or not first.named_children:
            return ""
        string = first.named_children[0]
        if string.type != "string":
            return ""
        content = "".join(text(c) for c in string.named_children if c.type == "string_content")
        return next((line.strip() for line in content.splitlines() if line.strip()), "")[:240]

    def on_import(self, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        node = caps["import"][0]
        if node.type == "import_statement":
            for item in node.named_children:
                self._import_module(item, node, out)
            return
        base = self._from_module(node.child_by_field_name("module_name"), ctx)
        if base is None:
            return
        names = node.children_by_field_name("name")
        if any(c.type == "wildcard_import" for c in node.named_children):
            self.bind(out, "*", base, node)
        for item in names:
            if item.type == "aliased_import":
                original = text(item.child_by_field_name("name"))
                alias = text(item.child_by_field_name("alias"))
            else:
                original = alias = text(item)
            self.bind(out, alias, f"{base}.{original}" if base else original, node)

    def _import_module(self, item: Node, node: Node, out: Extraction) -> None:
        if item.type == "aliased_import":
            self.bind(out, text(item.child_by_field_name("alias")), text(item.child_by_field_name("name")), node)
        elif item.type == "dotted_name":
            dotted = text(item)
            head = dotted.split(".")[0]  # `import a.b` binds `a`
            out.bindings.append(Binding(head, head, node.start_point.row + 1))
            out.refs.append(Ref("import", dotted, node.start_point.row + 1, node.start_byte))

    @staticmethod
    def _from_module(module: Node | None, ctx: FileContext) -> str | None:
        if module is None:
            return None
        if module.type != "relative_import":
            return text(module)
        prefix = next((c for c in module.named_children if c.type == "import_prefix"), None)
        dots = len(text(prefix))
        rest = next((text(c) for c in module.named_children if c.type == "dotted_name"), "")
        parts = ctx.module.split(".") if ctx.module else []
        if not ctx.is_package:
            parts = parts[:-1]
        if dots > 1:
            if dots - 1 > len(parts):
                return None
            parts = parts[: len(parts) - (dots - 1)]
        return ".".join([*parts, *([rest] if rest else [])])


def module_name(path: str, package_dirs: frozenset[str]) -> tuple[str, bool]:
    """`src/pkg/sub/mod.py` → (`pkg.sub.mod`, False) when `src` holds no `__init__.py`."""
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    dirs = parts[:-1] if not is_package else parts
    start = len(dirs)
    while start > 0 and "/".join(parts[:start]) in package_dirs:
        start -= 1
    return ".".join(parts[start:]), is_package
