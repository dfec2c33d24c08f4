"""Diversity: near-duplicates move below hits that say something else, and aggregation
questions can cap the hits of one session (docs/retrieval.md)."""

from __future__ import annotations

from palimpsest import Memory
from palimpsest.records import Hit, Message
from palimpsest.search.diversity import aggregates, cap_sessions, collapse_duplicates


def _hit(mid: str, session: str, content: str) -> Hit:
    return Hit(Message(id=mid, session=session, role="user", content=content, created_at="2024-01-01T00:00:00Z"), 1.0, {})


def test_near_duplicates_move_below_the_others() -> None:
    hits = [_hit("a", "s", "the deploy failed because the cache was cold note 3"),
            _hit("b", "s", "the deploy failed because the cache was cold note 11"),
            _hit("c", "s", "we rolled back and warmed the cache first"),
            _hit("d", "s", "the deploy failed because the cache was cold")]
    assert [h.message.id for h in collapse_duplicates(hits, 10)] == ["a", "c", "d", "b"]  # d is a part of a, not a repeat
    assert len(collapse_duplicates(hits, 10)) == 4  # nothing dropped
    assert [h.message.id for h in collapse_duplicates(hits, 2)] == ["a", "b", "c", "d"]  # only inside the window


def test_cap_sessions_and_what_aggregates() -> None:
    hits = [_hit(str(i), "s1" if i < 4 else "s2", f"turn {i}") for i in range(6)]
    assert [h.message.id for h in cap_sessions(hits, 2, 10)] == ["0", "1", "4", "5", "2", "3"]
    assert cap_sessions(hits, 0, 10) == hits
    assert aggregates("How many tournaments has Nate won?")
    assert aggregates("How many weeks passed between Maria adopting Coco and Shadow?")
    assert not aggregates("What breed is my dog?")


def test_repeated_notes_do_not_fill_the_page(memory: Memory) -> None:
    memory.ingest_session("s1", [{"role": "user", "content": f"note {i}: the staging cluster runs out of disk every night"} for i in range(12)])
    memory.ingest_session("s2", [{"role": "user", "content": "the staging cluster disk alarm goes to the on-call phone"}])
    hits = memory.search("staging cluster disk", limit=3).hits
    assert any(h.message.session == "s2" for h in hits)  # a repeat moved aside for it
    assert len(memory.search("staging cluster disk", limit=20).hits) == 13  # and nothing is lost
