"""Diversity: near-duplicates move below hits that say something else, and aggregation
questions can cap the hits of one session (docs/retrieval.md)."""

from __future__ import annotations

from pathlib import Path

from palimpsest import Memory
from palimpsest.records import Hit, Message
from palimpsest.search.diversity import aggregates, cap_sessions, collapse_duplicates, fold_copies, templates_last
from palimpsest.settings import Settings


def _hit(mid: str, session: str, content: str, at: str = "2024-01-01T00:00:00Z") -> Hit:
    return Hit(Message(id=mid, session=session, role="user", content=content, created_at=at), 1.0, {})


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


SMALL_TALK = ["haha ok, sounds good! what should i do today?", "thanks coach, you're the best, see you tomorrow for the workout"]


def test_copies_fold_into_the_better_hit(memory: Memory) -> None:
    """A fitness bot's user: two small-talk lines said in seven sessions held 8 of the 10 places for "what workout do
    i do on tuesdays?", and the answer was third."""
    for day in range(7):
        memory.ingest_session(f"day{day}", [{"role": "user", "content": SMALL_TALK[0] if day % 2 else SMALL_TALK[0].upper()},
                                            {"role": "assistant", "content": "Let's do it!"},
                                            {"role": "user", "content": SMALL_TALK[1].replace(" ", "  " if day % 2 else " ")}])
    memory.ingest_session("day7", [{"role": "user", "content": "coach, change of plan: tuesdays are now intervals"}])
    hits = memory.search("what workout do i do on tuesdays?").hits
    texts = [" ".join(h.message.content.split()).casefold() for h in hits]
    assert len(texts) == len(set(texts))  # each said once
    assert "coach, change of plan: tuesdays are now intervals" in texts
    assert [h.copies for h in hits if texts[hits.index(h)] == SMALL_TALK[1]] == [6]  # and how many more


def _status(n: int, agent: str) -> Hit:
    return _hit(f"{agent}{n}", "s", f"{agent} status {n}: working on T-4, tests passed", f"2024-01-{n - 20:02}T00:00:00Z")


def test_a_template_takes_two_places_before_the_others() -> None:
    hits = [_status(n, agent) for n in (35, 30, 31, 32, 33, 34) for agent in ("qa", "dev")] + [_hit("f", "s", "qa: T-9 failed")]
    ordered = templates_last(fold_copies(hits), 10)
    assert [h.message.id for h in ordered][:7] == ["qa35", "dev35", "qa30", "dev30", "f", "qa31", "dev31"]
    assert len(ordered) == len(hits)  # moved, not dropped: a template's numbers may be what is asked (weigh-ins)
    assert templates_last(hits, 20) == hits  # eight repeats of twenty places leave room for the rest: none moves
    late = [_status(n, "qa") for n in range(30, 36)] + [_hit("f", "s", "qa: T-9 failed")]
    assert [h.message.id for h in templates_last(late, 5)] == ["qa30", "qa31", "qa35", "f", "qa32", "qa33", "qa34"]  # the newest stays
    copies = [_hit("a", "s", "Thanks coach!"), _hit("b", "t", "thanks   COACH!"), _hit("c", "s", "tuesdays are intervals")]
    assert [(h.message.id, h.copies) for h in fold_copies(copies)] == [("a", 1), ("c", 0)]


def test_templated_status_lines_leave_room_for_the_failures(memory: Memory) -> None:
    """A crew of four agents wrote 720 status lines ("qa status 31: working on T-4, tests passed", …): "All QA failures
    reported this sprint" found none of its five failures in the top ten, the recall block 80+ status lines."""
    failures = ["qa: regression in checkout, T-9 failure reported to dev", "qa: failure on T-15, payment webhook returns 500",
                "qa: T-21 failed, the export has wrong dates", "qa: T-12 flaky upload test failed twice",
                "qa: FAILED T-4 login test times out on CI"]
    for day, failure in enumerate(failures):
        lines = [f"{a} status {day * 100 + i}: working on T-{4 + i % 3}, tests passed" for i in range(25) for a in ("qa", "dev", "ops", "pm")]
        memory.ingest_session(f"day{day}", [{"role": "assistant", "content": x} for x in [*lines, failure]])
    query = "All QA failures reported this sprint"
    found = {h.message.content for h in memory.search(query).hits}
    assert [f for f in failures if f in found] == failures[:4]  # without an embedder; the local one finds all five
    block = memory.recall("next", query).block
    assert all(f in block for f in failures)


def test_a_series_of_values_keeps_its_places(home: Path, store_url: str) -> None:
    """Six monthly weigh-ins: "what did my latest weigh-in say?" (limit 5) had shown 83 kg, 85 kg and three lines about
    scales, the latest (82 kg) moved below them as a template's third line — five weigh-ins before the rule."""
    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder="local"))
    for month, kg in enumerate([88, 87, 86, 85, 83, 82], start=1):
        memory.ingest_session(f"m{month}", [{"role": "user", "content": f"Weigh-in today: I'm at {kg} kg.", "created_at": f"2026-0{month}-01T08:00:00Z"}])
    memory.ingest_session("x", [{"role": "assistant", "content": "Nice progress, keep it up!", "created_at": "2026-06-01T08:01:00Z"},
                                {"role": "user", "content": "The gym scale reads a kilo heavy.", "created_at": "2026-06-01T08:02:00Z"},
                                {"role": "user", "content": "I bought a new bathroom scale.", "created_at": "2026-06-01T08:03:00Z"}])
    memory.worker().drain()
    hits = memory.search("what did my latest weigh-in say?", limit=5).hits
    memory.close()
    assert [h.message.content.startswith("Weigh-in today") for h in hits] == [True] * 5
    assert "Weigh-in today: I'm at 82 kg." in [h.message.content for h in hits]
