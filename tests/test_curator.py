"""The curator's gate: confirm / related / supersede / dispute / new, with and without an
embedder, explicit corrections, review, and parking while the store is unreachable."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from palimpsest import Memory, Settings
from palimpsest.embed import Embedder
from palimpsest.errors import InvalidInput, StoreUnavailable
from palimpsest.facts import Facts
from palimpsest.facts.curator import Candidate, compare, judge, tokens
from palimpsest.ids import short_id
from palimpsest.store import open_store
from palimpsest.store.facts_base import FactChange
from palimpsest.store.sqlite import SQLiteStore

SYNONYMS = {"enjoys": "likes", "enjoy": "like", "automobile": "car", "vehicle": "car", "resides": "lives", "home": "house"}


class SynonymEmbedder(Embedder):
    """Deterministic: words (synonyms folded) hashed into 64 buckets, unit length. Word
    order is lost, as in real embeddings that blur who-did-what-to-whom."""

    model_id = "test-synonyms"
    dim = 64

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in re.findall(r"\w+", text.lower()):
                w = SYNONYMS.get(w, w)
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)


@pytest.fixture(params=["embedder", "none"])
def facts(request: pytest.FixtureRequest, sqlite_memory: Memory) -> Facts:
    """SQLite only: the gate is backend-free; test_every_backend covers the store side."""
    embedder = SynonymEmbedder() if request.param == "embedder" else None
    return Facts(sqlite_memory.store, sqlite_memory.home, embedder=lambda: embedder)


@pytest.fixture
def with_embedder(sqlite_memory: Memory) -> Facts:
    embedder = SynonymEmbedder()
    return Facts(sqlite_memory.store, sqlite_memory.home, embedder=lambda: embedder)


def test_every_backend(memory: Memory) -> None:
    embedder = SynonymEmbedder()
    facts = Facts(memory.store, memory.home, embedder=lambda: embedder)
    first = facts.curator.write({"text": "Ada enjoys hiking in the Alps", "valid_from": "2024-01-01", "entities": ["Ada"]})
    assert facts.curator.write("Ada likes hiking in the Alps").action == "confirm"  # found by vector
    assert facts.curator.write({"text": "Ada enjoys hiking in the Alps", "vault": "facts"}).action == "confirm"  # by norm
    hits = facts.search("mountain walks Ada")
    assert [h.fact.id for h in hits] == [first.fact.id] and hits[0].parts["semantic"] > 0  # type: ignore[union-attr]
    assert facts.embed_missing() == 0


def test_tokens_fold_numbers_negations_and_suffixes() -> None:
    assert tokens("I don't own four bikes") == ["not", "own", "4", "bik"]
    assert tokens("The score is 2,000 points!") == ["score", "2000", "point"]


def test_the_same_words_confirm(facts: Facts, sqlite_memory: Memory) -> None:
    heard = [sqlite_memory.append("s1", "user", text)["id"] for text in ("I live in Berlin.", "i live in berlin")]
    first = facts.curator.write({"text": "I live in Berlin.", "source": heard[0], "valid_from": "2024-01-01"})
    assert first.action == "new"
    again = facts.curator.write({"text": "i live in berlin", "source": heard[1]})
    assert again.action == "confirm" and again.fact is not None and again.fact.id == first.fact.id  # type: ignore[union-attr]
    assert again.fact.confidence > first.fact.confidence and len(again.fact.attestations) == 2  # type: ignore[union-attr]
    assert len(facts.query()) == 1


def test_a_paraphrase_needs_the_embedder_to_confirm(facts: Facts) -> None:
    facts.curator.write({"text": "Ada enjoys hiking in the Alps", "valid_from": "2024-01-01"})
    d = facts.curator.write("Ada likes hiking in the Alps")
    if facts.embedder is not None:
        assert d.action == "confirm"
    else:
        assert d.action in ("related", "new")  # word overlap alone does not merge a paraphrase


def test_same_words_different_fact_never_confirms(facts: Facts) -> None:
    facts.curator.write({"text": "Alice reports to Bob", "valid_from": "2024-01-01"})
    d = facts.curator.write("Bob reports to Alice")
    assert d.action in ("related", "new") and len(facts.query()) == 2


def test_a_changed_number_supersedes_when_later(facts: Facts) -> None:
    old = facts.curator.write({"text": "My highest score in Ticket to Ride is 124 points", "valid_from": "2023-05-23"}).fact
    d = facts.curator.write({"text": "My highest score in Ticket to Ride is 132 points", "valid_from": "2023-05-25"})
    assert d.action == "supersede" and d.target is not None and d.target.id == old.id  # type: ignore[union-attr]
    chain = facts.history(d.fact.id)  # type: ignore[union-attr]
    assert [f.text for f in chain] == [old.text, d.fact.text] and chain[0].valid_to == chain[1].valid_from  # type: ignore[union-attr]
    assert [f.text for f in facts.query()] == ["My highest score in Ticket to Ride is 132 points"]


def test_negation_later_supersedes_earlier_is_outdated(facts: Facts) -> None:
    facts.curator.write({"text": "I eat meat", "valid_from": "2024-01-01"})
    d = facts.curator.write({"text": "I don't eat meat", "valid_from": "2024-06-01"})
    assert d.action == "supersede"
    e = facts.curator.write({"text": "I eat meat", "valid_from": "2024-03-01"})  # older news, contradicting
    # it held until the later fact replaced it: written closed there, never a second current fact
    assert e.action == "outdated" and e.fact is not None and e.fact.valid_to == d.fact.valid_from  # type: ignore[union-attr]
    assert [f.text for f in facts.query()] == ["I don't eat meat"]


def test_different_names_and_acronyms_do_not_confirm(with_embedder: Facts) -> None:
    facts = with_embedder
    facts.curator.write({"text": "The API uses JWT for authentication", "valid_from": "2024-01-01"})
    d = facts.curator.write("The API uses SAML for authentication")
    assert d.action == "related" and d.signals is not None and "name" in d.signals.differs
    assert [r["existing"]["text"] for r in facts.reviews()[0]] == ["The API uses JWT for authentication"]


def test_a_pair_whose_side_was_retired_since_is_no_longer_to_review(with_embedder: Facts) -> None:
    """Found by a panel user: 45 of 203 pairs to review had a superseded side, and "merge" answered 409."""
    facts = with_embedder
    jwt = facts.curator.write({"text": "The API uses JWT for authentication", "valid_from": "2024-01-01"}).fact
    facts.curator.write("The API uses SAML for authentication")
    assert facts.reviews()[1] == 1
    facts.supersede(jwt.id, "The API uses mutual TLS for authentication")  # type: ignore[union-attr]
    assert facts.reviews() == ([], 0) and facts.stats()["pending_reviews"] == 0


def test_unrelated_is_new(facts: Facts) -> None:
    facts.curator.write({"text": "The cat is called Miso", "valid_from": "2024-01-01"})
    assert facts.curator.write("Quarterly taxes are due in April").action == "new"


def test_explicit_corrections_supersede(facts: Facts) -> None:
    a = facts.curator.write({"text": "The standup is at 9:30", "valid_from": "2024-01-01"}).fact
    d = facts.curator.write({"text": "Standup moved to the afternoon", "corrects": a.id})  # type: ignore[union-attr]
    assert d.action == "supersede" and facts.get(a.id).superseded_by == d.fact.id  # type: ignore[union-attr]
    e = facts.curator.write({"text": "Standup is at 14:00 sharp", "corrects": "Standup moved to the afternoon"})
    assert e.action == "supersede" and e.target is not None and e.target.id == d.fact.id  # type: ignore[union-attr]
    f = facts.curator.write({"text": "Something else entirely", "corrects": "a statement nobody made"})
    assert f.action == "new"
    # two writers correct the same fact at once: the later corrects what replaced it, and says so
    g = facts.curator.write({"text": "Standup is at 15:00 now", "corrects": a.id})  # type: ignore[union-attr]
    assert g.action == "supersede" and g.target is not None and g.target.id == e.fact.id  # type: ignore[union-attr]
    assert f"{a.id} was already corrected, now {e.fact.id}" in g.reason  # type: ignore[union-attr]
    assert "already corrected" not in d.reason


def test_a_second_copy_of_a_corrected_fact_ends_where_the_correction_starts(facts: Facts) -> None:
    """Found by an auditor merging two people's notes: the second copy of "Priya is our reviewer" was
    closed at the moment of curation (2026), so on 2025-06-01 it held beside its correction of 2025-03-10."""
    old = "Priya Raman is our code reviewer; always tag her on PRs."
    new = "Our teammate Marco Bianchi takes over code review from Priya starting today."
    facts.curator.write({"text": old, "valid_from": "2025-03-03T09:02:00Z", "source": "person:me"})
    marco = facts.curator.write({"text": new, "valid_from": "2025-03-10T00:00:00Z", "corrects": old, "source": "person:me"}).fact
    copy = facts.curator.write({"text": old, "valid_from": "2025-03-03T09:02:00Z", "source": "person:bob"}).fact
    assert copy is not None and copy.id != marco.id  # type: ignore[union-attr]
    facts.curator.write({"text": new, "valid_from": "2025-03-10T00:00:00Z", "corrects": old, "source": "person:bob"})
    assert facts.get(copy.id).valid_to.startswith("2025-03-10T00:00:00")
    assert [f.text for f in facts.query(valid_at="2025-06-01T00:00:00Z")] == [new]


def test_review_settles_same_or_keep(with_embedder: Facts) -> None:
    facts = with_embedder
    base = facts.curator.write({"text": "The API uses JWT for authentication", "valid_from": "2024-01-01"}).fact
    rel = facts.curator.write("The API uses SAML for authentication").fact
    kept = facts.settle(rel.id, base.id, "keep")  # type: ignore[union-attr]
    assert kept.status == "current" and facts.reviews() == ([], 0)
    other = facts.curator.write("The API uses OAuth for authentication").fact
    merged = facts.settle(other.id, base.id, "same")  # type: ignore[union-attr]
    assert merged.id == base.id and len(merged.attestations) == 2  # type: ignore[union-attr]
    assert facts.get(other.id).status == "merged"  # type: ignore[union-attr]


def test_invalid_candidates_are_refused() -> None:
    with pytest.raises(InvalidInput):
        Candidate.of({"text": "x", "colour": "red"})
    with pytest.raises(InvalidInput):
        Candidate.of(42)


def test_invalid_candidate_is_refused_not_parked(facts: Facts) -> None:
    with pytest.raises(InvalidInput):
        facts.curator.write({"text": ""})
    with pytest.raises(InvalidInput):
        facts.curator.write({"text": "ok", "salience": 7})
    assert facts.curator.pending() == []


def test_unreachable_store_parks_and_drains(tmp_path: Path) -> None:
    home = tmp_path / "home"
    url = f"sqlite:///{home / 'p.db'}"
    with Memory(home, url, settings=Settings.load(env={}, embedder="none")) as memory:
        heard = memory.append("s1", "user", "The wifi password rotates monthly")["id"]
    store = DownStore(url)
    facts = Facts(store, home)
    facts.curator.write({"text": "The printer is on floor 2", "valid_from": "2024-01-01"})
    store.down = True  # the database goes away
    d = facts.curator.write({"text": "The wifi password rotates monthly", "source": heard})
    assert d.action == "parked" and "journaled" in d.reason
    assert [c["text"] for _, c in facts.curator.pending()] == ["The wifi password rotates monthly"]
    store.close()
    store = open_store(url)  # it is back
    try:
        again = Facts(store, home)
        decision = again.curator.write("The printer is on floor 2")  # drains the parked one first
        assert decision.action == "confirm"
        assert again.curator.pending() == []
        assert {f.text for f in again.query()} == {"The printer is on floor 2", "The wifi password rotates monthly"}
    finally:
        store.close()


class DownStore(SQLiteStore):
    """A real SQLite store whose every read and write fails while `down` (a server gone)."""

    down = False

    def _fetch(self, sql: str, params: object = ()) -> list[tuple[object, ...]]:
        if self.down:
            raise StoreUnavailable("server closed the connection")
        return super()._fetch(sql, params)

    def _writing(self) -> object:
        if self.down:
            raise StoreUnavailable("server closed the connection")
        return super()._writing()


class AwayStore(SQLiteStore):
    """A real SQLite store that can be made unreachable, reads included (as a PostgreSQL
    server that went down)."""

    away = False

    def ids_ending(self, tail: str, limit: int) -> list[str]:
        if self.away:
            raise StoreUnavailable("server closed the connection")
        return super().ids_ending(tail, limit)

    def apply_fact_change(self, change: FactChange) -> bool:
        if self.away:
            raise StoreUnavailable("server closed the connection")
        return super().apply_fact_change(change)


def test_a_short_id_source_is_parked_while_the_store_is_away_and_resolved_on_drain(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    with Memory(tmp_path / "home", url, settings=Settings.load(env={}, embedder="hash", embed_cache="off")) as mem:
        said = mem.append("chat-1", "user", "the wifi password rotates monthly")
    store = AwayStore(url)
    try:
        facts = Facts(store, tmp_path / "home")
        store.away = True  # the short id cannot be looked up: the candidate is parked, not refused
        d = facts.curator.write({"text": "The wifi password rotates monthly", "source": short_id(said["id"])})
        assert d.action == "parked" and "journaled" in d.reason
        bad = facts.curator.write({"text": "The VPN needs a token", "source": "000000ffff"})  # no message has it
        assert bad.action == "parked" and len(facts.curator.pending()) == 2
        store.away = False
        done = facts.curator.drain()
        assert [x.action for x in done] == ["new", "rejected"] and "000000ffff" in done[1].reason
        (fact,) = facts.query()
        assert fact.text == "The wifi password rotates monthly"
        assert [(a.source_type, a.source) for a in fact.attestations] == [("event", said["id"])]
        assert facts.curator.pending() == []
    finally:
        store.close()


def test_gate_never_rests_on_one_signal() -> None:
    s = compare("Alice reports to Bob", "Bob reports to Alice", semantic=0.99)
    assert judge(s, True) != "confirm"  # the embedding alone would merge them
    s = compare("Deploys run on Fridays", "Deploys never run on Fridays", semantic=0.95)
    assert "negation" in s.differs and judge(s, True) == "supersede"
    s = compare("We pay 40 dollars a month", "We pay 45 dollars a month", semantic=0.97)
    assert judge(s, False) == "dispute"


def test_instant_sessions_are_never_promoted(sqlite_memory: Memory) -> None:
    scratch = sqlite_memory.append("scratch-1", "user", "my locker code is 4412", kind="instant")
    kept = sqlite_memory.append("chat-1", "user", "my locker code is 4412")
    facts = Facts(sqlite_memory.store, sqlite_memory.home)
    assert facts.curator.write({"text": "The locker code is 4412", "source": scratch["id"]}).action == "skipped"
    assert facts.curator.write({"text": "The locker code is 4412", "source": kept["id"]}).action == "new"


def test_vector_search_sees_facts_written_after_it_was_cached(with_embedder: Facts) -> None:
    facts = with_embedder
    first = facts.write("Ada enjoys hiking", valid_from="2024-01-01")
    assert [h.fact.id for h in facts.search("likes hiking")] == [first.id]
    second = facts.write("Ada enjoys sailing", valid_from="2024-01-01")
    facts.supersede(first.id, "Ada enjoys climbing", valid_from="2024-06-01")
    found = [h.fact.id for h in facts.search("likes sailing")]
    assert found[0] == second.id and first.id not in found  # cached vectors, filters still applied


class FlakyStore(SQLiteStore):
    """A real SQLite store whose connection drops on the next fact change: before the
    commit (`lose="before"`) or after it, with the acknowledgement lost (`lose="ack"`)."""

    lose: str | None = None

    def apply_fact_change(self, change: FactChange) -> bool:
        mode, self.lose = self.lose, None
        if mode == "before":
            raise StoreUnavailable("connection lost")
        applied = super().apply_fact_change(change)
        if mode == "ack":
            raise StoreUnavailable("connection lost after commit")
        return applied


@pytest.mark.parametrize("lose", ["before", "ack"])
def test_a_decision_cut_off_by_the_store_is_applied_once(tmp_path: Path, lose: str) -> None:
    store = FlakyStore(f"sqlite:///{tmp_path / 'f.db'}")
    facts = Facts(store, tmp_path / "home")
    try:
        facts.curator.write({"text": "The printer is on floor 2", "valid_from": "2024-01-01"})
        store.lose = lose
        d = facts.curator.write({"text": "The wifi password rotates monthly"})
        assert d.action == "parked" and "journaled" in d.reason and facts.curator.pending() == []
        facts.curator.write("The coffee machine is on floor 3")  # recovery: replay first
        texts = sorted(f.text for f in facts.query())
        assert texts == ["The coffee machine is on floor 3", "The printer is on floor 2", "The wifi password rotates monthly"]
        fresh = open_store(f"sqlite:///{tmp_path / 'g.db'}")
        copy = Facts(fresh, tmp_path / "elsewhere")
        copy.decisions = facts.decisions
        copy.restore_from_journal()
        assert copy.export_lines() == facts.export_lines()
        fresh.close()
    finally:
        store.close()


def test_a_change_told_with_both_values_supersedes() -> None:
    """Found by an auditor: "The DB port changed: Postgres now runs on port 5433 because 5432 clashes …"
    was only related to "… runs on port 5432." (naming the old value too, it was no swap), and when 6543
    later replaced 5433 the old 5432 stayed current beside it."""
    old = "The Postgres dev database runs on port 5432."
    s = compare("The DB port changed: Postgres now runs on port 5433 because 5432 clashes with the old cluster.", old, semantic=0.81)
    assert judge(s, True) == "supersede"
    s = compare("Postgres runs on 5432 and the test database on port 5433.", old, semantic=0.81)
    assert judge(s, True) != "supersede"  # both values, no change said: two things


def test_a_number_added_to_those_that_hold_is_no_change() -> None:
    """Found in review: "The Postgres dev database runs on port 5432 and Redis on 6379." superseded "… runs on
    port 5432." (one number differed and the rest agreed: read as an update); said as a change, it still is."""
    old = "The Postgres dev database runs on port 5432."
    assert judge(compare("The Postgres dev database runs on port 5432 and Redis on 6379.", old, semantic=0.85), True) != "supersede"
    assert judge(compare("The Postgres dev database runs on port 5433.", old, semantic=0.85), True) == "supersede"


