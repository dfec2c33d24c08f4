"""JavaScript and TypeScript (and JSX / TSX): modules are file paths without extension.

`./util` imported from `src/app.ts` binds to module `src.util`, which is `src/util.ts`,
`src/util.js` or `src/util/index.ts` alike (an `index` file names its directory, as a
Python `__init__.py` does). Bare specifiers (`react`, `@scope/pkg`) name packages
outside the repository and stay unresolved. A default import binds to the member of the
same name, the usual convention; `require('./x')` assigned to a name binds like an import.
"""

from __future__ import annotations

import posixpath
from typing import ClassVar

import tree_sitter_javascript
import tree_sitter_typescript
from tree_sitter import Node

from ..extract import Extractor, FileContext, comment_doc, text
from ..model import Extraction, Ref

_COMMON = """
(function_declaration name: (identifier) @name) @def.function
(generator_function_declaration name: (identifier) @name) @def.function
(class_declaration name: (_) @name) @def.class
(method_definition name: (_) @name) @def.method
(variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @def.function
(call_expression function: (_) @callee) @call
(new_expression constructor: (_) @callee) @call
(variable_declarator name: (identifier) @target value: [(new_expression constructor: (_) @ctor) (call_expression function: (_) @ctor)]) @hint.assigned
(variable_declarator name: (identifier) @target) @hint.local
(for_in_statement left: (identifier) @target) @hint.local
(assignment_expression left: (member_expression object: (this) property: (property_identifier) @attr)
  right: (new_expression constructor: (_) @ctor)) @hint.assigned
(import_statement) @import
(export_statement source: (_)) @import
(variable_declarator name: (_) @alias
  value: (call_expression function: (identifier) @req arguments: (arguments . (string) @source))
  (#eq? @req "require")) @import
"""

_JS = (
    _COMMON
    + """
(field_definition property: (_) @name value: [(arrow_function) (function_expression)]) @def.method
"""
)

_TS = (
    _COMMON
    + """
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)]) @def.method
(public_field_definition name: (property_identifier) @attr type: (type_annotation) @type) @hint.annotated
(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(type_alias_declaration name: (_) @name) @def.type
(enum_declaration name: (_) @name) @def.enum
(method_signature name: (_) @name) @def.method
(abstract_method_signature name: (_) @name) @def.method
(function_signature name: (_) @name) @def.function
"""
)


