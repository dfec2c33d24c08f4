"""What a model is told about each tool (issue 19): every argument described, and the MCP
annotations true to what the tool does — a tool that can write is never read-only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory, Settings, WriteDisabled, tools
from palimpsest.server.mcp import _tool


def undescribed(schema: dict[str, Any], path: str = "") -> Iterator[str]:
    """Every argument (nested object fields and array items too) without a description."""
    for name, sub in schema.get("properties", {}).items():
        if not sub.get("description"):
            yield path + name
        yield from undescribed(sub, f"{path}{name}.")
        if isinstance(sub.get("items"), dict):
            yield from undescribed(sub["items"], f"{path}{name}[].")


def test_every_argument_of_every_tool_is_described() -> None:
    missing = {t.name: list(undescribed(t.input_schema)) for t in tools.available(True)}
    assert {n: m for n, m in missing.items() if m} == {}


def test_the_walk_finds_an_undescribed_argument() -> None:  # (the test above can fail)
    schema = {"properties": {"a": {"type": "string", "description": "x"},
                             "m": {"type": "array", "description": "y", "items": {"properties": {"b": {"type": "string"}}}}}}
    assert list(undescribed(schema)) == ["m[].b"]


def test_memory_search_says_it_is_hybrid() -> None:
    description = tools.get("memory_search", True).description
    assert "hybrid" in description and "keyword search (mode=ranked)" not in description


def _probes(t: tools.Tool) -> list[dict[str, Any]]:
    """Arguments that reach the tool's write check: none, and each of its actions."""
    actions = t.input_schema.get("properties", {}).get("action", {}).get("enum", [])
    return [{}, *({"action": a} for a in actions)]


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path, settings=Settings.load(env={}, embedder="none")) as m:
        yield m


def test_a_tool_that_refuses_for_writes_off_is_not_annotated_read_only(memory: Memory) -> None:
    """Served with writes off, every tool is called with each probe; one answering
    WriteDisabled writes, and must not tell MCP clients it is read-only."""
    writers = set()
    for t in tools.available(False):
        for args in _probes(tools.get(t.name, True)):  # every action it declares (writes off, it offers the reads only)
            try:
                tools.call(memory, t.name, args, enable_write=False)
            except WriteDisabled:
                writers.add(t.name)
            except Exception:  # noqa: BLE001, S112 — a validation error or a missing thing: not a write
                continue
    assert "memory_tags" in writers  # (decide, add, … write)
    for name in writers:
        assert _tool(tools.get(name, False)).annotations.read_only_hint is False, name


def test_write_tools_are_not_read_only_and_nothing_is_destructive() -> None:
    for t in tools.available(True):
        hints = _tool(t).annotations
        assert hints.destructive_hint is False and hints.open_world_hint is False, t.name
        if t.write:
            assert hints.read_only_hint is False, t.name
    assert _tool(tools.get("memory_remember", True)).annotations.idempotent_hint is False  # a repeat is one more attestation
    with pytest.raises(ValueError, match="cannot be read-only"):
        tools.registry.tool("x_write", "x", tools.registry.schema({}), write=True, read_only=True)
