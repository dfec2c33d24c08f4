"""Valid time from the source (issue 20, finding 2): a distilled fact holds from when its
message was said, or from the date the statement names, resolved against that moment;
its known time (`recorded_at`) is when Palimpsest learned it. Restore from the snapshot
and from the journal keep both. On both backends, with a real LoCoMo conversation."""

from __future__ import annotations

import json
from pathlib import Path

from palimpsest import Memory, Settings
from palimpsest.facts.local import named_start
from palimpsest.importers import import_data
from palimpsest.records import utcnow

LOCOMO = Path("/work/shared/eval/locomo-dev.json")


def other_url(store_url: str, tmp_path: Path) -> str:
    if store_url.startswith("sqlite"):
        return f"sqlite:///{tmp_path / 'restored.db'}"
    from pg import fresh_database_url

    return fresh_database_url()


def rows(memory: Memory) -> list[dict]:
    return [d for d in map(json.loads, memory.facts.export_lines()) if d["record"] == "fact"]


def test_distilled_facts_hold_from_their_messages_time(home: Path, store_url: str, tmp_path: Path) -> None:
    conversation = json.loads(LOCOMO.read_text())[0]
    started = utcnow().isoformat()[:10]
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none", llm_url="")) as memory:
        import_data(memory, conversation, "locomo")
        memory.worker(tasks=["distill"]).drain()
        facts = rows(memory)
        assert len(facts) >= 10
        said = {m.id: m for m in memory.store.get_messages([a["source"] for f in facts for a in f["attestations"]])}
        named = 0
        for f in facts:
            source = said[f["attestations"][0]["source"]]  # the message the statement was heard in
            words = " ".join(source.content.split()).casefold()  # said there: verbatim, or one of two facts said in one breath
            assert f["text"].casefold() in words or f["kind"] == "correction" or (
                set(f["text"].casefold().rstrip(".").split()) - {"i", "we"} <= set(words.replace(".", " ").split())), f["text"]
            expected = named_start(f["text"], source.created_at) if f["kind"] != "task" else None
            named += expected is not None
            assert f["valid_from"] == (expected or source.created_at), f["text"]
            assert f["attestations"][0]["at"] == source.created_at  # heard when it was said, whatever date it names
            assert source.created_at.startswith("2023")
            assert f["recorded_at"][:10] >= started  # known time: when Palimpsest learned it
        assert 0 < named < len(facts)  # some name a date; most hold from when they were said
        before = rows(memory)
        snapshot = memory.facts.snapshot(tmp_path / "facts.jsonl")
    # the snapshot into another home; the system journal into a new store of this home
    # (opening it may start replaying the journal already: either way, the same rows)
    for where, restore in ((tmp_path / "other", "snapshot"), (home, "journal")):
        with Memory(where, other_url(store_url, tmp_path / restore), settings=Settings.load(env={}, embedder="none")) as fresh:
            if restore == "snapshot":
                fresh.facts.restore_snapshot(snapshot)
            else:
                fresh.facts.replay()  # what `facts restore --journal` runs; idempotent
            after = rows(fresh)
            assert [(f["id"], f["valid_from"], f["recorded_at"]) for f in after] == [
                (f["id"], f["valid_from"], f["recorded_at"]) for f in before]


def test_a_change_said_later_of_a_coarse_time_is_the_news(home: Path, store_url: str) -> None:
    """"Actually I moved to Munich last month", said on 3 December, names 1 November — before
    "I live in Berlin", said on 20 November. It was said after, and "last month" runs to the
    30th: Munich supersedes Berlin from when it was said, not the other way round."""
    turns = [("2026-11-20T09:00:00Z", "user", "I live in Berlin and work as a backend engineer."), ("2026-11-20T09:01:00Z", "assistant", "Got it, Berlin."),
             ("2026-12-03T09:00:00Z", "user", "Actually I moved to Munich last month."), ("2026-12-03T09:01:00Z", "assistant", "Noted."),
             ("2026-12-03T09:02:00Z", "user", "ok thanks")]  # closes the turn before
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none", llm_url="")) as memory:
        memory.ingest_session("me", [{"role": r, "content": c, "created_at": t} for t, r, c in turns])
        memory.worker(tasks=["distill"]).drain()
        current = {f.text: f for f in memory.facts.query()}
        assert "I moved to Munich last month." in current and "I live in Berlin." not in current
        assert "I work as a backend engineer." in current  # said in the same breath, and not what changed
        munich = current["I moved to Munich last month."]
        assert munich.valid_from == "2026-12-03T09:00:00.000000Z"  # from when it was said
        berlin = next(f for f in memory.facts.query(valid_at="2026-11-25T00:00:00Z") if f.text == "I live in Berlin.")
        assert berlin.valid_to == munich.valid_from


