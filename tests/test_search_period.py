"""A question about nothing but a time ("what did I say last week?") returns the messages
of that time, on both backends; one with a subject besides the time is ranked as before.
Also: a month's abbreviation beside a day is a date, not an unknown name, for the floor."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.search.floor import query_names
from palimpsest.search.timeframe import Window, period_only

NOW = "2026-12-05T12:00:00Z"  # a Saturday
DIARY = [
    ("2026-11-20T10:00:00Z", "user", "I started reading a book about Roman history."),
    ("2026-11-24T09:00:00Z", "user", "My sister is visiting next weekend, need to clean the flat."),
    ("2026-11-24T09:01:00Z", "assistant", "Sounds lovely! Want a cleaning checklist?"),
    ("2026-11-26T18:00:00Z", "user", "Booked the dentist for December 12."),
    ("2026-11-30T08:00:00Z", "user", "I ran a half marathon yesterday, legs are sore."),
    ("2026-12-04T12:00:00Z", "user", "Fixed the flaky login test by mocking the clock."),
]


@pytest.fixture
def diary(home: Path, store_url: str) -> Memory:
    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder="hash", embed_cache="off", timezone="UTC"))
    memory.ingest_session("diary", [{"role": r, "content": c, "created_at": t} for t, r, c in DIARY])
    memory.worker().drain()
    yield memory
    memory.close()


def contents(memory: Memory, query: str, **kw: object) -> list[str]:
    return [h.message.content for h in memory.search(query, now=NOW, **kw).hits]


@pytest.mark.parametrize(
    ("query", "window"),
    [
        ("what did I say last week?", (date(2026, 11, 23), date(2026, 11, 29))),
        ("What did we talk about on Nov 26?", (date(2026, 11, 26), date(2026, 11, 26))),
        ("what did I say 5 days ago", (date(2026, 11, 30), date(2026, 11, 30))),
        ("what did I work on yesterday?", (date(2026, 12, 4), date(2026, 12, 4))),
        ("last weekend", (date(2026, 11, 28), date(2026, 11, 29))),
        ("what happened between November 20 and November 24?", (date(2026, 11, 20), date(2026, 11, 24))),
        ("What movie did Joanna watch on 1 May, 2022?", None),  # a subject besides the time
        ("what did I say about my sister last week", None),
        ("when did I move?", None),  # asks for a time, names none
        ("Where did I work in June?", None),  # an employer, not June's messages (a new user's: June's small talk came back)
        ("What did I work on in June?", (date(2026, 6, 1), date(2026, 6, 30))),
        ("zzqqxx", None),
    ],
)
def test_period_only_reads_a_question_about_a_time(query: str, window: tuple[date, date] | None) -> None:
    got = period_only(query, date(2026, 12, 5))
    assert (got if got is None else (got.first, got.last)) == window


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what did I say last week?", [DIARY[1][2], DIARY[2][2], DIARY[3][2], DIARY[4][2]]),  # the marathon was on the 29th
        ("What did we talk about on Nov 26?", [DIARY[3][2]]),
        ("what did I say 5 days ago?", [DIARY[4][2]]),
        ("what did I do last weekend?", [DIARY[4][2]]),  # said Monday of Sunday
        ("what did I work on yesterday?", [DIARY[5][2]]),
    ],
)
def test_a_question_about_a_time_returns_its_messages_in_order(diary: Memory, query: str, expected: list[str]) -> None:
    result = diary.search(query, now=NOW)
    assert [h.message.content for h in result.hits] == expected
    assert result.mode == "period"
    assert result.notes and result.notes[0].startswith("asked about a time only")


def test_a_time_with_nothing_stored_says_so_and_the_filters_still_hold(diary: Memory) -> None:
    result = diary.search("what did I say last year?", now=NOW)
    assert result.hits == [] and result.notes[0].endswith("none stored")
    assert contents(diary, "what did I say last month?", role="assistant") == [DIARY[2][2]]
    assert contents(diary, "what did I say last month?", until="2026-11-25T00:00:00Z") == [DIARY[0][2], DIARY[1][2], DIARY[2][2]]
    every = contents(diary, "what did I say last month?")
    two = diary.search("what did I say last month?", now=NOW, limit=2)
    # spread over the time asked, saying how many were found (the month's first ten had been shown as if they were all)
    assert [h.message.content for h in two.hits] == [every[0], every[-1]] and f"{len(every)} found; 2 shown" in two.notes[0]


def test_a_question_with_a_subject_is_ranked_as_before(diary: Memory) -> None:
    result = diary.search("what did I say about my sister last week", now=NOW)
    assert result.mode != "period"
    assert result.hits[0].message.content == DIARY[1][2]


def test_the_window_is_a_window_of_days() -> None:
    window = Window(date(2026, 11, 23), date(2026, 11, 29))
    assert window.nearness(date(2026, 11, 29), date(2026, 11, 29)) == 1.0
    assert window.nearness(date(2026, 11, 30), date(2026, 11, 30)) < 1.0


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("What did Melanie do on Nov 26?", ["melanie"]),
        ("On 3 Sept what did Jan say?", ["jan"]),  # a name that is also an abbreviation, with no day beside it
        ("What did Jan say on the 3rd Oct?", ["jan"]),
        ("Tell Dec about it", ["dec"]),
    ],
)
def test_a_months_abbreviation_beside_a_day_is_no_name(query: str, names: list[str]) -> None:
    assert query_names(query) == names


def test_an_open_window_reads_from_its_edge(diary: Memory) -> None:
    result = diary.search("what did I say before November 24, 2026?", now=NOW)
    assert result.mode == "period" and result.notes == ["asked about a time only: the messages until 2026-11-24"]
    assert [h.message.content for h in result.hits] == [DIARY[0][2], DIARY[1][2], DIARY[2][2]]
    result = diary.search("what happened since December 1, 2026", now=NOW, limit=5)
    assert [h.message.content for h in result.hits] == [DIARY[5][2]] and "from 2026-12-01" in result.notes[0]


def test_a_search_in_a_session_nobody_stored_says_so(memory: Memory) -> None:
    """Found by a new user: a typo in the session filter returned no hits and no word why."""
    memory.append("real", "user", "the retry cap matches the upstream timeout")
    result = memory.search("retry cap", session="reall")
    assert result.hits == [] and any("no session 'reall' is stored" in n for n in result.notes)
    assert not any("no session" in n for n in memory.search("retry cap", session="real").notes)


def test_a_day_to_come_finds_what_was_said_of_it_before(memory: Memory) -> None:
    """Found by a user asking when things happened: "What's happening next Saturday?" read only what was said
    around that Saturday, and said "none stored" of the housewarming planned for it the week before."""
    memory.append("p", "user", "We're doing a little housewarming next Saturday.", created_at="2026-12-05T10:00:00Z")
    memory.append("p", "user", "The blood test is booked for December 14.", created_at="2026-12-05T10:05:00Z")
    saturday = memory.search("What's happening next Saturday?", now="2026-12-06T09:00:00Z")
    assert saturday.mode == "period" and [h.message.content for h in saturday.hits] == ["We're doing a little housewarming next Saturday."]
    fourteenth = memory.search("What do I have on December 14?", now="2026-12-06T09:00:00Z")
    assert [h.message.content for h in fourteenth.hits] == ["The blood test is booked for December 14."]


def test_a_day_asked_finds_the_messages_whose_words_name_a_stretch_holding_it(home: Path, store_url: str) -> None:
    """Found by a new user in Valencia: "two weeks ago we moved", said on 12 September, and "we move at the end of
    august", said on 3 August, both hold 29 August; "what happened on 29 August?" read only what was said from that day
    to a week after, and said "none stored"."""
    hits = _asked_29_august(home, store_url, [("we found a flat in Ruzafa! we move at the end of august", "2026-08-03"),
                                              ("my sister sent a photo of her cat", "2026-08-10"),
                                              ("two weeks ago we moved and I still have boxes everywhere", "2026-09-12")])
    assert [h.message.content[:16] for h in hits] == ["we found a flat ", "two weeks ago we"]
    assert all(h.parts["when"] < 1 for h in hits)  # a stretch holding the day is less near than the day itself


def _asked_29_august(home: Path, store_url: str, said: list[tuple[str, str]]) -> list:
    """The hits of "what happened on 29 August?" over one session of user lines, each said on its day at 18:00 UTC."""
    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder="hash", embed_cache="off", timezone="UTC"))
    memory.ingest_session("s", [{"role": "user", "content": text, "created_at": f"{day}T18:00:00Z"} for text, day in said])
    memory.worker().drain()
    hits = memory.search("what happened on 29 August?", now="2026-11-20T18:00:00Z").hits
    memory.close()
    return hits


def test_a_day_asked_is_not_held_by_a_message_naming_its_whole_month(home: Path, store_url: str) -> None:
    """Found in review: "what happened on 29 August?" returned "my birthday is in August" and "the gym is closed all of
    August": a bare month was read as a stretch holding the day. The stretch must be at most half a month."""
    hits = _asked_29_august(home, store_url, [("my birthday is in August", "2026-05-03"),
                                              ("the gym is closed all of August", "2026-07-20"),
                                              ("we move at the end of august", "2026-08-03")])
    assert [h.message.content for h in hits] == ["we move at the end of august"]
