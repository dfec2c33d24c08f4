"""A recall block shows a turn by its short id (the last 10 characters of `evt_…`), and
everything that takes a message id takes it: `get_full`, the `memory_get_full` tool, the
panel's jump. A short id two messages share is a clear error naming both; one that no
message has, or a string only shaped like one, is not found."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from palimpsest import Memory, Settings, tools
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
    for cited in (short, f"event:{short}"):
        assert mem.message_source(cited) == f"event:{message.id}"
    assert mem.message_source("person:Ada") == "person:Ada" and mem.message_source("999999ffff") == "999999ffff"
    tools.call(mem, "memory_remember", {"text": "We deploy to Fly.io.", "source": short}, enable_write=True)
    found = tools.call(mem, "memory_facts", {"source": f"event:{short}"}, enable_write=False)["facts"]
    assert [f["text"] for f in found] == ["We deploy to Fly.io."]
    assert [a.source for a in mem.facts.get(found[0]["id"]).attestations] == [message.id]
