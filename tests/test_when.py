"""Time expressions resolved against the moment they were said (`palimpsest.when`), and
the resolved dates in a message's search context (keywords only; the vector text is
unchanged)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.ingest.indexer import spoken_dates
from palimpsest.search import embedding_text
from palimpsest.search.timeframe import ASKS_WHEN, Window, dated_boost, query_window, when_boost
from palimpsest.when import resolve, time_words

MONDAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # Monday 8 May 2023

# text, expected spans as (first, last, grain, certain)
TABLE = [
    # a part of a month: a week of it, a weekend of it, a third of it
    ("in the second week of November", [("2022-11-08", "2022-11-14", "week", False)]),  # the nearest November to 8 May 2023
    ("the last week of May 2023", [("2023-05-25", "2023-05-31", "week", True)]),
    ("the 2nd week of March, 2024", [("2024-03-08", "2024-03-14", "week", True)]),  # a week, not the 2nd
    ("the first weekend of June 2023", [("2023-06-03", "2023-06-04", "weekend", True)]),
    ("the last weekend of September 2023", [("2023-09-30", "2023-10-01", "weekend", True)]),
    ("at the beginning of June", [("2023-06-01", "2023-06-10", "month", False)]),
    ("by the end of February 2024", [("2024-02-21", "2024-02-29", "month", True)]),  # a leap year's end
    ("in the middle of May", [("2023-05-11", "2023-05-20", "month", False)]),
    ("the 2nd week of march", []),  # "march" in lower case is the verb; and "the 2nd" of a week is no day
    ("the end of the month", []),
    # a fast typist's dates: an abbreviation in lower case beside a day's number (found by a caregiver); "may" and "march"
    # in lower case stay verbs
    ("appt moved to aug 21", [("2023-08-21", "2023-08-21", "day", False)]),
    ("booked follow up w patel 3 dec 10am", [("2022-12-03", "2022-12-03", "day", False)]),
    ("we march 3 miles a day", []),
    ("jan said hi", []),
    ("round to 2 dec places", []),  # (found in review: a lower-case date ends where the date does)
    ("flight dec 20 to lisbon", [("2022-12-20", "2022-12-20", "day", False)]),
    ("set sep 2 spaces wide", []),
    ("appt on sep 3 at 10", [("2023-09-03", "2023-09-03", "day", False)]),
    ("I went there yesterday", [("2023-05-07", "2023-05-07", "day", True)]),
    ("we met last night", [("2023-05-07", "2023-05-07", "day", True)]),
    ("the day before yesterday", [("2023-05-06", "2023-05-06", "day", True)]),
    ("see you tomorrow", [("2023-05-09", "2023-05-09", "day", True)]),
    ("today is the day", [("2023-05-08", "2023-05-08", "day", True)]),
    ("two days ago we met", [("2023-05-06", "2023-05-06", "day", True)]),
    ("3 days ago", [("2023-05-05", "2023-05-05", "day", True)]),
    ("two weeks ago", [("2023-04-21", "2023-04-27", "week", True)]),
    ("we went camping two weekends ago", [("2023-04-29", "2023-04-30", "weekend", True)]),  # said on Monday 8 May
    ("a weekend ago", [("2023-05-06", "2023-05-07", "weekend", True)]),
    ("in two weekends", [("2023-05-20", "2023-05-21", "weekend", True)]),
    ("a few weeks ago", [("2023-04-14", "2023-04-20", "week", False)]),  # "a few" is not a number
    ("six months ago", [("2022-11-01", "2022-11-30", "month", True)]),
    ("in 2 weeks", [("2023-05-19", "2023-05-25", "week", True)]),
    ("last week was fun", [("2023-05-01", "2023-05-07", "week", True)]),
    ("next week", [("2023-05-15", "2023-05-21", "week", True)]),
    ("next month I move", [("2023-06-01", "2023-06-30", "month", True)]),
    ("last month", [("2023-04-01", "2023-04-30", "month", True)]),
    ("last year", [("2022-01-01", "2022-12-31", "year", True)]),
    ("last weekend", [("2023-05-06", "2023-05-07", "weekend", True)]),
    ("the week before last", [("2023-04-24", "2023-04-30", "week", True)]),
    ("the weekend before last", [("2023-04-29", "2023-04-30", "weekend", True)]),
    ("the month after next", [("2023-07-01", "2023-07-31", "month", True)]),
    ("the year before last", [("2021-01-01", "2021-12-31", "year", True)]),
    ("this weekend", [("2023-05-13", "2023-05-14", "weekend", True)]),
    ("last Friday", [("2023-05-05", "2023-05-05", "day", True)]),
    # said of the last or the next one: both, neither certain
    ("I leave on Friday", [("2023-05-05", "2023-05-05", "day", False), ("2023-05-12", "2023-05-12", "day", False)]),
    # told in the past, or of what is to come: that one (found by a new user: "We moved on Saturday!", said on a Monday,
    # was also the coming Saturday, and answered "the second week of June")
    ("We moved on Saturday!", [("2023-05-06", "2023-05-06", "day", False)]),
    ("I'm flying out on Friday", [("2023-05-12", "2023-05-12", "day", False)]),
    # punctuation, quotes and dashes around the time word (found by a new user: read as no time at all)
    ("We adopted him on Saturday!!! His name is Pretzel.", [("2023-05-06", "2023-05-06", "day", False)]),
    ('she said "yesterday" twice', [("2023-05-07", "2023-05-07", "day", True)]),
    ("the vet (yesterday) was fine", [("2023-05-07", "2023-05-07", "day", True)]),
    ("yesterday—finally", [("2023-05-07", "2023-05-07", "day", True)]),
    ("last weekend!!!", [("2023-05-06", "2023-05-07", "weekend", True)]),
    ("I leave on the 11th", [("2023-05-11", "2023-05-11", "day", False)]),
    ("it was on the 28th", [("2023-04-28", "2023-04-28", "day", False)]),  # nearer than 28 May
    ("back in 2019", [("2019-01-01", "2019-12-31", "year", True)]),
    ("since 2019", [("2019-01-01", "2019-12-31", "year", True)]),
    ("I've had them for three years", [("2020-01-01", "2020-12-31", "year", False)]),
    ("this summer was hot", [("2023-06-01", "2023-08-31", "season", True)]),
    ("last summer", [("2022-06-01", "2022-08-31", "season", True)]),
    ("next winter", [("2023-12-01", "2024-02-29", "season", True)]),
    ("I watched it on 1 May, 2022", [("2022-05-01", "2022-05-01", "day", True)]),
    ("March 12th, 2022", [("2022-03-12", "2022-03-12", "day", True)]),
    ("on the 4th of July 2021", [("2021-07-04", "2021-07-04", "day", True)]),
    ("in March 2023", [("2023-03-01", "2023-03-31", "month", True)]),
    ("2023-04-02", [("2023-04-02", "2023-04-02", "day", True)]),
    ("in March", [("2023-03-01", "2023-03-31", "month", False)]),  # which March: the nearest, not certain
    ("Jan 5", [("2023-01-05", "2023-01-05", "day", False)]),
    # bad input: nothing, never a guess stated as certain, never an error
    ("on February 30", []),
    ("February 30, 2023", []),
    ("I may go", []),
    ("we march on", []),
    ("jan 5", [("2023-01-05", "2023-01-05", "day", False)]),  # an abbreviation in lower case beside a day is a date,
    ("jan", []),  # alone, a word (a name)
    ("ayer fui al cine", []),
    ("gestern war ich im Kino", []),
    ("in 30000", []),
    ("in 0999", []),
    ("the 45th", []),
    ("", []),
]


@pytest.mark.parametrize(("text", "expected"), TABLE)
def test_resolution_table(text: str, expected: list[tuple[str, str, str, bool]]) -> None:
    got = [(s.first.isoformat(), s.last.isoformat(), s.grain, s.certain) for s in resolve(text, MONDAY)]
    assert got == expected


# Japanese and Chinese, as their English counterparts read them (found by a Japanese game developer with a Chinese
# collaborator: "2026年10月に何を決めた？", "先週パブリッシャーから何が来た？", "三天前李伟报告了什么问题？" named no time), against
# the same Monday 8 May 2023
CJK_TABLE = [
    # absolute: a day, a month, a year; full-width digits too
    ("2026年10月16日に決めた", [("2026-10-16", "2026-10-16", "day", True)]),
    ("２０２７年６月１２日", [("2027-06-12", "2027-06-12", "day", True)]),
    ("2026年10月16号开会", [("2026-10-16", "2026-10-16", "day", True)]),
    ("10月16日", [("2023-10-16", "2023-10-16", "day", False)]),  # the nearest 16 October, as "October 16" is
    ("5月3号我们见面了", [("2023-05-03", "2023-05-03", "day", False)]),
    ("2027年6月に延期", [("2027-06-01", "2027-06-30", "month", True)]),
    ("２０２７年６月", [("2027-06-01", "2027-06-30", "month", True)]),
    ("締切は2027年2月末", [("2027-02-01", "2027-02-28", "month", True)]),
    ("4月に何を決めた？", [("2023-04-01", "2023-04-30", "month", False)]),
    ("2019年に東京へ引っ越した", [("2019-01-01", "2019-12-31", "year", True)]),
    ("2026/10/16に決めた", [("2026-10-16", "2026-10-16", "day", True)]),
    ("2026/10/16", [("2026-10-16", "2026-10-16", "day", True)]),
    # relative, Japanese
    ("昨日何した？", [("2023-05-07", "2023-05-07", "day", True)]),
    ("きのう映画を見た", [("2023-05-07", "2023-05-07", "day", True)]),
    ("一昨日", [("2023-05-06", "2023-05-06", "day", True)]),
    ("今日は休み", [("2023-05-08", "2023-05-08", "day", True)]),
    ("明日また話そう", [("2023-05-09", "2023-05-09", "day", True)]),
    ("先週パブリッシャーから何が来た？", [("2023-05-01", "2023-05-07", "week", True)]),
    ("今週", [("2023-05-08", "2023-05-14", "week", True)]),
    ("来週", [("2023-05-15", "2023-05-21", "week", True)]),
    ("先月", [("2023-04-01", "2023-04-30", "month", True)]),
    ("今月", [("2023-05-01", "2023-05-31", "month", True)]),
    ("来月", [("2023-06-01", "2023-06-30", "month", True)]),
    ("去年", [("2022-01-01", "2022-12-31", "year", True)]),
    ("今年", [("2023-01-01", "2023-12-31", "year", True)]),
    ("来年", [("2024-01-01", "2024-12-31", "year", True)]),
    ("3日前に李伟さんが報告した", [("2023-05-05", "2023-05-05", "day", True)]),
    ("２週間前", [("2023-04-21", "2023-04-27", "week", True)]),
    ("6ヶ月前", [("2022-11-01", "2022-11-30", "month", True)]),
    ("6か月前", [("2022-11-01", "2022-11-30", "month", True)]),
    # relative, Chinese; Chinese numerals one to ten (and on)
    ("昨天", [("2023-05-07", "2023-05-07", "day", True)]),
    ("今天", [("2023-05-08", "2023-05-08", "day", True)]),
    ("明天", [("2023-05-09", "2023-05-09", "day", True)]),
    ("前天", [("2023-05-06", "2023-05-06", "day", True)]),
    ("上周", [("2023-05-01", "2023-05-07", "week", True)]),
    ("上星期", [("2023-05-01", "2023-05-07", "week", True)]),
    ("本周", [("2023-05-08", "2023-05-14", "week", True)]),
    ("下周", [("2023-05-15", "2023-05-21", "week", True)]),
    ("上个月", [("2023-04-01", "2023-04-30", "month", True)]),
    ("这个月", [("2023-05-01", "2023-05-31", "month", True)]),
    ("下个月", [("2023-06-01", "2023-06-30", "month", True)]),
    ("明年", [("2024-01-01", "2024-12-31", "year", True)]),
    ("5天前", [("2023-05-03", "2023-05-03", "day", True)]),
    ("三天前李伟报告了什么问题？", [("2023-05-05", "2023-05-05", "day", True)]),
    ("十天前", [("2023-04-28", "2023-04-28", "day", True)]),
    ("两个月前", [("2023-03-01", "2023-03-31", "month", True)]),
    ("3日後に出す", [("2023-05-11", "2023-05-11", "day", True)]),
    ("三天后", [("2023-05-11", "2023-05-11", "day", True)]),
    # no time: a month's count, a day of the week's name, a month's quantity, a day that does not exist, words that
    # hold the characters of one ("以上周知": hereby made known, "日本周辺": around Japan, "基本月額": a basic monthly fee)
    ("2026年2月30日", []),
    ("以上周知のとおり", []),
    ("日本周辺の地図", []),
    ("基本月額は千円", []),
    ("3ヶ月かかった", []),
    ("月曜に直した", []),
    ("每个月12MB", []),
]


@pytest.mark.parametrize(("text", "expected"), CJK_TABLE)
def test_japanese_and_chinese_resolution_table(text: str, expected: list[tuple[str, str, str, bool]]) -> None:
    got = [(s.first.isoformat(), s.last.isoformat(), s.grain, s.certain) for s in resolve(text, MONDAY)]
    assert got == expected


def test_no_anchor_resolves_only_absolute_dates() -> None:
    assert resolve("yesterday, last week and on Friday", None) == []
    assert [s.first for s in resolve("on 12 May 2022, not yesterday", None)] == [date(2022, 5, 12)]


def test_far_years_and_odd_input_never_raise() -> None:
    assert resolve("next year", datetime(2999, 6, 1)) == []  # 3000 is out of range: nothing, not an error
    assert resolve("two years ago", date(1001, 1, 1)) == []
    assert resolve("200 days ago", MONDAY)[0].first == date(2022, 10, 20)
    assert resolve("5000 days ago", MONDAY) == []  # past what a conversation means by a count
    assert resolve(None, MONDAY) == []  # type: ignore[arg-type]
    assert resolve("yesterday " + "x" * 100_000, MONDAY)[0].first == date(2023, 5, 7)
    assert resolve("x " * 5_000 + "yesterday", MONDAY) == []  # looked for in the first 4,000 characters only


def test_words_are_what_a_question_would_say() -> None:
    assert time_words("I watched it yesterday", datetime(2022, 5, 2)) == "1 May 2022 Sunday"
    assert time_words("this summer", MONDAY) == "summer 2023 June July August"
    assert time_words("last week", MONDAY) == "week of 1 May 2023"
    assert time_words("last month and last month again", MONDAY) == "April 2023"  # each once
    assert time_words("nothing here", MONDAY) == ""


def test_resolved_dates_reach_keywords_not_vectors(memory: Memory) -> None:
    memory.ingest_session("s1", [
        {"role": "user", "content": "I watched Inception yesterday", "created_at": "2022-05-02T10:00:00+00:00"},
        {"role": "user", "content": "a quiet day", "created_at": "2022-05-20T10:00:00+00:00"},
        {"role": "user", "content": "no time given, so it is stamped now: yesterday"},
    ])
    hits = memory.search("what did I watch on 1 May 2022").hits
    assert hits[0].message.content == "I watched Inception yesterday"
    assert hits[0].message.context.endswith("1 May 2022 Sunday")
    assert "1 May 2022" not in embedding_text(hits[0].message)  # vectors (and their cache) unchanged


def test_japanese_and_chinese_dates_reach_the_search_context() -> None:
    """At index time as in the query: "3日前" said on 7 December is 4 December in the message's keyword context."""
    assert spoken_dates("3日前に李伟さんがバグを報告した", "2026-12-07T10:00:00+09:00") == "4 December 2026 Friday"
    assert spoken_dates("我发现粒子系统有内存泄漏，昨天修复了", "2026-12-05T10:00:00Z") == "4 December 2026 Friday"
    assert spoken_dates("リリースは2027年6月に延期する", "2026-11-05T10:00:00Z") == "June 2027"


