"""The topic wiki (issue 12): pages mined from leaf summaries on LoCoMo, versions and the
backfill, tags as identity hints, and bad input — on both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import palimpsest.wiki as wiki_mod
from palimpsest import Memory
from palimpsest.errors import InvalidInput, NotFound
from palimpsest.facts.local import sentences
from palimpsest.importers import import_data
from palimpsest.wiki import Wiki
from palimpsest.wiki import text as tx

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo-dev.json"
FIXTURE = Path(__file__).parent / "fixtures" / "locomo_small.json"


def quiet(memory: Memory, **extra: Any) -> Memory:
    memory.settings = memory.settings.replace(distill=False, tool_synth=False, compact_after=0, tags_suggest=False, **extra)
    return memory


def leaves(memory: Memory) -> list[Any]:
    return [leaf for s in memory.sessions(limit=1000) for leaf in memory.store.session_summaries(s.id, 0)]


def snapshot(w: Wiki) -> Any:
    topics = w.list(limit=1000)
    return [(t["id"], t["title"], t["version"], t["aliases"], t["entities"],
             [(s.id, s.text, s.state, s.summaries, s.messages) for s in w.store.wiki_statements([t["id"]])]) for t in topics]


def say(memory: Memory, session: str, lines: list[tuple[str | None, str]], **attrs: Any) -> str:
    """A session of (speaker, text) turns, compacted into one leaf; returns the leaf id."""
    memory.ingest_session(session, [{"role": "user" if i % 2 == 0 else "assistant", "content": text,
                                     "metadata": {"speaker": who} if who else {}} for i, (who, text) in enumerate(lines)], **attrs)
    memory.summaries.compact(session, final=True, use_llm=False)
    return memory.store.session_summaries(session, 0)[-1].id


# -- LoCoMo -------------------------------------------------------------------------
def test_locomo_pages(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    quiet(memory, wiki_backfill_delay=0.0)
    doc = json.loads((EVAL if EVAL.exists() else FIXTURE).read_text())
    conv = doc[0]
    import_data(memory, {**conv, "qa": []}, "locomo")
    for s in memory.sessions(limit=1000):
        memory.summaries.compact(s.id, final=True)
    memory.worker().drain()
    w = memory.wiki
    all_leaves = leaves(memory)
    assert w.stats()["leaves_mined"] == len(all_leaves) and not w.stale()

    # one page per speaker
    speakers = {conv["conversation"]["speaker_a"], conv["conversation"]["speaker_b"]}
    people = [t for t in w.list(limit=1000) if t["kind"] == "person"]
    assert sorted(t["title"] for t in people) == sorted(speakers)

    # one page per recurring subject: every name said in two leaves or more has its page (its
    # own, or a speaker's or longer name's as an alias), and every subject page is such a name
    seen: dict[str, set[str]] = {}
    for leaf in all_leaves:
        for line in leaf.content.splitlines():
            if not line.startswith("Identifiers:"):
                for sentence in sentences(line.partition("] ")[2] if line.startswith("[#") else line):
                    for n in tx.names(sentence):
                        seen.setdefault(tx.key(n), set()).add(leaf.id)
    recurring = {k for k, ids in seen.items() if len(ids) >= 2}
    longer = {word for k in recurring if " " in k for word in k.split()}  # "potter" beside "harry potter" is that name
    assert all(w.find(k) for k in recurring - longer)
    subjects = [t for t in w.list(limit=1000) if t["kind"] == "subject"]
    assert {tx.key(t["title"]) for t in subjects} <= recurring
    assert len({(t["kind"], tx.key(t["title"])) for t in w.list(limit=1000)}) == len(w.list(limit=1000))
    assert subjects, "LoCoMo conversations have recurring subjects"

    # every statement traceable to a message of one of its leaves, whose text holds it
    by_leaf = {leaf.id: set(leaf.sources) for leaf in all_leaves}
    for t in w.list(limit=1000):
        for st in w.store.wiki_statements([t["id"]]):
            assert st.messages and st.summaries
            msgs = memory.store.get_messages(st.messages)
            assert len(msgs) == len(st.messages)
            assert all(any(m.id in by_leaf[x] for x in st.summaries) for m in msgs)
            assert any(tx.norm(st.text) in tx.norm(m.content or "") for m in msgs)

    # re-running at the same version changes nothing
    before, patches = snapshot(w), w.stats()["patches"]
    for leaf in all_leaves:
        assert w.mine(leaf.id)["patches"] == 0
        assert w.mine(leaf.id, force=True)["patches"] == 0
    memory.store.enqueue([wiki_mod.leaf_job(leaf.id) for leaf in all_leaves])
    memory.worker().drain()
    assert snapshot(w) == before and w.stats()["patches"] == patches

    # raising the version re-mines every leaf once, in the low-priority backfill
    mined: list[str] = []
    original = Wiki.mine
    def counted(self: Wiki, sid: str, **kw: Any) -> dict[str, Any]:
        mined.append(sid)
        return original(self, sid, **kw)

    monkeypatch.setattr(Wiki, "mine", counted)
    monkeypatch.setattr(wiki_mod, "WIKI_PIPELINE_VERSION", 2)
    assert len(w.stale(1000)) == len(all_leaves)
    assert w.queue_backfill()
    memory.worker().drain()
    assert sorted(mined) == sorted(leaf.id for leaf in all_leaves)
    assert not w.stale() and not w.queue_backfill()
    assert {m.version for m in memory.store.wiki_leaf_marks([x.id for x in all_leaves]).values()} == {2}
    assert snapshot(w) == before  # the same pipeline finds the same statements
    memory.worker().drain()
    assert len(mined) == len(all_leaves)


# -- bad input -------------------------------------------------------------------------
def test_a_leaf_with_no_topics(memory: Memory) -> None:
    quiet(memory)
    leaf = say(memory, "plain", [(None, "ok so this is all lower case and says nothing much"), (None, "right, nothing at all here")])
    result = memory.wiki.mine(leaf)
    assert result["patches"] == 0 and memory.wiki.list() == []
    assert memory.store.wiki_leaf_marks([leaf])[leaf].version == wiki_mod.WIKI_PIPELINE_VERSION


def test_tool_calls_make_no_pages(memory: Memory) -> None:
    """Found by an MCP client's user: the local miner made a page titled "Called" out of tool
    calls' sentences ("(tool bash) Called bash with cmd=cat file0.log …"), which recall then showed."""
    memory.settings = memory.settings.replace(distill=False, compact_after=0, tags_suggest=False)
    for i in range(4):
        memory.append("ops", "assistant", "", tool_name="bash", tool_args={"cmd": f"cat file{i}.log"}, tool_result=f"Kestrel line {i}")
    memory.worker(tasks=["tool-synth"]).drain()
    memory.summaries.compact("ops", final=True, use_llm=False)
    leaf = memory.store.session_summaries("ops", 0)[-1].id
    memory.wiki.mine(leaf)
    assert [t["title"] for t in memory.wiki.list()] == []
    from palimpsest.wiki.text import units

    summary = memory.store.get_summaries([leaf])[0]
    messages = {m.id: m for m in memory.store.get_messages(summary.sources)}
    assert units(summary, messages)[0] == []  # no sentence of a tool call is a statement to mine


