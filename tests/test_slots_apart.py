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
