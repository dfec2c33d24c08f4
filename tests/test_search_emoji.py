"""Emoji are found by keyword (a new user's: "🎉" found nothing in ranked search), on both
backends: the indexer names each as a word of the keyword-only context, and a query asks
for those names."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from palimpsest import Memory, Settings
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


def test_compatibility_forms_flags_and_invisible_marks_are_found(memory: Memory) -> None:
    """Found by a user typing with a Japanese input method: full-width "ＡＰＩ" (and a ligature,
    a zero-width space inside a name, a flag) were found by no ranked query, not even by the
    stored text itself — the query was read in NFKC, the index was not."""
    api = memory.append("u", "user", "ＡＰＩキーを更新しました。ＳＱＬのクエリも直しました。")["id"]
    report = memory.append("u", "user", "The ﬁnancial report for Q3 is ready.")["id"]
    name = memory.append("u", "user", "Mül\u200bler agreed to the budget.")["id"]
    flag = memory.append("u", "user", "Heading to Berlin 🇩🇪 next week.")["id"]
    memory.append("u", "user", "Nothing to see here.")
    assert not memory.search("ＸＹＺ").hits
    for query, wanted in [("API", api), ("ＡＰＩ", api), ("sql", api), ("キー", api), ("financial", report),
                          ("ﬁnancial", report), ("Müller", name), ("🇩🇪", flag)]:
        assert memory.search(query).hits[0].message.id == wanted, query


def test_an_emoji_alone_finds_only_what_holds_it(home: Path, store_url: str) -> None:
    """Found by a Japanese indie developer: "🐛" found her bug-fix message and nine unrelated ones (cosines 0.33–0.39).
    The model reads every emoji as the one unknown piece, so "🐛" and "🎉" embed alike and their cosines say nothing."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        fixed = memory.append("g", "user", "🐛バグ修正完了！🎉 ソラのjump判定が壁際で2px ずれてたのを直した")["id"]
        for text in ("Unityのランタイム料金の件、やっぱり不安。エンジン移行を考えてる。2Dだし Godot どう？",
                     "リリースを2027年4月に延期しようかな", "The build is green again, shipping tonight",
                     "よかったです！次は減衰 `exp(-d * _Damping)` を掛けると自然になります。"):
            memory.append("g", "user", text)
        memory.worker().drain()
        for query in ("🐛", "🎉"):
            assert [h.message.id for h in memory.search(query).hits] == [fixed], query
        assert memory.search("🦄").hits == []


def test_substring_and_regex_match_composed_and_decomposed_alike(memory: Memory) -> None:
    """Found by a Spanish-tutor bot's builder: "está" typed composed (NFC) and "está" typed with a combining accent (NFD,
    as macOS keyboards give it) never found each other by substring or regex (ranked search found both). Both are kept
    as typed."""
    composed, decomposed = unicodedata.normalize("NFC", "El libro está aquí."), unicodedata.normalize("NFD", "La mesa está limpia.")
    memory.append("tutor", "user", composed)
    memory.append("tutor", "user", decomposed)
    for form in ("NFC", "NFD"):
        query = unicodedata.normalize(form, "está")
        for mode in ("substring", "regex"):
            assert sorted(h.message.content for h in memory.search(query, mode=mode).hits) == sorted([composed, decomposed]), (form, mode)
    assert [h.message.content for h in memory.search(unicodedata.normalize("NFD", "aquí"), mode="regex").hits] == [composed]


def test_a_decomposed_fragment_is_found_past_the_cap_of_a_composed_message(memory: Memory) -> None:
    """Found in review: past the index's cap the substring scan asked for the fragment as typed only, so "está" typed
    with a combining accent was no hit in a long message typed composed (the index's search asks for both forms)."""
    rows = "".join(f"row {i}: porto coffee X{i}Y seat {i % 30}A\n" for i in range(1500))
    long = unicodedata.normalize("NFC", rows + "el libro está aquí\n" + rows)
    memory.append("tutor", "user", long)
    for form in ("NFC", "NFD"):
        assert [h.message.id for h in memory.search(unicodedata.normalize(form, "está aquí"), mode="substring").hits] != [], form


def test_a_regex_character_set_is_kept_as_typed(memory: Memory) -> None:
    """Found in review: composing the pattern rewrote its character sets: "[e\\u0301]" (an e or a combining accent)
    became "[é]", and matched no "e"."""
    memory.append("tutor", "user", "the mesa is clean")
    memory.append("tutor", "user", unicodedata.normalize("NFD", "La mesa está limpia."))
    assert len(memory.search("m[e\u0301]sa", mode="regex").hits) == 2
    assert len(memory.search(unicodedata.normalize("NFD", "está"), mode="regex").hits) == 1
