"""Helpers every command module shares: sub-command creation, opening memory, output.

Stored text is printed as text, never as Rich markup: `console()` is a Rich console with
markup, emoji codes and highlighting off, and `cell()` turns a stored value into one line
of plain `Text` with its control characters shown as escapes (`\\x1b`), so a prompt
template (`[INST]`), a type (`list[int]`) or an ANSI escape in a message can neither
crash a table nor vanish from it nor drive the terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any, NoReturn

from ..envelope import bidi_shown

EXIT_PARTIAL = 2  # part of the work failed and was reported; the rest was done (`import`, `index`)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SPACE = re.compile(r"[\t\n]+")


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors honour `--json` (one JSON document on stderr, exit 2)."""

    json_errors = False  # set by `main` when `--json` is on the command line

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._given = list(sys.argv[1:] if args is None else args)  # (read by `error`: this parser's own words)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        message += self._dash_hint(message)
        if Parser.json_errors:
            error = {"code": "invalid_input", "message": f"{self.prog}: {message}"}
            sys.stderr.write(json.dumps({"ok": False, "error": error}, ensure_ascii=False) + "\n")
            raise SystemExit(2)
        super().error(message)


    def _dash_hint(self, message: str) -> str:
        """How to give a value that starts with a dash: an SRE's `palimpsest search "--force-conflicts"` (a flag asked
        about) was "the following arguments are required: query", with no word of the `--` that lets it through."""
        if "required" not in message and "unrecognized" not in message:
            return ""
        unknown = next((a for a in getattr(self, "_given", []) if a.startswith("-") and a != "--"
                        and a.split("=", 1)[0] not in self._option_string_actions and not a[1:2].isdigit()), None)
        return "" if unknown is None else f"; a value starting with '-' goes after '--': {self.prog} -- {shlex.quote(unknown)}"


