"""Erasure of an end customer's data (`palimpsest erase`, `Memory.erase`), on both backends.

The case: a support bot on one memory for many customers, each customer's sessions with
`channel=<customer>` and the tag `user:<customer>`; one customer asks to be forgotten (GDPR
article 17). Before, nothing erased: her words stayed in the database, `facts.jsonl` and the
facts and distill journals, and recall still showed a fact the bot had kept from her message.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory, Settings, tools
from palimpsest.capture.client import Spool
from palimpsest.capture.notify import erase_held
from palimpsest.cli import erase as erase_cli
from palimpsest.cli import main
from palimpsest.erased import Erased, session_digest
from palimpsest.errors import Conflict, InvalidInput, NotFound
from palimpsest.importers import export_memory, import_file

LENA = "cus_lnovak"
PHONE = "My phone is +33 6 12 34 56 78, customer ref LN-55102."
SHARED = "The shipping hub for Paris is Rungis."
UNIQUE = ("LN-55102", "Oberkampf", "Novak", "lnovak")
CUSTOMERS = {
    LENA: [["Bonjour, Lena Novak here. My address is 7 Rue Oberkampf, 75011 Paris. " + PHONE, "Thanks Lena, noted."],
           ["The parcel for order #77120 never arrived at Rue Oberkampf.", "I've opened a trace with the courier."]],
    "cus_srossi": [["Ciao, Sofia Rossi, Basic plan. Address: Via Roma 12, 10121 Torino.", "Ciao Sofia, noted."]],
    "cus_bcarter": [["Basic plan. I returned the keyboard (order #66342), address 77 King St W, Toronto.", "Refund approved."]],
}


def _write(memory: Memory) -> dict[str, list[str]]:
    """The bot's writes, through the tools as the bot made them; the ids of each customer's user messages."""
    said: dict[str, list[str]] = {}
    for customer, conversations in CUSTOMERS.items():
        for n, turns in enumerate(conversations, 1):
            for role, text in zip(("user", "assistant"), turns):
                r = tools.call(memory, "memory_append", {"session": f"{customer}-{n}", "role": role, "content": text,
                                                         "channel": customer, "agent": "supportbot",
                                                         "settings": {"tags": [f"user:{customer}"]}}, enable_write=True)
                if role == "user":
                    said.setdefault(customer, []).append(r["id"])
    remember(memory, PHONE, said[LENA][0], LENA)
    remember(memory, "My shipping address is Via Roma 12, 10121 Torino.", said["cus_srossi"][0], "cus_srossi")
    shared = memory.facts.write(SHARED, source=f"event:{said['cus_bcarter'][0]}")
    memory.facts.confirm(shared.id, source=f"event:{said[LENA][1]}")
    for session in memory.journal.sessions():
        memory.distiller.close_turn(session)
    memory.worker().drain()
    return said


def remember(memory: Memory, text: str, source: str, customer: str) -> None:
    tools.call(memory, "memory_remember", {"text": text, "source": f"event:{source}", "kind": "fact", "entities": [customer]},
               enable_write=True)


def _others(memory: Memory) -> dict[str, Any]:
    """What the other customers have: their recall blocks, messages and facts."""
    out: dict[str, Any] = {}
    for customer in CUSTOMERS:
        if customer != LENA:
            out[customer] = (memory.recall(f"{customer}-9", "what is my address?", tag=f"user:{customer}").block,
                             [m.content for m in memory.browse(channel=customer)],
                             sorted(f.text for f in memory.facts.query() if customer in f.entities))
    return out


def _traces(home: Path) -> list[str]:
    """The files of the home that still hold a unique string of the erased customer (a `grep -r`)."""
    found = []
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes().lower()
            found += [f"{path.relative_to(home)}: {s}" for s in UNIQUE if s.lower().encode() in data]
    return found


@pytest.fixture
def bot(home: Path, store_url: str) -> Memory:
    settings = Settings.load(env={}, embedder="hash", enable_write=True)
    m = Memory(home, store_url, settings=settings)
    yield m
    m.close()


def test_erase_by_tag_leaves_no_trace_and_the_others_as_they_were(bot: Memory, home: Path, store_url: str) -> None:
    said = _write(bot)
    others = _others(bot)
    assert _traces(home)  # (her words are in the home before)
    done = bot.erase(tag=f"user:{LENA}")
    assert done.sessions == [f"{LENA}-1", f"{LENA}-2"] and done.messages == 4
    assert _traces(home) == []
    assert "LN-55102" not in bot.recall("x-1", "Lena Novak phone customer ref").block
    assert not bot.search("Oberkampf", mode="substring").hits
    assert _others(bot) == others
    shared = next(f for f in bot.facts.query() if f.text == SHARED)  # attested by her message and by Ben's: it stays,
    assert [a.source for a in shared.attestations] == [said["cus_bcarter"][0]]  # without her attestation
    if store_url.startswith("postgresql"):
        dump = subprocess.run(["pg_dump", store_url], capture_output=True, text=True, check=True).stdout
        assert not [s for s in UNIQUE if s.lower() in dump.lower()]


def test_erase_by_channel_and_by_session(bot: Memory, home: Path) -> None:
    _write(bot)
    assert bot.erase(sessions=[f"{LENA}-2"]).sessions == [f"{LENA}-2"]
    assert "#77120" not in "".join(m.content for m in bot.browse(channel=LENA))
    assert [m.session for m in bot.browse(channel=LENA)] == [f"{LENA}-1", f"{LENA}-1"]
    assert bot.erase(channel=LENA).sessions == [f"{LENA}-1"]
    assert _traces(home) == []


def test_nothing_comes_back_by_rebuild_replay_or_import_of_an_earlier_export(bot: Memory, home: Path, tmp_path: Path) -> None:
    _write(bot)
    earlier = tmp_path / "earlier.jsonl"
    with open(earlier, "w") as out:
        export_memory(bot, out)
    others = _others(bot)
    bot.erase(tag=f"user:{LENA}")
    bot.rebuild()
    bot.facts.replay()
    report = import_file(bot, earlier)
    assert report.skipped["events of erased sessions"] == 6
    assert _traces(home) == []
    assert not bot.browse(channel=LENA)
    assert _others(bot) == others


def test_a_new_store_and_an_older_snapshot_bring_no_erased_fact_back(home: Path, store_url: str, tmp_path: Path) -> None:
    settings = Settings.load(env={}, embedder="hash", enable_write=True)
    with Memory(home, store_url, settings=settings) as m:
        _write(m)
        older = tmp_path / "facts-before.jsonl"
        older.write_bytes((home / "facts.jsonl").read_bytes())
        m.erase(tag=f"user:{LENA}")
        kept = sorted(f.text for f in m.facts.query())
    # the store lost: a new one restores the facts from the (rewritten) system journal when opened
    with Memory(home, f"sqlite:///{tmp_path / 'new.db'}", settings=settings) as m:
        assert sorted(f.text for f in m.facts.query()) == kept
    # the facts journal lost too, and a copy of facts.jsonl from before the erasure restored: the erasure record holds
    shutil.rmtree(home / "system" / "sessions" / "facts")
    with Memory(home, f"sqlite:///{tmp_path / 'newer.db'}", settings=settings) as m:
        m.facts.restore_snapshot(older)
        assert PHONE not in [f.text for f in m.facts.query()]
        assert SHARED in [f.text for f in m.facts.query()]
    assert _traces(home) == []


def test_dry_run_and_no_yes_change_nothing(bot: Memory, home: Path) -> None:
    _write(bot)
    before = sorted(p.name for p in home.rglob("*")), bot.count_messages()
    plan = bot.erase(tag=f"user:{LENA}", dry_run=True)
    assert not plan.done and plan.sessions == [f"{LENA}-1", f"{LENA}-2"] and len(plan.facts) >= 1
    assert plan.attestations and plan.documents == 0
    assert (sorted(p.name for p in home.rglob("*")), bot.count_messages()) == before
    assert _traces(home)


def test_unknown_names_are_refused_and_nothing_is_erased(bot: Memory, home: Path) -> None:
    _write(bot)
    count = bot.count_messages()
    with pytest.raises(NotFound, match="no session carries the tag user:cus_nobody"):
        bot.erase(tag="user:cus_nobody")
    with pytest.raises(NotFound):
        bot.erase(sessions=[f"{LENA}-1", "cus_nobody-1"])
    with pytest.raises(NotFound, match="no session of channel"):
        bot.erase(channel="cus_nobody")
    with pytest.raises(InvalidInput):
        bot.erase()
    assert bot.count_messages() == count and _traces(home)


def test_the_cli_erases_only_with_yes(home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings.load(env={}, embedder="hash", enable_write=True)
    with Memory(home, settings=settings) as m:
        _write(m)
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "hash")
    monkeypatch.setenv("PALIMPSEST_URL", "http://127.0.0.1:9")  # (no server there)
    cli = ["--home", str(home), "erase", "--tag", f"user:{LENA}"]
    assert main(cli) == 2
    out, err = capsys.readouterr()
    assert "would erase 2 sessions" in out and "--yes" in err and _traces(home)
    assert main([*cli, "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["done"] is False and _traces(home)
    monkeypatch.setattr(erase_cli, "server_answers", lambda url, store=None: True)  # a server of this store runs
    assert main([*cli, "--yes"]) == 9
    assert "stop it" in capsys.readouterr().err and _traces(home)
    monkeypatch.setattr(erase_cli, "server_answers", lambda url, store=None: False)
    # two customers in one command: refused, not the last alone (a companion app's operator's user:a was left)
    assert main([*cli, "--tag", "user:cus_other", "--yes"]) == 2
    assert "once per command" in capsys.readouterr().err and _traces(home)
    assert main([*cli, "--yes"]) == 0
    assert "erased 2 sessions" in capsys.readouterr().out and _traces(home) == []


def test_the_sqlite_file_keeps_no_deleted_text(sqlite_memory: Memory, home: Path) -> None:
    _write(sqlite_memory)
    sqlite_memory.erase(channel=LENA)
    assert b"oberkampf" not in (home / "palimpsest.db").read_bytes().lower()


# -- summaries and wiki pages drawn from her sessions ------------------------------------------------------------
COURIER = {LENA: ("Lena Novak", "My parcel to 7 Rue Oberkampf in Paris never came, customer ref LN-55102."),
           "cus_srossi": ("Sofia Rossi", "My parcel to Via Roma 12 in Torino never came, customer ref SR-40417.")}


def _compacted(memory: Memory) -> None:
    """Each customer's long session (60 turns: leaves, a branch and a root by the local fallback), and the wiki mined
    from the leaves: a page of her own (Lena Novak, Rue Oberkampf) and one both customers' leaves wrote (Chronopost)."""
    for customer, (name, said) in COURIER.items():
        street = said.split(" to ")[1].split(" in ")[0]
        lines = [said, f"The courier Chronopost left a note at {street} for {name}."]
        memory.ingest_session(f"{customer}-1", [
            {"role": "user", "content": f"{lines[i // 2 % 2]} Message {i}.", "metadata": {"speaker": name}} if i % 2 == 0 else
            {"role": "assistant", "content": f"Noted: trace {i} opened with the courier.", "metadata": {"speaker": "Support"}}
            for i in range(60)], channel=customer, settings={"tags": [f"user:{customer}"]})
        memory.summaries.compact(f"{customer}-1", final=True, use_llm=False)
    memory.worker().drain()


