"""Answer synthesis never loses the hits (issue 20, finding 5): with the LLM unreachable
(`LLMError`) or answering out of schema (`InvalidReply`), `memory_search synthesize=true`
returns the hits, `answer.available` false with the reason, and a note — through the
library, HTTP, MCP (streamable HTTP) and the CLI; on both backends."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from fakeopenai import FakeOpenAI, Reply
from palimpsest import Memory, Settings, tools
from palimpsest.cli import main
from palimpsest.server.run import ServerThread
from palimpsest.toolsynth import passage

SAID = "the deploy window is Friday at 16:00"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def failing_llm(how: str) -> Iterator[str]:
    """The URL of an LLM that fails: nothing listening, or a server whose every reply is not JSON."""
    if how == "unreachable":
        yield f"http://127.0.0.1:{free_port()}/v1"
        return
    with FakeOpenAI(responder=lambda body: Reply.text("Friday, I think")) as fake:
        yield fake.url


def llm_settings(url: str) -> dict[str, Any]:
    return {"llm_url": url, "llm_model": "fake", "llm_backoff": "0,0,0", "llm_retries": 1, "llm_timeout": 5.0,
            "llm_structured": "json_schema", "synthesize_answers": True, "embedder": "none"}


def check(result: dict[str, Any], said: str, how: str) -> None:
    assert [h["id"] for h in result["hits"]] == [said]
    answer = result["answer"]
    assert answer["available"] is False and "could not be made" in answer["reason"]
    assert ("llm_invalid_reply" if how == "invalid" else "llm_error") in answer["reason"]
    assert any(n.startswith("no answer: the answer could not be made") for n in result["notes"])


@pytest.mark.parametrize("how", ["unreachable", "invalid"])
def test_search_keeps_its_hits_when_no_answer_can_be_made(home: Path, store_url: str, how: str) -> None:
    with failing_llm(how) as url, Memory(home, store_url, settings=Settings.load(env={}, **llm_settings(url))) as memory:
        said = memory.append("s1", "user", SAID)["id"]
        check(memory.search("deploy window", synthesize=True).to_dict(), said, how)
        with ServerThread(memory) as server:
            r = httpx.post(f"{server}/api/memory/tool/memory_search", json={"query": "deploy window", "synthesize": True}, timeout=60)
            assert r.status_code == 200 and r.json()["ok"] is True
            check(r.json()["result"], said, how)

            async def over_mcp() -> dict[str, Any]:
                async with Client(f"{server}/mcp", read_timeout_seconds=60) as client:
                    found = await client.call_tool("memory_search", {"query": "deploy window", "synthesize": True})
                    assert not found.is_error, found
                    return json.loads(found.content[0].text)  # type: ignore[union-attr]

            check(anyio.run(over_mcp), said, how)
        answered = tools.call(memory, "memory_answer", {"query": "deploy window"}, enable_write=False)
        assert answered["available"] is False and [h["id"] for h in answered["hits"]] == [said]


@pytest.mark.parametrize("how", ["unreachable", "invalid"])
def test_cli_search_synthesize_prints_the_hits_and_the_note(home: Path, how: str, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    with failing_llm(how) as url:
        for key, value in llm_settings(url).items():
            monkeypatch.setenv(f"PALIMPSEST_{key.upper()}", "1" if value is True else str(value))
        base = ["--home", str(home)]
        assert main([*base, "append", "s1", "user", SAID, "--json"]) == 0
        said = json.loads(capsys.readouterr().out)["id"]
        assert main([*base, "search", "deploy window", "--synthesize", "--json"]) == 0
        check(json.loads(capsys.readouterr().out), said, how)
        assert main([*base, "search", "deploy window", "--synthesize"]) == 0
        out = capsys.readouterr()
        assert "16:00" in out.out and "note: no answer: the answer could not be made" in out.err  # the hit, and why no answer


def test_a_valid_answer_still_comes_with_its_hits(home: Path, store_url: str) -> None:
    with FakeOpenAI() as fake, Memory(home, store_url, settings=Settings.load(env={}, **llm_settings(fake.url))) as memory:
        said = memory.append("s1", "user", SAID)["id"]
        fake.push(Reply.json({"answer": "Friday at 16:00", "cited": [said]}))
        result = memory.search("deploy window", synthesize=True).to_dict()
        assert result["answer"]["available"] is True and result["answer"]["cited"] == [said]
        assert [h["id"] for h in result["hits"]] == [said] and not any(n.startswith("no answer") for n in result["notes"])


def test_the_answer_is_not_drawn_from_the_messages_of_a_retired_fact(home: Path, store_url: str) -> None:
    """Found by a team bot's builder: after "Correction: my timezone is EET now" superseded "My timezone is CET.",
    `memory_answer` handed the model "My timezone is CET." (recall hides a retired fact's messages; the answer did not)."""
    with FakeOpenAI() as fake, Memory(home, store_url, settings=Settings.load(env={}, **llm_settings(fake.url))) as memory:
        old = memory.append("s1", "user", "My timezone is CET.")["id"]
        new = memory.append("s2", "user", "Correction: my timezone is EET now.")["id"]
        cet = memory.facts.write("My timezone is CET.", source=f"event:{old}")
        memory.facts.supersede(cet.id, "My timezone is EET.", source=f"event:{new}")
        fake.push(Reply.json({"answer": "EET", "cited": [new]}))
        memory.search("my timezone", synthesize=True)
        prompt = json.dumps(fake.requests[-1]["messages"])
        assert "EET" in prompt and "My timezone is CET." not in prompt.replace("\\\\", "")


def test_the_answer_is_shown_the_part_of_a_long_hit_that_holds_the_question(home: Path, store_url: str) -> None:
    """Found by an agent-loop builder: each hit went to the answer as its first 1,500 characters, cut without a word; a
    12,000-character deploy log's last line, "The nginx version is 1.25.3.", never reached the model."""
    log = "".join(f"step {i}: rolled worker pod {i % 9} ok\n" for i in range(400)) + "The nginx version is 1.25.3."
    asked: list[str] = []

    def answer(body: dict[str, Any]) -> Reply:
        asked.append(body["messages"][-1]["content"])
        return Reply.json({"answer": "1.25.3", "cited": []})

    with FakeOpenAI(responder=answer) as fake, \
            Memory(home, store_url, settings=Settings.load(env={}, **llm_settings(fake.url))) as memory:
        memory.append("s1", "user", log)
        result = memory.search("which nginx version is deployed?", synthesize=True).to_dict()
    assert result["answer"]["available"] and asked
    assert "The nginx version is 1.25.3." in asked[-1]  # one hit: shown whole
    cut = passage(" ".join(log.split()), "which nginx version is deployed?", 1500)  # one of many: the part that answers
    assert "The nginx version is 1.25.3." in cut and cut.startswith("[… ") and len(cut) < 1600