def test_two_topics_with_the_same_title(memory: Memory) -> None:
    quiet(memory)
    w = memory.wiki
    first = say(memory, "s1", [("Atlas", "I am the person called Atlas and I maintain the billing service."),
                               ("Bo", "Nice to meet you, I run the payments team at the company.")])
    w.mine(first)
    memory.ingest_session("s2", [{"role": "user", "content": "Kick-off of the new rewrite project today with everyone.",
                                  "metadata": {"speaker": "Bo"}}])
    memory.tags.add("project:Atlas", session="s2")
    memory.summaries.compact("s2", final=True)
    w.mine(memory.store.session_summaries("s2", 0)[0].id)
    both = [t for t in w.list(limit=100) if t["title"] == "Atlas"]
    assert sorted(t["kind"] for t in both) == ["person", "project"]
    with pytest.raises(InvalidInput, match="2 topics are called 'Atlas'"):
        w.show("Atlas")
    assert {w.show(t["id"])["topic"]["kind"] for t in both} == {"person", "project"}
    # the session's tags break the tie: a leaf of a session tagged project:Atlas that names Atlas patches the project
    memory.ingest_session("s3", [{"role": "user", "content": "The roadmap for Atlas now includes the invoice export feature.",
                                  "metadata": {"speaker": "Bo"}}], settings={"tags": ["project:atlas"]})
    memory.tags.sync_rules("s3")
    memory.summaries.compact("s3", final=True)
    w.mine(memory.store.session_summaries("s3", 0)[0].id)
    project = next(t for t in both if t["kind"] == "project")
    texts = [s["text"] for s in w.show(project["id"])["current"]]
    assert any("invoice export" in t for t in texts)
    # the person Atlas speaking in that session still has one page: the speaker's
    w.mine(say(memory, "s3", [("Atlas", "I finished the quarterly report for the finance people today.")]))
    person = next(t for t in both if t["kind"] == "person")
    assert any("quarterly report" in s["text"] for s in w.show(person["id"])["current"])
    assert len([t for t in w.list(limit=100) if t["title"] == "Atlas"]) == 2


