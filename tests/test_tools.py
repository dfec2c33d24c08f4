"""The tool registry: one list, in one order, whoever imports what first."""

from __future__ import annotations

import json
import subprocess
import sys

from palimpsest import tools

# imports a part's tool module before the package, then prints the list HTTP and MCP serve
LIST_AFTER = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
from palimpsest import tools
print(json.dumps([t.name for t in tools.available(True)]))
"""


def _listed(*first: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", LIST_AFTER, *first], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout)


def test_the_tool_list_does_not_depend_on_import_order() -> None:
    plain = [t.name for t in tools.available(True)]
    assert _listed() == plain
    assert _listed("palimpsest.tools.wiki", "palimpsest.tools.facts") == plain
    modules = [m.__name__ for m in tools.MODULES]
    owners = [t.handler.__module__ for t in tools.available(True)]
    assert sorted(owners, key=modules.index) == owners, "tools are listed module by module, in MODULES order"
    assert plain[:2] == ["memory_search", "memory_browse"]


def test_a_long_output_is_read_a_page_at_a_time(tmp_path: object) -> None:
    """Found by a Claude Code user: `memory_get_full` of a 149 KB log answered it whole, past what the harness shows of a
    tool's answer (25,000 tokens), with no way to read a part."""
    from pathlib import Path

    from palimpsest import Memory, Settings

    log = "".join(f"line {i:05d} of the soak test log\n" for i in range(5000))  # 160,000 characters
    with Memory(Path(str(tmp_path)) / "home", settings=Settings.load(env={}, embedder="none")) as memory:
        wrote = memory.append("s", "tool", "", tool_name="Bash", tool_args={"command": "cat soak.log"}, tool_result=log)
        call = lambda args: tools.call(memory, "memory_get_full", {"id": wrote["id"], **args}, enable_write=False)
        assert call({})["tool_result"] == log and "next_offset" not in call({})  # as before: whole
        first = call({"length": 60_000})
        assert first["tool_result"] == log[:60_000] and first["tool_result_chars"] == len(log) and first["next_offset"] == 60_000
        pages, at = [first["tool_result"]], first["next_offset"]
        while at is not None:
            page = call({"offset": at, "length": 60_000})
            pages.append(page["tool_result"])
            at = page["next_offset"]
        assert "".join(pages) == log and len(pages) == 3
        assert call({"offset": 159_990})["tool_result"] == log[159_990:]


def test_browsing_a_session_that_is_not_stored_says_so(tmp_path: object) -> None:
    """Found by an MCP user: `memory_browse {"session": "nope"}` answered an empty list and nothing more, where
    `memory_context` and `memory_briefing` say there is no such session."""
    from pathlib import Path

    from palimpsest import Memory, Settings

    with Memory(Path(str(tmp_path)), settings=Settings.load(env={}, embedder="none")) as memory:
        memory.append("s1", "user", "hello")
        missing = tools.call(memory, "memory_browse", {"session": "nope"}, enable_write=False)
        assert missing["messages"] == [] and missing["notes"] == ["no session 'nope' is stored"]
        found = tools.call(memory, "memory_browse", {"session": "s1"}, enable_write=False)
        assert len(found["messages"]) == 1 and "notes" not in found
