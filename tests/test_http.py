"""The HTTP API against the real server (uvicorn on a free loopback port, in a thread)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from palimpsest import InvalidInput, Memory, Settings
from palimpsest.server.run import ServerThread, check_bind

JSON = {"content-type": "application/json"}


def open_memory(home: Path, **settings: Any) -> Memory:
    return Memory(home, settings=Settings.load(env={}, embedder="none", **settings))


@pytest.fixture
def served(home: Path) -> Iterator[tuple[str, Memory]]:
    memory = open_memory(home, enable_write=True)
    with ServerThread(memory) as url:
        yield url, memory
    memory.close()


@pytest.fixture
def url(served: tuple[str, Memory]) -> str:
    return served[0]


def tool(url: str, name: str, args: Any, **kw: Any) -> httpx.Response:
    return httpx.post(f"{url}/api/memory/tool/{name}", json=args, timeout=30, **kw)


def test_every_tool_answers_ok_with_result(url: str) -> None:
    r = tool(url, "memory_append", {"session": "s1", "role": "user", "content": "the retry cap matches the upstream timeout",
                                    "agent": "claude"})
    assert r.status_code == 200 and r.json()["ok"] is True
    appended = r.json()["result"]
    assert appended["stored"] is True
    r = tool(url, "memory_ingest_session", {"session": "s2", "messages": [
        {"role": "user", "content": "deploy on friday?"}, {"role": "assistant", "content": "no, monday"}]})
    assert r.json()["result"]["stored"] == 2
    hits = tool(url, "memory_search", {"query": "retry cap", "limit": 5}).json()["result"]["hits"]
    assert [h["id"] for h in hits] == [appended["id"]]
    assert len(tool(url, "memory_browse", {"session": "s2"}).json()["result"]["messages"]) == 2
    assert {s["id"] for s in tool(url, "memory_sessions", {}).json()["result"]["sessions"]} == {"s1", "s2"}
    assert tool(url, "memory_stats", {}).json()["result"]["messages"] == 3
    full = tool(url, "memory_get_full", {"id": appended["id"]}).json()["result"]
    assert full["content"] == "the retry cap matches the upstream timeout"
    listed = httpx.get(f"{url}/api/tools").json()["result"]
    assert {t["name"] for t in listed} >= {"memory_search", "memory_append", "memory_ingest_session"}


def test_fact_reviews_answer_json(served: tuple[str, Memory]) -> None:
    """Found by an MCP client's user: the pairs to review went out as Python reprs over MCP and
    as a 500 over HTTP (Fact objects, not JSON)."""
    url, memory = served
    memory.facts.curator.write({"text": "The API uses JWT for authentication", "valid_from": "2024-01-01"})
    memory.facts.curator.write("The API uses SAML for authentication")
    r = tool(url, "memory_fact_reviews", {"limit": 5})
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    assert result["total"] == 1 and result["reviews"][0]["existing"]["text"] == "The API uses JWT for authentication"


def test_listings_a_model_reads_are_compact(served: tuple[str, Memory]) -> None:
    """Found by an MCP client's user: sixty captured tool outputs made memory_browse answer
    854 KB on its defaults, and each message carried the journal's path on the server's disk,
    offsets and keys. A listing cuts a long field, says so and where the whole is."""
    from palimpsest.tools.registry import SHOWN_CHARS

    url, memory = served
    log = "PASSED test_case\n" * 3000 + "FAILED tests/test_refund.py::test_round\n"
    ids = [memory.append("s", "tool", "", tool_name="Bash", tool_args={"command": "pytest"}, tool_result=log)["id"] for _ in range(3)]
    memory.append("s", "user", "short and plain")
    messages = tool(url, "memory_browse", {"session": "s"}).json()["result"]["messages"]
    assert len(json.dumps(messages)) < 4 * (SHOWN_CHARS + 1000)
    first = messages[0]
    assert "journal_path" not in first and "event_key" not in first and len(first["tool_result"]) <= SHOWN_CHARS + 2
    assert first["cut"] == {"chars": {"tool_result": len(log)}, "whole": "memory_get_full"} and "cut" not in messages[-1]
    hits = tool(url, "memory_search", {"query": "pytest Bash"}).json()["result"]["hits"]
    assert hits and all("journal_path" not in h and len(h.get("tool_result") or "") <= SHOWN_CHARS + 2 for h in hits)
    full = tool(url, "memory_get_full", {"id": ids[0]}).json()["result"]
    assert full["tool_result"] == log and "journal_path" not in full


def test_every_tool_that_takes_a_query_refuses_an_empty_one(url: str) -> None:
    """Found by an MCP client's user: memory_search refused "" and memory_recall, memory_answer,
    memory_summaries and vault_query answered an empty success, so a model never learnt."""
    from palimpsest.tools import MODULES
    from palimpsest.tools.registry import QUERY, collect

    takers = sorted(name for name, t in collect(MODULES).items()
                    if {k: v for k, v in t.input_schema["properties"].get("query", {}).items() if k != "description"} ==
                    {k: v for k, v in QUERY.items() if k != "description"})
    assert {"memory_search", "memory_recall", "memory_summaries", "vault_query"} <= set(takers)
    tools = collect(MODULES)
    for name in takers:
        given = {"query": "  ", "vault": "v", "session": "s"}
        r = tool(url, name, {k: v for k, v in given.items() if k in tools[name].input_schema["properties"]})
        assert r.status_code == 400 and "non-empty" in r.json()["error"]["message"], (name, r.text)


def test_write_routes_are_404_without_the_flag(home: Path) -> None:
    memory = open_memory(home)
    with ServerThread(memory) as url:
        r = tool(url, "memory_append", {"session": "s", "role": "user", "content": "x"})
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        assert tool(url, "memory_ingest_session", {"session": "s", "messages": []}).status_code == 404
        # capture from this machine is the owner's harness: taken with writes off (test_doctor)
        assert httpx.post(f"{url}/api/capture", json={"session": "s", "events": []}).status_code == 200
        listed = httpx.get(f"{url}/api/tools").json()["result"]
        assert {"memory_search", "memory_browse", "memory_get_full"} <= {t["name"] for t in listed}
        assert not any(t["write"] for t in listed)
        assert tool(url, "memory_search", {"query": "x"}).status_code == 200
    memory.close()


def test_capture_answers_stored_and_duplicate_per_event(served: tuple[str, Memory]) -> None:
    url, memory = served
    batch = {"session": "cc-1", "agent": "claude-code", "settings": {"project": "palimpsest"},
             "events": [{"role": "user", "content": "hello", "event_key": "a"}, {"role": "assistant", "content": "hi", "event_key": "b"}]}
    first = httpx.post(f"{url}/api/capture", json=batch).json()["result"]
    assert [e["status"] for e in first["events"]] == ["stored", "stored"]
    batch["events"].append({"role": "user", "content": "again", "event_key": "c"})
    second = httpx.post(f"{url}/api/capture", json=batch).json()["result"]
    assert [e["status"] for e in second["events"]] == ["duplicate", "duplicate", "stored"]
    assert second["events"][0]["id"] == first["events"][0]["id"]
    assert memory.stats()["messages"] == 3
    for empty in ({}, {"session": "", "events": []}):  # said "session id 'None' is not allowed"
        r = httpx.post(f"{url}/api/capture", json=empty)
        assert r.status_code == 400 and "session is required" in r.json()["error"]["message"], r.text


def test_concurrent_captures_to_one_session_store_each_event_once(served: tuple[str, Memory]) -> None:
    url, memory = served
    events = [{"role": "user", "content": f"message {i}", "event_key": f"k{i}"} for i in range(40)]

    statuses: list[int] = []

    def post(offset: int) -> None:
        with httpx.Client(timeout=30) as client:
            for start in range(offset, 40, 8):  # overlapping batches from 4 clients
                r = client.post(f"{url}/api/capture", json={"session": "busy", "events": events[start:start + 12]})
                statuses.append(r.status_code)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses and set(statuses) == {200}
    keys = [e.event_key for e in memory.journal.read("busy")]
    assert sorted(keys) == sorted(f"k{i}" for i in range(40))


def test_session_events_are_paged_and_streamed(url: str) -> None:
    tool(url, "memory_ingest_session", {"session": "long", "messages": [{"role": "user", "content": f"m{i}"} for i in range(25)]})
    seen, after = [], 0
    while after is not None:
        page = httpx.get(f"{url}/api/sessions/long/events", params={"after": after, "limit": 10}).json()["result"]
        seen += [e["content"] for e in page["events"]]
        after = page["next_after"]
    assert seen == [f"m{i}" for i in range(25)]
    seen, cursor = [], ""
    while cursor is not None:  # the cursor pages without rescanning the journal
        page = httpx.get(f"{url}/api/sessions/long/events", params={"cursor": cursor, "limit": 7}).json()["result"]
        seen += [(e["line"], e["content"]) for e in page["events"]]
        cursor = page["next_cursor"]
    assert seen == [(i + 1, f"m{i}") for i in range(25)]
    for bad in ("1.5", "x", "3.999999999", "-1.0", "1.9000000000000000000000000000000"):  # (a 31-digit offset was a 500)
        assert httpx.get(f"{url}/api/sessions/long/events", params={"cursor": bad}).status_code == 400
    with httpx.stream("GET", f"{url}/api/sessions/long/events", params={"stream": "true", "after": 20}) as r:
        assert r.headers["content-type"].startswith("application/x-ndjson")
        lines = [json.loads(line) for line in r.iter_lines() if line]
    assert [e["content"] for e in lines] == [f"m{i}" for i in range(20, 25)]
    assert httpx.get(f"{url}/api/sessions/nobody/events").status_code == 404


def test_health_readiness_stats_openapi(url: str) -> None:
    assert httpx.get(f"{url}/healthz").json()["result"]["status"] == "ok"
    assert httpx.get(f"{url}/readyz").json()["result"]["status"] == "ready"
    assert httpx.get(f"{url}/api/stats").json()["result"]["messages"] == 0
    spec = httpx.get(f"{url}/openapi.json").json()
    body = spec["paths"]["/api/memory/tool/memory_search"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["query"]
    assert "/api/capture" in spec["paths"]


@pytest.mark.parametrize("body, expected", [
    (b"this is not json", "not JSON"),
    (b'{"query": ', "not JSON"),
    (b"[1, 2]", "JSON object"),
    (b"\xff\xfe\x00", "not JSON"),
    (b'{"query": 42}', "query"),
    (b'{"query": "x", "limit": "ten"}', "limit"),
    (b'{"query": "x", "limit": 0}', "limit"),
    (b'{"query": "x", "limit": 5.0}', "limit"),
    (b'{"query": "x", "limit": true}', "limit"),
    (b'{"query": "x", "nonsense": true}', "nonsense"),
    (b'{"query": "x", "mode": "sql"}', "mode"),
    (b'{"query": "a\\ud800b"}', "surrogate"),
    (b'{"query": "x", "session": "\\udfff"}', "session"),
])
def test_bad_bodies_are_400_with_a_clear_message(url: str, body: bytes, expected: str) -> None:
    r = httpx.post(f"{url}/api/memory/tool/memory_search", content=body, headers=JSON)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid_input"
    assert expected in r.json()["error"]["message"]


def test_a_body_of_millions_of_objects_is_refused_and_a_large_one_is_parsed(served: tuple[str, Memory]) -> None:
    """Found by a security review: 31 MB of `{}` took 22 s and 1.3 GB on the event loop, every other request waiting."""
    url, memory = served
    r = httpx.post(f"{url}/api/memory/tool/memory_search", content=b'{"query": "x", "tag": [' + b"{}," * 2_100_000 + b'{}]}',
                   headers=JSON, timeout=60)
    assert r.status_code == 400 and "more than 2,000,000" in r.json()["error"]["message"]
    big = "pasted log line with some words in it\n" * 60_000  # 2.3 MB of text: parsed off the event loop, stored whole
    r = httpx.post(f"{url}/api/memory/tool/memory_search", json={"query": "pasted log " + "x" * 10, "limit": 5}, timeout=60)
    assert r.status_code == 200
    r = httpx.post(f"{url}/api/capture", json={"session": "big", "events": [{"role": "tool", "tool_name": "cat", "tool_result": big}]},
                   timeout=60)
    assert r.status_code == 200, r.text
    assert memory.get_full(memory.browse(session="big")[0].id)["tool_result"] == big


def test_times_may_be_epoch_seconds_on_every_tool(served: tuple[str, Memory]) -> None:
    # docs: times are ISO 8601 strings or epoch seconds; a bot's `created_at: 12345` had answered "is not of type 'string'"
    url, memory = served
    said = 1785580200  # 2026-08-01T10:30:00Z
    r = tool(url, "memory_append", {"session": "s", "role": "user", "content": "the dentist is on mondays", "created_at": said})
    assert r.status_code == 200, r.text
    assert memory.browse(session="s")[0].created_at == "2026-08-01T10:30:00.000000Z"
    r = httpx.post(f"{url}/api/capture", json={"session": "c", "events": [{"role": "user", "content": "hi", "created_at": said}]})
    assert r.status_code == 200, r.text
    found = tool(url, "memory_browse", {"since": said - 60, "until": said + 60}).json()["result"]["messages"]
    assert {m["session"] for m in found} == {"s", "c"}
    r = tool(url, "memory_remember", {"text": "I live in Porto.", "valid_from": said})
    assert r.status_code == 200, r.text
    assert tool(url, "memory_facts", {"valid_at": said + 60, "known_at": 2000000000}).json()["result"]["facts"]


@pytest.fixture
def served_on(home: Path, store_url: str) -> Iterator[str]:
    """The server's URL on each backend (SQLite, PostgreSQL)."""
    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder="none", enable_write=True))
    with ServerThread(memory) as url:
        yield url
    memory.close()


