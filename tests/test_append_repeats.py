"""A message said again is a turn of its own; a retried append is not (found by a chat bot's
builder: "ok" on Monday and "ok" on Friday, sent without created_at, kept one)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from palimpsest import Memory


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
    is no new event."""
    for channel in ("a", "b", "a", "a"):
        memory.append("s-rev", "user", f"hi {channel}", channel=channel)
    assert memory.get_session("s-rev").channel == "a"
    heads = [e for e in memory.journal.read("s-rev") if e.type == "session"]
    assert [e.metadata["channel"] for e in heads] == ["a", "b", "a"]