def test_a_contradiction_is_kept_as_a_dispute(memory: Memory) -> None:
    quiet(memory)
    w = memory.wiki
    memory.ingest_session("ops", [{"role": "user", "content": "placeholder turn before the tag", "metadata": {"speaker": "Ana"}}])
    memory.tags.add("project:billing", session="ops")
    w.mine(say(memory, "ops", [("Ana", "The deploy window for the billing service is Friday at noon.")]))
    memory.ingest_session("ops2", [{"role": "user", "content": "x y z", "metadata": {}}])
    memory.tags.add("project:billing", session="ops2")
    w.mine(say(memory, "ops2", [("Ana", "Actually, the deploy window for the billing service is Thursday at noon.")]))
    page = w.show("billing")
    disputed = {s["text"] for s in page["disputed"]}
    assert any("Friday" in t for t in disputed) and any("Thursday" in t for t in disputed)
    assert all(s["disputed_with"] for s in page["disputed"])
    assert "## Disputed" in page["markdown"]
    assert any(op["op"] == "dispute" for p in w.history("billing") for op in p["ops"])
    statement = page["disputed"][0]["id"]  # the id a recall line shows: its page (no tool took it, a new user's)
    assert statement.startswith("wst_") and w.show(statement)["topic"]["id"] == page["topic"]["id"]
    with pytest.raises(NotFound):
        w.show("wst_nothing")


def test_a_superseded_fact_retires_its_statement(memory: Memory) -> None:
    quiet(memory)
    w = memory.wiki
    say(memory, "home", [("Ana", "My office is in the Berlin building on the third floor.")])
    w.mine(memory.store.session_summaries("home", 0)[0].id)
    first = memory.browse(session="home")[0]
    old = memory.facts.write("Ana's office is in the Berlin building", source=f"event:{first.id}")
    leaf = say(memory, "home2", [("Ana", "My office moved to the Lisbon building on the third floor.")])
    second = memory.browse(session="home2")[0]
    memory.facts.supersede(old.id, "Ana's office is in the Lisbon building", source=f"event:{second.id}")
    w.mine(leaf)
    page = w.show("Ana")
    retired = page["retired"]
    assert len(retired) == 1 and "Berlin" in retired[0]["text"] and old.id in retired[0]["facts"]
    assert any("Lisbon" in s["text"] for s in page["current"])
    assert "## No longer true" in page["markdown"]


def test_one_users_correction_retires_none_of_another_users_statements(memory: Memory) -> None:
    """Found by a support-bot builder: Dave's "My account PIN is 4711 now." retired Alice's "My account PIN is 9999."
    on the PIN page (its words overlapped Dave's old fact), and a statement mined after its fact was superseded stood
    as current."""
    from datetime import datetime, timedelta

    steps = [("alice", "alice-a", "2025-03-01T09:00:00", "My account PIN is 9999."),
             ("dave", "dave-a", "2025-03-02T09:00:00", "My account PIN is 1234."),
             ("dave", "dave-b", "2025-03-09T09:00:00", "My account PIN is 4711 now.")]
    for user, sid, at, text in steps:
        start = datetime.fromisoformat(at)
        for i, (role, said) in enumerate([("user", text), ("assistant", "Thanks, I have updated the PIN on your account."),
                                          ("user", "Great, thanks for the help with the account."),
                                          ("assistant", "You're welcome, have a nice day.")]):
            memory.append(sid, role, said, created_at=(start + timedelta(minutes=i)).isoformat() + "Z")
        memory.tags.add(f"user:{user}", session=sid)
        memory.distiller.close_turn(sid)
        memory.worker().drain()
        memory.summaries.compact(sid, final=True)
        memory.worker().drain()
    page = memory.wiki.show("PIN")
    current = [s["text"] for s in page["current"]]
    assert "My account PIN is 9999." in current and "My account PIN is 4711 now." in current
    assert [s["text"] for s in page["retired"]] == ["My account PIN is 1234."]
    block = memory.recall(None, "what is my account PIN?", tag="user:dave", budget=600).block
    assert "is 4711" in block and "is 9999" not in block and "(wiki: PIN) My account PIN is 1234." not in block


