"""The MCP server through the `mcp` SDK's own client, over stdio and over streamable HTTP."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from palimpsest import Memory, Settings
from palimpsest.server.run import ServerThread

READ_TOOLS = {"memory_search", "memory_browse", "memory_sessions", "memory_stats", "memory_get_full"}
WRITE_TOOLS = {"memory_append", "memory_ingest_session"}


async def exercise(client: Client, write: bool) -> dict[str, Any]:
    """List the tools and call each; returns what the calls answered."""
    listed = (await client.list_tools()).tools
    names = {t.name for t in listed}
    assert READ_TOOLS <= names  # later issues add theirs
    assert (WRITE_TOOLS <= names) if write else not (WRITE_TOOLS & names)
    mixed = {"memory_tags"}  # served with writes off too; some of its actions write
    assert all(t.annotations and t.annotations.read_only_hint is (t.name not in mixed) for t in listed) or write
    assert all(t.annotations and not t.annotations.read_only_hint for t in listed if t.name in WRITE_TOOLS | mixed)
    for name in sorted(names - WRITE_TOOLS):  # every tool answers, if only with a validation error
        result = await client.call_tool(name, {})
        assert result.content, name
    out: dict[str, Any] = {}
    if write:
        appended = await client.call_tool("memory_append", {"session": "m1", "role": "user", "content": "the fence is painted green"})
        assert not appended.is_error, appended
        out["id"] = appended.structured_content["id"]
        ingested = await client.call_tool("memory_ingest_session", {"session": "m2", "messages": [{"role": "user", "content": "hello"}]})
        assert ingested.structured_content["stored"] == 1
    else:
        refused = await client.call_tool("memory_append", {"session": "m1", "role": "user", "content": "x"})
        assert refused.is_error and "write" in refused.content[0].text
    found = await client.call_tool("memory_search", {"query": "fence painted"})
    assert not found.is_error
    out["hits"] = [h["id"] for h in json.loads(found.content[0].text)["hits"]]
    for name, args in (("memory_browse", {"limit": 5}), ("memory_sessions", {}), ("memory_stats", {})):
        result = await client.call_tool(name, args)
        assert not result.is_error, (name, result)
    if write:
        full = await client.call_tool("memory_get_full", {"id": out["id"]})
        assert full.structured_content["content"] == "the fence is painted green"
    missing = await client.call_tool("memory_get_full", {"id": "evt_nope"})
    assert missing.is_error and json.loads(missing.content[0].text)["code"] == "not_found"
    bad = await client.call_tool("memory_search", {"query": 5})
    assert bad.is_error
    return out


def _command() -> tuple[str, list[str]]:
    exe = shutil.which("palimpsest", path=str(Path(sys.executable).parent))
    return (exe, []) if exe else (sys.executable, ["-m", "palimpsest"])


@pytest.mark.parametrize("write", [False, True])
def test_stdio(home: Path, write: bool) -> None:
    command, prefix = _command()
    env = {"PALIMPSEST_HOME": str(home), "PALIMPSEST_EMBEDDER": "none", "PATH": os.environ.get("PATH", "")}
    if write:
        env["PALIMPSEST_ENABLE_WRITE"] = "1"
    params = StdioServerParameters(command=command, args=[*prefix, "mcp"], env=env)

    async def main() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=60) as client:
            return await exercise(client, write)

    out = anyio.run(main)
    if write:
        assert out["hits"] == [out["id"]]


@pytest.mark.parametrize("write", [False, True])
def test_streamable_http(home: Path, write: bool) -> None:
    memory = Memory(home, settings=Settings.load(env={}, embedder="none", enable_write=write))
    with ServerThread(memory) as url:
        async def main() -> dict[str, Any]:
            async with Client(f"{url}/mcp", read_timeout_seconds=60) as client:
                return await exercise(client, write)

        out = anyio.run(main)
    memory.close()
    if write:
        assert out["hits"] == [out["id"]]


def test_streamable_http_with_a_token(home: Path) -> None:
    memory = Memory(home, settings=Settings.load(env={}, embedder="none", token="tok-123"))
    with ServerThread(memory) as url:
        async def main(token: str) -> set[str]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
            async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
                return {t.name for t in (await client.list_tools()).tools}

        assert READ_TOOLS <= anyio.run(main, "tok-123")
        with pytest.raises(ExceptionGroup) as refused:  # the SDK wraps the 401 in task-group errors
            anyio.run(main, "wrong")
        assert "error response" in repr(refused.value)
    memory.close()


def test_stdio_remote_serves_the_shared_servers_memory(home: Path, tmp_path: Path) -> None:
    """Found by a team's ops engineer: `setup claude-code --url http://server` on a second machine launched
    `palimpsest mcp`, whose tools answered from that machine's empty home (0 messages, no hits)."""
    memory = Memory(home, settings=Settings.load(env={}, embedder="none", enable_write=True, token="tok-remote-1234567"))
    memory.append("ops", "user", "the on-call pager rotates on Mondays")
    elsewhere = tmp_path / "second-machine"
    command, prefix = _command()
    with ServerThread(memory) as url:
        env = {"PALIMPSEST_HOME": str(elsewhere), "PALIMPSEST_EMBEDDER": "none", "PATH": os.environ.get("PATH", ""),
               "PALIMPSEST_URL": url, "PALIMPSEST_TOKEN": "tok-remote-1234567"}
        params = StdioServerParameters(command=command, args=[*prefix, "mcp", "--remote"], env=env)

        async def main() -> tuple[dict[str, Any], list[str]]:
            async with Client(params, read_timeout_seconds=60) as client:
                out = await exercise(client, True)
                found = await client.call_tool("memory_search", {"query": "on-call pager"})
                return out, [h["content"] for h in json.loads(found.content[0].text)["hits"]]

        out, pager = anyio.run(main)
        assert out["hits"] == [out["id"]] and pager == ["the on-call pager rotates on Mondays"]
        env["PALIMPSEST_TOKEN"] = "wrong-token-123456"

        async def refused() -> Any:
            async with Client(StdioServerParameters(command=command, args=[*prefix, "mcp", "--remote"], env=env),
                              read_timeout_seconds=60) as client:
                return await client.call_tool("memory_stats", {})

        denied = anyio.run(refused)  # the server's refusal, as a tool error the model can read
        assert denied.is_error and json.loads(denied.content[0].text)["code"] == "unauthorized", denied

        async def listed() -> str:
            async with Client(StdioServerParameters(command=command, args=[*prefix, "mcp", "--remote"], env=env),
                              read_timeout_seconds=60) as client:
                try:
                    await client.list_tools()
                except MCPError as exc:
                    return str(exc)
                return "listed"

        # found by an MCP client's builder: a client lists tools first, and read only "Internal server error"
        assert anyio.run(listed).startswith("unauthorized: ")
    assert [m.content for m in memory.browse(session="m1")] == ["the fence is painted green"]
    memory.close()
    assert not (elsewhere / "sessions").exists()  # nothing of it went to this machine's home


