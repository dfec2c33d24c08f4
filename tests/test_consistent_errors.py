"""One answer for each kind of bad request, on every surface (issue 19): an unknown session
is exit 3 / HTTP 404 / an MCP error with the same message; an empty query is refused; limits
and counts are checked alike; argparse errors honour --json; export into a folder."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from palimpsest import Memory, Settings
from palimpsest.server.run import ServerThread
from test_cli import run

MESSAGE = "no session 'nope'"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
    return str(tmp_path / "home")


@pytest.mark.parametrize("argv", [["briefing", "nope"], ["context", "nope"], ["distill", "nope", "--no-llm"]])
def test_unknown_session_is_exit_3_with_one_message(capsys: pytest.CaptureFixture[str], home: str, argv: list[str]) -> None:
    run(capsys, "--home", home, "append", "known", "user", "hello")
    code, out, err = run(capsys, "--home", home, *argv)
    assert (code, out, err) == (3, "", f"palimpsest: {MESSAGE}\n")
    code, _, err = run(capsys, "--home", home, *argv, "--json")
    assert code == 3 and json.loads(err)["error"] == {"code": "not_found", "message": MESSAGE}
    known = [a if a != "nope" else "known" for a in argv]
    assert run(capsys, "--home", home, *known)[0] == 0


def test_unknown_session_over_http_and_mcp(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "h", settings=Settings.load(env={}, embedder="none"))
    with ServerThread(memory) as url:
        for tool in ("memory_briefing", "memory_context"):
            r = httpx.post(f"{url}/api/memory/tool/{tool}", json={"session": "nope"}, trust_env=False)
            assert r.status_code == 404 and r.json()["error"] == {"code": "not_found", "message": MESSAGE}
        for tool in ("memory_search", "memory_recall", "memory_summaries", "memory_answer"):  # (every tool's query: review)
            for blank in ("  ", "\u200b\ufeff", "\u3164", "\u034f"):
                r = httpx.post(f"{url}/api/memory/tool/{tool}", json={"query": blank}, trust_env=False)
                assert r.status_code == 400 and "non-empty" in r.json()["error"]["message"], (tool, blank)

        async def main() -> list[dict[str, str]]:
            async with Client(f"{url}/mcp", read_timeout_seconds=60) as client:
                out = []
                for tool in ("memory_briefing", "memory_context"):
                    result = await client.call_tool(tool, {"session": "nope"})
                    assert result.is_error
                    out.append(json.loads(result.content[0].text))
                return out

        assert anyio.run(main) == [{"code": "not_found", "message": MESSAGE}] * 2
    memory.close()


# (a zero-width space shows nothing: a data scientist's copied query had been searched and answered "no hits")
@pytest.mark.parametrize("argv", [["search", ""], ["search", "   "], ["search", "\u200b"], ["search", " \ufeff\u200b "], ["recall", ""],
                                  ["vault", "query", "docs", ""]])
def test_an_empty_query_is_refused(capsys: pytest.CaptureFixture[str], home: str, argv: list[str]) -> None:
    code, out, err = run(capsys, "--home", home, *argv, "--json")
    assert (code, out) == (2, ""), err
    error = json.loads(err)["error"]
    assert error["code"] == "invalid_input" and "query" in error["message"]


@pytest.mark.parametrize("argv", [["code", "find", "x", "--limit", "-1"], ["context", "s", "--last", "-3"], ["browse", "--limit", "0"],
                                  ["browse", "--offset", "-1"], ["search", "x", "--limit", "ten"], ["recall", "x", "--budget", "-5"],
                                  ["tags", "list", "--limit", "0"], ["wiki", "list", "--limit", "0"]])
def test_limits_and_counts_are_checked_alike(capsys: pytest.CaptureFixture[str], home: str, argv: list[str]) -> None:
    code, out, err = run(capsys, "--home", home, *argv, "--json")
    assert (code, out) == (2, "")
    error = json.loads(err)["error"]
    assert error["code"] == "invalid_input" and argv[-2] in error["message"]


def test_parse_errors_honour_json(capsys: pytest.CaptureFixture[str], home: str) -> None:
    code, out, err = run(capsys, "--home", home, "browse", "--no-such-option", "--json")
    assert (code, out) == (2, "") and json.loads(err)["error"]["code"] == "invalid_input"
    code, out, err = run(capsys, "--home", home, "browse", "--no-such-option")
    assert code == 2 and err.startswith("usage:")


def test_export_into_an_existing_folder_writes_a_file_in_it(capsys: pytest.CaptureFixture[str], home: str, tmp_path: Path) -> None:
    run(capsys, "--home", home, "append", "s", "user", "hello")
    folder = tmp_path / "out"
    folder.mkdir()
    code, out, err = run(capsys, "--home", home, "export", str(folder), "--json")
    assert code == 0, err
    written = Path(json.loads(out)["file"])
    assert written.parent == folder and written.name.startswith("palimpsest-export-")
    assert any('"hello"' in line for line in written.read_text().splitlines())


def test_version_and_home_after_the_command(capsys: pytest.CaptureFixture[str], home: str) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("palimpsest ")
    assert run(capsys, "append", "s", "user", "hello", "--home", home)[0] == 0
    code, out, _ = run(capsys, "browse", "--json", "--home", home)
    assert [m["content"] for m in json.loads(out)["messages"]] == ["hello"]


def test_a_journaled_decision_tells_a_client_its_key_not_the_store() -> None:
    """Found in review: redacting the store's address had hidden the journaled decision's key too, and a client could not
    tell the fact was kept (and must not be sent again)."""
    from palimpsest.facts.model import JournaledDecision

    exc = JournaledDecision("PostgreSQL at postgresql://u:***@10.0.0.5:5432/mem is unavailable; decision op_1 is journaled", "op_1")
    said = exc.for_clients()["message"]
    assert "op_1" in said and "journaled" in said and "10.0.0.5" not in said
