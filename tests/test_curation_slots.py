"""Facts you can trust (issue 20): no duplicate current facts, corrections that stick
whatever their word overlap, slot-aware curation, bad input decided clearly, and the LLM
for the undecided band — on both backends, through the CLI where a user would type it."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakeopenai import FakeOpenAI, Reply
from palimpsest import Memory, NotFound, Settings
from palimpsest.cli import main
from palimpsest.errors import InvalidInput
from palimpsest.facts import slots
from palimpsest.facts.casing import cased
from palimpsest.facts.curator import compare, judge, tokens


def current(memory: Memory) -> list[str]:
    return sorted(f.text for f in memory.facts.query())


def cli(capsys: pytest.CaptureFixture[str], home: Path, store_url: str, *argv: str) -> dict:
    code = main(["--home", str(home), "--store", store_url, *argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.out + captured.err
    return json.loads(captured.out)  # type: ignore[no-any-return]


# -- finding 1: duplicate current facts ----------------------------------------------
def test_the_same_text_as_a_correction_is_one_current_fact(capsys: pytest.CaptureFixture[str], home: Path, store_url: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
    cli(capsys, home, store_url, "facts", "write", "The CI system is Jenkins.", "--valid-from", "2024-01-01")
    cli(capsys, home, store_url, "facts", "write", "The CI system is GitHub Actions.", "--valid-from", "2024-06-01")
    d = cli(capsys, home, store_url, "facts", "write", "The CI system is GitHub Actions.", "--corrects", "The CI system is Jenkins.")
    assert d["action"] == "confirm"
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        assert current(memory) == ["The CI system is GitHub Actions."]


def test_the_same_text_corrects_an_unrelated_wording_once(memory: Memory) -> None:
    """Where the gate does not link the two (no shared slot), the correction still ends the
    fact it names and confirms the one that says its text."""
    old = memory.facts.curator.write({"text": "Builds are handled by Jenkins.", "valid_from": "2024-01-01"}).fact
    memory.facts.curator.write({"text": "GitHub Actions runs every pipeline.", "valid_from": "2024-06-01"})
    d = memory.facts.curator.write({"text": "GitHub Actions runs every pipeline.", "corrects": old.id})  # type: ignore[union-attr]
    assert d.action == "confirm" and current(memory) == ["GitHub Actions runs every pipeline."]
    assert memory.facts.get(old.id).status in ("superseded", "closed")  # type: ignore[union-attr]


def test_a_turn_with_a_fact_and_a_correction_of_the_same_text(memory: Memory) -> None:
    memory.facts.curator.write({"text": "The CI system is Jenkins.", "valid_from": "2024-01-01"})
    memory.append("s", "user", "We moved CI off Jenkins; it is GitHub Actions now.", created_at="2024-06-01T10:00:00Z")
    output = {"summary": "CI changed", "tasks": [],
              "facts": [{"text": "The CI system is GitHub Actions.", "kind": "fact", "entities": [], "valid_from": None}],
              "corrections": [{"text": "The CI system is GitHub Actions.", "replaces": "The CI system is Jenkins."}]}
    decisions = memory.distiller.curate(output, memory.distiller.turn_messages("s", None, None))
    assert [d["action"] for d in decisions] == ["supersede", "confirm"]
    assert current(memory) == ["The CI system is GitHub Actions."]


def test_a_models_correction_naming_a_fact_it_does_not_speak_of_is_decided_as_a_statement(memory: Memory) -> None:
    """Found with a sloppy small model: it gave the one fact id it was shown for both corrections of a turn, and "… the
    deploy target is Fly.io now, we dropped Heroku." ended the Lisbon correction that had ended "I live in Berlin": the
    memory no longer said where the user lives."""
    berlin = memory.facts.curator.write({"text": "I live in Berlin.", "valid_from": "2025-01-01"}).fact
    memory.facts.curator.write({"text": "We deploy to Heroku.", "valid_from": "2025-01-01"})
    memory.append("s", "user", "Actually I moved to Lisbon now. Also the deploy target is Fly.io now, we dropped Heroku.",
                  created_at="2025-03-01T10:10:00Z")
    output = {"summary": "moved; deploy target", "tasks": [], "facts": [],
              "corrections": [{"text": "I moved to Lisbon now.", "replaces": berlin.id},
                              {"text": "The deploy target is Fly.io now.", "replaces": berlin.id}]}
    memory.distiller.curate(output, memory.distiller.turn_messages("s", None, None))
    now = current(memory)
    assert "I moved to Lisbon now." in now and "I live in Berlin." not in now and "The deploy target is Fly.io now." in now


@pytest.mark.parametrize(("old", "new", "corrects"), [
    # found by a life-assistant bot's builder: the guard had let a correction end what it shares only "any" with, and refused
    # one of the same appointment said in other words (the physio's)
    ("the physio moved my appointment to thursdays from now on, same time 18:30",
     "my physio says i can drop to every other wednesday now. back feels good", True),
    ("any good bouldering gyms around?", "now i need to find a flat in berlin, any tips? budget around 1200 warm", False),
    # ... and texts the English model cannot read are any two 0.4 apart: their words decide (a review's)
    ("猫の名前はソラです。", "リリースを2027年6月に延期する。", False),
    ("Я живу в Москве.", "Релиз перенесли на июнь.", False),
])
def test_a_models_correction_ends_what_it_speaks_of(memory: Memory, old: str, new: str, corrects: bool) -> None:
    facts = _with_the_local_model(memory)
    fact = facts.curator.write({"text": old, "valid_from": "2026-04-20T12:10:00Z"}).fact
    facts.curator.write({"text": new, "corrects": fact.id, "kind": "correction", "valid_from": "2026-11-06T18:45:00Z",
                         "metadata": {"origin": "distill"}})
    assert (old not in current(memory)) is corrects


# -- finding 3: corrections with few shared words --------------------------------------
def test_a_correction_with_few_shared_words_supersedes(capsys: pytest.CaptureFixture[str], home: Path, store_url: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
    cli(capsys, home, store_url, "facts", "write", "My deploy target is Heroku for the API and the workers.", "--valid-from", "2024-01-01")
    d = cli(capsys, home, store_url, "facts", "write", "Correction: my deploy target is Fly.io now.")
    assert d["action"] == "supersede" and d["signals"]["slot"] == "changed"
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        assert current(memory) == ["Correction: my deploy target is Fly.io now."]
        assert memory.facts.search("deploy target")[0].fact.text.startswith("Correction: my deploy target is Fly.io")


def test_a_correction_said_in_a_turn_supersedes(memory: Memory) -> None:
    memory.facts.curator.write({"text": "My deploy target is Heroku for the API.", "valid_from": "2024-01-01"})
    memory.append("s", "user", "Correction: my deploy target is Fly.io now.", created_at="2024-06-01T10:00:00Z")
    memory.distiller.close_turn("s", use_llm=False)
    assert current(memory) == ["My deploy target is Fly.io now."]


# -- slot-aware curation -------------------------------------------------------------------
@pytest.mark.parametrize(("old", "new", "action"), [
    ("We deploy to Heroku.", "We now deploy to Fly.io.", "supersede"),
    ("The project lead is Priya.", "Marco took over as project lead.", "supersede"),
    ("I live in Berlin.", "I moved to Munich.", "supersede"),
    ("We use Slack for team chat.", "We switched from Slack to Discord for team chat.", "supersede"),
    ("The project lead is Priya.", "Priya also manages the hiring pipeline.", "related"),
    ("I live in Lisbon.", "My home is in Lisbon.", "confirm"),
    ("I like tea more than coffee.", "I like coffee more than tea.", "related"),
    ("I live in Berlin.", "Last month I moved to Munich.", "supersede"),  # a time said with a change leaves the slot alone
    ("I went to Paris in May.", "I went to Rome in June.", "related"),  # two trips, not a value replaced
    ("We use Jenkins for CI.", "We went from Jenkins to GitHub Actions for CI.", "supersede"),
    ("My son goes to Lincoln High.", "My son goes to Roosevelt High now.", "supersede"),  # one school at a time
    # the old value said to be gone (fifteenth session: the blind pair sets' changes)
    ("I drive a Honda Civic.", "I sold the Civic; my car is a Tesla Model 3.", "supersede"),
    ("We store sessions in Redis.", "Sessions live in DynamoDB these days, we dropped Redis.", "supersede"),
    ("Our office is in Dublin.", "I left the office early today.", "new"),  # "left" the office: only a name counts
    ("I'm vegetarian.", "I'm no longer vegetarian, I eat fish and chicken again.", "supersede"),  # said in one clause of two
    ("Ana leads QA.", "Marcus took over as QA lead from Ana.", "supersede"),
    ("I use VS Code as my main editor.", "I switched to Neovim as my main editor.", "supersede"),
    ("I prefer tea over coffee.", "Given the choice, I'll always take a cup of tea rather than a coffee.", "new"),  # coffee set aside by both: no change
    ("The main service is written in Go.", "The main service is deployed on Kubernetes.", "related"),  # two things said of it
    ("The backend is hosted on Render.", "The backend is now hosted on Fly.io.", "supersede"),
    ("The backend is written in Rust.", "The backend uses Redis for caching.", "related"),
    # found on the LongMemEval haystacks (sixteenth session): chat, not a change of slot
    ("I can swim.", "Now I can focus on my thesis.", "new"),  # a modal is not the verb: "can swim" / "can focus on"
    ("I've had some great meals in Lyon.", "I've had some not-so-great meals in Lyon.", "related"),  # a hyphened "not" denies nothing
    ("I trust the new manager because she listens.", "I trust the new manager, so that nobody has to work late anymore.",
     "related"),  # "anymore" and "nobody" belong to the clause after "so that", not to the statement
    ("The build is not green.", "The build is green now.", "supersede"),  # the statement's own negation still counts
    ("The default branch in our repo is master.", "We renamed the default branch to main.", "supersede"),  # "in our repo": the subject
])
def test_slots_decide_without_an_embedder(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided(memory, old, new) == action


def _decided(memory: Memory, old: str, new: str) -> str:
    """What the curator decides when `new` is said after `old` (the memory's own embedder: none in tests)."""
    memory.facts.curator.write({"text": old, "valid_from": "2024-01-01"})
    return memory.facts.curator.write({"text": new, "valid_from": "2024-06-01"}).action


def _with_the_local_model(memory: Memory) -> Any:
    """The memory's facts, curated with the bundled MiniLM."""
    from palimpsest.embed import get_embedder
    from palimpsest.facts import Facts

    embedder = get_embedder("local")
    return Facts(memory.store, memory.home, embedder=lambda: embedder)


def _decided_with_the_local_model(memory: Memory, old: str, new: str) -> str:
    """What the curator decides when `new` is said after `old`, with the bundled MiniLM."""
    facts = _with_the_local_model(memory)
    facts.curator.write({"text": old, "valid_from": "2024-01-01"})
    return facts.curator.write({"text": new, "valid_from": "2024-06-01"}).action


@pytest.mark.parametrize(("old", "new", "action"), [
    ("We're on Node 18 in production.", "Production runs Node 20.", "supersede"),  # one number swapped, said in other words
    ("I take 20 mg of atorvastatin daily.", "My doctor lowered my atorvastatin to 10 mg a day.", "supersede"),
    ("The team has eight engineers.", "We're eleven engineers on the team.", "supersede"),
    ("My daughter is 12.", "My son is 9.", "related"),  # two numbers of two people: nothing shared but the frame
    ("The project deadline is March 14.", "We have to ship the project by the fourteenth of March.", "related"),  # the same day
])
def test_one_number_swapped_with_the_local_model(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # each holds for a version of its own: both stay current (all three were superseded)
    ("Use the prompt template [INST] {prompt} [/INST] for Llama 2.", "For Llama 3 use <|begin_of_text|> instead.", "related"),
    ("For Llama 2 the context window is 4096 tokens.", "For Llama 3 the context window is 4096 tokens.", "related"),
    ("For Python 3.10 use tomli.", "For Python 3.11 use tomllib instead.", "related"),
    ("On Ubuntu 22.04 install libssl1.1.", "On Ubuntu 24.04 install libssl3 instead.", "related"),
    # one version, a value of it changed; a version that is the value
    ("For Python 3.10 use tomli.", "For Python 3.10 use tomllib instead.", "supersede"),
    ("For Python 3.8 we pin numpy 1.24.", "For Python 3.8 we pin numpy 1.26 now.", "supersede"),
    ("We use Postgres 14 in production.", "We upgraded production to Postgres 16.", "supersede"),
])
def test_what_holds_for_one_version_leaves_another_versions_alone(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # a date said to have moved (found by a new user evaluating the facts layer)
    ("My flight to Tokyo is on October 3.", "The airline moved my flight to Tokyo to October 4.", "supersede"),
    ("The paper deadline is February 15.", "The paper deadline got extended to March 9.", "supersede"),
    ("The kitchen should be finished by July 4.", "The kitchen finish date slipped to July 18.", "supersede"),
    # one time of day said two ways
    ("The standup is at 10:00.", "Standup is at 10 am.", "confirm"),
    ("The standup is at 10:00.", "Standup is at 10 pm.", "supersede"),
    # an exception for one run or one night stands beside what holds
    ("The batch size is 64.", "Just for this debug run I'm using a batch size of 16.", "related"),
    ("Our Tokyo hotel is the Mitsui Garden Ginza.", "Just for the first night we'll stay at an airport hotel in Narita.", "related"),
    # "our team's budget" is ours
    ("Our team's budget for 2025 is $400k.", "Finance cut our 2025 budget to $310k.", "supersede"),
    ("I live in Paris.", "Just for the record, I moved to Berlin.", "supersede"),  # an idiom, no exception for one time
])
def test_found_by_a_new_user_of_the_facts_layer(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    ("I prefer tabs over spaces.", "I prefer spaces now.", "supersede"),  # was merged: "spaces" is in both
    ("I prefer tabs over spaces.", "I prefer tabs rather than spaces.", "confirm"),
    ("I like tea more than coffee.", "I like coffee more than tea.", "related"),
])
def test_a_choice_between_two_things_that_turned_is_a_change(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # two things named by their subjects, each with its own value: both stay current (all five were superseded)
    ("The frontend is React 18.", "The admin panel is React 17.", "related"),
    ("The staging server runs Ubuntu 22.04.", "The production server runs Ubuntu 24.04 now.", "related"),
    ("The cache TTL is 5 minutes.", "The session TTL is 30 minutes.", "related"),
    ("My work laptop runs macOS 14.", "My home laptop runs macOS 13.", "related"),
    ("The API rate limit is 100 requests per minute.", "The API rate limit for paid users is 1000 requests per minute.", "related"),
    ("The backend team is 5 people.", "The frontend team is 3 people.", "related"),
    # one thing, its value changed
    ("The cache TTL is 5 minutes.", "The cache TTL is 10 minutes now.", "supersede"),
    ("The staging server runs Ubuntu 22.04.", "The staging server runs Ubuntu 24.04 now.", "supersede"),
    ("The API rate limit is 100 requests per minute.", "The API rate limit is 200 requests per minute now.", "supersede"),
])
def test_two_things_named_by_their_subjects_keep_their_own_values(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # the subjects name two things, each built with its own version: no change said, both stay current (was superseded)
    ("The Go services are built with Go 1.22.", "The Rust services are built with the 1.78 stable toolchain.", "related"),
    ("The Go services are built with Go 1.22.", "The Go services are built with Go 1.23 now.", "supersede"),
    # a rank names one thing of its kind: "main" and "biggest" say one slot, and its value changed
    ("Our main customer is Acme Logistics.", "Our biggest customer is Northwind Freight.", "supersede"),
])
def test_two_subjects_apart_and_a_rank_that_is_one(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # found by a skeptical evaluator: a change said of another thing retired a fact naming its old value
    ("I work remotely on Mondays and Fridays.", "We're moving the shop's stock count from Fridays to Mondays starting next month.",
     "new"),
    ("My sister Ana lives in Porto.", "The team moved its away game from Porto to Braga.", "new"),
    ("I use Firefox as my main browser.", "The school lab switched from Firefox to Chrome.", "new"),
    ("Maria is the goalkeeper of the team.", "Class 4B's reading buddy changed from Maria to Tom.", "new"),
    # (related until the forty-first session's pair model, new since: either leaves the fact alone, the point here)
    ("Project Atlas uses Redis for caching.", "Project Borealis dropped Redis.", ("new", "related")),
    ("Class 4B's field trip is on May 14.", "Class 5A's field trip was moved to May 21.", "related"),
    ("The website redesign deadline is June 30.", "The mobile app launch deadline moved to July 15.", "related"),
    ("Our Proxmox host has 64 GB of RAM.", "We upgraded the NAS to 32 GB of RAM.", "related"),
    # ... and found by a life-assistant builder: a count of what one has done "now" is no change
    ("I'll go to RunCity on Saturday.", "The Harriers are great, I've been to three Thursday runs now.", "new"),
    # the change said of the thing itself, or of whatever held the old value, still supersedes
    ("I use Firefox as my main browser.", "I switched from Firefox to Chrome.", "supersede"),
    ("Our CI system is Jenkins.", "We switched the CI from Jenkins to GitHub Actions.", "supersede"),
    ("Project Atlas uses Redis for caching.", "We dropped Redis.", "supersede"),
    ("Class 4B's field trip is on May 14.", "Class 4B's field trip was moved to May 21.", "supersede"),
    # found by a team-chat evaluator: "Let's" is ours, and a thing being dropped is gone
    ("Let's go with Postwise.", "We're dropping Postwise and moving to Mailforge.", "supersede"),
    ("We use Postwise for email.", "We're dropping Postwise and moving to Mailforge.", "supersede"),
    ("Project Atlas uses Redis.", "Project Borealis is dropping Redis.", "related"),
    # ... and a handover of a thing named with no article changes its owner
    ("Priya owns notify-svc.", "Mat owns notify-svc now.", "supersede"),
    ("Priya owns notify-svc.", "Mat owns billing-svc.", "new"),
    # found in review: a change of our own thing, named by a word the fact does not say, still supersedes
    ("My gym is FitLab.", "I switched my membership from FitLab to CrossBox.", "supersede"),
    ("Our database is MySQL.", "We migrated the backend from MySQL to Postgres.", "supersede"),
    ("The team meeting is on Tuesdays.", "We moved the weekly sync from Tuesdays to Thursdays.", "supersede"),
])
def test_a_change_of_another_thing_leaves_a_fact_alone(memory: Memory, old: str, new: str, action: str | tuple[str, ...]) -> None:
    assert _decided_with_the_local_model(memory, old, new) in (action if isinstance(action, tuple) else (action,))


