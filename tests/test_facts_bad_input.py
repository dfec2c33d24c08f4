"""Bad input and reliability of the facts layer (issue 20, its last list), on both backends.

Each case gets one clear decision, journaled in the facts' decision log, and never leaves
two current facts for one slot: contradictory statements in one turn, a correction of a
fact that does not exist, a correction arriving before the fact it corrects (imports out of
order), the same statement from two sessions at once, statements with no subject; and the
LLM returning a correction of a retracted fact, an empty list or malformed output (the
reply parked and counted, nothing written).
"""

from __future__ import annotations

import threading
from itertools import combinations
from pathlib import Path

import pytest

from fakeopenai import FakeOpenAI, Reply
from palimpsest import Memory, NotFound
from palimpsest.facts import slots
from test_curation_slots import fake, llm_memory  # noqa: F401 (a fixture, and the memory on the fake server)


def current(memory: Memory) -> list[str]:
    return sorted(f.text for f in memory.facts.query())


def ops(memory: Memory) -> list[str]:
    """The facts' journaled decisions, in order."""
    return [d.op for _, d in memory.facts.decisions.read("facts", ("decision", "pending_semantic"))]


def one_per_slot(memory: Memory) -> None:
    """No two current facts say different values of one slot."""
    texts = current(memory)
    for a, b in combinations(texts, 2):
        assert slots.relation(slots.parse(a), slots.parse(b), a, b) not in ("changed", "negated"), (a, b)


def test_contradictory_statements_in_one_turn_one_current_fact_journaled(memory: Memory) -> None:
    memory.append("s", "user", "Our office is in Dublin. Sorry, our office is in Cork.", created_at="2024-06-01T10:00:00Z")
    d = memory.distiller.close_turn("s", use_llm=False)
    assert [x["action"] for x in d.decisions] == ["new", "revise"]
    assert current(memory) == ["Our office is in Cork."] and ops(memory) == ["write", "revise"]
    one_per_slot(memory)


def test_a_correction_of_a_fact_that_does_not_exist_is_one_new_fact_journaled(memory: Memory) -> None:
    d = memory.facts.curator.write({"text": "Correction: the release is on June 10.", "corrects": "The release is on June 3.",
                                    "kind": "correction", "valid_from": "2024-06-01"})
    assert d.action == "new" and "is not an open fact" in d.reason
    assert current(memory) == ["Correction: the release is on June 10."] and ops(memory) == ["write"]


def test_a_source_naming_no_stored_message_is_refused_on_every_path(memory: Memory) -> None:
    # a bot's developer: `facts write "…" --source evt_doesnotexist` was accepted, its attestation naming no message
    for source in ("evt_doesnotexist", "event:evt_doesnotexist"):
        with pytest.raises(NotFound, match="evt_doesnotexist"):
            memory.facts.curator.write({"text": "I live in Porto.", "source": source})
        with pytest.raises(NotFound, match="evt_doesnotexist"):
            memory.facts.write("I live in Porto.", source=source)
    assert memory.facts.query() == []
    said = memory.append("s1", "user", "I live in Porto.")["id"]
    fact = memory.facts.curator.write({"text": "I live in Porto.", "source": said}).fact
    with pytest.raises(NotFound, match="evt_doesnotexist"):
        memory.facts.confirm(fact.id, source="evt_doesnotexist")
    assert [a.source for a in memory.facts.get(fact.id).attestations] == [said]


def test_a_correction_arriving_before_the_fact_it_corrects(memory: Memory) -> None:
    """Imports out of order: the correction is heard first, the statement it corrects later
    but said earlier; the older one is written as held until the correction, never current."""
    fix = memory.facts.curator.write({"text": "Correction: the release is on June 10.", "corrects": "The release is on June 3.",
                                      "kind": "correction", "valid_from": "2024-06-01"}).fact
    d = memory.facts.curator.write({"text": "The release is on June 3.", "valid_from": "2024-05-01"})
    assert d.action == "outdated" and d.fact is not None and fix is not None and d.fact.valid_to == fix.valid_from
    assert current(memory) == ["Correction: the release is on June 10."]
    assert [f.text for f in memory.facts.query(valid_at="2024-05-15")] == ["The release is on June 3."]
    assert ops(memory)[0] == "write" and len(ops(memory)) >= 2
    one_per_slot(memory)


def test_the_same_statement_from_two_sessions_at_once_is_one_fact_heard_twice(memory: Memory) -> None:
    for session in ("a", "b"):
        memory.append(session, "user", "The staging server is called atlas.", created_at="2024-06-01T10:00:00Z")
    barrier = threading.Barrier(2)
    actions: list[str] = []
    errors: list[BaseException] = []

    def close(session: str) -> None:
        barrier.wait()
        try:
            actions.extend(x["action"] for x in memory.distiller.close_turn(session, use_llm=False).decisions)
        except BaseException as exc:  # reported below: a thread's failure must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=close, args=(s,)) for s in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and sorted(actions) == ["confirm", "new"]
    (fact,) = memory.facts.query()
    assert len(fact.attestations) == 2 and ops(memory) == ["write", "confirm"]


