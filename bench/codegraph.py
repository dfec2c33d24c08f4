"""Code graph benchmark: indexing speed, incremental re-index, query latency, edge precision.

    .venv/bin/python bench/codegraph.py            # this repository, the stdlib, npm; writes RESULTS.md
    .venv/bin/python bench/codegraph.py --quick    # this repository only, nothing written

Protocol. Each corpus is first copied (its source files only, as the index would list
them) into a temporary folder, so the incremental step can edit a file without touching
the original, and indexed into a fresh code graph:

- full index: files/s, MB/s, symbols, edges, share of call edges resolved;
- a second run with nothing changed (every file stat-ed, none read);
- one file touched (mtime only: read and hashed, not parsed) and one file edited
  (a function appended: parsed, its edges and the edges naming it elsewhere re-resolved);
- queries on 100 symbols drawn with a fixed seed: find, def, callers, callees,
  impact --depth 2, outline of the symbol's file; p50 / p95 per kind;
- precision of resolved call edges against SAMPLE below: call sites drawn at random
  (seeded) from the resolved call edges of the stdlib and npm, each checked by hand
  against the source (imports, class bodies, bases) to name the right target. An edge
  counts as correct when the graph resolves it to exactly that qualified name.

The machine has 2 shared cores: everything runs in one process, one corpus at a time.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from palimpsest import Settings
from palimpsest.code import CodeGraph
from palimpsest.code.files import list_files
from palimpsest.code.languages import language_of

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
STDLIB = Path(sysconfig.get_paths()["stdlib"])
NPM = Path("/usr/lib/node_modules/npm")
LAYOUT_FILES = {"go.mod", "Cargo.toml", ".gitignore"}

# (corpus, path, line, name as written at the call site, the target checked by hand)
SAMPLE: list[tuple[str, str, int, str, str]] = [
    ("stdlib", "pickletools.py", 2367, "pickle._Pickler", "pickle._Pickler"),
    ("stdlib", "tkinter/tix.py", 1410, "TixWidget.__init__", "tkinter.tix.TixWidget.__init__"),
    ("stdlib", "pstats.py", 252, "self.get_sort_arg_defs", "pstats.Stats.get_sort_arg_defs"),
    ("stdlib", "pickletools.py", 998, "StackObject", "pickletools.StackObject"),
    ("stdlib", "sndhdr.py", 266, "what", "sndhdr.what"),
    ("stdlib", "turtledemo/chaos.py", 30, "line", "turtledemo.chaos.line"),
    ("stdlib", "email/_header_value_parser.py", 2265, "get_cfws", "email._header_value_parser.get_cfws"),
    ("stdlib", "email/_header_value_parser.py", 1553, "errors.InvalidHeaderDefect", "email.errors.InvalidHeaderDefect"),
    ("stdlib", "ssl.py", 1287, "super.sendfile", "socket.socket.sendfile"),
    ("stdlib", "pydoc.py", 1314, "self.bold", "pydoc.TextDoc.bold"),
    ("stdlib", "urllib/request.py", 1827, "_splittype", "urllib.parse._splittype"),
    ("stdlib", "unittest/mock.py", 609, "_CallList", "unittest.mock._CallList"),
    ("stdlib", "email/_header_value_parser.py", 1730, "errors.InvalidHeaderDefect", "email.errors.InvalidHeaderDefect"),
    ("stdlib", "cgitb.py", 37, "warnings._deprecated", "warnings._deprecated"),
    ("stdlib", "pickle.py", 294, "UnpicklingError", "pickle.UnpicklingError"),
    ("stdlib", "idlelib/sidebar.py", 172, "bind_mouse_event", "idlelib.sidebar.BaseSideBar.bind_events.bind_mouse_event"),
    ("stdlib", "distutils/command/build_py.py", 93, "self.build_package_data", "distutils.command.build_py.build_py.build_package_data"),
    ("stdlib", "calendar.py", 321, "self.formatday", "calendar.TextCalendar.formatday"),
    ("stdlib", "threading.py", 432, "Condition", "threading.Condition"),
    ("stdlib", "urllib/request.py", 2753, "socket.getfqdn", "socket.getfqdn"),
    ("stdlib", "ast.py", 652, "auto", "enum.auto"),
    ("stdlib", "typing.py", 574, "_SpecialForm", "typing._SpecialForm"),
    ("stdlib", "multiprocessing/connection.py", 151, "self.close", "multiprocessing.connection._ConnectionBase.close"),
    ("stdlib", "pipes.py", 170, "self.makepipeline", "pipes.Template.makepipeline"),
    ("stdlib", "xml/dom/minicompat.py", 94, "xml.dom.NoModificationAllowedErr", "xml.dom.NoModificationAllowedErr"),
    ("stdlib", "unittest/mock.py", 1182, "_is_exception", "unittest.mock._is_exception"),
    ("stdlib", "wsgiref/validate.py", 425, "assert_", "wsgiref.validate.assert_"),
    ("stdlib", "distutils/dist.py", 720, "self.get_command_class", "distutils.dist.Distribution.get_command_class"),
    ("stdlib", "urllib/parse.py", 443, "re.match", "re.match"),
    ("stdlib", "_pydecimal.py", 3206, "getcontext", "_pydecimal.getcontext"),
    ("stdlib", "test/test_xml_dom_minicompat.py", 29, "self.assertEqual", "unittest.case.TestCase.assertEqual"),
    ("stdlib", "idlelib/statusbar.py", 42, "Button", "tkinter.ttk.Button"),
    ("stdlib", "idlelib/idle_test/test_textview.py", 205, "Button", "tkinter.ttk.Button"),
    ("stdlib", "distutils/tests/test_unixccompiler.py", 137, "self.assertEqual", "unittest.case.TestCase.assertEqual"),
    ("stdlib", "test/test_cmath.py", 445, "check", "test.test_cmath.CMathTests.check_polar.check"),
    ("stdlib", "test/test_dtrace.py", 15, "unittest.SkipTest", "unittest.case.SkipTest"),
    ("stdlib", "distutils/tests/test_bdist_rpm.py", 50, "find_executable", "distutils.spawn.find_executable"),
    ("stdlib", "test/test_sys_settrace.py", 2457, "asynctracecontext", "test.test_sys_settrace.asynctracecontext"),
    ("stdlib", "test/test_io.py", 2792, "self.assertRaises", "unittest.case.TestCase.assertRaises"),
    (
        "stdlib",
        "test/test_sqlite3/test_dbapi.py",
        866,
        "L",
        "test.test_sqlite3.test_dbapi.CursorTests.test_execute_param_sequence_bad_len.L",
    ),
    ("stdlib", "wave.py", 345, "Error", "wave.Error"),
    ("stdlib", "test/test_codecs.py", 2195, "self.assertEqual", "unittest.case.TestCase.assertEqual"),
    # drawn again once names got types (annotations, `x = Class()`, `self.x = Class()`):
    ("stdlib", "unittest/test/test_case.py", 93, "test.assertEqual", "unittest.case.TestCase.assertEqual"),
    ("stdlib", "test/test_calendar.py", 551, "cal.formatmonthname", "calendar.LocaleTextCalendar.formatmonthname"),
    ("stdlib", "unittest/test/testmock/testpatch.py", 1942, "foo.items", "collections.OrderedDict.items"),
    ("stdlib", "idlelib/idle_test/test_run.py", 149, "f.read", "idlelib.run.StdInputFile.read"),
    ("stdlib", "ctypes/_aix.py", 118, "p.wait", "subprocess.Popen.wait"),
    ("stdlib", "test/test_smtplib.py", 1548, "smtp.login", "smtplib.SMTP.login"),
    ("stdlib", "test/test_configparser.py", 1834, "e1.append", "configparser.ParsingError.append"),
    ("stdlib", "test/test_http_cookiejar.py", 1569, "req.get_header", "urllib.request.Request.get_header"),
    ("stdlib", "test/test_fileinput.py", 196, "fi.filelineno", "fileinput.FileInput.filelineno"),
    (
        "stdlib",
        "test/test_peg_generator/test_pegen.py",
        980,
        "visitor.visit",
        "test.test_peg_generator.test_pegen.TestGrammarVisitor.Visitor.visit",
    ),
    ("stdlib", "test/test_email/test_email.py", 1983, "outer.as_string", "email.message.Message.as_string"),
    ("stdlib", "pickletools.py", 2865, "parser.add_argument", "argparse._ActionsContainer.add_argument"),
    (
        "stdlib",
        "test/test_asyncio/test_windows_events.py",
        116,
        "self.loop.start_serving_pipe",
        "asyncio.windows_events.ProactorEventLoop.start_serving_pipe",
    ),
    ("stdlib", "test/test_httpservers.py", 265, "self.con.getresponse", "http.client.HTTPConnection.getresponse"),
    ("stdlib", "test/test_trace.py", 154, "self.tracer.results", "trace.Trace.results"),
    ("stdlib", "concurrent/futures/process.py", 802, "self._work_ids.put", "queue.Queue.put"),
    ("stdlib", "test/test_ftplib.py", 650, "self.client.nlst", "ftplib.FTP.nlst"),
    ("stdlib", "test/test_urllib2_localnet.py", 276, "self.wfile.write", "socketserver._SocketWriter.write"),
    ("stdlib", "doctest.py", 1364, "self._fakeout.truncate", "doctest._SpoofOut.truncate"),
    ("stdlib", "idlelib/tree.py", 461, "self.canvas.bind", "tkinter.Misc.bind"),
    ("npm", "lib/commands/publish.js", 97, "self.#getManifest", "lib/commands/publish.Publish.#getManifest"),
    ("npm", "lib/npm.js", 22, "deref", "lib/utils/cmd-list.deref"),
    ("npm", "lib/utils/npm-usage.js", 71, "indentNewline", "lib/utils/npm-usage.indentNewline"),
    ("npm", "lib/cli/update-notifier.js", 114, "updateNotifier", "lib/cli/update-notifier.updateNotifier"),
    ("npm", "lib/utils/display.js", 510, "self.#clearSpinner", "lib/utils/display.Progress.#clearSpinner"),
    ("npm", "lib/commands/profile.js", 309, "otplease", "lib/utils/auth.otplease"),
    ("npm", "lib/commands/cache.js", 100, "self.clean", "lib/commands/cache.Cache.clean"),
    ("npm", "lib/commands/help.js", 86, "openUrl", "lib/utils/open-url.openUrl"),
    ("npm", "lib/commands/dist-tag.js", 147, "otplease", "lib/utils/auth.otplease"),
    ("npm", "lib/package-url-cmd.js", 36, "openUrl", "lib/utils/open-url.openUrl"),
    ("npm", "lib/utils/display.js", 541, "self.#clearSpinner", "lib/utils/display.Progress.#clearSpinner"),
    ("npm", "lib/commands/profile.js", 173, "readPasswords", "lib/commands/profile.Profile.set.readPasswords"),
    ("npm", "lib/trust-cmd.js", 228, "self.dialogue", "lib/trust-cmd.TrustCommand.dialogue"),
    ("npm", "lib/utils/queryable.js", 59, "parseSqBrackets", "lib/utils/queryable.parseKeys.parseSqBrackets"),
    ("npm", "lib/commands/diff.js", 183, "tryAnySpec", "lib/commands/diff.Diff.retrieveSpecs.tryAnySpec"),
    ("npm", "lib/utils/resolve-allow-scripts.js", 109, "policyFromSources", "lib/utils/resolve-allow-scripts.policyFromSources"),
]


def copy_sources(src: Path, dest: Path, exclude: list[str]) -> int:
    """Copy the files an index of `src` would read (plus layout files); returns bytes copied."""
    total = 0
    for rel in list_files(src, exclude):
        if language_of(rel) is None and rel.rsplit("/", 1)[-1] not in LAYOUT_FILES:
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if (src / rel).is_symlink() or not (src / rel).is_file():
            continue
        shutil.copy2(src / rel, target)
        total += target.stat().st_size
    return total


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def queries(g: CodeGraph, repo: str, count: int = 100) -> dict[str, tuple[float, float]]:
    rows = g.db.execute(
        "SELECT s.qualname, s.name, f.path FROM symbols s JOIN files f ON f.id = s.file_id JOIN repos r ON r.id = s.repo_id "
        "WHERE r.name = ? AND s.kind IN ('function', 'method', 'class') ORDER BY s.id",
        (repo,),
    ).fetchall()
    picked = random.Random(7).sample(rows, min(count, len(rows)))
    kinds: dict[str, Callable[[tuple[str, str, str]], Any]] = {
        "find": lambda r: g.find(r[1], repo=repo),
        "def": lambda r: g.definition(r[0], repo=repo),
        "callers": lambda r: g.callers(r[0], repo=repo),
        "callees": lambda r: g.callees(r[0], repo=repo),
        "impact": lambda r: g.impact(r[0], repo=repo, depth=2),
        "outline": lambda r: g.outline(r[2], repo=repo),
    }
    out = {}
    for kind, fn in kinds.items():
        ms = [timed(lambda r=r, fn=fn: fn(r))[0] * 1000 for r in picked]  # type: ignore[misc]
        out[kind] = (statistics.median(ms), percentile(ms, 0.95))
    return out


def edited_file(root: Path) -> Path:
    """A mid-sized Python (else any) source file of the corpus, chosen deterministically."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and language_of(p.relative_to(root).as_posix()))
    python = [p for p in files if p.suffix == ".py" and 2_000 < p.stat().st_size < 40_000] or files
    return python[len(python) // 2]


def run_corpus(name: str, src: Path, exclude: list[str], work: Path) -> dict[str, Any]:
    copy = work / name
    size = copy_sources(src, copy, exclude)
    settings = Settings.load(env={}, home=str(work / f"home-{name}"))
    with CodeGraph(settings=settings) as g:
        full_s, report = timed(lambda: g.index(copy, name=name))
        again_s, again = timed(lambda: g.index(copy))
        target = edited_file(copy)
        target.touch()
        touch_s, touched = timed(lambda: g.index(copy))
        with target.open("a") as fh:
            fh.write("\n\ndef bench_added_function():\n    return bench_added_function()\n" if target.suffix == ".py" else "\n")
        edit_s, edited = timed(lambda: g.index(copy))
        calls, resolved_calls = g.db.execute("SELECT COUNT(*), COUNT(dst_id) FROM edges WHERE kind = 'call'").fetchone()
        lat = queries(g, name)
        precision = check_sample(g, name)
    return {
        "name": name, "source": str(src), "files": report.files, "mb": size / 1e6, "full_s": full_s,
        "symbols": report.symbols, "edges": report.edges, "resolved": report.resolved, "calls": calls,
        "resolved_calls": resolved_calls, "partial": len(report.partial), "skipped": len(report.skipped),
        "again_s": again_s, "again_parsed": again.parsed, "touch_s": touch_s, "touch_parsed": touched.parsed,
        "edit_s": edit_s, "edit_parsed": edited.parsed, "edit_reresolved": edited.reresolved,
        "edited": target.relative_to(copy).as_posix(), "latency": lat, "precision": precision,
    }  # fmt: skip


def check_sample(g: CodeGraph, corpus: str) -> list[tuple[str, str, int, str, str, str | None]]:
    """Each sample edge of this corpus with what the graph resolved it to."""
    out = []
    for c, path, line, name, expected in SAMPLE:
        if c != corpus:
            continue
        row = g.db.execute(
            "SELECT b.qualname FROM edges e JOIN files f ON f.id = e.file_id JOIN repos r ON r.id = e.repo_id "
            "LEFT JOIN symbols b ON b.id = e.dst_id WHERE r.name = ? AND f.path = ? AND e.line = ? AND e.name = ? AND e.kind = 'call'",
            (corpus, path, line, name),
        ).fetchone()
        out.append((c, path, line, name, expected, row[0] if row else None))
    return out


def render(results: list[dict[str, Any]], command: str, load: float) -> str:
    lines = [
        "## Code graph",
        "",
        (
            f"`{command}` (protocol in the script's docstring). One process on the shared 2-core machine "
            f"(load average {load:.1f} when it started: other work was running, so times are pessimistic); "
            "each corpus copied to a temp folder and indexed into a fresh graph."
        ),
        "",
        (
            "| corpus | files | MB | full index | files/s | symbols | edges (resolved) | call edges resolved | "
            "no-change run | touch 1 file | edit 1 file (re-resolved edges) |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['name']} | {r['files']} | {r['mb']:.1f} | {r['full_s']:.1f} s | {r['files'] / r['full_s']:.0f} | {r['symbols']} | "
            f"{r['edges']} ({r['resolved']}) | {r['resolved_calls'] / max(1, r['calls']):.0%} | {r['again_s']:.2f} s | "
            f"{r['touch_s']:.2f} s ({r['touch_parsed']} parsed) | {r['edit_s']:.2f} s ({r['edit_parsed']} parsed, {r['edit_reresolved']}) |"
        )
    lines += ["", "Query latency, ms (p50 / p95) over 100 seeded symbols per corpus:", ""]
    kinds = list(results[0]["latency"])
    lines += ["| corpus | " + " | ".join(kinds) + " |", "|---|" + "---|" * len(kinds)]
    for r in results:
        lines.append(f"| {r['name']} | " + " | ".join(f"{a:.1f} / {b:.1f}" for a, b in r["latency"].values()) + " |")
    checked = [row for r in results for row in r["precision"]]
    right = [row for row in checked if row[5] == row[4]]
    wrong = [row for row in checked if row[5] is not None and row[5] != row[4]]
    missing = [row for row in checked if row[5] is None]
    lines += [
        "",
        (
            f"Precision of resolved call edges, hand-verified sample (`SAMPLE` in the script): "
            f"**{len(right)}/{len(right) + len(wrong)} correct** ({len(right) / max(1, len(right) + len(wrong)):.0%}) "
            f"over {len(checked)} call sites ({sum(1 for c in checked if c[0] == 'stdlib')} stdlib Python, "
            f"{sum(1 for c in checked if c[0] == 'npm')} npm JavaScript); {len(missing)} no longer resolved."
        ),
    ]
    for row in wrong:
        lines.append(f"- wrong: {row[1]}:{row[2]} `{row[3]}` → {row[5]} (expected {row[4]})")
    for row in missing:
        lines.append(f"- unresolved now: {row[1]}:{row[2]} `{row[3]}` (expected {row[4]})")
    lines += [
        "",
        (
            "Resolution is deliberately conservative: calls on values whose type would need inference "
            "(`obj.save()`, `self.attr.method()`, builtins, third-party names) stay unresolved names, which is why "
            "the resolved share of call edges is well below 100% while precision stays high. `callers` still "
            "lists such calls by name, flagged as unresolved."
        ),
        "",
    ]
    return "\n".join(lines)


def write_section(path: Path, section: str) -> None:
    """Replace the `## Code graph` section of RESULTS.md (or append it), leaving the rest alone."""
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    start = text.find("## Code graph")
    if start < 0:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section.rstrip("\n") + "\n" + ("\n" + text[end + 1 :] if end >= 0 else "")
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="this repository only; print, write nothing")
    parser.add_argument("--results", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args(argv)
    corpora: list[tuple[str, Path, list[str]]] = [("palimpsest", REPO, [])]
    if not args.quick:
        corpora.append(("stdlib", STDLIB, ["site-packages/"]))
        if NPM.is_dir():
            corpora.append(("npm", NPM, []))
    results = []
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="codegraph-bench-") as tmp:
        for name, src, exclude in corpora:
            print(f"indexing {name} ({src}) …", file=sys.stderr, flush=True)
            results.append(run_corpus(name, src, exclude, Path(tmp)))
    section = render(results, "python bench/codegraph.py" + (" --quick" if args.quick else ""), load)
    print(section)
    if not args.quick:
        write_section(args.results, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
