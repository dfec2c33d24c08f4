"""The code graph: extraction and resolution per language, queries, incremental runs,
ignore rules, bad input, the CLI, recall's hook and the tools."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Settings
from palimpsest.cli import main
from palimpsest.code import CodeGraph, symbols_mentioned
from palimpsest.errors import InvalidInput, NotFound

FIXTURES = Path(__file__).parent / "fixtures" / "code"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.load(env={}, home=str(tmp_path / "home"), embedder="none")


@pytest.fixture
def graph(settings: Settings) -> Iterator[CodeGraph]:
    g = CodeGraph(settings=settings)
    yield g
    g.close()


def copy_fixture(name: str, tmp_path: Path) -> Path:
    dest = tmp_path / name
    shutil.copytree(FIXTURES / name, dest)
    return dest


def calls(graph: CodeGraph, symbol: str, repo: str) -> dict[str, str | None]:
    """What `symbol` calls: name as written → qualified name of the target (None: unresolved)."""
    return {e.name: e.target.qualname if e.target else None for e in graph.callees(symbol, repo=repo)}


# -- languages --------------------------------------------------------------------------


def test_python_resolution(graph: CodeGraph) -> None:
    report = graph.index(FIXTURES / "pyapp")
    assert (report.files, report.parsed, report.skipped, report.partial) == (6, 6, [], [])
    assert calls(graph, "Order.checkout", "pyapp") == {
        "self.total": "shop.orders.Order.total",
        "pay": "shop.payments.gateway.charge",  # aliased import, re-exported by the package
        "gw.refund_all": "shop.payments.gateway.refund_all",  # `import a.b.c as gw`
        "ledger.record": "shop.ledger.record",  # `from shop import ledger`
        "self.describe": "shop.orders.Base.describe",  # inherited
    }
    assert calls(graph, "Order.name", "pyapp") == {"super.name": "shop.orders.Base.name"}
    assert calls(graph, "make_order", "pyapp") == {"Order": "shop.orders.Order", "clean": "shop.orders.make_order.clean"}
    assert calls(graph, "gateway.charge", "pyapp") == {"record": "shop.ledger.record"}  # `from ..ledger import record`
    assert calls(graph, "run.main", "pyapp") == {
        "make_order": "shop.orders.make_order",
        "order.checkout": None,  # a local variable: its type is not inferred
        "Order": "shop.orders.Order",
        "?.total": None,
        "unknown_helper": None,
    }
    assert calls(graph, "shop.ledger.record", "pyapp") == {"_LEDGER.append": "shop.ledger.Ledger.append"}  # `_LEDGER = Ledger()`


def test_python_symbols(graph: CodeGraph) -> None:
    graph.index(FIXTURES / "pyapp")
    [order] = graph.definition("Order", repo="pyapp")
    assert (order.kind, order.qualname, order.path) == ("class", "shop.orders.Order", "shop/orders.py")
    assert (order.start_line, order.end_line, order.doc) == (17, 36, "An order of several lines.")
    [total] = graph.definition("shop.orders.Order.total", repo="pyapp")
    assert (total.kind, total.signature, total.doc, total.parent) == ("method", "def total(self)", "Sum of the lines.", "shop.orders.Order")
    [clean] = graph.definition("make_order.clean", repo="pyapp")
    assert clean.kind == "function"
    [module] = graph.definition("shop.payments.gateway", repo="pyapp")
    assert (module.kind, module.path) == ("module", "shop/payments/gateway.py")


def test_javascript_and_typescript(graph: CodeGraph) -> None:
    report = graph.index(FIXTURES / "webapp")
    assert report.parsed == 5 and not report.partial
    assert calls(graph, "Square.area", "webapp") == {"clamp": "src/util.clamp"}  # ./util is util/index.ts
    assert calls(graph, "Square.render", "webapp") == {"Widget": "src/widget.Widget", "self.name": "src/models.Shape.name"}
    assert calls(graph, "Square.constructor", "webapp") == {"super": "src/models.Shape"}
    assert calls(graph, "Shape.name", "webapp") == {"self.area": "src/models.Shape.area", "strings.slugify": "src/util/strings.slugify"}
    assert calls(graph, "Logger.log", "webapp") == {"shout": "src/util/strings.shout", "self.write": "lib/legacy.Logger.write"}
    [slug] = graph.definition("slugify", repo="webapp")
    assert (slug.doc, slug.signature) == ("Lower-case, dash-separated.", "function slugify(text: string): string")
    [shout] = graph.definition("shout", repo="webapp")
    assert (shout.kind, shout.signature) == ("function", "const shout = (text: string): string =>")
    kinds = {i.symbol.name: i.symbol.kind for i in graph.outline("src/models.ts", repo="webapp")}
    assert kinds == {"models": "module", "Named": "interface", "name": "method", "Shape": "class", "area": "method",
                     "Square": "class", "constructor": "method", "render": "method"}  # fmt: skip
    # `import { slugify } from './util'` would follow util/index.ts's re-export:
    assert [e.source.qualname for e in graph.callers("slugify", repo="webapp") if e.resolved] == ["src/models.Shape.name"]


def test_go(graph: CodeGraph) -> None:
    graph.index(FIXTURES / "goapp")
    assert calls(graph, "cmd/draw.main", "goapp") == {
        "g.NewPoint": "geo.NewPoint",  # import path mapped through go.mod
        "c.Area": "geo.Circle.Area",  # c := &g.Circle{…}
        "fmt.Println": None,
        "describe": "cmd/draw.describe",
    }
    assert calls(graph, "Circle.Far", "goapp") == {"self.Dist": "geo.Point.Dist", "helper": "geo.helper"}  # embedded; same package
    assert calls(graph, "describe", "goapp")["s.Area"] == "geo.Shape.Area"  # a parameter's declared type
    [dist] = graph.definition("Point.Dist", repo="goapp")
    assert (dist.kind, dist.path, dist.doc) == ("method", "geo/point.go", "Dist is the distance to another point.")
    [circle] = graph.definition("Circle", repo="goapp")
    assert circle.kind == "struct" and circle.signature == "type Circle struct"
    assert [i.symbol.qualname for i in graph.impact("Point", repo="goapp")] == ["geo.Circle"]


def test_rust(graph: CodeGraph) -> None:
    graph.index(FIXTURES / "rustapp")
    assert calls(graph, "start", "rustapp") == {
        "?.area": None,
        "geo.circle": "rust_app::geo::circle",
        "origin": "rust_app::origin",
        "helpers.twice": "rust_app::helpers::twice",
    }
    assert calls(graph, "origin", "rustapp") == {"Point.new": "rust_app::geo::Point::new"}  # via `use crate::geo::{Point}`
    assert calls(graph, "twice", "rustapp") == {"rust_app.double": "rust_app::double"}  # super::double
    assert calls(graph, "Point::norm", "rustapp") == {"self.dot": "rust_app::geo::Point::dot"}
    assert calls(graph, "far", "rustapp") == {  # a parameter's type; `new() -> Self` in `impl Point`
        "Point.new": "rust_app::geo::Point::new",
        "p.norm": "rust_app::geo::Point::norm",
        "q.norm": "rust_app::geo::Point::norm",
    }
    [new] = graph.definition("Point::new", repo="rustapp")
    assert (new.kind, new.parent, new.path) == ("method", "rust_app.geo.Point", "src/geo/mod.rs")
    [point] = graph.definition("rust_app::geo::Point", repo="rustapp")
    assert point.doc == "A point." and point.kind == "struct"
    impls = [i.symbol.name for i in graph.outline("src/geo/mod.rs", repo="rustapp") if i.symbol.kind == "impl"]
    assert impls == ["impl Point", "impl Shape for Circle"]
    assert [i.symbol.name for i in graph.impact("Shape", repo="rustapp")] == ["impl Shape for Circle"]


def test_declared_and_evident_types(graph: CodeGraph, tmp_path: Path) -> None:
    root = _tree(tmp_path / "typed", {
        "store.py": "class Store:\n    def save(self): pass\n\ndef open_store() -> 'Store':\n    return Store()\n",
        "app.py": (
            "from typing import Optional\nfrom store import Store, open_store\n\n"
            "class App:\n    cache: Store\n\n    def __init__(self):\n        self.store = Store()\n\n"
            "    def run(self, other: Optional[Store], spare: Store | None = None) -> None:\n"
            "        self.store.save(); self.cache.save(); other.save(); spare.save()\n"
            "        fresh = open_store(); fresh.save()\n        unknown.save()\n"
        ),
        "web.ts": "class Graph { find(): void {} }\nclass View {\n  constructor(private g: Graph) {}\n"
                  "  show(h: Graph | null) { this.g.find(); h.find(); const k = new Graph(); k.find(); }\n}\n",
    })  # fmt: skip
    graph.index(root)
    assert calls(graph, "App.run", "typed") == {
        "self.store.save": "store.Store.save",  # self.store = Store()
        "self.cache.save": "store.Store.save",  # class-level annotation
        "other.save": "store.Store.save",  # Optional[Store]
        "spare.save": "store.Store.save",  # Store | None
        "open_store": "store.open_store",
        "fresh.save": "store.Store.save",  # open_store() -> 'Store'
        "unknown.save": None,
    }
    assert calls(graph, "View.show", "typed") == {"self.g.find": "web.Graph.find", "h.find": "web.Graph.find",
                                                   "Graph": "web.Graph", "k.find": "web.Graph.find"}  # fmt: skip


def test_locals_hide_module_names(graph: CodeGraph, tmp_path: Path) -> None:
    root = _tree(tmp_path / "shadow", {
        "config.py": "def get(key): pass\n\ndef helper(): pass\n",
        "app.py": (
            "import config\nfrom config import helper\n\n"
            "def uses_module():\n    config.get('a'); helper()\n\n"
            "def takes(config, helper):\n    config.get('a'); helper()\n\n"
            "def assigns():\n    config = {}\n    config.get('a')\n    for helper in []:\n        helper()\n\n"
            "def nested():\n    def helper(): pass\n    helper()\n"
        ),
        "web.js": "const config = require('./config');\nfunction get() {}\nfunction f(get, ...rest) { get(); rest(); }\n"
                  "function g() { const get = 1; get(); }\nfunction h() { get(); }\n"
                  "function k() { const again = () => again(); }\n",
    })  # fmt: skip
    graph.index(root)
    assert calls(graph, "uses_module", "shadow") == {"config.get": "config.get", "helper": "config.helper"}
    assert calls(graph, "takes", "shadow") == {"config.get": None, "helper": None}  # parameters
    assert calls(graph, "assigns", "shadow") == {"config.get": None, "helper": None}  # assignment, loop variable
    assert calls(graph, "nested", "shadow") == {"helper": "app.nested.helper"}
    assert calls(graph, "web.f", "shadow") == {"get": None, "rest": None}
    assert calls(graph, "web.g", "shadow") == {"get": None}
    assert calls(graph, "web.h", "shadow") == {"get": "web.get"}
    assert calls(graph, "web.k.again", "shadow") == {"again": "web.k.again"}  # a const arrow function calling itself


# -- queries ----------------------------------------------------------------------------


def test_find_is_fuzzy(graph: CodeGraph) -> None:
    graph.index(FIXTURES / "pyapp")
    assert graph.find("checkout", repo="pyapp")[0].qualname == "shop.orders.Order.checkout"
    assert graph.find("chekout", repo="pyapp")[0].qualname == "shop.orders.Order.checkout"  # a typo
    assert graph.find("CHECK", repo="pyapp")[0].name == "checkout"  # case-insensitive prefix
    assert {s.name for s in graph.find("order", repo="pyapp")} >= {"Order", "make_order", "orders"}
    assert [s.kind for s in graph.find("order", repo="pyapp", kind="class")] == ["class"]
    assert graph.find("orders.Order", repo="pyapp")[0].qualname == "shop.orders.Order"
    assert graph.find("zzzzqqq", repo="pyapp") == []
    with pytest.raises(InvalidInput):
        graph.find("  ", repo="pyapp")


def test_def_names(graph: CodeGraph) -> None:
    graph.index(FIXTURES / "pyapp")
    assert [s.qualname for s in graph.definition("name", repo="pyapp")] == ["shop.orders.Base.name", "shop.orders.Order.name"]
    assert [s.qualname for s in graph.definition("Order.name()", repo="pyapp")] == ["shop.orders.Order.name"]
    with pytest.raises(NotFound, match="did you mean .*checkout"):
        graph.definition("chekout", repo="pyapp")
    with pytest.raises(NotFound, match="no symbol 'a.' in pyapp$"):  # it said "find needs a name" (found by a new user)
        graph.definition("a.", repo="pyapp")


def test_callers_resolved_and_by_name(graph: CodeGraph) -> None:
    graph.index(FIXTURES / "pyapp")
    edges = graph.callers("Order.checkout", repo="pyapp")
    assert [(e.source.qualname, e.resolved, e.line) for e in edges] == [("run.main", False, 7)]
    assert graph.callers("Order.checkout", repo="pyapp", unresolved=False) == []
    record = graph.callers("shop.ledger.record", repo="pyapp")
    assert [(e.source.qualname, e.path, e.line) for e in record if e.resolved] == [
        ("shop.orders.Order.checkout", "shop/orders.py", 31),
        ("shop.payments.gateway.charge", "shop/payments/gateway.py", 9),
    ]
    init = graph.callers("Order.__init__", repo="pyapp", unresolved=False)
    assert {e.source.qualname for e in init} == {"run.main", "shop.orders.make_order"}  # instantiation calls the constructor


def test_impact_depth(graph: CodeGraph) -> None:
    graph.index(FIXTURES / "pyapp")
    one = graph.impact("Base.name", repo="pyapp", depth=1)
    assert {(i.symbol.qualname, i.depth) for i in one} == {("shop.orders.Base.describe", 1), ("shop.orders.Order.name", 1)}
    three = graph.impact("Base.name", repo="pyapp", depth=3)
    assert ("shop.orders.Order.checkout", 2) in {(i.symbol.qualname, i.depth) for i in three}
    assert [i.symbol.qualname for i in graph.impact("Base", repo="pyapp")] == ["shop.orders.Order", "run.main",
                                                                               "shop.orders.make_order", "run"]  # fmt: skip
    with pytest.raises(InvalidInput):
        graph.impact("Base", repo="pyapp", depth=0)


def test_outline_nests(graph: CodeGraph) -> None:
    graph.index(FIXTURES / "pyapp")
    rows = [(i.depth, i.symbol.name, i.symbol.start_line) for i in graph.outline("shop/orders.py", repo="pyapp")]
    assert rows[:4] == [(0, "orders", 1), (1, "Base", 8), (2, "describe", 9), (2, "name", 13)]
    assert rows[-2:] == [(1, "make_order", 39), (2, "clean", 40)]
    absolute = graph.outline(str(FIXTURES / "pyapp" / "shop" / "ledger.py"), repo="pyapp")
    assert absolute[1].symbol.qualname == "shop.ledger.record"
    with pytest.raises(NotFound):
        graph.outline("nope.py", repo="pyapp")


def test_repo_selection(graph: CodeGraph, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(NotFound, match="no repository is indexed"):
        graph.find("x")
    graph.index(FIXTURES / "pyapp")
    assert graph.find("Order")[0].name == "Order"  # the only repository
    graph.index(FIXTURES / "goapp", name="shapes")
    with pytest.raises(InvalidInput, match="several repositories"):
        graph.find("Order")
    monkeypatch.chdir(FIXTURES / "goapp" / "geo")
    assert graph.find("Circle")[0].repo == "shapes"  # the one around the current directory
    assert graph.find("Order", repo=str(FIXTURES / "pyapp"))[0].repo == "pyapp"  # by root
    with pytest.raises(NotFound):
        graph.find("x", repo="elsewhere")
    for odd in ("~no_such_user_zz/x", "a\x00b", "~"):  # names and paths share the argument
        with pytest.raises(NotFound):
            graph.find("x", repo=odd)
    with pytest.raises(NotFound):
        graph.outline("~no_such_user_zz/a\x00.py", repo="pyapp")
    with pytest.raises(InvalidInput):
        graph.index("a\x00b")
    with pytest.raises(InvalidInput, match="taken"):
        graph.index(FIXTURES / "webapp", name="shapes")
    assert graph.forget("shapes").root == str(FIXTURES / "goapp")
    assert [r.name for r in graph.repos()] == ["pyapp"]


# -- incremental runs -------------------------------------------------------------------


def test_incremental_reparses_only_changes(graph: CodeGraph, tmp_path: Path) -> None:
    root = copy_fixture("pyapp", tmp_path)
    first = graph.index(root)
    again = graph.index(root)
    assert (again.parsed, again.unchanged, again.reresolved) == (0, 6, 0)
    os.utime(root / "shop" / "ledger.py")  # touched, same bytes: read and hashed, not parsed
    assert graph.index(root).parsed == 0
    ledger = root / "shop" / "ledger.py"
    ledger.write_text(ledger.read_text().replace("def record(entry):", "def record_entry(entry):"))
    renamed = graph.index(root)
    assert (renamed.parsed, renamed.unchanged) == (1, 5)
    assert calls(graph, "gateway.charge", root.name) == {"record": None}  # its target is gone
    assert renamed.resolved == first.resolved - 4
    ledger.write_text(ledger.read_text().replace("def record_entry(entry):", "def record(entry):"))
    back = graph.index(root)
    assert calls(graph, "gateway.charge", root.name) == {"record": "shop.ledger.record"}
    assert (back.symbols, back.edges, back.resolved) == (first.symbols, first.edges, first.resolved)


def _all_edges(graph: CodeGraph) -> set[tuple[str, str, str, int, str | None]]:
    rows = graph.db.execute(
        "SELECT a.qualname, e.kind, e.name, e.line, b.qualname FROM edges e JOIN symbols a ON a.id = e.src_id "
        "LEFT JOIN symbols b ON b.id = e.dst_id"
    )
    return {tuple(r) for r in rows}


def test_incremental_equals_full(graph: CodeGraph, tmp_path: Path, settings: Settings) -> None:
    root = copy_fixture("pyapp", tmp_path)
    graph.index(root)
    orders = root / "shop" / "orders.py"
    orders.write_text(orders.read_text().replace("class Base:", "class Base:\n    def total(self):\n        return 0\n"))
    (root / "shop" / "extra.py").write_text("from .orders import Order\n\nclass Rush(Order):\n    def go(self):\n        self.describe()\n")
    assert graph.index(root).parsed == 2  # on-demand resolution
    with CodeGraph(tmp_path / "fresh.db", settings=settings) as fresh:
        fresh.index(root)  # everything at once
        assert _all_edges(graph) == _all_edges(fresh)
    assert calls(graph, "Rush.go", root.name) == {"self.describe": "shop.orders.Base.describe"}


def test_deleted_files_drop_their_symbols(graph: CodeGraph, tmp_path: Path) -> None:
    root = copy_fixture("pyapp", tmp_path)
    graph.index(root)
    (root / "shop" / "payments" / "gateway.py").unlink()
    report = graph.index(root)
    assert (report.deleted, report.files) == (1, 5)
    with pytest.raises(NotFound):
        graph.definition("refund_all", repo=root.name)
    assert calls(graph, "Order.checkout", root.name)["gw.refund_all"] is None


def test_new_package_renames_modules(graph: CodeGraph, tmp_path: Path, settings: Settings) -> None:
    root = copy_fixture("pyapp", tmp_path)
    graph.index(root)
    (root / "scripts" / "__init__.py").write_text("")
    report = graph.index(root)
    assert report.parsed == 2  # the new file, and run.py whose module is now scripts.run
    assert graph.definition("main", repo=root.name)[0].qualname == "scripts.run.main"
    (root / "shop" / "cli.py").write_text("from scripts.run import main\n\nmain()\n")
    graph.index(root)
    (root / "scripts" / "__init__.py").unlink()  # scripts.run is `run` again: cli.py's import breaks
    graph.index(root)
    with CodeGraph(tmp_path / "fresh.db", settings=settings) as fresh:
        fresh.index(root)
        assert _all_edges(graph) == _all_edges(fresh)
    assert calls(graph, "shop.cli", root.name) == {"main": None}


def test_full_reindex_matches_incremental(graph: CodeGraph, tmp_path: Path) -> None:
    root = copy_fixture("webapp", tmp_path)
    first = graph.index(root)
    full = graph.index(root, full=True)
    assert full.parsed == first.parsed and (full.symbols, full.edges, full.resolved) == (first.symbols, first.edges, first.resolved)


# -- which files -----------------------------------------------------------------------


def _tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


IGNORED_TREE: dict[str, str | bytes] = {
    ".gitignore": "build/\n*.gen.py\n",
    "app.py": "def kept(): pass\n",
    "build/out.py": "def built(): pass\n",
    "api.gen.py": "def generated(): pass\n",
    "sub/.gitignore": "local.py\n",
    "sub/local.py": "def local(): pass\n",
    "sub/mod.py": "def sub_kept(): pass\n",
    "node_modules/dep/index.js": "function dep() {}\n",
    "notes.txt": "def not_code(): pass\n",
}


def test_gitignore_without_git(graph: CodeGraph, tmp_path: Path) -> None:
    root = _tree(tmp_path / "plain", IGNORED_TREE)
    report = graph.index(root)
    assert report.files == 2
    assert {s.name for s in graph.find("kept", repo="plain")} == {"kept", "sub_kept"}


def test_gitignore_with_git(graph: CodeGraph, tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo", IGNORED_TREE)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "app.py"], check=True)
    report = graph.index(root)
    assert report.files == 2  # tracked app.py, untracked-but-not-ignored sub/mod.py
    excluded = graph.index(root, exclude=["sub/"])
    assert (excluded.files, excluded.deleted) == (1, 1)
    assert graph.index(root).files == 1  # the exclusion is remembered


# -- bad input --------------------------------------------------------------------------


def test_syntax_errors_index_what_parses(graph: CodeGraph, tmp_path: Path) -> None:
    root = _tree(tmp_path / "broken", {
        "bad.py": "def before():\n    return 1\n\ndef broken(:\n    pass\n\ndef after():\n    return before()\n",
        "bad.ts": "function ok(): number { return 1 }\nconst x = (;\nfunction fine() { ok(); }\n",
    })  # fmt: skip
    report = graph.index(root)
    assert [(p["path"], p["reason"]) for p in report.partial] == [
        ("bad.py", "syntax errors at line 4; indexed what parses"),
        ("bad.ts", "syntax errors at line 2; indexed what parses"),
    ]
    names = {i.symbol.name for i in graph.outline("bad.py", repo="broken")}
    assert {"before", "after"} <= names
    assert calls(graph, "after", "broken") == {"before": "bad.before"}
    assert "fine" in {i.symbol.name for i in graph.outline("bad.ts", repo="broken")}


def test_huge_binary_and_odd_encodings(tmp_path: Path) -> None:
    settings = Settings.load(env={}, home=str(tmp_path / "home"), code_max_file_bytes=10_000)
    root = _tree(tmp_path / "odd", {
        "huge.js": "var x = 1;\n" * 2000,
        "blob.py": b"\x00\x01\x02def not_really(): pass\n",
        "latin.py": "# -*- coding: latin-1 -*-\ndef caf\u00e9():\n    '''Caf\u00e9 cr\u00e8me.'''\n".encode("latin-1"),
        "nocookie.go": "package odd\n\n// Gr\u00fc\u00dfe says hello.\nfunc Gruss() {}\n".encode("latin-1"),
        "wide.ts": "\ufefffunction wide(): void {}\n".encode("utf-16"),
        "bom.py": b"\xef\xbb\xbfdef bom():\n    pass\n",
    })  # fmt: skip
    with CodeGraph(settings=settings) as graph:
        report = graph.index(root)
        skipped = {s["path"]: s["reason"] for s in report.skipped}
        assert skipped["huge.js"].startswith("larger than the limit (22000 > 10000 bytes")
        assert skipped["blob.py"] == "binary file (NUL bytes)"
        assert set(skipped) == {"huge.js", "blob.py"}
        [cafe] = graph.definition("café", repo="odd")
        assert (cafe.doc, cafe.start_line) == ("Café crème.", 2)
        [gruss] = graph.definition("Gruss", repo="odd")
        assert gruss.doc == "Grüße says hello."  # not UTF-8, no cookie: read as Latin-1
        assert graph.definition("wide", repo="odd")[0].start_line == 1
        assert graph.definition("bom", repo="odd")[0].start_line == 1
        again = graph.index(root)
        assert again.parsed == 0 and len(again.skipped) == 2  # still reported, not re-read


def test_symlinks(graph: CodeGraph, tmp_path: Path) -> None:
    outside = _tree(tmp_path / "outside", {"secret.py": "def secret(): pass\n"})
    root = _tree(tmp_path / "linked", {"real.py": "def real(): pass\n"})
    (root / "escape.py").symlink_to(outside / "secret.py")
    (root / "alias.py").symlink_to(root / "real.py")
    (root / "dir").symlink_to(outside, target_is_directory=True)
    report = graph.index(root)
    assert {s["path"]: s["reason"] for s in report.skipped} == {
        "alias.py": "symlink (its target is indexed under its own path)",
        "escape.py": "symlink pointing outside the tree",
    }
    with pytest.raises(NotFound):
        graph.definition("secret", repo="linked")


def test_file_changing_during_indexing(graph: CodeGraph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path / "moving", {"a.py": "def first(): pass\n", "b.py": "def other(): pass\n"})
    real_read = Path.read_bytes

    def read_then_rewrite(self: Path) -> bytes:  # the editor saves right after we read
        data = real_read(self)
        if self.name == "a.py":
            self.write_text("def first(): pass\ndef second(): pass\n")
            os.utime(self, ns=(1, 1))
        return data

    monkeypatch.setattr(Path, "read_bytes", read_then_rewrite)
    report = graph.index(root)
    monkeypatch.undo()
    assert report.changed_during == ["a.py"]
    assert {i.symbol.name for i in graph.outline("a.py", repo="moving")} == {"a", "first"}  # the version read
    later = graph.index(root)
    assert later.parsed == 1 and later.changed_during == []
    assert {i.symbol.name for i in graph.outline("a.py", repo="moving")} == {"a", "first", "second"}


def test_file_vanishing_during_indexing(graph: CodeGraph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path / "vanish", {"a.py": "def a(): pass\n", "b.py": "def b(): pass\n"})
    graph.index(root)
    (root / "b.py").write_text("def b2(): pass\n")
    real_read = Path.read_bytes

    def vanish(self: Path) -> bytes:
        if self.name == "b.py":
            self.unlink()
            raise FileNotFoundError(self)
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", vanish)
    report = graph.index(root)
    assert (report.deleted, report.files) == (1, 1)


def test_not_a_directory(graph: CodeGraph, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        graph.index(tmp_path / "missing")


# -- CLI, recall, tools ---------------------------------------------------------------------


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = str(tmp_path / "home")
    assert main(["--home", home, "code", "index", str(FIXTURES / "pyapp"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["symbols"] == 24
    assert main(["--home", home, "code", "def", "Order.total", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["symbols"][0]["qualname"] == "shop.orders.Order.total"
    assert main(["--home", home, "code", "callers", "record", "--resolved-only"]) == 0
    assert "shop.payments.gateway.charge" in capsys.readouterr().out
    assert main(["--home", home, "code", "impact", "Base.name", "--depth", "2", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["impact"]) == 3
    assert main(["--home", home, "code", "outline", "shop/ledger.py"]) == 0
    assert "def record(entry)" in capsys.readouterr().out
    assert main(["--home", home, "code", "def", "nothing_like_it", "--json"]) == 3
    assert json.loads(capsys.readouterr().err)["error"]["code"] == "not_found"
    for command in ("find Order", "callees Order.checkout", "repos", "stats"):
        assert main(["--home", home, "code", *command.split()]) == 0
    capsys.readouterr()


def _choices(parser: Any) -> dict[str, Any]:
    return next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_every_code_command_has_help() -> None:
    from palimpsest.cli import build_parser

    parser = build_parser()
    code = _choices(parser)["code"]
    actions = _choices(code)
    assert set(actions) == {"index", "find", "def", "callers", "callees", "impact", "outline", "repos", "stats", "forget"}
    assert all(p.description for p in actions.values())


def test_symbols_mentioned(graph: CodeGraph, settings: Settings) -> None:
    assert symbols_mentioned("why does `Order.checkout` fail?", "pyapp", settings=settings) == []  # nothing indexed
    graph.index(FIXTURES / "pyapp")
    text = "Why does Order.checkout() fail after make_order? The order is fine; see `refund_all` and ledger."
    found = symbols_mentioned(text, "pyapp", settings=settings)
    assert [s.qualname for s in found] == ["shop.orders.Order.checkout", "shop.orders.make_order", "shop.payments.gateway.refund_all"]
    assert "shop/orders.py:27" in found[0].brief()
    assert symbols_mentioned(text, "PyApp", settings=settings)  # a project tag, case aside
    assert symbols_mentioned(text, "other-project", settings=settings) == []
    assert symbols_mentioned("plain words only: order, total, record", "pyapp", settings=settings) == []


def test_a_project_named_by_its_remote_finds_its_repository_indexed_by_its_folder_name(graph: CodeGraph, settings: Settings,
                                                                                        tmp_path: Path) -> None:
    """Found by a new user: projects are named by their remote's owner/name (`acme/pyapp`) so that two repositories
    of one folder name are two; a repository indexed by its folder's name (`code index`'s default) is still its
    project's, and not another owner's repository of that name."""
    import subprocess

    repo = copy_fixture("pyapp", tmp_path)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:acme/pyapp.git"], check=True)
    graph.index(repo)
    assert [s.qualname for s in symbols_mentioned("why does make_order fail?", "acme/pyapp", settings=settings)] == [
        "shop.orders.make_order"]
    assert symbols_mentioned("why does make_order fail?", "jdoe/pyapp", settings=settings) == []


def test_tools(graph: CodeGraph, settings: Settings) -> None:
    from palimpsest import Memory, tools

    memory = Memory(settings.home_path, settings=settings)
    listed = {t.name for t in tools.available(False, memory)}
    assert "memory_search" in listed and not any(n.startswith("code_") for n in listed)  # none indexed: not offered
    graph.index(FIXTURES / "goapp")
    assert "code_def" in {t.name for t in tools.available(False, memory)}
    try:
        found = tools.call(memory, "code_def", {"symbol": "NewPoint"}, enable_write=False)
        assert found["symbols"][0]["path"] == "geo/point.go"
        edges = tools.call(memory, "code_callers", {"symbol": "NewPoint", "repo": "goapp"}, enable_write=False)["edges"]
        assert [e["source"]["qualname"] for e in edges] == ["cmd/draw.main"]
        assert tools.call(memory, "code_impact", {"symbol": "Point", "depth": 2}, enable_write=False)["impact"][0]["name"] == "Circle"
        assert tools.call(memory, "code_repos", {}, enable_write=False)["repos"][0]["name"] == "goapp"
        with pytest.raises(InvalidInput):
            tools.call(memory, "code_impact", {"symbol": "Point", "depth": 0}, enable_write=False)
    finally:
        memory.close()


def test_a_method_is_not_a_module_function_of_its_lower_cased_name(graph: CodeGraph, tmp_path: Path) -> None:
    """Found by a new user: `code def User.save` also gave the module pkg.user's function save (a LIKE that
    ignores case), and `callers User.save` that function's callers."""
    root = _tree(tmp_path / "cased", {
        "pkg/__init__.py": "",
        "pkg/user.py": "class User:\n    def save(self):\n        pass\n\n\ndef save(user):\n    pass\n",
        "pkg/signup.py": "from . import user\n\n\ndef signup():\n    user.save(None)\n",
    })  # fmt: skip
    graph.index(root)
    assert [s.qualname for s in graph.definition("User.save", repo="cased")] == ["pkg.user.User.save"]
    assert graph.callers("User.save", repo="cased", unresolved=False) == []
    assert [e.source.qualname for e in graph.callers("user.save", repo="cased", unresolved=False)] == ["pkg.signup.signup"]