def test_a_recall_takes_the_time_it_is_asked_at(served_on: str) -> None:
    """Found by a support bot's team: `memory_recall` refused `now` (400, "'now' was unexpected") though the library
    takes it (docs/recall.md), so a bot could neither pass its turn's time nor ask what was known on a past day."""
    for content, said in (("I am on the basic plan", "2024-03-01T10:00:00Z"), ("I moved to the premium plan", "2024-06-01T10:00:00Z")):
        tool(served_on, "memory_append", {"session": "plan", "role": "user", "content": content, "created_at": said})
    for now in ("2024-03-15T09:00:00Z", 1710493200):  # the same moment as epoch seconds
        r = tool(served_on, "memory_recall", {"query": "which plan am I on", "now": now})
        assert r.status_code == 200, r.text
        assert [i["text"] for i in r.json()["result"]["items"]] == ["user: I am on the basic plan"]
    r = tool(served_on, "memory_recall", {"query": "which plan am I on", "now": "2024-07-01T00:00:00Z"})
    assert len(r.json()["result"]["items"]) == 2


def test_a_write_that_would_move_or_drop_a_message_is_409(served_on: str) -> None:
    """Found by a support bot's team (tests/test_append_repeats.py): a write naming another channel moved a customer's
    conversation, and a retry of an `event_key` with other words was dropped; both had been answered 200."""
    wonka = {"session": "support-wonka-retry", "role": "user", "content": "retry me please", "channel": "wonka"}
    assert tool(served_on, "memory_append", wonka).status_code == 200
    r = tool(served_on, "memory_append", {**wonka, "content": "oops", "channel": "initech"})
    assert r.status_code == 409 and "channel 'initech'" in r.json()["error"]["message"]
    keyed = {"session": "s2", "role": "user", "content": "my order is 123", "event_key": "turn-1"}
    assert tool(served_on, "memory_append", keyed).status_code == 200
    r = tool(served_on, "memory_append", {**keyed, "content": "my order is 456"})
    assert r.status_code == 409 and "already names a different message" in r.json()["error"]["message"]
    assert tool(served_on, "memory_append", keyed).json()["result"]["duplicate"] is True


