"""Pairs the curator had merged or retired wrongly, found by users who wrote their own (a caregiver, a novelist, an
auditor, a skeptical evaluator): each pair written one after the other, as `palimpsest facts write` does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest import Memory, Settings


@pytest.fixture
def memory(home: Path, store_url: str) -> Iterator[Memory]:
    """With the shipped embedding model, as a user has it: the rules read the cosine too."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as m:
        yield m


@pytest.mark.parametrize(("earlier", "later"), [
    # one of a series is another thing, whatever the words share
    ("Floor 4 has 2 meeting rooms.", "Floor 2 has 6 meeting rooms."),
    ("Rack 2 has 1 spare disk.", "Rack 1 has 3 spare disks."),
    # a change that says what it ends, of a thing the earlier fact does not name
    ("he upped the metoprolol to 50mg 2x/day starting tmrw.", "stopping lisinopril today, starting losartan 25mg once a day instead."),
    # whose "her" is, the words do not say
    ("Her father is Aldric Varrow.", "Hestia's father is a fisherman."),
    ("Her mother is Ilse Solenne.", "Kael's mother is Dessa."),
    # what is left is named after "left"; the rest of the sentence is when
    ("She meets Kael, the reveal that they share a father.", "She left Aldric before Kael turned five."),
    ("Floor 4 has 2 meeting rooms.", "Floor 2 has 6 meeting rooms now."),  # ("now" of floor 2, found in review)
    # a change that may come
    ("Parents' evening is planned for 14 November.", "Parents' evening might be moved to 21 November."),
    ("Parents' evening is planned for 14 November.", "Parents' evening will probably be moved to 21 November."),
    ("My sister lives in Braga.", "My sister is thinking about moving to Porto."),
    ("The standup is at 9:30.", "The standup might shift to 10:00."),
    # two doses, not two times of day ("two in the morning" had become 2am, found in review)
    ("I take two in the morning.", "I take one in the evening."),
    # two slots of one subject are never one statement heard again
    ("Our bassist lives in Glasgow.", "Our guitarist lives in Glasgow."),
    # an exception for one time
    ("PE is on Friday afternoons.", "PE is on Friday afternoons, except this week it's on Thursday."),
    # another identified thing (a multi-agent crew's reviews, tickets, incidents)
    ("PR 142 was rejected by the reviewer for a missing migration test.", "PR 157 was rejected by the reviewer for a missing migration test."),
    ("Issue 4411 is assigned to Marco.", "Issue 4412 is assigned to Marco."),
    ("INC-2231 was caused by an expired certificate.", "INC-2240 was caused by an expired certificate."),
    # one verb, two things of its holder: said through a preposition, or as its object (a fitness bot's, no shoe was current)
    ("The athlete runs in Asics Novablast 5 shoes.", "The athlete ran the Potsdam half marathon in 1:41:05."),
    ("I drive a Civic.", "I drive to work on Mondays."),
    # a change said of another thing, sharing no word with the fact (a family assistant's: it retired the daycare)
    ("Sam goes to Little Acorns daycare.", "we switched pediatricians since Elm Street is 40 min away now."),
    # two people, each named in full (a recruiter's notes: Gabriel's move retired Tomás's city)
    ("Tomás Pereira — Lisbon too, backend in Go, no Rust.", "Gabriel Souza now lives in Porto, not Lisbon anymore."),
    ("Leo is in 3rd grade.", "Maya is in 4th grade."),
    # one person, another attribute: "130k" is an amount, no name the city differs by
    ("Svetlana Ivanova lives in Oslo.", "Svetlana Ivanova's salary expectation is now 130k."),
])
def test_two_things_or_a_change_not_made_leave_the_earlier_fact_current(memory: Memory, earlier: str, later: str) -> None:
    first = memory.facts.curator.write({"text": earlier})
    second = memory.facts.curator.write({"text": later})
    assert second.action in ("new", "related"), second.reason
    assert {f.text for f in memory.facts.query()} == {earlier, later}
    assert first.fact is not None and memory.facts.get(first.fact.id).status == "current"