def test_mcp_writes_take_agent_channel_and_persona_from_the_environment(home: Path) -> None:
    command, prefix = _command()
    env = {"PALIMPSEST_HOME": str(home), "PALIMPSEST_EMBEDDER": "none", "PATH": os.environ.get("PATH", ""),
           "PALIMPSEST_ENABLE_WRITE": "1", "PALIMPSEST_AGENT": "desk-bot", "PALIMPSEST_CHANNEL": "support",
           "PALIMPSEST_PERSONA": "reviewer"}
    params = StdioServerParameters(command=command, args=[*prefix, "mcp"], env=env)

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            for args in ({"session": "e1", "role": "user", "content": "from the environment"},
                         {"session": "e2", "role": "user", "content": "named", "agent": "own", "channel": "own-channel",
                          "settings": {"persona": "own-persona"}}):
                assert not (await client.call_tool("memory_append", args)).is_error
            ingested = await client.call_tool("memory_ingest_session", {"session": "e3", "messages": [{"role": "user", "content": "x"}]})
            assert not ingested.is_error

    anyio.run(main)
    with Memory(home, settings=Settings.load(env={}, embedder="none")) as m:
        found = {s.id: (s.agent, s.channel, s.settings.get("persona")) for s in m.sessions()}
    assert found == {"e1": ("desk-bot", "support", "reviewer"), "e2": ("own", "own-channel", "own-persona"),
                     "e3": ("desk-bot", "support", "reviewer")}


def test_stdio_alone_runs_the_derived_work(home: Path) -> None:
    """Found by an MCP client's user: `palimpsest mcp` with no server never embedded, distilled
    or described what it wrote (embeddings queued for good). Without a server of its store, it
    runs the background work while the client is connected."""
    command, prefix = _command()
    env = {"PALIMPSEST_HOME": str(home), "PALIMPSEST_EMBEDDER": "hash", "PATH": os.environ.get("PATH", ""),
           "PALIMPSEST_ENABLE_WRITE": "1", "PALIMPSEST_URL": "http://127.0.0.1:9"}
    params = StdioServerParameters(command=command, args=[*prefix, "mcp"], env=env)

    async def main() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=60) as client:
            await client.call_tool("memory_append", {"session": "m1", "role": "user", "content": "I moved to Lisbon last spring."})
            for _ in range(100):
                stats = json.loads((await client.call_tool("memory_stats", {})).content[0].text)
                if not stats["embeddings"]["queued"]:
                    return stats
                await anyio.sleep(0.2)
            return stats

    stats = anyio.run(main)
    assert stats["embeddings"]["queued"] == 0 and sum(m["count"] for m in stats["embeddings"]["models"].values()) == 1