def test_wrong_types_in_writes_store_nothing(served: tuple[str, Memory]) -> None:
    url, memory = served
    assert tool(url, "memory_append", {"session": "s", "role": 7, "content": "x"}).status_code == 400
    assert tool(url, "memory_ingest_session", {"session": "s", "messages": [{"role": "user", "content": "ok"}, {"content": "no role"}]}).status_code == 400
    r = httpx.post(f"{url}/api/capture", json={"session": "s", "events": [{"role": "user", "content": "ok"}, {"role": "user", "content": 5}]})
    assert r.status_code == 400
    assert httpx.post(f"{url}/api/capture", json={"session": "s", "events": "nope"}).status_code == 400
    assert memory.journal.sessions() == []


def test_unknown_tools_and_routes_are_404_json(url: str) -> None:
    for name in ("memory_nope", "../memory_search", "x" * 500):
        r = tool(url, name, {})
        assert r.status_code == 404 and r.json()["ok"] is False
    r = httpx.get(f"{url}/no/such/route")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert httpx.get(f"{url}/api/memory/tool/memory_search").status_code == 405


def test_non_json_content_type_is_refused(url: str) -> None:
    # A browser can send text/plain cross-site without a preflight; refusing it closes CSRF.
    r = httpx.post(f"{url}/api/memory/tool/memory_search", content=b'{"query": "x"}', headers={"content-type": "text/plain"})
    assert r.status_code == 415