def test_a_time_that_cannot_be_read_resolves_only_absolute_dates() -> None:
    assert spoken_dates("I went yesterday", "not a time") == ""
    assert spoken_dates("on 12 May 2022", "") == "12 May 2022 Thursday"


@pytest.mark.parametrize(
    ("query", "window"),
    [
        ("What did Joanna watch on 1 May, 2022?", ("2022-05-01", "2022-05-01")),
        ("What did she achieve in January 2022?", ("2022-01-01", "2022-01-31")),
        ("Where was John as of September 2023?", ("1000-01-01", "2023-09-30")),
        ("what did I buy before June 2023", ("1000-01-01", "2023-06-30")),
        ("what happened after 3 March 2023", ("2023-03-03", "2999-12-31")),
        ("Where was John between August 11 and August 15 2023?", ("2023-08-11", "2023-08-15")),
        ("what did I cook last month", ("2023-04-01", "2023-04-30")),
        ("the film two weeks ago", ("2023-04-21", "2023-04-27")),
        ("Where did Caroline move from 4 years ago?", ("2019-01-01", "2019-12-31")),
        ("what is my dog's name", None),
        # the developer's questions, asked on Monday 8 May 2023
        ("10月16日", ("2023-10-16", "2023-10-16")),
        ("2026年10月に何を決めた？", ("2026-10-01", "2026-10-31")),
        ("先週パブリッシャーから何が来た？", ("2023-05-01", "2023-05-07")),
        ("三天前李伟报告了什么问题？", ("2023-05-05", "2023-05-05")),
        ("昨日何した？", ("2023-05-07", "2023-05-07")),
        ("ゲームエンジンは何を使ってる？", None),
    ],
)
def test_query_window(query: str, window: tuple[str, str] | None) -> None:
    got = query_window(query, MONDAY)
    assert (got.first.isoformat(), got.last.isoformat()) == window if window else got is None


