"""A search or recall scoped to an agent, a channel or a tag returns the facts heard there
(found by a chat bot's builder: one user's door code came back in another user's recall)."""

from __future__ import annotations

from palimpsest import Memory


def _setup(memory: Memory) -> tuple[str, str]:
    alice = memory.append("alice-1", "user", "My door code is 4711.", agent="bot", channel="alice")["id"]
    bob = memory.append("bob-1", "user", "My gate code is 1234.", agent="bot", channel="bob")["id"]
    memory.tags.add("user:alice", session="alice-1")
    memory.tags.add("user:bob", session="bob-1")
    memory.facts.write("Alice's door code is 4711.", source=f"event:{alice}")
    memory.facts.write("Bob's gate code is 1234.", source=f"event:{bob}")
    memory.facts.write("The office door code is 9999.")  # by hand: heard in no session
    return alice, bob


def texts(found: object) -> list[str]:
    return sorted(h.fact.text for h in found.facts)  # type: ignore[attr-defined]


def test_facts_follow_the_tag_agent_and_channel_filters(memory: Memory) -> None:
    _setup(memory)
    assert texts(memory.search("code")) == ["Alice's door code is 4711.", "Bob's gate code is 1234.", "The office door code is 9999."]
    assert texts(memory.search("code", tag="user:bob")) == ["Bob's gate code is 1234."]
    assert texts(memory.search("code", channel="alice")) == ["Alice's door code is 4711."]
    assert texts(memory.search("code", agent="bot")) == ["Alice's door code is 4711.", "Bob's gate code is 1234."]
    assert texts(memory.search("code", agent="nobody")) == []
    block = memory.recall("bob-1", "what is the door code?", tag="user:bob").block
    assert "4711" not in block and "9999" not in block


def test_a_fact_heard_in_two_sessions_is_in_both_scopes(memory: Memory) -> None:
    alice, bob = _setup(memory)
    fact = memory.facts.query()[0]
    memory.facts.confirm(fact.id, source=f"event:{bob}")
    assert fact.text in texts(memory.search("code", tag="user:bob"))


def test_a_users_fact_is_found_among_many_users_alike(memory: Memory) -> None:
    """Found in review: the scoped search filtered the best few facts of everyone, so among 60 users
    with "door code" facts only the last one found theirs."""
    for i in range(60):
        said = memory.append(f"u{i}", "user", f"My door code is {1000 + i}.")["id"]
        memory.tags.add(f"user:u{i}", session=f"u{i}")
        memory.facts.write(f"User {i}'s door code is {1000 + i}.", source=f"event:{said}")
    for i in (0, 30, 59):
        assert texts(memory.search("door code", tag=f"user:u{i}", limit=5)) == [f"User {i}'s door code is {1000 + i}."]