def test_the_wiki_tools_keep_to_a_users_scope(memory: Memory) -> None:
    """Found by a support-bot builder: `memory_wiki_search/list/show` took no tag ("'tag' was unexpected"): any user's
    statements of a shared page were one call away. The PINs are words: a digit PIN can turn up inside a page's ids."""
    from palimpsest import tools

    for user, pin in (("alice", "nine-nine-nine-nine"), ("dave", "one-two-three-four")):
        for n in (1, 2):
            sid = f"{user}-{n}"
            memory.append(sid, "user", f"My account PIN is {pin}, and the PIN works on the app too.")
            memory.append(sid, "assistant", "Thanks, noted the PIN on your account.")
            memory.tags.add(f"user:{user}", session=sid)
            memory.summaries.compact(sid, final=True, use_llm=False)
    memory.worker().drain()
    call = lambda name, args: tools.call(memory, name, args, enable_write=False)
    everyone = call("memory_wiki_show", {"topic": "PIN"})
    assert "nine-nine-nine-nine" in everyone["markdown"] and "one-two-three-four" in everyone["markdown"]
    alice = call("memory_wiki_show", {"topic": "PIN", "tag": "user:alice"})
    said = [s["text"] for state in ("current", "disputed", "retired") for s in alice[state]]
    assert said and all("one-two-three-four" not in t for t in said) and "one-two-three-four" not in alice["markdown"] and "nine-nine-nine-nine" in alice["markdown"]
    hits = call("memory_wiki_search", {"query": "account PIN", "tag": "user:alice"})["hits"]
    assert hits and all("one-two-three-four" not in s["text"] for h in hits for s in h["statements"])
    assert call("memory_wiki_search", {"query": "account PIN", "tag": "user:nobody"})["hits"] == []
    assert call("memory_wiki_list", {"tag": "user:nobody"})["topics"] == []
    everyone_pages = [t["title"] for t in call("memory_wiki_list", {})["topics"]]
    alices = [t["title"] for t in call("memory_wiki_list", {"tag": "user:alice"})["topics"]]
    paged = [t["title"] for n in range(len(alices)) for t in call("memory_wiki_list", {"tag": "user:alice", "limit": 1, "offset": n})["topics"]]
    assert paged == alices and set(alices) <= set(everyone_pages)  # paged among the pages in scope (found in review)
    listed = {t["title"]: t["statements"] for t in call("memory_wiki_list", {"tag": "user:alice"})["topics"]}
    assert sum(listed["PIN"].values()) == len(said) < sum(next(t for t in call("memory_wiki_list", {})["topics"]
                                                              if t["title"] == "PIN")["statements"].values())


def test_a_statement_whose_fact_is_superseded_already_is_history(memory: Memory) -> None:
    quiet(memory)
    say(memory, "s1", [("Ana", "My office is in the Berlin building on the third floor.")])
    first = memory.browse(session="s1")[0]
    old = memory.facts.write("My office is in the Berlin building on the third floor.", source=f"event:{first.id}")
    memory.facts.supersede(old.id, "My office is in the Lisbon building now.")
    memory.wiki.mine(memory.store.session_summaries("s1", 0)[0].id)  # mined late: the fact it says no longer holds
    page = memory.wiki.show("Ana")
    assert [s["text"] for s in page["retired"]] == ["My office is in the Berlin building on the third floor."]
    assert page["current"] == [] and old.id in page["retired"][0]["facts"]


def test_a_topic_renamed_by_a_tag_merge(memory: Memory) -> None:
    quiet(memory)
    w = memory.wiki
    memory.ingest_session("a", [{"role": "user", "content": "first words of the session", "metadata": {"speaker": "Ana"}}])
    memory.tags.add("project:atlas-old", session="a")
    w.mine(say(memory, "a", [("Ana", "We shipped the first version of the ingestion pipeline today.")]))
    tid = w.find("atlas-old").id
    memory.tags.merge("project:atlas-old", "atlas")
    w.mine(say(memory, "b", [("Ana", "The ingestion pipeline now handles retries with a capped backoff.")]))
    t = w.find("atlas")
    assert t.id == tid and t.title == "atlas" and t.tag == "project:atlas" and "atlas-old" in t.aliases
    assert w.find("atlas-old").id == tid
    assert any(op["op"] == "retitle" for p in w.history("atlas") for op in p["ops"])