def test_the_time_a_query_names_lifts_its_messages_but_filters_nothing(memory: Memory) -> None:
    memory.ingest_session("s1", [
        {"role": "user", "content": "We went hiking in the hills", "created_at": "2022-03-10T10:00:00+00:00"},
        {"role": "user", "content": "We went hiking by the lake", "created_at": "2022-07-10T10:00:00+00:00"},
        {"role": "user", "content": "I went hiking with my dad yesterday", "created_at": "2022-05-02T10:00:00+00:00"},
    ])
    hits = memory.search("where did we go hiking on 1 May, 2022?", now="2022-08-01T00:00:00Z").hits
    assert hits[0].message.content == "I went hiking with my dad yesterday" and hits[0].parts["when"] == 1.0
    # a window that holds nothing: every hit still comes back, in the order without the boost
    plain = memory.search("where did we go hiking", now="2022-08-01T00:00:00Z").hits
    empty = memory.search("where did we go hiking in 1990", now="2022-08-01T00:00:00Z").hits
    assert len(empty) == len(plain) == 3


def test_when_boost_is_soft() -> None:
    window = Window(date(2022, 5, 1), date(2022, 5, 1))
    assert window.nearness(date(2022, 5, 1), date(2022, 5, 1)) == 1.0
    assert 0.5 < window.nearness(date(2022, 5, 3), date(2022, 5, 3)) < 1.0  # two days off: still near
    assert window.nearness(date(2021, 5, 1), date(2021, 5, 1)) < 0.01
    assert when_boost([], window, 0.2) == []


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("When did John have a party with veterans?", True),
        ("when is the dentist appointment", True),
        ("What year did Nate get his first turtles?", True),
        ("In which month did Maria start volunteering?", True),
        ("Which week did Tim visit Ireland?", True),
        ("How long ago did I buy the bike?", True),
        ("How many weeks ago did I start running?", True),
        ("  Since when has the CI been red?", True),
        ("How long have I lived in Lisbon?", False),  # a length of time, not a time
        ("What did Caroline paint?", False),
        ("Tell me when the build broke", False),  # "when" inside: the answer is the breakage, not a date alone
        ("whenever the tests fail, what do we do", False),
    ],
)
def test_which_questions_ask_when(query: str, asks: bool) -> None:
    assert bool(ASKS_WHEN.search(query)) is asks


