"""Emoji are found by keyword (a new user's: "🎉" found nothing in ranked search), on both
backends: the indexer names each as a word of the keyword-only context, and a query asks
for those names."""

from __future__ import annotations

from palimpsest import Memory
from palimpsest.search.query import query_terms


def test_an_emoji_finds_the_message_that_holds_it(memory: Memory) -> None:
    shipped = memory.append("e", "user", "Shipped the release today 🎉🚀")["id"]
    memory.append("e", "assistant", "Congratulations, well done!")
    memory.append("e", "user", "The build is broken again 🔥")
    assert [h.message.id for h in memory.search("🎉").hits] == [shipped]
    assert memory.search("release 🚀").hits[0].message.id == shipped
    assert not memory.search("🦄").hits


def test_query_terms_name_emoji_and_leave_other_symbols() -> None:
    assert query_terms("🎉 party") == ["party", "emoji1f389"]
    assert query_terms("a → b ok") == ["b", "ok"]