@pytest.mark.parametrize(("old", "new", "action"), [
    # a novelist's series bible: a change of Elira's eyes had retired Mara's ("mara has green eyes" recalled as no longer
    # holding)
    ("mara has green eyes", "Elira's eyes are grey now, not green", ("new", "related")),
    ("My eyes are green.", "Elira's eyes are grey now, not green.", ("new", "related")),
    ("Elira has green eyes.", "Elira's eyes are grey now, not green.", "supersede"),
    ("Her eyes are green.", "Elira's eyes are grey now, not green.", "supersede"),  # whose "her" is, the words do not say
    # a support bot's customers: an address (long, with its numbers) and a plan changed, and both had stayed current
    ("My shipping address is Calle de Alcalá 45, 28014 Madrid.",
     "My shipping address is Carrer de Mallorca 210, 08008 Barcelona.", "supersede"),
    ("My address is 14 Wharf Road, London E1 2AB.", "My address is 3 Cable Street, Manchester M4 5BD.", "supersede"),
    ("I am on the Free plan.", "I am on the Pro plan now.", "supersede"),
    # ... not another address, nor one more committee
    ("My shipping address is Calle de Alcalá 45, 28014 Madrid.",
     "My billing address is Carrer de Mallorca 210, 08008 Barcelona.", ("new", "related")),
    ("I'm on the hiring committee.", "I'm on the review committee now too.", ("new", "related")),
    ("I'm a member of the chess club.", "I'm a member of the book club now.", ("new", "related")),  # found in review
])
def test_whose_thing_changed_and_a_value_with_numbers(memory: Memory, old: str, new: str, action: str | tuple[str, ...]) -> None:
    assert _decided_with_the_local_model(memory, old, new) in (action if isinstance(action, tuple) else (action,))