def test_tags_as_identity_hints(memory: Memory) -> None:
    quiet(memory)
    w = memory.wiki
    # a leaf's own unreviewed suggestion is not used; the cwd rule tag is never an entity
    memory.ingest_session("c", [{"role": "user", "content": "start", "metadata": {"speaker": "Ana"}}],
                          settings={"tags": ["project:palimpsest"]})
    memory.tags.sync_rules("c")
    leaf = say(memory, "c", [("Ana", "The weather was lovely and we walked along the river for hours.")])
    memory.tags.suggest(["project:ghost"], summary=leaf)
    w.mine(leaf)
    titles = {t["title"] for t in w.list(limit=100)}
    assert "ghost" not in titles and "palimpsest" not in titles
    assert all("palimpsest" not in t["entities"] for t in w.list(limit=100))
    # a tag accepted later does not re-mine a leaf mined at the current version
    memory.tags.decide("project:ghost", "accept", summary=leaf)
    assert w.mine(leaf)["patches"] == 0 and "ghost" not in {t["title"] for t in w.list(limit=100)}
    # a project tag a person added names the topic and is carried into its entities
    memory.tags.add("project:Orion", session="c")
    leaf2 = say(memory, "c", [("Ana", "Orion needs its release checklist reviewed before the end of the week.")])
    w.mine(leaf2)
    page = w.show("Orion")
    assert page["topic"]["tag"] == "project:Orion" and "Orion" in page["topic"]["entities"]


def test_replay_restores_the_pages(memory: Memory, tmp_path: Path) -> None:
    quiet(memory)
    w = memory.wiki
    w.mine(say(memory, "r", [("Ana", "Ana and Bo planned the Lisbon offsite for the second week of May."),
                             ("Bo", "Bo booked the venue in Lisbon and sent the invitations to everyone.")]))
    before = snapshot(w)
    other = Memory(memory.home, f"sqlite:///{tmp_path / 'other.db'}", settings=memory.settings.replace(store=""))
    try:
        assert snapshot(other.wiki) == before
    finally:
        other.close()


def test_reading_refuses_bad_input(memory: Memory) -> None:
    w = memory.wiki
    for bad in ("", "   ", 5, "x" * 600):
        with pytest.raises(InvalidInput):
            w.find(bad)  # type: ignore[arg-type]
    with pytest.raises(NotFound):
        w.show("no such topic")
    with pytest.raises(NotFound):
        w.mine("sum_missing")
    with pytest.raises(InvalidInput):
        w.list(limit=0)
    with pytest.raises(InvalidInput):
        w.list(kind="planet")
    with pytest.raises(InvalidInput):
        w.search("")
    assert memory.wiki.recall_items(None, "anything") == []


def test_search_and_recall_items(memory: Memory) -> None:
    quiet(memory)
    w = memory.wiki
    w.mine(say(memory, "q", [("Ana", "The Lisbon offsite is planned for the second week of May this year."),
                             ("Bo", "I booked the venue near the river for the whole team.")]))
    hits = w.search("Lisbon offsite")
    assert hits and hits[0]["topic"]["title"] == "Ana" and "Lisbon" in hits[0]["statements"][0]["text"]
    items = memory.wiki.recall_items("q", "Lisbon offsite")
    assert items and items[0]["sources"] and items[0]["id"].startswith("wst_")


def test_recall_scoped_to_a_tag_keeps_other_users_statements_out(memory: Memory) -> None:
    """Found in review: a bot's recall for Bob (`tag="user:bob"`) showed the wiki's statements
    mined from Alice's conversation."""
    quiet(memory)
    memory.wiki.mine(say(memory, "alice-1", [("Ana", "The Lisbon offsite is planned for the second week of May this year."),
                                             ("Bo", "I booked the venue near the river for the whole team.")]))
    memory.tags.add("user:alice", session="alice-1")
    memory.append("bob-1", "user", "hello")
    memory.tags.add("user:bob", session="bob-1")

    def wiki_lines(tag: str | None) -> list[str]:
        return [i.text for i in memory.recall("bob-1", "Lisbon offsite", tag=tag, live_tail=0).items if i.kind in ("wiki", "message", "summary")]

    # (the statement, or the turn or leaf that says it when that is found too: it is left to them)
    assert any("Lisbon" in t for t in wiki_lines(None))
    assert any("Lisbon" in t for t in wiki_lines("user:alice"))
    assert wiki_lines("user:bob") == []


