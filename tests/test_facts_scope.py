"""A search or recall scoped to an agent, a channel or a tag returns the facts heard there
(found by a chat bot's builder: one user's door code came back in another user's recall)."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest import Memory, Settings


def _setup(memory: Memory) -> tuple[str, str]:
    alice = memory.append("alice-1", "user", "My door code is 4711.", agent="bot", channel="alice")["id"]
    bob = memory.append("bob-1", "user", "My gate code is 1234.", agent="bot", channel="bob")["id"]
    memory.tags.add("user:alice", session="alice-1")
    memory.tags.add("user:bob", session="bob-1")
    memory.facts.write("Alice's door code is 4711.", source=f"event:{alice}")
    memory.facts.write("Bob's gate code is 1234.", source=f"event:{bob}")
    memory.facts.write("The office door code is 9999.")  # by hand: heard in no session
    return alice, bob


def _tagged(memory: Memory, sessions: tuple[tuple[str, str], ...]) -> None:
    """Each (session, tag): a session said "hello" in, tagged."""
    for session, tag in sessions:
        memory.append(session, "user", "hello")
        memory.tags.add(tag, session=session)


def texts(found: object) -> list[str]:
    return sorted(h.fact.text for h in found.facts)  # type: ignore[attr-defined]


def test_facts_follow_the_tag_agent_and_channel_filters(memory: Memory) -> None:
    _setup(memory)
    assert texts(memory.search("code")) == ["Alice's door code is 4711.", "Bob's gate code is 1234.", "The office door code is 9999."]
    assert texts(memory.search("code", tag="user:bob")) == ["Bob's gate code is 1234."]
    assert texts(memory.search("code", channel="alice")) == ["Alice's door code is 4711."]
    assert texts(memory.search("code", agent="bot")) == ["Alice's door code is 4711.", "Bob's gate code is 1234."]
    assert texts(memory.search("code", agent="nobody")) == []
    block = memory.recall("bob-1", "what is the door code?", tag="user:bob").block
    assert "is 4711" not in block and "is 9999" not in block  # (the words: a fact id may hold the digits)


def test_a_fact_heard_in_two_sessions_is_in_both_scopes(memory: Memory) -> None:
    alice, bob = _setup(memory)
    fact = memory.facts.query()[0]
    memory.facts.confirm(fact.id, source=f"event:{bob}")
    assert fact.text in texts(memory.search("code", tag="user:bob"))


def test_a_users_fact_is_found_among_many_users_alike(memory: Memory) -> None:
    """Found in review: the scoped search filtered the best few facts of everyone, so among 60 users
    with "door code" facts only the last one found theirs."""
    for i in range(60):
        said = memory.append(f"u{i}", "user", f"My door code is {1000 + i}.")["id"]
        memory.tags.add(f"user:u{i}", session=f"u{i}")
        memory.facts.write(f"User {i}'s door code is {1000 + i}.", source=f"event:{said}")
    for i in (0, 30, 59):
        assert texts(memory.search("door code", tag=f"user:u{i}", limit=5)) == [f"User {i}'s door code is {1000 + i}."]


def _heard(memory: Memory, session: str, text: str, **attrs: str) -> str:
    said = memory.append(session, "user", text, **attrs)["id"]
    return memory.facts.curator.write({"text": text, "source": f"event:{said}"}).action


def _current(memory: Memory) -> list[str]:
    return sorted(f.text for f in memory.facts.query())


def test_one_users_statement_never_supersedes_anothers(memory: Memory) -> None:
    """Found trying a chat bot with two users: Bob's "My door code is 1234." retired Alice's
    "My door code is 4711." (the curator compared every open fact of the vault)."""
    assert _heard(memory, "alice-1", "My door code is 4711.", agent="bot", channel="alice") == "new"
    assert _heard(memory, "bob-1", "My door code is 1234.", agent="bot", channel="bob") == "new"
    assert _current(memory) == ["My door code is 1234.", "My door code is 4711."]
    assert _heard(memory, "alice-2", "My door code is 5555.", agent="bot", channel="alice") == "supersede"
    assert _current(memory) == ["My door code is 1234.", "My door code is 5555."]


def test_users_and_projects_told_apart_by_tags(memory: Memory) -> None:
    _tagged(memory, (("a", "user:alice"), ("b", "user:bob"), ("x", "project:api"), ("y", "project:web")))
    assert _heard(memory, "a", "My door code is 4711.") == "new"
    assert _heard(memory, "b", "My door code is 1234.") == "new"
    assert _heard(memory, "x", "The CI system is Jenkins 2.") == "new"
    assert _heard(memory, "y", "The CI system is Jenkins 3.") == "new"
    assert len(_current(memory)) == 4
    assert _heard(memory, "x", "The CI system is Jenkins 4.") == "supersede"
    assert "The CI system is Jenkins 3." in _current(memory) and "The CI system is Jenkins 2." not in _current(memory)


def test_a_persons_own_statement_is_theirs_in_every_repository(memory: Memory) -> None:
    """Found in review: with `project:` separating owners, "I live in Lisbon now." said in repository web
    left "I live in Berlin." said in repository api current; a project's facts stay apart, a person's do not."""
    _tagged(memory, (("x", "project:api"), ("y", "project:web")))
    assert _heard(memory, "x", "My editor is Vim 8.") == "new"
    assert _heard(memory, "y", "My editor is Vim 9.") == "supersede"
    assert _current(memory) == ["My editor is Vim 9."]


def test_what_no_session_owns_is_compared_as_before(memory: Memory) -> None:
    memory.facts.curator.write("The office door code is 9999.")  # by hand
    assert _heard(memory, "alice-1", "The office door code is 1111.", channel="alice") == "supersede"
    assert _heard(memory, "plain", "The office door code is 2222.") == "supersede"  # a session of no channel
    assert _current(memory) == ["The office door code is 2222."]


def test_a_correction_by_text_finds_only_its_owners_fact(memory: Memory) -> None:
    _heard(memory, "alice-1", "My door code is 4711.", channel="alice")
    _heard(memory, "bob-1", "My door code is 1234.", channel="bob")
    said = memory.append("bob-2", "user", "Correction: my door code is 8080.", channel="bob")["id"]
    d = memory.facts.curator.write({"text": "My door code is 8080.", "corrects": "My door code is 4711.", "source": f"event:{said}"})
    assert d.action != "supersede" or d.target.text == "My door code is 1234."
    assert "My door code is 4711." in _current(memory)


def test_a_correction_said_by_one_speaker_leaves_anothers_fact(memory: Memory) -> None:
    """Found by a bot's builder: with each user named as the speaker, Alice's "Actually I prefer phone
    calls, not email." retired Bob's "I prefer email." (the correction's probe forgot who said it)."""
    said = memory.append("b1", "user", "I prefer email.", metadata={"speaker": "bob"})["id"]
    memory.facts.curator.write({"text": "I prefer email.", "source": f"event:{said}", "metadata": {"speaker": "bob"}})
    said = memory.append("a1", "user", "Actually I prefer phone calls, not email.", metadata={"speaker": "alice"})["id"]
    memory.facts.curator.write({"text": "I prefer phone calls, not email.", "corrects": "I prefer email.",
                                "source": f"event:{said}", "metadata": {"speaker": "alice"}})
    assert _current(memory) == ["I prefer email.", "I prefer phone calls, not email."]