def test_a_call_through_an_aliased_import_is_linked_again_incrementally(graph: CodeGraph, tmp_path: Path, settings: Settings) -> None:
    """Found by a new user: `from .later import thing as t; t()` stayed unresolved after later.py appeared (and a
    rename there and back unlinked `persist` for good) until `--full`."""
    files = {"pkg/__init__.py": "", "pkg/d.py": "from .later import thing as t\n\n\ndef use():\n    t()\n",
             "pkg/a.py": "def save():\n    pass\n", "pkg/b.py": "from .a import save as persist\n\n\ndef run():\n    persist()\n",
             "pkg/e.py": "from .d import t as u\n\n\ndef again():\n    u()\n"}  # an alias of an alias (found in review)
    files.update({f"pkg/m{i}.py": f"def f{i}():\n    pass\n" for i in range(10)})  # few files change: the incremental path
    root = _tree(tmp_path / "aliased", files)
    graph.index(root)
    assert calls(graph, "use", "aliased") == {"t": None}
    (root / "pkg" / "later.py").write_text("def thing():\n    pass\n")
    assert graph.index(root).parsed == 1
    assert calls(graph, "use", "aliased") == {"t": "pkg.later.thing"}
    assert calls(graph, "again", "aliased") == {"u": "pkg.later.thing"}
    (root / "pkg" / "a.py").write_text("def save2():\n    pass\n")
    graph.index(root)
    assert calls(graph, "run", "aliased") == {"persist": None}
    (root / "pkg" / "a.py").write_text("def save():\n    pass\n")
    graph.index(root)
    assert calls(graph, "run", "aliased") == {"persist": "pkg.a.save"}
    with CodeGraph(tmp_path / "fresh.db", settings=settings) as fresh:
        fresh.index(root)
        assert _all_edges(graph) == _all_edges(fresh)
