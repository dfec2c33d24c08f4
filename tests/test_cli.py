"""The `palimpsest` command: help on every command, `--json` output and errors, settings
with their sources, and a round trip through the transcript commands."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cli import build_parser, main
from palimpsest.settings import SETTINGS


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """Every (sub-)command with the help text it is listed with (an alias: once, under its name)."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                if name not in helps and any(other is sub for n, other in action.choices.items() if n in helps):
                    continue  # "facts list", an alias of "facts query"
                found.append(((*prefix, name), helps.get(name) or "", sub))
                found += _commands(sub, (*prefix, name))
    return found


def test_every_command_has_help_text() -> None:
    commands = _commands(build_parser())
    assert len(commands) >= 12
    missing = [" ".join(path) for path, text, sub in commands if not text.strip() or not (sub.description or "").strip()]
    assert missing == [], f"commands without help or description: {missing}"


@pytest.mark.parametrize("command", ["append", "ingest", "browse", "search", "get-full", "sessions", "stats", "settings", "rebuild", "sweep"])
def test_printing_commands_take_json(command: str) -> None:
    subs = {path[0]: sub for path, _, sub in _commands(build_parser()) if len(path) == 1}
    assert "--json" in subs[command]._option_string_actions


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")  # no model load: these tests are about the CLI
    return str(tmp_path / "home")


def test_settings_json_shows_values_and_sources(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: str) -> None:
    monkeypatch.setenv("PALIMPSEST_FIELD_CAP", "12000")
    code, out, err = run(capsys, "--home", home, "settings", "--json")
    assert (code, err) == (0, "")
    rows = {r["name"]: r for r in json.loads(out)}
    assert set(rows) == {s.name for s in SETTINGS}
    assert (rows["home"]["value"], rows["home"]["source"]) == (home, "argument")
    assert (rows["field_cap"]["value"], rows["field_cap"]["source"], rows["field_cap"]["env"]) == (12000, "environment", "PALIMPSEST_FIELD_CAP")
    assert (rows["max_event_bytes"]["value"], rows["max_event_bytes"]["source"]) == (16 * 1024 * 1024, "default")
    assert rows["store"]["value"] == f"sqlite:///{Path(home).resolve() / 'palimpsest.db'}"
    assert all(r["help"] for r in rows.values())


def test_settings_hides_secrets(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: str) -> None:
    monkeypatch.setenv("PALIMPSEST_EMBED_API_KEY", "sk-very-secret")
    monkeypatch.setenv("PALIMPSEST_LLM_URL", "https://me:urlSECRET@llm.example/v1")  # a password in a URL (a security review's)
    monkeypatch.setenv("PALIMPSEST_STORE", "postgresql://pguser:pg@SECRET@db.example/mem")  # (an "@" in the password too)
    code, out, _ = run(capsys, "--home", home, "settings", "--json")
    assert code == 0 and "sk-very-secret" not in out and "SECRET" not in out
    assert "https://me:***@llm.example/v1" in out and "postgresql://pguser:***@db.example/mem" in out
    from palimpsest.llm import LLM

    assert "urlSECRET" not in LLM("https://me:urlSECRET@127.0.0.1:9/v1", "m").probe(timeout=0.5)[1]


def test_bad_setting_in_the_environment_is_a_clear_error(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: str) -> None:
    monkeypatch.setenv("PALIMPSEST_FIELD_CAP", "lots")
    code, out, err = run(capsys, "--home", home, "settings", "--json")
    assert code == 2 and out == ""
    assert json.loads(err)["error"]["code"] == "invalid_input" and "PALIMPSEST_FIELD_CAP" in err


@pytest.mark.parametrize(
    ("argv", "code", "error"),
    [
        (["append", "../x", "user", "hi"], 2, "invalid_input"),
        (["append", "s", "user", ""], 2, "invalid_input"),
        (["append", "s", "user", "hi", "--tool-args", "{not json"], 2, "invalid_input"),
        (["browse", "--limit", "0"], 2, "invalid_input"),
        (["browse", "--since", "someday"], 2, "invalid_input"),
        (["get-full", "evt_0000000000000000000000000"], 3, "not_found"),
        (["search", "x", "--mode", "regex", "--limit", "5000"], 2, "invalid_input"),
    ],
)
def test_json_errors_go_to_stderr_with_the_error_exit_code(capsys: pytest.CaptureFixture[str], home: str, argv: list[str], code: int, error: str) -> None:
    got, out, err = run(capsys, "--home", home, *argv, "--json")
    assert (got, out) == (code, "")
    doc = json.loads(err)
    assert doc["ok"] is False and doc["error"]["code"] == error and doc["error"]["message"]