def test_a_retired_fact_the_query_matches_brings_the_correction_that_replaced_it(memory: Memory) -> None:
    """Found by a bot's builder: after "I moved to Lisbon." superseded "I live in Berlin.", recall for "where
    do I live?" showed "Noted." (or, before distillation, the old message) and not Lisbon: the query's words
    are the retired fact's, and the correction shares none of them."""
    berlin = memory.facts.write("I live in Berlin.", valid_from="2026-01-05T10:00:00Z")
    lisbon = memory.facts.supersede(berlin.id, "I moved to Lisbon.", valid_from="2026-03-01T10:00:00Z")
    found = memory.search("where do I live?").facts
    assert [h.fact.text for h in found] == ["I moved to Lisbon."] and found[0].parts.get("successor_of") == 1.0
    block = memory.recall("a3", "where do I live?").block
    assert lisbon.id in block and "Berlin" not in block
    assert [h.fact.text for h in memory.search("where do I live?", valid_at="2026-02-01T00:00:00Z").facts] == ["I live in Berlin."]


def test_recall_takes_the_agent_and_channel_scopes_and_refuses_an_empty_one(memory: Memory) -> None:
    """Found by a bot's builder: `recall(…, agent="bot")` raised a bare TypeError (only `tag` was taken),
    and `tag=""` (a bot's `user_tag or ""`) meant no scope, every user's memory in one user's block."""
    import pytest

    from palimpsest import InvalidInput

    _setup(memory)
    block = memory.recall("bob-2", "what is my code?", channel="bob").block
    assert "is 1234" in block and "is 4711" not in block  # (the words: a fact id may hold the digits)
    assert "4711" in memory.recall("x", "what is my code?", agent="bot").block
    for empty in ({"tag": ""}, {"channel": " "}, {"agent": ""}):
        with pytest.raises(InvalidInput, match="non-empty"):
            memory.recall("bob-2", "what is my code?", **empty)