def test_a_change_said_later_of_a_month_without_its_year_is_the_news(home: Path, store_url: str) -> None:
    """Found by a language tutor bot's builder: "it's in November now", said on 14 April of an exam "on May 22", was read
    as the November gone by; the change was older than the fact it changed, and the May date stayed the current one."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none", llm_url="")) as memory:
        for session, day, text in (("a", "2026-03-03", "The exam is on May 22."), ("b", "2026-04-14", "Sadly the exam was moved, it's in November now.")):
            memory.ingest_session(session, [{"role": "user", "content": text, "created_at": f"{day}T18:00:00Z"},
                                            {"role": "user", "content": "ok thanks", "created_at": f"{day}T18:02:00Z"}])
            memory.worker(tasks=["distill"]).drain()
        assert [(f.text, f.valid_from[:10]) for f in memory.facts.query()] == [("Sadly the exam was moved, it's in November now.", "2026-04-14")]


def test_old_news_imported_late_still_holds_only_until_the_later_fact(home: Path, store_url: str) -> None:
    """The other order: a statement said before the fact it would replace, imported after it."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none", llm_url="")) as memory:
        for session, day, text in (("new", "2026-11-20", "I live in Berlin."), ("old", "2026-06-03", "Actually I moved to Hamburg last month.")):
            memory.ingest_session(session, [{"role": "user", "content": text, "created_at": f"{day}T09:00:00Z"},
                                            {"role": "user", "content": "ok thanks", "created_at": f"{day}T09:02:00Z"}])
            memory.worker(tasks=["distill"]).drain()
        assert [f.text for f in memory.facts.query()] == ["I live in Berlin."]
        hamburg = next(f for f in memory.facts.query(valid_at="2026-05-15T00:00:00Z") if "Hamburg" in f.text)
        assert hamburg.valid_to == "2026-11-20T09:00:00.000000Z"  # held until the later fact


def test_a_search_of_a_past_moment_finds_what_replaced_the_fact_it_matches(home: Path, store_url: str) -> None:
    """Found by a coaching-bot evaluator: recall as of a past day (`now` more than a day back) showed "I take lisinopril
    10 mg" and not the 15 mg that had replaced it by then; a search of now found the 15 mg (through its predecessor)."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as m:
        said = m.append("s1", "user", "I take lisinopril 10 mg every morning.", created_at="2024-01-10T09:00:00Z")["id"]
        old = m.facts.write("I take lisinopril 10 mg every morning.", source=f"event:{said}", valid_from="2024-01-10T09:00:00Z")
        later = m.append("s2", "user", "Dr. Lindqvist lowered it to 15 mg.", created_at="2024-06-10T09:00:00Z")["id"]
        m.facts.supersede(old.id, "Dr. Lindqvist lowered my lisinopril to 15 mg.", source=f"event:{later}",
                          valid_from="2024-06-10T09:00:00Z")
        found = {va: [h.fact.text for h in m.facts.search("What medications am I taking?", valid_at=va)]
                 for va in (None, "2024-07-09", "2024-03-01")}
        assert found == {None: ["Dr. Lindqvist lowered my lisinopril to 15 mg."],
                         "2024-07-09": ["Dr. Lindqvist lowered my lisinopril to 15 mg."],
                         "2024-03-01": ["I take lisinopril 10 mg every morning."]}  # before the change: what held then
        block = m.recall(None, "What medications am I taking?", now="2024-07-08T12:00:00Z").block
        assert "15 mg" in block and "10 mg every morning" not in block


def test_a_week_said_as_a_start_starts_on_its_first_day() -> None:
    """Found by a café owner: "anna is off sundays from this week", said on Monday 2 June, held from Thursday 5 June (the
    week's middle day, as "two weeks ago" stands for)."""
    assert named_start("ben opens sundays now, anna is off sundays from this week", "2025-06-02T09:00:00Z") == "2025-06-02T00:00:00.000000Z"
    assert named_start("from next week the standup is at 10", "2025-06-02T09:00:00Z") == "2025-06-09T00:00:00.000000Z"
    assert named_start("I started running two weeks ago", "2025-06-02T09:00:00Z") == "2025-05-19T00:00:00.000000Z"  # (its middle)
