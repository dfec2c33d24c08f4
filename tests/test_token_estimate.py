"""The recall block's token estimate (issue 19: candidates weighed by estimate, the block
counted exactly): close to the tokenizer on prose, and whatever it says — far off on ids
and numbers, or on text made to fool it — the assembled block never exceeds its budget."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.recall.block import RecallItem
from palimpsest.recall.pack import fill
from palimpsest.tokens import count_tokens, estimate_tokens

PROSE = [
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful.",
    "assistant: The retry cap (3) is below the upstream timeout; raise it to five and add jitter.",
    "Melanie: We're thinking about going camping at the lake next month, maybe with the kids!",
]


def test_the_estimate_is_close_on_prose_and_counts_marks() -> None:
    for text in PROSE:
        assert abs(estimate_tokens(text) - count_tokens(text)) <= 0.15 * count_tokens(text) + 1, text
    assert estimate_tokens("") == 0 and estimate_tokens("a, b.") == 5  # 4 pre-tokens × 1.06 = 4.24, rounded up


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.text(min_size=1, max_size=300),
                          st.from_regex(r"[0-9]{20,80}", fullmatch=True),  # digit runs: the tokenizer splits them finer
                          st.sampled_from(PROSE)), min_size=1, max_size=40),
       st.integers(min_value=40, max_value=1500))
def test_the_block_never_exceeds_its_budget(texts: list[str], budget: int) -> None:
    items = [RecallItem(f"evt_{i:09d}", "message", f"2026-03-{1 + i % 5:02d}", text, 1.0 - i / 100) for i, text in enumerate(texts)]
    _chosen, tokens, block = fill([], items, [], budget, set())
    assert tokens <= budget and (not block or count_tokens(block) == tokens)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(max_size=200), max_size=30))
def test_counting_lines_in_one_pass_equals_counting_each(texts: list[str]) -> None:
    from palimpsest.tokens import count_tokens_batch

    lines = [t.replace("\n", " ").replace("\r", " ") for t in texts]  # (recall lines are flattened: one line each)
    assert count_tokens_batch(lines) == [count_tokens(t) for t in lines]


def test_what_wordpiece_reads_as_one_unknown_counts_as_an_llm_would_read_it() -> None:
    """Found by a multilingual user: "x"*101, an emoji family repeated and a run of kana were one
    token each ([UNK]), so a 5,400-character Japanese message took a block's room far past its
    budget and crowded out the session's own latest turn."""
    from palimpsest.tokens import count_tokens_batch, truncate_to_tokens

    kana = "デプロイのスケジュールについてミーティングしましょう。"
    assert count_tokens(kana) >= 15 and estimate_tokens(kana) >= 15
    assert count_tokens("x" * 101) >= 25 and count_tokens("👨‍👩‍👧‍👦" * 800) > 3000
    assert count_tokens_batch(["x" * 101, "hello world", kana]) == [count_tokens("x" * 101), 2, count_tokens(kana)]
    for text, budget in [(kana * 20, 40), ("x" * 400, 7), ("ab " + "x" * 400, 7), ("hello " + "デ" * 50 + " end", 10)]:
        cut, n = truncate_to_tokens(text, budget)
        assert text.startswith(cut) and n == count_tokens(cut) <= budget and n >= budget - 3
    assert count_tokens("Hello world, this is fine.") == 7  # prose as before


def test_a_long_unbroken_message_keeps_its_line_cap_in_the_block(tmp_path) -> None:
    from palimpsest import Memory, Settings
    from palimpsest.recall.block import LINE_TOKENS

    with Memory(tmp_path / "h", settings=Settings.load(env={}, embedder="none")) as memory:
        memory.append("jp", "user", "会議の議事録です。" + "デプロイのスケジュールについてミーティングしましょう" * 200)
        memory.append("jp", "user", "会議は明日の十時からです。")
        r = memory.recall("jp", "会議", 2000)
        assert r.tokens <= 2000 and count_tokens(r.block) <= 2000
        assert all(count_tokens(i.text) <= LINE_TOKENS + 5 for i in r.items)
        assert any("明日の十時" in i.text for i in r.items)