def test_a_100_mb_body_is_refused_without_being_read(url: str) -> None:
    # Declared length above the limit: refused from the header.
    with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1]))) as s:
        s.sendall(b"POST /api/capture HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n")
        s.sendall(b"{" * 65536)
        head = s.recv(4096)
    assert head.startswith(b"HTTP/1.1 413")

    def chunks() -> Iterator[bytes]:  # no declared length: counted as it arrives
        block = b" " * (1 << 20)
        for _ in range(100):
            yield block

    try:
        r = httpx.post(f"{url}/api/memory/tool/memory_search", content=chunks(), headers=JSON, timeout=30)
        assert r.status_code == 413 and r.json()["error"]["code"] == "payload_too_large"
    except httpx.TransportError:
        pass  # the server may close the connection while the client is still sending; nothing was stored either way


def test_a_client_that_sends_its_whole_body_first_hears_the_413(url: str) -> None:
    """Found by a chat bot's builder: Python's urllib sends a 33 MiB body before reading and met a
    broken pipe, never the 413 that says why (a body up to `DRAIN_BYTES` is read, then refused)."""
    import urllib.error
    import urllib.request

    body = b'{"query": "' + b"x" * (33 * 1024 * 1024) + b'"}'
    request = urllib.request.Request(f"{url}/api/memory/tool/memory_search", data=body, headers=JSON, method="POST")
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=60)
    assert info.value.code == 413 and b"payload_too_large" in info.value.read()