def test_plain_errors_are_one_line_on_stderr(capsys: pytest.CaptureFixture[str], home: str) -> None:
    code, out, err = run(capsys, "--home", home, "get-full", "evt_0000000000000000000000000")
    assert (code, out) == (3, "") and err.startswith("palimpsest: ") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"role": "user", "content": "a1"}\n{"role": "user", "content": "a2"}\noops\n', "not JSON at line 3"),
        ('{"role": "user", "content": "a1"}\n\n{"content": "a2"}\n', "line 3: role is required"),
        ('\n\n[{"role": "user", "content": "a1"},\n oops]', "not JSON at line 4"),
    ],
)
def test_ingest_names_the_line_of_a_bad_message(capsys: pytest.CaptureFixture[str], home: str, tmp_path: Path,
                                                text: str, where: str) -> None:
    f = tmp_path / "t.jsonl"
    f.write_text(text)
    code, out, err = run(capsys, "--home", home, "ingest", "s", str(f))
    assert code == 2 and out == "" and where in err and "nothing was stored" in err
    code, out, _ = run(capsys, "--home", home, "stats", "--json")
    assert json.loads(out)["messages"] == 0


def test_search_shows_the_facts_that_match(capsys: pytest.CaptureFixture[str], home: str) -> None:
    run(capsys, "--home", home, "facts", "write", "The production database is PostgreSQL 16 on db2.internal")
    code, out, _ = run(capsys, "--home", home, "search", "production database PostgreSQL")
    assert code == 0 and "facts:" in out and "The production database is PostgreSQL 16 on db2.internal" in out


