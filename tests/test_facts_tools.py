"""The fact tools through the registry: reads always, writes only when enabled."""

from __future__ import annotations

import json

import pytest

from palimpsest import InvalidInput, Memory, NotFound, Settings, tools
from palimpsest.cli import main


def test_fact_tools_read_write_and_history(memory: Memory) -> None:
    call = lambda name, args, write=True: tools.call(memory, name, args, enable_write=write)
    decision = call("memory_remember", {"text": "the deploy window is Friday 16:00", "kind": "decision"})
    assert decision["action"] == "new"
    fid = decision["fact"]["id"]
    assert decision["target"] is None
    other = call("memory_remember", {"text": "Beta's launch code for project Nightjar is 0451-ZULU."})
    assert other["action"] == "new" and other["target"] is None  # the nearest fact compared is no business of the caller's
    again = call("memory_remember", {"text": "the deploy window is Friday 16:00"})
    assert again["action"] == "confirm" and again["target"]["id"] == fid
    call("memory_fact_retract", {"id": other["fact"]["id"]})
    new = call("memory_fact_supersede", {"id": fid, "text": "the deploy window is Thursday 10:00"})
    now = call("memory_facts", {}, write=False)["facts"]
    assert [f["text"] for f in now] == ["the deploy window is Thursday 10:00"]
    chain = call("memory_fact_history", {"id": new["id"]}, write=False)["facts"]
    assert [f["text"] for f in chain] == ["the deploy window is Friday 16:00", "the deploy window is Thursday 10:00"]
    assert chain[0]["valid_to"] == chain[1]["valid_from"]
    past = call("memory_facts", {"valid_at": chain[0]["valid_from"]}, write=False)["facts"]
    assert [f["text"] for f in past] == ["the deploy window is Friday 16:00"]
    call("memory_fact_retract", {"id": new["id"], "reason": "never agreed"})
    # a correction never agreed never ended what it corrected: Friday holds again
    assert [f["text"] for f in call("memory_facts", {}, write=False)["facts"]] == ["the deploy window is Friday 16:00"]


def test_fact_write_tools_do_not_exist_without_the_flag(memory: Memory) -> None:
    with pytest.raises(NotFound):
        tools.call(memory, "memory_remember", {"text": "x"}, enable_write=False)
    with pytest.raises(Exception, match="fct_nope|no fact"):
        tools.call(memory, "memory_fact_history", {"id": "fct_nope"}, enable_write=False)


def test_facts_by_status_show_what_the_curator_retired(memory: Memory) -> None:
    """`memory_facts` lists what holds; `status` lists what was superseded, retracted, … (or all) —
    a user auditing the curator had only one fact's history to go by."""
    call = lambda name, args, write=True: tools.call(memory, name, args, enable_write=write)
    old = call("memory_remember", {"text": "We host the wiki on Confluence."})["fact"]
    new = call("memory_fact_supersede", {"id": old["id"], "text": "We host the wiki on Notion."})
    gone = call("memory_remember", {"text": "The office plant is a fern."})["fact"]
    call("memory_fact_retract", {"id": gone["id"], "reason": "a cactus"})
    by = lambda status: [f["id"] for f in call("memory_facts", {"status": status}, write=False)["facts"]]
    assert by("superseded") == [old["id"]] and by("retracted") == [gone["id"]] and by("current") == [new["id"]]
    assert by("all") == [gone["id"], new["id"], old["id"]] and by("closed") == []  # the latest change first
    assert [f["status"] for f in call("memory_facts", {"status": "superseded"}, write=False)["facts"]] == ["superseded"]
    # as the store knew them before the supersession: the old one current, the new one not yet recorded
    assert call("memory_facts", {"status": "all", "known_at": old["recorded_at"]}, write=False)["facts"][0]["status"] == "current"
    assert len(call("memory_facts", {"status": "all", "known_at": old["recorded_at"]}, write=False)["facts"]) == 1
    with pytest.raises(InvalidInput):
        call("memory_facts", {"status": "stale"}, write=False)  # not in the schema's enum
    with pytest.raises(InvalidInput, match="give one"):
        memory.facts.query(status="superseded", valid_at=old["recorded_at"])
    with pytest.raises(InvalidInput, match="unknown fact status"):
        memory.facts.query(status="stale")


