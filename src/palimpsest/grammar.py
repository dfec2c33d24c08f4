"""JSON schema → GBNF: the grammar a llama.cpp server constrains its output with.

`schema_to_gbnf(schema)` compiles the subset of JSON Schema that typed memories use:
objects (properties, required / optional), arrays (items, minItems, maxItems), strings
(enum, const, minLength / maxLength, format date-time / date), numbers, integers,
booleans, null, `enum` / `const` of any JSON value, `anyOf` / `oneOf`, type lists
(`["string", "null"]`), nesting and local `$ref`s (`#/$defs/…`). A date format constrains
the shape (`2026-03-04T10:15Z`), not the calendar: JSON Schema treats `format` as an
annotation unless a checker is asked for, and so does `palimpsest.llm`.

The contract is one-sided: every string the grammar accepts is JSON that validates
against the schema. The grammar may be stricter than the schema — properties come in
the schema's order, no property outside `properties` is allowed, numbers have at most 16
digits before the point and 20 after (a number in 0..1 only a negative exponent) — because a model only has to be able to say every valid *value*, not every
spelling of it. Keywords the grammar cannot enforce (`pattern`, `minimum` other than 0,
`uniqueItems`, …) are refused with `InvalidInput` rather than silently ignored, which
would let an accepted string break the schema. Whitespace between tokens is bounded
(at most one newline and 20 spaces or tabs) so a model cannot pad forever.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import InvalidInput

PRIMITIVES = {
    "ws": '( " " | "\\n" [ \\t]{0,20} )?',
    "boolean": '"true" | "false"',
    "null": '"null"',
    "char": '[^"\\\\\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    # one code point in bounded strings: an escaped surrogate pair is one unit, a lone half
    # none (JSON Schema counts code points; the grammar would count two)
    "bchar": '[^"\\\\\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-cA-CefEF] [0-9a-fA-F]{3} | "u" [dD] [0-7] [0-9a-fA-F]{2} | "u" [dD] [89abAB] [0-9a-fA-F]{2} "\\\\u" [dD] [c-fC-F] [0-9a-fA-F]{2})',
    "string": '"\\"" char* "\\""',
    "integer": '"-"? ("0" | [1-9] [0-9]{0,15})',
    "uinteger": '"0" | [1-9] [0-9]{0,15}',
    "number": '"-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,20})? ([eE] [-+]? [0-9]{1,3})?',
    "unumber": '("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,20})? ([eE] [-+]? [0-9]{1,3})?',
    # 0..1: a negative exponent only makes a mantissa below 10 smaller than 1 (1.19e-07)
    "unit": '"0" ("." [0-9]{1,20})? ([eE] "-" [0-9]{1,3})? | "1" ("." "0"{1,20})? | [1-9] ("." [0-9]{1,20})? [eE] "-" "0"{0,2} [1-9] [0-9]{0,2}',
    "date": '"\\"" [0-9]{4} "-" [0-9]{2} "-" [0-9]{2} "\\""',
    "date-time": '"\\"" [0-9]{4} "-" [0-9]{2} "-" [0-9]{2} "T" [0-9]{2} ":" [0-9]{2} (":" [0-9]{2} ("." [0-9]{1,9})?)? ("Z" | [-+] [0-9]{2} ":" [0-9]{2}) "\\""',
    "value": 'object-any | array-any | string | number | boolean | null',
    "object-any": '"{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}"',
    "array-any": '"[" ws ( value ws ( "," ws value ws )* )? "]"',
}
DEPENDS = {"string": ["char"], "date": [], "value": ["object-any", "array-any", "string", "number", "boolean", "null", "ws"],
           "object-any": ["string", "value", "ws"], "array-any": ["value", "ws"]}
IGNORED = {"title", "description", "$schema", "$id", "examples", "default", "$comment", "additionalProperties", "$defs", "definitions"}
MAX_REPEAT = 1000  # larger string length bounds are refused; larger maxItems is written as open repetition


def literal(text: str) -> str:
    """A GBNF string literal matching exactly `text`."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