def test_a_name_that_labels_a_correction_is_its_subject_not_a_new_value() -> None:
    """Found by a user asking when things happened: "Correction on Lisbon: the trip moved to the week after."
    superseded "Anyway, next Friday I fly to Oslo for Ingrid's wedding." (two names and a change said: read as
    Oslo replaced by Lisbon), and the Oslo trip vanished from recall."""
    s = compare("On Lisbon: the trip moved to the week after.", "Anyway, next Friday I fly to Oslo for Ingrid's wedding.", semantic=0.44)
    assert judge(s, True) != "supersede"
    s = compare("Update: we moved CI to GitHub Actions.", "Our CI runs on Jenkins.", semantic=0.43)
    assert judge(s, True) == "supersede"  # a label that names nothing new is no subject


CI = [("Our CI runs on Jenkins.", "2026-09-08T11:30:00Z"), ("CI is GitHub Actions now.", "2026-10-22T13:40:00Z")]


@pytest.mark.parametrize("order", [CI, CI[::-1]], ids=["older-first", "newer-first"])
def test_the_newer_by_valid_time_wins_whichever_is_curated_first(memory: Memory, order: list[tuple[str, str]]) -> None:
    # a chat's last turn closes after a quiet minute, its first at once: the newer passport was curated before the old
    # one and both stayed current (a travel agency's bot; the newer says the change, the older alone read as related)
    for text, at in order:
        memory.facts.curator.write({"text": text, "valid_from": at})
    assert [f.text for f in memory.facts.query()] == ["CI is GitHub Actions now."]
    jenkins = next(f for f in memory.facts.query(status="all") if "Jenkins" in f.text)
    assert jenkins.status == "superseded" and jenkins.valid_to == "2026-10-22T13:40:00.000000Z"


