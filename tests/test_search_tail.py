"""The end of a field past the index's cap stays searchable by keywords: a long test log's
failure is on its last lines (issue found trying it as a coding agent's user). Both backends."""

from __future__ import annotations

from pathlib import Path

from palimpsest import Memory, Settings

LOG = "\n".join(f"tests/test_module_{i}.py::test_case PASSED" for i in range(6000))
LOG += "\nFAILED tests/test_zebra_unicorn.py::test_frobnicate - AssertionError: 3 != 4\n"
MIDDLE = "tests/test_module_2000.py"  # past the cap, before the kept tail


def test_a_long_tool_outputs_last_lines_are_found(home: Path, store_url: str) -> None:
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        memory.append("code", "tool", "ran the test suite", tool_name="bash", tool_result=LOG)
        memory.append("code", "user", "the zebra exhibit opens at noon")
        hits = memory.search("zebra_unicorn frobnicate", limit=5).hits
        assert [h.message.content for h in hits] == ["ran the test suite"]
        assert hits[0].message.truncated and len(hits[0].message.tool_result or "") < len(LOG)
        assert memory.get_full(hits[0].message.id)["tool_result"] == LOG  # the whole output is kept
        assert memory.search("test_module_17", limit=5).hits  # the head, on both backends (migration 0015)
        assert not memory.search("test_module_2000", limit=5).hits  # the middle is past what is indexed
        assert MIDDLE in LOG