class _Compiler:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.rules: dict[str, str] = {}
        self.refs: dict[str, str] = {}

    def use(self, name: str) -> str:
        if name not in self.rules:
            self.rules[name] = PRIMITIVES[name]
            for dep in DEPENDS.get(name, []):
                self.use(dep)
        return name

    def add(self, hint: str, body: str) -> str:
        base = re.sub(r"[^a-zA-Z0-9-]+", "-", hint).strip("-").lower() or "r"
        for name, existing in self.rules.items():
            if existing == body and name.startswith(base):
                return name
        name, n = base, 1
        while name in self.rules or name in PRIMITIVES:
            n += 1
            name = f"{base}-{n}"
        self.rules[name] = body
        return name

    def visit(self, schema: Any, path: str) -> str:
        if schema is True or schema == {}:
            self.use("ws")
            return self.use("value")
        if not isinstance(schema, dict):
            raise InvalidInput(f"grammar: {path}: a schema must be an object")
        unknown = set(schema) - IGNORED - KNOWN
        if unknown:
            raise InvalidInput(f"grammar: {path}: cannot enforce {sorted(unknown)}")
        if "$ref" in schema:
            return self.ref(schema["$ref"], path)
        if "const" in schema:
            return self.add(path + "-const", literal(json.dumps(schema["const"], ensure_ascii=False)))
        if "enum" in schema:
            return self.add(path + "-enum", " | ".join(literal(json.dumps(v, ensure_ascii=False)) for v in schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                if key == "oneOf" and len(schema[key]) > 1:
                    # oneOf needs exactly one match; alternatives of distinct types are disjoint
                    types = [s.get("type") for s in schema[key] if isinstance(s, dict)]
                    if len(types) != len(schema[key]) or None in types or len(set(map(str, types))) != len(types):
                        raise InvalidInput(f"grammar: {path}: oneOf only of alternatives of distinct types")
                alts = [self.visit(s, f"{path}-{i}") for i, s in enumerate(schema[key])]
                return self.add(path + "-alt", " | ".join(alts))
        kind = schema.get("type")
        if isinstance(kind, list):
            alts = [self.visit({**schema, "type": k}, f"{path}-{k}") for k in kind]
            return self.add(path + "-alt", " | ".join(alts))
        return self.typed(kind, schema, path)

    def ref(self, ref: str, path: str) -> str:
        if ref in self.refs:
            return self.refs[ref]
        if not ref.startswith("#/"):
            raise InvalidInput(f"grammar: {path}: only local $refs (#/...) are supported")
        target: Any = self.root
        for part in ref[2:].split("/"):
            if not isinstance(target, dict) or part not in target:
                raise InvalidInput(f"grammar: {path}: $ref {ref} not found")
            target = target[part]
        name = self.add(ref[2:].replace("/", "-"), "placeholder")
        self.refs[ref] = name
        self.rules[name] = self.visit(target, ref[2:].replace("/", "-") + "-body")
        return name

    def typed(self, kind: Any, s: dict[str, Any], path: str) -> str:
        if kind == "object":
            return self.obj(s, path)
        if kind == "array":
            return self.array(s, path)
        if kind == "string":
            return self.string(s, path)
        if kind in ("integer", "number"):
            return self.number(kind, s, path)
        if kind in ("boolean", "null"):
            return self.use(kind)
        if kind is None:
            self.use("ws")
            return self.use("value")
        raise InvalidInput(f"grammar: {path}: unknown type {kind!r}")

    def obj(self, s: dict[str, Any], path: str) -> str:
        self.use("ws")
        props: dict[str, Any] = s.get("properties", {})
        required = [k for k in props if k in set(s.get("required", []))]
        missing = set(s.get("required", [])) - set(props)
        if missing:
            raise InvalidInput(f"grammar: {path}: required {sorted(missing)} not in properties")
        kv = {k: f'{literal(json.dumps(k, ensure_ascii=False))} ws ":" ws {self.visit(v, f"{path}-{k}")}' for k, v in props.items()}
        optional = [k for k in props if k not in required]
        if required:
            body = ' ws "," ws '.join(kv[k] for k in required)
            body += "".join(f' ( ws "," ws {kv[k]} )?' for k in optional)
            return self.add(path, f'"{{" ws {body} ws "}}"')
        if not optional:
            return self.add(path, '"{" ws "}"')
        # No property is required: any ordered subset, with commas only between members.
        tails: list[str] = [""] * (len(optional) + 1)
        for i in range(len(optional) - 1, -1, -1):
            rest = "".join(f' ( ws "," ws {kv[k]} )?' for k in optional[i + 1:])
            tails[i] = f"{kv[optional[i]]}{rest}"
        return self.add(path, f'"{{" ws ( {" | ".join(f"( {t} )" for t in tails[:-1])} )? ws "}}"')

    def array(self, s: dict[str, Any], path: str) -> str:
        self.use("ws")
        item = self.visit(s.get("items", {}), path + "-item")
        lo, hi = int(s.get("minItems", 0)), s.get("maxItems")
        if hi is not None and int(hi) < lo:
            raise InvalidInput(f"grammar: {path}: maxItems below minItems")
        more = f'( ws "," ws {item} )'
        if hi is None or int(hi) > MAX_REPEAT:
            rest = f"{more}{{{max(lo - 1, 0)},}}" if lo > 1 else f"{more}*"
        else:
            rest = f"{more}{{{max(lo - 1, 0)},{int(hi) - 1}}}" if int(hi) > 1 else ""
        inner = f"{item} {rest}".strip()
        if hi is not None and int(hi) == 0:
            return self.add(path, '"[" ws "]"')
        body = f'"[" ws {inner} ws "]"' if lo >= 1 else f'"[" ws ( {inner} )? ws "]"'
        return self.add(path, body)

    def string(self, s: dict[str, Any], path: str) -> str:
        fmt = s.get("format")
        if fmt in ("date", "date-time"):
            if "minLength" in s or "maxLength" in s:
                raise InvalidInput(f"grammar: {path}: format with length bounds")
            return self.use(fmt)
        if fmt is not None:
            raise InvalidInput(f"grammar: {path}: cannot enforce format {fmt!r}")
        lo, hi = int(s.get("minLength", 0)), s.get("maxLength")
        if lo == 0 and hi is None:
            return self.use("string")
        self.use("bchar")
        if hi is not None and int(hi) < lo:
            raise InvalidInput(f"grammar: {path}: maxLength below minLength")
        if lo > MAX_REPEAT or (hi is not None and int(hi) > MAX_REPEAT):
            raise InvalidInput(f"grammar: {path}: string length bounds above {MAX_REPEAT} cannot be enforced")
        reps = f"{{{lo},}}" if hi is None else f"{{{lo},{int(hi)}}}"
        return self.add(path, f'"\\"" bchar{reps} "\\""')

    def number(self, kind: str, s: dict[str, Any], path: str) -> str:
        lo, hi = s.get("minimum"), s.get("maximum")
        if kind == "number" and lo == 0 and hi == 1:
            return self.use("unit")
        if hi is not None or lo not in (None, 0):
            raise InvalidInput(f"grammar: {path}: only minimum 0 (or 0..1 for numbers) can be enforced")
        return self.use(("u" if lo == 0 else "") + kind)


KNOWN = {"type", "properties", "required", "items", "minItems", "maxItems", "enum", "const", "anyOf", "oneOf", "$ref",
         "minLength", "maxLength", "format", "minimum", "maximum"}


def schema_to_gbnf(schema: dict[str, Any]) -> str:
    """The GBNF grammar (root rule `root`) of JSON documents valid against `schema`."""
    c = _Compiler(schema)
    top = c.visit(schema, "root")
    if top != "root":
        c.rules["root"] = top
    lines = [f"root ::= {c.rules['root']}"]
    lines += [f"{name} ::= {body}" for name, body in c.rules.items() if name != "root"]
    return "\n".join(lines) + "\n"