def test_a_client_that_waits_for_100_continue_is_refused_at_once(url: str) -> None:
    """Found in review: reading the refused body answered "100 Continue", inviting a curl client to upload it."""
    with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1]))) as s:
        s.sendall(b"POST /api/memory/tool/memory_search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 40000000\r\nExpect: 100-continue\r\n\r\n")
        head = s.recv(4096)
    assert head.startswith(b"HTTP/1.1 413")


def test_deep_nesting_is_refused(url: str) -> None:
    deep = '{"session": "s", "role": "user", "content": "x", "tool_args": ' + "[" * 100_000 + "]" * 100_000 + "}"
    r = httpx.post(f"{url}/api/memory/tool/memory_append", content=deep.encode(), headers=JSON)
    assert r.status_code == 400 and "nested" in r.json()["error"]["message"]
    moderate = '{"session": "s", "role": "user", "content": "x", "tool_args": ' + "[" * 200 + "]" * 200 + "}"
    assert httpx.post(f"{url}/api/memory/tool/memory_append", content=moderate.encode(), headers=JSON).status_code == 400


@pytest.mark.parametrize("session", ["..", "..%2F..%2Fetc", "%2E%2E", "a%2Fb", ".hidden", "a b", "x" * 300, "%00"])
def test_path_tricks_in_session_ids_never_reach_the_disk(url: str, session: str) -> None:
    r = httpx.get(f"{url}/api/sessions/{session}/events")
    assert r.status_code in (400, 404), (session, r.status_code)
    r = httpx.post(f"{url}/api/capture", json={"session": session.replace("%2F", "/"), "events": [{"role": "user", "content": "x"}]})
    assert r.status_code == 400


def test_a_slow_client_does_not_block_others(url: str) -> None:
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as slow:
        slow.sendall(b"POST /api/memory/tool/memory_search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        started = time.monotonic()
        assert httpx.get(f"{url}/healthz", timeout=5).status_code == 200
        assert tool(url, "memory_search", {"query": "x"}).status_code == 200
        assert time.monotonic() - started < 5


def test_a_stalled_body_times_out(home: Path) -> None:
    memory = open_memory(home, body_timeout=0.5)
    with ServerThread(memory) as url, socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1]))) as slow:
        slow.settimeout(10)
        slow.sendall(b"POST /api/memory/tool/memory_search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{")
        assert slow.recv(4096).startswith(b"HTTP/1.1 408")
    memory.close()


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes this connection within `seconds` (recv gives b"")."""
    sock.settimeout(seconds)
    try:
        return sock.recv(4096) == b""
    except TimeoutError:
        return False


def _response(sock: socket.socket) -> bytes:
    """One whole response (head and a Content-Length body) from a kept-alive connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += sock.recv(4096)
    return head + b"\r\n\r\n" + body


