"""A recall block shows a turn by its short id (the last 10 characters of `evt_…`), and
everything that takes a message id takes it: `get_full`, the `memory_get_full` tool, the
panel's jump. A short id two messages share is a clear error naming both; one that no
message has, or a string only shaped like one, is not found."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from palimpsest import Memory, Settings, tools
from palimpsest.cli import main
from palimpsest.errors import InvalidInput, NotFound
from palimpsest.ids import SHORT_ID_CHARS, is_short_id, short_id
from palimpsest.ingest.messages import normalise_message
from palimpsest.server.panel import views
from palimpsest.tokens import count_tokens


@pytest.fixture
def mem(home: Path, store_url: str):
    m = Memory(home, store_url, settings=Settings.load(env={}, embedder="hash", embed_cache="off"))
    yield m
    m.close()


def test_the_short_id_is_the_ids_own_tail_and_costs_half_the_tokens() -> None:
    full = "evt_1764712345678901234a3f9"
    assert short_id(full) == "901234a3f9" and len(short_id(full)) == SHORT_ID_CHARS
    assert count_tokens(f"- [{short_id(full)}]") <= count_tokens(f"- [{full}]") // 2
    for other in ("fct_17647123456789012345a3f9", "sum_1", "evt_1", "evt_1764712345678901234ZZZZ", "skill:v/name"):
        assert short_id(other) == other  # not an event id: shown whole
    assert is_short_id("901234a3f9")
    for bad in ("902345A3F9", "902345a3f", "902345a3f90", "1234a3f9", "abcd902345", "９０２３４５a3f9", "9023%5a3f9", "______a3f9", ""):
        assert not is_short_id(bad)


def test_each_turn_of_a_block_is_found_again_by_the_id_it_shows(mem: Memory) -> None:
    texts = ["the glacier hike starts at dawn", "we packed crampons for the glacier", "the glacier trail closes in May"]
    mem.ingest_session("s1", [{"role": "user", "content": t} for t in texts])
    block = mem.recall(None, "glacier hike", 1000).block
    shown = re.findall(r"^- \[([0-9]{6}[0-9a-f]{4})\] ", block, re.MULTILINE)
    assert len(shown) == 3
    for ref in shown:
        full = mem.get_full(ref)
        assert full["id"].endswith(ref) and full["content"] in texts
        assert f"[{ref}] user: {full['content']}" in block
    via_tool = tools.call(mem, "memory_get_full", {"id": shown[0]}, enable_write=False)
    assert via_tool["id"].endswith(shown[0])
    redirect = views.find(mem, {"id": shown[0]})[1]["url"]
    assert redirect.startswith("/panel/sessions/s1?around=evt_") and redirect.endswith(shown[0])


def _event(text: str, n: int, suffix: str) -> dict:
    raw = normalise_message({"role": "user", "content": text}, "test")
    return {**raw, "id": f"evt_{n:019d}{suffix}", "event_key": f"k{n}"}


def test_a_short_id_two_messages_share_names_both(mem: Memory) -> None:
    # restored ids are kept as given (an export's), so two can end alike
    first, second = 1764000000000001234, 1764000000009001234
    mem.journal.append("s1", [_event("first of two", first, "abcd"), _event("second of two", second, "abcd")])
    mem.indexer.index_session("s1")
    with pytest.raises(InvalidInput) as err:
        mem.get_full("001234abcd")
    assert f"evt_{first:019d}abcd" in str(err.value) and f"evt_{second:019d}abcd" in str(err.value)
    assert mem.get_full(f"evt_{second:019d}abcd")["content"] == "second of two"  # the full id still works


@pytest.mark.parametrize("ident", ["999999ffff", "______abcd", "%%%%%%abcd", "001234abc%", "001234abcd' OR '1'='1", "", "évt_1234", "1234abcd"])
def test_unknown_or_hostile_short_ids_are_not_found(mem: Memory, ident: str) -> None:
    mem.ingest_session("s1", [{"role": "user", "content": "one turn"}])
    with pytest.raises((NotFound, InvalidInput)) as err:
        mem.get_full(ident)
    assert err.type is NotFound or "id" in str(err.value)


def test_a_fact_cited_by_a_short_id_is_attested_by_its_message(mem: Memory) -> None:
    mem.ingest_session("s1", [{"role": "user", "content": "we deploy to Fly.io now"}])
    message = mem.browse(session="s1")[0]
    short = short_id(message.id)
    for cited in (short, f"event:{short}", f"evt:{short}"):
        assert mem.facts.cited(cited) == f"event:{message.id}"
    for other in ("person:Ada", "person:999999ffff", "doc:999999ffff", message.id, None):
        assert mem.facts.cited(other) == other  # not a short id: as given
    for typo in ("999999ffff", "event:999999ffff"):  # shaped like one, and no message has it: refused, nothing written
        with pytest.raises(InvalidInput, match="no message has the short id"):
            mem.facts.write("The region is Oslo.", source=typo)
    assert mem.facts.query() == []
    tools.call(mem, "memory_remember", {"text": "We deploy to Fly.io.", "source": short}, enable_write=True)
    found = tools.call(mem, "memory_facts", {"source": f"event:{short}"}, enable_write=False)["facts"]
    assert [f["text"] for f in found] == ["We deploy to Fly.io."]
    assert [a.source for a in mem.facts.get(found[0]["id"]).attestations] == [message.id]
    # the Python API resolves it as the tools do: write, confirm and query
    fact = mem.facts.write("The region is Frankfurt.", source=short)
    mem.facts.confirm(fact.id, source=f"event:{short}")  # the same message again: one hearing
    mem.ingest_session("s1", [{"role": "user", "content": "yes, Frankfurt"}], start=1)
    second = mem.browse(session="s1")[1]
    mem.facts.confirm(fact.id, source=f"event:{short_id(second.id)}")
    assert [a.source for a in mem.facts.get(fact.id).attestations] == [message.id, second.id]
    assert {f.text for f in mem.facts.query(source=short)} == {"We deploy to Fly.io.", "The region is Frankfurt."}


def test_the_cli_resolves_a_short_id_source(home: Path, store_url: str, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "hash")
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="hash", embed_cache="off")) as m:
        m.ingest_session("s1", [{"role": "user", "content": "the standup moved to Thursday"}])
        message = m.browse(session="s1")[0]
    base = ["--home", str(home), "--store", store_url]
    assert main([*base, "facts", "write", "The standup is on Thursday.", "--source", short_id(message.id), "--json"]) == 0
    fact = json.loads(capsys.readouterr().out)["fact"]
    assert [a["source"] for a in fact["attestations"]] == [message.id]
    assert main([*base, "facts", "query", "--source", short_id(message.id), "--json"]) == 0
    assert [f["id"] for f in json.loads(capsys.readouterr().out)] == [fact["id"]]


def test_a_fact_cited_by_a_shared_short_id_is_refused_naming_both(mem: Memory) -> None:
    first, second = 1764000000000001234, 1764000000009001234
    mem.journal.append("s1", [_event("first of two", first, "abcd"), _event("second of two", second, "abcd")])
    mem.indexer.index_session("s1")
    with pytest.raises(InvalidInput) as err:
        mem.facts.write("Two turns end alike.", source="001234abcd")
    assert f"evt_{first:019d}abcd" in str(err.value) and f"evt_{second:019d}abcd" in str(err.value)
    assert mem.facts.query() == []  # nothing written
    with pytest.raises(InvalidInput, match="shared by several messages"):
        tools.call(mem, "memory_remember", {"text": "Two turns end alike.", "source": "event:001234abcd"}, enable_write=True)
    assert mem.facts.query() == [] and mem.facts.curator.pending() == []  # refused, not parked


def test_the_panel_highlights_a_turn_named_by_its_short_id(mem: Memory) -> None:
    mem.ingest_session("s1", [{"role": "user", "content": f"turn {i}"} for i in range(3)])
    target = mem.browse(session="s1")[1]
    page, ctx = views.session(mem, {"session": "s1", "around": short_id(target.id)})  # typed by hand
    assert page == "session.html" and ctx["around"] == target.id  # the template marks `m.id == around`
    assert target.id in [m.id for m in ctx["messages"]]  # on the page that holds it, the turns before it too
    with pytest.raises(NotFound):
        views.session(mem, {"session": "s1", "around": "999999ffff"})


def test_a_shared_short_id_in_the_panel(mem: Memory) -> None:
    first, second = 1764000000000001234, 1764000000009001234
    mem.journal.append("s1", [_event("first of two", first, "abcd")])
    mem.journal.append("s2", [_event("second of two", second, "abcd")])
    mem.indexer.index_session("s1")
    mem.indexer.index_session("s2")
    # in a session's page, the one of its own
    assert views.session(mem, {"session": "s2", "around": "001234abcd"})[1]["around"] == f"evt_{second:019d}abcd"
    # the jump: the error names both ids ...
    with pytest.raises(InvalidInput) as err:
        views.find(mem, {"id": "001234abcd"})
    assert f"evt_{first:019d}abcd" in str(err.value) and f"evt_{second:019d}abcd" in str(err.value)
    # ... unless the id names a session too
    mem.ingest_session("001234abcd", [{"role": "user", "content": "a session named like a short id"}])
    assert views.find(mem, {"id": "001234abcd"})[1]["url"] == "/panel/sessions/001234abcd"