def test_statements_with_no_subject_are_kept_apart(memory: Memory) -> None:
    """"It is closed." names nothing: it neither supersedes nor is superseded by a statement of a slot."""
    memory.facts.curator.write({"text": "The pool is open.", "valid_from": "2024-01-01"})
    d = memory.facts.curator.write({"text": "It is closed.", "valid_from": "2024-06-01"})
    assert slots.parse("It is closed.") is None and d.action == "new"
    assert current(memory) == ["It is closed.", "The pool is open."] and ops(memory) == ["write", "write"]


# -- the LLM (the fake server and the memory on it: test_curation_slots) ---------------------


def test_an_llm_correction_of_a_retracted_fact_is_refused_counted_and_journaled(home: Path, store_url: str, fake: FakeOpenAI) -> None:
    with llm_memory(home, store_url, fake) as memory:
        old = memory.facts.curator.write({"text": "The launch is on Monday.", "valid_from": "2024-01-01"}).fact
        assert old is not None
        memory.facts.retract(old.id, reason="never said")
        fake.push(Reply.json({"summary": "The launch day.", "facts": [], "tasks": [],
                              "corrections": [{"text": "The launch is on Thursday.", "replaces": old.id}]}))
        memory.append("s", "user", "The launch is on Thursday.", created_at="2024-06-01T10:00:00Z")
        d = memory.distiller.close_turn("s")
        assert d.origin == "llm" and [x["action"] for x in d.decisions] == ["refused"]
        assert current(memory) == [] and memory.facts.curator.counts["refused"] == 1
        assert ops(memory) == ["write", "retract", "refused"]


@pytest.mark.parametrize("reply", [Reply.json([]), Reply.json({"summary": "x", "facts": [{"text": "half"}]}), Reply.text("not json")],
                         ids=["empty-list", "malformed", "prose"])
def test_an_llm_distill_reply_that_is_not_the_schema_is_parked_counted_and_writes_nothing(home: Path, store_url: str, fake: FakeOpenAI,
                                                                                           reply: Reply) -> None:
    fake.push(reply)
    with llm_memory(home, store_url, fake) as memory:
        for i, text in enumerate(["I prefer window seats.", "Noted", "bye"]):
            memory.append("s", "user" if i != 1 else "assistant", text, created_at=f"2024-06-01T10:0{i}:00Z")
        memory.worker(tasks=["distill"]).run_once()
        assert [p["task"] for p in memory.llm.parked()] == ["distill"]  # type: ignore[union-attr]
        assert memory.stats()["llm"]["distill"]["invalid"] == 1
        assert current(memory) == [] and ops(memory) == []


@pytest.mark.parametrize("reply", [Reply.json([]), Reply.json({"action": "merge", "slot": ""})], ids=["empty-list", "malformed"])
def test_an_llm_verdict_that_is_not_the_schema_is_parked_and_writes_nothing(home: Path, store_url: str, fake: FakeOpenAI,
                                                                            reply: Reply) -> None:
    fake.push(reply)
    with llm_memory(home, store_url, fake) as memory:
        memory.facts.curator.write({"text": "We use Terraform for infrastructure.", "valid_from": "2024-01-01"})
        d = memory.facts.curator.write({"text": "We use Pulumi for infrastructure.", "valid_from": "2024-06-01"})
        assert d.action == "parked" and d.fact is None and current(memory) == ["We use Terraform for infrastructure."]
        assert memory.facts.curator.counts["llm_parked"] == 1 and ops(memory) == ["write", "parked"]


def test_a_verdict_cut_off_by_a_stopping_server_parks_nothing_and_is_asked_again(home: Path, store_url: str, fake: FakeOpenAI) -> None:
    from palimpsest.llm import Cancelled

    with llm_memory(home, store_url, fake) as memory:
        memory.facts.curator.write({"text": "We use Terraform for infrastructure.", "valid_from": "2024-01-01"})
        memory.llm.stopping = threading.Event()  # type: ignore[union-attr]
        memory.llm.stopping.set()  # type: ignore[union-attr]
        with pytest.raises(Cancelled):
            memory.facts.curator.write({"text": "We use Pulumi for infrastructure.", "valid_from": "2024-06-01"})
        assert memory.facts.curator.counts["llm_parked"] == 0 and ops(memory) == ["write"]  # no review item for a shutdown


@pytest.mark.parametrize("candidate", [{}, {"kind": "preference"}])
def test_a_candidate_without_text_is_refused_clearly(memory: Memory, candidate: dict) -> None:
    from palimpsest.errors import InvalidInput

    with pytest.raises(InvalidInput, match="needs `text`"):
        memory.facts.curator.write(candidate)
    assert memory.facts.query() == []