def test_a_question_asking_when_lifts_the_messages_that_name_a_time(memory: Memory) -> None:
    memory.ingest_session("s1", [
        {"role": "user", "content": "The veterans party was loud, a party with veterans to remember, and I loved it.",
         "created_at": "2023-05-20T10:00:00+00:00"},
        {"role": "user", "content": "We threw a party with some veterans last Friday.", "created_at": "2023-05-20T10:01:00+00:00"},
    ])
    plain = memory.search("Who came to the party with veterans?").hits
    assert plain[0].message.content.startswith("The veterans party") and "dated" not in plain[0].parts
    when = memory.search("When did John have a party with veterans?").hits
    assert when[0].message.content.startswith("We threw") and when[0].parts["dated"] == 1.0
    assert len(when) == len(plain) == 2  # a bonus, never a filter
    assert dated_boost([], "When did it happen?", 0.1) == []


def test_a_reply_naming_a_date_is_still_known_as_the_reply(memory: Memory) -> None:
    """The resolved dates follow a mark in the search context; the reply test reads what is
    before it (a reply that said "yesterday" was no longer found as its turn's reply)."""
    from palimpsest.ingest.indexer import split_context
    from palimpsest.records import Hit
    from palimpsest.search.conversation import _replies

    memory.ingest_session("s1", [
        {"role": "user", "content": "Where did you go hiking?", "created_at": "2022-05-02T10:00:00+00:00"},
        {"role": "assistant", "content": "Up Mount Tam yesterday, with Sam.", "created_at": "2022-05-02T10:01:00+00:00"},
    ])
    turn, reply = memory.browse(session="s1")
    head, dates = split_context(reply.context)
    assert head.endswith("Where did you go hiking?") and dates == "1 May 2022 Sunday"
    assert split_context(turn.context)[1] == ""
    assert _replies([Hit(turn, 1.0), Hit(reply, 0.5)]) == {turn.id: Hit(reply, 0.5)}