def test_a_fact_line_shows_the_day_it_was_said(memory: Memory) -> None:
    """Found by a user asking when things happened: "Yesterday was my last day at Brightline." (said on the
    10th, valid from the 9th) was shown under the 9th, and read as the 8th."""
    said = memory.append("c", "user", "Yesterday was my last day at Brightline.", created_at="2026-10-10T10:00:00Z")["id"]
    memory.facts.curator.write({"text": "Yesterday was my last day at Brightline.", "source": f"event:{said}",
                                "valid_from": "2026-10-09T00:00:00Z", "at": "2026-10-10T10:00:00Z"})
    (line,) = [i for i in memory.recall(None, "When was my last day at Brightline?").items if i.kind == "fact"]
    assert line.date == "2026-10-10" and line.at.startswith("2026-10-09")


def test_facts_are_held_to_what_the_query_asks_of_the_messages(tmp_path: object) -> None:
    """Found by a user asking when things happened: "When did I go to Paris?" (Paris never said) showed the
    Hamburg and Lisbon trips as facts, and "What did I tell you yesterday?" the facts holding the word
    "yesterday" from months before. (The relevance floor reads the shipped model's cosines.)"""
    from palimpsest import Settings

    memory = Memory(tmp_path, settings=Settings.load(env={}, embedder="local"))  # type: ignore[arg-type]
    memory.append("a", "user", "I'm going to Hamburg on the 22nd.", created_at="2026-11-20T10:00:00Z")
    memory.facts.write("I'm going to Hamburg on the 22nd.", valid_from="2026-11-20T10:00:00Z")
    memory.facts.write("Started yesterday at Kinetik.", valid_from="2026-10-12T10:00:00Z")
    memory.append("b", "user", "We're doing a housewarming next Saturday.", created_at="2026-12-05T10:00:00Z")
    memory.worker().drain()
    assert memory.search("When did I go to Paris?", now="2026-12-06T09:00:00Z").facts == []
    assert [h.fact.text for h in memory.search("When did I go to Hamburg?", now="2026-12-06T09:00:00Z").facts] == [
        "I'm going to Hamburg on the 22nd."]
    found = memory.search("What did I tell you yesterday?", now="2026-12-06T09:00:00Z")
    assert found.mode == "period" and found.facts == [] and [h.message.content for h in found.hits] == [
        "We're doing a housewarming next Saturday."]
    memory.close()


def test_a_correction_with_the_text_of_anothers_fact_is_a_fact_of_its_own(memory: Memory) -> None:
    """Found by a team bot's builder: Ben's "Update: my timezone is PST." (a correction quoting itself) confirmed
    Amy's "My timezone is PST." across channels, and Amy's fact came back in Ben's recall."""
    _heard(memory, "s-amy", "My timezone is PST.", channel="c1")
    said = memory.append("s-ben", "user", "Update: my timezone is PST.", channel="c2")["id"]
    d = memory.facts.curator.write({"text": "My timezone is PST.", "corrects": "My timezone is PST.", "source": f"event:{said}"})
    assert d.action != "confirm" and len(memory.facts.query()) == 2


def test_one_message_is_one_hearing(memory: Memory) -> None:
    """Found by a team bot's builder: a fact remembered from a message, then distilled from it, had two
    attestations of that one message and its confidence raised as if heard twice."""
    said = memory.append("s", "user", "The staging DB is on port 5433.")["id"]
    fact = memory.facts.write("The staging DB is on port 5433.", source=f"event:{said}")
    again = memory.facts.confirm(fact.id, source=f"event:{said}")
    assert len(again.attestations) == 1 and again.confidence == fact.confidence
    other = memory.append("s2", "user", "Staging DB: port 5433.")["id"]
    assert len(memory.facts.confirm(fact.id, source=f"event:{other}").attestations) == 2


