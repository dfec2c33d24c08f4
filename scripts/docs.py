"""Regenerate the README's CLI and settings tables from the code (run after adding either).

    python scripts/docs.py          # rewrite README.md in place
    python scripts/docs.py --check  # exit 1 if README.md is out of date (the tests run this)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from palimpsest.cli import build_parser
from palimpsest.settings import SETTINGS

README = Path(__file__).resolve().parents[1] / "README.md"


def _named(choices: dict[str, argparse.ArgumentParser]) -> list[tuple[str, list[str], argparse.ArgumentParser]]:
    """Each sub-command once, with its aliases."""
    names: dict[int, list[str]] = {}
    for name, sub in choices.items():
        names.setdefault(id(sub), []).append(name)
    return [(first, rest, choices[first]) for first, *rest in names.values()]


def _commands() -> list[tuple[str, list[str], str]]:
    parser = build_parser()
    rows = []
    for action in parser._subparsers._group_actions:  # argparse keeps sub-commands here
        for name, aliases, sub in _named(action.choices):
            nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
            if nested:
                for inner, inner_aliases, inner_parser in _named(nested[0].choices):
                    rows.append((f"{name} {inner}", inner_aliases, inner_parser.description or ""))
            else:
                rows.append((name, aliases, sub.description or ""))
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def cli_table() -> str:
    lines = ["| command | what it does |", "|---|---|"]
    lines += [f"| `palimpsest {name}`{''.join(f' (`{a}`)' for a in aliases)} | {_cell(help)} |" for name, aliases, help in _commands()]
    return "\n".join(lines)


def settings_table() -> str:
    lines = ["| setting | environment | default | what it does |", "|---|---|---|---|"]
    for s in SETTINGS:
        default = "" if s.default in ("", None) else f"`{s.default}`"
        lines.append(f"| {s.name} | `{s.env}` | {default} | {_cell(s.help)} |")
    return "\n".join(lines)


def render(text: str) -> str:
    for tag, table in (("cli", cli_table()), ("settings", settings_table())):
        start, end = f"<!-- {tag} -->", f"<!-- /{tag} -->"
        if start not in text:
            raise SystemExit(f"README.md has no {start} … {end} block")
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{start}\n{table}\n{end}{tail}"
    return text


def main() -> int:
    check = "--check" in sys.argv[1:]
    current = README.read_text(encoding="utf-8")
    fresh = render(current)
    if check:
        if fresh != current:
            print("README.md is out of date: run python scripts/docs.py", file=sys.stderr)
            return 1
        return 0
    README.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
