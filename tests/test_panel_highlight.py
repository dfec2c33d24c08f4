"""The panel marks what a search matched as search matches it: without accents, case or ß,
one Chinese character as a word, and a long text cut around the first such match (found by
an MCP and panel user: "sao paulo" marked only "Paulo", and "Zurich" showed a snippet of a
long message's first lines without the word)."""

from __future__ import annotations

from palimpsest.server.panel.render import SNIPPET, highlight


def marked(html: str) -> list[str]:
    return [part.split("</mark>")[0] for part in str(html).split("<mark>")[1:]]


def test_accents_case_and_spelled_letters_are_marked() -> None:
    text = "Crème brûlée à São Paulo — naïve résumé in Zürich, Straße 5"
    assert marked(highlight(text, "creme brulee sao paulo naive resume zurich strasse")) == [
        "Crème", "brûlée", "São", "Paulo", "naïve", "résumé", "Zürich", "Straße"]
    assert marked(highlight("NAÏVE Naive naive", "naïve")) == ["NAÏVE", "Naive", "naive"]


def test_a_long_text_is_cut_around_its_first_folded_match() -> None:
    text = " ".join(f"lorem{i}" for i in range(200)) + " then Zürich at the end"
    html = str(highlight(text, "Zurich"))
    assert marked(html) == ["Zürich"] and "lorem0 " not in html and len(html) < SNIPPET + 40


def test_one_chinese_character_is_a_word_and_markup_stays_text() -> None:
    assert marked(highlight("我们去京都", "京")) == ["京"]
    html = str(highlight("<img src=x onerror=alert(1)> Zürich", "zurich onerror"))
    assert "<img" not in html and marked(html) == ["onerror", "Zürich"]


def test_a_japanese_query_without_spaces_marks_its_words() -> None:
    """Found by a studio's assistant: 公開日の延期 marked nothing in 「ECサイトの公開日を12月20日に延期します」 (the whole run
    was one word); search cuts it into pairs of characters, and the panel marks those."""
    got = marked(highlight("ECサイトの公開日を12月20日に延期します", "公開日の延期"))
    assert got and "".join(got) == "公開日延期"
    assert marked(highlight("我们去京都", "京")) == ["京"]
