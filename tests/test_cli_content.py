"""The CLI prints stored text as text: no Rich markup, emoji codes or terminal escapes are
interpreted, in tables and plain output alike, whatever a transcript holds (issue 19)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.cli.common import shown
from test_cli import run

CRASHERS = [
    "Llama prompt: <s>[INST] hi [/INST] hello",
    "a[i] = list[int]",
    "[red]alarm[/red] and [bold]",
    "[shell] ls -la",
    "close [/] nothing",
    ":smile: [link=http://x]y[/link]",
]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
    monkeypatch.setenv("COLUMNS", "400")  # wide enough that no cell folds
    return str(tmp_path / "home")


@pytest.mark.parametrize("text", CRASHERS)
def test_markup_in_messages_is_shown_as_it_is(capsys: pytest.CaptureFixture[str], home: str, text: str) -> None:
    assert run(capsys, "--home", home, "append", "m", "user", text)[0] == 0
    for argv in (["browse"], ["search", text.split()[0].strip("[]:<>") or "prompt", "--mode", "substring"], ["get-full", "x"]):
        if argv[0] == "get-full":
            code, out, _ = run(capsys, "--home", home, "browse", "--json")
            argv = ["get-full", json.loads(out)["messages"][0]["id"]]
        code, out, err = run(capsys, "--home", home, *argv)
        assert code == 0, err
        assert text in out, f"{argv[0]} did not show {text!r}:\n{out}"


@pytest.mark.parametrize("tag", ["topic:[/b]", "topic:a[i]", "lang:list[int]", "x:[red]r[/red]", "tool:[shell]"])
def test_markup_in_tags_is_shown_as_it_is(capsys: pytest.CaptureFixture[str], home: str, tag: str) -> None:
    run(capsys, "--home", home, "append", "m", "user", "hello")
    code, _, err = run(capsys, "--home", home, "tags", "add", tag, "--session", "m")
    if code == 2:  # the tag grammar may refuse some characters; it must say so, not crash
        assert "palimpsest:" in err
        return
    assert code == 0, err
    for argv in (["tags", "list"], ["tags", "counts"], ["tags", "taxonomy", "list"]):
        code, out, err = run(capsys, "--home", home, *argv)
        assert code == 0, err
        assert tag in out or tag.split(":", 1)[1] in out, f"{argv} did not show {tag!r}:\n{out}"


def test_control_characters_are_shown_as_escapes_not_sent_to_the_terminal(capsys: pytest.CaptureFixture[str], home: str) -> None:
    run(capsys, "--home", home, "append", "m", "user", "red \x1b[31mALERT\x1b[0m bell\x07 done")
    code, out, _ = run(capsys, "--home", home, "browse")
    assert code == 0 and "\x1b[31m" not in out and "\x07" not in out
    assert "red \\x1b[31mALERT\\x1b[0m bell\\x07 done" in out


def test_shown_keeps_text_and_makes_it_one_line() -> None:
    assert shown("a\nb\tc\r\nd") == "a b c d"
    assert shown("x\x00y\x9bz") == "x\\x00y\\x9bz"
    assert shown("\u200fשלום [b]", 4) == "\u200fשלו"
    assert shown(None) == ""


PIECES = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8),
    st.sampled_from(list("[]/\\:<>=#") + ["\x1b[31m", "\x1b]0;x\x07", "\u200f", "\u202e", "\u200b", "\r", "\t", "[/b]",
                                          "[INST]", ":smile:", "[bold red]", "[/]"]),
)
TEXT = st.lists(PIECES, min_size=1, max_size=12).map("".join) | st.builds(lambda c, n: c * n, st.sampled_from(["a", "[", "é", "[/x]"]), st.integers(200, 3000))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_any_text_goes_through_every_listing_command(capsys: pytest.CaptureFixture[str], home: str, text: str) -> None:
    import hashlib

    from palimpsest import InvalidInput, Memory
    from palimpsest.errors import blank

    if blank(text):  # (a text of zero-width or combining characters alone is no query: `errors.blank`)
        text = "x" + text
    session = "p" + hashlib.sha256(text.encode()).hexdigest()[:12]
    with Memory(home) as memory:
        try:
            row = memory.append(session, "user", text)
        except InvalidInput:  # content refused on input is not this test's concern
            return
    expected = shown(text.replace("\x00", "\ufffd"), 200).strip()  # the index holds NUL as U+FFFD (the journal keeps it)
    query = text.strip()[:50]  # after `--`, so a query that starts with a dash is not read as an option
    listings = [["browse", "--session", session], ["search", "--mode", "substring", "--session", session, "--", query],
                ["sessions"], ["stats"], ["get-full", row["id"]], ["recall", "--session", session, "--", query],
                ["context", session], ["briefing", session], ["tags", "list"], ["jobs", "status"]]
    for argv in listings:
        code, out, err = run(capsys, "--home", home, *argv)
        assert code == 0, (argv, err)
        if argv[0] in ("browse", "search"):
            assert expected in out, (argv, expected, out)
        if argv[0] == "get-full":
            assert out == text + "\n"


@pytest.mark.parametrize("columns", ["80", None])
def test_a_message_table_is_readable_at_80_columns_and_in_a_pipe(capsys: pytest.CaptureFixture[str], home: str,
                                                                  monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    """Found by an auditor: `palimpsest browse --session <uuid> | head` folded the content and the time to
    nothing and the role one letter a line (the whole event id and a 36-character session took the width)."""
    if columns is None:
        monkeypatch.delenv("COLUMNS")  # into a pipe: Rich's 80 columns, before
    else:
        monkeypatch.setenv("COLUMNS", columns)
    session = "3f2b8a9c-1d4e-4f6a-9b7c-2e5d8f1a0c3b"
    run(capsys, "--home", home, "append", session, "assistant", "We switched the monorepo from pnpm to bun last week.")
    code, out, _ = run(capsys, "--home", home, "browse", "--session", session)
    assert code == 0
    assert out.splitlines()[0] == f"session {session}"  # one session: named once, above its rows
    row = next(line for line in out.splitlines() if "We switched" in line)
    assert "assistant" in row and max(len(line) for line in out.splitlines()) <= int(columns or 160)
    assert all(w in out for w in ("monorepo", "pnpm", "bun", "week."))


def test_control_characters_never_reach_a_terminal_from_any_command(tmp_path: Path) -> None:
    """Found by a security review: `recall`, `get-full`, `briefing` printed a stored message's ESC and BEL
    bytes to the terminal (clear the screen, set the title, write the clipboard with OSC 52); tables escaped
    them, plain output did not. Into a pipe the text stays byte for byte."""
    import os
    import pty
    import subprocess

    from palimpsest import Memory, Settings
    from test_setup import EXE

    hostile = "deploy \x1b[2J\x1b[31mFAKE\x1b[0m \x1b]0;pwned\x07 \x1b]52;c;ZWNobyBwd25lZA==\x07 done"
    with Memory(tmp_path / "home", settings=Settings.load(env={}, embedder="none")) as m:
        said = m.append("s", "user", hostile)["id"]
    env = {**os.environ, "PALIMPSEST_HOME": str(tmp_path / "home"), "PALIMPSEST_EMBEDDER": "none", "PALIMPSEST_URL": "http://127.0.0.1:9"}
    for argv in (["recall", "deploy"], ["get-full", said], ["briefing", "s"]):
        leader, follower = pty.openpty()
        proc = subprocess.run([str(EXE), *argv], stdout=follower, stderr=follower, env=env, timeout=60, check=False)
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(leader)
        assert proc.returncode == 0, out
        assert b"\x1b]" not in out and b"\x07" not in out and b"\x1b[2J" not in out, (argv, out)
        if argv[0] == "get-full":  # the whole message, its codes shown as escapes
            assert b"\\x1b]0;pwned\\x07" in out, (argv, out)
        else:  # a block for a model: the words, without the codes (segment.plain)
            assert b"FAKE" in out and b"pwned" not in out, (argv, out)
    piped = subprocess.run([str(EXE), "get-full", said], capture_output=True, env=env, timeout=60, check=False)
    assert piped.stdout.decode() == hostile + "\n"