@pytest.mark.parametrize(("earlier", "later"), [
    ("Floor 4 has 2 meeting rooms.", "Floor 4 has 3 meeting rooms now."),
    ("The Tuesday class is in room 4.", "The Tuesday class moved to room 2."),
    ("His cardiologist is Dr. Kowalczyk.", "His cardiologist is Dr. Patel now."),
    ("The release is planned for May 2.", "The release is moved to May 6."),
    ("The standup is at 9:30.", "The standup is at 10:30 now so the US team could join."),  # (a modal of something else)
    ("I smoke about five cigarettes a day.", "I quit smoking in May."),  # ("May" the month)
    ("he upped the metoprolol to 50mg 2x/day.", "stopping the metoprolol, starting losartan 25mg once a day instead."),
    # one of a series said as a value changes (found in review: the series rule had held them apart)
    ("My flight leaves from gate 12.", "My flight leaves from gate 14 now."),
    ("Standup uses room 4.", "Standup uses room 2 now."),
    ("We booked table 5 for Friday.", "We booked table 6 for Friday instead."),
    # changes said in ways the rules had not read (a caregiver, a band, a kitchen)
    ("His cardiologist is Dr. Kowalczyk.", "Dr. Patel is his cardiologist now."),
    ("Our drummer is Kasia.", "Tomek replaced Kasia on drums."),
    ("Marco is the head chef.", "Marco is the sous chef now and Lena is the head chef."),
    # one identified thing, one verb said the same way
    ("PR 142 is assigned to Marco.", "PR 142 is assigned to Lena now."),
    ("The athlete runs in Asics Novablast 5 shoes.", "The athlete runs in Adidas Adizero Boston 13 shoes now."),
    ("The athlete weighs 72.3 kg.", "The athlete weighs 68.9 kg."),
    # a change in the present tense, in an assistant's markdown (a Claude Code user's: both decisions had stayed current)
    ("We use zod for schemas.", "We move from zod to valibot."),
    ("Decision: add `zod@3.23.8`, schemas live in `web/src/forms/schema.ts`.", "Decision: **we move from zod to valibot** (`valibot@0.36.0`)."),
    # (review) a time said with or without its preposition is one slot; which one holds a role is its value
    ("The gym opens at 6am.", "The gym opens 7am now."),
    ("I train in the morning.", "I train evenings now."),
    ("Build 1432 is the current production release.", "Build 1450 is the current production release now."),
    ("Deploy 88 is live on prod.", "Deploy 91 is live on prod now."),
    # one grade at a time (a family assistant's: "3rd" and "4th" had been read as names, and the two grades as two things)
    ("Leo is in 3rd grade.", "Leo is in 4th grade."),
    # a name ending in -ed is a name (a founder's fund "Initialized" had been read as a state: both leads stayed current)
    ("The lead investor of our seed round is Precursor.", "The lead investor of our seed round is Initialized."),
])
def test_the_same_things_change_still_supersedes(memory: Memory, earlier: str, later: str) -> None:
    memory.facts.curator.write({"text": earlier})
    second = memory.facts.curator.write({"text": later})
    assert second.action == "supersede", second.reason
    assert [f.text for f in memory.facts.query()] == [later]


def test_a_change_ends_every_fact_that_says_the_value_it_leaves(memory: Memory) -> None:
    """Found by a Claude Code user: "Decision: we move from zod to valibot" superseded "i lean zod" and left "Decision:
    add zod@3.23.8 …" current, the one line of the block for "which validation library do we use?"."""
    write = memory.facts.curator.write
    lean = write({"text": "i lean zod", "valid_from": "2026-11-02T10:00:00Z"}).fact
    added = write({"text": "Decision: add `zod@3.23.8`, schemas live in `web/src/forms/schema.ts`.", "valid_from": "2026-11-02T10:01:00Z"}).fact
    size = write({"text": "zod is 13.2kB gz.", "valid_from": "2026-11-09T10:00:00Z"}).fact
    moved = write({"text": "Decision: **we move from zod to valibot** (`valibot@0.36.0`).", "valid_from": "2026-11-09T10:01:00Z"})
    assert moved.action == "supersede", moved.reason
    assert {f.text for f in memory.facts.query()} == {"zod is 13.2kB gz.", "Decision: **we move from zod to valibot** (`valibot@0.36.0`)."}
    ended = [memory.facts.get(f.id) for f in (lean, added) if f.id != moved.target.id]
    assert [f.valid_to for f in ended] == [moved.fact.valid_from] == ["2026-11-09T10:01:00.000000Z"] and memory.facts.get(size.id).status == "current"


@pytest.mark.parametrize(("changed", "kept", "change"), [
    ("The API is hosted on Heroku.", "The marketing site is hosted on Heroku.", "We moved the API from Heroku to Fly.io."),
    ("Our backend runs on Postgres.", "The analytics warehouse uses Postgres.", "We're moving the backend from Postgres to MySQL."),
    ("The release owner is Alice.", "Release notes go to alice@acme.com.", "The release owner changed from Alice to Bob."),
    ("The error tracker is Sentry.", "The staging alerts also go to Sentry.", "We moved the error tracker from Sentry to Rollbar."),
])
def test_a_change_of_one_thing_ends_no_other_thing_with_its_old_value(memory: Memory, changed: str, kept: str, change: str) -> None:
    """Found in review: "We moved the API from Heroku to Fly.io." had closed "The marketing site is hosted on Heroku."."""
    write = memory.facts.curator.write
    write({"text": changed, "valid_from": "2026-11-01T10:00:00Z"})
    write({"text": kept, "valid_from": "2026-11-02T10:00:00Z"})
    assert write({"text": change, "valid_from": "2026-11-09T10:00:00Z"}).action == "supersede"
    assert {f.text for f in memory.facts.query()} == {kept, change}