def test_the_cli_lists_facts_by_status(home, store_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "hash")
    base = ["--home", str(home), "--store", store_url]
    assert main([*base, "facts", "write", "The standup is on Tuesday.", "--json"]) == 0
    old = json.loads(capsys.readouterr().out)["fact"]
    assert main([*base, "facts", "supersede", old["id"], "The standup is on Thursday.", "--json"]) == 0
    capsys.readouterr()
    assert main([*base, "facts", "query", "--status", "superseded", "--json"]) == 0
    assert [f["text"] for f in json.loads(capsys.readouterr().out)] == ["The standup is on Tuesday."]
    assert main([*base, "facts", "query", "--status", "stale"]) == 2
    assert "unknown fact status 'stale'" in capsys.readouterr().err


def test_a_fact_tools_source_naming_no_stored_message_is_refused(memory: Memory) -> None:
    """Found by an MCP client's builder: `memory_remember {"source": "event:evt_nope"}` attested a fact with a message
    nobody could open."""
    with pytest.raises(NotFound):
        tools.call(memory, "memory_remember", {"text": "The office is in Brno.", "source": "event:evt_nope"}, enable_write=True)
    assert memory.facts.query() == []
    said = memory.append("s1", "user", "The office is in Brno.")["id"]
    fact = tools.call(memory, "memory_remember", {"text": "The office is in Brno.", "source": f"event:{said}"}, enable_write=True)
    with pytest.raises(NotFound):
        tools.call(memory, "memory_fact_confirm", {"id": fact.fact.id if hasattr(fact, "fact") else fact["fact"]["id"],
                                                   "source": "evt_00000000000000000000000"}, enable_write=True)
    tools.call(memory, "memory_remember", {"text": "Lunch is at noon.", "source": "person:ana"}, enable_write=True)  # not a message


