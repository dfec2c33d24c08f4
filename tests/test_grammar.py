"""JSON schema → GBNF, checked with an independent GBNF implementation (xgrammar):
generated valid instances are accepted, prose and near-miss JSON rejected, every accepted
string validates against the schema, and xgrammar's own schema compiler agrees."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from palimpsest.distill import DISTILL_SCHEMA
from palimpsest.errors import InvalidInput
from palimpsest.grammar import literal, schema_to_gbnf
from palimpsest.llm import _for_grammar
from palimpsest.summaries import SUMMARY_SCHEMA
from palimpsest.toolsynth import ANSWER_SCHEMA, SYNTH_SCHEMA

xgr = pytest.importorskip("xgrammar")
accepts = xgr.testing._is_grammar_accept_string

SCHEMAS: dict[str, dict[str, Any]] = {
    "distill": DISTILL_SCHEMA,
    "summary": SUMMARY_SCHEMA,
    "synth": SYNTH_SCHEMA,
    "answer": ANSWER_SCHEMA,
    "nested": {"type": "object", "required": ["user", "tags"], "properties": {
        "user": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 12}, "age": {"type": "integer", "minimum": 0},
            "score": {"type": "number"}, "admin": {"type": "boolean"}}},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 3},
        "note": {"type": ["string", "null"]}, "weight": {"type": "number", "minimum": 0, "maximum": 1}}},
    "all-optional": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "boolean"}, "z": {"const": "k"}}},
    "anyof-ref": {"$defs": {"pt": {"type": "object", "required": ["x", "y"], "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}}},
                  "type": "object", "required": ["shape"], "properties": {
                      "shape": {"anyOf": [{"$ref": "#/$defs/pt"}, {"type": "array", "items": {"$ref": "#/$defs/pt"}, "maxItems": 4}]},
                      "when": {"type": "string", "format": "date-time"}}},
}
COMPILED = {name: xgr.Grammar.from_ebnf(schema_to_gbnf(_for_grammar(s))) for name, s in SCHEMAS.items()}  # as the client sends it
VALIDATORS = {name: Draft202012Validator(s) for name, s in SCHEMAS.items()}


# -- valid instances, in schema order ----------------------------------------------
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


def instances(schema: Any, root: dict[str, Any]) -> st.SearchStrategy[Any]:
    if schema is True or schema == {}:
        return st.none()
    if "$ref" in schema:
        target: Any = root
        for part in schema["$ref"][2:].split("/"):
            target = target[part]
        return instances(target, root)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([instances(s, root) for s in schema["anyOf"]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([instances({**schema, "type": k}, root) for k in kind])
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))

        @st.composite
        def obj(draw: Any) -> dict[str, Any]:
            out = {}
            for k, v in props.items():  # schema order: the order the grammar asks for
                if k in required or draw(st.booleans()):
                    out[k] = draw(instances(v, root))
            return out

        return obj()
    if kind == "array":
        return st.lists(instances(schema.get("items", {}), root), min_size=schema.get("minItems", 0), max_size=min(schema.get("maxItems", 4), 4))
    if kind == "string":
        if schema.get("format") == "date-time":
            return st.datetimes().map(lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}Z")
        lo, hi = schema.get("minLength", 0), min(schema.get("maxLength", 12), 12)
        text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=lo, max_size=hi)
        pattern = schema.get("pattern")  # not in the grammar (the client leaves it out): what the validator asks of a value
        return text.filter(lambda t: re.search(pattern, t) is not None) if pattern else text
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum", -10**15), max_value=10**15)  # the grammar bounds digits (16)
    if kind == "number":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        # the grammar bounds digits (16 before the point, 20 after, and only a negative exponent in 0..1)
        return st.floats(min_value=lo if lo is not None else -1e9, max_value=hi if hi is not None else 1e9, allow_nan=False).map(lambda x: round(x, 9))
    if kind == "boolean":
        return st.booleans()
    return st.none()


def spellings(value: Any) -> list[str]:
    return [json.dumps(value), json.dumps(value, separators=(",", ":")), json.dumps(value, ensure_ascii=False, indent=2)]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_generated_valid_instances_are_accepted(name: str) -> None:
    schema = SCHEMAS[name]

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(instances(schema, schema))
    def check(value: Any) -> None:
        assert VALIDATORS[name].is_valid(value)
        for text in spellings(value):
            assert accepts(COMPILED[name], text), text

    check()


# -- near misses -------------------------------------------------------------------
def near_misses(value: Any) -> list[str]:
    text = json.dumps(value)
    out = ["Sure! Here is the JSON you asked for.", "```json\n" + text + "\n```", "Answer: " + text, text + " Hope that helps!",
           text[:-1], text + "}", text.replace('"', "'"), "", "null", "[]"]
    if isinstance(value, dict) and value:
        first = next(iter(value))
        out.append(json.dumps({k: v for k, v in value.items() if k != first}))  # a property missing (or required gone)
        out.append(text[:-1] + ', "unexpected": 1}')
        out.append(text[:-1] + ",}")
        out.append(json.dumps({**value, first: {"wrong": "type"}}))
        out.append(text.replace("true", "True").replace("null", "None"))
    return out


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_prose_and_near_misses_are_rejected(name: str) -> None:
    schema = SCHEMAS[name]

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(instances(schema, schema))
    def check(value: Any) -> None:
        for text in near_misses(value):
            if accepts(COMPILED[name], text):
                # stricter than needed is fine; accepting something invalid never is
                assert VALIDATORS[name].is_valid(json.loads(text)), text
                assert text in spellings(json.loads(text)) or json.loads(text) != value

    check()


def test_key_cases_rejected() -> None:
    g = COMPILED["distill"]
    good = {"summary": "s", "facts": [{"text": "t", "kind": "fact", "entities": [], "valid_from": None}], "corrections": [], "tasks": []}
    assert accepts(g, json.dumps(good))
    assert not accepts(g, json.dumps({**good, "facts": [{"text": "t", "kind": "rumour", "entities": [], "valid_from": None}]}))
    assert not accepts(g, json.dumps({**good, "summary": ""}))  # minLength 1
    assert not accepts(g, json.dumps({k: v for k, v in good.items() if k != "tasks"}))
    assert not accepts(g, json.dumps(good)[:-5])  # cut off at max tokens
    assert not accepts(g, json.dumps(good) + "\n\nLet me know!")


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_agrees_with_xgrammars_own_schema_compiler(name: str) -> None:
    schema = SCHEMAS[name]
    theirs = xgr.Grammar.from_json_schema(json.dumps(schema), any_whitespace=True, strict_mode=True)

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(instances(schema, schema))
    def check(value: Any) -> None:
        text = json.dumps(value)
        if accepts(theirs, text):  # theirs refuses some valid strings (e.g. "\u001f" under minLength)
            assert accepts(COMPILED[name], text)
        for bad in near_misses(value):
            if not _valid(name, bad):  # what the schema rejects, both grammars reject
                assert not accepts(theirs, bad) and not accepts(COMPILED[name], bad), bad

    check()


def _valid(name: str, text: str) -> bool:
    try:
        return VALIDATORS[name].is_valid(json.loads(text))
    except ValueError:
        return False


def test_every_accepted_string_validates_over_a_fuzzed_corpus() -> None:

    @settings(max_examples=200, deadline=None)
    @given(st.text(alphabet='{}[]":,0123456789.-eE abcnulltrufs\n', max_size=40) | st.builds(json.dumps, st.recursive(
        st.none() | st.booleans() | st.integers() | _TEXT, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(["user", "tags", "name", "note"]), c, max_size=3))))
    def check(text: str) -> None:
        if accepts(COMPILED["nested"], text):
            assert VALIDATORS["nested"].is_valid(json.loads(text)), text

    check()


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^a+$"}, {"type": "integer", "minimum": 5}, {"type": "number", "maximum": 3},
    {"type": "array", "uniqueItems": True}, {"type": "string", "format": "email"}, {"$ref": "https://x/y.json"},
    {"type": "object", "required": ["a"], "properties": {}}, {"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 2}]},
])
def test_keywords_it_cannot_enforce_are_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        schema_to_gbnf(schema)


@pytest.mark.parametrize("text,ok", [("1.19e-07", True), ("0.5", True), ("1", True), ("1.0", True), ("0e-3", True),
                                     ("1.5", False), ("2e-0", False), ("1e3", False), ("-0.1", False), ("9.9e-1", True)])
def test_unit_interval(text: str, ok: bool) -> None:
    g = xgr.Grammar.from_ebnf(schema_to_gbnf({"type": "number", "minimum": 0, "maximum": 1}))
    assert accepts(g, text) is ok
    if ok:
        assert 0 <= json.loads(text) <= 1


def test_literal_escapes() -> None:
    g = xgr.Grammar.from_ebnf(f"root ::= {literal(chr(34) + 'a' + chr(92) + chr(10) + 'é')}")
    assert accepts(g, '"a\\\né')
