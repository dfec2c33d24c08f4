"""Discovery (issue 19): help on every argument with its default, progress bars on long
commands (to a person's terminal only), and the startup line of `serve` naming the panel."""

from __future__ import annotations

import argparse
import json
import os
import pty
import subprocess
import threading
import time
from pathlib import Path

import httpx

from palimpsest import Memory, Settings
from palimpsest.cli import build_parser
from palimpsest.cli.helps import arguments
from palimpsest.ids import short_id
from palimpsest.store import NewJob
from test_setup import EXE, env_for


def test_every_argument_of_every_command_has_help_and_its_default() -> None:
    undescribed, hidden_default = [], []
    for owner, action in arguments(build_parser()):
        name = "/".join(action.option_strings) or action.dest
        if not action.help:
            undescribed.append(f"{owner.prog} {name}")
            continue
        meaningful = action.default not in (None, False, [], argparse.SUPPRESS) and action.option_strings
        shown = owner.formatter_class(owner.prog)._get_help_string(action) % vars(action)  # type: ignore[attr-defined]
        if meaningful and "default" not in shown:
            hidden_default.append(f"{owner.prog} {name}")
    assert undescribed == [] and hidden_default == []


def test_defaults_that_say_nothing_are_not_shown() -> None:
    help_text = build_parser()._subparsers._group_actions[0].choices["serve"].format_help()  # type: ignore[union-attr]
    assert "(default: None)" not in help_text and "(default: False)" not in help_text
    assert "(default: 2.0)" in help_text  # --interval


def _run_on_a_terminal(home: Path, *argv: str) -> tuple[str, str]:
    """The command with stderr on a pseudo-terminal (as a person sees it) and stdout piped."""
    master, slave = pty.openpty()
    env = {**env_for(home), "PALIMPSEST_HOME": str(home), "PALIMPSEST_EMBEDDER": "none", "TERM": "xterm", "COLUMNS": "100"}
    proc = subprocess.Popen([str(EXE), *argv], stdout=subprocess.PIPE, stderr=slave, env=env, text=True)
    os.close(slave)
    seen: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed its end
                return
            if not chunk:
                return
            seen.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    out, _ = proc.communicate(timeout=120)
    reader.join(10)
    os.close(master)
    return out, b"".join(seen).decode("utf-8", "replace")


def test_jobs_run_shows_a_bar_on_a_terminal_and_nothing_otherwise(tmp_path: Path) -> None:
    def queue(n: int) -> None:
        with Memory(tmp_path, settings=Settings.load(env={}, embedder="none")) as m:
            m.store.enqueue([NewJob("no-such-task", {"i": i}, job_key=f"k{time.time_ns()}-{i}", max_attempts=1) for i in range(n)])

    queue(40)
    out, terminal = _run_on_a_terminal(tmp_path, "jobs", "run")
    assert out.strip() == "ran 40 jobs"
    assert "jobs" in terminal and "40/40" in terminal and "━" in terminal
    queue(5)
    out, terminal = _run_on_a_terminal(tmp_path, "jobs", "run", "--json")
    assert json.loads(out) == {"ran": 5, "curated": 0, "waiting": 0, "queued": {}, "next_run": None, "running": {}} and "━" not in terminal and "5/5" not in terminal
    queue(5)
    done = subprocess.run([str(EXE), "jobs", "run"], capture_output=True, text=True, timeout=120, check=False,
                          env={**env_for(tmp_path), "PALIMPSEST_HOME": str(tmp_path), "PALIMPSEST_EMBEDDER": "none"})
    assert done.stdout.strip() == "ran 5 jobs" and "━" not in done.stderr and "5/5" not in done.stderr  # not a terminal: no bar


def test_rebuild_pulses_on_a_terminal(tmp_path: Path) -> None:
    with Memory(tmp_path, settings=Settings.load(env={}, embedder="none")) as m:
        m.append("s", "user", "a message to rebuild")
    out, terminal = _run_on_a_terminal(tmp_path, "rebuild")
    assert out.startswith("rebuilt: 1 messages") and "rebuilding" in terminal


def test_the_startup_line_of_serve_names_the_panel(tmp_path: Path) -> None:
    env = {**env_for(tmp_path), "PALIMPSEST_HOME": str(tmp_path / "h"), "PALIMPSEST_EMBEDDER": "none"}
    proc = subprocess.Popen([str(EXE), "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        assert "panel: http://127.0.0.1:" in line
        panel = line.split("panel: ", 1)[1].split(",", 1)[0]
        assert panel.endswith("/panel") and httpx.get(panel).status_code == 200
    finally:
        proc.terminate()
        proc.wait(30)


def test_ids_in_tables_are_never_folded_at_80_columns(tmp_path: Path) -> None:
    session = "claude-2f0c9a7e-41b2-4c77-a3"  # as long as a harness id
    with Memory(tmp_path, settings=Settings.load(env={}, embedder="none")) as m:
        ids = [m.append(session, "user", "words " * 60)["id"] for _ in range(3)]
    env = {**env_for(tmp_path), "PALIMPSEST_HOME": str(tmp_path), "PALIMPSEST_EMBEDDER": "none", "COLUMNS": "80"}
    done = subprocess.run([str(EXE), "browse"], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0
    assert all(short_id(i) in done.stdout for i in ids) and session in done.stdout  # one session: named once, above its rows
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    with Memory(tmp_path, settings=Settings.load(env={}, embedder="none")) as m:
        m.append("s2", "user", "words " * 60)
    done = subprocess.run([str(EXE), "browse"], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert all(short_id(i) in done.stdout for i in ids) and max(len(line) for line in done.stdout.splitlines()) <= 80
    # two sessions: a column, folded at 80 columns rather than leave the content no room


def test_facts_list_is_the_listing_a_new_user_types_first(tmp_path: Path) -> None:
    with Memory(tmp_path, settings=Settings.load(env={}, embedder="none")) as m:
        m.facts.curator.write({"text": "Our CI system is GitHub Actions."})
    env = {**env_for(tmp_path), "PALIMPSEST_HOME": str(tmp_path), "PALIMPSEST_EMBEDDER": "none"}
    listed = [subprocess.run([str(EXE), "facts", verb], capture_output=True, text=True, env=env, timeout=60, check=False)
              for verb in ("list", "query")]
    assert [d.returncode for d in listed] == [0, 0] and "GitHub Actions" in listed[0].stdout
    assert listed[0].stdout == listed[1].stdout