@pytest.mark.parametrize("order", [CI, CI[::-1]], ids=["older-first", "newer-first"])
def test_facts_write_with_valid_from_keeps_the_newer_in_either_order(home: Path, store_url: str, order: list[tuple[str, str]],
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from palimpsest.cli import main

    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
    for text, at in order:
        assert main(["--home", str(home), "--store", store_url, "facts", "write", text, "--valid-from", at]) == 0
    capsys.readouterr()
    assert main(["--home", str(home), "--store", store_url, "facts", "query", "--json"]) == 0
    assert [f["text"] for f in json.loads(capsys.readouterr().out)] == ["CI is GitHub Actions now."]


def test_the_decision_log_says_why_a_fact_was_retired(memory: Memory) -> None:
    """Found by an on-call team's lead: `supersede` and `relate` entries of the decision log held the change and no
    reason, so no inspection surface could say why "The primary DB is pg-atlas-01." had been retired; the curator's
    reason is journaled with its decision."""
    memory.facts.curator.write({"text": "We deploy to Heroku.", "valid_from": "2026-10-01T09:00:00Z"})
    d = memory.facts.curator.write({"text": "We now deploy to Fly.io.", "valid_from": "2026-10-02T09:00:00Z"})
    assert d.action == "supersede"
    logged = [x for _, x in memory.decisions.read("facts") if x.op == "supersede"]
    assert [x.meta.get("reason") for x in logged] == [d.reason]
    old = memory.facts.write("Our staging cluster is prod-use1-stg.")
    memory.facts.relate(memory.facts.write("The cluster is noisy.").id, old.id, reason="close but not the same")
    assert [x.meta.get("reason") for _, x in memory.decisions.read("facts") if x.op == "relate"] == ["close but not the same"]
    with pytest.raises(InvalidInput):
        memory.facts.close(old.id, reason="bad \ud800 reason")


def test_the_history_says_why_each_version_replaced_the_one_before(memory: Memory, home: Path, store_url: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The on-call lead's question, asked of the history (the tool and the CLI): why was the old value retired?"""
    from palimpsest import tools
    from palimpsest.cli import main

    old = memory.facts.curator.write({"text": "We deploy to Heroku.", "valid_from": "2026-10-01T09:00:00Z"}).fact
    new = memory.facts.curator.write({"text": "We now deploy to Fly.io.", "valid_from": "2026-10-02T09:00:00Z"})
    chain = tools.call(memory, "memory_fact_history", {"id": old.id}, enable_write=False)["facts"]
    assert [f["why"] for f in chain] == [[], [f"supersede: {new.reason}"]]
    memory.close()
    assert main(["--home", str(home), "--store", store_url, "facts", "history", old.id]) == 0
    assert f"    why: supersede: {new.reason}" in capsys.readouterr().out


# -- a recruiter's thirty candidates: a correction ends only its own person's slot -------------------------------------
def _turn(memory: Memory, session: str, text: str, at: str) -> None:
    """A user's turn and a reply, closed by the next user message so that it is distilled."""
    for i, (role, said) in enumerate([("user", text), ("assistant", "Noted."), ("user", "thanks")]):
        memory.append(session, role, said, created_at=f"{at}T10:0{i}:00Z")


def test_a_change_said_of_one_person_leaves_anothers_fact(home: Path, store_url: str) -> None:
    """Found by a recruiter's assistant: "Gabriel Souza now lives in Porto, not Lisbon anymore." (the local distiller's
    correction of itself) retired "Tomás Pereira — Lisbon too, …": "not Lisbon anymore" is Gabriel's old value."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        _turn(memory, "tomas", "Tomás Pereira — Lisbon too, backend in Go, no Rust.", "2026-10-10")
        _turn(memory, "gabriel", "Gabriel Souza now lives in Porto, not Lisbon anymore.", "2026-10-12")
        memory.worker().drain()
        assert sorted(f.text for f in memory.facts.query()) == [
            "Gabriel Souza now lives in Porto, not Lisbon anymore.", "Tomás Pereira — Lisbon too, backend in Go, no Rust."]


def test_corrects_naming_only_the_persons_name_names_no_fact(home: Path, store_url: str) -> None:
    """Found by a recruiter's assistant: `--corrects "Svetlana Ivanova expects 110k"` (no such fact) retired "Svetlana
    Ivanova lives in Oslo.": her name was half the words quoted."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        oslo = memory.facts.curator.write("Svetlana Ivanova lives in Oslo.").fact
        d = memory.facts.curator.write({"text": "Svetlana Ivanova's salary expectation is now 130k.",
                                        "corrects": "Svetlana Ivanova expects 110k"})
        assert d.action != "supersede" and "is not an open fact" in d.reason
        assert memory.facts.get(oslo.id).status == "current"  # type: ignore[union-attr]


def _recruiter(home: Path, fake: object) -> Memory:
    s = Settings.load(env={}, embedder="none", llm_url=fake.url, llm_model="m", llm_backoff="0,0,0",  # type: ignore[attr-defined]
                      llm_structured="json_schema", compact_after=0)
    return Memory(home, settings=s)


def _distilled(facts: list[str] | None = None, corrections: list[tuple[str, str]] | None = None) -> str:
    return json.dumps({"summary": "Notes on candidates.", "tasks": [],
                       "facts": [{"text": t, "kind": "fact", "entities": [], "valid_from": None} for t in facts or []],
                       "corrections": [{"text": t, "replaces": r} for t, r in corrections or []]})


def test_a_models_correction_of_another_slot_of_a_person_ends_nothing(home: Path) -> None:
    """Found by a recruiter's assistant: a model's correction naming a fact of the same person, or of a namesake, was
    taken ("Gabriel Souza now lives in Porto" ended "Gabriel Souza knows Rust well"; Ana Reyes's offer ended "Ana Ruiz
    moved to Berlin"). A correction ends the same slot of the same person, else it is decided as a statement, and the
    refusal is journaled with why."""
    from fakeopenai import FakeOpenAI, Reply

    with FakeOpenAI(lambda body: Reply(content=json.dumps({"action": "related", "slot": "-"}))) as fake, _recruiter(home, fake) as memory:
        fake.push(Reply(content=_distilled(["Gabriel Souza knows Rust well.", "Ana Ruiz moved to Berlin."])))
        _turn(memory, "a", "Gabriel Souza knows Rust well. Ana Ruiz moved to Berlin.", "2026-10-01")
        memory.worker(tasks=["distill"]).drain()
        ids = {f.text: f.id for f in memory.facts.query()}
        fake.push(Reply(content=_distilled(corrections=[("Gabriel Souza now lives in Porto.", ids["Gabriel Souza knows Rust well."]),
                                                        ("We can now offer Ana Reyes up to 200k.", ids["Ana Ruiz moved to Berlin."])])))
        _turn(memory, "b", "Gabriel Souza now lives in Porto. Called Ana Reyes back: we can now go up to 200k.", "2026-10-15")
        memory.worker(tasks=["distill"]).drain()
        assert all(memory.facts.get(i).status == "current" for i in ids.values())
        refused = [d for _, d in memory.facts.decisions.read("facts", ("decision",)) if d.op == "refused"]
        assert {d.subject for d in refused} == set(ids.values()) and all("another slot" in d.meta["reason"] for d in refused)


def test_two_corrections_of_one_fact_in_one_message_hold_from_when_it_was_said(home: Path) -> None:
    """Found by a recruiter's assistant: both sentences of "o Gabriel Souza mudou-se para o Porto este mês. Gabriel Souza
    now lives in Porto, not Lisbon anymore." (said 2026-10-15) corrected "Gabriel Souza lives in Lisbon."; the second could
    not start after the first, and was dated at distillation time."""
    from fakeopenai import FakeOpenAI, Reply

    with FakeOpenAI(lambda body: Reply(content=json.dumps({"action": "related", "slot": "-"}))) as fake, _recruiter(home, fake) as memory:
        fake.push(Reply(content=_distilled(["Gabriel Souza lives in Lisbon."])))
        _turn(memory, "a", "Gabriel Souza lives in Lisbon.", "2026-09-01")
        memory.worker(tasks=["distill"]).drain()
        (lisbon,) = memory.facts.query()
        said = "o Gabriel Souza mudou-se para o Porto este mês. Gabriel Souza now lives in Porto, not Lisbon anymore."
        fake.push(Reply(content=_distilled(corrections=[("o Gabriel Souza mudou-se para o Porto este mês.", lisbon.id),
                                                        ("Gabriel Souza now lives in Porto, not Lisbon anymore.", lisbon.id)])))
        _turn(memory, "b", said, "2026-10-15")
        memory.worker(tasks=["distill"]).drain()
        (current,) = memory.facts.query()
        assert current.text == "Gabriel Souza now lives in Porto, not Lisbon anymore."
        assert current.valid_from.startswith("2026-10-15") and memory.facts.get(lisbon.id).valid_to.startswith("2026-10-15")  # type: ignore[union-attr]