@pytest.mark.parametrize("query", [
    "When did </system-reminder> happen?",
    'When did "OR 1=1 -- ; DROP TABLE messages; happen',
    "When NEAR(party veterans) AND * ?",
    "When did 🎉 the party 🎉 happen?",
    "Когда была вечеринка? When?",
    "When" + " when" * 500,
])
def test_a_hostile_question_asking_when_ranks_without_error(memory: Memory, query: str) -> None:
    memory.ingest_session("s1", [{"role": "user", "content": "We threw a party with some veterans last Friday.",
                                  "created_at": "2023-05-20T10:01:00+00:00"}])
    result = memory.search(query)
    assert all(h.message.content for h in result.hits)  # an answer (perhaps none), never an error


@pytest.mark.parametrize("text,expected", [
    ("I'm going to my parents on the 23rd.", "2026-12-23"),  # said on the 24th of the future: the coming 23rd
    ("We will meet on the 2nd.", "2026-12-02"),
    ("I was at my parents on the 23rd.", "2026-11-23"),
    ("I went to the dentist on the 2nd.", "2026-11-02"),
    ("The party on the 23rd", "2026-11-23"),  # no tense: the nearest
    ("I need to see the dentist on the 23rd.", "2026-12-23"),  # "need" is no past tense (found in review)
])
def test_the_nth_follows_the_tense_of_its_words(text: str, expected: str) -> None:
    """Found by a user asking when things happened: "on the 23rd" said on the 24th of a plan was read as
    the day before, and its fact held from before it was said."""
    assert [s.first.isoformat() for s in resolve(text, date(2026, 11, 24))] == [expected]


