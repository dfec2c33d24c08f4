"""The fact tools through the registry: reads always, writes only when enabled."""

from __future__ import annotations

import pytest

from palimpsest import Memory, NotFound, tools


def test_fact_tools_read_write_and_history(memory: Memory) -> None:
    call = lambda name, args, write=True: tools.call(memory, name, args, enable_write=write)
    decision = call("memory_remember", {"text": "the deploy window is Friday 16:00", "kind": "decision"})
    assert decision["action"] == "new"
    fid = decision["fact"]["id"]
    again = call("memory_remember", {"text": "the deploy window is Friday 16:00"})
    assert again["action"] == "confirm"
    new = call("memory_fact_supersede", {"id": fid, "text": "the deploy window is Thursday 10:00"})
    now = call("memory_facts", {}, write=False)["facts"]
    assert [f["text"] for f in now] == ["the deploy window is Thursday 10:00"]
    chain = call("memory_fact_history", {"id": new["id"]}, write=False)["facts"]
    assert [f["text"] for f in chain] == ["the deploy window is Friday 16:00", "the deploy window is Thursday 10:00"]
    assert chain[0]["valid_to"] == chain[1]["valid_from"]
    past = call("memory_facts", {"valid_at": chain[0]["valid_from"]}, write=False)["facts"]
    assert [f["text"] for f in past] == ["the deploy window is Friday 16:00"]
    call("memory_fact_retract", {"id": new["id"], "reason": "never agreed"})
    assert call("memory_facts", {}, write=False)["facts"] == []


def test_fact_write_tools_do_not_exist_without_the_flag(memory: Memory) -> None:
    with pytest.raises(NotFound):
        tools.call(memory, "memory_remember", {"text": "x"}, enable_write=False)
    with pytest.raises(Exception, match="fct_nope|no fact"):
        tools.call(memory, "memory_fact_history", {"id": "fct_nope"}, enable_write=False)
