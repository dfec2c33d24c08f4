"""The local wiki fallback (issue 20, finding 7): no page for a word that names a kind of
thing ("PR"), and a speaker's page holds that speaker's own lines, not the other side's
lines that address them. Both backends."""

from __future__ import annotations

from palimpsest import Memory
from palimpsest.wiki import text as tx
from test_wiki import quiet, say

TURNS = [("Caroline", "Hey Mel! I went to a support group yesterday and it was so powerful for me."),
         ("Melanie", "Wow Caroline, that is great. I painted a lake sunrise last year with my kids."),
         ("Caroline", "I also opened the PR for the billing fix today, it is quite big, and the API changed."),
         ("Melanie", "Nice, I will review the PR tonight after the kids sleep, and check the CI too.")]


def test_pages_are_topics_and_speakers_keep_their_own_lines(memory: Memory) -> None:
    quiet(memory)
    for i in range(2):  # a name said in two leaves becomes a subject page (wiki_min_leaves)
        memory.wiki.mine(say(memory, f"s{i}", TURNS))
    pages = {t["title"]: t for t in memory.wiki.list(limit=100)}
    assert sorted(pages) == ["Caroline", "Melanie"]  # no "PR", "API" or "CI" page
    for title, page in pages.items():
        said = memory.store.wiki_statements([page["id"]])
        assert said and all(s.who == title for s in said), [(s.who, s.text) for s in said]
    assert pages["Melanie"]["aliases"] == ["mel"]  # "Hey Mel!" still names her page


def test_names_leave_out_words_for_kinds_of_things() -> None:
    assert tx.names("Then the PR from GitHub broke the CI build for Anna.") == ["GitHub", "Anna"]
    assert tx.names("We met Dr Ruth Westheimer at the API summit.") == ["Ruth Westheimer"]