def _pages(memory: Memory) -> list[Any]:
    return sorted((t["title"], t["entities"], t["aliases"], sorted(s.text for s in memory.store.wiki_statements([t["id"]])))
                  for t in memory.wiki.list(limit=1000))


def _summaries(memory: Memory, customer: str) -> list[tuple[int, str]]:
    return sorted((s.depth, s.content) for s in memory.store.session_summaries(f"{customer}-1", live=False))


@pytest.fixture
def compacting(home: Path, store_url: str) -> Memory:
    settings = Settings.load(env={}, embedder="hash", enable_write=True, distill=False, tags_suggest=False, compact_after=0,
                             summary_leaf_tokens=800, summary_branch_tokens=600, summary_max_tokens=150)
    m = Memory(home, store_url, settings=settings)
    yield m
    m.close()


def test_her_summaries_and_wiki_pages_go_and_the_others_stay(compacting: Memory, home: Path, store_url: str,
                                                              tmp_path: Path) -> None:
    _compacted(compacting)
    assert {s.depth for s in compacting.store.session_summaries(f"{LENA}-1", live=False)} == {0, 1, 2}
    assert {"Lena Novak", "Rue Oberkampf", "Chronopost"} <= {t["title"] for t in compacting.wiki.list(limit=1000)}
    earlier = tmp_path / "earlier.jsonl"
    with open(earlier, "w") as out:
        export_memory(compacting, out)
    theirs = _summaries(compacting, "cus_srossi")
    assert any("Oberkampf" in t or "Novak" in t for _, _, _, texts in _pages(compacting) for t in texts)
    compacting.erase(tag=f"user:{LENA}")
    pages = _pages(compacting)
    assert _traces(home) == []
    assert _summaries(compacting, "cus_srossi") == theirs and _summaries(compacting, LENA) == []
    assert {"Sofia Rossi", "Via Roma", "Chronopost"} <= {title for title, *_ in pages}
    if store_url.startswith("postgresql"):
        dump = subprocess.run(["pg_dump", store_url], capture_output=True, text=True, check=True).stdout
        assert not [s for s in UNIQUE if s.lower() in dump.lower()]
    compacting.rebuild()
    compacting.replay_decisions()
    import_file(compacting, earlier)
    compacting.worker().drain()
    assert _traces(home) == []
    assert _summaries(compacting, "cus_srossi") == theirs and _summaries(compacting, LENA) == []
    assert _pages(compacting) == pages
    with Memory(home, f"sqlite:///{tmp_path / 'new.db'}", settings=compacting.settings) as fresh:  # replayed into a new store
        fresh.rebuild()
        assert _pages(fresh) == pages and _summaries(fresh, "cus_srossi") == theirs
    assert _traces(home) == []


