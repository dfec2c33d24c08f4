"""A message said again is a turn of its own; a retried append is not (found by a chat bot's
builder: "ok" on Monday and "ok" on Friday, sent without created_at, kept one)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from palimpsest import Conflict, Memory


def test_a_message_said_again_after_other_turns_is_stored(memory: Memory) -> None:
    first = memory.append("d", "user", "ok")
    retry = memory.append("d", "user", "ok")
    assert first["stored"] and not retry["stored"] and retry["id"] == first["id"]  # a retry: of the latest message
    memory.append("d", "assistant", "Anything else?")
    again = memory.append("d", "user", "ok")
    assert again["stored"] and again["id"] != first["id"]
    again_retry = memory.append("d", "user", "ok")
    assert not again_retry["stored"] and again_retry["id"] == again["id"]  # the retry of the second names the second
    assert [m.content for m in memory.browse(session="d")] == ["ok", "Anything else?", "ok"]
    memory.rebuild()
    assert [m.content for m in memory.browse(session="d")] == ["ok", "Anything else?", "ok"]


def test_a_message_sent_by_several_writers_at_once_is_stored_once(memory: Memory) -> None:
    memory.append("c", "assistant", "hello")
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: memory.append("c", "user", "same words"), range(8)))
    assert sum(r["stored"] for r in results) == 1 and len({r["id"] for r in results}) == 1
    assert [m.content for m in memory.browse(session="c")] == ["hello", "same words"]


def test_an_event_key_or_a_time_still_decides(memory: Memory) -> None:
    memory.append("k", "user", "ok", event_key="turn-1")
    memory.append("k", "assistant", "sure")
    assert not memory.append("k", "user", "ok", event_key="turn-1")["stored"]  # the client's own key
    memory.append("t", "user", "ok", created_at="2024-01-01T10:00:00Z")
    memory.append("t", "assistant", "sure")
    assert not memory.append("t", "user", "ok", created_at="2024-01-01T10:00:00Z")["stored"]  # the same time: a retry


def test_a_repeat_after_other_turns_raced_by_several_writers_is_stored_once(memory: Memory) -> None:
    memory.append("r", "user", "ok")
    memory.append("r", "assistant", "Anything else?")
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: memory.append("r", "user", "ok"), range(8)))
    assert sum(r["stored"] for r in results) == 1 and len({r["id"] for r in results}) == 1
    assert [m.content for m in memory.browse(session="r")] == ["ok", "Anything else?", "ok"]


def test_a_repeat_never_lands_on_a_key_an_import_kept(memory: Memory) -> None:
    """Found in review: the repeat's key `<hash>@<line>` could be one a client (or another home's export) had
    given already, and the repeat was taken for a duplicate and lost."""
    from palimpsest.ingest.messages import default_key, normalise_message

    base = default_key(normalise_message({"role": "user", "content": "ok"}))
    memory.append("c", "user", "ok")
    memory.append("c", "assistant", "one")
    memory.append("c", "user", "ok", event_key=f"{base}@5")  # line 3 of the journal
    memory.append("c", "assistant", "two")
    assert memory.append("c", "user", "ok")["stored"]  # line 5: its own key, not the one given above
    assert [m.content for m in memory.browse(session="c")] == ["ok", "one", "ok", "two", "ok"]


def test_a_session_attribute_named_again_after_another_is_a_change(memory: Memory) -> None:
    """Found by a team bot's builder: channel "a", then "b", then "a" again left the session in "b" (the session
    event's key was its attributes' hash: the second "a" was a duplicate, dropped); the same value said again
    is no new event. (A channel is now the session's first: a title shows it.)"""
    for title in ("a", "b", "a", "a"):
        memory.append("s-rev", "user", f"hi {title}", title=title)
    assert memory.get_session("s-rev").title == "a"
    heads = [e for e in memory.journal.read("s-rev") if e.type == "session"]
    assert [e.metadata["title"] for e in heads] == ["a", "b", "a"]


def test_two_speakers_saying_the_same_words_are_two_messages(memory: Memory) -> None:
    """Found by a family assistant's builder: in a shared session Ana's "ok sounds good", then Mark's, both without
    created_at, and Mark's was answered as a duplicate under Ana's id and lost (the key was the words alone)."""
    ana = memory.append("family-group", "user", "ok sounds good", metadata={"speaker": "Ana"})
    mark = memory.append("family-group", "user", "ok sounds good", metadata={"speaker": "Mark"})
    assert mark["stored"] and mark["id"] != ana["id"]
    retry = memory.append("family-group", "user", "ok sounds good", metadata={"speaker": "Mark"})
    assert not retry["stored"] and retry["id"] == mark["id"]  # Mark's client retrying: still one
    memory.rebuild()
    assert [m.speaker for m in memory.browse(session="family-group")] == ["Ana", "Mark"]


def test_an_append_retried_without_its_agent_or_channel_is_one_message(memory: Memory) -> None:
    """Found in review: a client sends agent/channel on its first call only; its retry without them was stored
    again, because the agent and channel given with an append were part of its key. They are the session's."""
    first = memory.append("s", "user", "book the 9am slot", agent="helper", channel="web")
    retry = memory.append("s", "user", "book the 9am slot")
    assert not retry["stored"] and retry["id"] == first["id"]
    # no speaker and no created_at: two agents' same words right after each other collapse as a retry
    memory.append("bots", "assistant", "on it", agent="ana-bot")
    assert not memory.append("bots", "assistant", "on it", agent="mark-bot")["stored"]
    captured = memory.capture("cap", [{"role": "user", "content": "ok", "metadata": {"speaker": s}} for s in ("Ana", "Mark")])
    assert [stored for _, stored in captured["events"]] == [True, True]
    assert [len(memory.browse(session=s)) for s in ("s", "bots", "cap")] == [1, 1, 2]


def test_one_speaker_a_minute_apart_is_two_messages_a_retry_is_one(memory: Memory) -> None:
    ana = {"speaker": "Ana"}
    first = memory.append("t", "user", "ok", metadata=ana, created_at="2026-06-01T10:00:00Z")
    later = memory.append("t", "user", "ok", metadata=ana, created_at="2026-06-01T10:01:00Z")
    assert first["stored"] and later["stored"]  # the writer said when: two moments, two messages
    assert not memory.append("t", "user", "ok", metadata=ana, created_at="2026-06-01T10:01:00Z")["stored"]
    memory.append("u", "user", "ok", metadata=ana)
    assert not memory.append("u", "user", "ok", metadata=ana)["stored"]  # no time said, nothing between: a retry
    assert [len(memory.browse(session=s)) for s in ("t", "u")] == [2, 1]


def test_a_write_naming_another_channel_is_refused_and_the_session_keeps_its_own(memory: Memory) -> None:
    """Found by a support bot's team, a channel per customer on one shared server: one append to Wonka's session
    naming channel "initech" moved the whole conversation — Initech's recall showed Wonka's lines, Wonka's found
    none — and was answered a plain `stored: true`."""
    s = "support-wonka-retry"
    memory.append(s, "user", "retry me please", channel="wonka", settings={"tags": ["user:wonka"]})
    with pytest.raises(Conflict, match="channel 'wonka'.*channel 'initech'"):
        memory.append(s, "user", "oops", channel="initech")
    with pytest.raises(Conflict, match="channel 'wonka'"):
        memory.ingest_session(s, [{"role": "user", "content": "oops"}], start=5, channel="initech")
    with pytest.raises(Conflict, match="channel 'wonka'"):
        memory.capture(s, [{"role": "user", "content": "oops"}], channel="initech")
    assert memory.recall(None, "retry me please", channel="initech").items == []
    assert [i.text for i in memory.recall(None, "retry me please", channel="wonka").items] == ["user: retry me please"]
    memory.append(s, "assistant", "retried", channel="wonka")  # its own channel, or none, is written
    memory.append(s, "user", "thanks")
    memory.rebuild()
    assert memory.get_session(s).channel == "wonka"
    assert [m.content for m in memory.browse(session=s)] == ["retry me please", "retried", "thanks"]
    memory.append("first-unscoped", "user", "hello")
    memory.append("first-unscoped", "user", "a channel now", channel="globex")  # none yet: the first named is its
    assert memory.get_session("first-unscoped").channel == "globex"


def test_an_event_key_given_again_with_other_words_is_refused(memory: Memory) -> None:
    """Found by a support bot's team: a retry under the same `event_key` with other words was answered
    `duplicate: true` and its words dropped. An exact retry is still a duplicate."""
    first = memory.append("k2", "user", "my order is 123", event_key="turn-1")
    with pytest.raises(Conflict, match="event_key 'turn-1' already names a different message"):
        memory.append("k2", "user", "my order is 456", event_key="turn-1")
    with pytest.raises(Conflict, match="already names a different message"):
        memory.append("k2", "assistant", "my order is 123", event_key="turn-1")
    retry = memory.append("k2", "user", "my order is 123", event_key="turn-1")
    assert retry["duplicate"] and retry["id"] == first["id"]
    assert [m.content for m in memory.browse(session="k2")] == ["my order is 123"]