def test_remote_calls_only_tool_names() -> None:
    """Found in review: a tool name of "../../capture" posted to /api/capture with the bearer token."""
    from palimpsest.errors import NotFound
    from palimpsest.server.mcp import Remote

    remote = Remote("http://127.0.0.1:9", "tok", 1.0)
    for name in ("../../capture", "memory_search/../../x", "", "A" * 70):
        with pytest.raises(NotFound):
            remote.call(name, {})
    remote.close()


def test_recall_over_stdio_is_kept_to_the_repository_it_was_started_in(memory: Memory, store_url: str, tmp_path: Path) -> None:
    """Found by a shared server's user: from acme/platform's billing service, `memory_recall` through the entry
    `setup claude-code --url` wrote (`palimpsest mcp --remote`) held acme/search-infra's "now uses PASETO v4.public",
    which the recall hook kept out. A stdio server's calls that name no `project` take the repository of the folder
    the harness started it in; a named project wins, and "*" asks across repositories."""
    from palimpsest.harness.project import project_of

    work = tmp_path / "work"
    for name in ("platform", "search-infra"):
        (work / name).mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(work / name)], check=True)
        subprocess.run(["git", "-C", str(work / name), "remote", "add", "origin", f"git@github.com:acme/{name}.git"], check=True)
    (work / "platform" / "services" / "billing").mkdir(parents=True)
    (tmp_path / "desk").mkdir()
    for session, repo, text in (("s1", "platform", "Decision: we are moving auth from JWT to PASETO v4.local."),
                                ("s7", "search-infra", "search-infra now uses PASETO v4.public for internal tokens.")):
        memory.append(session, "user", text)
        memory.tags.add(f"project:{project_of(str(work / repo))}", session=session)
    command, prefix = _command()
    question = {"query": "are we still moving auth to PASETO?", "budget": 2000}
    with ServerThread(memory) as url:
        env = {"PALIMPSEST_HOME": str(tmp_path / "client-home"), "PALIMPSEST_EMBEDDER": "none", "PATH": os.environ.get("PATH", ""),
               "PALIMPSEST_URL": url, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}  # (the tree under test, run from a clone)

        def blocks(args: list[str], cwd: Path, *scopes: dict[str, str]) -> list[str]:
            params = StdioServerParameters(command=command, args=[*prefix, *args], env=env, cwd=str(cwd))

            async def main() -> list[str]:
                async with Client(params, read_timeout_seconds=60) as client:
                    answers = [await client.call_tool("memory_recall", {**question, **scope}) for scope in scopes]
                    return [a.structured_content["block"] if a.structured_content else str(a.content) for a in answers]
            return anyio.run(main)

        billing = work / "platform" / "services" / "billing"
        remote = blocks(["mcp", "--remote"], billing, {}, {"project": "*"}, {"project": "acme/search-infra"})
        env.update(PALIMPSEST_HOME=str(memory.settings.home_path), PALIMPSEST_STORE=store_url)
        local = blocks(["mcp"], billing, {})
        nowhere = blocks(["mcp"], tmp_path / "desk", {})  # (Claude Desktop starts servers in / or the home folder)
    for here in (remote[0], local[0]):
        assert "PASETO v4.local" in here and "v4.public" not in here, here
    assert "v4.local" in remote[1] and "v4.public" in remote[1]
    assert "v4.public" in remote[2] and "v4.local" not in remote[2]
    assert "v4.local" in nowhere[0] and "v4.public" in nowhere[0]


def test_a_home_folder_kept_as_a_repository_is_no_project_to_start_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found in review: a user who keeps dotfiles as a git repository in `~` had every Claude Desktop recall (it starts
    servers in the home folder) kept to `you/dotfiles`; a repository below the home folder is still its own."""
    from palimpsest.server.mcp import launching_project

    home = tmp_path / "you"
    (home / "code" / "api").mkdir(parents=True)
    for folder, name in ((home, "you/dotfiles"), (home / "code" / "api", "acme/api")):
        subprocess.run(["git", "init", "-q", str(folder)], check=True)
        subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", f"git@github.com:{name}.git"], check=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)
    assert launching_project() is None
    monkeypatch.chdir(home / "code" / "api")
    assert launching_project() == "acme/api"


def test_a_malformed_line_over_stdio_is_answered_with_its_error(home: Path) -> None:
    """Found by a Claude Code user: a malformed JSON-RPC line got no reply over stdio, so the client waited forever
    (the SDK only logs it at debug). Not JSON is answered -32700 Parse error, JSON that is no message -32600 Invalid
    Request, both with id null, and the server goes on answering."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    lines = ["{not json", json.dumps({"hello": "world"}), json.dumps(init)]
    done = subprocess.run([sys.executable, "-m", "palimpsest", "--home", str(home), "mcp"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, env={**os.environ, "PALIMPSEST_EMBEDDER": "none"}, timeout=60, check=False)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[:2] == [{"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
                           {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}]
    assert answers[2]["id"] == 1 and answers[2]["result"]["serverInfo"]["name"] == "palimpsest"
