"""The summary DAG (coverage, completeness, budgets, prompts, search, expand, replay) and
tool-call synthesis (template, LLM, backfill, rebuild)."""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakeopenai import FakeOpenAI, Reply
from palimpsest import Memory, Settings, tools
from palimpsest.summaries import LEAF_MAX_MESSAGES, extractive, identifiers
from palimpsest.tokens import count_tokens
from palimpsest.toolsynth import template

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike"]


def fill(memory: Memory, session: str, n: int, **attrs: object) -> list[str]:
    msgs = [{"role": "user" if i % 2 == 0 else "assistant",
             "content": f"Message {i} about {WORDS[i % len(WORDS)]}: we changed src/mod_{i}.py in PR #{1000 + i}. " + "filler " * 20,
             "created_at": f"2026-03-04T{10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"} for i in range(n)]
    return memory.ingest_session(session, msgs, **attrs)["ids"]


def small(home: Path, store: str | None = None, **kw: object) -> Memory:
    opts: dict = {"embedder": "none", "distill": False, "summary_leaf_tokens": 800, "summary_branch_tokens": 600,
                  "summary_max_tokens": 150, "compact_after": 40, "compact_keep": 10, **kw}
    return Memory(home, store, settings=Settings.load(env={}, **opts))


def covered(memory: Memory, session: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for leaf in memory.store.session_summaries(session, 0):
        for mid in leaf.sources:
            counts[mid] = counts.get(mid, 0) + 1
    return counts


def test_final_compaction_covers_every_message_once_and_completes_the_tree(home: Path, store_url: str) -> None:
    with small(home, store_url) as memory:
        ids = fill(memory, "s", 120, agent="claude", title="refactor")
        written = memory.summaries.compact("s", final=True)
        counts = covered(memory, "s")
        assert set(counts) == set(ids) and set(counts.values()) == {1}
        assert memory.summaries.check_tree("s") == {"unsummarised": 0, "orphan_leaves": 0, "orphan_branches": 0, "roots": 1, "complete": True}
        assert written["leaf"] >= 4 and written["branch"] >= 2
        root = memory.store.session_summaries("s", 2)[0]
        assert root.message_count == 120 and root.earliest_at <= root.latest_at
        assert memory.stats()["summaries"]["messages_summarised"] == 120


def test_routine_compaction_keeps_the_newest_and_rolls_up_as_it_grows(home: Path) -> None:
    with small(home) as memory:
        fill(memory, "s", 30)
        assert memory.summaries.compact("s") == {"leaf": 0, "branch": 0, "root": 0}  # 30 <= compact_after
        fill(memory, "s2", 100)
        memory.summaries.compact("s2")
        assert memory.store.count_unsummarised("s2") <= 40
        roots_before = memory.store.session_summaries("s2", 2, live=False)
        memory.summaries.compact("s2")  # nothing new: the root stays
        assert memory.store.session_summaries("s2", 2, live=False) == roots_before


def test_the_compact_job_is_queued_per_session_once(home: Path) -> None:
    with small(home) as memory:
        fill(memory, "s", 60)
        fill(memory, "s", 60)
        assert memory.store.job_status()["tasks"]["compact"] == {"queued": 1}


def test_a_short_session_is_summarised_once_it_is_quiet(home: Path) -> None:
    """Found by a writer chatting a few turns a day: routine compaction waits for `compact_after` messages, so a
    session of six turns had no summary and no wiki page, ever. Once quiet for `compact_quiet_minutes` (when set) it has."""
    with small(home, compact_after=200, tags_suggest=False, compact_quiet_minutes=30) as memory:
        fill(memory, "old", 6)  # said in March: quiet long since, due now
        memory.ingest_session("new", [{"role": "user", "content": f"Fresh turn {i} about the garden plot."} for i in range(6)])
        memory.ingest_session("tiny", [{"role": "user", "content": "hi", "created_at": "2026-03-04T10:00:00Z"}])
        memory.worker(tasks=["compact"]).drain()
        assert memory.summaries.check_tree("old")["complete"] and memory.store.session_summaries("old", 0)
        assert memory.store.session_summaries("new", 0) == []  # said a moment ago: looked at again once quiet
        assert memory.store.session_summaries("tiny", 0) == []  # fewer than four messages: nothing worth a summary
    with small(home, compact_after=200, tags_suggest=False, compact_quiet_minutes=0.01) as memory:  # quiet after 0.6 s
        memory.ingest_session("soon", [{"role": "user", "content": f"Turn {i} about the novel's ending."} for i in range(4)])
        time.sleep(0.8)
        memory.append("soon", "user", "One more thought about Edinburgh.")  # still being written: the first job waits on
        memory.worker(tasks=["compact"]).drain()
        assert memory.store.session_summaries("soon", 0) == []
        time.sleep(0.8)
        memory.worker(tasks=["compact"]).drain()
        assert memory.summaries.check_tree("soon")["complete"]
    with small(home, compact_after=200, tags_suggest=False) as memory:
        fill(memory, "off", 6)
        memory.worker(tasks=["compact"]).drain()
        assert memory.store.session_summaries("off", 0) == []  # 0 (the default): off


def test_extractive_fallback_keeps_identifiers_and_fits_the_budget() -> None:
    lines = [f"[#{i:02d} 2026-03-04T10:{i:02d}Z user] Talked about {w} for a while. Merged PR #{i} touching lib/{w}.py at `make {w}`."
             for i, w in enumerate(WORDS * 4)]
    text = extractive(lines, 800)
    assert len(text) <= 800 * 4 + 20
    for i in range(len(WORDS) * 4):
        assert f"#{i}" in text
    assert "lib/alpha.py" in text and "`make alpha`" in text
    assert identifiers("see abc1234f and https://x.org/a, v1.2.3, issue 12") == ["abc1234f", "https://x.org/a", "v1.2.3", "issue 12"]


OVEN = ("[#01 2025-02-14T10:20Z user] tom weber fixed the oven today — heating element in deck 2 replaced, 480 eur incl. "
        "call-out. he says the miwe is 14 years old and we should think about replacing it within the year\n"
        "[#02 2025-02-14T10:21Z assistant] Good news. Logged: Miwe deck oven repaired by Tom Weber (Brauer Backtechnik), "
        "deck 2 heating element replaced, €480 including call-out. Worth starting a replacement fund — at 14 years a "
        "controller or refractory failure is likely next.")


def test_an_extractive_branch_and_root_read_their_childrens_words_without_line_tags() -> None:
    """Found by a new user without an LLM: the branch and the root over a two-message leaf read "he says the miwe is 14
    years old and we should think about replacing it within the year [#02 2025-02-14T10:21Z assistant] Good news.":
    the leaf's line tags were scored as words (their digits outscored the sentence naming the repair, the technician
    and the €480) and one was printed in the middle of the pick. A root rewritten over a branch stored so, or over a
    child cut at its share in the middle of a tag, shows no tag either."""
    branch = extractive(["[S1 2025-02-14T10:20Z to 2025-02-14T10:21Z, leaf, 2 messages]\n" + OVEN], 1200, depth=1)
    assert "[#" not in branch and "Tom Weber" in branch and "€480" in branch, branch
    stored = "he says the miwe is 14 years old and we should think about replacing it within the year [#02 2025-02-14T10:21Z assistant] Good news."
    root = extractive(["[S1 2025-02-14T10:20Z to 2025-02-14T10:21Z, branch, 2 messages]\n" + stored,
                       "[S2 2025-02-15T08:00Z to 2025-02-15T08:05Z, branch, 3 messages]\n" + OVEN[:OVEN.index("T10:21Z")]], 1200, depth=2)
    assert root.splitlines() == ["he says the miwe is 14 years old and we should think about replacing it within the year",
                                 "tom weber fixed the oven today — heating element in deck 2 replaced, 480 eur incl. call-out."]


def test_search_and_expand(memory: Memory) -> None:
    fill(memory, "s", 60)
    memory.append("s", "user", "the zeppelin migration finished", created_at="2026-03-05T09:00:00Z")
    memory.summaries.compact("s", final=True)
    hits = memory.summaries.search("zeppelin migration")
    assert hits and hits[0].summary.depth == 0
    leaf = memory.summaries.expand(hits[0].summary.id)
    assert any("zeppelin" in m.content for m in leaf["messages"]) and leaf["children"] == []
    root = memory.store.session_summaries("s", 2)[0]
    top = memory.summaries.expand(root.id, limit=500)
    assert [c.depth for c in top["children"]] == [1] * len(root.sources)
    assert len(top["messages"]) == 61
    assert memory.summaries.search("zeppelin", memory.filters(session="other")) == []
    memory.tags.add("user:alice", session="s")
    assert memory.summaries.search("zeppelin", memory.filters(tag="user:alice"))
    assert memory.summaries.search("zeppelin", memory.filters(tag="user:bob")) == []  # (the tag had been dropped: all users')
    assert memory.summaries.search("zeppelin", memory.filters(tag="user:Alice")) == []
    assert tools.call(memory, "memory_summaries", {"query": "zeppelin", "tag": "user:bob"}, enable_write=False) == {"hits": []}
    assert memory.summaries.latest("s") == root.content and memory.summaries.latest("other") is None


def test_summaries_are_journaled_and_replayed_into_a_new_store(home: Path) -> None:
    with small(home) as memory:
        fill(memory, "s", 80)
        memory.summaries.compact("s", final=True)
        before = {s.id: s for s in memory.store.session_summaries("s", live=False)}
    with small(home, f"sqlite:///{home / 'other.db'}") as fresh:
        fresh.catch_up()
        assert fresh.summaries.replay() == len(before)
        after = {s.id: s for s in fresh.store.session_summaries("s", live=False)}
        assert after == before and fresh.summaries.check_tree("s")["complete"]
        assert fresh.summaries.replay() == 0


def test_a_huge_session_is_compacted_in_bounded_batches(home: Path) -> None:
    with small(home, summary_leaf_tokens=100_000, summary_branch_tokens=100_000) as memory:
        fill(memory, "big", 2500)
        tracemalloc.start()
        memory.summaries.compact("big", final=True)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        leaves = memory.store.session_summaries("big", 0)
        assert max(len(x.sources) for x in leaves) == LEAF_MAX_MESSAGES
        assert sum(len(x.sources) for x in leaves) == 2500
        assert peak < 40_000_000


# -- with a model --------------------------------------------------------------------
@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(responder=lambda body: Reply.json({"summary": "They refactored the parser.", "identifiers": ["PR #1000", "PR #99999"]})) as f:
        yield f


def test_llm_prompts_carry_the_preamble_and_line_tags(home: Path, fake: FakeOpenAI) -> None:
    with small(home, llm_url=fake.url, llm_model="m", llm_backoff="0", llm_structured="json_schema", tool_synth=False) as memory:
        fill(memory, "s", 20, agent="claude", channel="cli", title="parser")
        memory.summaries.compact("s", final=True)
        leaf_prompt = fake.requests[0]["messages"]
        assert "Cover every distinct topic" in leaf_prompt[0]["content"] and "Invent nothing" in leaf_prompt[0]["content"]
        user = leaf_prompt[1]["content"]
        assert user.startswith("Session s; agent claude; channel cli; title parser; span 2026-03-04T10:00Z to")
        assert "[#01 2026-03-04T10:00Z claude/user] Message 0 about alpha" in user and "claude/assistant" in user
        leaf = memory.store.session_summaries("s", 0)[0]
        assert leaf.content == "They refactored the parser.\nIdentifiers: PR #1000" and leaf.model == "m"  # the invented one dropped
        branch_prompts = [r["messages"][1]["content"] for r in fake.requests if "[S1 " in r["messages"][1]["content"]]
        assert branch_prompts and "[S1 2026-03-04T10:00Z to" in branch_prompts[0]
        # a root over one branch says the branch's words, with no call (a model asked to merge one summary paraphrased it,
        # and the copies filled an on-call lead's blocks: 77 of 176 summary lines)
        assert set(memory.stats()["llm"]) == {"summarize-leaf", "summarize-branch"}
        (branch,), (root,) = memory.store.session_summaries("s", 1), memory.store.session_summaries("s", 2)
        assert root.content == branch.content and root.sources == [branch.id]


def test_a_session_of_one_leaf_is_summarised_once(home: Path, fake: FakeOpenAI) -> None:
    """Found by an on-call lead with a model configured: every branch and root call had one child, the model was asked to
    "merge" one summary, and its paraphrases (a leaf, a branch, a root of one session) filled her blocks. One call."""
    with small(home, llm_url=fake.url, llm_model="m", llm_backoff="0", llm_structured="json_schema", tool_synth=False) as memory:
        fill(memory, "s", 4)
        memory.summaries.compact("s", final=True)
        assert set(memory.stats()["llm"]) == {"summarize-leaf"} and len(fake.requests) == 1
        texts = {d: [x.content for x in memory.store.session_summaries("s", d)] for d in (0, 1, 2)}
        assert texts[0] and texts[0] == texts[1] == texts[2]


# -- tool-call synthesis ---------------------------------------------------------------
def test_empty_tool_calls_get_a_sentence(memory: Memory) -> None:
    r = memory.append("s", "assistant", "", tool_name="read_file", tool_args={"path": "src/app.py", "limit": 20}, tool_result="import os\n...")
    memory.append("s", "assistant", "has text", tool_name="grep")
    memory.worker(tasks=["tool-synth"]).drain()
    m = memory.store.get_messages([r["id"]])[0]
    assert m.content == "Called read_file with path=src/app.py, limit=20; it returned 'import os'."
    assert memory.search("read_file app.py").hits[0].message.id == r["id"]
    assert [h.message.id for h in memory.search("returned 'import", mode="substring").hits] == [r["id"]]
    later = memory.append("s", "assistant", "", tool_name="ls", tool_args={"dir": "docs"})["id"]  # after the trigram cursor
    memory.worker(tasks=["tool-synth"]).drain()
    assert [h.message.id for h in memory.search("dir=docs", mode="substring").hits] == [later]
    assert memory.store.job_status()["tasks"]["tool-synth"] == {"done": 2}


def test_backfill_and_rebuild(home: Path) -> None:
    with small(home, tool_synth=False) as memory:
        ids = [memory.append("s", "assistant", "", tool_name="bash", tool_args={"cmd": f"ls {i}"})["id"] for i in range(3)]
        assert memory.toolsynth.backfill(dry_run=True) == {"empty_tool_messages": 3, "queued": 0, "dry_run": True}
        assert memory.toolsynth.backfill()["queued"] == 3 and memory.toolsynth.backfill()["queued"] == 0  # deduped while queued
        memory.worker().drain()
        assert [m.content for m in memory.store.get_messages(ids)] == [f"Called bash with cmd=ls {i}." for i in range(3)]
    with small(home) as memory:  # tool_synth on: rebuild queues the jobs again, answered from the journal
        memory.rebuild()
        memory.worker(tasks=["tool-synth"]).drain()
        assert [m.content for m in memory.store.get_messages(ids)] == [f"Called bash with cmd=ls {i}." for i in range(3)]


def test_llm_tool_sentence_and_no_second_call_after_rebuild(home: Path) -> None:
    fake = FakeOpenAI(responder=lambda body: Reply.json({"sentence": "Listed the files of the repository root."}))
    with fake, small(home, llm_url=fake.url, llm_model="m", llm_backoff="0", llm_structured="json_schema") as memory:
        mid = memory.append("s", "assistant", "", tool_name="bash", tool_args={"cmd": "ls"})["id"]
        memory.worker(tasks=["tool-synth"]).drain()
        assert memory.store.get_messages([mid])[0].content == "Listed the files of the repository root."
        memory.rebuild()
        memory.worker(tasks=["tool-synth"]).drain()
        assert memory.store.get_messages([mid])[0].content == "Listed the files of the repository root."
        assert len(fake.requests) == 1


def test_the_model_is_shown_how_a_long_run_ended(home: Path) -> None:
    """Found by a user with an LLM: the tool-synth prompt held the first 2,000 characters of a
    31 KB test run, so the model never saw "3 failed" at its end."""
    fake = FakeOpenAI(responder=lambda body: Reply.json({"sentence": "Ran the tests; 3 failed."}))
    log = "".join(f"tests/test_billing.py::test_case_{i} PASSED\n" for i in range(800)) + "FAILED tests/test_billing.py::test_refund\n3 failed, 797 passed"
    with fake, small(home, llm_url=fake.url, llm_model="m", llm_backoff="0", llm_structured="json_schema") as memory:
        memory.append("s", "assistant", "", tool_name="bash", tool_args={"cmd": "pytest"}, tool_result=log)
        memory.worker(tasks=["tool-synth"]).drain()
        shown = json.loads(fake.requests[0]["messages"][1]["content"])["result"]
        assert shown.startswith("tests/test_billing.py::test_case_0 PASSED") and shown.endswith("3 failed, 797 passed")
        assert len(shown) < 2200 and "characters left out" in shown


def test_a_models_identifiers_are_kept_whole_and_its_summary_within_the_budget(home: Path) -> None:
    """Found by a user with an LLM: "v2.1", "#452", "PR #45" and "app.py" were kept as
    identifiers of a turn naming v2.12.0, PR #4521 and src/billing/app.py.x, the prompt's own
    line tags (#01) too (the wiki made pages of them), and a 31,000-character summary was
    stored against a 150-token `summary_max_tokens`."""
    said = ["v2.1", "#452", "PR #45", "app.py", "#01", "#02", "v2.12.0", "PR #4521", "src/billing/app.py.x"]
    long = "They shipped the release and checked the logs. " * 600
    fake = FakeOpenAI(responder=lambda body: Reply.json({"summary": long, "identifiers": said}))
    with fake, small(home, llm_url=fake.url, llm_model="m", llm_backoff="0", llm_structured="json_schema", tool_synth=False) as memory:
        for i in range(20):
            memory.append("s", "user", f"Release v2.12.0 with PR #4521 touching src/billing/app.py.x, step {i}",
                          created_at=f"2026-03-04T10:{i:02d}:00Z")
        memory.summaries.compact("s", final=True)
        leaf = memory.store.session_summaries("s", 0)[0]
        summary, idents = leaf.content.split("\nIdentifiers: ")
        assert idents.split(", ") == ["v2.12.0", "PR #4521", "src/billing/app.py.x"]
        assert count_tokens(summary) <= 150 and summary.endswith(".")
    from palimpsest.summaries.compactor import _within

    japanese = _within("ユーザーは東京に住んでいて、毎朝コーヒーを飲みます。" * 200, 400)  # one token a character, no spaces
    assert count_tokens(japanese) <= 400 and japanese.endswith("。")


def test_template_shapes() -> None:
    from palimpsest.records import Message

    m = Message(id="e", session="s", role="tool", content="", created_at="2026-01-01T00:00:00Z", tool_name="web_search", tool_args="x" * 200)
    assert template(m).startswith("Called web_search with xxx") and template(m).endswith("….")
    # a terminal's colour codes are how a line was painted, not what it says (found by a Claude Code user)
    painted = Message(id="p", session="s", role="tool", content="", created_at="2026-01-01T00:00:00Z", tool_name="Bash",
                      tool_args={"command": "pytest"}, tool_result="\x1b[33mWARN\x1b[0m slow query\n\x1b[1;32m3 passed\x1b[0m in 0.2s")
    assert template(painted) == "Called Bash with command=pytest; it returned 'WARN slow query' … '3 passed in 0.2s'."


def test_answer_synthesis_is_off_or_unavailable_without_an_llm(home: Path) -> None:
    with small(home) as memory:
        assert memory.toolsynth.answer("q", [])["available"] is False
    with small(home, synthesize_answers=True) as memory:
        assert "no LLM" in memory.toolsynth.answer("q", [])["reason"]
    answer = {"answer": "In Porto.", "cited": ["evt_1", "evt_bogus"]}
    fake = FakeOpenAI(responder=lambda body: Reply.json(answer))
    with fake, small(home, synthesize_answers=True, llm_url=fake.url, llm_model="m", llm_structured="json_schema") as memory:
        hits = [{"id": "evt_1", "content": "I live in Porto", "created_at": "2026-01-01T10:00:00Z"}]
        got = memory.toolsynth.answer("where do I live?", hits)
        assert got == {"available": True, "answer": "In Porto.", "cited": ["evt_1"], "model": "m"}
        assert "[evt_1 2026-01-01T10:00Z] I live in Porto" in fake.requests[0]["messages"][1]["content"]


def test_tools_and_cli(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from palimpsest import tools
    from palimpsest.cli import main

    with small(home) as memory:
        fill(memory, "s", 50)
        memory.append("s", "assistant", "", tool_name="grep", tool_args={"pattern": "TODO"})
        memory.summaries.compact("s", final=True)
        hits = tools.call(memory, "memory_summaries", {"query": "alpha PR", "session": "s"}, enable_write=False)["hits"]
        assert hits and hits[0]["session_id"] == "s"
        got = tools.call(memory, "memory_expand", {"id": hits[0]["id"], "limit": 5}, enable_write=False)
        assert len(got["messages"]) <= 5 and got["summary"]["id"] == hits[0]["id"]
        assert tools.call(memory, "memory_answer", {"query": "alpha"}, enable_write=False)["available"] is False
    base = ["--home", str(home)]
    assert main([*base, "backfill-tool-synth", "--dry-run", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["empty_tool_messages"] == 1
    assert main([*base, "summaries", "tree", "s", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["complete"] is True
    assert main([*base, "llm", "usage", "--json"]) == 0 and json.loads(capsys.readouterr().out) == {}


def test_summaries_are_embedded_and_found_by_vector(home: Path, store_url: str) -> None:
    from palimpsest.embed import HashEmbedder

    with small(home, store_url, embedder="hash") as memory:
        memory.use_embedder(HashEmbedder())
        fill(memory, "s", 30)
        memory.summaries.compact("s", final=True)
        model = memory.embedder.model_id  # type: ignore[union-attr]
        assert memory.store.summaries_without_vectors(model, 10) == []
        hits = memory.summaries.search("Message about alpha")
        assert hits and hits[0].parts["semantic"] > 0
        memory.use_embedder(HashEmbedder(dim=32))  # a model change: the compact job re-embeds
        assert memory.summaries.embed_missing() == len(memory.store.session_summaries("s", live=False))


def test_a_tool_output_says_how_it_ended(memory: Memory) -> None:
    """Found by a new user: a failed command's sentence said only "it returned 'Traceback (most
    recent call last):'" and a 50 KB test run's only its first PASSED line — neither the error
    nor the count reached search or recall."""
    trace = "Traceback (most recent call last):\n  File \"scripts/migrate_tenants.py\", line 3, in <module>\n    from app.db import x\n" \
            "ModuleNotFoundError: No module named 'app.db'\n"
    failed = memory.append("s", "tool", "", tool_name="Bash", tool_args={"command": "python scripts/migrate_tenants.py"},
                           tool_result=trace, metadata={"is_error": True})["id"]
    run = "\n".join(f"tests/test_models.py::test_case_{i} PASSED [{i // 12}%]" for i in range(1200)) + "\n==== 1200 passed in 3.20s ====\n"
    passed = memory.append("s", "tool", "", tool_name="Bash", tool_args={"command": "pytest"}, tool_result=run)["id"]
    memory.worker(tasks=["tool-synth"]).drain()
    f, p = memory.store.get_messages([failed, passed])
    assert f.content.startswith("Called Bash with command=python scripts/migrate_tenants.py; it failed with 'Traceback")
    assert "ModuleNotFoundError: No module named 'app.db'" in f.content
    assert p.content.endswith("… '==== 1200 passed in 3.20s ===='.")
    assert memory.search("No module named app.db").hits[0].message.id == failed
    # found by a Claude Code user: a run that logged before it failed was told by its "Traceback" line, not its error
    log = "INFO reconcile shard=0 start\nTraceback (most recent call last):\n  File \"ledger.py\", line 9, in fetch\n" \
          "LedgerFetchError: gave up after 3 tries: ConnectionResetError(104)\n"
    late = memory.append("s", "tool", "", tool_name="Bash", tool_args={"command": "python ledger.py"}, tool_result=log)["id"]
    memory.worker(tasks=["tool-synth"]).drain()
    assert "'LedgerFetchError: gave up after 3 tries" in memory.store.get_messages([late])[0].content


def test_a_quiet_time_past_a_year_is_refused() -> None:
    """Found in review: 1e10 minutes failed inside every write's derived jobs (distillation too), as an overflow."""
    from palimpsest.errors import InvalidInput

    with pytest.raises(InvalidInput, match="up to 525600"):
        Settings.load(env={"PALIMPSEST_COMPACT_QUIET_MINUTES": "1e10"})
    assert Settings.load(env={"PALIMPSEST_COMPACT_QUIET_MINUTES": "30"}).compact_quiet_minutes == 30.0


def test_a_tool_description_the_call_does_not_bear_out_is_not_kept(home: Path) -> None:
    """Found with a sloppy small model: a `read_file` of deploy/fly.toml was described as "Deleted the production database
    and restarted all servers.", and that became the message's searchable text; the template says what is known."""
    fake = FakeOpenAI(responder=lambda body: Reply.json({"sentence": "Deleted the production database and restarted all servers."}))
    config = "app = 'shop-web'\nprimary_region = 'ams'\n[http_service]\ninternal_port = 8080\nforce_https = true\nauto_stop_machines = true\n"
    with fake, small(home, llm_url=fake.url, llm_model="m", llm_backoff="0", llm_structured="json_schema") as memory:
        mid = memory.append("s", "assistant", "", tool_name="read_file", tool_args={"path": "deploy/fly.toml"}, tool_result=config)["id"]
        memory.worker(tasks=["tool-synth"]).drain()
        said = memory.store.get_messages([mid])[0].content
        assert "database" not in said and "deploy/fly.toml" in said


def test_a_summary_journaled_but_never_stored_is_stored_before_the_next_compaction(home: Path, store_url: str,
                                                                                     tmp_path: Path) -> None:
    """Found by an auditor killing the server during compaction: a leaf journaled just before the kill never reached the
    store; compaction summarised its messages again under a new id, and an import of the export kept the lost leaf and
    rejected the stored one (its branch a child short, exit 2)."""
    from palimpsest.importers import export_memory, import_file

    with small(home, store_url) as memory:
        ids = fill(memory, "s", 60)
        put, calls = memory.store.put_summary, []

        def killed(summary: object, supersedes: object = None) -> bool:  # the process dies after the journal, before the store
            calls.append(summary)
            if len(calls) == 1:
                raise SystemExit("killed")
            return put(summary, supersedes)  # type: ignore[arg-type]

        memory.store.put_summary = killed  # type: ignore[method-assign]
        with pytest.raises(SystemExit):
            memory.summaries.compact("s", final=True)
        lost = calls[0].id  # type: ignore[attr-defined]
    with small(home, store_url) as memory:  # the worker started again: a new process
        memory.summaries.compact("s", final=True)
        counts = covered(memory, "s")
        assert set(counts) == set(ids) and set(counts.values()) == {1}  # no message in two leaves
        assert lost in {leaf.id for leaf in memory.store.session_summaries("s", 0)}
        assert memory.summaries.check_tree("s")["complete"]
        with open(tmp_path / "all.jsonl", "w", encoding="utf-8") as out:
            export_memory(memory, out)
        tree = {(x.id, x.depth, tuple(sorted(x.sources))) for d in (0, 1, 2) for x in memory.store.session_summaries("s", d)}
    with small(tmp_path / "other") as again:
        assert import_file(again, tmp_path / "all.jsonl").ok
        assert {(x.id, x.depth, tuple(sorted(x.sources))) for d in (0, 1, 2) for x in again.store.session_summaries("s", d)} == tree


def test_a_question_naming_only_a_time_gets_no_summary_of_another_time(home: Path) -> None:
    """Found by a user with a year of chats: "What did I ask about in July 2024?" led its block with a February
    conversation's summaries (their lines' stamps matched "2024"); its message hits were July's."""
    with small(home) as memory:
        memory.ingest_session("feb", [{"role": "user" if i % 2 == 0 else "assistant", "created_at": f"2024-02-20T14:{i:02d}:00Z",
                                       "content": f"In 2024 the pandas groupby question {i}: how do I pivot the 2024 sales table?"}
                                      for i in range(12)])
        memory.ingest_session("jul", [{"role": "user", "created_at": "2024-07-09T10:00:00Z", "content": "How do I brine olives?"},
                                      {"role": "assistant", "created_at": "2024-07-09T10:01:00Z", "content": "Salt water, 10%."}])
        memory.summaries.compact("feb", final=True)
        assert memory.store.session_summaries("feb", 0)
        result = memory.search("What did I ask about in July 2024?", now="2024-12-01T00:00:00Z")
        assert {h.message.session for h in result.hits} == {"jul"} and result.summaries == []
        assert memory.search("What did I ask about in February 2024?", now="2024-12-01T00:00:00Z").summaries
        # the days asked are the reader's: a summary of an evening in Los Angeles is of July 31 there (Aug 1 in UTC)
    with small(home / "la", timezone="America/Los_Angeles") as memory:
        memory.ingest_session("late", [{"role": "user" if i % 2 == 0 else "assistant", "created_at": f"2024-08-01T03:{i:02d}:00Z",
                                        "content": f"Question {i} about the olive brine and its salt."} for i in range(12)])
        memory.summaries.compact("late", final=True)
        assert memory.search("What did I ask about on July 31, 2024?", now="2024-12-01T00:00:00Z").summaries
