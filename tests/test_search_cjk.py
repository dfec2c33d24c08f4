"""Chinese and Japanese text is found by its words on both backends: the tokenizers cut
no words there, so the indexer adds character bigrams to the keyword-only search context
and a query is cut the same way (`palimpsest.segment`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.search.query import query_terms
from palimpsest.segment import cjk_words

TEXTS = [
    "我们决定把数据库迁移到PostgreSQL。",
    "明天下午三点开会。",
    "東京でラーメンを食べました。",
    "The cache layer is Redis.",
]


@pytest.fixture(params=["none", "hash"])
def mixed(request: pytest.FixtureRequest, home: Path, store_url: str) -> Memory:
    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder=request.param, embed_cache="off"))
    for text in TEXTS:
        memory.append("zh", "user", text)
    memory.worker().drain()
    yield memory
    memory.close()


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("数据库", TEXTS[0]),
        ("数据库迁移", TEXTS[0]),
        ("PostgreSQL", TEXTS[0]),  # a Latin word glued to Chinese
        ("开会", TEXTS[1]),
        ("ラーメン", TEXTS[2]),
        ("東京", TEXTS[2]),
        ("Redis", TEXTS[3]),
    ],
)
def test_a_word_of_chinese_or_japanese_text_finds_it_first(mixed: Memory, query: str, found: str) -> None:
    hits = mixed.search(query, limit=5).hits
    assert hits and hits[0].message.content == found
    assert hits[0].parts["fts"] == 1.0


def test_the_text_is_stored_and_returned_as_written(mixed: Memory) -> None:
    hit = mixed.search("数据库", limit=1).hits[0]
    assert hit.message.content == TEXTS[0]
    assert mixed.search("数据库", limit=1, mode="substring").hits[0].message.content == TEXTS[0]


def test_the_previous_turns_words_do_not_match_its_reply(mixed: Memory) -> None:
    hits = mixed.search("数据库", limit=5).hits
    assert all(h.parts.get("fts", 0.0) == 0.0 for h in hits if h.message.content != TEXTS[0])


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("数据库迁移", "数据 据库 库迁 迁移 数 据 库 迁 移"),  # the pairs, then each character (a word of one is found)
        ("迁移到PostgreSQL。", "迁移 移到 PostgreSQL 迁 移 到"),
        ("3点开会", "3 点开 开会 点 开 会"),
        ("豆豆", "豆豆 豆"),
        ("好", "好"),
        ("plain English, café", ""),
        ("", ""),
        ("Ünïcödé 😀 مرحبا", ""),
    ],
)
def test_cjk_words(text: str, words: str) -> None:
    assert cjk_words(text) == words


def test_a_query_is_cut_as_the_index_is() -> None:
    assert query_terms("数据库") == ["数据", "据库"]
    assert query_terms("the 数据库 of PostgreSQL") == ["数据", "据库", "postgresql"]
    assert query_terms("what about it") == ["what", "about", "it"]  # only stop words: kept
    assert query_terms("ﬁle ＡＰＩ") == ["file", "api"]  # compatibility forms folded (a ligature, full width): found by a new user


def test_a_query_of_bytes_that_are_not_utf8_is_refused_clearly(mixed: Memory) -> None:
    """Found by a new user: `palimpsest search "quokka$(printf '\\xff')"` said "embedder unavailable
    (TextEncodeInput must be …)" and ranked by keywords."""
    from palimpsest.errors import InvalidInput

    with pytest.raises(InvalidInput, match="lone surrogate at position 6"):
        mixed.search("quokka\udcff")


def test_a_query_typed_with_a_ligature_finds_the_plain_word(mixed: Memory) -> None:
    assert mixed.search("Ｒｅｄｉｓ", limit=1).hits[0].message.content == TEXTS[3]