# -- with an LLM ------------------------------------------------------------------------
def test_llm_patch_cites_lines_and_an_unbacked_retirement_is_a_dispute(memory: Memory) -> None:
    from fakeopenai import FakeOpenAI, Reply

    replies: list[Any] = []
    with FakeOpenAI(responder=lambda body: replies.pop(0) if replies else Reply.json({"topics": []})) as fake:
        quiet(memory, llm_url=fake.url, llm_model="m", llm_backoff="0", llm_structured="json_schema")
        w = memory.wiki
        replies.append(Reply.json({"topics": [{"title": "Ana", "kind": "person", "entities": ["Lisbon"], "retire": [], "add": [
            {"text": "Ana plans the Lisbon offsite for May.", "sources": ["#01"]},
            {"text": "Ana owns a yacht.", "sources": ["#99"]}]}]}))
        w.mine(say(memory, "l1", [("Ana", "I am planning the Lisbon offsite for May."), ("Bo", "Great, count me in.")]))
        page = w.show("Ana")
        assert [s["text"] for s in page["current"]] == ["Ana plans the Lisbon offsite for May."]
        assert page["current"][0]["messages"] == [memory.browse(session="l1")[0].id] and "Lisbon" in page["topic"]["entities"]
        sid = page["current"][0]["id"]
        replies.append(Reply.json({"topics": [{"title": "Ana", "kind": "person", "entities": [], "add": [],
                                               "retire": [{"id": sid, "reason": "the offsite was cancelled"}]}]}))
        w.mine(say(memory, "l2", [("Ana", "We cancelled the offsite."), ("Bo", "Oh no, that is a pity.")]))
        page = w.show("Ana")
        assert [s["id"] for s in page["disputed"]] == [sid] and "cancelled" in page["disputed"][0]["note"]
        assert sid in fake.requests[-1]["messages"][1]["content"]
        assert memory.store.wiki_leaf_marks([x.id for x in leaves(memory)]) and {
            m.origin for m in memory.store.wiki_leaf_marks([x.id for x in leaves(memory)]).values()} == {"llm"}


def test_a_models_titles_are_one_line_and_an_unbacked_new_topic_is_no_page(memory: Memory) -> None:
    """Found by a user with an LLM: the title "Payments\\n# Injected heading" was stored whole,
    "#01" became a page, and a topic whose only statement cited no real line was an empty page."""
    from fakeopenai import FakeOpenAI, Reply

    topics = [{"title": "Payments\n# Injected heading\n- Evil (subject)", "kind": "project", "entities": [], "retire": [],
               "add": [{"text": "Payments moved to the new ledger.", "sources": ["#01"]}]},
              {"title": "#01", "kind": "project", "entities": [], "retire": [], "add": [{"text": "A line.", "sources": ["#01"]}]},
              {"title": "Evil Topic", "kind": "project", "entities": [], "retire": [], "add": [{"text": "Nothing.", "sources": ["#77"]}]}]
    with FakeOpenAI(responder=lambda body: Reply.json({"topics": topics})) as fake:
        quiet(memory, llm_url=fake.url, llm_model="m", llm_backoff="0", llm_structured="json_schema")
        memory.wiki.mine(say(memory, "p1", [("Ana", "Payments moved to the new ledger."), ("Bo", "Great.")]))
        titles = [t["title"] for t in memory.wiki.list()]
        assert "Payments" in titles
        assert not [t for t in titles if "\n" in t or t in ("#01", "01", "Evil Topic")]


