"""The transcript tools on every backend: append, ingest, browse, keyword search,
get_full, stats, rebuild and the instant-session sweep (issue 2, "The transcript tools")."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest import InvalidInput, Memory, NotFound
from palimpsest.importers import import_file
from palimpsest.ingest.messages import default_key
from palimpsest.records import Message, iso, parse_time, utcnow


# -- append: content-hash dedupe vs event keys ---------------------------------------
def test_identical_appends_collapse(memory: Memory) -> None:
    first = memory.append("s1", "user", "the deploy is on friday")
    again = memory.append("s1", "user", "the deploy is on friday")
    assert first["stored"] and not first["duplicate"]
    assert again == {**again, "id": first["id"], "stored": False, "duplicate": True}
    assert [m.content for m in memory.browse(session="s1")] == ["the deploy is on friday"]


def test_distinct_event_keys_store_true_repeats(memory: Memory) -> None:
    a = memory.append("s1", "user", "ok", event_key="turn-1")
    b = memory.append("s1", "user", "ok", event_key="turn-2")
    c = memory.append("s1", "user", "ok", event_key="turn-1")
    assert a["id"] != b["id"] and c["id"] == a["id"] and c["duplicate"]
    assert [m.event_key for m in memory.browse(session="s1")] == ["turn-1", "turn-2"]


def test_same_text_from_another_role_is_not_a_duplicate(memory: Memory) -> None:
    memory.append("s1", "user", "yes")
    assert memory.append("s1", "assistant", "yes")["stored"]


def test_tool_call_message_may_have_empty_content(memory: Memory) -> None:
    r = memory.append("s1", "assistant", tool_name="grep", tool_args={"pattern": "x"}, tool_result="no match")
    (m,) = memory.browse(session="s1")
    assert (m.id, m.content, m.tool_name, m.tool_args, m.tool_result) == (r["id"], "", "grep", {"pattern": "x"}, "no match")


def test_created_at_is_preserved(memory: Memory) -> None:
    memory.append("s1", "user", "late", created_at="2024-05-02T10:00:00+02:00")
    memory.append("s1", "user", "early", created_at="2024-05-01T08:00:00Z")
    rows = memory.browse(session="s1")
    assert [(m.content, m.created_at) for m in rows] == [
        ("early", "2024-05-01T08:00:00.000000Z"), ("late", "2024-05-02T08:00:00.000000Z"),
    ]


# -- ingest: ordinal keys ----------------------------------------------------------
TRANSCRIPT = [
    {"role": "user", "content": "ok", "created_at": "2024-01-01T00:00:00Z"},
    {"role": "assistant", "content": "starting the migration", "created_at": "2024-01-01T00:00:01Z"},
    {"role": "user", "content": "ok", "created_at": "2024-01-01T00:00:02Z"},
]


def test_identical_lines_in_one_transcript_both_ingest(memory: Memory) -> None:
    r = memory.ingest_session("s1", TRANSCRIPT)
    assert (r["stored"], r["duplicates"], len(set(r["ids"]))) == (3, 0, 3)
    assert [m.content for m in memory.browse(session="s1")] == ["ok", "starting the migration", "ok"]


def test_retried_ingest_skips_stored_rows(memory: Memory) -> None:
    first = memory.ingest_session("s1", TRANSCRIPT[:2])
    retry = memory.ingest_session("s1", TRANSCRIPT)
    assert (retry["stored"], retry["duplicates"]) == (1, 2)
    assert retry["ids"][:2] == first["ids"]
    assert len(memory.browse(session="s1")) == 3
    assert memory.ingest_session("s1", TRANSCRIPT)["stored"] == 0


def test_another_days_transcript_with_the_same_first_lines_is_stored(memory: Memory, tmp_path: Any) -> None:
    """Found by an SRE hunting data loss: two days' stand-up logs ingested into one session, each opening "Standup:
    yesterday / today / blockers?" and closing "ok", lost the second day's question and "ok" as duplicates (their keys
    were their positions); a retry of either day still stores nothing."""
    def day(d: str, today: str) -> list[dict[str, Any]]:
        return [{"role": "user", "content": "Standup: yesterday / today / blockers?", "created_at": f"2026-12-0{d}T09:00:00Z"},
                {"role": "assistant", "content": today, "created_at": f"2026-12-0{d}T09:01:00Z"},
                {"role": "user", "content": "ok", "created_at": f"2026-12-0{d}T09:02:00Z"}]
    assert memory.ingest_session("standup", day("1", "Today: review the Postgres upgrade"))["stored"] == 3
    second = memory.ingest_session("standup", day("2", "Today: migrate Kafka"))
    assert (second["stored"], second["duplicates"]) == (3, 0)
    assert [m.content for m in memory.browse(session="standup")].count("ok") == 2
    for d, today in (("1", "Today: review the Postgres upgrade"), ("2", "Today: migrate Kafka")):
        again = memory.ingest_session("standup", day(d, today))
        assert (again["stored"], again["duplicates"]) == (0, 3)
    assert len(memory.browse(session="standup")) == 6
    for d, today in (("1", "Today: review the Postgres upgrade"), ("2", "Today: migrate Kafka"), ("2", "Today: migrate Kafka")):
        path = tmp_path / f"d{d}.jsonl"  # imported one day's file after the other, into one session: both days, once
        path.write_text("".join(json.dumps(m) + "\n" for m in day(d, today)))
        import_file(memory, path, session="standup-imported")
    assert len(memory.browse(session="standup-imported")) == 6


def test_ingest_preserves_created_at_and_session_attributes(memory: Memory) -> None:
    memory.ingest_session("s1", TRANSCRIPT, agent="coder", channel="cli", title="migration", kind="normal")
    assert [m.created_at for m in memory.browse(session="s1")] == [
        "2024-01-01T00:00:00.000000Z", "2024-01-01T00:00:01.000000Z", "2024-01-01T00:00:02.000000Z",
    ]
    (s,) = memory.sessions()
    assert (s.id, s.agent, s.channel, s.title, s.kind) == ("s1", "coder", "cli", "migration", "normal")
    assert (s.created_at, s.updated_at) == ("2024-01-01T00:00:00.000000Z", "2024-01-01T00:00:02.000000Z")


def test_ingest_validates_everything_before_storing_anything(memory: Memory) -> None:
    with pytest.raises(InvalidInput, match="message 2: role is required"):
        memory.ingest_session("s1", [TRANSCRIPT[0], TRANSCRIPT[1], {"content": "no role"}])
    assert memory.browse() == [] and memory.journal.sessions() == []


def test_ids_are_monotonic_in_journal_order(memory: Memory) -> None:
    ids = memory.ingest_session("s1", [{"role": "user", "content": f"m{i}"} for i in range(50)])["ids"]
    ids.append(memory.append("s1", "user", "last")["id"])
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert [e.id for e in memory.journal.read("s1") if e.type == "message"] == ids


# -- browse --------------------------------------------------------------------------
def _seed_browse(memory: Memory) -> None:
    for i in range(7):
        memory.append("a", "user" if i % 2 else "assistant", f"alpha {i}", created_at=f"2024-03-0{i + 1}T12:00:00Z", agent="coder")
    for i in range(3):
        memory.append("b", "user", f"beta {i}", created_at=f"2024-03-0{i + 1}T13:00:00Z", agent="writer", channel="slack")


def test_browse_is_chronological_across_sessions(memory: Memory) -> None:
    _seed_browse(memory)
    rows = memory.browse(limit=100)
    assert [m.created_at for m in rows] == sorted(m.created_at for m in rows)
    assert [m.content for m in rows[:4]] == ["alpha 0", "beta 0", "alpha 1", "beta 1"]
    newest = memory.browse(limit=3, newest_first=True)
    assert [m.content for m in newest] == ["alpha 6", "alpha 5", "alpha 4"]


def test_browse_pages_without_gaps_or_overlap(memory: Memory) -> None:
    _seed_browse(memory)
    pages = [memory.browse(limit=3, offset=o) for o in (0, 3, 6, 9)]
    assert [len(p) for p in pages] == [3, 3, 3, 1]
    assert [m.id for p in pages for m in p] == [m.id for m in memory.browse(limit=100)]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"session": "b"}, ["beta 0", "beta 1", "beta 2"]),
        ({"agent": "writer"}, ["beta 0", "beta 1", "beta 2"]),
        ({"channel": "slack", "since": "2024-03-02T00:00:00Z"}, ["beta 1", "beta 2"]),
        ({"agent": "coder", "role": "user"}, ["alpha 1", "alpha 3", "alpha 5"]),
        ({"since": "2024-03-06", "until": "2024-03-07T12:00:00Z"}, ["alpha 5"]),
        ({"agent": "nobody"}, []),
    ],
)
def test_browse_filters(memory: Memory, filters: dict[str, Any], expected: list[str]) -> None:
    _seed_browse(memory)
    assert [m.content for m in memory.browse(**filters)] == expected


def test_browse_refuses_bad_paging(memory: Memory) -> None:
    for page in ({"limit": 0}, {"limit": 1001}, {"offset": -1}, {"limit": "5"}):
        with pytest.raises(InvalidInput):
            memory.browse(**page)


# -- keyword search ------------------------------------------------------------------
def test_keyword_search_matches_all_words_first(memory: Memory) -> None:
    memory.append("s1", "user", "the retry cap matches the upstream timeout")
    memory.append("s1", "user", "a retry happened")
    result = memory.search("retry timeout")
    assert result.match == "all" and not any("any word" in n for n in result.notes)
    assert result.hits[0].message.content == "the retry cap matches the upstream timeout"


def test_keyword_search_falls_back_to_any_word_and_says_so(memory: Memory) -> None:
    memory.append("s1", "user", "postgres connection pool exhausted")
    memory.append("s2", "user", "the kettle is broken")
    result = memory.search("why is the postgres pool dropping connections on weekends")
    assert result.match == "any"
    assert any("any word" in note for note in result.notes)
    assert [h.message.content for h in result.hits] == ["postgres connection pool exhausted"]


def test_keyword_search_filters_and_stemming(memory: Memory) -> None:
    memory.append("s1", "user", "we deployed the service", agent="ops")
    memory.append("s2", "user", "deploying tomorrow", agent="dev")
    assert {h.message.session for h in memory.search("deploy").hits} == {"s1", "s2"}
    assert [h.message.session for h in memory.search("deploy", agent="dev").hits] == ["s2"]
    assert memory.search("deploy", role="assistant").hits == []


def test_search_counts_accesses(memory: Memory) -> None:
    memory.append("s1", "user", "zebra crossing")
    memory.search("zebra")
    (m,) = memory.browse()
    assert m.access_count == 1 and m.last_accessed_at is not None


# -- get_full ------------------------------------------------------------------------
def test_get_full_restores_capped_content_and_tool_result(memory: Memory) -> None:
    cap = memory.settings.field_cap
    # an astral-plane emoji (2 UTF-16 units) straddling the cap, and one just inside
    content = "a" * (cap - 1) + "😀" + "tail " * 1000
    result = "😀" * (cap // 2 - 1) + "b" + "😀" + "end"
    r = memory.append("s1", "tool", content, tool_name="read_file", tool_result=result)
    (m,) = memory.browse()
    assert m.truncated
    assert m.content == "a" * (cap - 1)  # never half a surrogate pair
    assert m.tool_result == "😀" * (cap // 2 - 1) + "b"
    assert m.full_content_length == cap - 1 + 2 + 5000
    assert m.full_tool_result_length == len(result.encode("utf-16-le")) // 2
    full = memory.get_full(r["id"])
    assert (full["content"], full["tool_result"]) == (content, result)


def test_short_message_is_not_truncated(memory: Memory) -> None:
    r = memory.append("s1", "user", "x" * memory.settings.field_cap)
    (m,) = memory.browse()
    assert not m.truncated and m.full_content_length is None
    assert memory.get_full(r["id"])["content"] == m.content


def test_get_full_unknown_id(memory: Memory) -> None:
    with pytest.raises(NotFound):
        memory.get_full("evt_00000000000000000000000")
    with pytest.raises(InvalidInput):
        memory.get_full(42)  # type: ignore[arg-type]


# -- stats ---------------------------------------------------------------------------
def test_stats_counts_and_lag(memory: Memory) -> None:
    memory.append("s1", "user", "one", agent="coder", created_at="2024-01-01T00:00:00Z")
    memory.append("s1", "user", "two", created_at="2024-01-02T00:00:00Z")
    s = memory.stats()
    assert (s["messages"], s["sessions"], s["index_lag_bytes"], s["sessions_behind"]) == (2, 1, 0, 0)
    assert (s["oldest"], s["newest"]) == ("2024-01-01T00:00:00.000000Z", "2024-01-02T00:00:00.000000Z")
    assert s["per_agent"]["coder"] == {"sessions": 1, "messages": 2}
    # journaled but not yet indexed (the store was down): stats shows the lag
    memory.journal.append("s2", [{"type": "message", "role": "user", "content": "three", "created_at": "2024-01-03T00:00:00.000000Z", "event_key": "k"}])
    s = memory.stats()
    assert s["sessions_behind"] == 1 and s["index_lag_bytes"] == memory.journal.size("s2") > 0
    assert s["messages"] == 2 and s["journal_sessions"] == 2
    assert memory.catch_up() == 1
    assert memory.stats()["index_lag_bytes"] == 0


# -- rebuild -------------------------------------------------------------------------
def _snapshot(memory: Memory) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    def row(m: Message) -> dict[str, Any]:
        d = m.to_dict()
        del d["access_count"], d["last_accessed_at"]
        return d

    messages = [row(m) for s in ("s1", "s2", "s3") for m in memory.browse(session=s, limit=1000)]
    sessions = sorted((s.to_dict() for s in memory.sessions()), key=lambda d: d["id"])
    return messages, sessions


def test_rebuild_equals_the_original(memory: Memory) -> None:
    memory.ingest_session("s1", TRANSCRIPT, agent="coder", channel="cli", title="t")
    memory.append("s1", "user", "x" * 20000 + "\x00", metadata={"kind": "preference"})
    memory.append("s2", "assistant", tool_name="ls", tool_args=["-l"], tool_result="y" * 17000, settings={"cwd": "/tmp"})
    memory.append("s3", "user", "scratch", kind="instant")
    memory.append("s2", "user", "ok", event_key="k2")
    memory.search("scratch")  # access counts are not journaled: excluded from the comparison
    before = _snapshot(memory)
    assert len(before[0]) == 7
    assert memory.rebuild() == 7
    assert _snapshot(memory) == before


# -- instant sessions ----------------------------------------------------------------
def test_instant_sessions_are_swept_after_idle_hours(memory: Memory) -> None:
    memory.append("scratch", "user", "temporary thought", kind="instant")
    memory.append("keep", "user", "permanent thought")
    later = utcnow() + timedelta(hours=23)
    assert memory.sweep_instant(now=later) == []
    much_later = utcnow() + timedelta(hours=25)
    assert memory.sweep_instant(now=much_later) == ["scratch"]
    assert [m.session for m in memory.browse()] == ["keep"]
    assert memory.search("temporary").hits == []
    # the journal is kept, and the indexer does not bring the rows back
    assert [e.content for e in memory.journal.read("scratch") if e.type == "message"] == ["temporary thought"]
    assert memory.catch_up() == 0 and [m.session for m in memory.browse()] == ["keep"]
    assert memory.sweep_instant(now=much_later) == []


def test_activity_keeps_an_instant_session(memory: Memory) -> None:
    start = utcnow()
    memory.append("scratch", "user", "one", kind="instant", created_at=start.isoformat())
    memory.append("scratch", "user", "two", created_at=(start + timedelta(hours=20)).isoformat())
    assert memory.sweep_instant(now=start + timedelta(hours=30)) == []
    assert memory.sweep_instant(now=start + timedelta(hours=45)) == ["scratch"]



def test_rebuild_does_not_bring_back_swept_instant_sessions(memory: Memory) -> None:
    memory.append("scratch", "user", "temporary", kind="instant", created_at="2024-01-01T00:00:00Z")
    memory.append("keep", "user", "permanent", created_at="2024-01-01T00:00:00Z")
    assert memory.sweep_instant() == ["scratch"]
    memory.rebuild()
    assert [m.session for m in memory.browse()] == ["keep"]


def test_default_keys_never_change() -> None:
    """Stored idempotency keys are content hashes: a retry after an upgrade must make the
    same key, so these values (from the first release) are fixed."""
    assert default_key({"role": "user", "content": 'héllo "world"\n', "tool_name": None, "tool_args": None,
                        "tool_result": None}) == "h:c472755b3dc7a4f597b673a8a16a1e16"
    assert default_key({"role": "tool", "content": "", "tool_name": "grep", "tool_args": {"b": [1.5, 1e16, True, None], "a": "x"},
                        "tool_result": "ok"}, 7) == "i:7:aec1e892e1bcd237cd9bb8d407b9cbca"


@given(st.datetimes(min_value=datetime(1000, 1, 2), max_value=datetime(9998, 12, 31),  # (a day from year 999 in UTC)
                    timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))])))
def test_iso_is_the_one_textual_form_of_a_time(dt: datetime) -> None:
    text = iso(dt)
    assert text == dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # the form stored since the start
    assert parse_time(text) == dt and iso(parse_time(text)) == text


def test_a_literal_scan_reads_long_messages_whole(memory: Memory) -> None:
    """Found by a chat bot's builder: a marker in the middle of a 50 KB pasted log was no hit of
    substring or regex search, with no word of why (the index holds the first `field_cap`); a
    message the index holds cut is now read whole from its journal."""
    cap = memory.settings.field_cap
    memory.append("log", "user", "x " * cap + "UNIQUEMARKER_KAFKA_REBALANCE " + "y " * 100)
    memory.append("chat", "user", "a short line")
    for mode in ("substring", "regex"):
        found = memory.search("UNIQUEMARKER_KAFKA", mode=mode)
        assert len(found.hits) == 1 and not found.notes, (mode, found.notes)
        assert not memory.search("UNIQUEMARKER_KAFKA", mode=mode, session="chat").hits  # none in that scope
    assert not memory.search("short", mode="substring", limit=1).notes  # a full page says nothing


@pytest.mark.parametrize("ahead", ["9999-12-31T23:59:59Z", "3 days"])
def test_a_message_said_in_the_future_is_refused(memory: Memory, ahead: str) -> None:
    """Found by an MCP user: a message "of" 9999-12-31 was stored and topped the sessions list and every temporal score
    for good. A clock a little ahead is allowed."""
    when = ahead if ahead.startswith("9") else (utcnow() + timedelta(days=3)).isoformat()
    with pytest.raises(InvalidInput, match="in the future"):
        memory.append("s1", "user", "hello from the future", created_at=when)
    with pytest.raises(InvalidInput, match="in the future"):
        memory.ingest_session("s2", [{"role": "user", "content": "later", "created_at": when}])
    assert memory.append("s1", "user", "a clock an hour ahead", created_at=(utcnow() + timedelta(hours=1)).isoformat())["stored"]
    assert memory.browse(session="s2") == [] and len(memory.browse(session="s1")) == 1