def test_letters_that_do_not_decompose_are_found_spelled_out(home: Path, store_url: str) -> None:
    """Found by a platform engineer comparing backends: "strasse", "oresund", "lodz" found "Straße", "Øresund", "Łódź" on
    PostgreSQL (unaccent) and nothing on SQLite; "Odegaard" found a street before Ødegaard."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        said = {w: memory.append(f"s-{w}", "user", text)["id"] for w, text in [
            ("strasse", "Die Praxis ist in der Große Bleichen Straße 12."), ("oresund", "We crossed the Øresund bridge by train."),
            ("lodz", "My sister studies in Łódź now."), ("odegaard", "Martin Ødegaard scored twice."),
            ("aebleskiver", "We made æbleskiver for Christmas."), ("oeuvre", "Her œuvre spans four decades.")]}
        for word, mid in said.items():
            assert [h.message.id for h in memory.search(word).hits] == [mid], word
        assert [h.message.id for h in memory.search("Straße").hits] == [said["strasse"]]  # as written still


def test_a_word_of_one_character_is_found(home: Path, store_url: str) -> None:
    """Found by a multilingual bot's builder: 狗 found no "我的狗叫豆豆，它今年３岁。" in the first twenty (a run was
    indexed as pairs only); 猫 found "猫の名前はモモです。" fifth, by meaning alone."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        dog = memory.append("zh", "user", "我的狗叫豆豆，它今年３岁。")["id"]
        cat = memory.append("ja", "user", "猫の名前はモモです。")["id"]
        memory.append("ja2", "user", "了解です。")
        assert [h.message.id for h in memory.search("狗").hits] == [dog]
        assert [h.message.id for h in memory.search("猫").hits] == [cat]
        assert [h.message.id for h in memory.search("豆豆").hits] == [dog]


STUDIO = [
    "ロゴの色は藍色に決まりました。",
    "はい、お願いします。",
    "ECサイトの公開日は12月15日です。",
    "Le rendez-vous avec l'imprimeur est mardi à 10h.",
    "Nous avons choisi la police Zen pour le site.",
]


def test_a_question_in_japanese_or_french_about_nothing_stored_finds_nothing(home: Path, store_url: str) -> None:
    """Found by a studio's assistant: リヨン事務所の家賃はいくらですか？ came back with every Japanese message ("です",
    "すか", "はい" are grammar; the English model puts any two Japanese texts 0.5–0.8 apart), and "Quel est le loyer du
    bureau de Lyon ?" with every French one ("le", "de", "est"); the same question in English had none."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        for text in STUDIO:
            memory.append("studio", "user", text)
        memory.worker().drain()
        for query in ("リヨン事務所の家賃はいくらですか？", "Quel est le loyer du bureau de Lyon ?", "What is the rent of the Lyon office?"):
            found = memory.search(query)
            assert found.hits == [] and found.notes, (query, [h.message.content for h in found.hits])
        for query, said in (("公開日はいつですか？", STUDIO[2]), ("Quelle police avons-nous choisie pour le site ?", STUDIO[4]),
                            ("ロゴの色は何ですか", STUDIO[0])):
            assert memory.search(query).hits[0].message.content == said, query


def test_kana_voicing_marks_are_letters_not_accents() -> None:
    """Found by a studio's assistant: テータ marked データ in the panel and ハス marked バス (the voicing mark was dropped
    as if an accent), while "José" still folds to "Jose"."""
    from palimpsest.segment import fold

    assert fold("データ バス がっこう") == "データ バス がっこう" and fold("José Núñez") == "Jose Nunez"


# a Japanese indie developer's memory: a Godot crash solved in a Japanese chat, and other Japanese turns
GAME_DEV = [
    ("シーン切り替えで落ちる。ログ貼る。\n```\nERROR: Attempted to use a freed RID (Texture2D) in uniform set.\n"
     "   at: uniform_set_create (servers/rendering/rendering_device.cpp:6542)\n```"),
    ("バックトレースから、**解放済みのテクスチャ RID を GPUParticles2D の ShaderMaterial が参照している**のが原因です。"
     "stage2 の `noise_tex` をシーン内ノードで `load()` して、シーン切替時に `queue_free()` で解放されたのに、"
     "Autoload 側に残った GPUParticles2D がまだ同じ `ShaderMaterial` を使っています。"),
    "root causeそれだった！Autoloadのパーティクルがstage2のnoise_texを掴んでた。preloadで直った👍",
    "リリースは2027年6月に延期する。パブリッシャーにもメールで伝えた。",
    "Unityのランタイム料金の件、やっぱり不安。エンジン移行を考えてる。2Dだし Godot どう？",
    "決めた。エンジンは Godot 4.3 に移行する。GDScriptで全部書き直す。Switchは移植会社に頼む。",
    "よかったです！次は減衰 `exp(-d * _Damping)` を掛けると自然になります。",
]


def test_a_class_name_in_a_japanese_or_chinese_sentence_is_no_stranger(home: Path, store_url: str) -> None:
    """Found by a Japanese indie developer: "パーティクルのメモリリーク、GPUParticles2D の process_material が解放されてない"
    had no hits ("no message close to this query speaks of gpuparticles2d"), and neither had her Chinese colleague's
    turn in her agent loop, though the crash conversation names GPUParticles2D twice: their letters counted, the
    Latin class names outweighed the Japanese, so the sentence read as one the model reads, and its cosines (0.35–0.49
    for any Japanese text) as evidence that no message near it spoke of a stranger."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        for text in GAME_DEV:
            memory.append("godot", "user", text)
        memory.worker().drain()
        for query in ("パーティクルのメモリリーク、GPUParticles2D の process_material が解放されてない",
                      "我发现粒子系统有内存泄漏，每次切换场景多占用大约 12MB。原因是 GPUParticles2D 的 process_material 没有释放。"):
            assert any("GPUParticles2D" in h.message.content for h in memory.search(query).hits), query


