from palimpsest import Memory


def test_append_search_roundtrip(memory: Memory) -> None:
    memory.append("s1", "user", "the retry cap matches the upstream timeout")
    hits = memory.search("retry cap").hits
    assert [h.message.content for h in hits] == ["the retry cap matches the upstream timeout"]


def test_identical_turns_said_at_two_times_are_two_turns(memory: Memory) -> None:
    """Found by a new user: "OK." appended for Monday and again for Friday was stored once
    (the key was the content's hash alone), and the transcript lost the second reply."""
    first = memory.append("s1", "assistant", "OK.", created_at="2026-10-05T10:00:00Z")
    again = memory.append("s1", "assistant", "OK.", created_at="2026-10-09T10:00:00Z")
    retry = memory.append("s1", "assistant", "OK.", created_at="2026-10-09T12:00:00+02:00")  # the same instant
    assert first["stored"] and again["stored"] and again["id"] != first["id"]
    assert retry["duplicate"] and retry["id"] == again["id"]
    undated = [memory.append("s1", "user", "yes") for _ in range(2)]  # no time given: a retry collapses
    assert undated[1]["duplicate"] and undated[1]["id"] == undated[0]["id"]
    assert [m.content for m in memory.browse(session="s1")].count("OK.") == 2


def test_times_at_the_edge_of_the_calendar(memory: Memory) -> None:
    """Found by a security review: "0001-01-01T00:00:00+14:00" (before the year 1 in UTC)
    answered 500 on every surface, and one message dated 9999-12-31T23:59Z broke the
    panel, `sessions` and `browse` for a reader ahead of UTC."""
    from datetime import timedelta, timezone

    import pytest

    from palimpsest.errors import InvalidInput
    from palimpsest.records import local_minute

    for bad in ("0001-01-01T00:00:00+14:00", 1e20):
        with pytest.raises(InvalidInput):
            memory.append("s1", "user", "hello", created_at=bad)
        with pytest.raises(InvalidInput):
            memory.search("hello", since=bad)
    with pytest.raises(InvalidInput, match="in the future"):  # refused since session 36 (a day's drift is allowed) ...
        memory.append("s1", "user", "from the end of time", created_at="9999-12-31T23:59:59Z")
    import palimpsest.ingest.messages  # ... a home written before may hold one: everything still reads it

    saved, palimpsest.ingest.messages.AHEAD = palimpsest.ingest.messages.AHEAD, timedelta.max
    try:
        memory.append("s1", "user", "from the end of time", created_at="9999-12-31T23:59:59Z")
    finally:
        palimpsest.ingest.messages.AHEAD = saved
    assert local_minute("9999-12-31T23:59:59Z", timezone(timedelta(hours=14))) == "9999-12-31 23:59"
    assert memory.browse(session="s1")[0].content == "from the end of time"
    assert memory.recall("s1", "what was said at the end of time?").block


def test_a_store_gone_after_the_index_took_a_write_does_not_fail_it(memory: Memory) -> None:
    """Found by a new user: a write journaled and indexed was answered 503 when the store went
    away just after (the check of ids on a shared store ran outside the indexing guard)."""
    from palimpsest.errors import StoreUnavailable

    def away(session: str, keys: list[str]) -> dict[str, str]:
        raise StoreUnavailable("PostgreSQL at db is unavailable")

    memory.store.ids_by_key = away  # type: ignore[method-assign]
    result = memory.append("s1", "user", "the retry cap is 30 seconds")
    assert result["stored"] and result["indexed"]
    assert memory.search("retry cap").hits[0].message.id == result["id"]


def test_a_message_without_a_vector_yet_is_not_buried(home) -> None:
    """Found by a data steward: appended with `--no-derive`, the one message holding every
    query word ranked 12th, below messages sharing one word that had vectors."""
    from palimpsest import Settings

    with Memory(home, settings=Settings.load(env={}, embedder="hash")) as memory:
        for i in range(15):
            memory.append("old", "user", f"the migration of table {i} went fine")
        memory.worker().drain()
        exact = memory.append("notes", "user", "zebra quokka platypus migration")["id"]  # no job run: no vector
        assert memory.search("zebra quokka platypus migration").hits[0].message.id == exact


def test_a_store_away_is_one_warning_per_outage_in_the_background(memory: Memory, caplog) -> None:
    """Found by a shared server's user: a 32-second PostgreSQL restart wrote "indexer stalled"
    at every pass (and the pool's own lines), where the docs promise one warning and one
    recovery line per outage. The store's failure is faked at its boundary."""
    import logging

    from palimpsest.errors import StoreUnavailable
    from palimpsest.service import background_pass

    real = memory.catch_up
    memory.catch_up = lambda: (_ for _ in ()).throw(StoreUnavailable("PostgreSQL at db is unavailable"))  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING):
        for _ in range(5):
            background_pass(memory, float("inf"))
        memory.catch_up = real  # type: ignore[method-assign]
        background_pass(memory, float("inf"))
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 2 and "indexer stalled" in said[0] and "recovered after 5 failures" in said[1], said


def test_an_id_of_another_kind_names_the_tool_that_reads_it(memory: Memory) -> None:
    """Found by an MCP client's user: memory_get_full("fct_…") answered only "no message"."""
    import pytest

    from palimpsest.errors import NotFound

    fact = memory.facts.write("the retry cap is 30 seconds")
    with pytest.raises(NotFound, match="memory_fact_history"):
        memory.get_full(fact.id)
    with pytest.raises(NotFound, match="no message with id 'evt_nothing'$"):
        memory.get_full("evt_nothing")
