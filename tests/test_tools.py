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
