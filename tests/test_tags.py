"""Tags with a review loop, on both backends: rule tags, suggestions and their review, rejected
never proposed again, merges with aliases, the full-width colon, the filter inside the
queries, counts with the same definition, the suggest-tags job, reaping and replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest import Memory, Settings, tools
from palimpsest.errors import InvalidInput, NotFound, WriteDisabled
from palimpsest.records import iso, utcnow
from palimpsest.store.tags_base import TagChange, TagRow
from palimpsest.tags import keyword_tags, parse_tag


def _memory(home: Path, url: str, **overrides: object) -> Memory:
    return Memory(home, url, settings=Settings.load(env={}, embedder="none", distill=False, tool_synth=False, **overrides))


def _other_store(store_url: str, home: Path) -> str:
    if store_url.startswith("sqlite"):
        return f"sqlite:///{home.parent / 'other.db'}"
    from pg import fresh_database_url

    return fresh_database_url()


def test_parse_tag_normalises_and_refuses() -> None:
    assert parse_tag("project：palimpsest") == ("project", "palimpsest")  # full-width colon
    assert parse_tag("  Topic :  retry   caps ") == ("topic", "retry caps")
    assert parse_tag("ｐｒｏｊｅｃｔ:x") == ("project", "x")
    for bad in ("nocolon", ":x", "k:", "k : ", "bad key:x", "k:" + "v" * 201, "k:a\x00b", "k:a\u202eb", 42, None):
        with pytest.raises(InvalidInput):
            parse_tag(bad)


def test_rule_tag_is_accepted_and_filters(memory: Memory) -> None:
    memory.append("s1", "user", "we deploy with kubernetes", settings={"cwd": "/x", "tags": ["project:palimpsest"]})
    memory.append("s2", "user", "kubernetes for another thing")
    [tag] = memory.tags.list(session="s1")
    assert (tag["tag"], tag["state"], tag["origin"]) == ("project:palimpsest", "accepted", "rule")
    assert memory.tags.pending() == []  # rules skip review
    hits = memory.search("kubernetes", tag="project：palimpsest").hits
    assert [h.message.session for h in hits] == ["s1"]
    assert hits[0].session_tags == ["project:palimpsest"]
    assert hits[0].to_dict()["session_tags"] == ["project:palimpsest"]
    assert {h.message.session for h in memory.search("kubernetes").hits} == {"s1", "s2"}
    assert [m.session for m in memory.browse(tag="project:palimpsest")] == ["s1"]
    assert memory.browse(tag="project:nothing") == []
    memory.tags.decide("project:palimpsest", "reject", session="s1")  # a person overrules the rule
    memory.append("s1", "user", "more", settings={"tags": ["project:palimpsest"]})
    assert [t["state"] for t in memory.tags.list(session="s1")] == ["rejected"]


def test_suggest_accept_reject_never_proposed_twice(memory: Memory) -> None:
    memory.append("s1", "user", "the retry cap matches the upstream timeout")
    made = memory.tags.suggest(["topic:retries", "topic:retries", "not a tag", "topic：timeouts"], session="s1")
    assert [t["tag"] for t in made] == ["topic:retries", "topic:timeouts"]
    assert {t["tag"] for t in memory.tags.pending()} == {"topic:retries", "topic:timeouts"}
    vocab = {x["tag"]: x["state"] for x in memory.tags.taxonomy()}
    assert vocab == {"topic:retries": "suggested", "topic:timeouts": "suggested"}  # the vocabulary is reviewed too

    memory.tags.decide("topic:retries", "accept", session="s1")
    memory.tags.decide("topic：timeouts", "reject", session="s1")
    assert memory.tags.pending() == []
    assert {x["tag"]: x["state"] for x in memory.tags.taxonomy()}["topic:retries"] == "accepted"
    assert memory.tags.suggest(["topic:timeouts", "topic:retries"], session="s1") == []  # rejected stays rejected
    assert [t["state"] for t in memory.tags.list(session="s1", tag="topic:timeouts")] == ["rejected"]
    assert memory.tags.session_tags(["s1"]) == {"s1": ["topic:retries"]}

    memory.append("s2", "user", "other")
    memory.tags.taxonomy_decide("topic:timeouts", "reject")
    assert memory.tags.suggest(["topic:timeouts"], session="s2") == []  # a rejected value is never proposed
    with pytest.raises(NotFound):
        memory.tags.decide("topic:unknown", "accept", session="s2")
    with pytest.raises(NotFound):
        memory.tags.add("topic:x", session="no-such-session")


def test_merge_repoints_and_leaves_an_alias(memory: Memory) -> None:
    for s in ("a", "b", "c"):
        memory.append(s, "user", f"cluster work in {s}")
    memory.tags.add("topic:k8s", session="a")
    memory.tags.suggest(["topic:k8s"], session="b")
    memory.tags.add("topic:kubernetes", session="c")
    memory.tags.add("topic:k8s", session="c")  # c holds both: one row survives
    result = memory.tags.merge("topic:k8s", "kubernetes")
    assert (result["from"], result["into"]) == ("topic:k8s", "topic:kubernetes")
    assert memory.tags.resolve("topic:k8s") == ("topic", "kubernetes")
    rows = {(t["target_id"], t["tag"], t["state"]) for t in memory.tags.list()}
    assert rows == {("a", "topic:kubernetes", "accepted"), ("b", "topic:kubernetes", "suggested"), ("c", "topic:kubernetes", "accepted")}
    alias = {x["tag"]: x for x in memory.tags.taxonomy()}["topic:k8s"]
    assert (alias["state"], alias["merged_into"]) == ("merged", "kubernetes")
    assert {m.session for m in memory.browse(tag="topic:k8s")} == {"a", "c"}  # the old name still filters
    assert memory.tags.suggest(["topic:k8s"], session="b") == []  # an alias is its value
    with pytest.raises(InvalidInput):
        memory.tags.merge("topic:kubernetes", "other:kubernetes")
    # found by a panel user: a typo's merge created both values, one merged into the other
    with pytest.raises(NotFound, match="no tag topic:nonexistent"):
        memory.tags.merge("topic:nonexistent", "whatever")
    assert "topic:whatever" not in [x["tag"] for x in memory.tags.taxonomy()]


def test_filter_inside_the_query_and_counts(memory: Memory) -> None:
    """A rare tag is not crowded out by a global top-k: 40 sessions say "deploy", two are tagged.
    (Each session's lines are its own: the same line in two sessions is a near-duplicate, which
    search moves below what says something else — `search/diversity.py`.)"""
    for i in range(40):
        memory.ingest_session(f"s{i:02d}", [{"role": "user", "content": f"deploy the service of team {i}, attempt {j}"} for j in range(3)])
    memory.tags.add("team:payments", session="s07")
    memory.tags.add("team:payments", session="s31")
    hits = memory.search("deploy service", limit=3, tag="team:payments").hits
    assert {h.message.session for h in hits} == {"s07", "s31"}
    assert len(memory.search("deploy", mode="substring", limit=5, tag="team:payments").hits) == 5
    browsed = memory.browse(tag="team:payments", limit=100)
    counts = {c["tag"]: c for c in memory.tags.counts()["tags"]}
    assert counts["team:payments"]["sessions"] == 2
    assert counts["team:payments"]["messages"] == len(browsed) == 6  # the same definition as the filter


def test_summary_tags_carry_to_the_session(memory: Memory) -> None:
    memory.ingest_session("long", [{"role": "user", "content": f"kubernetes rollout step {i} went fine"} for i in range(30)])
    memory.summaries.compact("long", final=True)
    leaf = memory.store.session_summaries("long", 0)[0]
    made = memory.tags.suggest(["topic:rollouts"], summary=leaf.id, source=leaf.id)
    assert made[0]["target_type"] == "summary" and made[0]["session_id"] == "long"
    assert memory.browse(tag="topic:rollouts") == []  # a suggestion does not filter
    memory.tags.decide("topic:rollouts", "accept", summary=leaf.id)
    assert len(memory.browse(tag="topic:rollouts", limit=100)) == 30
    assert memory.tags.suggest(["topic:rollouts"], session="long") == []  # already on the session's summary


def test_an_imported_session_quiet_for_long_is_due_now(home: Path, store_url: str) -> None:
    """Found by a new user importing a year of chat: every session's tag suggestion waited 30 minutes after the import
    (and `jobs run` said they were compactions), though the sessions had been quiet since 2024."""
    m = _memory(home, store_url, tags_quiet_minutes=30.0)
    try:
        m.ingest_session("last-year", [{"role": "user", "content": "the kubernetes node pool is full", "created_at": "2024-05-01T10:00:00Z"}])
        m.ingest_session("today", [{"role": "user", "content": "the billing run failed"}])
        due = {j.payload["session"] for j in m.store.claim_jobs("w", ["suggest-tags"], 10, iso(utcnow()), iso(utcnow()))}
        assert due == {"last-year"}  # the live session still waits for its quiet half hour
    finally:
        m.close()


def test_suggest_tags_job_after_a_leaf_and_when_quiet(home: Path, store_url: str) -> None:
    m = _memory(home, store_url, tags_quiet_minutes=0.0, compact_after=0)
    try:
        m.tags.taxonomy_upsert("topic:kubernetes")
        m.tags.taxonomy_upsert("topic:billing")
        m.ingest_session("quiet", [{"role": "user", "content": "the kubernetes node pool is full"}])
        m.worker(tasks=["suggest-tags"]).drain()
        assert [(t["tag"], t["target_type"]) for t in m.tags.pending()] == [("topic:kubernetes", "session")]

        m.ingest_session("long", [{"role": "user", "content": f"billing invoice run {i} for kubernetes"} for i in range(20)])
        m.summaries.compact("long", final=True)
        m.worker(tasks=["suggest-tags"]).drain()
        leaf = m.tags.list(session="long")
        assert {t["tag"] for t in leaf} == {"topic:billing", "topic:kubernetes"}
        assert all(t["origin"] == "model" for t in leaf)
        # proposed on the leaf and on its conversation (issue 20, finding 7)
        assert sorted((t["tag"], t["target_type"]) for t in leaf) == [
            ("topic:billing", "session"), ("topic:billing", "summary"), ("topic:kubernetes", "session"), ("topic:kubernetes", "summary")]
        first = m.store.session_summaries("long", 0)[0].id
        assert {t["source"] for t in leaf} == {first}
        m.tags.decide("topic:billing", "reject", session="long")
        m.ingest_session("long", [{"role": "user", "content": f"billing and kubernetes again, part {i}"} for i in range(20)])
        m.summaries.compact("long", final=True)
        m.worker(tasks=["suggest-tags"]).drain()
        assert len(m.store.session_summaries("long", 0)) > 1  # a second leaf was proposed for
        later = [t for t in m.tags.list(session="long") if t["source"] != first]
        assert later == []  # both already on the session (one rejected there): not proposed again
    finally:
        m.close()


def test_keyword_fallback_matches_whole_words() -> None:
    vocab = ["topic:go", "topic:kubernetes", "project:palimpsest", "person:ann"]
    text = "Palimpsest on Kubernetes; kubernetes again. Going home with Anna."
    assert keyword_tags(text, vocab, 5) == ["topic:kubernetes", "project:palimpsest"]
    assert keyword_tags(text, vocab, 1) == ["topic:kubernetes"]


def test_decisions_are_journaled_and_restored(home: Path, store_url: str) -> None:
    m = _memory(home, store_url)
    m.append("s1", "user", "hello", settings={"tags": ["project:p"]})
    m.tags.suggest(["topic:a", "topic:b"], session="s1")
    m.tags.decide("topic:a", "accept", session="s1")
    m.tags.decide("topic:b", "reject", session="s1")
    m.tags.add("topic:c", session="s1")
    m.tags.merge("topic:c", "a")
    before = sorted((t["tag"], t["state"], t["origin"]) for t in m.tags.list())
    taxonomy = m.tags.taxonomy()
    m.close()
    other = _memory(home, _other_store(store_url, home))  # a new, empty store over the same home
    try:
        other.catch_up()
        assert sorted((t["tag"], t["state"], t["origin"]) for t in other.tags.list()) == before
        assert [(x["tag"], x["state"], x["merged_into"]) for x in other.tags.taxonomy()] == \
               [(x["tag"], x["state"], x["merged_into"]) for x in taxonomy]
        assert other.tags.replay() == 0  # each decision applied once
    finally:
        other.close()


def test_export_import_carries_tags(home: Path, tmp_path: Path) -> None:
    from palimpsest.importers import export_memory, import_file

    m = _memory(home, f"sqlite:///{home / 'a.db'}")
    m.append("s1", "user", "hello", settings={"tags": ["project:p"]})
    m.tags.suggest(["topic:a"], session="s1")
    m.tags.decide("topic:a", "reject", session="s1")
    m.tags.add("topic:b", session="s1")
    out = tmp_path / "export.jsonl"
    with out.open("w") as f:
        export_memory(m, f)
    m.close()
    n = _memory(tmp_path / "other", f"sqlite:///{tmp_path / 'other.db'}")
    try:
        import_file(n, out)
        n.catch_up()
        assert sorted((t["tag"], t["state"]) for t in n.tags.list()) == [("project:p", "accepted"), ("topic:a", "rejected"),
                                                                        ("topic:b", "accepted")]
    finally:
        n.close()


def test_rebuild_keeps_tags(memory: Memory) -> None:
    memory.append("s1", "user", "hello", settings={"tags": ["project:p"]})
    memory.tags.add("topic:x", session="s1")
    memory.rebuild()
    assert sorted(t["tag"] for t in memory.tags.list(session="s1")) == ["project:p", "topic:x"]


def test_reap_orphans_only(memory: Memory) -> None:
    memory.append("s1", "user", "hello")
    memory.tags.add("topic:x", session="s1")
    ghost = TagRow("session", "ghost", "ghost", "topic", "x", "accepted", "person", "2026-01-01T00:00:00Z")
    gone = TagRow("summary", "sum_gone", "s1", "topic", "y", "suggested", "model", "2026-01-01T00:00:00Z")
    memory.store.apply_tag_change(TagChange(tags=[ghost, gone]))
    assert memory.tags.reap() == 2
    assert [t["target_id"] for t in memory.tags.list()] == ["s1"]
    assert memory.tags.reap() == 0


def test_tool_is_read_only_unless_writes_are_on(home: Path, store_url: str) -> None:
    m = _memory(home, store_url)
    try:
        m.append("s1", "user", "hello", key="client-1")
        m.tags.suggest(["topic:greeting"], session="s1")
        pending = tools.call(m, "memory_tags", {"action": "pending"}, enable_write=False)
        assert [t["tag"] for t in pending["tags"]] == ["topic:greeting"]
        found = tools.call(m, "memory_tags", {"action": "lookup", "session_key": "client-1"}, enable_write=False)
        assert found["sessions"][0]["session"] == "s1"
        with pytest.raises(WriteDisabled):
            tools.call(m, "memory_tags", {"action": "decide", "session": "s1", "tag": "topic:greeting", "decision": "accept"},
                       enable_write=False)
        with pytest.raises(InvalidInput):
            tools.call(m, "memory_tags", {"action": "lookup"}, enable_write=False)
        hits = tools.call(m, "memory_search", {"query": "hello", "tag": "topic:greeting"}, enable_write=False)
        assert hits["hits"] == []
    finally:
        m.close()
    w = _memory(home, store_url, enable_write=True)
    try:
        tools.call(w, "memory_tags", {"action": "decide", "session": "s1", "tag": "topic:greeting", "decision": "accept"}, enable_write=True)
        browsed = tools.call(w, "memory_browse", {"tag": "topic:greeting"}, enable_write=True)
        assert browsed["messages"][0]["session_tags"] == ["topic:greeting"]
    finally:
        w.close()


def test_suggestions_from_the_llm_enter_the_taxonomy_as_suggested(home: Path) -> None:
    from fakeopenai import FakeOpenAI, Reply

    answer = {"tags": [{"tag": "topic:kubernetes", "why": "cluster work"}, {"tag": "system：argo", "why": "new"}, {"tag": "bad"}]}
    with FakeOpenAI(responder=lambda body: Reply.json(answer)) as fake:
        m = _memory(home, f"sqlite:///{home / 'p.db'}", llm_url=fake.url, llm_model="m", llm_backoff="0",
                    llm_structured="json_schema", tags_quiet_minutes=0.0)
        try:
            m.tags.taxonomy_upsert("topic:kubernetes")
            m.ingest_session("s1", [{"role": "user", "content": "argo rollouts on the cluster"}])
            m.worker(tasks=["suggest-tags"]).drain()
            prompt = fake.requests[-1]["messages"][0]["content"]
            assert "topic:kubernetes" in prompt  # the vocabulary is offered
            assert {t["tag"] for t in m.tags.pending()} == {"topic:kubernetes", "system:argo"}
            vocab = {x["tag"]: x["state"] for x in m.tags.taxonomy()}
            assert vocab == {"topic:kubernetes": "accepted", "system:argo": "suggested"}
            assert m.stats()["llm"]["suggest-tags"]["calls"] == 1
        finally:
            m.close()


def test_the_cli_filters_search_and_browse_by_tag(home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a new user: `palimpsest search "retry cap" --tag topic:orion` was "unrecognized
    arguments" — the filter the review loop is for existed only in the library and the tools."""
    import json

    from palimpsest.cli import main

    monkeypatch.setenv("PALIMPSEST_URL", "http://127.0.0.1:9")
    with Memory(home, settings=Settings.load(env={}, embedder="none")) as m:
        m.append("s1", "user", "the retry cap for orion", settings={"tags": ["topic:orion"]})
        m.append("s2", "user", "the retry cap for another project")
    for argv in (["search", "retry cap", "--tag", "topic:orion"], ["browse", "--tag", "topic:orion"]):
        assert main(["--home", str(home), *argv, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert {r["session"] for r in out.get("hits", out.get("messages"))} == {"s1"}, (argv, out)


def test_the_tags_tool_offers_its_writes_only_when_writes_are_on() -> None:
    """Found by an MCP client's user: with writes off, memory_tags still offered decide, add and
    merge, which then answered write_disabled; every other write tool is hidden then."""
    from palimpsest import tools

    off = next(t for t in tools.available(False) if t.name == "memory_tags")
    on = next(t for t in tools.available(True) if t.name == "memory_tags")
    assert off.input_schema["properties"]["action"]["enum"] == ["list", "pending", "counts", "lookup", "taxonomy"]
    assert "merge" in on.input_schema["properties"]["action"]["enum"] and "Writing" in on.description
    assert "Writing" not in off.description


def test_a_value_typed_in_other_capitals_is_the_value_known(memory: Memory) -> None:
    """Found by a writer: `tags add "Topic: Novel"` made topic:Novel beside topic:novel, and a suggestion then proposed
    topic:Novel for a session that had topic:novel accepted."""
    memory.append("d1", "user", "Chapter three of the novel is done.")
    memory.append("d2", "user", "The novel's ending is settled.")
    memory.tags.add("topic:novel", session="d1")
    assert memory.tags.add("Topic: Novel", session="d2")["tag"] == "topic:novel"
    assert memory.tags.suggest(["topic:Novel"], session="d1") == []  # it has it already
    assert [x["tag"] for x in memory.tags.taxonomy()] == ["topic:novel"]
    assert memory.tags.add("topic:Rust", session="d1")["tag"] == "topic:Rust"  # a value new to the memory keeps its capitals


def test_an_identitys_value_in_other_capitals_is_another_identity(memory: Memory) -> None:
    """Found by a support-bot builder: customer ids cus_Q8dK2x and cus_q8dk2X became one customer, and one's PIN showed
    in the other's recall."""
    memory.append("cs-1", "user", "My account PIN is 2468.")
    memory.append("cs-2", "user", "My account PIN is 1357.")
    assert memory.tags.add("user:cus_Q8dK2x", session="cs-1")["tag"] == "user:cus_Q8dK2x"
    assert memory.tags.add("user:cus_q8dk2X", session="cs-2")["tag"] == "user:cus_q8dk2X"
    assert memory.tags.add("user:Alice", session="cs-1")["tag"] == "user:Alice"
    assert memory.tags.add("user:alice", session="cs-2")["tag"] == "user:alice"  # who is who is the application's to say
    assert memory.tags.add("project:Apollo", session="cs-1")["tag"] == "project:Apollo"
    assert memory.tags.add("project:apollo", session="cs-2")["tag"] == "project:apollo"
    assert memory.tags.add("ticket:AB12", session="cs-1")["tag"] == "ticket:AB12"
    assert memory.tags.add("ticket:ab12", session="cs-2")["tag"] == "ticket:ab12"  # a value with a digit is an id
    hits = memory.search("account PIN", tag="user:cus_Q8dK2x").hits
    assert [h.message.session for h in hits] == ["cs-1"]
    block = memory.recall("cs-9", "what is my PIN?", tag="user:cus_q8dk2X").block
    assert "is 1357" in block and "is 2468" not in block  # (the words: an id may hold the digits)


def test_merging_an_unknown_value_names_a_command_that_lists_the_values(memory: Memory, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by a reader of the docs: the error named `palimpsest tags taxonomy topic`, which argparse refuses."""
    import re as _re
    import shlex

    from palimpsest.cli import main

    memory.append("s1", "user", "Our cluster runs on Kubernetes.")
    memory.tags.add("topic:kubernetes", session="s1")
    with pytest.raises(NotFound) as caught:
        memory.tags.merge("topic:k8s", "kubernetes")
    command = _re.search(r"`palimpsest ([^`]+)`", str(caught.value)).group(1)  # type: ignore[union-attr]
    assert main(["--home", str(memory.home), "--store", memory.settings.store, *shlex.split(command), "--json"]) == 0
    assert "kubernetes" in capsys.readouterr().out