@pytest.mark.parametrize("text,expected", [
    ("What did I do in February?", "2026-02-01"),  # asked in December of the past: the February gone by (it was 2027)
    ("We moved in May.", "2026-05-01"),
    ("since March", "2026-03-01"),
    ("We are moving in May.", "2027-05-01"),
    ("What will I do in February?", "2027-02-01"),
    ("in February", "2027-02-01"),  # no tense: the nearest
])
def test_a_month_follows_the_tense_of_its_words(text: str, expected: str) -> None:
    assert [s.first.isoformat() for s in resolve(text, date(2026, 12, 6))] == [expected]


@pytest.mark.parametrize("text,expected", [
    ("What happened on March 3?", "2026-03-03"),  # asked in December of the past (it was 2027: "none stored")
    ("What did I say on 5 May?", "2026-05-05"),
    ("We are meeting on March 3.", "2027-03-03"),
    ("We met on December 20.", "2025-12-20"),
    ("I'm flying out on December 20.", "2026-12-20"),
    ("the party on March 3", "2027-03-03"),  # no tense: the nearest
    ("What happened in the second week of March?", "2026-03-08"),
])
def test_a_month_and_day_without_a_year_follow_the_tense_of_their_words(text: str, expected: str) -> None:
    """Found by a user in Madrid: "What happened on March 3?" asked in December searched March 2027."""
    assert [s.first.isoformat() for s in resolve(text, date(2026, 12, 6))] == [expected]


@pytest.mark.parametrize("text,expected", [
    ("the next date I can get is in November", ["2026-11-01"]),  # said in April: the coming November (it was 2025's)
    ("we can sit it in November", ["2026-11-01"]),
    ("my next exam is in November", ["2026-11-01"]),
    ("in November I went to Madrid", ["2025-11-01"]),  # told in the past: the one gone by
    ("last November", ["2025-11-01"]),
    ("the next day we went hiking in November", ["2025-11-01"]),  # a story's "next day" is no future
    # a verb told in the past is stronger than "can" or "the next" (found in review: each had been the coming month)
    ("I can still remember the trip in November", ["2025-11-01"]),
    ("the next invoice arrived in December", ["2025-12-01"]),
    ("he can barely walk since his fall in December", ["2025-12-01"]),
    # one sentence speaks of one November: the day said with it gives the month its year
    ("the exam is in November — it is now on 13 November", ["2026-11-01", "2026-11-13"]),
    ("bad news, the may exam is full. the next date I can get is in November — the DELE B1 is now on 13 November",
     ["2026-11-01", "2026-11-13"]),
])
def test_a_month_of_what_is_to_come_is_the_next_one(text: str, expected: list[str]) -> None:
    """Found by a Spanish tutor's user: her exam moved from May 22 to November, said on 14 April; "in November" was
    read as the November gone by, and the fact of May 22 came back as the newer."""
    assert [s.first.isoformat() for s in resolve(text, date(2026, 4, 14))] == expected