class JavaScriptExtractor(Extractor):
    name = "javascript"
    QUERY = _JS
    ATTRIBUTE_TYPES: ClassVar[dict[str, tuple[str, str]]] = {"member_expression": ("object", "property")}
    IDENT_TYPES = frozenset({"identifier", "type_identifier", "property_identifier"})

    def language(self) -> object:
        return tree_sitter_javascript.language()

    def callee(self, node: Node, ctx: FileContext) -> str:
        if node.type in ("non_null_expression", "parenthesized_expression") and node.named_children:
            return self.callee(node.named_children[0], ctx)
        name = super().callee(node, ctx)
        return "" if name == "require" else name  # an import, recorded as one

    def on_def(self, kind: str, node: Node, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        name = text(caps["name"][0])
        if not name:
            return
        if kind == "function" and node.type == "variable_declarator":
            out.defs.append(self.make_def(name, kind, node))
            out.defs[-1].signature = self._arrow_signature(node)
            return
        out.defs.append(self.make_def(name, kind, node))
        if kind in ("class", "interface"):
            self.add_bases(out, self._bases(node), ctx)
        elif kind in ("function", "method"):
            self._signature_hints(node, ctx, out)

    def on_hint(self, kind: str, node: Node, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        name = text(caps["target"][0]) if "target" in caps else "self." + text(caps["attr"][0])
        if kind == "annotated":
            self.hint(out, name, self.type_name(caps["type"][0], ctx), node)
        else:
            self.hint(out, name, self.callee(caps["ctor"][0], ctx), node)

    def type_name(self, node: Node | None, ctx: FileContext) -> str:
        """`Foo`, `ns.Foo`, `Foo<T>`, `Foo | null` in a TypeScript annotation → the class."""
        if node is None:
            return ""
        if node.type == "type_annotation":
            return self.type_name(node.named_children[0] if node.named_children else None, ctx)
        if node.type == "union_type":
            real = [n for n in node.named_children if n.type not in ("literal_type", "predefined_type")]
            return self.type_name(real[0], ctx) if len(real) == 1 else ""
        if node.type == "generic_type":
            return self.type_name(node.child_by_field_name("name"), ctx)
        if node.type == "nested_type_identifier":
            return f"{text(node.child_by_field_name('module'))}.{text(node.child_by_field_name('name'))}"
        return text(node) if node.type == "type_identifier" else ""

    def _signature_hints(self, node: Node, ctx: FileContext, out: Extraction) -> None:
        fn = node.child_by_field_name("value") if node.type == "variable_declarator" else node
        if fn is None:
            return
        owner = len(out.defs) - 1
        params = fn.child_by_field_name("parameters")
        for param in params.named_children if params is not None else []:
            plain = (
                param if param.type == "identifier" else param.child_by_field_name("left") if param.type == "assignment_pattern" else None
            )
            if param.type == "rest_pattern" and param.named_children:
                plain = param.named_children[0]
            if plain is not None and plain.type == "identifier":  # plain JavaScript parameters
                self.local(out, text(plain), node, owner)
            pattern = param.child_by_field_name("pattern")
            if param.type not in ("required_parameter", "optional_parameter") or pattern is None or pattern.type != "identifier":
                continue
            type_name = self.type_name(param.child_by_field_name("type"), ctx)
            self.hint(out, text(pattern), type_name, node, owner)
            if any(c.type == "accessibility_modifier" for c in param.named_children):  # constructor(private g: Graph)
                self.hint(out, "self." + text(pattern), type_name, node, owner)
        self.hint(out, "->", self.type_name(fn.child_by_field_name("return_type"), ctx), node, owner)

    def _arrow_signature(self, node: Node) -> str:
        value = node.child_by_field_name("value")
        body = value.child_by_field_name("body") if value is not None else None
        end = body.start_byte if body is not None else node.end_byte
        parent = node.parent
        start = (
            parent.start_byte if parent is not None and parent.type in ("lexical_declaration", "variable_declaration") else node.start_byte
        )
        tree_text = (parent if start != node.start_byte and parent is not None else node).text or b""
        raw = tree_text[: end - start].decode("utf-8", "replace")
        return " ".join(raw.split()).rstrip("{").strip()[:240]

    def _bases(self, node: Node) -> list[Node]:
        found: list[Node] = []
        for child in node.named_children:
            if child.type == "class_heritage":
                for clause in child.named_children:
                    if clause.type == "extends_clause":
                        found.extend(clause.children_by_field_name("value"))
                    elif clause.type == "implements_clause":
                        found.extend(clause.named_children)
                    else:  # plain JavaScript: `extends EXPR` directly
                        found.append(clause)
            elif child.type == "extends_type_clause":
                found.extend(child.children_by_field_name("type"))
        return [n for n in found if n.type in ("identifier", "type_identifier", "member_expression")]

    def doc(self, node: Node) -> str:
        anchor = node
        if node.type == "variable_declarator" and node.parent is not None:
            anchor = node.parent
        return comment_doc(anchor)

    def on_import(self, caps: dict[str, list[Node]], ctx: FileContext, out: Extraction) -> None:
        node = caps["import"][0]
        if "req" in caps:
            alias = caps["alias"][0]
            target = self._module(text(caps["source"][0]).strip("'\"`"), ctx)
            if alias.type == "identifier":
                self.bind(out, text(alias), target, node)
            else:
                self._destructured(alias, target, node, out)
            return
        source = node.child_by_field_name("source")
        if source is None:
            return
        target = self._module(text(source).strip("'\"`"), ctx)
        if node.type == "export_statement":
            self._reexport(node, target, out)
            return
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        if clause is None:  # `import './side-effect'`
            out.refs.append(Ref("import", target, node.start_point.row + 1, node.start_byte))
            return
        for part in clause.named_children:
            self._clause(part, target, node, out)

    def _clause(self, part: Node, target: str, node: Node, out: Extraction) -> None:
        if part.type == "identifier":  # default import
            self.bind(out, text(part), f"{target}.{text(part)}", node)
        elif part.type == "namespace_import":
            self.bind(out, text(part.named_children[0]) if part.named_children else "", target, node)
        elif part.type == "named_imports":
            for spec in part.named_children:
                if spec.type != "import_specifier":
                    continue
                original = text(spec.child_by_field_name("name"))
                alias = text(spec.child_by_field_name("alias")) or original
                self.bind(out, alias, f"{target}.{original}", node)

    def _reexport(self, node: Node, target: str, out: Extraction) -> None:
        """`export { a as b } from './x'` binds `b` here, so importers of this module find it."""
        parts = node.named_children
        clause = next((c for c in parts if c.type == "export_clause"), None)
        namespace = next((c for c in parts if c.type == "namespace_export"), None)
        if clause is not None:
            for spec in clause.named_children:
                original = text(spec.child_by_field_name("name"))
                self.bind(out, text(spec.child_by_field_name("alias")) or original, f"{target}.{original}", node)
        elif namespace is not None:
            self.bind(out, text(namespace.named_children[0]) if namespace.named_children else "", target, node)
        else:
            self.bind(out, "*", target, node)

    def _destructured(self, pattern: Node, target: str, node: Node, out: Extraction) -> None:
        for item in pattern.named_children:
            if item.type == "shorthand_property_identifier_pattern":
                self.bind(out, text(item), f"{target}.{text(item)}", node)
            elif item.type == "pair_pattern":
                key = text(item.child_by_field_name("key"))
                value = text(item.child_by_field_name("value"))
                self.bind(out, value, f"{target}.{key}", node)

    @staticmethod
    def _module(spec: str, ctx: FileContext) -> str:
        """`./util` from `src/app.ts` → `src.util`; bare package names stay as written."""
        if not spec.startswith("."):
            return spec.replace("/", ".").lstrip("@")
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(ctx.path), spec))
        for ext in (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"):
            if joined.endswith(ext):
                joined = joined[: -len(ext)]
                break
        if joined.endswith("/index") or joined == "index":
            joined = posixpath.dirname(joined)
        return joined.replace("/", ".").strip(".")


class TypeScriptExtractor(JavaScriptExtractor):
    name = "typescript"
    QUERY = _TS

    def language(self) -> object:
        return tree_sitter_typescript.language_typescript()


class TsxExtractor(TypeScriptExtractor):
    name = "tsx"

    def language(self) -> object:
        return tree_sitter_typescript.language_tsx()


def module_name(path: str) -> tuple[str, bool]:
    """`src/util.ts` → `src/util`; `src/util/index.js` → `src/util` (a package)."""
    stem = path.rsplit(".", 1)[0]
    if stem == "index" or stem.endswith("/index"):
        return stem[: -len("index")].rstrip("/"), True
    return stem, False
