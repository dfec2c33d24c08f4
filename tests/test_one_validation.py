"""One validation of every stored value (issue 21, finding 1 and the smaller list): the
library, HTTP append, `/api/capture`, MCP and import answer the same for the same value."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest import InvalidInput, Memory, Settings
from palimpsest.server.run import ServerThread

BAD_SETTINGS = [{"x": math.nan}, {"x": math.inf}, {"x": -math.inf}, {"cwd": "\ud800"}, {"\udfff": 1},
                {"x": {1, 2}}, {"x": b"bytes"}, {"x": [object()]}]


def refused(call: Any) -> str | None:
    """The error code of `call()`, or None when it was accepted."""
    try:
        call()
    except InvalidInput as exc:
        return exc.code
    return None


@pytest.mark.parametrize("bad", BAD_SETTINGS, ids=lambda v: re.sub(r" at 0x[0-9a-f]+", "", repr(v))[:30])  # stable across xdist workers
def test_session_settings_that_are_not_json_are_refused_by_every_writer(memory: Memory, bad: dict[str, Any]) -> None:
    event = {"role": "user", "content": "hi"}
    assert refused(lambda: memory.append("s1", "user", "hi", settings=bad)) == "invalid_input"
    assert refused(lambda: memory.capture("s1", [event], settings=bad)) == "invalid_input"
    assert refused(lambda: memory.ingest_session("s1", [event], settings=bad)) == "invalid_input"
    assert memory.journal.sessions() == [] or all(memory.journal.size(s) == 0 for s in memory.journal.sessions())
    # a later session is indexed and read back (PostgreSQL stalled here, SQLite answered 500)
    memory.append("s2", "user", "after the refusal", settings={"cwd": "/w"})
    assert [s.id for s in memory.sessions()] == ["s2"] and memory.indexer.lag() == {}
    assert memory.get_session("s2").settings == {"cwd": "/w"}


@pytest.mark.parametrize("key", ["a\x00b", "k\n", "k\r", "\x7f", "tab\tkey"])
def test_control_characters_in_an_event_key_are_refused(memory: Memory, key: str) -> None:
    with pytest.raises(InvalidInput, match="event_key holds a control character"):
        memory.append("s1", "user", "hi", event_key=key)
    with pytest.raises(InvalidInput, match="control character"):
        memory.capture("s1", [{"role": "user", "content": "hi", "event_key": key}])
    memory.append("s2", "user", "the index did not stall")
    assert memory.indexer.lag() == {} and [m.content for m in memory.browse()] == ["the index did not stall"]


@pytest.mark.parametrize(("field", "value"), [("agent", "a\n"), ("channel", "c\x00"), ("key", "k\r\n"), ("agent", "a\x85")])
def test_control_characters_in_session_names_are_refused(sqlite_memory: Memory, field: str, value: str) -> None:
    with pytest.raises(InvalidInput, match=f"{field} holds a control character"):
        sqlite_memory.append("s1", "user", "hi", **{field: value})


@pytest.mark.parametrize("session", ["s1\n", "s1\r", "s1\n\n"])
def test_trailing_newlines_in_session_ids_are_refused(sqlite_memory: Memory, session: str) -> None:
    with pytest.raises(InvalidInput, match="session id"):
        sqlite_memory.append(session, "user", "hi")
    with pytest.raises(InvalidInput, match="session id"):
        sqlite_memory.capture(session, [{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("role", ["user\n", "assistant\r", "tool\x00"])
def test_trailing_newlines_in_roles_and_types_are_refused(sqlite_memory: Memory, role: str) -> None:
    with pytest.raises(InvalidInput, match="role must be"):
        sqlite_memory.append("s1", role, "hi")
    with pytest.raises(InvalidInput, match="type"):
        sqlite_memory.capture("s1", [{"role": "user", "type": role, "content": "hi"}])


def test_trailing_newlines_in_vault_names_are_refused(sqlite_memory: Memory, tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    with pytest.raises(InvalidInput, match="vault names"):
        sqlite_memory.vaults.init("notes\n", "semantic", folder)
    with pytest.raises(InvalidInput, match="vault names"):
        sqlite_memory.facts.init_vault("facts\n")


def test_an_export_line_is_held_to_the_writers_rules(sqlite_memory: Memory, tmp_path: Path) -> None:
    from palimpsest.importers.transfer import check_event

    good = {"id": None, "session": "s1", "type": "message", "role": "user", "content": "hi", "metadata": {},
            "created_at": "2026-01-01T00:00:00Z", "event_key": "k1"}
    check_event(dict(good), 1 << 20)
    for bad in ({"event_key": "k\x00"}, {"role": "user\n"}, {"session": "s1\n"}, {"tool_args": math.nan},
                {"type": "session", "metadata": {"settings": {"x": math.inf}}}, {"type": "session", "metadata": {"agent": "a\n"}}):
        with pytest.raises(InvalidInput):
            check_event({**good, **bad}, 1 << 20)


# -- every entry point answers the same -------------------------------------------------
TRICKY = ["", "ok", "a\x00b", "line\n", "\ud800", "\udfff x", "tab\t", "é", "\x85", "k" * 513]
texts = st.one_of(st.sampled_from(TRICKY), st.text(max_size=8))
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), texts)
json_values = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
                           max_leaves=6)
cases = st.fixed_dictionaries(
    {"session": st.sampled_from(["s1", "s-2", "s1\n", "bad/id", "s\x00"]),
     "role": st.sampled_from(["user", "assistant", "user\n", "x y", "tool\x00"]),
     "content": texts},
    optional={"event_key": texts, "tool_args": json_values, "metadata": st.dictionaries(texts, json_values, max_size=2),
              "settings": st.dictionaries(texts, json_values, max_size=3), "agent": texts, "title": texts},
)
SESSION_KEYS = ("settings", "agent", "title")


MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-06-18"}


def post(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
    # json.dumps writes NaN / Infinity as the literals Python's (and many clients') parsers accept,
    # and a lone surrogate as its escape: what an SDK would never send, an attacker can
    return httpx.post(url, content=json.dumps(body), headers=headers or {"content-type": "application/json"}, timeout=30)


def mcp_call(url: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One `tools/call` over streamable HTTP (stateless mode), as raw JSON-RPC: the SDK's
    client refuses to send some of the values a test must send."""
    r = post(f"{url}/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}},
             MCP_HEADERS)
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        data = next(line[5:] for line in r.text.splitlines() if line.startswith("data:"))
        return json.loads(data)
    return r.json()


