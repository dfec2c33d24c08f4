"""Days on the speaker's calendar: "yesterday" said at 20:00 in California on 30 November
is 29 November, though UTC is already on 1 December. A message keeps the UTC offset it was
said at (`metadata.utc_offset`: the one its time was written with, else the writer's zone,
`PALIMPSEST_TIMEZONE` or this machine's), and every reader of "the day it was said" — the
search context, the query's window, the recall block, a distilled fact's valid time — reads
that day. On both backends."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from palimpsest import Memory, Settings
from palimpsest.capture.client import with_offsets
from palimpsest.errors import InvalidInput
from palimpsest.ingest.messages import normalise_message
from palimpsest.records import clock_of, parse_time, said_day, wall_clock
from palimpsest.search.timeframe import query_window

EVENING_IN_CALIFORNIA = "2026-12-01T04:00:00Z"  # 20:00 on 30 November in Los Angeles
LA = "America/Los_Angeles"


def open_memory(home: Path, store_url: str, zone: str) -> Memory:
    return Memory(home, store_url, settings=Settings.load(env={}, embedder="none", llm_url="", timezone=zone))


@pytest.mark.parametrize(("zone", "said", "yesterday"), [
    (LA, "30 November 2026 Monday", "29 November 2026 Sunday"),
    ("UTC", "1 December 2026 Tuesday", "30 November 2026 Monday"),  # the same instant on UTC's calendar
])
def test_yesterday_is_the_speakers(home: Path, store_url: str, zone: str, said: str, yesterday: str) -> None:
    with open_memory(home, store_url, zone) as memory:
        memory.ingest_session("s1", [{"role": "user", "content": "I fixed the deploy bug yesterday", "created_at": EVENING_IN_CALIFORNIA},
                                     {"role": "user", "content": "the deploy is green again", "created_at": "2026-11-10T12:00:00Z"}])
        m = memory.search("deploy bug").hits[0].message
        assert m.created_at == "2026-12-01T04:00:00.000000Z"  # the instant is stored in UTC either way
        assert m.metadata.get("utc_offset") == ("-08:00" if zone == LA else None)
        assert said in m.context and m.context.endswith(yesterday)
        day = "2026-11-30" if zone == LA else "2026-12-01"
        block = memory.recall(None, "the deploy bug", now="2026-12-02T00:00:00Z")
        assert f"{day}" in block.block and "I fixed the deploy bug yesterday" in block.block


def test_a_time_written_with_its_offset_keeps_it(home: Path, store_url: str) -> None:
    with open_memory(home, store_url, LA) as memory:  # the writer's zone does not override what the time says
        memory.ingest_session("s1", [
            {"role": "user", "content": "Berlin: shipped it today", "created_at": "2026-12-01T00:30:00+02:00"},
            {"role": "user", "content": "a wall time, no zone: shipped it today", "created_at": "2026-12-01T00:30:00"},
            {"role": "user", "content": "said in Tokyo: shipped it today", "created_at": "2026-11-30T23:00:00Z", "metadata": {"utc_offset": "+09:00"}},
        ])
        got = {m.content: m for m in memory.browse(limit=10)}
        berlin = got["Berlin: shipped it today"]
        assert berlin.created_at == "2026-11-30T22:30:00.000000Z" and berlin.metadata["utc_offset"] == "+02:00"
        assert berlin.context.endswith("1 December 2026 Tuesday")
        wall = got["a wall time, no zone: shipped it today"]
        assert wall.metadata["utc_offset"] == "+00:00" and wall.context.endswith("1 December 2026 Tuesday")  # the day as written
        tokyo = got["said in Tokyo: shipped it today"]
        assert tokyo.metadata["utc_offset"] == "+09:00" and tokyo.context.endswith("1 December 2026 Tuesday")


def test_summer_time_is_the_offset_of_that_day() -> None:
    la = ZoneInfo(LA)
    assert normalise_message({"role": "user", "content": "x", "created_at": "2026-07-01T04:00:00Z"}, zone=la)["metadata"] == {"utc_offset": "-07:00"}
    assert normalise_message({"role": "user", "content": "x", "created_at": "2026-01-01T04:00:00Z"}, zone=la)["metadata"] == {"utc_offset": "-08:00"}
    kolkata = normalise_message({"role": "user", "content": "x", "created_at": "2026-01-01T20:00:00Z"}, zone=ZoneInfo("Asia/Kolkata"))
    assert kolkata["metadata"] == {"utc_offset": "+05:30"} and said_day(kolkata["created_at"], kolkata["metadata"]) == "2026-01-02"
    # UTC's offset is none: nothing is added, so a memory in UTC stores what it always did;
    # a time written with an offset keeps it whatever the zone
    assert normalise_message({"role": "user", "content": "x", "created_at": "2026-01-01T04:00:00+01:00"})["metadata"] == {"utc_offset": "+01:00"}
    assert Settings.load(env={}).zone is UTC  # this machine's zone, UTC all year under the suite (conftest)
    assert normalise_message({"role": "user", "content": "x", "created_at": "2026-01-01T04:00:00Z"}, zone=ZoneInfo("UTC"))["metadata"] == {}
    # normalised twice (an import checks its lines, then writes them): the same offset
    once = normalise_message({"role": "user", "content": "x", "created_at": "2026-01-01T04:00:00"}, zone=la)
    assert normalise_message(once, zone=la)["metadata"] == once["metadata"] == {"utc_offset": "+00:00"}


@pytest.mark.parametrize("offset", ["+25:00", "-08:99", "banana", 8, None, "8:00", "+08:00\n"])
def test_an_offset_that_is_not_one_is_refused(home: Path, store_url: str, offset: object) -> None:
    with open_memory(home, store_url, LA) as memory:
        with pytest.raises(InvalidInput, match="utc_offset must be a UTC offset"):
            memory.append("s1", "user", "hello", metadata={"utc_offset": offset})
        assert memory.count_messages() == 0


def test_an_unknown_zone_is_a_clear_error(home: Path) -> None:
    with pytest.raises(InvalidInput, match="PALIMPSEST_TIMEZONE: unknown time zone 'Mars/Olympus'"):
        Settings.load(env={"PALIMPSEST_TIMEZONE": "Mars/Olympus"})
    with pytest.raises(InvalidInput, match="unknown time zone"):
        Memory(home, settings=Settings.load(env={}, embedder="none", timezone="Europe/Atlantis"))
    assert Settings.load(env={"PALIMPSEST_TIMEZONE": "Europe/Berlin"}).zone == ZoneInfo("Europe/Berlin")


def test_the_querys_yesterday_is_the_askers() -> None:
    asked = parse_time(EVENING_IN_CALIFORNIA)
    window = query_window("what did I fix yesterday?", clock_of(EVENING_IN_CALIFORNIA, asked, ZoneInfo(LA)))
    assert (window.first.isoformat(), window.last.isoformat()) == ("2026-11-29", "2026-11-29")
    written = "2026-11-30T20:00:00-08:00"  # a `now` written with its offset: that one, whatever the zone
    window = query_window("what did I fix yesterday?", clock_of(written, parse_time(written), ZoneInfo("Asia/Tokyo")))
    assert window.first.isoformat() == "2026-11-29"
    window = query_window("what did I fix yesterday?", clock_of(EVENING_IN_CALIFORNIA, asked, ZoneInfo("UTC")))
    assert window.first.isoformat() == "2026-11-30"


def test_a_distilled_fact_holds_from_the_speakers_yesterday(home: Path, store_url: str) -> None:
    with open_memory(home, store_url, LA) as memory:
        memory.ingest_session("s1", [{"role": "user", "content": "I adopted a cat named Miso yesterday.", "created_at": EVENING_IN_CALIFORNIA},
                                     {"role": "assistant", "content": "Congratulations on Miso!", "created_at": "2026-12-01T04:00:05Z"},
                                     {"role": "user", "content": "Thanks, what should I feed her?", "created_at": "2026-12-01T04:01:00Z"}])
        memory.worker(tasks=["distill"]).drain()
        [fact] = [f for f in memory.facts.query() if "Miso" in f.text]
        assert fact.valid_from == "2026-11-29T08:00:00.000000Z"  # midnight of 29 November in California
        assert fact.metadata.get("utc_offset") == "-08:00"
        assert said_day(fact.valid_from, fact.metadata) == "2026-11-29"
        assert wall_clock(fact.valid_from, fact.metadata).hour == 0


def test_capture_sends_this_machines_offset() -> None:
    events = [{"role": "user", "content": "a", "created_at": EVENING_IN_CALIFORNIA},
              {"role": "user", "content": "b", "created_at": EVENING_IN_CALIFORNIA, "metadata": {"utc_offset": "+01:00"}},
              {"role": "user", "content": "c", "created_at": "not a time"}, "not an event"]
    with_offsets(events, ZoneInfo(LA))
    assert events[0]["metadata"] == {"utc_offset": "-08:00"}
    assert events[1]["metadata"] == {"utc_offset": "+01:00"}  # what the harness said wins
    assert "metadata" not in events[2] and events[3] == "not an event"  # the server refuses those, as before


# -- listings show times on the reader's clock -------------------------------------------
def test_a_listing_time_is_on_the_readers_clock() -> None:
    from palimpsest.records import local_minute

    assert local_minute("2026-12-01T04:00:00.000000Z", ZoneInfo(LA)) == "2026-11-30 20:00"
    assert local_minute("2026-07-01T04:00:00.000000Z", ZoneInfo(LA)) == "2026-06-30 21:00"  # summer time
    assert local_minute("2026-12-01T04:00:00.000000Z", UTC) == "2026-12-01 04:00"
    assert local_minute("not a time <b>", UTC) == "not a time <b>" and local_minute(None, UTC) == local_minute("", UTC) == ""


def test_the_cli_lists_times_in_the_readers_zone_and_json_keeps_utc(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    home = str(tmp_path / "mem")
    env = {**os.environ, "PALIMPSEST_EMBEDDER": "none", "PALIMPSEST_LLM_URL": "", "PALIMPSEST_URL": "http://127.0.0.1:9",
           "PALIMPSEST_TIMEZONE": LA, "COLUMNS": "200"}

    def cli(*argv: str) -> str:
        done = subprocess.run([sys.executable, "-m", "palimpsest", "--home", home, *argv], capture_output=True, text=True,
                              env=env, timeout=60, check=True)
        return done.stdout

    cli("append", "s1", "user", "the deploy is green", "--created-at", EVENING_IN_CALIFORNIA, "--no-derive")
    listed = cli("browse")
    assert "2026-11-30 20:00" in listed and "2026-12-01 04:00" not in listed
    assert "2026-11-30 20:00" in cli("sessions")
    assert json.loads(cli("browse", "--json"))["messages"][0]["created_at"] == "2026-12-01T04:00:00.000000Z"


def test_the_panel_shows_times_on_the_memorys_clock(home: Path) -> None:
    import httpx

    from palimpsest.server.run import ServerThread

    with Memory(home, settings=Settings.load(env={}, embedder="none", llm_url="", timezone="Asia/Tokyo")) as memory:
        memory.append("s1", "user", "the deploy is green", created_at=EVENING_IN_CALIFORNIA)
        with ServerThread(memory) as url:
            page = httpx.get(url + "/panel/sessions/s1", timeout=30).text
    assert "2026-12-01 13:00" in page and 'datetime="2026-12-01T04:00:00.000000Z"' in page