def test_a_teammate_corrects_a_teams_fact_but_not_a_persons(memory: Memory) -> None:
    """Found by a team bot's builder: with each user named as the speaker, Ben's "The staging DB moved to port
    5434." left Amy's "The staging DB is on port 5433." current (two speakers were never compared)."""
    def heard(who: str, text: str) -> str:
        said = memory.append(f"s-{who}", "user", text, channel="infra", metadata={"speaker": who})["id"]
        return memory.facts.curator.write({"text": text, "source": f"event:{said}", "metadata": {"speaker": who}}).action

    assert heard("amy", "The staging DB is on port 5433.") == "new"
    assert heard("ben", "The staging DB is on port 5434 now.") == "supersede"
    assert heard("amy", "My pager number is 555-0100.") == "new"
    assert heard("ben", "My pager number is 555-0777.") == "new"  # each one's own
    assert _current(memory) == ["My pager number is 555-0100.", "My pager number is 555-0777.", "The staging DB is on port 5434 now."]


def test_a_correction_written_by_hand_stays_in_the_scope_of_what_it_corrects(memory: Memory) -> None:
    """Found by a team bot's builder: `memory_fact_supersede` without a source left the new value out of every
    scoped recall (it was heard in no session), and the old one was retired: the bot's scoped recall had neither."""
    said = memory.append("s-d2", "user", "The release train leaves on Tuesdays.", channel="ops")["id"]
    old = memory.facts.write("The release train leaves on Tuesdays.", source=f"event:{said}")
    memory.facts.supersede(old.id, "The release train leaves on Wednesdays.")
    assert texts(memory.search("release train", channel="ops")) == ["The release train leaves on Wednesdays."]
    assert texts(memory.search("release train", channel="elsewhere")) == []


def test_a_users_correction_finds_their_own_fact_among_many_alike(memory: Memory) -> None:
    """Found by a team moving off Mem0: with 30 users' "I live in Berlin.", a user's "I moved to
    Lisbon now." compared only the ten nearest facts of the vault, all others', and became a
    second current fact for 18 of the 30 (corrections taken in reverse order)."""
    for i in range(30):
        assert _heard(memory, f"u{i}", "I live in Berlin.", channel=f"u{i}") == "new"
    for i in reversed(range(30)):
        assert _heard(memory, f"u{i}", "I moved to Lisbon now.", channel=f"u{i}") == "supersede", i
    assert _current(memory) == ["I moved to Lisbon now."] * 30


def test_a_correction_by_hand_naming_several_users_facts_alike_says_which(memory: Memory) -> None:
    """Found by a team moving off Mem0: `memory_remember` of "I live in Paris now." correcting "I
    live in Berlin." with no source ended the first Berlin fact found — another user's."""
    import pytest

    from palimpsest.errors import InvalidInput

    ids = []
    for user in ("bob", "carol"):
        _heard(memory, f"{user}-1", "I live in Berlin.", channel=user)
        ids.append(next(f.id for f in memory.facts.query() if f.id not in ids))
    with pytest.raises(InvalidInput, match="name one by its id"):
        memory.facts.curator.write({"text": "I live in Paris now.", "corrects": "I live in Berlin."})
    assert _current(memory) == ["I live in Berlin.", "I live in Berlin."]
    said = memory.append("carol-1", "user", "I live in Paris now.", channel="carol")["id"]
    d = memory.facts.curator.write({"text": "I live in Paris now.", "corrects": "I live in Berlin.", "source": f"event:{said}"})
    assert d.action == "supersede" and d.target.id == ids[1]  # with its message, whose it is is known
    assert memory.facts.curator.write({"text": "I live in Rome now.", "corrects": ids[0]}).action == "supersede"  # by id