def test_a_spool_resending_her_events_is_refused(bot: Memory, home: Path) -> None:
    """A capture client's spool on another machine still holds her batches: sent again after the erasure, the server
    would have journaled and indexed them anew (only import skipped erased sessions)."""
    _write(bot)
    bot.erase(tag=f"user:{LENA}")
    batch = [{"role": "user", "content": CUSTOMERS[LENA][0][0], "event_key": "spool-1"}]
    with pytest.raises(Conflict, match="was erased"):
        bot.capture(f"{LENA}-1", batch, channel=LENA)
    with pytest.raises(Conflict, match="was erased"):
        bot.append(f"{LENA}-2", "user", "The parcel for order #77120 never arrived at Rue Oberkampf.")
    with pytest.raises(Conflict, match="was erased"):
        bot.ingest_session(f"{LENA}-1", batch)
    assert _traces(home) == [] and not bot.browse(channel=LENA)
    assert bot.capture("cus_srossi-2", batch, channel="cus_srossi")["events"]  # another session's events are taken


@pytest.mark.parametrize("step", ["rewrite", "erase_sessions", "erase_facts", "scrub"])
def test_the_same_command_run_again_finishes_an_erasure_cut_short(bot: Memory, home: Path, step: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The erasure is recorded first; a crash after it (here: one step raising once, as a full disk would) left her
    facts and their facts.jsonl lines once her index rows were gone, and the same command then found no session."""
    _write(bot)
    others = _others(bot)
    owner = bot.kernel.decisions if step == "rewrite" else bot.store
    real = getattr(owner, step)
    def once(*args: Any, **kw: Any) -> Any:
        monkeypatch.setattr(owner, step, real)
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(owner, step, once)
    with pytest.raises(OSError):
        bot.erase(tag=f"user:{LENA}")
    done = bot.erase(tag=f"user:{LENA}")
    assert done.done and done.facts
    assert _traces(home) == [] and _others(bot) == others
    with pytest.raises(NotFound):  # finished: a third run has nothing left to do
        bot.erase(tag=f"user:{LENA}")


def test_a_moved_home_erases_everything(home: Path, store_url: str, tmp_path: Path) -> None:
    """A message row carries the journal id of the home that wrote it (a home moved to a new laptop keeps owning its
    rows): the erasure of a home moved to another folder still finds and deletes every row of hers."""
    settings = Settings.load(env={}, embedder="hash", enable_write=True)
    with Memory(home, store_url, settings=settings) as m:
        _write(m)
    moved = tmp_path / "moved"
    shutil.copytree(home, moved, symlinks=True)
    shutil.rmtree(home)
    url = store_url.replace(str(home), str(moved))
    with Memory(moved, url, settings=settings) as m:
        others = _others(m)
        assert m.erase(tag=f"user:{LENA}").messages == 4
        assert not m.browse(channel=LENA) and _others(m) == others
    assert _traces(moved) == []
    if store_url.startswith("postgresql"):
        dump = subprocess.run(["pg_dump", store_url], capture_output=True, text=True, check=True).stdout
        assert not [s for s in UNIQUE if s.lower() in dump.lower()]


def test_another_home_on_the_store_does_not_bring_her_back(bot: Memory, store_url: str, tmp_path: Path) -> None:
    """Two homes on one store: her session written through both. The erasure ran in one; the other home's journal
    still held her session, and its next catch-up indexed it again from offset 0 (without channel or tags, so no
    --tag or --channel found it any more)."""
    _write(bot)
    other = Memory(tmp_path / "B", store_url, settings=bot.settings)
    tools.call(other, "memory_append", {"session": f"{LENA}-1", "role": "user", "content": "Novak again, ref LN-55102",
                                        "channel": LENA, "settings": {"tags": [f"user:{LENA}"]}}, enable_write=True)
    theirs = other.journal.id
    other.close()
    done = bot.erase(tag=f"user:{LENA}")
    with Memory(tmp_path / "B", store_url, settings=bot.settings) as b:
        b.catch_up()
        assert not b.browse(session=f"{LENA}-1") and not b.search("LN-55102", mode="substring").hits
        assert done.other_journals == [theirs]  # the erasure said where her journal stays
        with pytest.raises(Conflict, match="was erased"):
            b.append(f"{LENA}-1", "user", "Novak once more")
        assert _traces(tmp_path / "B")  # her journal is still in that home, until the erasure is finished there
        assert b.erase(finish=True).sessions == [f"{LENA}-1"]
        assert _traces(tmp_path / "B") == []
        b.rebuild()
        assert not b.browse(session=f"{LENA}-1")


def test_a_session_named_like_a_word_clears_no_other_customers_text() -> None:
    """Session ids are the client's: a session called `billing` was erased, and the journal lines kept for other
    customers lost every string `billing` (a tag's value, a fact's text and entities)."""
    erased = Erased({session_digest("billing")}, {"fct_gone"})
    tag = {"session_id": "cus_other-1", "key": "topic", "value": "billing"}
    assert erased.scrub_line({"id": "evt_1", "metadata": {"change": {"tags": [tag]}}})["metadata"]["change"]["tags"] == [tag]
    fact = {"id": "fct_9", "text": "billing", "entities": ["billing"], "supersedes": "fct_gone"}
    kept = erased.scrub_line({"id": "evt_2", "metadata": {"change": {"facts": [fact]}}})["metadata"]["change"]["facts"]
    assert kept == [{**fact, "supersedes": None}]  # (a reference to an erased fact is cleared)
    assert erased.scrub_line({"id": "evt_3", "metadata": {"change": {"tags": [{**tag, "session_id": "billing"}]}}}) is None
    assert erased.scrub_line({"id": "evt_4", "metadata": {"change": {"deletes": [["session", "billing", "topic", "x"]]}}}) is None
    assert erased.scrub_line({"id": "evt_5", "metadata": {"session": "billing", "output": {}}}) is None  # a distilled turn


def test_her_batches_in_this_homes_capture_spool_go(bot: Memory, home: Path) -> None:
    """The capture client's spool in this home (waiting, dead/, corrupt/) and Codex's held notify payloads kept her
    words after the erasure, while the docs said only another machine's spool stays."""
    _write(bot)
    spool = Spool(home)
    spool.put({"session": f"{LENA}-1", "events": [{"role": "user", "content": "Lena Novak, Rue Oberkampf"}]})
    spool.set_aside(spool.put({"session": f"{LENA}-2", "events": [{"role": "user", "content": "LN-55102"}]}), spool.dead, "409")
    spool.corrupt.mkdir(parents=True)
    (spool.corrupt / "1-x.json").write_text('{"session": "cus_lnovak-1", "events": [{"content": "Novak')
    theirs = spool.put({"session": "cus_srossi-1", "events": [{"role": "user", "content": "Via Roma 12"}]})
    held = home / "capture-state" / "codex-notify"
    held.mkdir(parents=True)
    (held / f"{LENA}-1.jsonl").write_text('{"input-messages": ["Lena Novak here"]}\n')
    bot.eraser.held = erase_held(home)  # (as `palimpsest erase` sets it)
    bot.erase(tag=f"user:{LENA}")
    assert _traces(home) == []
    assert spool.oldest() == [theirs]


def test_the_dry_run_lists_kept_facts_whose_chain_touched_an_erased_one(bot: Memory) -> None:
    """An operator's supersede of her phone fact, written with no source, stays (it cites none of her messages) and
    says her phone number: the dry run lists it to be checked by hand."""
    _write(bot)
    phone = next(f for f in bot.facts.query() if f.text == PHONE)
    newer = bot.facts.supersede(phone.id, "Lena Novak's phone is +33 6 99 88 77 66 (LN-55102).")
    newest = bot.facts.supersede(newer.id, "Lena Novak's phone is +33 6 11 22 33 44 (LN-55102).")
    plan = bot.erase(tag=f"user:{LENA}", dry_run=True)
    assert phone.id in plan.facts and plan.check == sorted([newer.id, newest.id])