def test_search_shows_the_documents_that_match(capsys: pytest.CaptureFixture[str], home: str, tmp_path: Path) -> None:
    """Found by a researcher: `palimpsest search` printed the messages only; the attached
    documents' chunks were in `--json` alone."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "grant.md").write_text("# Grant\n\n## Costs\n\nThe Krios microscope costs 2,400 per day at Hinxton.\n")
    for argv in (("vault", "init", "research", "--path", str(docs)), ("vault", "attach", "research", "--agent", "researcher"),
                 ("index", "research"), ("append", "s1", "user", "Krios booking next week", "--agent", "researcher")):
        assert run(capsys, "--home", home, *argv)[0] == 0
    code, out, _ = run(capsys, "--home", home, "search", "Krios microscope cost per day", "--agent", "researcher")
    assert code == 0 and "documents:" in out and "research/grant.md" in out and "2,400 per day at Hinxton" in out
    assert "messages:" in out and "Krios booking next week" in out


def test_pages_are_said_as_a_span() -> None:
    from palimpsest.vaults import pages_said

    assert (pages_said([1, 3]), pages_said([4, 4]), pages_said([2]), pages_said([])) == ("pages 1–3", "page 4", "page 2", "")


def test_ingest_file_with_a_missing_role(capsys: pytest.CaptureFixture[str], home: str, tmp_path: Path) -> None:
    f = tmp_path / "t.jsonl"
    f.write_text('{"role": "user", "content": "a"}\n{"content": "b"}\n')
    code, out, err = run(capsys, "--home", home, "ingest", "s", str(f), "--json")
    assert code == 2 and out == "" and "line 2: role is required" in json.loads(err)["error"]["message"]
    code, out, _ = run(capsys, "--home", home, "stats", "--json")
    assert json.loads(out)["messages"] == 0


def test_transcript_round_trip(capsys: pytest.CaptureFixture[str], home: str, tmp_path: Path) -> None:
    def ok(*argv: str) -> Any:
        code, out, err = run(capsys, "--home", home, *argv, "--json")
        assert code == 0, err
        return json.loads(out)

    appended = ok("append", "s1", "user", "the retry cap matches the upstream timeout", "--agent", "coder")
    assert appended["stored"] and appended["id"].startswith("evt_")
    assert ok("append", "s1", "user", "the retry cap matches the upstream timeout")["duplicate"]
    f = tmp_path / "t.json"
    f.write_text(json.dumps([{"role": "user", "content": "ok", "created_at": "2024-01-01T00:00:00Z"},
                             {"role": "assistant", "content": "ok", "created_at": "2024-01-01T00:00:01Z"}]))
    assert ok("ingest", "s2", str(f))["stored"] == 2
    assert ok("ingest", "s2", str(f))["duplicates"] == 2
    assert [m["session"] for m in ok("browse")["messages"]] == ["s2", "s2", "s1"]
    assert [m["content"] for m in ok("browse", "--agent", "coder")["messages"]] == ["the retry cap matches the upstream timeout"]
    hits = ok("search", "retry cap")["hits"]
    assert hits[0]["id"] == appended["id"]
    assert ok("get-full", appended["id"])["content"] == "the retry cap matches the upstream timeout"
    assert {s["id"] for s in ok("sessions")["sessions"]} == {"s1", "s2"}
    stats = ok("stats")
    assert (stats["messages"], stats["index_lag_bytes"]) == (3, 0)
    assert ok("rebuild")["messages"] == 3
    assert ok("sweep") == {"swept": []}


def test_human_output_of_browse(capsys: pytest.CaptureFixture[str], home: str) -> None:
    run(capsys, "--home", home, "append", "s1", "user", "hello there")
    code, out, err = run(capsys, "--home", home, "browse")
    assert code == 0 and "hello there" in out and err == ""


def test_python_dash_m_runs_the_cli(home: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")} | {"PALIMPSEST_EMBEDDER": "none"}
    ok = subprocess.run([sys.executable, "-m", "palimpsest", "--home", home, "stats", "--json"], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert ok.returncode == 0 and json.loads(ok.stdout)["messages"] == 0
    bad = subprocess.run([sys.executable, "-m", "palimpsest", "--home", home, "get-full", "nope", "--json"], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert bad.returncode == 3 and bad.stdout == "" and json.loads(bad.stderr)["error"]["code"] == "not_found"


def test_ingest_file_with_invalid_utf8_is_a_clear_error(capsys: pytest.CaptureFixture[str], home: str, tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_bytes(b'{"role": "user", "content": "ok \xff\xfe bad"}\n')
    code, out, err = run(capsys, "--home", home, "ingest", "s", str(f), "--json")
    assert code == 2 and out == "" and json.loads(err)["error"]["code"] == "invalid_input"


def test_facts_restore_of_no_snapshot_is_a_clear_error(capsys: pytest.CaptureFixture[str], home: str, tmp_path: Path) -> None:
    """Found by an auditor: a missing snapshot, a mistyped path or a folder answered with a traceback, even with --json."""
    code, out, err = run(capsys, "--home", home, "facts", "restore", "--json")
    assert code == 3 and out == "" and json.loads(err)["error"]["code"] == "not_found" and "restore --journal" in err
    code, out, err = run(capsys, "--home", home, "facts", "restore", "--path", str(tmp_path / "nope.jsonl"), "--json")
    assert code == 3 and "nope.jsonl" in json.loads(err)["error"]["message"]
    code, out, err = run(capsys, "--home", home, "facts", "restore", "--path", str(tmp_path))
    assert code == 2 and "is not a file" in err and "Traceback" not in err
    (tmp_path / "palimpsest.db").write_bytes(b"SQLite format 3\x00\xff\xfe" * 100)  # the database given by mistake
    code, out, err = run(capsys, "--home", home, "facts", "restore", "--path", str(tmp_path / "palimpsest.db"), "--json")
    assert code == 2 and "not a facts snapshot" in json.loads(err)["error"]["message"]


def test_sessions_lists_their_titles(capsys: pytest.CaptureFixture[str], home: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by an importer of a year of chats: 34 sessions named chatgpt-<uuid>, and no title in the list."""
    fixture = Path(__file__).parent / "fixtures" / "chatgpt_conversations.json"
    assert run(capsys, "--home", home, "import", str(fixture), "--no-derive")[0] == 0
    monkeypatch.setenv("COLUMNS", "200")  # (at 80 columns a title folds over two lines)
    code, out, _ = run(capsys, "--home", home, "sessions")
    assert code == 0 and "title" in out and "Sourdough starter names" in out and "Roggenbrot" in out


def test_a_value_starting_with_a_dash_is_shown_the_way_through(capsys: pytest.CaptureFixture[str], home: str) -> None:
    """Found by an SRE: `palimpsest search "--force-conflicts"` (a flag asked about) answered "the following arguments
    are required: query", with no word of the `--` that lets it through."""
    code, _, err = run(capsys, "--home", home, "search", "--force-conflicts")
    assert code == 2 and "goes after '--': palimpsest search -- --force-conflicts" in err
    code, _, err = run(capsys, "--home", home, "search", "--limit", "x", "deploy")
    assert code == 2 and "goes after" not in err  # (another mistake: no hint)
    assert run(capsys, "--home", home, "search", "--", "--force-conflicts")[0] == 0
