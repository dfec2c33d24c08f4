"""The end of a field past the index's cap stays searchable by keywords: a long test log's
failure is on its last lines (issue found trying it as a coding agent's user). Both backends."""

from __future__ import annotations

from pathlib import Path

from palimpsest import Memory, Settings
from palimpsest.ingest.indexer import standing_out

LOG = "\n".join(f"tests/test_module_{i}.py::test_case PASSED" for i in range(6000))
LOG += "\nFAILED tests/test_zebra_unicorn.py::test_frobnicate - AssertionError: 3 != 4\n"
MIDDLE = "tests/test_module_2000.py"  # past the cap, before the kept tail


def test_a_long_tool_outputs_last_lines_are_found(home: Path, store_url: str) -> None:
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        memory.append("code", "tool", "ran the test suite", tool_name="bash", tool_result=LOG)
        memory.append("code", "user", "the zebra exhibit opens at noon")
        hits = memory.search("zebra_unicorn frobnicate", limit=5).hits
        assert [h.message.content for h in hits] == ["ran the test suite"]
        assert hits[0].message.truncated and len(hits[0].message.tool_result or "") < len(LOG)
        assert memory.get_full(hits[0].message.id)["tool_result"] == LOG  # the whole output is kept
        assert memory.search("test_module_17", limit=5).hits  # the head, on both backends (migration 0015)
        assert not memory.search("test_module_2000", limit=5).hits  # one of 6,000 look-alike lines: not indexed
        assert MIDDLE in LOG


WORKER_LOG = "\n".join(f"2026-11-09 12:{i % 60:02d}:00 INFO worker-{i % 7} processed batch {i} in {i * 37 % 990}ms"
                       for i in range(3000))
WORKER_LOG += "\n2026-11-09 13:00:00 ERROR worker-3 lost its upstream pg-replica-7 errno=EQX4471\n"
WORKER_LOG += "\n".join(f"2026-11-09 13:{i % 60:02d}:00 INFO worker-{i % 7} processed batch {i} in {i * 41 % 990}ms"
                        for i in range(3000))
WORKER_LOG += "\nsummary: 6000 batches, deployed by Zanzibar-Quokka"  # a rare word in the middle...
WORKER_LOG += "\n" + "\n".join(f"2026-11-09 14:{i % 60:02d}:00 INFO worker-{i % 7} idle" for i in range(2000))


def test_what_stands_out_in_a_long_outputs_middle_is_found(home: Path, store_url: str) -> None:
    """A pasted 500 KB log whose one error line sits in its middle, past the index's cap
    and before its kept tail: the error line and a rare word are found by keyword."""
    assert 16000 < WORKER_LOG.index("EQX4471") < len(WORKER_LOG) - 4000
    assert 16000 < WORKER_LOG.index("Zanzibar") < len(WORKER_LOG) - 4000
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        memory.append("ops", "user", "Here is the full worker log:\n" + WORKER_LOG)
        memory.append("ops", "user", "The replica errors stopped after the restart.")
        for query in ("EQX4471", "errno EQX4471", "pg-replica-7", "Zanzibar-Quokka"):
            hits = memory.search(query, limit=5).hits
            assert hits and hits[0].message.content.startswith("Here is the full worker log"), query
    kept = standing_out(WORKER_LOG, 4000)  # the look-alike lines are not repeated into the index
    assert "EQX4471" in kept and "Zanzibar-Quokka" in kept and "processed" not in kept and len(kept) < 200


def test_a_tool_call_is_not_found_by_the_question_before_it(home: Path, store_url: str) -> None:
    """Found by a Claude Code user's evaluation: every tool call and output after a prose turn carried that turn as its
    search context, and 65% of a search's top ten were tool lines, some without a word of the query."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        memory.append("code", "user", "Why did alembic upgrade head fail on staging with DuplicateColumn?")
        memory.append("code", "assistant", "", tool_name="Bash", tool_args={"command": "make itest"})
        memory.append("code", "tool", "", tool_name="Bash", tool_result="3 passed in 0.4s")
        memory.append("code", "assistant", "Two migrations add the same column: DuplicateColumn.")
        memory.worker().drain()  # the tool call's sentence ("Called Bash with command=make itest")
        hits = [h.message for h in memory.search("DuplicateColumn", limit=5).hits]
        assert hits and not any(m.tool_name for m in hits)
        assert {h.message.tool_name for h in memory.search("make itest", limit=5).hits} == {"Bash"}


def test_a_rare_code_stands_out_of_a_middle_full_of_warnings_of_many_shapes() -> None:
    """Sixty-four shapes of warning line (8 MB of them) had filled the whole budget before the rare code was reached (the
    lines now take at most half of it; found measuring a 12 MB tool output: bench/long_field.py)."""
    import random

    rng = random.Random(1)
    words = ["alpha", "beta", "gamma", "retry", "connection", "socket", "timeout", "request"]
    lines = [f"WARN {rng.choice(words)} {rng.choice(words)} failed for id{rng.randint(0, 10**6)} at step {i}" for i in range(150_000)]
    lines[100_000] = "2025-01-01 ERROR checksum mismatch AUDIT-Z9931 in ledger"
    kept = standing_out("\n".join(lines), 4000)
    assert "AUDIT-Z9931" in kept and "WARN" in kept and len(kept) <= 4000


ITINERARY = ("pasting the itinerary pdf\n" + "".join(f"{d:02d}NOV LH 506 FRA GRU 22:20 seat {d % 30}A ticket 220-{4711000 + d}\n"
                                                      for d in range(1, 700))
             + "Hotel Fasano São Paulo — reservation code FSP-99X3Q7\n")


def test_a_literal_search_reads_a_long_message_whole(home: Path, store_url: str) -> None:
    """Found by a traveller's bot builder: the booking code at the end of a 38 KB pasted itinerary, past the index's
    cap, was no hit of substring search (nor regex): both scanned the index's copy, its first 16,000 characters."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        said = memory.append("itin", "user", ITINERARY, created_at="2026-11-01T10:00:00+01:00")["id"]
        memory.append("chat", "user", "the fsp-99x3q7 code again?", created_at="2026-11-02T10:00:00Z")
        for mode, query in (("substring", "fsp-99X3Q7"), ("regex", r"FSP-\d+X")):
            hits = memory.search(query, mode=mode).hits
            assert [h.message.id for h in hits][-1:] == [said] and not memory.search(query, mode=mode).notes, (mode, hits)
        assert len(memory.search("fsp-99x3q7", mode="substring").hits) == 2  # newest first: the chat, then the paste
        assert len(memory.search("01NOV LH", mode="substring").hits) == 1  # found in the index's copy: once
        assert not memory.search("FSP-99X3Q7", mode="substring", session="chat").hits[1:]  # the scope holds