@pytest.mark.parametrize(("old", "new", "action"), [
    # a rename changes what a thing is called, nothing else said of it ("The billing service is written in Go." was retired
    # by "The billing service was renamed to ledger.", and the rename by the language)
    ("The billing service is written in Go.", "The billing service was renamed to ledger.", "new"),
    ("The billing service was renamed to ledger.", "The billing service is written in Go.", "new"),
    ("The billing service was renamed to ledger.", "We renamed the billing service from ledger to ledger-svc.", "supersede"),
    ("The billing service is called billing-api.", "The billing service was renamed to ledger.", "supersede"),
])
def test_a_rename_is_the_name_of_the_thing(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # a change undone: the value it left is back ("we're reverting to JWT." had left the move to PASETO current and first in
    # recall, found by a platform team's engineer)
    ("We're moving auth from JWT to PASETO (v4.local), pyseto as the lib.", "we're reverting to JWT.", "supersede"),
    ("We switched the CI from Jenkins to GitHub Actions.", "We rolled back to Jenkins.", "supersede"),
    ("We moved the standup from Tuesday to Thursday.", "We went back to Tuesday.", "supersede"),
    # not a change back of this one: another value, or someone else's
    ("We're moving auth from JWT to PASETO.", "we're reverting to Basic auth.", "new"),
    ("We switched the CI from Jenkins to GitHub Actions.", "My sister went back to Jenkins.", "related"),
])
def test_a_change_undone_retires_the_change(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # one person named, then called by their part in the work, the old value said to be replaced — or two people: "the
    # client now wants all notices by email, not registered post." had been no pair with "Ferreira wants all notices by
    # registered post." (found by a law firm's paralegal); only the user knows which, so it is listed for review
    ("Ferreira wants all notices by registered post.", "The client now wants all notices by email, not registered post.",
     "related"),
    ("Ferreira wants all notices by registered post.", "The tenant now wants all notices by email, not registered post.",
     "related"),
    ("Dr. Costa wants the results by fax.", "The patient wants the results by email, not fax.", "related"),
    # ... not another thing of the change, nor a role that says something else of them
    ("My sister Ana lives in Porto.", "The team moved its away game from Porto to Braga.", "related"),
    ("Ferreira wants all notices by registered post.", "The landlord now wants the rent by transfer, not by cheque.", "new"),
])
def test_a_person_called_by_their_role_is_the_one_named(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # chat's way of saying a change (found by a life-assistant bot's builder): "going vegetarian" is being one from then on,
    # and a move said with no "I" is mine (both had stayed current beside the newer diet and city)
    ("I'm going vegetarian starting today.", "I'm vegan now.", "supersede"),
    ("i live in porto.", "moved to berlin this week!!", "supersede"),
    ("I work at Farfetch.", "quit Farfetch last week", "supersede"),
    # ... not where one goes, nor an order, nor a change to come, nor a visit back
    ("i live in porto.", "I'm going home now.", "new"),
    ("I'm vegetarian.", "I'm going vegan from next month.", "related"),
    ("I moved from Porto to Berlin.", "I went back to Porto for Christmas.", "related"),
    ("We deploy to Fly.io.", "Move the standup to Friday.", "new"),
])
def test_a_change_said_as_chat_says_it(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # a list that grew says more than the fact: confirming it had hidden shellfish for good (found by a life-assistant bot's
    # builder); the shorter said after the longer is the fact heard again
    ("I'm allergic to peanuts.", "I'm allergic to peanuts and shellfish.", "supersede"),
    ("Miso is allergic to chicken.", "Miso is allergic to chicken and beef.", "supersede"),
    ("Miso is allergic to chicken.", "Miso is allergic to chicken, beef and lamb.", "supersede"),
    # ... not a value said more narrowly, nor a clause of its own
    ("We deploy to Fly.io.", "We deploy to Fly.io on Tuesdays and Thursdays only.", "related"),
    ("The user works remotely.", "The user works remotely and visits the London office once a quarter.", "related"),
    ("I'm allergic to peanuts and shellfish.", "I'm allergic to peanuts.", "confirm"),
    ("We deploy to Fly.io.", "We deploy to Fly.io now.", "confirm"),
])
def test_a_list_that_grew_is_no_confirmation(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # a dose is a quantity, not a name, and the doctor who changed it is not whose it is ("doctor lowered the sertraline to
    # 75mg" was only related to "I take sertraline 100mg every morning.", found by a life-assistant bot's builder)
    ("I take sertraline 100mg every morning.", "doctor lowered the sertraline to 75mg", "supersede"),
    ("I take sertraline 100mg every morning.", "My doctor lowered my sertraline to 75mg.", "supersede"),
    ("My sister takes sertraline 100mg.", "I take sertraline 75mg.", "related"),
])
def test_a_dose_changed_by_the_doctor(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # found by a new user keeping a parent's care notes: each of these had retired a fact that still held, or kept one that
    # did not
    ("Frank takes atorvastatin 20 mg at night.", "Frank takes amlodipine 5 mg once daily.", "related"),  # two drugs, each its dose
    ("his GP is Dr. Okafor at Riverside Family Practice.", "next GP is aug 5", ("related", "new")),  # the next visit, not who the GP is
    ("lisinopril stays at 10 for now", "she STOPPED the lisinopril", "supersede"),  # the stop ends it
    # the change told with the value the fact already says: never an update of it
    ("Frank takes amlodipine 10 mg once daily.",
     "reminder for the aide sheet: dr raman increased amlodipine from 5 to 10 mg daily back in november", ("confirm", "related", "new")),
    ("Bernadette Okoye starts Sept 1.", "bernadette is off oct 17 (sat), agency sending a sub", "related"),  # a day off, not gone
    ("easy run 6 km, 36 min, felt fine", "easy run 8 km, 53 min, felt fine", "related"),  # two runs logged, each its own
])
def test_a_carers_notes_keep_what_still_holds(memory: Memory, old: str, new: str, action: str | tuple[str, ...]) -> None:
    assert _decided_with_the_local_model(memory, old, new) in (action if isinstance(action, tuple) else (action,))


