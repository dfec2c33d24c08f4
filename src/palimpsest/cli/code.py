"""`palimpsest code …`: the code graph (index, find, def, callers, callees, impact, outline)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import add_command, count, emit, progress


def register(sub: Any) -> None:
    p = add_command(sub, "code", _help, "Codebase memory: symbols and the call graph of indexed repositories.", json_flag=False)
    csub = p.add_subparsers(dest="code_command", metavar="ACTION", required=True)

    q = add_command(csub, "index", index, "Index a repository (incremental: only changed files are parsed).")
    q.add_argument("path", nargs="?", default=".", help="root of the tree (default: current directory)")
    q.add_argument("--name", help="repository name, as a `project:` tag names it (default: the folder's name)")
    q.add_argument("--exclude", action="append", metavar="PATTERN", help="gitignore-style pattern to leave out (repeatable; remembered)")
    q.add_argument("--full", action="store_true", help="re-parse and re-resolve every file")

    q = add_command(csub, "find", find, "Find symbols by name, fuzzily.")
    q.add_argument("name")
    _repo(q)
    q.add_argument("--kind", help="only this kind (function, method, class, struct, …)")
    q.add_argument("--limit", type=count(1), default=20)

    q = add_command(csub, "def", definition, "Show where a symbol is defined (qualified name or any dotted tail of it).")
    q.add_argument("symbol")
    _repo(q)

    q = add_command(csub, "callers", callers, "Who calls a symbol (resolved calls, then calls matching only by name).")
    q.add_argument("symbol")
    _repo(q)
    q.add_argument("--resolved-only", action="store_true", help="leave out calls that match only by name")
    q.add_argument("--limit", type=count(1), default=200)

    q = add_command(csub, "callees", callees, "What a symbol calls, in source order.")
    q.add_argument("symbol")
    _repo(q)

    q = add_command(csub, "impact", impact, "Who is affected if a symbol changes: callers and subclasses, transitively.")
    q.add_argument("symbol")
    _repo(q)
    q.add_argument("--depth", type=count(1), default=3)

    q = add_command(csub, "outline", outline, "The symbols of one file, nested.")
    q.add_argument("file")
    _repo(q)

    add_command(csub, "repos", repos, "List indexed repositories.")

    q = add_command(csub, "stats", stats, "Counts of files, symbols and edges (resolved / total) of a repository.")
    _repo(q)

    q = add_command(csub, "forget", forget, "Drop a repository from the code graph.")
    q.add_argument("repo")


def _repo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", help="repository name or root (default: the one around the current directory)")


def _help(args: argparse.Namespace) -> int:
    sys.stderr.write("usage: palimpsest code {index,find,def,callers,callees,impact,outline,repos,stats,forget} …\n")
    return 2


def open_graph(args: argparse.Namespace) -> Any:
    from ..code import CodeGraph
    from ..settings import Settings

    return CodeGraph(settings=Settings.load(home=args.home))


def index(args: argparse.Namespace) -> None:
    with open_graph(args) as g, progress(args, "indexing code"):  # (no count from the graph: the bar pulses)
        report = g.index(args.path, name=args.name, exclude=args.exclude, full=args.full)
    emit(args, report, _print_report)


def find(args: argparse.Namespace) -> None:
    with open_graph(args) as g:
        found = g.find(args.name, repo=args.repo, kind=args.kind, limit=args.limit)
    emit(args, {"symbols": found}, lambda r: _print_symbols(r["symbols"]))


def definition(args: argparse.Namespace) -> None:
    with open_graph(args) as g:
        found = g.definition(args.symbol, repo=args.repo)
    emit(args, {"symbols": found}, lambda r: _print_symbols(r["symbols"]))


def callers(args: argparse.Namespace) -> None:
    with open_graph(args) as g:
        edges = g.callers(args.symbol, repo=args.repo, unresolved=not args.resolved_only, limit=args.limit)
    emit(args, {"edges": edges}, lambda r: _print_edges(r["edges"], side="source"))


def callees(args: argparse.Namespace) -> None:
    with open_graph(args) as g:
        edges = g.callees(args.symbol, repo=args.repo)
    emit(args, {"edges": edges}, lambda r: _print_edges(r["edges"], side="target"))


def impact(args: argparse.Namespace) -> None:
    with open_graph(args) as g:
        found = g.impact(args.symbol, repo=args.repo, depth=args.depth)
    emit(args, {"impact": found}, _print_impact)


def outline(args: argparse.Namespace) -> None:
    with open_graph(args) as g:
        items = g.outline(args.file, repo=args.repo)
    emit(args, {"outline": items}, _print_outline)


def repos(args: argparse.Namespace) -> None:
    with open_graph(args) as g:
        found = g.repos()
    emit(args, {"repos": found}, _print_repos)


def stats(args: argparse.Namespace) -> None:
    with open_graph(args) as g:
        emit(args, g.stats(args.repo), _print_stats)


def forget(args: argparse.Namespace) -> None:
    with open_graph(args) as g:
        gone = g.forget(args.repo)
    emit(args, {"forgotten": gone}, lambda r: print(f"forgot {gone.name} ({gone.root})"))


# -- people's output ------------------------------------------------------------------------


def _print_report(report: Any) -> None:
    print(f"{report.repo}: {report.files} files ({report.parsed} parsed, {report.unchanged} unchanged, "
          f"{report.deleted} deleted) in {report.seconds:.2f}s")  # fmt: skip
    print(f"  {report.symbols} symbols, {report.edges} edges ({report.resolved} resolved)")
    for label, rows in (("skipped", report.skipped), ("partly parsed", report.partial)):
        for row in rows[:20]:
            print(f"  {label}: {row['path']}: {row['reason']}")
        if len(rows) > 20:
            print(f"  … {len(rows) - 20} more {label} (see --json)")
    for path in report.changed_during:
        print(f"  changed while indexing: {path} (indexed as read; re-read next run)")


def _print_repos(result: dict[str, Any]) -> None:
    for r in result["repos"]:
        print(f"{r.name}\t{r.root}\t{r.indexed_at or '-'}")


def _print_stats(result: dict[str, Any]) -> None:
    for key, value in result.items():
        print(f"{key}: {value}")


def _print_symbols(symbols: list[Any]) -> None:
    if not symbols:
        print("no symbols found")
    for s in symbols:
        print(f"{s.path}:{s.start_line}-{s.end_line}\t{s.kind}\t{s.qualname}")
        if s.signature:
            print(f"    {s.signature}")
        if s.doc:
            print(f"    {s.doc}")


def _print_edges(edges: list[Any], side: str) -> None:
    if not edges:
        print("none found")
    for e in edges:
        if side == "source":
            note = "" if e.resolved else "   (matches by name only)"
            print(f"{e.path}:{e.line}\t{e.source.qualname}\t→ {e.target.qualname if e.target else e.name}{note}")
        else:
            print(f"{e.path}:{e.line}\t{e.name}\t→ {e.target.qualname + ' (' + e.target.path + ')' if e.target else '?'}")


def _print_impact(result: dict[str, Any]) -> None:
    if not result["impact"]:
        print("nothing depends on it in the graph")
    for item in result["impact"]:
        s = item.symbol
        print(f"{'  ' * (item.depth - 1)}{item.depth} {item.via:7} {s.qualname}\t{s.path}:{s.start_line}")


def _print_outline(result: dict[str, Any]) -> None:
    for item in result["outline"]:
        s = item.symbol
        print(f"{s.start_line:>5}  {'  ' * item.depth}{s.kind} {s.signature or s.name}")