@pytest.mark.parametrize("text", ["The staging DB password is hunter2-Secret!",
                                  "My GitHub token is ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                                  "The OpenAI key is sk-proj-AbCdEfGhIjKlMnOpQrStUv"])
def test_a_tool_makes_no_fact_of_a_credential(memory: Memory, text: str) -> None:
    """Found by an MCP user: `memory_remember` of a password or key was a fact, first in another session's block (the
    README says a credential is never made a fact recalled into other sessions)."""
    call = lambda name, args: tools.call(memory, name, args, enable_write=True)
    with pytest.raises(InvalidInput, match="credential"):
        call("memory_remember", {"text": text})
    kept = call("memory_remember", {"text": "The staging DB host is db-staging-2."})
    for name in ("memory_fact_supersede", "memory_fact_revise"):
        with pytest.raises(InvalidInput, match="credential"):
            call(name, {"id": kept["fact"]["id"], "text": text})
    assert not [f for f in memory.facts.query(status="all") if "hunter2" in f.text or "ghp_" in f.text or "sk-proj" in f.text]
    assert "hunter2" not in memory.recall(None, "what is the staging DB password?").block


def test_a_remembered_fact_citing_a_message_holds_from_when_it_was_said(memory: Memory) -> None:
    """A support bot wrote each customer's plan with `memory_remember`, citing the message: every plan was dated the day the
    facts were written ("Free", "Pro", "Enterprise" on one day), and the block could not tell which was current."""
    call = lambda name, args: tools.call(memory, name, args, enable_write=True)
    said = memory.append("cus-1", "user", "I'm on the Free plan.", created_at="2026-09-02T09:10:00Z")
    later = memory.append("cus-2", "user", "Since last Monday I'm on the Pro plan.", created_at="2026-10-14T11:00:00Z")
    free = call("memory_remember", {"text": "I am on the Free plan.", "source": f"event:{said['id']}"})["fact"]
    assert free["valid_from"] == "2026-09-02T09:10:00.000000Z" and free["attestations"][0]["at"] == free["valid_from"]
    pro = call("memory_remember", {"text": "I am on the Pro plan since last Monday.", "source": f"event:{later['id']}"})["fact"]
    assert pro["valid_from"] == "2026-10-12T00:00:00.000000Z"  # the day it names
    # a time of its own is kept, and a fact citing no message holds from now
    own = call("memory_remember", {"text": "The office moved to Porto.", "valid_from": "2026-08-01", "source": f"event:{said['id']}"})
    assert own["fact"]["valid_from"].startswith("2026-08-01")
    assert call("memory_remember", {"text": "Our support hours are 9 to 5."})["fact"]["valid_from"] > "2026-10-15"


def test_a_correction_naming_an_id_no_fact_has_is_not_found_on_every_surface(home, store_url: str, capsys: pytest.CaptureFixture[str],
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a new user over HTTP: `memory_remember` of "The acme-pay API rate limit is 300 req/min per key." with
    `corrects: "fct_nonexistent"` answered ok/supersede: the id was read as the text of a fact, and the gate ended the
    nearest. An id no fact has is a mistake to hear of, as any unknown id; nothing is written. Text is still text."""
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
    base = ["--home", str(home), "--store", store_url]
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none", enable_write=True)) as memory:
        old = tools.call(memory, "memory_remember", {"text": "The acme-pay API rate limit is 100 req/min per key."},
                         enable_write=True)["fact"]
        before = [f.id for f in memory.facts.query()]
        with pytest.raises(NotFound, match="fct_nonexistent"):
            tools.call(memory, "memory_remember", {"text": "The acme-pay API rate limit is 300 req/min per key.",
                                                   "corrects": "fct_nonexistent"}, enable_write=True)
        assert [f.id for f in memory.facts.query()] == before
    assert main([*base, "facts", "write", "The acme-pay API rate limit is 300 req/min per key.", "--corrects", "fct_nonexistent"]) == 3
    assert "fct_nonexistent" in capsys.readouterr().err
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none", enable_write=True)) as memory:
        assert [f.id for f in memory.facts.query()] == before
        fixed = tools.call(memory, "memory_remember", {"text": "The acme-pay API rate limit is 300 req/min per key.",
                                                       "corrects": "The acme-pay API rate limit is 100 req/min per key."},
                           enable_write=True)
        assert fixed["action"] == "supersede" and fixed["target"]["id"] == old["id"]


def test_facts_by_entity_are_those_that_name_it(home, store_url: str, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a founder over MCP: `memory_facts(entity="Sequoia")` answered no fact beside seven current ones saying
    "Sequoia" or "sequoia" — facts `memory_remember` and the distiller write mostly list no entities. A fact names the
    entity as a whole word of its text (or of an entity it lists), whatever the case and accents."""
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        call = lambda name, args, write=True: tools.call(memory, name, args, enable_write=write)
        for text in ("We pitch Sequoia on Friday.", "The sequoia partner is Priya.", "Sequoias grow tall.",
                     "José Núñez leads the round."):
            call("memory_remember", {"text": text})
        call("memory_remember", {"text": "The accelerator said yes.", "entities": ["Initialized"]})
        by = lambda entity: [f["text"] for f in call("memory_facts", {"entity": entity}, write=False)["facts"]]
        assert by("SEQUOIA") == ["We pitch Sequoia on Friday.", "The sequoia partner is Priya."]
        assert by("priya") == ["The sequoia partner is Priya."]
        assert by("Jose Nunez") == by("JOSÉ NÚÑEZ") == ["José Núñez leads the round."]
        assert by("Initialized") == ["The accelerator said yes."]
        assert by("Seq") == by("Friday Sequoia") == []
    assert main(["--home", str(home), "--store", store_url, "facts", "query", "--entity", "sequoia", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_an_entity_with_its_capital_is_a_name_not_a_common_word(memory: Memory) -> None:
    """Found in review: `facts.query(entity="Will")` (and "May", "Go") returned "I will go to the gym in may". An entity
    written with its capital is named by a capitalised mention not at a sentence's opening, or by a listed entity."""
    memory.facts.write("I will go to the gym in may")
    memory.facts.write("Our intern is Will, from May to August.")
    memory.facts.write("Go is the language of the proxy.", entities=["Go"])
    by = lambda entity: [f.text for f in memory.facts.query(entity=entity)]
    assert by("Will") == by("May") == ["Our intern is Will, from May to August."]
    assert by("Go") == ["Go is the language of the proxy."]
    assert by("will") == ["I will go to the gym in may", "Our intern is Will, from May to August."]


def test_a_fact_opening_with_a_name_names_it(memory: Memory) -> None:
    """Found by a novelist: `facts query --entity Tobin` missed "Tobin's sister is Wren.", and `--entity Ilse` missed
    "Ilse is now Tobin's sister": a character's facts open with the character's name, and an opening capital had counted
    as no name (for "Will you …", "May I …", which still are none, as a capital before a plural is: review)."""
    for text in ["Tobin's sister is Wren.", "Ilse is now Tobin's sister, not Maren's.", "Will you check the logs?",
                 "May I add a note about this?", "Will this break the build?", "Max retries is 5 for the sync job.",
                 "Bill payments go out on the 1st.", "Will tests pass on CI is unknown."]:
        memory.facts.write(text)
    by = lambda entity: sorted(f.text for f in memory.facts.query(entity=entity))
    assert by("Tobin") == ["Ilse is now Tobin's sister, not Maren's.", "Tobin's sister is Wren."]
    assert by("Ilse") == ["Ilse is now Tobin's sister, not Maren's."]
    assert by("Will") == by("May") == by("Max") == by("Bill") == []


def test_a_correction_citing_a_message_holds_from_when_it_was_said(home, store_url: str, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a founder over MCP: `memory_fact_supersede` citing a message of 5 September gave the new fact `valid_from`
    = the moment of the call, while `memory_remember` citing the same message held from 5 September."""
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        call = lambda name, args: tools.call(memory, name, args, enable_write=True)
        said = memory.append("s1", "user", "We moved the office to Porto.", created_at="2026-09-05T10:00:00Z")["id"]
        old = call("memory_remember", {"text": "The office is in Lisbon.", "valid_from": "2026-01-01"})["fact"]
        new = call("memory_fact_supersede", {"id": old["id"], "text": "The office is in Porto.", "source": f"event:{said}"})
        assert new["valid_from"] == new["attestations"][0]["at"] == "2026-09-05T10:00:00.000000Z"
        assert memory.facts.get(old["id"]).valid_to == new["valid_from"]
        lunch = call("memory_remember", {"text": "The team lunch is on Tuesdays.", "valid_from": "2026-01-01"})["fact"]
    assert main(["--home", str(home), "--store", store_url, "facts", "supersede", lunch["id"], "The team lunch is on Fridays.",
                 "--source", f"event:{said}", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["valid_from"] == "2026-09-05T10:00:00.000000Z"


def test_a_correction_citing_a_message_older_than_the_fact_holds_from_now(memory: Memory) -> None:
    """Found in review: a fact written by hand holds from now; its correction citing a message of 5 September was refused
    ("the correction must start after the fact it supersedes … retract it"). It holds from now, heard then."""
    said = memory.append("s1", "user", "Ana took a job at Meta.", created_at="2026-09-05T10:00:00Z")["id"]
    old = memory.facts.write("Ana works at Google")
    new = memory.facts.supersede(old.id, "Ana works at Meta", source=f"event:{said}")
    assert new.valid_from > old.valid_from and memory.facts.get(old.id).valid_to == new.valid_from
    assert new.attestations[0].at == "2026-09-05T10:00:00.000000Z"
    with pytest.raises(InvalidInput, match="must start after"):  # a time given is never moved
        memory.facts.supersede(new.id, "Ana works at Apple", valid_from="2026-01-01")


def test_a_bounded_search_returns_the_facts_that_held_in_its_window(home, store_url: str, capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a founder over MCP: `memory_search` bounded to 1–3 September returned a fact of 14 October (the bounds
    held the messages, not the facts), and bounds given the wrong way round answered 0 hits, 5 facts and no error."""
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        search = lambda args: tools.call(memory, "memory_search", {"query": "launch", **args}, enable_write=False)
        early = memory.facts.write("The launch is in Lisbon.", valid_from="2026-08-01")
        memory.facts.supersede(early.id, "The launch is in Porto.", valid_from="2026-09-10")
        memory.facts.write("The launch date is fixed.", valid_from="2026-10-14")
        texts = lambda args: sorted(f["text"] for f in search(args)["facts"])
        assert texts({"since": "2026-09-01", "until": "2026-09-03"}) == ["The launch is in Lisbon."]
        assert texts({"since": "2026-09-01", "until": "2026-09-20"}) == ["The launch is in Lisbon.", "The launch is in Porto."]
        assert texts({"since": "2026-10-01"}) == ["The launch date is fixed.", "The launch is in Porto."]
        assert texts({}) == ["The launch date is fixed.", "The launch is in Porto."]
        with pytest.raises(InvalidInput, match="since .* must be before until"):
            search({"since": "2026-09-03", "until": "2026-09-01"})
    assert main(["--home", str(home), "--store", store_url, "search", "launch", "--since", "2026-09-03", "--until", "2026-09-01"]) == 2
    assert "must be before until" in capsys.readouterr().err


def test_a_search_since_a_day_returns_the_facts_that_hold_now(memory: Memory) -> None:
    """Found in review: "Bo lives in Porto" (from 2025) superseded by "Bo lives in Lisbon" (March 2026) came back beside it for
    a search since 1 January 2026 alone: `since` scopes the messages; only a past window (`until`) asks what held in it."""
    porto = memory.facts.write("Bo lives in Porto", valid_from="2025-01-01")
    memory.facts.supersede(porto.id, "Bo lives in Lisbon", valid_from="2026-03-01")
    texts = lambda **bounds: [h.fact.text for h in memory.facts.search("where does Bo live", **bounds)]
    assert texts(since="2026-01-01") == texts() == ["Bo lives in Lisbon"]
    assert sorted(texts(since="2026-01-01", until="2026-04-01")) == ["Bo lives in Lisbon", "Bo lives in Porto"]