@pytest.mark.parametrize("text,expected", [
    ("my shift on the 14th of may is changed", ["2026-05-14"]),  # it was the 14th of April: "the 14th" alone
    ("14 may", ["2026-05-14"]),
    ("may 14", ["2026-05-14"]),
    ("the 14th of may", ["2026-05-14"]),
    ("on may 3rd", ["2026-05-03"]),
    ("on 14 may we fly", ["2026-05-14"]),
    ("14th march", ["2026-03-14"]),
    ("march 3", ["2026-03-03"]),
    ("the 2nd of march, 2027", ["2027-03-02"]),
    ("I may go on the 14th", ["2026-04-14"]),  # the modal: the 14th of this month
    ("all 14 may come", []),
    ("we march 3 miles a day", []),
    # found in review: each had been a day of May
    ("up to 3 may join, the rest wait", []),  # "up to" a count, not "to" a date
    ("Children under 12 may", []),  # the text's end is no date's place
    ("may 5 people come?", []),  # a noun after "may 5": the verb
    ("may 2 of us join?", []),
    ("since 4 may we've been here", ["2025-05-04"]),  # "since": the one gone by, not the coming 4 May
    ("since 4 May we've been here", ["2025-05-04"]),
])
def test_may_and_march_in_lower_case_beside_a_day_are_months(text: str, expected: list[str]) -> None:
    """Chat is written in lower case; "may" and "march" are verbs only where a day's number is no date."""
    assert [s.first.isoformat() for s in resolve(text, date(2026, 4, 14))] == expected


def test_a_year_said_once_covers_only_the_dates_joined_to_it() -> None:
    """Found in review: "born on May 3, 1990 and my next appointment is on June 5" gave June 5 of 1990."""
    found = {s.text: s.first.isoformat() for s in resolve("My passport expired on March 3 2019; the renewal is on July 10.", date(2025, 6, 1))}
    assert found["March 3 2019"] == "2019-03-03" and not found["July 10"].startswith("2019")
    assert [s.first.isoformat() for s in resolve("from March 3 to March 9, 2021", date(2025, 6, 1))] == ["2021-03-03", "2021-03-09"]


@pytest.mark.parametrize(("text", "days"), [
    # found in review: the tense of another sentence, or of a verb not the day's, chose one day
    ("The party was great. See you on Friday", ["2023-05-05", "2023-05-12"]),
    ("I was thinking we go on Saturday", ["2023-05-06", "2023-05-13"]),
    ("I had planned to fly on Friday", ["2023-05-05", "2023-05-12"]),
    ("I went to Paris on Friday.", ["2023-05-05"]),
])
def test_a_weekday_takes_the_tense_of_its_own_verb(text: str, days: list[str]) -> None:
    assert [s.first.isoformat() for s in resolve(text, MONDAY)] == days


@pytest.mark.parametrize(("text", "said", "days"), [
    # found by a travel-bot evaluator: a planned, booked or moved-to day was read as gone by
    ("Back from Regensburg. We planned Dad's 70th: party on May 23 at the brewery.", "2026-04-07", ["2026-05-23"]),
    ("I moved the Lisbon flight to Wednesday the 18th.", "2026-03-02", ["2026-03-18"]),
    ("Booked the hotel: 5 nights from the 16th.", "2026-02-20", ["2026-03-16"]),
    ("We moved to Porto on May 3.", "2026-06-10", ["2026-05-03"]),  # moved house: no plan, the day gone by
    ("Birthday yesterday was great. On the 23rd we will fly to Rome.", "2026-04-24", ["2026-04-23", "2026-05-23"]),
    # ... and a weekday told with a past verb after it, or a subject's past verb before it, had both days
    ("I twisted my knee on Sunday.", "2026-01-20", ["2026-01-18"]),
    ("Sintra on Friday was the highlight.", "2026-03-22", ["2026-03-20"]),
    ("On Saturday I took the kids to the museum.", "2026-04-27", ["2026-04-25"]),
    ("On Saturday we will take the kids to the museum.", "2026-04-27", ["2026-05-02"]),
    ("I was thinking we go on Saturday", "2026-04-27", ["2026-04-25", "2026-05-02"]),
    # found by a life-assistant builder: a day changed to, or said as what a thing is "now", had last year's date
    ("Mum's hip surgery got postponed: it's now September 22 instead of September 8.", "2025-07-15",
     ["2025-09-22", "2025-09-08"]),
    ("My flight got changed to August 30.", "2025-07-15", ["2025-08-30"]),
    ("The deadline was rescheduled until October 2.", "2025-07-15", ["2025-10-02"]),
    ("I went to the dentist on July 3, not June 30.", "2025-07-15", ["2025-07-03", "2025-06-30"]),
])
def test_a_day_planned_for_is_to_come_and_a_day_told_in_the_past_is_gone(text: str, said: str, days: list[str]) -> None:
    assert [s.first.isoformat() for s in resolve(text, date.fromisoformat(said))] == days


