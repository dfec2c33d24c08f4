"""Vault commands: `vault init|list|attach|detach|access`, `index`, `query`, `docs`,
`write-document`, `skills`, `skill`, `write-skill` (and `reindex VAULT`, registered with
`reindex` in jobs.py). Each calls one method of `palimpsest.vaults.Vaults`. Without
`--agent` the person at the command line reads as the owner (every vault); with it, as
that agent (public vaults and the restricted ones naming it)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import vaults as _vaults_package  # noqa: F401 - registers the skills' recall hook for `palimpsest recall` too
from ..errors import InvalidInput
from .common import EXIT_PARTIAL, add_command, count, emit, minute, open_memory, progress, shown, words


def register(sub: Any) -> None:
    p = add_command(sub, "vault", _usage, "Vaults: `vault init NAME --type semantic|skill|episodic [--path DIR]`, `vault list`, attach, access.",
                    json_flag=False)
    vsub = p.add_subparsers(dest="vault_command", metavar="ACTION", required=True)
    q = add_command(vsub, "init", vault_init, "Create a vault: semantic (documents), skill (procedures) or episodic (facts).")
    q.add_argument("name")
    q.add_argument("--type", default="semantic", choices=["semantic", "skill", "episodic"], help="vault type (default semantic)")
    q.add_argument("--path", help="the vault's folder (a local vault); default <home>/vaults/NAME (global)")
    q.add_argument("--description")
    q.add_argument("--restricted", action="store_true", help="only the agents named by --reader may read it")
    q.add_argument("--reader", action="append", default=[], help="an agent that may read a restricted vault (repeatable)")
    q = add_command(vsub, "list", vault_list, "Every vault with its type, folder, size and state.")
    _agent_arg(q)
    for name, func, help_ in (("attach", vault_attach, "Attach a vault to an agent or a session: their search and recall read it."),
                              ("detach", vault_detach, "Detach a vault from an agent or a session.")):
        q = add_command(vsub, name, func, help_)
        q.add_argument("name")
        target = q.add_mutually_exclusive_group(required=True)
        target.add_argument("--agent")
        target.add_argument("--session")
    q = add_command(vsub, "access", vault_access, "Make a vault public, or restricted to the agents named.")
    q.add_argument("name")
    mode = q.add_mutually_exclusive_group(required=True)
    mode.add_argument("--public", action="store_true")
    mode.add_argument("--restricted", action="store_true")
    q.add_argument("--reader", action="append", help="an agent that may read it (repeatable; replaces the list)")

    q = add_command(sub, "index", index, "Index a document or skill vault: new and changed files (by content hash).")
    q.add_argument("vault")
    q.add_argument("--full", action="store_true", help="re-read every file, changed or not")
    _agent_arg(q)
    q = add_command(sub, "query", query, "The chunks of a document vault closest to a question (hybrid: keywords + similarity).")
    q.add_argument("vault")
    q.add_argument("question")
    q.add_argument("--limit", type=count(1), default=5)
    _agent_arg(q)
    q = add_command(sub, "docs", docs, "The documents of a vault; --status: changed, deleted and never-indexed files.")
    q.add_argument("vault")
    q.add_argument("--status", action="store_true")
    _agent_arg(q)
    q = add_command(sub, "write-document", write_document, "Write a document into a vault (`--text TEXT` or `--file PATH`; `--overwrite` to replace one) and index it at once.")
    q.add_argument("vault")
    q.add_argument("path", help="where in the vault, e.g. notes/deploy.md")
    src = q.add_mutually_exclusive_group(required=True)
    src.add_argument("--text")
    src.add_argument("--file", help="read the content from this file (.pdf / .docx as bytes)")
    q.add_argument("--meta", action="append", default=[], help="metadata KEY=VALUE (repeatable; VALUE may be JSON)")
    q.add_argument("--overwrite", action="store_true", help="replace a file there that was not written this way (its old "
                   "content is kept in the vault journal)")
    _agent_arg(q)

    q = add_command(sub, "skills", skills, "The skills of a skill vault: name and description.")
    q.add_argument("vault")
    _agent_arg(q)
    q = add_command(sub, "skill", skill, "Read one skill of a skill vault.")
    q.add_argument("vault")
    q.add_argument("name")
    _agent_arg(q)
    q = add_command(sub, "write-skill", write_skill, "Write (or replace) a skill and index it at once.")
    q.add_argument("vault")
    q.add_argument("name")
    q.add_argument("--description", default="")
    q.add_argument("--trigger", action="append", default=[], help="a word or phrase that loads it into recall (repeatable)")
    body = q.add_mutually_exclusive_group(required=True)
    body.add_argument("--body")
    body.add_argument("--file", help="read the body from this file")
    _agent_arg(q)


def _usage(args: argparse.Namespace) -> None:  # argparse requires an action; never reached
    raise SystemExit(2)


def _agent_arg(q: argparse.ArgumentParser) -> None:
    q.add_argument("--agent", help="read as this agent (default: as the owner, who reads every vault)")


def _reader(args: argparse.Namespace) -> Any:
    from ..vaults import OWNER, Reader

    return Reader(agent=args.agent) if getattr(args, "agent", None) else OWNER


def _vaults(memory: Any) -> Any:
    return memory.vaults


# -- vault ----------------------------------------------------------------------------
def vault_init(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        row = _vaults(memory).init(args.name, args.type, args.path, access="restricted" if args.restricted else "public",
                                   readers=args.reader, description=args.description)
        result = _vaults(memory).describe(row)
    emit(args, result, lambda r: print(f"vault {r['name']} ({r['type']}, {r['scope']}, {r['access']}){' in ' + r['path'] if r['path'] else ''}"))


def vault_list(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        rows = _vaults(memory).list(_reader(args))

    def human(rows: list[dict[str, Any]]) -> None:
        for r in rows:
            size = ", ".join(f"{v} {k}" for k, v in r["size"].items() if v)
            who = r["access"] + (f" ({', '.join(r['readers'])})" if r["readers"] else "")
            print(f"{r['name']}\t{r['type']}\t{r['path'] or '(store)'}\t{size or 'empty'}\t{r['state']}\t{who}")

    emit(args, rows, human)


def vault_attach(args: argparse.Namespace, attach: bool = True) -> None:
    with open_memory(args) as memory:
        row = _vaults(memory).attach(args.name, agent=args.agent, session=args.session, attach=attach)
    emit(args, row.to_dict(), lambda r: print(f"{r['name']}: attached to " + (", ".join(f"{a['kind']} {a['target']}" for a in r["attachments"]) or "nothing")))


def vault_detach(args: argparse.Namespace) -> None:
    vault_attach(args, attach=False)


def vault_access(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        row = _vaults(memory).set_access(args.name, "public" if args.public else "restricted", args.reader)
    emit(args, row.to_dict(), lambda r: print(f"{r['name']}: {r['access']}" + (f" ({', '.join(r['readers'])})" if r["readers"] else "")))


# -- documents ------------------------------------------------------------------------
def _print_report(r: dict[str, Any]) -> None:
    print(f"{r['vault']}: {len(r['indexed'])} indexed ({r['chunks']} chunks, {r['pages']} pages), {r['unchanged']} unchanged, "
          f"{len(r['removed'])} removed, {len(r['errors'])} failed in {r['seconds']:.1f}s")
    for e in r["errors"]:
        print(f"  failed {shown(e['path'])}: {shown(e['error'])}", file=sys.stderr)
    for w in r["warnings"]:
        print(f"  warning {shown(w['path'])}: {shown(w['warning'])}", file=sys.stderr)
    for n in r["notes"]:
        print(f"  note: {n}", file=sys.stderr)


def index(args: argparse.Namespace) -> int:
    with open_memory(args) as memory, progress(args, f"indexing {args.vault}") as update:
        report = _vaults(memory).index(args.vault, full=args.full, reader=_reader(args), progress=update)
    return _reported(args, report.to_dict())


def reindex_vault(args: argparse.Namespace) -> int:
    """`palimpsest reindex VAULT [--stale]` (registered in jobs.py beside `reindex`)."""
    with open_memory(args) as memory:
        report = _vaults(memory).reindex(args.vault, stale=args.stale)
    return _reported(args, report.to_dict())


def _reported(args: argparse.Namespace, report: dict[str, Any]) -> int:
    """A document that failed is in the report and makes the exit 2, so a script can tell (the rest was indexed)."""
    emit(args, report, _print_report)
    return EXIT_PARTIAL if report["errors"] else 0


def query(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        result = _vaults(memory).query(args.vault, words(args.question), limit=args.limit, reader=_reader(args)).to_dict()

    def human(r: dict[str, Any]) -> None:
        for n in r["notes"]:
            print(f"note: {n}", file=sys.stderr)
        for h in r["hits"]:
            sim = "—" if h["similarity"] is None else f"{h['similarity']:.2f}"
            where = shown(h["document"]) + (f" › {shown(h['heading_path'])}" if h["heading_path"] else "")
            print(f"{h['score']:.3f}  sim {sim}  {where}\n    {shown(' '.join(h['text'].split()), 300)}")

    emit(args, result, human)


def docs(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        v = _vaults(memory)
        result: Any = v.status(args.vault, _reader(args)) if args.status else v.docs(args.vault, _reader(args))
    if args.status:
        def human(r: dict[str, Any]) -> None:
            for label in ("changed", "deleted", "new"):
                for path in r[label]:
                    print(f"{label:8} {shown(path)}")
            for f in r["failed"]:
                print(f"failed   {shown(f['path'])}: {shown(f['error'])}")
            for f in r["problems"]:
                print(f"problem  {shown(f['path'])}: {shown(f['error'])}")
            for f in r.get("warned", []):
                print(f"warning  {shown(f['path'])}: {shown('; '.join(f['warnings']))}")
            print(f"{r['unchanged']} unchanged")
    else:
        def human(r: list[dict[str, Any]]) -> None:  # type: ignore[misc]
            for d in r:
                said = d["error"] or "; ".join(d.get("warnings") or []) or d["title"]
                print(f"{shown(d['path'])}\t{d['chunks']} chunks\t{minute(d['changed_at'])}\t{shown(said)}")
    emit(args, result, human)


def _meta(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidInput(f"--meta takes KEY=VALUE, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def write_document(args: argparse.Namespace) -> None:
    content: str | bytes = args.text if args.text is not None else Path(args.file).read_bytes()
    if isinstance(content, bytes) and not args.path.lower().endswith((".pdf", ".docx")):
        from ..vaults.extract import ExtractError, decode_text

        try:
            content, warnings = decode_text(content)  # as `index` reads a file: UTF-8, else Windows-1252 with a warning
        except ExtractError as exc:
            raise InvalidInput(f"{args.file}: {exc}") from None
        for warning in warnings:
            sys.stderr.write(f"palimpsest: {args.file}: {warning}\n")
    with open_memory(args) as memory:
        result = _vaults(memory).write_document(args.vault, args.path, content, metadata=_meta(args.meta),
                                                  overwrite=args.overwrite, reader=_reader(args))
    emit(args, result, lambda r: print(f"{r['vault']}/{shown(r['path'])}: {r['chunks']} chunks" + "".join(f"\n  failed: {shown(e['error'])}" for e in r["errors"])))


# -- skills ---------------------------------------------------------------------------
def skills(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        rows = [s.to_dict() for s in _vaults(memory).skill_list(args.vault, _reader(args))]
    emit(args, rows, lambda r: print("\n".join(f"{shown(s['name'])}\t{shown(s['description'])}" for s in r)))


def skill(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        row = _vaults(memory).skill(args.vault, args.name, _reader(args)).to_dict()
    emit(args, row, lambda r: print(f"# {r['name']}\n{r['description']}\n\n{r['body']}"))


def write_skill(args: argparse.Namespace) -> None:
    body = args.body if args.body is not None else Path(args.file).read_text(encoding="utf-8")
    with open_memory(args) as memory:
        row = _vaults(memory).write_skill(args.vault, args.name, args.description, body, triggers=args.trigger or None,
                                          reader=_reader(args)).to_dict()
    emit(args, row, lambda r: print(f"{r['vault']}/{r['path']}: skill {r['name']}"))
