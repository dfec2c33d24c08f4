"""Prompts carry whole messages (issue 20, finding 6): the distillation and summary prompts
split a turn or a stretch between messages to stay within the budget, never inside one;
only a single message longer than the whole budget is cut, and its line says so and names
the id that restores it. Real fake-LLM server on loopback; both backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakeopenai import FakeOpenAI, Reply
from palimpsest import Memory, Settings
from palimpsest.distill import batches, message_line
from palimpsest.records import Message

BUDGET = 1000  # tokens: 4,000 characters of message text per prompt


def text(tag: str, chars: int) -> str:
    """Distinct words, so that any cut shows: `tag-0 tag-1 …` up to `chars` characters."""
    words, n = [], 0
    while sum(len(w) + 1 for w in words) < chars:
        words.append(f"{tag}{n}")
        n += 1
    return " ".join(words)


FACTS = ["The alpha deploy target is Fly.io.", "Maria owns the billing service.", "The office plant needs water on Tuesdays."]


def responder(body: dict[str, Any], seen: list[str]) -> Reply:
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    seen.append(user)
    if "distill" in system:
        n = len([u for u in seen if u.startswith("Session")]) - 1  # this distill call's part
        return Reply.json({"summary": f"part {n}", "facts": [{"text": FACTS[n % 3], "kind": "fact", "entities": [], "valid_from": None}],
                           "corrections": [], "tasks": []})
    return Reply.json({"summary": "a stretch of talk", "identifiers": []})


def settings(url: str) -> Settings:
    return Settings.load(env={}, embedder="none", llm_url=url, llm_model="fake", llm_backoff="0,0,0", llm_structured="json_schema",
                         summary_leaf_tokens=BUDGET, summary_branch_tokens=3000, summary_max_tokens=200, compact_after=1000,
                         tags_suggest=False, wiki_extract=False)


def test_batches_split_between_messages_and_keep_an_oversized_one_alone() -> None:
    ms = [Message(id=f"evt_{i}", session="s", role="user", content="x" * n, created_at="2026-01-01T00:00:00Z")
          for i, n in enumerate([2000, 1500, 3000, 6000, 100])]
    assert [[m.id for m in b] for b in batches(ms, BUDGET)] == [["evt_0", "evt_1"], ["evt_2"], ["evt_3"], ["evt_4"]]
    whole = message_line(1, ms[2], None, BUDGET * 4)
    assert "x" * 3000 in whole and "cut" not in whole  # 3,000 characters: the old cut was at 2,000
    cut = message_line(1, ms[3], None, BUDGET * 4)
    assert "x" * 4000 in cut and "x" * 4001 not in cut and "[cut: 2000 more characters" in cut and "memory_get_full evt_3" in cut


def test_a_row_the_index_capped_says_so() -> None:
    m = Message(id="evt_9", session="s", role="user", content="y" * 16000, created_at="2026-01-01T00:00:00Z",
                truncated=True, full_content_length=40000)
    line = message_line(1, m, None, BUDGET * 16)
    assert "y" * 16000 in line and line.endswith("[the index holds the first 16000 of 40000 characters; whole text: memory_get_full evt_9]")


def test_a_long_turn_is_distilled_in_parts_of_whole_messages(home: Path, store_url: str) -> None:
    seen: list[str] = []
    said = [("user", "Alpha deploys to Fly.io, Maria owns billing, the office plant wants water on Tuesdays. " + text("u", 2000)),
            ("assistant", text("a", 1500)), ("assistant", text("b", 3000)), ("assistant", text("c", 6000))]  # (what the facts say)
    with FakeOpenAI(responder=lambda body: responder(body, seen)) as fake, Memory(home, store_url, settings=settings(fake.url)) as memory:
        for i, (role, content) in enumerate(said):
            memory.append("s", role, content, created_at=f"2026-03-04T10:0{i}:00Z")
        result = memory.distiller.close_turn("s")
        prompts = [p for p in seen if p.startswith("Session")]
        assert len(prompts) == 3 and result.origin == "llm"
        for content in [c for _, c in said[:3]]:  # whole, in exactly one part
            assert sum(content in p for p in prompts) == 1
        assert said[0][1] in prompts[0] and said[1][1] in prompts[0] and said[2][1] in prompts[1]
        assert said[3][1][:4000] in prompts[2] and said[3][1] not in prompts[2] and "[cut: " in prompts[2]
        assert {f.text for f in memory.facts.query()} == set(FACTS)  # every part's facts curated
        assert result.output["summary"] == "part 0 part 1 part 2"


def test_summary_leaves_hold_whole_messages(home: Path, store_url: str) -> None:
    seen: list[str] = []
    said = [text("p", 2500), text("q", 3500), text("r", 6000), text("s", 500), text("t", 600)]
    with FakeOpenAI(responder=lambda body: responder(body, seen)) as fake, Memory(home, store_url, settings=settings(fake.url)) as memory:
        ids = [memory.append("s", "user", c, created_at=f"2026-03-04T10:0{i}:00Z")["id"] for i, c in enumerate(said)]
        memory.summaries.compact("s", final=True)
        leaves = memory.store.session_summaries("s", 0)
        assert [leaf.sources for leaf in leaves] == [[ids[0]], [ids[1]], [ids[2]], [ids[3], ids[4]]]
        prompts = [p for p in seen if p.startswith("Session s;")]
        for content in (said[0], said[1], said[3], said[4]):
            assert any(content in p for p in prompts)
        assert any(said[2][:4000] in p and f"memory_get_full {ids[2]}" in p for p in prompts)