def test_slow_headers_and_silent_connections_are_closed(home: Path) -> None:
    """Slowloris: a client trickling its headers, or saying nothing, must not hold a
    connection; one that sends its request in time, and keeps the connection alive
    between requests, is unaffected."""
    memory = open_memory(home, header_timeout=0.5)
    with ServerThread(memory) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as silent:
            assert _closed_within(silent, 5)
        with socket.create_connection(("127.0.0.1", port)) as trickle:
            started = time.monotonic()
            for line in (b"GET /healthz HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n", b"X-One: 1\r\n", b"X-Two: 2\r\n"):
                try:
                    trickle.sendall(line)
                except OSError:
                    break  # already closed
                time.sleep(0.2)
            assert _closed_within(trickle, 5)
            assert time.monotonic() - started < 3
        with socket.create_connection(("127.0.0.1", port)) as kept:
            request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            kept.settimeout(5)
            for _ in range(2):
                kept.sendall(request)
                assert _response(kept).startswith(b"HTTP/1.1 200")
                time.sleep(1.0)  # idle between requests: longer than the header deadline, within keep-alive
        with httpx.Client() as c:  # a slow request body is the body timeout's business, not this one
            assert c.get(url + "/healthz").status_code == 200
    memory.close()


def test_token_is_required_and_compared(home: Path) -> None:
    memory = open_memory(home, token="s3cret-token", enable_write=True)
    with ServerThread(memory) as url:
        assert httpx.get(f"{url}/api/stats").status_code == 401
        assert httpx.get(f"{url}/api/stats", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert httpx.get(f"{url}/api/stats", headers={"Authorization": "Basic s3cret-token"}).status_code == 401
        assert httpx.get(f"{url}/openapi.json").status_code == 401
        assert httpx.post(f"{url}/mcp", json={}).status_code == 401
        r = httpx.get(f"{url}/api/stats", headers={"Authorization": "Bearer s3cret-token"})
        assert r.status_code == 200 and r.json()["ok"] is True
        assert httpx.get(f"{url}/healthz").status_code == 200  # probes stay open
    memory.close()


def test_foreign_host_names_are_refused_on_loopback(url: str) -> None:
    # DNS rebinding: evil.example now resolves to 127.0.0.1, so its page is "same origin".
    r = httpx.get(f"{url}/api/stats", headers={"Host": "evil.example"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden_host"
    port = url.rsplit(":", 1)[1]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"):
        assert httpx.get(f"{url}/api/stats", headers={"Host": host}).status_code == 200


def test_binding_beyond_loopback_needs_a_token() -> None:
    check_bind("127.0.0.1", "")
    check_bind("::1", "")
    check_bind("localhost", "")
    check_bind("0.0.0.0", "a-token-of-sixteen")
    check_bind("127.0.0.1", "k")  # loopback: any token
    for host in ("0.0.0.0", "192.0.2.1", "::", "example.com"):
        with pytest.raises(InvalidInput):
            check_bind(host, "")
        with pytest.raises(InvalidInput, match="at least 16"):  # a security review's: "k" was guessed in 0.6 s
            check_bind(host, "k")


def test_wrong_bearer_tokens_are_throttled(home: Path) -> None:
    memory = open_memory(home, token="the-right-token-123")
    with ServerThread(memory) as url:
        codes = [httpx.get(f"{url}/api/stats", headers={"Authorization": f"Bearer guess-{i}"}).status_code for i in range(12)]
        assert codes[:10] == [401] * 10 and codes[10:] == [429, 429]
        right = httpx.get(f"{url}/api/stats", headers={"Authorization": "Bearer the-right-token-123"})
        assert right.status_code == 200  # the right token always passes: a neighbour's guesses lock no one out
        again = httpx.get(f"{url}/api/stats", headers={"Authorization": "Bearer guess-again"})
        assert again.status_code == 429 and int(again.headers["retry-after"]) >= 1
        assert httpx.get(f"{url}/healthz").status_code == 200
    memory.close()


def test_cors_is_closed_by_default(home: Path, url: str) -> None:
    preflight = {"Origin": "https://evil.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
    r = httpx.options(f"{url}/api/memory/tool/memory_search", headers=preflight)
    assert "access-control-allow-origin" not in r.headers
    memory = open_memory(home / "other", cors_origins="https://panel.example")
    with ServerThread(memory) as other:
        r = httpx.options(f"{other}/api/memory/tool/memory_search", headers={**preflight, "Origin": "https://panel.example"})
        assert r.headers.get("access-control-allow-origin") == "https://panel.example"
        r = httpx.options(f"{other}/api/memory/tool/memory_search", headers=preflight)
        assert "access-control-allow-origin" not in r.headers
    memory.close()


def test_cors_with_a_token_answers_the_preflight_and_any_origin_needs_a_token(home: Path) -> None:
    """Found by a security review: with a token set, the preflight (which carries no credentials) was answered
    401, so a configured origin could never call; and `*` without a token let any web page read and write."""
    from palimpsest.server.http import create_app

    memory = open_memory(home / "tok", cors_origins="https://panel.example", token="tok-cors-123456789")
    preflight = {"Origin": "https://panel.example", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization, content-type"}
    with ServerThread(memory) as url:
        r = httpx.options(f"{url}/api/memory/tool/memory_search", headers=preflight)
        assert r.status_code == 200 and r.headers.get("access-control-allow-origin") == "https://panel.example"
        r = httpx.post(f"{url}/api/memory/tool/memory_search", json={"query": "x"}, headers={"Origin": "https://panel.example"})
        assert r.status_code == 401  # the call itself still needs the token
        r = httpx.post(f"{url}/api/memory/tool/memory_search", json={"query": "x"},
                       headers={"Origin": "https://panel.example", "Authorization": "Bearer tok-cors-123456789"})
        assert r.status_code == 200 and r.headers.get("access-control-allow-origin") == "https://panel.example"
    memory.close()
    closed = open_memory(home / "closed", token="tok-cors-123456789")  # no origins: a preflight is no way past the token
    with ServerThread(closed) as url:
        assert httpx.options(f"{url}/api/memory/tool/memory_search", headers=preflight).status_code == 401
    closed.close()
    anyone = open_memory(home / "any", cors_origins="*")
    with pytest.raises(InvalidInput, match="PALIMPSEST_TOKEN"):
        create_app(anyone)
    anyone.close()


def test_readyz_is_503_when_the_store_fails(served: tuple[str, Memory]) -> None:
    url, memory = served

    def broken(session_id: str) -> None:
        raise RuntimeError("connection refused")

    memory.store.get_session = broken  # type: ignore[method-assign,assignment]
    r = httpx.get(f"{url}/readyz")
    assert r.status_code == 503 and r.json()["error"]["code"] == "store_unavailable"
    assert httpx.get(f"{url}/healthz").status_code == 200


def test_no_stack_traces_reach_clients(served: tuple[str, Memory]) -> None:
    url, memory = served
    memory.store.close()  # the next store call fails in an unexpected way
    memory.store.get_messages = None  # type: ignore[method-assign,assignment]
    r = tool(url, "memory_get_full", {"id": "evt_1"})
    assert r.status_code == 500
    assert r.json() == {"ok": False, "error": {"code": "internal", "message": "internal error"}}
    assert "Traceback" not in r.text


def _palimpsest(*args: str) -> list[str]:
    exe = shutil.which("palimpsest", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "palimpsest"]


def test_serve_prints_its_url_and_stops_cleanly_on_sigterm(home: Path) -> None:
    env = {**os.environ, "PALIMPSEST_HOME": str(home), "PALIMPSEST_EMBEDDER": "none"}
    proc = subprocess.Popen([*_palimpsest(), "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert "http://127.0.0.1:" in line, line + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        base = line.split(" at ", 1)[1].split()[0]
        assert httpx.get(f"{base}/readyz", timeout=10).status_code == 200
        body = b'{"query": "anything at all"}'
        with socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1]))) as inflight:
            inflight.sendall(b"POST /api/memory/tool/memory_search HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body[:10])
            time.sleep(0.5)
            proc.send_signal(signal.SIGTERM)  # a request is in flight: it must still be answered
            time.sleep(0.5)
            inflight.sendall(body[10:])
            inflight.settimeout(20)
            assert inflight.recv(4096).startswith(b"HTTP/1.1 200")
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()



def test_serve_refuses_a_public_address_without_a_token(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from palimpsest.cli import main

    assert main(["--home", str(home), "serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    assert "PALIMPSEST_TOKEN" in capsys.readouterr().err


def test_schemathesis_finds_no_5xx_and_no_schema_mismatch(served: tuple[str, Memory]) -> None:
    """Property-based requests from /openapi.json (bounded: 15 examples per operation, fixed seed)."""
    exe = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or shutil.which("schemathesis")
    if exe is None:
        pytest.skip("schemathesis is not installed (dev extra)")
    url, _ = served
    done = subprocess.run([exe, "run", f"{url}/openapi.json", "--max-examples", "15", "--seed", "1", "--phases", "examples,fuzzing",
                           "--checks", "not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance"],
                          capture_output=True, text=True, timeout=180, check=False, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_a_header_timeout_of_zero_means_none() -> None:
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from palimpsest.server.protocol import header_deadline_protocol

    assert header_deadline_protocol(0) is H11Protocol
    assert header_deadline_protocol(-1) is H11Protocol
    assert header_deadline_protocol(2.5).timeout == 2.5  # type: ignore[attr-defined]


@pytest.mark.parametrize("token", ["   ", "\t", "secret\n", "secret\r\n", " secret", "sec\x00ret", "sécret"])
def test_a_token_no_client_could_send_is_refused_at_start(token: str) -> None:
    with pytest.raises(InvalidInput, match="PALIMPSEST_TOKEN"):
        check_bind("127.0.0.1", token)
    with pytest.raises(InvalidInput, match="PALIMPSEST_TOKEN"):
        check_bind("0.0.0.0", token)


def test_serve_refuses_a_newline_ending_token_before_listening(home: Path) -> None:
    from palimpsest.server.run import serve

    memory = open_memory(home, token="secret\n")
    with pytest.raises(InvalidInput, match="PALIMPSEST_TOKEN"):
        serve(memory, "127.0.0.1", 0)
    memory.close()


def test_any_loopback_address_is_served_as_loopback(home: Path) -> None:
    # issue 21: --host 127.0.0.2 started without a token, then every request was forbidden_host
    check_bind("127.0.0.2", "")
    memory = open_memory(home)
    with ServerThread(memory, host="127.0.0.2") as url:
        assert httpx.get(f"{url}/api/stats").status_code == 200
        port = url.rsplit(":", 1)[1]
        assert httpx.get(f"{url}/api/stats", headers={"Host": f"127.0.0.1:{port}"}).status_code == 200
        assert httpx.get(f"{url}/api/stats", headers={"Host": f"127.1.2.3:{port}"}).status_code == 200
        refused = httpx.get(f"{url}/api/stats", headers={"Host": f"evil.example:{port}"})
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden_host"
    memory.close()


def test_capture_with_writes_off_is_taken_from_loopback_clients_only(home: Path) -> None:
    """Writes off: the owner's harness on this machine captures; a client from elsewhere
    (a proxied or forwarded request) gets the write tools' 404, naming the setting."""
    import asyncio

    from palimpsest.server.http import create_app

    memory = open_memory(home)
    app = create_app(memory)
    batch = {"session": "s", "events": [{"role": "user", "content": "captured"}]}

    async def post_from(client: tuple[str, int]) -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=client)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as c:
            return await c.post("/api/capture", json=batch)

    elsewhere = asyncio.run(post_from(("192.0.2.7", 40000)))
    assert elsewhere.status_code == 404 and "PALIMPSEST_ENABLE_WRITE=1" in elsewhere.json()["error"]["message"]
    assert memory.count_messages() == 0
    local = asyncio.run(post_from(("127.0.0.1", 40000)))
    assert local.status_code == 200 and local.json()["result"]["stored"] == 1
    assert [m.content for m in memory.browse(session="s")] == ["captured"]
    memory.close()


def test_two_speakers_saying_the_same_words_over_http_are_both_kept(url: str) -> None:
    """Found by a family assistant's builder: Mark's "ok sounds good" after Ana's answered `duplicate` under her id."""
    said = [tool(url, "memory_append", {"session": "family-group", "role": "user", "content": "ok sounds good",
                                        "metadata": {"speaker": who}}).json()["result"] for who in ("Ana", "Mark")]
    assert [r["stored"] for r in said] == [True, True]
    shown = tool(url, "memory_browse", {"session": "family-group"}).json()["result"]["messages"]
    assert [m["metadata"]["speaker"] for m in shown] == ["Ana", "Mark"]