@pytest.mark.parametrize(("new", "action"), [
    ("We moved error tracking to Rollbar.", "supersede"),  # was new: "for error tracking" read as the value
    ("We use Rollbar for error tracking now.", "supersede"),
    ("We also use Rollbar for error tracking.", "related"),  # one more tool beside it
    ("We use Sentry for crash reports on mobile.", "related"),  # the same tool for another purpose
])
def test_the_tool_used_for_a_purpose_is_the_value(memory: Memory, new: str, action: str) -> None:
    assert slots.parse("We use Sentry for error tracking.").value == ["sentry"]  # type: ignore[union-attr]
    assert _decided_with_the_local_model(memory, "We use Sentry for error tracking.", new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    ("The line length limit is 88.", "The line length limit is 100 for the legacy module.", "related"),  # was superseded
    ("The budget is 5000 euros.", "The budget is 8000 euros for Q3.", "related"),
    ("The line length limit is 88.", "The line length limit is 100 now.", "supersede"),
])
def test_a_number_said_for_something_narrows_what_it_is_a_number_of(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action
    assert slots.parse("I have been a teacher for 20 years.").value[-2:] == ["20", "years"]  # type: ignore[union-attr]  # how long


def test_a_span_of_time_in_one_unit_and_one_name_said_two_ways() -> None:
    from palimpsest.facts.curator import tokens

    assert tokens("two weeks") == tokens("14 days") == ["14d"] and tokens("2 fortnights") == ["28d"]
    assert tokens("after half an hour") == tokens("after 30 minutes") == tokens("after 1800 seconds") == ["after", "1800s"]
    assert tokens("twenty years") == tokens("two decades") == tokens("240 months") == ["240mo"]
    assert tokens("My son is 4 years old.") == ["son", "4", "year", "old"]  # an age, not a span: "is 4", "is four"
    assert tokens("three runs a week") == ["3", "run", "week"]  # a rate, not a span
    assert tokens("Every pull request needs two approvals") == ["every", "pr", "need", "2", "approval"]
    assert tokens("Our continuous integration pipeline") == ["ci", "pipeline"] and tokens("our prod DB") == ["production", "database"]


def test_how_long_so_far_is_no_value_of_the_statement(memory: Memory) -> None:
    # LongMemEval chat: with "6 weeks" one word, the value rule read a number added and disputed the other statement
    class_for = "I've been taking a stand-up comedy class for 6 weeks now, and it's been a blast."
    to_help = "I've been taking a stand-up comedy class to help with my writing."
    assert "number" not in compare(class_for, to_help).differs and "number" not in compare(to_help, class_for).differs
    assert compare("Backups are kept for 90 days.", "Backups are kept for 30 days.").differs == ["number"]  # a span each: values
    assert _decided_with_the_local_model(memory, class_for, to_help) not in ("supersede", "dispute")


def test_a_thing_said_to_be_gone_says_so_in_the_journal(memory: Memory) -> None:
    old = memory.facts.curator.write({"text": "I drive a Honda Civic.", "valid_from": "2024-01-01"}).fact
    d = memory.facts.curator.write({"text": "I sold the Civic; my car is a Tesla Model 3.", "valid_from": "2024-06-01"})
    assert d.action == "supersede" and "gone" in d.reason and memory.facts.get(old.id).status == "superseded"  # type: ignore[union-attr]
    assert current(memory) == ["I sold the Civic; my car is a Tesla Model 3."]


def test_slots_of_chat() -> None:
    assert slots.parse("I can relate.") is None  # a modal and no verb after it: nothing to hold
    assert slots.parse("Now I can focus on my thesis.").attribute == ["can", "focus", "on"]  # type: ignore[union-attr]
    assert "not" not in tokens("some not-so-great meals") and slots.unhedged("a Not-For-Profit") == "a NotForProfit"
    slot = slots.parse("I trust the manager, so that nobody works late anymore.")
    assert slot is not None and not slot.change and not slot.negated
    assert slots.parse("So, last month, I moved to Munich.").holder == "i"  # a discourse word, then the time, then the subject


def test_number_words_read_as_numbers() -> None:
    from palimpsest.facts.curator import tokens

    assert tokens("thirty-two gigs, the fourteenth of March, twenty one") == ["32", "gig", "14", "march", "21"]
    assert slots.retired("I sold the Civic.", "I drive a Honda Civic.") and not slots.retired("I left the office.", "Our office is in Dublin.")
    assert slots.clauses("I'm no longer vegetarian, I eat fish again; it's fine") == ["I'm no longer vegetarian", "I eat fish again", "it's fine"]


def test_one_number_said_two_ways_is_one_number() -> None:
    from palimpsest.facts.curator import tokens

    assert tokens("at 10:00 UTC") == tokens("at 10am UTC") == tokens("at 10 AM UTC") == ["at", "10", "utc"]
    assert tokens("at 02:00") == tokens("at 2am") and tokens("at 2pm") == tokens("at 14:00") == ["at", "14"]
    assert tokens("a budget of 12k") == tokens("a budget of 12,000") and tokens("1.5k") == ["1500"]
    assert tokens("at 10:30") == ["at", "10:30"] and tokens("version 3.11") == ["version", "3.11"]  # not an hour, not thousands


@pytest.mark.parametrize(("old", "new"), [
    # the same hour said two ways read as one number swapped: each was superseded by its own paraphrase
    ("The on-call rotation hands off every Monday at 10:00 UTC.", "On-call handoff happens Mondays at 10 AM UTC."),
    ("Database backups run nightly at 02:00 UTC and are kept for 30 days.",
     "Every night at 2 AM UTC we back up the database, with 30-day retention."),
])
def test_a_time_said_two_ways_is_no_change(memory: Memory, old: str, new: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) != "supersede"


def test_two_happenings_that_share_only_when_both_stay_current(memory: Memory) -> None:
    # LoCoMo conv-26, session 5: the parade was retired by the picnic while "last week" was read as the slot
    memory.facts.curator.write({"text": "Last week I went to an LGBTQ+ pride parade.", "valid_from": "2023-06-29"})
    d = memory.facts.curator.write({"text": "We even had a picnic last week!", "valid_from": "2023-06-29"})
    assert d.action != "revise" and len(memory.facts.query()) == 2
    assert slots.parse("Last week I went to an LGBTQ+ pride parade.").holder == "i"  # the week opens it, the subject follows


def test_slot_parse() -> None:
    s = slots.parse("Marco took over as project lead.")
    assert s is not None and (s.attribute, s.value, s.change) == (["project", "lead"], ["marco"], True)
    s = slots.parse("We've switched from Jenkins to GitHub Actions.")
    assert s is not None and s.old_value == ["jenkins"] and s.value == ["github", "actions"]
    s = slots.parse("Priya also manages the hiring pipeline.")
    assert s is not None and s.additive and s.holder == "priya"
    assert slots.parse("") is None and slots.parse("hmm") is None
    # a later statement of one slot supersedes; an earlier one is outdated, never current beside it
    assert judge(compare("Our office is in Cork.", "Our office is in Dublin."), True) == "supersede"


# -- bad input -------------------------------------------------------------------------------
def test_contradictory_statements_in_one_turn_the_later_wins(memory: Memory) -> None:
    memory.append("s", "user", "I live in Lisbon. Sorry, I live in Porto.", created_at="2024-06-01T10:00:00Z")
    d = memory.distiller.close_turn("s", use_llm=False)
    assert [x["action"] for x in d.decisions] == ["new", "revise"]
    (fact,) = memory.facts.query()
    assert fact.text == "I live in Porto." and fact.valid_from == "2024-06-01T10:00:00.000000Z"  # held from when it was said
    # a letter after its noun is a name (found with a sloppy model's chat: "Building A" and "Building C" were one value)
    memory.append("s", "user", "My office is in Building A. Sorry, my office is in Building C.", created_at="2024-06-02T10:00:00Z")
    d = memory.distiller.close_turn("s", use_llm=False)
    assert [x["action"] for x in d.decisions] == ["new", "revise"] and "My office is in Building C." in current(memory)
    assert "My office is in Building A." not in current(memory)


def test_a_correction_of_a_fact_that_does_not_exist_is_new(memory: Memory) -> None:
    d = memory.facts.curator.write({"text": "The launch is on Thursday.", "corrects": "The launch is on Monday."})
    assert d.action == "new" and current(memory) == ["The launch is on Thursday."]
    # an unknown id of a model's (distilled): the text is decided as any statement, and says so; a caller's typo is
    # NotFound, nothing written (tests/test_facts_tools.py)
    distilled = {"origin": "distill"}
    d = memory.facts.curator.write({"text": "The launch is on Friday.", "corrects": "fct_00000000000000000000000",
                                    "metadata": distilled})
    assert d.action == "supersede" and "is not an open fact" in d.reason and current(memory) == ["The launch is on Friday."]
    # an id no fact has names no text either: a fact whose words hold that string is not the one it corrects
    memory.facts.curator.write({"text": "Ticket fct_fakeff123 tracks the printer."})
    d = memory.facts.curator.write({"text": "Tomasz prefers coffee now.", "corrects": "fct_fakeff123", "metadata": distilled})
    assert d.action == "new" and "Ticket fct_fakeff123 tracks the printer." in current(memory)
    with pytest.raises(NotFound, match="fct_fakeff123"):
        memory.facts.curator.write({"text": "Tomasz prefers tea now.", "corrects": "fct_fakeff123"})
    assert "Tomasz prefers tea now." not in current(memory)


@pytest.mark.parametrize(("stored", "new", "quoted"), [
    ("La hermana de José se llama Zoë.", "José vive ahora en Madrid.", "José vive en Valencia."),
    ("João trabalha no Itaú.", "O João mora agora em Lisboa.", "O João mora no Porto."),
    ("李明在腾讯工作。", "李明现在住在深圳。", "李明住在上海。"),
    ("Hélène's daughter is called Zoë.", "It's Noël who is allergic to peanuts.", "Hélène is allergic to peanuts."),
])
def test_a_correction_quoting_what_is_stored_nowhere_ends_nothing(memory: Memory, stored: str, new: str, quoted: str) -> None:
    """Found by a multilingual bot's builder: the bundled model reads any two Spanish (French, Chinese) sentences
    about one person as alike (cosine 0.55-0.88), so a correction quoting a fact never stored ended another one."""
    facts = _with_the_local_model(memory)
    facts.curator.write({"text": stored, "valid_from": "2024-01-01"})
    d = facts.curator.write({"text": new, "corrects": quoted, "valid_from": "2024-06-01"})
    assert d.action != "supersede" and "is not an open fact" in d.reason
    assert stored in current(memory)
    said = facts.curator.write({"text": "José vive en Valencia.", "valid_from": "2024-07-01"})  # the quote, stored: named
    named = facts.curator.write({"text": "José vive ahora en Sevilla.", "corrects": "José vive en Valencia.",
                                 "valid_from": "2024-08-01"})
    assert named.action == "supersede" and named.target.id == said.fact.id


@pytest.mark.parametrize(("old", "new", "action"), [
    # found by a project-agent evaluator: every decision was one slot, "decided to", and the newest retired the others
    ("Yes — Priya and I decided: we're switching payments from Braintree to Stripe.", "We decided to ship dark mode at launch.", "new"),
    ("We decided to ship dark mode at launch.", "We decided to freeze features as of today; only bug fixes until launch.", "new"),
    ("We decided to drop offline mode.", "We decided to keep offline mode.", "related"),  # turned: for review, never confirmed
    ("We decided to host on Heroku.", "We decided to host on Fly.io instead.", "supersede"),  # one decision's value changed
])
def test_a_decision_is_the_slot_of_what_was_decided(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action
    assert judge(compare(new, old), True) != "supersede" or action == "supersede"


def test_a_models_quote_in_the_third_person_names_the_fact(memory: Memory) -> None:
    """Found in review: a model writes `replaces` as "The user lives in Berlin"; the quote rule had refused it."""
    said = memory.facts.curator.write({"text": "I live in Berlin.", "valid_from": "2024-01-01"})
    d = memory.facts.curator.write({"text": "I moved to Munich.", "corrects": "The user lives in Berlin", "valid_from": "2024-06-01"})
    assert d.action == "supersede" and d.target.id == said.fact.id


@pytest.mark.parametrize(("old", "new"), [("I live in Köln.", "I live in Koln."), ("My surname is Magalhães.", "My surname is Magalhaes."),
                                          ("We meet at Café Müller.", "We meet at Cafe Muller.")])
def test_a_name_written_without_its_accents_is_the_same_value(memory: Memory, old: str, new: str) -> None:
    """Found by a multilingual bot's builder: "I live in Koln." after "I live in Köln." superseded it (a move)."""
    assert _decided_with_the_local_model(memory, old, new) == "confirm"


def test_a_correction_before_the_fact_it_corrects(memory: Memory) -> None:
    """Imports out of order: the newer value arrives first; the older one is written as held
    until then, never a second current fact."""
    new = memory.facts.curator.write({"text": "Our office is in Cork.", "valid_from": "2024-06-01"}).fact
    d = memory.facts.curator.write({"text": "Our office is in Dublin.", "valid_from": "2024-01-01"})
    assert d.action == "outdated" and d.fact is not None and d.fact.valid_to == new.valid_from  # type: ignore[union-attr]
    assert current(memory) == ["Our office is in Cork."]
    assert [f.text for f in memory.facts.query(valid_at="2024-03-01")] == ["Our office is in Dublin."]


def test_a_correction_of_a_retracted_fact_is_refused(memory: Memory) -> None:
    old = memory.facts.curator.write({"text": "The launch is on Monday.", "valid_from": "2024-01-01"}).fact
    memory.facts.retract(old.id, reason="never said")  # type: ignore[union-attr]
    d = memory.facts.curator.write({"text": "The launch is on Thursday.", "corrects": old.id})  # type: ignore[union-attr]
    assert d.action == "refused" and d.fact is None and current(memory) == []
    assert memory.facts.curator.counts["refused"] == 1
    assert any(x.op == "refused" for _, x in memory.facts.decisions.read("facts"))


def test_the_same_statement_from_two_sessions_at_once(memory: Memory) -> None:
    barrier = threading.Barrier(2)
    actions: list[str] = []

    def say() -> None:
        barrier.wait()
        actions.append(memory.facts.curator.write({"text": "The standup is at 9:30.", "valid_from": "2024-06-01"}).action)

    threads = [threading.Thread(target=say) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(actions) == ["confirm", "new"] and current(memory) == ["The standup is at 9:30."]


def test_statements_with_no_subject_are_plain_facts(memory: Memory) -> None:
    assert slots.parse("Absolutely.") is None
    a = memory.facts.curator.write({"text": "Absolutely wonderful.", "valid_from": "2024-01-01"})
    b = memory.facts.curator.write({"text": "Quite so, indeed.", "valid_from": "2024-06-01"})
    assert (a.action, b.action) == ("new", "new") and len(current(memory)) == 2


# -- the LLM for the undecided band ----------------------------------------------------------
@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as f:
        yield f


def llm_memory(home: Path, store_url: str, fake: FakeOpenAI) -> Memory:
    s = Settings.load(env={}, embedder="none", llm_url=fake.url, llm_model="m", llm_backoff="0,0,0", llm_structured="json_schema")
    return Memory(home, store_url, settings=s)


RELATED_PAIR = ("We use Terraform for infrastructure.", "We use Pulumi for infrastructure.")


def test_the_llm_decides_the_related_band(home: Path, store_url: str, fake: FakeOpenAI) -> None:
    fake.push(Reply.json({"action": "supersede", "slot": "team / infrastructure tool"}))
    with llm_memory(home, store_url, fake) as memory:
        memory.facts.curator.write({"text": RELATED_PAIR[0], "valid_from": "2024-01-01"})
        d = memory.facts.curator.write({"text": RELATED_PAIR[1], "valid_from": "2024-06-01"})
        assert d.action == "supersede" and "decided by the LLM" in d.reason
        assert current(memory) == [RELATED_PAIR[1]]
        body = fake.requests[0]
        assert body["response_format"]["json_schema"]["schema"]["required"] == ["action", "slot"]
        assert RELATED_PAIR[0] in body["messages"][1]["content"]
        verdicts = [x for _, x in memory.facts.decisions.read("facts") if x.op == "arbitrated"]
        assert len(verdicts) == 1 and verdicts[0].meta["verdict"]["action"] == "supersede"


def test_an_llm_verdict_never_turns_a_fact_into_a_task(home: Path, store_url: str, fake: FakeOpenAI) -> None:
    """Found by a new user: a distilled task "revised" a fact into a task on the model's word."""
    fake.push(Reply.json({"action": "supersede", "slot": "infrastructure tool"}))
    with llm_memory(home, store_url, fake) as memory:
        memory.facts.curator.write({"text": RELATED_PAIR[0], "valid_from": "2024-01-01"})
        d = memory.facts.curator.write({"text": RELATED_PAIR[1], "kind": "task", "valid_from": "2024-06-01"})
        assert d.action == "related" and "a task and a fact are two things" in d.reason
        assert sorted(f.kind for f in memory.facts.query()) == ["fact", "task"]


def test_a_malformed_llm_verdict_is_parked_and_nothing_written(home: Path, store_url: str, fake: FakeOpenAI) -> None:
    fake.push(Reply.text("I think they are the same"), Reply.json({"action": "merge", "slot": ""}))
    with llm_memory(home, store_url, fake) as memory:
        memory.facts.curator.write({"text": RELATED_PAIR[0], "valid_from": "2024-01-01"})
        for _ in range(2):
            d = memory.facts.curator.write({"text": RELATED_PAIR[1], "valid_from": "2024-06-01"})
            assert d.action == "parked" and d.fact is None
            assert current(memory) == [RELATED_PAIR[0]]
            memory.facts.curator._pending_known = False  # keep the drain for below
        assert memory.facts.curator.counts["llm_parked"] == 2
        assert memory.stats()["llm"]["curate"]["invalid"] == 2
        assert len(memory.facts.curator.pending()) == 2
        drained = memory.facts.curator.drain()  # the deterministic path decides, without the LLM
        assert [x.action for x in drained] == ["related", "confirm"] and len(fake.requests) == 2
        assert memory.facts.curator.pending() == []


def test_jobs_run_curates_candidates_parked_while_the_llm_failed(home: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Found by a user with an LLM configured: without a server, a candidate parked by `facts write`
    stayed out of search and recall until the next write; `jobs run` curates it, as `serve` does."""
    fake.push(Reply.text("I think they are the same"))
    with llm_memory(home, f"sqlite:///{home}/index.db", fake) as memory:
        memory.facts.curator.write({"text": RELATED_PAIR[0], "valid_from": "2024-01-01"})
        assert memory.facts.curator.write({"text": RELATED_PAIR[1], "valid_from": "2024-06-01"}).action == "parked"
    for k, v in {"PALIMPSEST_LLM_URL": fake.url, "PALIMPSEST_LLM_MODEL": "m", "PALIMPSEST_LLM_BACKOFF": "0,0,0",
                 "PALIMPSEST_LLM_STRUCTURED": "json_schema", "PALIMPSEST_EMBEDDER": "none", "PALIMPSEST_STORE": f"sqlite:///{home}/index.db"}.items():
        monkeypatch.setenv(k, v)
    capsys.readouterr()
    assert main(["--home", str(home), "jobs", "run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["curated"] == 1
    with llm_memory(home, f"sqlite:///{home}/index.db", fake) as memory:
        assert memory.facts.curator.pending() == [] and current(memory) == sorted(RELATED_PAIR)  # the deterministic path: related


def test_a_slow_llm_verdict_parks_the_write_instead_of_holding_it(home: Path, store_url: str, fake: FakeOpenAI) -> None:
    """Found by a new user: with a 20 s LLM, `facts write` took 21 s, and with a hung one, at the
    defaults, 510 s (four tries of 120 s). A verdict inside a write is tried once, for `llm_wait`."""
    import time

    fake.push(Reply.slow(5, json.dumps({"action": "supersede", "slot": "infrastructure tool"})))
    s = Settings.load(env={}, embedder="none", llm_url=fake.url, llm_model="m", llm_backoff="0,0,0", llm_structured="json_schema",
                      llm_wait=1.0)
    with Memory(home, store_url, settings=s) as memory:
        memory.facts.curator.write({"text": RELATED_PAIR[0], "valid_from": "2024-01-01"})
        started = time.monotonic()
        d = memory.facts.curator.write({"text": RELATED_PAIR[1], "valid_from": "2024-06-01"})
        assert time.monotonic() - started < 4.5 and d.action == "parked" and len(fake.requests) == 1
        assert current(memory) == [RELATED_PAIR[0]] and len(memory.facts.curator.pending()) == 1


@pytest.mark.parametrize(("env", "said"), [
    ({"PALIMPSEST_LLM_STRUCTURED": "json"}, "must be auto, json_schema, grammar or guided_json"),
    ({"PALIMPSEST_LLM_BACKOFF": "abc"}, "seconds separated by commas"),
    ({"PALIMPSEST_LLM_TIMEOUT": "-1"}, "positive number of seconds"),
    ({"PALIMPSEST_LLM_RETRIES": "-1"}, "must be 0 or more"),
    ({"PALIMPSEST_LLM_WAIT": "0"}, "positive number of seconds"),
    ({"PALIMPSEST_LLM_URL": "127.0.0.1:8080/v1"}, "must start with http:// or https://"),  # had failed each call, retried as a network error
    ({"PALIMPSEST_LLM_MAX_TOKENS": "-5"}, "must be 1 or more"),  # had been sent to the endpoint
    ({"PALIMPSEST_EMBEDDER": "bogus"}, "must be local, openai, hash or none"),  # had made search keyword-only, a note a query
])
def test_llm_settings_are_checked_when_read(env: dict[str, str], said: str) -> None:
    """Found by a new user: each was shown by `palimpsest settings`, then crashed a distillation
    with a traceback (and `search --synthesize` lost its hits)."""
    from palimpsest.errors import InvalidInput

    with pytest.raises(InvalidInput, match=said):
        Settings.load(env=env)


def test_without_an_llm_the_deterministic_path_decides(memory: Memory) -> None:
    memory.facts.curator.write({"text": RELATED_PAIR[0], "valid_from": "2024-01-01"})
    assert memory.facts.curator.write({"text": RELATED_PAIR[1], "valid_from": "2024-06-01"}).action == "related"


def test_the_local_distiller_keeps_a_long_turn_whole_and_within_the_schema_per_item() -> None:
    """The schema's caps bound one model reply; the local output of a long turn keeps every
    item and is checked in slices the caps allow (`distill.check_local`)."""
    from palimpsest.distill import check_local
    from palimpsest.facts.local import local_distill
    from palimpsest.records import Message

    said = " ".join(f"Our service number {i} runs on host-{i}." for i in range(30)) + " Never deploy on Fridays."
    said += " " + " ".join(f"I need to call vendor {i}." for i in range(15)) + " Here is the transcript of the call."
    out = check_local(local_distill([Message(id="evt_1", session="s", role="user", content=said, created_at="2024-06-01T10:00:00Z")]))
    assert len(out["facts"]) == 31 and "Never deploy on Fridays." in [f["text"] for f in out["facts"]]
    assert len(out["tasks"]) == 15 and not any("transcript" in f["text"] for f in out["facts"])


@pytest.mark.parametrize(("earlier", "later", "relation"), [
    # a role said by its verb is the role's slot
    ("Marta leads the payments team.", "Dev took over as lead of the payments team.", "changed"),
    ("Marta leads the payments team.", "Marta leads the payments team.", "same"),
    # what we do, said by its noun
    ("We deploy to Heroku.", "Deploys go to Fly.io these days.", "changed"),
    ("We deploy to AWS in eu-west-1.", "Our deployments go to AWS, region eu-west-1 (Ireland).", "same"),
    # an employer joined is where one works now
    ("I work at Spotify as a data engineer.", "I joined Klarna as a data engineer in August.", "changed"),
    # the main customer is the biggest one
    ("Our main customer is Acme Logistics.", "Our biggest customer is Northwind Freight.", "changed"),
    # an adverb before the verb is not the attribute
    ("I prefer tea.", "I actually prefer tea.", "same"),
    # who my spouse is, said three ways; what she does is not who she is
    ("My wife's name is Ingrid.", "I'm married to Ingrid.", "same"),
    ("My wife's name is Ingrid.", "Ingrid is my wife.", "same"),
    ("I'm married to Ingrid.", "I'm married to a doctor.", None),
    # words of one meaning in a value
    ("I'm learning Japanese.", "I'm currently studying the Japanese language.", "same"),
    ("I'm learning Japanese.", "I'm studying Spanish.", "beside"),
])
def test_plain_changes_and_restatements_by_slot(earlier: str, later: str, relation: str | None) -> None:
    assert slots.relation(slots.parse(earlier), slots.parse(later), earlier, later) == relation


@pytest.mark.parametrize(("earlier", "later", "expected"), [
    ("The team has 6 engineers.", "We're down to 4 engineers after the reorg.", "supersede"),  # one count of one thing
    ("My sister is 30 years old.", "My brother is 32 years old.", "related"),  # a measure, of two people
    ("The Pro plan costs $49 a month.", "My phone plan costs $30 a month.", "new"),
])
def test_a_count_of_the_same_thing_changed(earlier: str, later: str, expected: str) -> None:
    from palimpsest.facts.curator import compare, judge

    assert judge(compare(later, earlier), True) in ((expected,) if expected == "supersede" else ("related", "new"))


@pytest.mark.parametrize(("earlier", "later"), [
    # the end of a relationship, of a habit, of a job, said of what the fact names
    ("I'm dating Sam.", "Sam and I broke up."),
    ("I smoke about five cigarettes a day.", "I quit smoking in May."),
    ("I work at Fintrix.", "I'm at Orbital now after leaving Fintrix."),
    # the named person is the holder, however the kin is said
    ("My sister Léa lives in Lyon.", "Léa lives in Marseille."),
    ("My sister Élodie lives in Lyon.", "Élodie lives in Marseille."),
    # a weight said by where one is, a unit said two ways
    ("I weigh 82 kilos.", "I'm at 77 kg."),
    # when a habit happens is one time at a time
    ("I do yoga on Tuesday evenings.", "I do yoga on Thursday evenings."),
    ("My daughter's piano lessons are on Saturdays.", "Piano lessons for my daughter are on Wednesday afternoons."),
    # what was renamed, a date that slipped, an owner said by "belongs to"
    ("The main branch of our repo is called master.", "We renamed master to main."),
    ("The project's target launch date is June.", "The launch has slipped to September."),
    ("Björn owns the payments service.", "The payments service belongs to Aisha's team."),
    # how I take my coffee holds one way at a time; a new number is the number changed
    ("I take oat milk in my coffee.", "I drink my coffee black, no milk."),
    ("My phone number is 555-0142.", "My new number is 555-0199."),
    # gym days are when I go to the gym; one role at one employer; a number swapped where a change is said
    ("I go to the gym on Tuesdays and Thursdays.", "My gym days are Mondays and Wednesdays."),
    ("I'm a senior backend engineer at Monzo.", "I'm a staff engineer at Monzo."),
])
def test_plain_changes_said_in_other_frames_supersede(memory: Memory, earlier: str, later: str) -> None:
    old = memory.facts.curator.write({"text": earlier, "valid_from": "2025-02-10"}).fact
    decision = memory.facts.curator.write({"text": later, "valid_from": "2025-08-19"})
    assert decision.action == "supersede", decision.reason
    assert [f.text for f in memory.facts.query()] == [later] and memory.facts.get(old.id).superseded_by == decision.fact.id


@pytest.mark.parametrize(("earlier", "later", "not_expected"), [
    ("I'm dating Sam.", "Sam and I went hiking.", "supersede"),  # the name, no ending
    ("I run 5k every morning.", "My neighbour quit running last year.", "supersede"),  # someone else quits
    ("I do yoga on Tuesday evenings.", "I also do yoga on Thursday evenings.", "supersede"),  # a second time, said so
    ("My sister Léa lives in Lyon.", "My brother Tom lives in Marseille.", "supersede"),  # two people
    ("Our rent is 1,800 euros a month.", "We pay eighteen hundred euros in rent every month.", "supersede"),  # the same number
    ("I drink coffee every morning.", "I drink my coffee black.", "supersede"),  # when, then how: two things of coffee
    ("I'm a nurse at St Mary's.", "I'm a volunteer at the Red Cross.", "supersede"),  # two places, two roles
    ("My new bike is a hybrid.", "My car is a Volvo.", "supersede"),  # "new" of another thing
    # chat that said nothing changed, found by review: a bare number is no time, a happening is no habit,
    # splitting a bill is no break-up, leaving for a trip is no move, a pronoun is no spouse, an added spice no other order
    ("I've been doing this for 3 weeks now.", "I've been doing this for 4 weeks now.", "supersede"),
    ("I have a meeting with Ana on Monday.", "I have a meeting with Ana on Friday.", "supersede"),
    ("I do yoga in May.", "I do yoga in June.", "supersede"),
    ("I'm dating Sam.", "Sam and I split the bill.", "supersede"),
    ("I live in Berlin.", "I'm leaving Berlin on Friday for a conference.", "supersede"),
    ("My wife's name is Ingrid.", "I am married to him.", "supersede"),
    ("I take oat milk in my coffee.", "I put cinnamon in my coffee.", "supersede"),
    ("I'm a student at UCL.", "I'm a TA at UCL.", "supersede"),
    ("The meeting room is on the main floor.", "The meeting room is on the top floor.", "confirm"),
    ("I use Notion for notes.", "I've stopped using Slack for chat.", "supersede"),
])
def test_what_the_new_frames_leave_alone(earlier: str, later: str, not_expected: str) -> None:
    from palimpsest.facts.curator import compare, judge

    assert judge(compare(later, earlier), True) != not_expected


def test_hundreds_and_thousands_said_in_words_are_numbers() -> None:
    from palimpsest.facts.curator import tokens

    assert "1800" in tokens("We pay eighteen hundred euros.") and "1800" in tokens("Our rent is 1,800 euros.")
    assert "100" in tokens("a hundred API calls") and "12000" in tokens("twelve thousand euros")
    assert tokens("I weigh 82 kilos.")[-1] == tokens("I weigh 82 kilograms.")[-1] == "kg"


def test_a_number_swapped_where_the_verb_says_a_change() -> None:
    """"upgraded … to Node 22" supersedes "on Node 18" when the vectors agree (MiniLM: 0.62); a
    "now" alone, or no vectors to agree, leaves chat alone."""
    from palimpsest.facts.curator import compare, judge

    assert judge(compare("We upgraded the services to Node 22.", "We're on Node 18.", 0.62), True) == "supersede"
    assert judge(compare("We upgraded the services to Node 22.", "We're on Node 18.", 0.3), True) != "supersede"


def test_a_name_said_as_one_word_is_said_gone() -> None:
    """"bye vscode" names "VS Code" (found by its vector: no keyword is shared)."""
    from palimpsest.facts.curator import compare, judge

    assert slots.retired("switched to neovim full time, bye vscode", "I use VS Code as my editor.")
    assert judge(compare("switched to neovim full time, bye vscode", "I use VS Code as my editor.", 0.5), True) == "supersede"
    assert not slots.retired("bye for now", "I use VS Code as my editor.")


def test_an_opening_word_is_no_named_holder() -> None:
    slot = slots.parse("Yesterday, my sister, Ana and I went hiking.")
    assert slot is None or slot.holder != "yesterday"
    assert slots.parse("My sister Léa lives in Lyon.").holder == slots.parse("Léa lives in Marseille.").holder == "léa"  # type: ignore[union-attr]


@pytest.mark.parametrize(("old", "new", "negated"), [
    ("Our backups run every night.", "Each night the backup job kicks off.", False),  # a verb of its own, no state
    ("The plane took off at noon.", "The plane took off.", False),
    ("The heating is on.", "The heating is off.", True),  # the state, denied
])
def test_off_at_the_end_is_a_state_only_after_no_verb_it_makes(old: str, new: str, negated: bool) -> None:
    assert ("negation" in compare(new, old, 0.8).differs) is negated


# -- found by a new user (twenty-seventh session) ----------------------------------------------
@pytest.mark.parametrize(("earlier", "later"), [
    ("My sister lives in Braga.", "I live in Braga."),
    ("My sister lives in Braga.", "My mother lives in Braga."),
    ("My wife's birthday is on 3 May.", "My birthday is on 3 May."),
    ("My daughter is six.", "My niece is six."),
    ("My favourite band is Radiohead.", "Rui's favourite band is Radiohead."),
])
def test_one_value_of_two_people_is_never_one_fact(home: Path, store_url: str, earlier: str, later: str) -> None:
    """Each of these was confirmed (the later statement lost, its person's fact with it): the
    words and the vectors agree, only whose it is differs."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        memory.facts.curator.write({"text": earlier, "valid_from": "2026-10-01"})
        d = memory.facts.curator.write({"text": later, "valid_from": "2026-11-15"})
        assert d.action in ("related", "new"), d.reason
        assert current(memory) == sorted([earlier, later])


@pytest.mark.parametrize(("earlier", "later", "action"), [
    ("Tomás lives in Sintra.", "Jake moved to Porto.", ("related", "new")),  # two people by name: neither retires the other
    ("Inês works at Feedzai.", "Rafa joined Klarna.", ("related", "new")),
    ("Tomás lives in Sintra.", "Tomás moved to Porto.", ("supersede",)),  # one person's move still is
    ("Priya leads the project.", "Marco took over as project lead.", ("supersede",)),  # the name is the value
])
def test_a_statement_of_one_named_person_is_no_change_of_anothers(home: Path, store_url: str, earlier: str, later: str,
                                                                action: tuple[str, ...]) -> None:
    """Found by a companion-bot evaluator: "Jake moved to Porto." superseded "My little brother Tomás is out in Sintra."
    (a change said by its verb, with another name), and the brother's home left every block."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        memory.facts.curator.write({"text": earlier, "valid_from": "2026-10-01"})
        d = memory.facts.curator.write({"text": later, "valid_from": "2026-11-15", "kind": "event"})
        assert d.action in action, d.reason


@pytest.mark.parametrize(("text", "whose"), [
    ("My sister lives in Braga.", "self:sister"), ("I live in Braga.", "self"), ("My younger sister is a nurse.", "self:sister"),
    ("My wife's birthday is on 3 May.", "self:partner"), ("My other half is a teacher.", "self:partner"),
    ("Mum's birthday is on 14 March.", "self:mother"), ("Dad quit smoking.", "self:father"),
    ("Rui's favourite band is Radiohead.", "rui"), ("The user's son has ADHD.", "self:son"), ("The user prefers aisle seats.", "self"),
    ("My manager is Priya.", "self"),  # the role is what is said, Priya its value
    ("My manager is on holiday this week.", "self:manager"),
    ("Production is deployed with Argo CD.", None), ("They live in Leeds.", None), ("Mum and Dad's home is in Porto.", None),
])
def test_whose_statement_it_is(text: str, whose: str | None) -> None:
    assert slots.whose(text) == whose


@pytest.mark.parametrize(("earlier", "later"), [
    ("I take 20 mg of atorvastatin daily.", "My doctor lowered my atorvastatin to 10 mg a day."),  # mine, said of my doctor
    ("Our cat eats dry food from Royal Canin.", "We switched the cat to a raw diet."),  # the cat, named later
    ("My wife's name is Ingrid.", "I'm married to Ingrid."),
])
def test_a_person_named_in_both_is_one_holder(earlier: str, later: str) -> None:
    assert not slots.others(later, earlier)


def test_a_change_said_of_yesterday_after_the_fact_is_the_news(memory: Memory) -> None:
    """"Our CI runs on Jenkins" said this morning, "we moved … to GitHub Actions yesterday" said
    after: the correction is what holds now (it was written as outdated, and Jenkins stayed current);
    history told of long ago ("In 2019 …") is still held until the fact began."""
    for text, at in (("Our CI runs on Jenkins.", "2026-12-05T09:00:00Z"),
                     ("Update: we moved from Jenkins to GitHub Actions yesterday.", "2026-12-05T09:05:00Z")):
        memory.append("s", "user", text, created_at=at)
        memory.distiller.close_turn("s", use_llm=False)
    (fact,) = memory.facts.query()
    assert "GitHub Actions" in fact.text
    d = memory.facts.curator.write({"text": "In 2019 we switched from Travis to Jenkins.", "valid_from": "2019-03-01",
                                    "at": "2026-12-05T09:10:00Z"})
    assert d.action != "supersede", d.reason
    assert fact.id in {f.id for f in memory.facts.query()}


def test_a_retracted_fact_said_again_in_a_conversation_stays_retracted(memory: Memory) -> None:
    """A developer retracted "The staging db host is db-staging-2.internal." (it never existed); the next turn's "also the
    staging db host is db-staging-2.internal, put that in the README" made it a current fact again, first in recall. The
    user's own `facts write` may still say it."""
    wrong = memory.facts.write("The staging db host is db-staging-2.internal.")
    memory.facts.retract(wrong.id, reason="never existed")
    memory.append("s1", "user", "also the staging db host is db-staging-2.internal, put that in the README")
    d = memory.distiller.close_turn("s1", use_llm=False)
    assert [x["action"] for x in d.decisions] == ["refused"] and current(memory) == []
    assert "refused" in {d.op for _, d in memory.facts.decisions.read("facts")}
    # another statement of the slot is still taken, and the user's own word is theirs
    memory.append("s1", "user", "The staging db host is staging-pg.internal.")
    assert [x["action"] for x in memory.distiller.close_turn("s1", use_llm=False).decisions] == ["new"]
    assert memory.facts.curator.write("The staging db host is db-staging-2.internal.").action != "refused"


def test_a_change_of_yesterday_said_in_the_message_of_the_fact_is_the_news(memory: Memory) -> None:
    """A developer moving her memory: "we used to deploy with jenkins … update: we moved from Jenkins to GitHub Actions
    yesterday" in one message was written as older news the "used to" replaced (its day, yesterday, is before the
    message's): the move was lost and Jenkins stayed current."""
    memory.append("s", "user", "deploys: we used to deploy with jenkins (job billing-deploy). update: we moved from Jenkins to "
                  "GitHub Actions yesterday, workflow is .github/workflows/deploy.yml", created_at="2026-11-20T10:00:00Z")
    memory.distiller.close_turn("s", use_llm=False)
    (fact,) = memory.facts.query()
    assert "GitHub Actions" in fact.text and fact.valid_from == "2026-11-20T10:00:00.000000Z"


@pytest.mark.parametrize(("earlier", "later", "action"), [
    # an ML researcher's: a decision reversed, and a fault repaired, had been confirmed (the retired value heard again)
    ("we stop using bf16 on the A10s", "bf16 is back on for the A10s", "supersede"),
    ("gpu-07 has a bad NVLink.", "gpu-07 is fixed, the NVLink bridge was replaced.", ("supersede", "related")),
    # ... the same state said again still confirms
    ("We stop using bf16 on the A10s.", "We stopped using bf16 on the A10s.", "confirm"),
    ("gpu-07 is broken.", "gpu-07 is still broken.", ("confirm", "related")),
])
def test_a_decision_reversed_or_a_fault_repaired_is_no_restatement(memory: Memory, earlier: str, later: str,
                                                                     action: str | tuple[str, ...]) -> None:
    assert _decided_with_the_local_model(memory, earlier, later) in (action if isinstance(action, tuple) else (action,))


@pytest.mark.parametrize(("earlier", "later"), [
    ("I live in Porto.", "I live in Nice now."),  # a city named like a feeling
    ("We decided to use ruff instead of flake8 for linting.", "We switched the linter from ruff back to flake8."),  # "back to"
    ("I stopped drinking coffee.", "I started drinking coffee again."),  # a negation flipped, said as a return
    ("I stopped drinking coffee.", "I've gone back to drinking coffee."),
    ("I love sushi.", "I don't like sushi anymore."),  # … or as a change
    ("I'm vegetarian now.", "I'm pescatarian now."),  # one diet at a time, whatever else one is
    ("I'm vegetarian.", "I'm vegan now."),
    ("I'm 34.", "I turned 35 yesterday."),  # an age, said with "turned"
    ("I'm 34 years old.", "I'm 35 now."),
    ("Our dog Rex is 3 years old.", "Rex turned 4 on Sunday."),
    ("Maria is 40.", "Maria is 41 now."),
    ("I live in Chicago.", "We live in Denver now."),  # one household's home
    ("I hate oatmeal.", "Actually I like oatmeal now."),  # a feeling turned, said as a change (it was confirmed)
    ("Deadline is June 30.", "The deadline got pushed to July 31."),  # a note's "Deadline" is no one's name
    ("I'm planning a trip to Japan in October.", "The Japan trip is cancelled."),  # a plan called off
    ("We store everything in PostgreSQL.", "We dropped Postgres for ClickHouse."),  # a name's short form
    ("I live in Porto.", "I moved to Lisbon today."),  # a change that happened today
    ("The standup is at 9:30.", "Starting this morning the standup is at 10."),  # from now on, not for one day
])
def test_changes_a_new_user_said_supersede(home: Path, store_url: str, earlier: str, later: str) -> None:
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        memory.facts.curator.write({"text": earlier, "valid_from": "2026-10-01"})
        d = memory.facts.curator.write({"text": later, "valid_from": "2026-11-15"})
        assert d.action == "supersede", d.reason
        assert current(memory) == [later]


@pytest.mark.parametrize(("earlier", "later"), [
    ("I don't drink coffee anymore.", "I drink tea every morning."),  # another drink: the vectors apart
    ("We went to the beach; it was nice.", "The beach was amazing."),  # two feelings hold together
    ("I'm vegetarian.", "I'm hungry."),  # a diet and a state of the moment
    ("I am 34.", "I am tired."),  # an age and a state
    ("My son is 7.", "My daughter turned 9 last week."),  # two people's ages
    ("I use Vim.", "We use Emacs."),  # what I use and what we use stay two
    ("I love my job.", "I hate my commute."),  # two things felt
    ("I use Java at work.", "I dropped JavaScript for TypeScript."),  # a name is no short form of a longer one
    ("The standup is at 9.", "The standup is off today."),  # an exception for one day, not a change for good
    ("The standup is at 9:30.", "The standup is at 10 today."),
    ("Anna lives in Berlin.", "The Berlin meetup is cancelled."),  # a plan called off ends a plan of it, not what it names
    ("We run Kubernetes on GKE.", "The Kubernetes upgrade got scrapped."),
])
def test_what_those_rules_leave_alone(earlier: str, later: str) -> None:
    from palimpsest.embed import get_embedder

    v = get_embedder("local").embed_batch([earlier, later])  # type: ignore[union-attr]
    assert judge(compare(later, earlier, float(v[0] @ v[1])), True) not in ("supersede", "dispute")


def test_the_thirty_first_version_of_a_fact_still_finds_the_current_one(memory: Memory) -> None:
    """Found by a new user: the neighbours were fetched ten at a time among every believed
    version, and twenty retired ports crowded the current one out: the 21st port became a
    second current fact."""
    for i in range(25):
        d = memory.facts.curator.write({"text": f"Server A runs on port {8000 + i}.", "valid_from": f"2026-10-{1 + i:02d}T00:00:00Z"})
        assert i == 0 or d.action == "supersede", (i, d.reason)
    assert current(memory) == ["Server A runs on port 8024."]


@pytest.mark.parametrize("correction", ["Actually my flight to Lisbon is on November 14.",
                                        "Actually my flight is on the 14th, not the 12th."])
def test_a_date_corrected_is_no_confirmation(home: Path, store_url: str, correction: str) -> None:
    """Found by a new user: "… on November 14" confirmed "… on November 12" (the numbers of a
    date are not values, and "my flight to Lisbon" had no slot), and "the 14th, not the 12th"
    was a new fact beside it."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        memory.facts.curator.write({"text": "My flight to Lisbon is on November 12.", "valid_from": "2026-10-07T10:00:00Z"})
        d = memory.facts.curator.write({"text": correction, "valid_from": "2026-10-20T10:00:00Z"})
        assert d.action == "supersede", d.reason
        assert current(memory) == [correction]


def test_two_years_of_one_happening_are_not_one_statement() -> None:
    from palimpsest.embed import get_embedder

    for earlier, later, said in (("I moved to Berlin in 2019.", "I moved to Berlin in 2021.", False),
                                 ("I was born on 12 May 1990.", "My birthday is May 12.", True)):
        v = get_embedder("local").embed_batch([earlier, later])  # type: ignore[union-attr]
        assert (judge(compare(later, earlier, float(v[0] @ v[1])), True) == "confirm") is said, (earlier, later)


def test_a_fact_that_replaces_another_names_its_own_entities(memory: Memory) -> None:
    """Found by a new user: "I report to Aisha now" superseded "My manager is Karen." and kept
    Karen as its entity (Aisha was found under Karen, not under her own name), and a name that
    opens a sentence ("Nina is my manager now") was no entity."""
    from palimpsest.facts.local import entities_of

    memory.facts.curator.write({"text": "My manager is Karen.", "entities": ["Karen"], "valid_from": "2026-01-06"})
    d = memory.facts.curator.write({"text": "My manager is Aisha now.", "entities": entities_of("My manager is Aisha now."),
                                    "valid_from": "2026-03-01"})
    assert d.action == "supersede", d.reason
    assert [f.text for f in memory.facts.query(entity="Aisha")] == ["My manager is Aisha now."]
    assert memory.facts.query(entity="Karen") == []
    assert entities_of("Nina is my manager now.") == ["Nina"] and entities_of("The build is slow.") == []


def test_a_move_said_to_come_retires_the_home_when_it_comes(home: Path, store_url: str) -> None:
    """Found by a new user: "We're moving to Berlin on June 1", said in March, retired "I live
    in Munich" at once (and "I" and "we" were two holders of a home, so a move said by "we"
    otherwise retired nothing). Munich holds until the move; Berlin from then."""
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    move = (now + timedelta(days=40)).date()
    said = f"We're moving to Berlin on {move:%B} {move.day}."
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        for i, (text, at) in enumerate((("I live in Munich.", now - timedelta(days=30)), (said, now - timedelta(days=1)))):
            memory.append(f"s{i}", "user", text, created_at=at.isoformat())
            memory.distiller.close_turn(f"s{i}", use_llm=False)
        memory.worker().drain()
        facts = {f.text: f for f in memory.facts.query(status="all")}
        assert facts[said].status == "future" and facts[said].valid_from.startswith(move.isoformat())
        assert facts["I live in Munich."].status == "current" and facts["I live in Munich."].valid_to.startswith(move.isoformat())
        assert [f.text for f in memory.facts.query()] == ["I live in Munich."]  # where the user lives until the move
        later = (now + timedelta(days=60)).isoformat()
        assert [f.text for f in memory.facts.query(valid_at=later)] == [said]
        d = memory.facts.curator.write({"text": "I live in Porto now.", "valid_from": (now + timedelta(days=90)).isoformat()})
        assert d.action == "supersede", d.reason


def test_loving_and_hating_one_thing_is_never_one_statement() -> None:
    from palimpsest.embed import get_embedder

    v = get_embedder("local").embed_batch(["I love sushi.", "I hate sushi."])  # type: ignore[union-attr]
    assert judge(compare("I hate sushi.", "I love sushi.", float(v[0] @ v[1])), True) == "related"  # no change said: for review


def test_a_fact_that_replaces_another_keeps_its_own_confidence(memory: Memory) -> None:
    memory.facts.curator.write({"text": "My manager is Karen.", "valid_from": "2026-01-06"})
    d = memory.facts.curator.write({"text": "My manager is Aisha now.", "valid_from": "2026-03-01", "confidence": 0.6})
    assert d.action == "supersede" and d.fact is not None and d.fact.confidence == 0.6


@pytest.mark.parametrize(("old", "new"), [
    ("My favourite colour is blue.", "Actually my favourite colour is red now."),
    ("Our team lead is Priya.", "Our team lead is Fred now."),
    ("The build status is green.", "The build status is red now."),
])
def test_a_value_ending_in_ed_is_no_participle(old: str, new: str) -> None:
    """Found by a team moving off Mem0: "red", "Fred" were read as past participles, another
    attribute than "blue" or "Priya", and both values stayed current."""
    from palimpsest.facts.curator import compare, judge

    assert judge(compare(new, old, 0.8), True) == "supersede"


def test_a_time_said_as_a_start_opens_no_slot() -> None:
    """Found by a chat bot's builder: "Starting today I'm going fully vegan." read "starting i am"
    as its slot and superseded "Cold start went from 4 minutes to 9 seconds." (one stem)."""
    from palimpsest.facts import slots
    from palimpsest.facts.curator import compare, judge

    assert slots.parse("Starting today I'm going fully vegan.").holder == "i"
    assert judge(compare("Starting today I'm going fully vegan.", "Cold start went from 4 minutes to 9 seconds.", 0.3), True) == "new"


@pytest.mark.parametrize(("old", "new", "action"), [
    # found by a personal-assistant builder: one word of a synonym group beside another word names another thing; each
    # of these had retired the older, true fact ("the same slot (password manager) with another value")
    ("The quarterly report is due on March 31.", "My password manager is 1Password.", "new"),
    ("My manager is Dana.", "The status report goes out on Mondays.", "new"),
    ("I work at Nike.", "My job title is product analyst.", "new"),
    ("The quarterly report deadline slipped to April 15.", "My manager is Priya.", "new"),
    # a synonym alone still names the one slot
    ("My manager is Dana.", "My boss is Priya now.", "supersede"),
    ("My home is in Lisbon.", "I live in Porto now.", "supersede"),
    ("I live in Lisbon.", "My home is in Lisbon.", "confirm"),
    # a change said, naming what the fact does not: no restatement (confirmed, it hid the new book)
    ("I'm reading Piranesi.", "I finished Piranesi, and now I'm reading The Overstory.", "related"),
])
def test_a_synonym_beside_another_word_is_another_slot(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("a", "b"), [
    # found in review: a qualifier of which or how ("current", "direct", "remotely") or a rank is no other thing
    ("My current employer is Meta.", "I work at Google."), ("My primary residence is in Lisbon.", "I live in Porto."),
    ("My direct manager is Dana.", "My boss is Priya."), ("I work remotely for Acme.", "My employer is Globex."),
    ("My current car is a Civic.", "I drive a Tesla."), ("Our main customer is Acme Logistics.", "Our biggest customer is Northwind."),
])
def test_a_qualifier_beside_a_synonym_is_still_one_slot(a: str, b: str) -> None:
    pa, pb = slots.parse(a), slots.parse(b)
    assert pa is not None and pb is not None and slots.same_attribute(pa, pb)


@pytest.mark.parametrize(("old", "new", "action"), [
    # found by a café owner: a day off is no plan called off ("… is off" had retired the barista's role)
    ("Anna Kowalski is our head barista.", "Anna is off tomorrow.", "new"),
    ("Anna Kowalski is our head barista.", "Anna is off sick this week, Ben covers.", "new"),
    ("The Lisbon trip is planned for May.", "The Lisbon trip is off.", "supersede"),
    # found by a skeptical evaluator: a person's role in a thing is not the thing
    ("Our office is in the town hall.", "Maria took over as office manager.", "new"),
    ("The shop opens at 9am.", "Tom took over as shop manager.", "new"),
    ("Wei is the club secretary.", "Maria took over as club secretary.", "supersede"),
    # … nor one of a series another of it
    ("Our first team plays in division 1.", "Our second team plays in division 3.", "related"),
    ("Our first team plays in division 1.", "Our reserve team plays in division 3.", "related"),
    ("Our first team plays in division 1.", "Our first team plays in division 2 now.", "supersede"),
    # found by a bot builder: one place, each said with another detail (the partner's name had been retired)
    ("I live in Berlin with my partner Sam.", "I live in Berlin near the Tiergarten park.", "related"),
    ("I live in Berlin with my partner Sam.", "I live in Lisbon now.", "supersede"),
])
def test_a_day_off_a_role_one_of_a_series_and_a_detail_are_no_change(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # found by a skeptical evaluator: a time written with a dot, and a range with one half of the day, are one value
    ("Volunteer induction is at 18:30 on the first Monday.", "Volunteer induction is at 6.30pm on the first Monday.", "confirm"),
    ("prof. okafor's office hours are wednesdays 2-4pm", "okafor holds office hours wed 14:00-16:00", "confirm"),
    # (capitalised, "Prof. Okafor's office hours" and "Okafor holds" parse as two slots of one topic: listed for review)
    ("Prof. Okafor's office hours are Wednesdays 2-4pm.", "Okafor holds office hours Wed 14:00-16:00.", "related"),
    ("Office hours are on Wednesdays 2-4pm.", "Office hours moved to Thursdays 2-4pm.", "supersede"),
])
def test_a_time_with_a_dot_or_a_range_is_one_value(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # found keeping a lab notebook: a move said as to come, and a change with the day it starts
    ("Our weekly meetings are on Thursdays at 3pm.", "Our weekly meetings move to Tuesdays at 10am from next week.", "supersede"),
    ("Our weekly meetings are on Thursdays at 3pm.", "Our weekly meetings will move to Tuesdays at 10am.", "supersede"),
    ("Our quota is cut from 2,000 to 1,200 GPU-hours/month.", "Our quota is raised to 3,000 GPU-hours/month from May 15.", "supersede"),
    # a habit said in the present is no change
    ("We spend summers in Porto.", "We move to Lisbon every summer for the festival.", "related"),
])
def test_a_change_to_come_or_from_a_day_is_a_change_and_a_habit_is_not(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # found in review: a plan called off "for good", "for now", "again", "this year" is still called off
    ("We're planning the Lisbon offsite for June.", "The Lisbon offsite is off for good.", "supersede"),
    ("We're planning the Lisbon offsite for June.", "The Lisbon offsite is off this year.", "supersede"),
    # … and a place's move with the same time is a change, not a detail
    ("The standup is at 9:30 in room 4.", "The standup is at 9:30 on Zoom now.", "supersede"),
])
def test_a_plan_called_off_and_a_place_moved_still_change(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


def test_a_range_ending_at_noon_is_the_morning() -> None:
    assert slots.clocks("office hours 10-12pm") == "office hours 10-12pm"
    assert slots.clocks("office hours 2-4pm") == "office hours 2pm-4pm"


@pytest.mark.parametrize(("old", "new", "action"), [
    # found keeping a lab notebook: what a newcomer takes over is what ends, not the fact that names neither
    ("Mei Lin is joining as co-author.", "Jonas Weber joins as co-author and takes over the eval harness from Mei.", "related"),
    ("Priya owns the eval harness.", "Jonas takes over the eval harness from Priya.", "supersede"),
    ("Priya is our project lead.", "Marco took over as project lead.", "supersede"),
])
def test_what_is_taken_over_is_what_ends(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("old", "new", "action"), [
    # found by a skeptical evaluator: a time of day changed, said with "now", had been read as one beside the other
    ("Induction is at 6:30pm.", "Induction is at 7:30pm now.", "supersede"),
    ("Induction is at 6.30pm.", "Induction is at 7.30pm now.", "supersede"),
    ("Induction is at 6:30pm.", "Induction is at 7:30pm.", "related"),  # (no change said: maybe another induction)
])
def test_a_time_of_day_said_changed_is_a_change(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


@pytest.mark.parametrize(("text", "other", "read"), [
    ("wei stepped down and maria took over", "", "Wei stepped down and maria took over"),
    ("since the new licence the bar opens at 5pm on fridays", "", "Since the new licence the bar opens at 5pm on Fridays"),
    ("the regatta is on sat 17 may. i sat down", "", "The regatta is on Sat 17 May. I sat down"),
    ("we may move in march", "", "We may move in march"),  # "may", "march" beside no number: words, not months
    ("everything's been bumped to node 20", "Our Node services run on Node 16.", "Everything's been bumped to Node 20"),
    ("Wei is the secretary", "", "Wei is the secretary"),  # a statement with a capital is read as written
    ("theo is allergic to peanuts AND tree nuts.", "", "Theo is allergic to peanuts AND tree nuts."),  # a shouted word: still lower case
    ("I put black pepper on everything.", "My cat is named Pepper.", "I put black pepper on everything."),  # "I": typed with capitals
])
def test_a_statement_in_lower_case_is_read_with_its_capitals(text: str, other: str, read: str) -> None:
    assert cased(text, other) == read


@pytest.mark.parametrize(("old", "new", "action"), [
    # found by a skeptical evaluator typing in lower case: each decided as its capitalised twin is
    ("wei is the club secretary", "wei stepped down and maria took over as club secretary", "supersede"),
    ("we record the podcast on tuesdays at 7pm", "recording moved to thursdays 7pm because of nadia's new job", "supersede"),
    ("the regatta is on sat 17 may", "the regatta is on sat 17 may", "confirm"),
    ("Our Node services run on Node 16.", "everything's been bumped to node 20", "supersede"),  # not a person's ("Everything's")
    # a correction opened by "turns out"
    ("we don't need planning permission for the rear extension",
     "turns out we do need planning permission for the rear extension since it's over 4 m deep", "supersede"),
    ("We don't need planning permission for the extension.", "It turned out that we do need planning permission for the extension.",
     "supersede"),
    # a parent's phone-typed facts: what names one child twice is no update of what the child is (the allergy had been
    # retired), another day's plan is no update of a clock change, a rota said changed is no restatement of the old one
    ("theo is allergic to peanuts and tree nuts.", "allergist visit for theo today, dr okafor bumped theo's zyrtec to 10mg at night",
     "new"),
    ("theo is allergic to peanuts AND tree nuts.", "allergist visit for theo today, dr okafor bumped theo's zyrtec to 10mg at night",
     "new"),
    ("daylight saving ends nov 1, kids will be up at 5am lol", "swim moved to thurs 5pm starting this week.", "new"),
    ("school carpool: mon rose, tue will, wed me, thu grace, fri bill", "carpool is now mon grace, tue will, wed me, thu rose, fri mark",
     "related"),
    ("prof. okafor's office hours are wednesdays 2-4pm", "okafor holds office hours wed 14:00-16:00", "confirm"),  # "wed" is Wednesday
])
def test_statements_typed_in_lower_case(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action


def test_a_review_settled_as_replaced_retires_the_older_value(capsys: pytest.CaptureFixture[str], home: Path, store_url: str,
                                                               memory: Memory) -> None:
    """A parent's: the babysitter's new number went to review beside the old one, and the review could only merge the new
    one into the old (the old number stayed the current fact) or keep both."""
    memory.close()
    old = cli(capsys, home, store_url, "facts", "write", "babysitter is marisol, her number is 555-0142.", "--valid-from", "2026-09-01")
    new = cli(capsys, home, store_url, "facts", "write", "marisol has a new number: 555-0199.", "--valid-from", "2026-11-01")
    assert new["action"] == "related"
    [settled] = cli(capsys, home, store_url, "facts", "settle", new["fact"]["id"], old["fact"]["id"], "replaces")
    assert settled["id"] == new["fact"]["id"] and settled["status"] == "current"
    with Memory(home, store=store_url) as m:
        assert current(m) == ["marisol has a new number: 555-0199."]
        assert m.facts.get(old["fact"]["id"]).superseded_by == new["fact"]["id"]
        assert m.facts.reviews() == ([], 0)
    code = main(["--home", str(home), "--store", store_url, "facts", "settle", new["fact"]["id"], old["fact"]["id"], "replaces"])
    assert code != 0  # settled once: the older fact no longer holds to be replaced again


def test_a_review_of_two_facts_of_one_start_cannot_be_replaced_and_says_what_can(memory: Memory) -> None:
    old = memory.facts.write("babysitter is marisol, her number is 555-0142.", valid_from="2026-11-01")
    new = memory.facts.write("marisol has a new number: 555-0199.", valid_from="2026-11-01")
    memory.facts.relate(new.id, old.id)
    with pytest.raises(InvalidInput, match="facts supersede .* --valid-from"):
        memory.facts.settle(new.id, old.id, "replaces")
    assert len(current(memory)) == 2 and memory.facts.reviews()[1] == 1  # nothing changed: still to review


@pytest.mark.parametrize(("old", "new", "action"), [
    # found by an on-call team's lead: another thing of a subject, named after it, had retired the subject's own value
    ("The primary DB is pg-atlas-01.", "The primary DB failover target is pg-atlas-02.", "related"),
    ("The API gateway is Kong.", "The API gateway timeout is 30s.", "related"),
    # and what stays one slot: its value said as a kind, one verb read as a noun
    ("The standup is at 9:30.", "The standup time is 10:00 now.", "supersede"),
    ("The Pro plan costs $49 a month.", "These days the Pro plan is $59 a month.", "supersede"),
    # found by a travel bot's builder: the "used to" clause ran into the value ("vegan i used to be vegetarian"), which
    # then held the old value: a confirm, and "I'm vegetarian." stayed current and first in the block
    ("I'm vegetarian.", "I'm vegan now, I used to be vegetarian.", "supersede"),
    ("We use poetry.", "We use uv now, we used to use poetry.", "supersede"),
])
def test_which_slot_a_statement_fills_as_new_users_said_it(memory: Memory, old: str, new: str, action: str) -> None:
    assert _decided_with_the_local_model(memory, old, new) == action