def test_a_japanese_or_chinese_question_about_nothing_stored_finds_no_fact(home: Path, store_url: str) -> None:
    """Found by a Japanese indie developer: "猫の名前は？" (no cat stored) recalled "李伟: 我已经在 feature/particles-fix
    分支修复了…" in 14 of 38 blocks, and "商標" found it too: a fact needed a keyword match or a cosine of 0.35, and the
    English model puts any two Japanese or Chinese texts 0.5–0.8 apart. In such a query a fact needs a keyword match,
    and a fact's bigrams are its keywords (migration 0020 / postgres 0019), so a question it has a word of finds it."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        memory.facts.write("李伟: 我已经在 feature/particles-fix 分支修复了，麻烦你 review 一下。")
        hero = memory.facts.write("主人公の名前はソラ。")
        for query in ("猫は何歳？", "商標", "我的猫叫什么？"):
            assert memory.facts.search(query) == [], query
        for query in ("主人公の名前は？", "主人公の名前は何ですか？", "猫の名前は？"):  # the last by 名前, its word (as "What is
            # the cat's name?" finds "The hero's name is Sora."): never the Chinese fact, which shares none
            assert [h.fact.id for h in memory.facts.search(query)] == [hero.id], query


def _before_fact_keywords(store_url: str) -> None:
    """A store at the schema before facts held keywords, with one Japanese fact in it."""
    from importlib import resources

    backend = "sqlite" if store_url.startswith("sqlite") else "postgres"
    folder = resources.files("palimpsest.store.migrations").joinpath(backend)
    files = sorted((int(p.name.split("_")[0]), p) for p in folder.iterdir() if p.name.endswith(".sql"))
    (keywords,) = [i for i, (_, p) in enumerate(files) if p.name.endswith("_fact_keywords.sql")]
    files = files[:keywords + 1]  # (the schema up to it: later migrations come after it is applied)
    rows = ["INSERT INTO fact_vaults (name, created_at) VALUES ('facts', '2026-03-01T10:00:00Z')",
            ("INSERT INTO facts (id, vault, text, norm, valid_from, recorded_at) VALUES ('fct_old', 'facts', '主人公の名前はソラ。', "
             "'主人公の名前はソラ', '2026-03-01T10:00:00Z', '2026-03-01T10:00:00Z')")]
    if backend == "sqlite":
        import sqlite3

        Path(store_url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(store_url.removeprefix("sqlite:///")) as conn:
            conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)")
            for version, path in files[:-1]:
                conn.executescript(path.read_text())
                conn.execute("INSERT INTO schema_migrations VALUES (?, datetime('now'))", (version,))
            for row in rows:
                conn.execute(row)
        return
    import psycopg

    from palimpsest.store.postgres import create_extension

    with psycopg.connect(store_url, autocommit=True) as conn:
        for ext in ("vector", "pg_trgm", "unaccent"):
            create_extension(conn, ext)
        conn.execute("CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL)")
        for version, path in files[:-1]:
            conn.execute(path.read_text())
            conn.execute("INSERT INTO schema_migrations VALUES (%s, now())", (version,))
        for row in rows:
            conn.execute(row)


def test_a_fact_written_before_its_keywords_is_given_them_at_open(store_url: str) -> None:
    """The migration that gave facts their keyword-only words cannot cut them in SQL: the facts already stored are
    given theirs in Python as it is applied, or a Japanese question would find them by no word (cosines of such a
    query no longer count)."""
    from palimpsest.store import open_store
    from palimpsest.store.facts_base import FactQuery

    _before_fact_keywords(store_url)
    store = open_store(store_url)
    try:
        assert [i for i, _ in store.fact_keyword_search(["主人", "名前"], FactQuery(), 5, True)] == ["fct_old"]
    finally:
        store.close()
