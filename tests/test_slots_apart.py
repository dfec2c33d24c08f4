"""Two attributes that share most words but differ in what qualifies them are two slots
(found on a long turn the local distiller handed the curator: 30 lockers became one)."""

from __future__ import annotations

import pytest

from palimpsest import Memory
from palimpsest.facts import slots


@pytest.mark.parametrize(("earlier", "later", "relation"), [
    ("My locker number at site 1 is 101.", "My locker number at site 2 is 102.", None),
    ("The deploy target for staging is Heroku.", "The deploy target for prod is Fly.io.", None),
    ("The deploy target for staging is Heroku.", "The deploy target for staging is now Fly.io.", "changed"),
    ("My deploy target is Heroku.", "My deploy target is Fly.io now.", "changed"),
])
def test_qualifiers_keep_slots_apart(earlier: str, later: str, relation: str | None) -> None:
    assert slots.relation(slots.parse(earlier), slots.parse(later), earlier, later) == relation


def test_facts_written_one_after_another_for_two_qualified_slots_both_stay_current(memory: Memory) -> None:
    """As `palimpsest facts write` does it, one after another (no vector for the first yet)."""
    first = memory.facts.curator.write({"text": "The deploy target for staging is Heroku."})
    second = memory.facts.curator.write({"text": "The deploy target for prod is Fly.io."})
    assert first.action == "new" and second.action in ("new", "related"), second.reason
    current = {f.text for f in memory.facts.query()}
    assert {"The deploy target for staging is Heroku.", "The deploy target for prod is Fly.io."} <= current


@pytest.mark.parametrize(("earlier", "later", "relation"), [
    # "X is …" says several things of X: who or what it is, where or when, a predicate ("allergic to", "called")
    ("The user's partner is a chef.", "The user's partner is allergic to cats.", "topic"),
    ("The user's daughter is called Isla.", "The user's daughter Isla is allergic to cats.", "topic"),
    ("The Louvre is in Paris.", "The Louvre is the most visited museum in the world.", "topic"),
    ("Release branches are cut on Tuesdays.", "Release branches are named release/YYYY-MM-DD.", "topic"),
    # one kind, another value: still a change
    ("Our office is in Leeds.", "Our office is in Manchester now.", "changed"),
    ("My favourite color is blue", "My favourite color is green", "changed"),
    ("My phone is a Pixel 6.", "My phone is an iPhone 15.", "changed"),
    ("The user's timezone is Pacific Time.", "The user's timezone is on Central European Time.", "changed"),
    ("The pool is closed for the winter.", "The pool is open again.", "changed"),
    ("Our monthly AWS bill is about $4,200.", "The monthly AWS bill is running around $6,800.", "changed"),
    # the same value said more narrowly holds beside it
    ("We deploy to Fly.io.", "We deploy to Fly.io on Tuesdays and Thursdays only.", "beside"),
])
def test_what_a_statement_says_of_its_subject_keeps_slots_apart(earlier: str, later: str, relation: str | None) -> None:
    assert slots.relation(slots.parse(earlier), slots.parse(later), earlier, later) == relation


def test_a_predicate_of_the_same_person_does_not_retire_what_she_is(memory: Memory) -> None:
    memory.facts.curator.write({"text": "The user's partner is a chef.", "valid_from": "2025-01-01"})
    later = memory.facts.curator.write({"text": "The user's partner is allergic to cats.", "valid_from": "2025-06-01"})
    assert later.action == "related", later.reason
    assert {"The user's partner is a chef.", "The user's partner is allergic to cats."} <= {f.text for f in memory.facts.query()}