# -- surfaces ---------------------------------------------------------------------------
def test_cli_tools_and_http(sqlite_memory: Memory, capsys: pytest.CaptureFixture[str]) -> None:
    import httpx

    from palimpsest import tools
    from palimpsest.cli import main
    from palimpsest.server.run import ServerThread

    memory = quiet(sqlite_memory)
    w = memory.wiki
    w.mine(say(memory, "z", [("Ana", "The Lisbon offsite is planned for the second week of May this year."),
                             ("Bo", "I booked the venue near the river for the whole team.")]))
    tid = w.find("Ana").id
    home = ["--home", str(memory.home)]
    assert main([*home, "wiki", "list"]) == 0 and "Ana" in capsys.readouterr().out
    assert main([*home, "wiki", "show", "Ana"]) == 0 and "Lisbon offsite" in capsys.readouterr().out
    assert main([*home, "wiki", "history", "Ana", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["topic_id"] == tid
    assert main([*home, "wiki", "show", "Nobody"]) == 3
    assert tools.call(memory, "memory_wiki_show", {"topic": tid}, enable_write=False)["topic"]["title"] == "Ana"
    assert tools.call(memory, "memory_wiki_search", {"query": "Lisbon"}, enable_write=False)["hits"]
    with pytest.raises(InvalidInput):
        tools.call(memory, "memory_wiki_list", {"kind": "planet"}, enable_write=False)
    with ServerThread(memory) as url:
        assert httpx.get(f"{url}/api/wiki").json()["result"][0]["title"] in ("Ana", "Bo")
        assert httpx.get(f"{url}/api/wiki/Ana").json()["result"]["topic"]["id"] == tid
        assert httpx.get(f"{url}/api/wiki/{tid}/history").json()["result"][0]["version"] == 1
        missing = httpx.get(f"{url}/api/wiki/Nobody")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
        assert httpx.get(f"{url}/api/wiki", params={"limit": 0}).status_code == 400


def test_panel_pages(sqlite_memory: Memory) -> None:
    import httpx

    from palimpsest.server.run import ServerThread

    memory = quiet(sqlite_memory)
    w = memory.wiki
    w.mine(say(memory, "p", [("Ana", "The <script>alert(1)</script> Lisbon offsite is planned for May this year."),
                             ("Bo", "I booked the venue near the river for the whole team.")]))
    tid = w.find("Ana").id
    with ServerThread(memory) as url:
        listing = httpx.get(f"{url}/panel/wiki")
        assert listing.status_code == 200 and f"/panel/wiki/{tid}" in listing.text
        page = httpx.get(f"{url}/panel/wiki/{tid}")
        assert page.status_code == 200 and "<script>alert" not in page.text and "&lt;script&gt;" in page.text
        first = memory.browse(session="p")[0].id
        assert f"/panel/find?id={first}" in page.text
        assert "Lisbon" in httpx.get(f"{url}/panel/wiki", params={"search": "Lisbon offsite"}).text
        assert httpx.get(f"{url}/panel/wiki/Nobody").status_code == 404


def test_two_writers_on_one_page_collide_and_the_loser_retries(memory: Memory) -> None:
    from palimpsest.errors import Conflict
    from palimpsest.wiki.mine import Hints, Miner, mine_fallback

    quiet(memory)
    w = memory.wiki
    a = say(memory, "w1", [("Zed", "Zed wrote the migration plan for the storage cluster.")])
    b = say(memory, "w2", [("Zed", "Zed reviewed the rollback steps of the storage cluster.")])
    changes = []
    for leaf_id in (a, b):  # both computed from the same (empty) wiki, as two workers would
        miner = Miner(w, memory.store.get_summaries([leaf_id])[0], use_llm=False)
        units, idents = w._units(miner.leaf)
        mine_fallback(miner, units, idents, Hints(), w._load)
        changes.append(miner.finish("fallback", wiki_mod.WIKI_PIPELINE_VERSION))
    w._commit("mine", changes[0], "first")
    with pytest.raises(Conflict):
        w._commit("mine", changes[1], "second")
    w.mine(b)  # the job's retry
    assert [t["title"] for t in w.list()] == ["Zed"] and len(w.show("Zed")["current"]) == 2
    assert len(w.decisions.taken("wiki")) == 2  # the rejected change is not replayed


def test_an_invalid_llm_patch_is_parked_and_the_last_attempt_takes_the_fallback(sqlite_memory: Memory) -> None:
    from fakeopenai import FakeOpenAI, Reply
    from palimpsest.llm import InvalidReply
    from palimpsest.store import Job

    with FakeOpenAI(responder=lambda body: Reply.json({"topics": [{"title": "Ana"}]})) as fake:
        memory = quiet(sqlite_memory, llm_url=fake.url, llm_model="m", llm_backoff="0", llm_structured="json_schema")
        leaf = say(memory, "bad", [("Ana", "The Lisbon offsite is planned for the second week of May this year.")])
        with pytest.raises(InvalidReply):
            memory.wiki.mine(leaf)
        assert not memory.store.wiki_leaf_marks([leaf])
        memory.wiki.run_extract(Job(1, "extract-wiki", {"summary": leaf}, attempts=3, max_attempts=3))
        mark = memory.store.wiki_leaf_marks([leaf])[leaf]
        assert mark.origin == "fallback" and memory.wiki.show("Ana")["current"]
        assert memory.stats()["llm"]["extract-wiki"]["invalid"] >= 1


def test_a_name_that_opens_its_sentences_joins_its_page(memory: Memory) -> None:
    """Found by a new user: in chat a person is named first ("Marcus approved …", "Marcus will
    be on call …"), and a sentence's first word was never read as a name, so such a leaf added
    nothing to Marcus's page. An opening word that is a page's key is that page's."""
    quiet(memory)
    w = memory.wiki
    w.mine(say(memory, "d1", [(None, "The deploy review with Marcus went fine this morning."), (None, "Good to hear that.")]))
    w.mine(say(memory, "d2", [(None, "We paired with Marcus on the flaky payments test."), (None, "Good, glad it is fixed.")]))
    w.mine(say(memory, "d3", [(None, "Marcus approved the retry cap change for the payments service."), (None, "Great news.")]))
    texts = " ".join(s["text"] for s in w.show("Marcus")["current"])
    assert "approved the retry cap change" in texts
    assert all(t["title"] not in ("Good", "Great") for t in w.list(limit=100))  # an opening word nobody named stays a word


def test_a_firms_ampersand_list_items_and_weekdays_make_no_pages_of_their_own(memory: Memory) -> None:
    """Found by a writer moving house: "Hartley & Sons" made pages Hartley and Sons, a checklist's items
    (written on one line by the leaf) pages Council and Meter, and "can't do Fridays" a page Fridays."""
    from palimpsest.wiki.text import names

    assert names("Quotes are in: Hartley & Sons at 1,450 but they can't do Fridays.") == ["Hartley & Sons"]
    assert names("Noted it. Also Tom came.")[-1] == "Tom"
    assert names("Yesterday Me & Sam went to Paris.") == ["Sam", "Paris"]  # (found in review: a page "Me & Sam")
    quiet(memory)
    leaf = say(memory, "move", [("Nadia", "Quotes are in: Hartley & Sons at 1,450, Pickfords at 1,900, they can't do Fridays."),
                                ("Quill", "Checklist:\n- [ ] Council tax\n- [ ] Meter readings\n- [x] Call Hartley & Sons\n"
                                          "- Pickfords want a deposit"),
                                ("Nadia", "Hartley & Sons it is, they come on the 18th."),
                                ("Quill", "The viewing was great - Lisbon Road is lovely in spring.")])  # one dash: prose
    memory.wiki.mine(leaf)
    titles = {t["title"] for t in memory.wiki.list()}
    assert not titles & {"Hartley", "Sons", "Council", "Meter", "Fridays", "Call Hartley"}
    from palimpsest.wiki.text import units

    summary = memory.store.get_summaries([leaf])[0]
    found = {n for u in units(summary, {m.id: m for m in memory.store.get_messages(summary.sources)})[0] for n in u.names}
    assert "Hartley & Sons" in found and not found & {"Hartley", "Sons", "Council", "Meter", "Fridays", "Call Hartley"}
    assert "Lisbon Road" in found


def test_a_statement_competes_in_recall_on_its_own_share_of_the_query(memory: Memory) -> None:
    """Measured on LoCoMo dev with pages formed: a statement ranked by its page's score (2 and more when the page's title
    is a word of the query) outranked every turn, and the blocks held fewer evidence turns."""
    quiet(memory)
    memory.wiki.mine(say(memory, "q", [("Ana", "The Lisbon offsite is planned for the second week of May this year."),
                                       ("Bo", "I booked the venue near the river for the whole team.")]))
    pages = memory.wiki.search("Ana Lisbon offsite")
    assert pages and pages[0]["score"] >= 2
    items = memory.wiki.recall_items("q", "Ana Lisbon offsite")
    assert items and all(0.0 <= i["held"] <= 1.0 for i in items)
    recalled = memory.recall("other", "Ana booked the venue near the river for the offsite", limit=1).items
    shown = [i for i in recalled if i.kind == "wiki"]  # (the one turn handed over is Bo's: Ana's statement joins)
    assert shown and all(i.score <= 1.0 for i in shown)