def test_a_statement_of_no_ones_changes_none_of_several_users_facts(memory: Memory) -> None:
    """Found by a support-bot builder: a visitor's "My account PIN is 8080 now." (a session with no user tag yet) retired
    Alice's PIN, and `memory_remember` of "My account PIN is 7777." with no source retired Bob's."""
    for user, pin in (("alice", "9999"), ("bob", "4711")):
        memory.append(f"{user}-1", "user", "hello")
        memory.tags.add(f"user:{user}", session=f"{user}-1")
        assert _heard(memory, f"{user}-1", f"My account PIN is {pin}.") == "new"
    assert _heard(memory, "anon-77", "My account PIN is 8080 now.") == "new"
    memory.facts.curator.write({"text": "My account PIN is 7777."})  # (news of the visitor's, whose owner none can tell)
    current = _current(memory)
    assert "My account PIN is 9999." in current and "My account PIN is 4711." in current
    assert _heard(memory, "alice-1", "My account PIN is 1111 now.") == "supersede"  # said by the user: theirs, as before


def test_facts_query_on_the_cli_keeps_to_a_users_scope(memory: Memory, capsys: pytest.CaptureFixture[str], home: Path,
                                                       store_url: str) -> None:
    """Found by a support-bot builder: `palimpsest facts query` had no --tag, --agent or --channel (the tool had)."""
    import json

    from palimpsest.cli import main

    for user, pin in (("alice", "9999"), ("bob", "4711")):
        memory.append(f"{user}-1", "user", "hello")
        memory.tags.add(f"user:{user}", session=f"{user}-1")
        _heard(memory, f"{user}-1", f"My account PIN is {pin}.")
    memory.close()
    capsys.readouterr()
    base = ["--home", str(home), "--store", store_url]
    assert main([*base, "facts", "query", "--tag", "user:bob", "--json"]) == 0
    assert [f["text"] for f in json.loads(capsys.readouterr().out)] == ["My account PIN is 4711."]
    assert main([*base, "facts", "query", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_a_statement_of_no_ones_beside_one_users_facts_is_compared_as_before(memory: Memory) -> None:
    memory.append("me-1", "user", "hello")
    memory.tags.add("project:atlas", session="me-1")
    assert _heard(memory, "me-1", "We deploy to Heroku.") == "new"
    assert memory.facts.curator.write({"text": "We deploy to Fly.io now."}).action == "supersede"  # written by hand


def test_a_correction_by_hand_chooses_among_facts_alike_by_its_own_words(memory: Memory) -> None:
    """Found in review: "My sister lives in Paris now." correcting "lives in Berlin" of one user's
    "My sister …" and "My brother lives in Berlin." was refused as naming two facts alike."""
    memory.facts.curator.write({"text": "My sister lives in Berlin."})
    memory.facts.curator.write({"text": "My brother lives in Berlin."})
    d = memory.facts.curator.write({"text": "My sister lives in Paris now.", "corrects": "lives in Berlin"})
    assert d.action == "supersede" and d.target.text == "My sister lives in Berlin."
    assert _current(memory) == ["My brother lives in Berlin.", "My sister lives in Paris now."]


def test_a_users_facts_are_listed_apart_from_anothers(memory: Memory) -> None:
    """Found by a team moving off Mem0: `memory_facts` took no scope, so one user's facts could not
    be listed (Mem0's get_all(user_id))."""
    from palimpsest import tools

    _setup(memory)
    listed = lambda **scope: sorted(f["text"] for f in tools.call(memory, "memory_facts", scope, enable_write=False)["facts"])
    assert listed(tag="user:bob") == ["Bob's gate code is 1234."]
    assert listed(channel="alice") == ["Alice's door code is 4711."]
    assert listed(agent="bot") == ["Alice's door code is 4711.", "Bob's gate code is 1234."]
    assert len(listed()) == 3 and listed(tag="user:nobody") == []


def test_agents_are_one_users_harnesses_unless_the_setting_parts_them(home: Path, store_url: str) -> None:
    """Found by a privacy-minded user: agent beta's "My door code is 1234." ended agent alpha's 4711, and alpha's
    scoped recall then held neither. By default an agent is one of a user's harnesses (a correction said in Codex
    ends what was said in Claude Code); `fact_owners` with `agent` keeps each agent's people apart."""
    with Memory(home / "one", store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        assert _heard(memory, "cc-1", "We deploy to Heroku 1.", agent="claude-code") == "new"
        assert _heard(memory, "codex-1", "We deploy to Heroku 2.", agent="codex") == "supersede"
    with Memory(home / "two", store_url, settings=Settings.load(env={"PALIMPSEST_FACT_OWNERS": "agent,channel,user,project"},
                                                               embedder="none")) as memory:
        assert _heard(memory, "a-door", "My door code is 4711.", agent="alpha") == "new"
        assert _heard(memory, "b-door", "My door code is 1234.", agent="beta") == "new"
        def doors() -> list[str]:  # one store for both homes on PostgreSQL
            return [t for t in _current(memory) if "door" in t]

        assert doors() == ["My door code is 1234.", "My door code is 4711."]
        assert "4711" in memory.recall("a-door", "what is my door code?", agent="alpha").block
        assert _heard(memory, "a-door-2", "My door code is 5555.", agent="alpha") == "supersede"
        assert doors() == ["My door code is 1234.", "My door code is 5555."]


def test_an_unknown_owner_mark_is_refused_clearly() -> None:
    import pytest

    with pytest.raises(ValueError, match="PALIMPSEST_FACT_OWNERS: must be some of agent, channel, user, project"):
        Settings.load(env={"PALIMPSEST_FACT_OWNERS": "agent,tenant"})


def test_a_repositorys_facts_stored_under_its_old_project_name_are_its_own(memory: Memory) -> None:
    """Found in review: projects are named `owner/name` now; a fact heard in a session tagged `project:api` (as earlier
    versions named every project) was another owner's to a statement from `project:acme/api`, the same repository, and
    both stayed current."""
    _tagged(memory, (("old", "project:api"), ("new", "project:acme/api")))
    assert _heard(memory, "old", "The CI system is Jenkins 2.") == "new"
    assert _heard(memory, "new", "The CI system is Jenkins 4.") == "supersede"
    assert _current(memory) == ["The CI system is Jenkins 4."]


def test_a_deep_folders_project_fits_a_tag(memory: Memory, tmp_path: Path) -> None:
    """Found in review: without a remote a project is its folder's path, and past 200 characters (a tag's most) the
    recall hook failed ("tag values are 1–200 characters")."""
    from palimpsest.harness.project import project_of

    deep = tmp_path / ("d" * 90) / ("e" * 90) / ("f" * 90) / "api"
    deep.mkdir(parents=True)
    project = project_of(str(deep))
    assert project is not None and len(project) <= 200 and project.endswith("/api")
    assert memory.recall(None, "how do we deploy?", project=project).block == ""  # (no error: nothing stored)


@pytest.mark.parametrize("tool", ["memory_search", "memory_browse", "memory_facts", "memory_answer", "memory_summaries"])
@pytest.mark.parametrize("scope", ["tag", "agent", "channel"])
def test_an_empty_scope_is_refused_never_read_as_every_users(memory: Memory, tool: str, scope: str) -> None:
    """Found by a travel agency's chat-bot developer: `{"query": "passport number", "tag": ""}` (a bot's `user_tag or ""`)
    answered memory_search, memory_browse, memory_facts and memory_answer with every customer's passports, where
    memory_recall refuses it."""
    from palimpsest import tools
    from palimpsest.errors import InvalidInput

    _setup(memory)
    asked = {} if tool in ("memory_browse", "memory_facts") else {"query": "door code"}
    for empty in ("", "  "):
        with pytest.raises(InvalidInput, match=f"{tool}: {scope}: "):
            tools.call(memory, tool, {**asked, scope: empty}, enable_write=False)
    assert tools.call(memory, tool, asked, enable_write=False)  # and without the scope, as before


def test_an_empty_scope_is_refused_by_the_library_too(memory: Memory) -> None:
    from palimpsest.errors import InvalidInput

    _setup(memory)
    for scope in ("tag", "agent", "channel", "session"):
        with pytest.raises(InvalidInput, match=f"{scope} must be a non-empty string"):
            memory.search("door code", **{scope: ""})
    with pytest.raises(InvalidInput, match="tag must be a non-empty string"):
        memory.browse(tag=" ")


SOFIA = [("2026-09-09T09:00:00Z", "user", "Ciao, Sofia Rossi, Basic plan. Address: Via Roma 12, 10121 Torino."),
         ("2026-09-09T09:01:00Z", "assistant", "Ciao Sofia, noted."),
         ("2026-10-03T09:00:00Z", "user", "I upgraded to Pro, can you check the prorated charge? it says €31.40"),
         ("2026-10-03T09:01:00Z", "assistant", "Correct: €31.40 prorated for the rest of October on Pro."),
         ("2026-11-01T09:00:00Z", "user", "is dark mode coming to the mobile app?"),
         ("2026-11-01T09:01:00Z", "assistant", "Yes, dark mode ships in the 4.2 mobile release.")]


def _customer(memory: Memory, cus: str, said: list[tuple[str, str, str]]) -> dict[str, str]:
    """A support bot's customer: one session a day, channel and tag naming her; the id of each text said."""
    ids = {}
    for at, role, text in said:
        ids[text] = memory.append(f"{cus}-{at[:10]}", role, text, created_at=at, agent="supportbot", channel=cus,
                                  settings={"tags": [f"user:{cus}"]})["id"]
    return ids


def test_a_small_scope_a_question_finds_is_shown_whole(home: Path, store_url: str) -> None:
    """Found by a support bot's builder: "which plan am I on right now?" of a customer's six messages held only her
    retired "Basic plan" — "I upgraded to Pro" shares no word with the question and the local model reads it as far from
    it (cosine 0.10, under the floor's 0.35). A block with room for every turn of the scope holds them all."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        _customer(memory, "cus_srossi", SOFIA)
        _customer(memory, "cus_mokafor", [("2026-09-25T10:12:00Z", "user", "can you downgrade me to Basic? Pro is too much")])
        memory.worker().drain()
        recall = memory.recall("cus_srossi-new", "which plan am I on right now?", 2000, tag="user:cus_srossi")
        assert "I upgraded to Pro" in recall.block and "Basic plan" in recall.block
        assert "downgrade me" not in recall.block  # (another customer's)
        # a question about nothing the scope holds still finds nothing
        assert "Pro" not in memory.recall("cus_srossi-new", "zzqqxx vorpal", 2000, tag="user:cus_srossi").block
        # and a search keeps to what it finds
        assert len(memory.search("which plan am I on right now?", tag="user:cus_srossi").hits) == 2


def test_a_small_home_recalled_with_no_scope_keeps_to_what_the_question_finds(home: Path, store_url: str) -> None:
    """Found in review: with no scope given, the scope is the whole store, and a small home's "what is my cat's name?"
    had shown every message it held, a therapist's words about anxiety too."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        memory.append("a", "user", "My cat is called Miso.")
        memory.append("a", "assistant", "Nice name!")
        memory.append("b", "user", "My therapist says my anxiety is getting worse.")
        memory.append("c", "user", "The deploy pipeline uses GitHub Actions.")
        memory.worker().drain()
        block = memory.recall("z", "what is my cat's name?").block
        assert "Miso" in block and "anxiety" not in block and "GitHub" not in block


def test_a_small_scope_whose_hits_said_only_a_retired_fact_is_no_empty_block(home: Path, store_url: str) -> None:
    """Found by a support bot's builder: Aisha's "which plan am I on right now?" block was empty while a search with the
    same scope had two hits — her first message, whose one fact (her old address) a correction retired, and its reply;
    "upgraded to Pro btw", later, was under the floor."""
    said = [("2026-09-05T12:00:00Z", "user", "hi my shipping address is 19 Allen Avenue, Ikeja, Lagos. plan Basic"),
            ("2026-09-05T12:01:00Z", "assistant", "Thanks Aisha, saved 19 Allen Avenue, Ikeja, Lagos."),
            ("2026-10-28T08:00:00Z", "user", "im in Abuja now. ship to 12 Aminu Kano Crescent, Wuse 2, Abuja from now"),
            ("2026-10-28T08:01:00Z", "assistant", "Updated: 12 Aminu Kano Crescent, Wuse 2, Abuja."),
            ("2026-11-14T09:00:00Z", "user", "upgraded to Pro btw"),
            ("2026-11-14T09:01:00Z", "assistant", "Noted, you're on Pro.")]
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        ids = _customer(memory, "cus_abello", said)
        old = memory.facts.write("My shipping address is 19 Allen Avenue, Ikeja, Lagos.", source=f"event:{ids[said[0][2]]}")
        memory.facts.supersede(old.id, "My shipping address is 12 Aminu Kano Crescent, Wuse 2, Abuja.",
                               source=f"event:{ids[said[2][2]]}")
        memory.worker().drain()
        assert memory.search("which plan am I on right now?", tag="user:cus_abello").hits
        block = memory.recall("cus_abello-new", "which plan am I on right now?", 2000, tag="user:cus_abello").block
        assert "upgraded to Pro btw" in block and "19 Allen Avenue" not in block