class Surfaces:
    """One memory, written in-process and over HTTP and MCP."""

    def __init__(self, memory: Memory, url: str) -> None:
        self.memory, self.url = memory, url

    def answers(self, case: dict[str, Any]) -> dict[str, str | None]:
        attrs = {k: case[k] for k in SESSION_KEYS if k in case}
        event = {k: v for k, v in case.items() if k not in (*SESSION_KEYS, "session")}
        args = {k: v for k, v in case.items() if k not in ("role", "content", "session")}
        return {
            "append": refused(lambda: self.memory.append(case["session"], case["role"], case["content"], **args)),
            "capture": refused(lambda: self.memory.capture(case["session"], [event], **attrs)),
            "http append": self._http("/api/memory/tool/memory_append", case),
            "http capture": self._http("/api/capture", {"session": case["session"], "events": [event], **attrs}),
            "mcp append": self._mcp(case),
        }

    def _http(self, path: str, body: dict[str, Any]) -> str | None:
        r = post(self.url + path, body)
        assert r.status_code in (200, 400), (path, r.status_code, r.text)
        return None if r.status_code == 200 else r.json()["error"]["code"]

    def _mcp(self, case: dict[str, Any]) -> str | None:
        reply = mcp_call(self.url, "memory_append", case)
        if "error" in reply:  # JSON-RPC's own refusal: the body did not parse (a lone surrogate)
            assert reply["error"]["code"] in (-32700, -32602), reply
            return "invalid_input"
        if not reply["result"].get("isError"):
            return None
        code = json.loads(reply["result"]["content"][0]["text"])["code"]
        assert code == "invalid_input", reply
        return code


def test_every_entry_point_gives_the_same_answer(home: Path) -> None:
    memory = Memory(home, settings=Settings.load(env={}, embedder="none", enable_write=True))
    with ServerThread(memory) as url:
        s = Surfaces(memory, url)

        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
        @given(cases)
        def same_answer(case: dict[str, Any]) -> None:
            answers = s.answers(case)
            assert len(set(answers.values())) == 1, (case, answers)

        same_answer()
        assert memory.indexer.lag() == {}
        # what was accepted reads back as standard JSON (SQLite answered 500 on a NaN setting)
        json.dumps([x.to_dict() for x in memory.sessions()], allow_nan=False).encode("utf-8")
    memory.close()


@pytest.mark.parametrize("argv", [["s1\n", "user", "hi"], ["s1", "user\n", "hi"], ["s1", "user", "hi", "--tool-args", '{"x": NaN}'],
                                  ["s1", "user", "hi", "--event-key", "k\x01"], ["s1", "user", "hi", "--agent", "a\n"]])
def test_the_cli_gives_the_same_answer(capsys: pytest.CaptureFixture[str], home: Path, argv: list[str]) -> None:
    from test_cli import run

    code, out, err = run(capsys, "--home", str(home), "append", *argv, "--json")
    assert (code, out) == (2, "") and json.loads(err)["error"]["code"] == "invalid_input"


def test_a_known_role_in_capitals_is_that_role(memory: Memory) -> None:
    """Found by a library user: `append(s, "User", "I live in Berlin.")` was stored as "User", a role no
    part knows, and its turn was never distilled; a role of one's own ("customer") is kept as given."""
    said = memory.append("r", "User", "I live in Berlin.")
    assert memory.get_message(said["id"]).role == "user"
    assert memory.get_message(memory.append("r", "customer", "Hello.")["id"]).role == "customer"
    assert [d["text"] for d in memory.distiller.close_turn("r", use_llm=False).decisions] == ["I live in Berlin."]


def test_session_tags_that_make_no_tag_are_refused(memory: Memory) -> None:
    """Found by a team bot's builder: `settings={"tags": "user:gus"}` (a string) and `["gus"]` (no key) were taken
    and made no tag, so the bot's user scoping silently did nothing."""
    for bad in ("user:gus", ["gus"], [5]):
        with pytest.raises(InvalidInput, match="settings.tags"):
            memory.append("s", "user", "hello", settings={"tags": bad})
    memory.append("s", "user", "hello", settings={"tags": ["user:gus"]})
    assert memory.journal.sessions() == ["s"] and len(list(memory.journal.read("s"))) == 2