def count(least: int = 1) -> Callable[[str], int]:
    """An argparse type: a whole number of at least `least` (limits, offsets, budgets)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"{value} is below {least}: give a whole number of at least {least}")
        return value

    parse.__name__ = "count"  # argparse names the type in its messages
    return parse


def words(query: str | None) -> str:
    """A query with words in it, or the one refusal of an empty query (`errors.EMPTY_QUERY`)."""
    from ..errors import EMPTY_QUERY, InvalidInput, blank

    if not query or blank(query):
        raise InvalidInput(EMPTY_QUERY)
    return query


def add_command(sub: Any, name: str, func: Callable[..., Any], help: str, *, json_flag: bool = True,
                aliases: tuple[str, ...] = ()) -> argparse.ArgumentParser:
    """A sub-command whose `func(args)` returns something to print. `--home` and `--store`
    are accepted here too, after the command (they override the ones before it)."""
    p = sub.add_parser(name, help=help, description=help, formatter_class=argparse.ArgumentDefaultsHelpFormatter, aliases=list(aliases))
    p.set_defaults(func=func)
    if json_flag:
        p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--home", default=argparse.SUPPRESS, help="home folder (as before the command)")
    p.add_argument("--store", default=argparse.SUPPRESS, help="store URL (as before the command)")
    return p


def open_memory(args: argparse.Namespace, repair: bool = False, serving: bool = False) -> Any:
    """This machine's memory (`--home`, `--store`, else the settings), saying on stderr when
    PALIMPSEST_URL, or else the installed hooks, name a server of another store (not for `serving`: `serve`, `worker`)."""
    from ..memory import Memory

    memory = Memory(home=args.home, store=args.store, repair=repair)
    if not serving:
        memory.embeds_queued = []  # (what this command writes, `derive.after_writes` embeds; not a server's backlog)
    if not serving and args.home is None and args.store is None:
        say_whose(memory)
    return memory


def say_whose(memory: Any) -> None:
    """One line on stderr when this machine's server (`told_server`) answers and serves another
    store than this command's: on a client machine of a shared server (docs/server.md) `search`
    answered nothing and `stats` said sqlite, 0 messages, from an empty home while the server
    held 3,299 messages (a platform engineer's). The command still reads this memory: a CLI
    command opens the library, and the server's HTTP API is the tools' surface, not the CLI's."""
    from ..errors import redact_url

    settings = memory.settings
    url = told_server(settings)
    if url is None:
        return
    if not plainly_elsewhere(url, settings.store_url):
        theirs = server_store(url)
        if not theirs or theirs == memory.store_fingerprint:  # ("": a server that names no store: nothing to tell)
            return
    print(f"palimpsest: this command uses the memory in {memory.home} ({redact_url(settings.store_url)}), not the server at "
          f"{redact_url(url)}, which serves another store (or this one by another address): to use the server's memory, run the command where it "
          "runs, or set PALIMPSEST_STORE to its database here (several homes on one PostgreSQL: docs/server.md); an MCP "
          "client reaches its tools with `palimpsest mcp --remote`", file=sys.stderr)


def told_server(settings: Any) -> str | None:
    """The server this machine was told of: PALIMPSEST_URL when set, else the one its installed hooks capture to (`setup
    --url`, which a harness reads from its own configuration: the variable is often not exported in the user's shell,
    and `search` answered an empty table from a new home, silently). None for neither: the default port may be another
    user's server, no server of this home."""
    if settings.source("url") != "default":
        return str(settings.url)
    from ..capture.setup import hooks_url

    return hooks_url(dict(os.environ))


def plainly_elsewhere(url: str, store_url: str) -> bool:
    """Whether the server at `url` cannot be serving `store_url`, unasked: a server on another machine does not serve
    this machine's SQLite file. Asking it cost every command on a laptop off the VPN its wait (`/healthz` on each
    `search`, seconds where the resolver hangs); a loopback server, or a database both may use, is still asked."""
    from ..settings import loopback

    return store_url.startswith("sqlite:///") and not loopback(url)


def journal_only(args: argparse.Namespace, why: Exception) -> Any:
    """A writer for a CLI write while the store cannot be reached: the messages are journaled
    (durable, deduplicated) and indexed when the store is back — by `palimpsest serve`,
    `palimpsest jobs run`, or the next write to the session. Says so on stderr."""
    from .. import memory
    from ..settings import Settings

    settings = Settings.load(**{k: v for k, v in (("home", args.home), ("store", args.store)) if v})
    # said before the write, so it says what is tried, not what was done (on a read-only home it said "journaled" and then
    # "nothing was stored": a data steward's)
    print(f"palimpsest: the store cannot be reached ({why}): writing to the journal in {settings.home_path} only; indexed when "
          "it is back (`palimpsest serve`, `palimpsest jobs run`, or the next write to the session)", file=sys.stderr)
    return memory.journal_only(settings, str(why))


def server_answers(url: str, store: str | None = None) -> bool:
    """Whether a server answers at `url` — and, given `store` (`Memory.store_fingerprint`),
    takes its jobs from that database: a server of another home (the default port may be
    another user's) would leave them queued for good."""
    theirs = server_store(url)
    return theirs is not None and (store is None or theirs == store)


def server_store(url: str, seconds: float = 0.5) -> str | None:
    """The store a server answering at `url` serves (its `/healthz` names it: `store.fingerprint`;
    "" when it names none), or None when no server answers there within `seconds`, name resolution
    included: httpx's timeout leaves it out, and a resolver off the VPN hangs for seconds (the ask
    runs in a thread, left behind when it is late)."""
    import threading

    answer: list[str | None] = [None]
    ask = threading.Thread(target=lambda: answer.__setitem__(0, _healthz_store(url, seconds)), daemon=True)
    ask.start()
    ask.join(seconds)
    return answer[0]


def _healthz_store(url: str, seconds: float) -> str | None:
    import httpx

    try:
        r = httpx.get(url.rstrip("/") + "/healthz", timeout=seconds, trust_env=False)
    except httpx.HTTPError:
        return None
    if r.status_code != 200:
        return None
    try:
        return str(r.json()["result"].get("store") or "")
    except (ValueError, KeyError, TypeError, AttributeError):
        return ""


def minute(stamp: Any) -> str:
    """A stored time as a listing shows it: to the minute, on the reader's clock (the
    `timezone` setting, else this machine's; `--json` keeps the stored UTC)."""
    from ..records import local_minute

    return local_minute(stamp, _reader_zone())


@cache
def _reader_zone() -> Any:
    """The zone a listing's times are shown in, read once per command (not per row)."""
    from ..settings import Settings

    return Settings.load().zone


def emit(args: argparse.Namespace, result: Any, human: Callable[[Any], None] | None = None) -> None:
    if getattr(args, "json", False) or human is None:
        sys.stdout.write(json.dumps(result, ensure_ascii=False, default=_default) + "\n")
    elif sys.stdout.isatty() or sys.stderr.isatty():
        with _terminal_safe():
            human(result)
    else:
        human(result)


_TERMINAL_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline: ESC, BEL, CR, C1 …


class _TerminalSafe:
    """A terminal's text stream that shows control characters as `\\xNN`: a stored message printed by `recall`,
    `get-full`, `briefing` or `docs` had cleared the screen, set the title and written the clipboard (OSC 52).
    Rich's tables keep the stream beneath (`raw`), and their own styling, for their cells are escaped already."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        return int(self.raw.write(_TERMINAL_UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)) or 0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


@contextmanager
def _terminal_safe() -> Iterator[None]:
    out, err = sys.stdout, sys.stderr
    sys.stdout = _TerminalSafe(out) if out.isatty() else out  # type: ignore[assignment]
    sys.stderr = _TerminalSafe(err) if err.isatty() else err  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


def _default(obj: Any) -> Any:
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    raise TypeError(f"cannot serialise {type(obj).__name__}")


Progress = Callable[[int, "int | None"], None]


@contextmanager
def progress(args: argparse.Namespace, label: str) -> Iterator[Progress]:
    """A Rich progress bar on stderr for a command that can run longer than a second, shown
    only to a person watching a terminal: off when stderr is not a TTY and with `--json`.
    Yields `update(done, total)`; never called (work the library cannot count), the bar
    pulses with the elapsed time, so a long command is never silent."""
    if getattr(args, "json", False) or not sys.stderr.isatty():
        yield _no_progress
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True,
                  console=console(stderr=True)) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int | None = None) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _no_progress(done: int, total: int | None = None) -> None:
    """The progress of a command nobody watches: nothing to draw."""


PIPE_WIDTH = 160  # a table printed into a pipe or a file (Rich's 80 columns folded every cell of a message table)


def console(stderr: bool = False) -> Any:
    """A Rich console that prints strings as they are (no markup, no `:emoji:`, no highlighting);
    into a pipe or a file, `COLUMNS` or `PIPE_WIDTH` wide."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else PIPE_WIDTH
    return Console(file=getattr(stream, "raw", stream), markup=False, emoji=False, highlight=False, width=width)


def shown(value: Any, limit: int | None = None) -> str:
    """A stored value as one line a terminal shows as it is: tabs and newlines become
    spaces, other control characters visible escapes, bidirectional controls their code
    points (`⟦U+202E⟧`, as the panel shows them: a file `relatorio\\u202efdp.exe.md` had
    printed as "relatorioexe.pdf.md"); cut to `limit` characters."""
    text = "" if value is None else str(value)
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", _SPACE.sub(" ", text.replace("\r\n", "\n")))
    text = bidi_shown(text)
    return text if limit is None else text[:limit]


def cell(value: Any, limit: int | None = None) -> Any:
    """A table cell holding `value` as plain text (`shown`)."""
    from rich.text import Text

    return Text(shown(value, limit))


WHOLE = ("id", "session")  # columns whose values are copied and pasted: never folded
WHOLE_MAX = 64  # (past this an id folds after all: a table must still fit a terminal)
NARROW = ("time", "role", "state", "kind")  # short values that read wrong folded ("2026-12-06" over "06:04", "u" over "s" …)


def table(*columns: str, fold: bool = True, whole: dict[str, int] | None = None, **options: Any) -> Any:
    """A Rich table with these column headers; long cells fold rather than being cut, but
    a column in `whole` (its widest value) stays that wide, so an id copies whole."""
    from rich.table import Table

    t = Table(show_header=True, header_style="bold", **options)
    for name in columns:
        if whole and name in whole:
            t.add_column(name, no_wrap=True, overflow="fold", min_width=min(whole[name], WHOLE_MAX))
        elif name in NARROW and whole is not None:
            t.add_column(name, no_wrap=True)
        else:
            t.add_column(name, overflow="fold" if fold else "ellipsis")
    return t


def print_table(columns: tuple[str, ...], rows: Any, title: str | None = None) -> None:
    """A table of stored values, each cell plain text (see `cell`); ids and sessions whole while
    the other columns keep room to be read; `title` a line above it, as it is."""
    cells = [[cell(v) for v in row] for row in rows]
    widest = {c: max((len(r[i].plain) for r in cells), default=len(c)) for i, c in enumerate(columns)}
    whole = {c: widest[c] for c in columns if c in WHOLE}
    out = console()
    # ids whole only while the other columns keep room to be read (a harness's 36-character session ids
    # at 80 columns had left the content none): else every column folds
    fixed = sum(min(w, WHOLE_MAX) for w in whole.values()) + sum(widest[c] for c in columns if c in NARROW) + 3 * len(columns) + 1
    if fixed + 24 * sum(1 for c in columns if c not in WHOLE and c not in NARROW) > out.width:
        whole = {}
    t = table(*columns, whole=whole)
    for row in cells:
        t.add_row(*row)
    if title is not None:
        out.print(cell(title))
    out.print(t)