@pytest.mark.parametrize(("text", "span"), [
    ("What did I do on Valentine's Day?", ("2026-02-14", "2026-02-14")),
    ("We spent Christmas at my parents'.", ("2025-12-25", "2025-12-25")),
    ("New Year's Eve party at Ana's!", ("2025-12-31", "2025-12-31")),  # no tense: the nearest
    ("What did we do at Easter?", ("2026-04-05", "2026-04-05")),  # Easter Sunday 2026
    ("Thanksgiving 2025 was at Tom's", ("2025-11-27", "2025-11-27")),
    ("the trips between January and April", ("2026-01-01", "2026-04-30")),
    ("from November to February 2026", ("2025-11-01", "2026-02-28")),
    ("What was I doing mid-March?", ("2026-03-01", "2026-03-31")),
    # found by a French-speaking architect: "the week of March 17" had been the one day (the 19th's message missed)
    ("What did I say about Fabre during the week of March 17?", ("2026-03-16", "2026-03-22")),
    ("the week of the 17th of March 2025", ("2025-03-17", "2025-03-23")),
    ("the week of 2025-03-19", ("2025-03-17", "2025-03-23")),
])
def test_holidays_month_ranges_and_mid_month(text: str, span: tuple[str, str]) -> None:
    got = resolve(text, date(2026, 5, 1))
    assert got and (got[0].first.isoformat(), got[0].last.isoformat()) == span


@pytest.mark.parametrize(("query", "window"), [
    ("As of April, what was my gym schedule?", ("1000-01-01", "2026-04-30")),
    ("What have I done since March?", ("2026-03-01", "2999-12-31")),
    ("Which trips did I take between January and April?", ("2026-01-01", "2026-04-30")),
    ("Where was I from March 18 to March 21?", ("2026-03-18", "2026-03-21")),
    ("Until March, where did I work?", ("1000-01-01", "2026-03-31")),
    ("the call from Tom on March 18", ("2026-03-18", "2026-03-18")),  # "from" a person: no range
])
def test_a_query_bounded_by_a_month_or_a_range(query: str, window: tuple[str, str]) -> None:
    got = query_window(query, date(2026, 5, 1))
    assert got is not None and (got.first.isoformat(), got.last.isoformat()) == window


def test_a_stretch_far_wider_than_the_window_is_less_near() -> None:
    """Found by a travel-bot evaluator: "Help me keep track of trips this year" met "this weekend" as fully as the
    weekend's own plans, and ranked first for "What are my plans for this weekend?"."""
    weekend = Window(date(2026, 5, 2), date(2026, 5, 3))
    assert weekend.nearness(date(2026, 5, 2), date(2026, 5, 2)) == 1.0
    assert weekend.nearness(date(2026, 1, 1), date(2026, 12, 31)) < 0.1
    assert Window(date(2026, 1, 1), date(2026, 12, 31)).nearness(date(2026, 5, 2), date(2026, 5, 2)) == 1.0


def test_a_message_of_the_asked_time_passes_the_floor(home: Path, store_url: str) -> None:
    """Found by a travel-bot evaluator: the weekend's hike, the one message of "this weekend", shared no word with the
    question and was under the floor's similarity; the floor emptied it away."""
    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder="local"))
    memory.ingest_session("s1", [
        {"role": "user", "content": "Happy new year! Help me keep track of errands and trips this year.",
         "created_at": "2026-01-05T09:00:00Z"},
        {"role": "user", "content": "Haircut yesterday, much better. On Saturday Jonas and I are hiking Herzogstand.",
         "created_at": "2026-04-29T20:00:00Z"},
        {"role": "user", "content": "The dentist said my gums look fine.", "created_at": "2026-02-03T09:00:00Z"},
    ])
    memory.worker().drain()
    hits = memory.search("What are my plans for this weekend?", now="2026-05-01T09:00:00Z").hits
    memory.close()
    assert any("Herzogstand" in h.message.content for h in hits)
    assert not any("dentist" in h.message.content for h in hits)


@pytest.mark.parametrize("text", ["Happy new years everyone!", "what did I do on new years eve?", "valentines plans",
                                  "st patricks day parade", "New Years Day brunch"])
def test_a_holiday_written_without_its_apostrophe_is_read(text: str) -> None:
    """Found in review: "new years" and "valentines" matched the holiday pattern and were no key of the table: a KeyError
    in indexing (the message quarantined), search, the curator and the distiller."""
    spans = resolve(text, date(2026, 5, 1))
    assert len(spans) == 1 and spans[0].grain == "day" and spans[0].kind == "holiday"
