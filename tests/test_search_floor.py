"""The relevance floor: a query about nothing stored returns no hits (and says so), and
recall then holds only the live tail; real evidence is never dropped by it."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.errors import InvalidInput
from palimpsest.recall.recaller import hits_for
from palimpsest.records import Hit, Message
from palimpsest.search.floor import Floor, addresses, apply_floor, asked_names, beyond_model, floor_for, names_any, query_names
from palimpsest.store import Filters

CORPUS = [
    ("user", "Melanie painted a sunrise over the lake last weekend"),
    ("assistant", "That sounds lovely, what colours did Melanie use for the lake"),
    ("user", "Mostly blue and orange, the community centre will show it"),
    ("assistant", "The retry cap matches the upstream timeout of thirty seconds"),
]


def open_memory(home: Path, store_url: str, **settings: object) -> Memory:
    values = {"embedder": "hash", "embed_cache": "off", **settings}
    memory = Memory(home, store_url, settings=Settings.load(env={}, **values))
    memory.ingest_session("s1", [{"role": r, "content": c} for r, c in CORPUS])
    memory.worker().drain()
    return memory


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("What did Melanie paint?", ["melanie"]),
        ("What kind of lighting does Nate's gaming room have?", ["nate"]),
        ("Melanie went where? Then Caroline left.", ["caroline"]),  # a sentence's first word is not a name
        ("Which city have both Jean and John visited?", ["jean", "john"]),
        ("what did i paint", []),
        ("When did I go to Lisbon with The Band", ["lisbon", "band"]),  # "The" is a stop word
        ("Who did Nate invite to his party in June, on a Sunday?", ["nate"]),  # months and weekdays are times, not names
        ("Did Jan call in May?", ["jan"]),  # an abbreviation can be a name
        ("¿Dónde vive Núñez?", ["nunez"]),  # "¿" opens the sentence; a name is read without its accents
        ("Hola. ¡Qué bien! ¿Quién es José?", ["jose"]),
        ("For CHF we should use the symbol 'CHF' not 'Fr.'", ["chf", "fr"]),  # one acronym said twice is no shouting
        ("In welcher Stadt wohne ich?", []),  # German capitalises every noun: a capital says no name
        ("Wo wohnt Anna? Welche Adresse hat sie?", []),
        ("Was macht AWS hier bei uns?", ["aws"]),  # (an acronym still is one)
        ("What did Anna say about der Spiegel?", ["anna", "spiegel"]),  # English, with a German title in it
        ("The pager rotates on Mondays and Fridays in May", []),  # a weekday's plural is a time (found by CI on a Monday)
        ("LEDGER-E4471", []),  # a code's part after its hyphen opens no name of its own (found by a Codex user)
        ("what is LEDGER-E4471 about", ["ledger-e4471"]),
        ("Why does Mary-Jane's build fail?", ["mary-jane"]),
        ("list the rejected PRs", ["pr"]),  # an acronym's plural is the acronym (found by a new user: "PRs" was a name)
        ("Which URLs did Sam share?", ["url", "sam"]),
        ("Which PRs touched the API?", []),  # two acronyms: shouting, as "Which PR touched the API?"
        ("", []),
    ],
)
def test_query_names(query: str, names: list[str]) -> None:
    assert query_names(query) == names


def test_floor_defaults_are_measured_per_model_and_off_for_others() -> None:
    assert floor_for("all-MiniLM-L6-v2-onnx-int8") == Floor(0.35, 0.45, 0.55)
    assert floor_for("openai:text-embedding-3-small") == Floor(0.0, 0.0, 0.0)  # cosines of another model mean other things
    assert floor_for("hash-64", "0.3", "off", "0.6") == Floor(0.3, 0.0, 0.6)
    with pytest.raises(InvalidInput, match="floor_stranger"):
        floor_for("x", "auto", "auto", "2")
    for bad in ("high", "1.5", "-0.1"):
        with pytest.raises(InvalidInput, match="floor_similarity"):
            floor_for("x", bad)


def _hit(mid: str, fts: float) -> Hit:
    return Hit(Message(id=mid, session="s", role="user", content=mid, created_at="2024-01-01T00:00:00Z"), 1.0, {"fts": fts})


def test_apply_floor_keeps_keyword_matches_and_close_neighbours() -> None:
    hits = [_hit("keyword", 0.5), _hit("close", 0.0), _hit("far", 0.0)]
    cosines = {"keyword": 0.1, "close": 0.5, "far": 0.2}
    kept, notes = apply_floor(hits, cosines, "anything", Floor(0.35, 0.45), lambda w: True)
    assert [h.message.id for h in kept] == ["keyword", "close"] and notes == []
    kept, notes = apply_floor(hits[1:], {"close": 0.3, "far": 0.2}, "anything", Floor(0.35, 0.45), lambda w: True)
    assert kept == [] and "no stored message matches" in notes[0]
    # no vectors: the floor cannot judge, so it keeps what keyword search found
    assert apply_floor(hits, {}, "anything", Floor(0.35, 0.45), lambda w: False)[0] == hits


def test_apply_floor_a_query_about_someone_unknown() -> None:
    hits = [_hit("paint", 0.9)]
    floor = Floor(0.35, 0.45)
    kept, notes = apply_floor(hits, {"paint": 0.3}, "What did Zorblax paint?", floor, lambda w: w != "zorblax")
    assert kept == [] and "zorblax" in notes[0]
    # one name of the query is known: its keyword evidence stands
    kept, _ = apply_floor(hits, {"paint": 0.3}, "Did Zorblax and Melanie paint?", floor, lambda w: w == "melanie")
    assert kept == hits
    # something stored is close in meaning: not a query about nothing
    kept, _ = apply_floor(hits, {"paint": 0.6}, "What did Zorblax paint?", floor, lambda w: w != "zorblax")
    assert kept == hits


def _said(mid: str, text: str, fts: float) -> Hit:
    return Hit(Message(id=mid, session="s", role="user", content=text, created_at="2024-01-01T00:00:00Z"), 1.0, {"fts": fts})


def test_a_third_party_nobody_stored_needs_the_stranger_bar_and_a_user_query_does_not() -> None:
    floor = Floor(0.35, 0.45, 0.55)
    hits = [_said("trip", "the hotel by the beach had a pool", 0.8)]
    # about a third party, no message closer than 0.55: nobody here is Nate
    kept, notes = apply_floor(hits, {"trip": 0.5}, "Which hotel did Nate book?", floor, lambda w: False)
    assert kept == [] and "nate" in notes[0] and "0.55" in notes[0]
    # the user's own question with a place never stored: the lower bar, which 0.5 passes
    for query in ("Can you suggest a hotel for my trip to Miami?", "Which hotel would you suggest in Miami?"):
        assert apply_floor(hits, {"trip": 0.5}, query, floor, lambda w: False)[0] == hits
    # close enough in meaning: kept
    assert apply_floor(hits, {"trip": 0.6}, "Which hotel did Nate book?", floor, lambda w: False)[0] == hits


def test_a_third_party_is_known_by_the_first_hits_not_by_a_passing_mention() -> None:
    floor = Floor(0.35, 0.45, 0.55)
    stray = [_said(f"m{i}", f"the hotel had a pool {i}", 0.5) for i in range(10)] + [_said("lennon", "John Lennon sang", 0.1)]
    cos = {h.message.id: 0.4 for h in stray}
    # "john" is stored (known() says so), but none of the first ten hits speaks of him
    assert apply_floor(stray, cos, "Which hotel did John book?", floor, lambda w: True)[0] == []
    named = [_said("john", "John booked the hotel with a pool", 0.9), *stray]
    assert apply_floor(named, {**cos, "john": 0.5}, "Which hotel did John book?", floor, lambda w: True)[0] == named


def test_a_name_in_passing_is_not_evidence_for_a_question_about_that_name() -> None:
    """A large memory holds a "John" somewhere (a code sample, a recipe); a question about
    another John is answerable only by a hit that is by John or near the question in
    meaning — or when the name is all the question asks ("Who is …?")."""
    floor = Floor(0.35, 0.45, 0.55)
    passing = _said("code", 'user = User(name="John", age=42)  # fixture', 0.9)
    filler = [_said(f"m{i}", f"the build log line {i}", 0.0) for i in range(5)]
    cos = {"code": 0.3, **{h.message.id: 0.2 for h in filler}}
    query = "What did John paint for the community centre?"
    assert apply_floor([passing, *filler], cos, query, floor, lambda w: True)[0] == []
    by_john = Hit(Message(id="said", session="s", role="assistant", content="I finished it last week", created_at="2024-01-01T00:00:00Z",
                          metadata={"speaker": "John"}), 1.0, {"fts": 0.0})
    assert apply_floor([passing, by_john], {**cos, "said": 0.4}, query, floor, lambda w: True)[0] == [passing, by_john]
    near = _said("near", "John's mural went up at the centre", 0.2)
    assert apply_floor([passing, near], {**cos, "near": 0.5}, query, floor, lambda w: True)[0] == [passing, near]
    # a topic word shared with a far hit is not enough: "book" or "game" is in every large memory
    topical = _said("topic", "John Grisham's books paint a grim picture", 0.5)
    assert apply_floor([passing, topical], {**cos, "topic": 0.3}, query, floor, lambda w: True)[0] == []
    mention = _said("who", "Anthony is my cousin, he visits in May", 0.9)
    assert apply_floor([mention], {"who": 0.25}, "Who is Anthony?", floor, lambda w: True)[0] == [mention]


def test_a_hit_naming_the_person_and_what_is_asked_holds_them_without_speaker_metadata() -> None:
    """A chat imported without speakers ("Priya: the deploy is blocked…" typed by the user):
    the hit that names Priya and shares what the question asks about is evidence when it is
    as close as a hit needs to be (`similarity`), though not `near` the question."""
    floor = Floor(0.35, 0.45, 0.55)
    query = "What did Priya say about the deploy?"
    told = _said("told", "Priya said the deploy is blocked on the migration", 0.8)
    filler = [_said(f"m{i}", f"the build log line {i}", 0.0) for i in range(5)]
    cos = {"told": 0.42, **{h.message.id: 0.2 for h in filler}}
    assert apply_floor([told, *filler], cos, query, floor, lambda w: True)[0] == [told]
    # far in meaning, the shared word is a topic every large memory has: no evidence
    kept, notes = apply_floor([told, *filler], {**cos, "told": 0.3}, query, floor, lambda w: True)
    assert kept == [] and "speaks of priya" in notes[0] and "0.55" in notes[0]


@pytest.mark.parametrize("key", ["speaker", "author", "name", "sender"])
def test_a_speaker_is_read_from_any_key_that_names_one(key: str) -> None:
    floor = Floor(0.35, 0.45, 0.55)
    by = Hit(Message(id="by", session="s", role="user", content="the migration is done", created_at="2024-01-01T00:00:00Z",
                     metadata={key: "Priya"}), 1.0, {"fts": 0.5})
    assert apply_floor([by], {"by": 0.3}, "What did Priya say about the migration?", floor, lambda w: True)[0] == [by]
    tool = Hit(Message(id="tool", session="s", role="tool", content="", tool_result="the migration is done",
                       created_at="2024-01-01T00:00:00Z", metadata={"name": "priya"}), 1.0, {"fts": 0.5})
    assert tool.message.speaker == ""  # OpenAI's `name` on a tool's output is the function's


def test_a_speaker_named_by_author_metadata_answers_a_question_about_them(home: Path, store_url: str) -> None:
    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder="hash", embed_cache="off", floor_similarity="0.5",
                                                            floor_unknown="0.9", floor_stranger="0.95"))
    try:
        said = [("Priya", "the deploy is blocked on the migration"), ("Sam", "lunch is at noon")]
        memory.ingest_session("team", [{"role": "user", "content": c, "metadata": {"author": a}} for a, c in said])
        memory.worker().drain()
        hits = memory.search("What did Priya say about the deploy?").hits
        assert [h.message.content for h in hits[:1]] == ["the deploy is blocked on the migration"]
        assert memory.search("What did Zorblax say about the deploy?").hits == []
        block = memory.recall(None, "What did Priya say about the deploy?", 1000).block
        assert "the deploy is blocked on the migration" in block  # the turn, or the fact distilled from it
    finally:
        memory.close()


def test_a_query_about_nothing_stored_has_no_hits_and_recall_only_the_live_tail(home: Path, store_url: str) -> None:
    memory = open_memory(home, store_url, floor_similarity="0.5", floor_unknown="0.9")
    try:
        for query in ("vorbik tralune zassemi", "What did Zorblax paint at the lake?"):
            result = memory.search(query)
            assert result.mode == "hybrid" and result.hits == []
            assert any("no hits" in n for n in result.notes)
            block = memory.recall("s1", query, 4000)
            assert block.items and all(i.kind == "live" for i in block.items)
        # real evidence stays: a keyword match, and a query naming someone stored
        assert memory.search("retry cap").hits[0].message.content.startswith("The retry cap")
        hits = memory.search("What did Melanie paint?").hits
        assert any("Melanie painted" in h.message.content for h in hits[:2])
    finally:
        memory.close()
    # the floor off: every vector neighbour comes back, as before
    off = Memory(home, store_url, settings=Settings.load(env={}, embedder="hash", embed_cache="off",
                                                         floor_similarity="off", floor_unknown="off"))
    try:
        assert len(off.search("vorbik tralune zassemi").hits) == len(CORPUS)
    finally:
        off.close()


def test_summaries_and_wiki_statements_are_held_to_the_floor(home: Path, store_url: str) -> None:
    """Found by a project-agent evaluator: "What did we decide about the TV advertising campaign?" had no hits (nothing
    stored names TV), yet search returned ten summaries and recall held seven of them and a wiki statement."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        for n in range(3):
            memory.ingest_session(f"atlas-{n}", [{"role": r, "content": c} for r, c in [
                ("user", f"We decided to switch payments from Braintree to Stripe, round {n}."),
                ("assistant", "Noted: Stripe replaces Braintree for payments."),
                ("user", "Priya will own the Stripe migration and the budget is $150,000."),
                ("assistant", "Recorded: Priya owns the migration; budget $150,000."),
                ("user", "The launch moves to April 25 after the offline sync bugs."),
                ("assistant", "Launch date recorded as April 25.")]])
            memory.summaries.compact(f"atlas-{n}", final=True, use_llm=False)
        memory.worker().drain()
        assert memory.search("Who owns the Stripe migration?").summaries  # summaries still answer what they hold
        result = memory.search("What did we decide about the TV advertising campaign?")
        assert result.hits == [] and result.summaries == [] and result.unknown == ["tv"]
        block = memory.recall("atlas-9", "What did we decide about the TV advertising campaign?")
        assert [i.kind for i in block.items if i.kind != "live"] == []


def test_a_larger_budget_holds_more_evidence(memory: Memory) -> None:
    memory.ingest_session("s1", [{"role": "user", "content": f"the garden had {i} tomatoes on day {i} of the harvest"} for i in range(60)])
    small, large = memory.recall(None, "garden tomatoes harvest", 1000), memory.recall(None, "garden tomatoes harvest", 4000)
    shown = lambda r: sum(1 for i in r.items if i.kind == "message")
    # search asked for a budget's worth (recaller.hits_for), not a fixed 20
    assert shown(large) > hits_for(1000) >= shown(small) - 1 and hits_for(1000) > 20
    assert large.tokens <= 4000 and large.tokens > 2 * small.tokens


def test_a_turn_without_a_vector_yet_is_found_by_its_words(home: Path, store_url: str) -> None:
    """Found by a coding agent's user: a turn captured a moment ago (its embedding queued) was
    no hit of a query naming its words — "TLS" was read as a third party no hit spoke of, the
    fresh turn's cosine taken as −1 — for minutes after a large capture."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        memory.ingest_session("old", [{"role": "user", "content": f"we talked about the billing page layout, item {i}"} for i in range(20)])
        memory.worker().drain()
        fresh = memory.append("new", "user", "Decision: the Quuxrelay58 gateway rotates its TLS certificate every 45 days.")["id"]
        assert [h.message.id for h in memory.search("Quuxrelay58 TLS certificate").hits] == [fresh]
        assert memory.search("How often does the gateway rotate its TLS certificate?").hits[0].message.id == fresh


def test_a_name_held_by_a_message_in_another_language_is_known() -> None:
    """Found by a multilingual chat bot's builder: the local model is English, so a German
    message about Sabine had a cosine of 0.12 with "Where does Sabine work?" and the floor
    dropped it — the one message holding the name, while a fact about another person stayed."""
    floor = Floor(0.35, 0.45, 0.55)
    german = _said("de", "Meine Kollegin Sabine arbeitet jetzt bei Bosch in Stuttgart.", 0.9)
    russian = _said("ru", "Моя коллега Сабина теперь работает в Bosch, Sabine", 0.9)
    for hit in (german, russian):
        assert apply_floor([hit], {hit.message.id: 0.12}, "Where does Sabine work?", floor, lambda w: True)[0] == [hit]
    # an English passing mention stays no evidence (the cosine of an English message is read)
    passing = _said("en", 'user = User(name="Sabine", age=42)  # fixture', 0.9)
    assert apply_floor([passing], {"en": 0.12}, "Where does Sabine work?", floor, lambda w: True)[0] == []


@pytest.mark.parametrize(("text", "other"), [
    ("Meine Kollegin Sabine arbeitet jetzt bei Bosch in Stuttgart.", True),
    ("Ma collègue Sabine travaille maintenant chez Bosch à Stuttgart.", True),
    ("我的同事Sabine现在在斯图加特的博世工作。", True),
    ("John said the deploy is blocked by the migration", False),
    ("kubectl get pods -n prod | grep api-gateway", False),  # code: no language's short words
    ("Café au lait is my favourite, I had one in Paris", False),
])
def test_beyond_model(text: str, other: bool) -> None:
    assert beyond_model(text) is other


def test_words_in_capitals_of_code_or_shouting_are_no_names() -> None:
    """`DROP TABLE` had emptied a search: "TABLE" was read as a third party no hit spoke of."""
    assert query_names("DROP TABLE users") == []
    assert query_names("What did Priya say about AWS?") == ["priya", "aws"]


def test_a_teams_question_naming_a_known_acronym_and_one_new_word_keeps_its_hits(home: Path, store_url: str) -> None:
    """Found by a developer's agent loop: "For CHF we should use the symbol 'CHF' not 'Fr.'" had no hits — CHF,
    said twice, was read as shouting and dropped, "Fr" was the only name and nothing held it; and "we" was asked
    at the bar of a question about a third party."""
    memory = open_memory(home, store_url, floor_similarity="0.9", floor_unknown="0.9", floor_stranger="0.95")
    try:
        memory.append("s1", "user", "KeyError: 'CHF' in format_money: add CHF and SEK to CURRENCY_SYMBOLS")
        memory.worker().drain()
        for query in ("For CHF we should use the symbol 'CHF' not 'Fr.'", "Which symbol for CHF, Fr or CHF?"):
            assert any("CHF" in h.message.content for h in memory.search(query).hits), query
        assert memory.search("What did Zorblax say about Fr?").hits == []  # a third party no message holds: still nothing
        assert memory.search("What did Zorblax say about CHF?").hits == []  # … even beside an acronym stored
    finally:
        memory.close()
    assert Floor(0.3, 0.45, 0.55).for_names("What should we use for CHF?") == 0.45  # the team's own memory
    assert Floor(0.3, 0.45, 0.55).for_names("What did Nate use for CHF?") == 0.55
    assert Floor(0.3, 0.45, 0.55).for_names("Did Nate move to the US?") == 0.55  # a country, not "us" (found in review)


def test_a_spanish_question_and_a_name_typed_without_accents_keep_their_hits(home: Path, store_url: str) -> None:
    """Found by a user in Madrid: "¿Dónde vivo ahora?" read "Dónde" as a third party no hit spoke
    of and emptied search and recall; "Jose Nunez" (capitalised, no accents) and a name stored
    decomposed (NFD) were no names the hits held, while "jose nunez" was."""
    import unicodedata

    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        home_id = memory.append("s1", "user", "Vivo en Sevilla.")["id"]
        memory.append("s1", "user", "El despliegue de Orion es el viernes.")
        intro = memory.append("s2", "user", "Hola! Soy José Ñúñez, el nuevo jefe de proyecto.")["id"]
        nfd = memory.append("s3", "user", unicodedata.normalize("NFD", "Mañana hablo con José Núñez y Jürgen Müller."))["id"]
        memory.worker().drain()
        assert home_id in [h.message.id for h in memory.search("¿Dónde vivo ahora?").hits]
        for query in ("Jose Nunez", "Who is Jose Nunez?", "José Núñez"):
            assert {intro, nfd} <= {h.message.id for h in memory.search(query).hits}, query
        assert nfd in [h.message.id for h in memory.search("Was hat Herr Muller gesagt?").hits]


def test_a_german_question_keeps_its_hits(home: Path, store_url: str) -> None:
    """Found by a multilingual bot's builder: "In welcher Stadt wohne ich?" read "Stadt" as a name no message holds, and
    recall came back empty; "in welcher stadt wohne ich?" recalled where Anna lives."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        lives = memory.append("s1", "user", "Ich wohne jetzt in Hamburg, nicht mehr in Köln.")["id"]
        daughter = memory.append("s1", "user", "Meine Tochter heißt Zoë und geht in die zweite Klasse.")["id"]
        memory.append("s1", "user", "Das Wetter ist heute schön.")
        memory.worker().drain()
        assert lives in [h.message.id for h in memory.search("In welcher Stadt wohne ich?").hits]
        assert daughter in [h.message.id for h in memory.search("Wie heißt meine Tochter?").hits]
        assert "Hamburg" in memory.recall("s9", "In welcher Stadt wohne ich?").block


def test_a_question_naming_the_user_by_their_own_name_is_theirs(home: Path, store_url: str) -> None:
    """Found by a chat bot's builder: "Where does Dana live now?" asked of Dana's memory read
    Dana as a stranger no hit spoke of (her turns never say her name): no hits, and a recall
    block of "I'm Dana." alone, for 16 of 40 questions."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        memory.ingest_session("s0", [{"role": "user", "content": "Hi! I'm Dana, I work on the Orchard project."},
                                     {"role": "assistant", "content": "Nice to meet you, Dana!"}])
        moved = memory.ingest_session("s1", [{"role": "user", "content": "I just moved into a flat in Kentish Town."},
                                             {"role": "assistant", "content": "Congrats on the new place!"}])["ids"][0]
        dog = memory.ingest_session("s2", [{"role": "user", "content": "We adopted a beagle puppy called Biscuit."},
                                           {"role": "assistant", "content": "Adorable!"}])["ids"][0]
        memory.worker().drain()
        assert memory.search("Where does Dana live now?").hits[0].message.id == moved
        assert memory.search("What breed is Dana's dog?").hits[0].message.id == dog
        assert not memory.search("Where does Priya live?").hits  # a stranger stays one
        # a named speaker's turn is no introduction of the user (LoCoMo's "I'm Caroline" between two named people)
        memory.ingest_session("s3", [{"role": "user", "content": "I'm Caroline, by the way.", "metadata": {"speaker": "Caroline"}}])
        assert memory.messages.as_user("Where does Caroline live?", Filters()) == "Where does Caroline live?"
        assert memory.messages.as_user("What breed is Dana's dog?", Filters()) == "What breed is my dog?"
        # a word said after "I'm" is no name to rewrite unless the question asks of it as one (a review's)
        memory.ingest_session("s4", [{"role": "user", "content": "I'm Italian. I am Rose."}])
        assert memory.messages.as_user("What are traditional Italian desserts?", Filters()) == "What are traditional Italian desserts?"
        assert memory.messages.as_user("Did Rose plant a rose in the garden?", Filters()) == "Did I plant a rose in the garden?"


def test_now_is_no_keyword(home: Path, store_url: str) -> None:
    """Found by a chat bot's builder: "What diet do I follow now?" ranked "I'm reading The Ministry
    of Time now." first, and "Where do I live now?" found "Thanks, that's all for now!"."""
    from palimpsest.search.query import query_terms

    assert query_terms("Where do I live now?") == ["live"]
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        for text in ["I'm reading The Ministry of Time now.", "I have a sore throat and now a fever.",
                     "Starting today I'm going fully vegan."]:
            memory.facts.write(text)
        memory.append("s", "user", "Thanks, that's all for now!")
        moved = memory.append("s", "user", "We moved to Walthamstow last weekend.")["id"]
        memory.worker().drain()
        assert memory.facts.search("What diet do I follow now?")[0].fact.text == "Starting today I'm going fully vegan."
        assert memory.search("Where do I live now?").hits[0].message.id == moved


def test_a_possessive_in_the_question_matches_the_word(home: Path, store_url: str) -> None:
    """Found by a companion-bot evaluator: "sister's" found nothing by keyword (the index read the phrase "sister s"),
    and "What breed is my sister's dog?" lost "My sister Ana …" to the floor."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        memory.append("s1", "user", "My sister Ana lives in Lisbon with her partner Sam.")
        memory.append("s2", "user", "The parents’ anniversary is in June.")
        assert [h.message.content for h in memory.search("sister's", limit=5).hits] == [
            "My sister Ana lives in Lisbon with her partner Sam."]
        assert memory.search("my sister’s partner", limit=5).hits
        assert memory.search("parents’", limit=5).hits


def test_an_error_code_in_capitals_with_a_hyphen_finds_its_message(home: Path, store_url: str) -> None:
    """Found by a Codex CLI user: `search "LEDGER-E4471"` had no hits though a message says "[LEDGER-E4471]" — the
    query's name was read as "e4471", which no message's words (hyphenated words are whole) held."""
    memory = open_memory(home, store_url, embedder="local")
    said = "30 tests fail. The root error in the middle of the log is [LEDGER-E4471]: a pending refund with no batch."
    memory.ingest_session("s2", [{"role": "assistant", "content": said}, {"role": "user", "content": "ok, PAY-E207 too?"}])
    memory.worker().drain()
    for query in ("LEDGER-E4471", "PAY-E207", "what is LEDGER-E4471"):
        assert memory.search(query).hits, query
    assert memory.search("LEDGER-E4471").hits[0].message.content == said


def test_a_message_naming_whom_it_asks_of_and_two_things_asked_is_evidence(home: Path, store_url: str) -> None:
    """Found by a team-chat evaluator: "Which repo holds the code of the job Mat babysat while Dan was sick?" had no hits
    ("no message close to this query speaks of mat, dan") though a message asks Mat to babysit the job while Dan is sick:
    far in meaning, it names them and says two things asked ("babysit" another form of "babysat")."""
    memory = open_memory(home, store_url, embedder="local")
    said = "Mat, can you babysit the recon cron while Dan is out sick? It lives in lumen/ledger."
    memory.ingest_session("team", [{"role": "user", "content": said, "metadata": {"speaker": "Dana Reyes"}},
                                   {"role": "user", "content": "Northwind wants the invoice export by Friday.",
                                    "metadata": {"speaker": "Sofia Lindqvist"}}])
    memory.worker().drain()
    assert memory.search("Which repo holds the code of the job Mat babysat while Dan was sick?").hits[0].message.content == said
    assert memory.search("What did Melanie babysit while she was sick?").hits == []  # (a name nothing speaks of: none)


def test_a_date_in_the_question_does_not_bring_every_message_of_its_month(home: Path, store_url: str) -> None:
    """Found by a studio's assistant: "What did we agree on in the call on November 18?" matched every message of November
    by the date words each message's own keyword text holds (and "… in 2026?" every one of the year): the whole memory
    came back. A message of that day, or one saying what is asked, is still found."""
    memory = open_memory(home, store_url, embedder="local")
    said = [("2026-11-03T10:00:00Z", "The printer on the second floor is out of toner."),
            ("2026-11-09T10:00:00Z", "Léa sent the moodboard for the tea brand."),
            ("2026-11-12T10:00:00Z", "Lunch order: two bento boxes and a salad."),
            ("2026-11-18T15:00:00Z", "On the call we agreed to ship the logo in indigo."),
            ("2026-11-25T10:00:00Z", "Kenji booked the meeting room for Friday.")]
    memory.ingest_session("studio", [{"role": "user", "content": text, "created_at": at} for at, text in said])
    memory.worker().drain()
    for query in ("What did we agree on in the call on November 18?", "What did we agree on in 2026?"):
        found = [h.message.content for h in memory.search(query).hits]
        assert found and found[0] == said[3][1] and said[0][1] not in found and said[2][1] not in found, (query, found)


def test_a_keyword_hit_on_a_date_word_of_its_own_text_is_evidence() -> None:
    """A hit matched only by the date its keyword text carries is none when the question asks more; one that says the
    asked month in its own words is (found on a team chat's questions: "Harriet accepted 15% on the March invoice." for
    "How much SLA credit is Northwind getting for the March incident?" had been dropped with the month's other messages)."""
    said = Hit(Message(id="said", session="s", role="user", content="Harriet accepted 15% on the March invoice.",
                       created_at="2025-03-27T09:51:00Z", context="27 March 2025 Thursday"), 1.0, {"fts": 0.1})
    dated = Hit(Message(id="dated", session="s", role="user", content="The printer is out of toner.",
                        created_at="2025-03-03T09:00:00Z", context="3 March 2025 Monday"), 1.0, {"fts": 0.1})
    kept, _ = apply_floor([said, dated], {"said": 0.2, "dated": 0.2}, "How much credit is the customer getting for the March incident?",
                          Floor(0.35, 0.45), lambda w: True)
    assert [h.message.id for h in kept] == ["said"]


def test_a_hit_saying_what_is_asked_in_another_form_holds_the_name() -> None:
    """Found by a novelist: "Who rules Telmarch?" had no hits beside "Telmarch is the capital of the kingdom of Orrin,
    ruled by Queen Sabine III" ("ruled" is not "rules")."""
    floor = Floor(0.35, 0.45, 0.55)
    notes = _said("notes", "Telmarch is the capital of the kingdom of Orrin, ruled by Queen Sabine III.", 0.6)
    filler = [_said(f"m{i}", f"the tavern scene drags {i}", 0.0) for i in range(3)]
    cos = {"notes": 0.44, **{h.message.id: 0.2 for h in filler}}
    assert apply_floor([notes, *filler], cos, "Who rules Telmarch?", floor, lambda w: True)[0][0] == notes
    assert apply_floor([notes, *filler], cos, "Who painted Telmarch?", floor, lambda w: True)[0] == []
    # … but a shorter word is no other form of it ("not" of "notes", found in review)
    dana = _said("dana", "Dana is not coming to the standup today.", 0.6)
    assert apply_floor([dana, *filler], {**cos, "dana": 0.40}, "Where are Dana's notes?", floor, lambda w: True)[0] == []


def test_a_holiday_is_a_day_not_a_name_no_message_speaks_of(memory: Memory) -> None:
    """Found keeping a lab notebook: "what did I run on Valentine's day?" found nothing ("nothing stored mentions
    valentine"), where "what did I do on Valentine's day?" found the day's runs: the floor read the holiday as a name."""
    ran = memory.append("lab", "user", "Started the r07 run with the cosine schedule, bs 512.", created_at="2025-02-14T10:00:00Z")["id"]
    memory.append("lab", "user", "Paper draft section 3 is done.", created_at="2025-03-02T10:00:00Z")
    assert query_names("what did I run on Valentine's day?") == []
    assert query_names("What did Patrick say at Christmas?") == ["patrick"]
    hits = memory.search("what did I run on Valentine's day?", now="2025-06-10T09:00:00Z").hits
    assert ran in [h.message.id for h in hits]


def test_a_name_with_an_apostrophe_is_no_french_elision() -> None:
    """Found in review: "D'Souza" and "D'Costa" counted as French elisions, and an English note was another language's."""
    assert not beyond_model("Met D'Souza, D'Costa, Kim today.")
    assert beyond_model("C'est elle ma comptable maintenant, Julie Lemieux.")


def test_a_customer_named_only_in_her_own_session_is_no_stranger(home: Path, store_url: str) -> None:
    """Found by a support bot's builder: eight customers each said "my order number is #ES-…" in their own session, and
    Sophie's said "Hi Sophie, … Try PayPal" / "paypal worked! order #ES-21140". "What is Sophie's order?" had no hits
    ("no message close to this query speaks of sophie"): the turn saying the order, far in meaning (a cosine of 0.26),
    names her (in the turn before it) and says all the question asks, but a far turn needed two things asked."""
    memory = open_memory(home, store_url, embedder="local")
    for n in range(8):
        memory.ingest_session(f"customer{n}", [{"role": "user", "content": f"Hello, my order number is #ES-2{n}0{n}7"}])
    memory.ingest_session("sophie", [{"role": "assistant", "content": "Hi Sophie, your card payment was declined. Try PayPal"},
                                     {"role": "user", "content": "paypal worked! order #ES-21140"}])
    memory.worker().drain()
    for query in ("What is Sophie's order?", "Sophie"):
        found = [h.message.content for h in memory.search(query).hits]
        assert "paypal worked! order #ES-21140" in found[:2], (query, found)
    assert memory.search("What is Zorblax's order?").hits == []  # a name nothing speaks of: still none


def test_a_customer_the_assistant_greets_by_name_is_no_stranger(home: Path, store_url: str) -> None:
    """Found by a travel agency's chat-bot builder: Tom said "hallo, tom becker." and was answered "Hi Tom!" in one chat,
    asked about travel insurance in another, and "does Tom have travel insurance?" had no hits ("no message close to
    this query speaks of tom", best cosine 0.51 < 0.55), also scoped to his tag, while "does tom …" in lower case (no
    name read) had four. The name is the user's own, whom every memory knows, not a third party's."""
    memory = open_memory(home, store_url, embedder="local")
    for session, turns in {"tom-c1": [("user", "hallo, tom becker. need berlin -> lisbon 3-7 october"),
                                      ("assistant", "Hi Tom! Found Eurowings EW 8128 BER 07:15 -> LIS 09:55 on 3 Oct.")],
                           "tom-c2": [("user", "do you do travel insurance? want something for the lisbon trip incl. cancellation lol"),
                                      ("assistant", "Yes: HanseMerkur trip cancellation + medical for 24-28 Oct, 39 €, policy HM-118845.")]}.items():
        memory.ingest_session(session, [{"role": r, "content": c} for r, c in turns])
        memory.tags.add("user:tom", session=session)
    memory.worker().drain()
    for scope in ({}, {"tag": "user:tom"}):
        for query in ("does Tom have travel insurance?", "does tom have travel insurance?", "travel insurance for Tom?"):
            found = [h.message.content for h in memory.search(query, **scope).hits]
            assert any("travel insurance" in text for text in found), (query, scope, found)
        assert memory.search("does Nate have travel insurance?", **scope).hits == []  # a stranger stays one


@pytest.mark.parametrize(("text", "name", "spoken_to"), [
    ("Hi Tom! Found Eurowings EW 8128 BER 07:15 -> LIS 09:55 on 3 Oct.", "tom", True),
    ("Olá Ana! Sim, fazemos voo + hotel.", "ana", True),
    ("Nice to meet you, Dana!", "dana", True),
    ("Hi Sophie, your card payment was declined. Try PayPal", "sophie", True),
    ("Noted: bulkhead, window. Passengers Sarah Thompson and Daniel Okafor.", "daniel", False),
    ("In the story, John, the baker, opens his shop.", "john", False),
    ("Sure. Tell Tom! he will love it", "tom", False),  # not the opening sentence
])
def test_addresses(text: str, name: str, spoken_to: bool) -> None:
    assert addresses(text, name) is spoken_to


# a publisher's email pasted into a Japanese chat (a Japanese indie developer's memory)
PASTED_EMAIL = ("パブリッシャーからメール来た！貼るね\n\nFrom: Misaki Tanaka <m.tanaka@hoshizora-pub.jp>\n"
                "Subject: Re: 「星屑のソラ」ご相談の件 / Meeting in Tokyo\nDate: Tue, 1 Dec 2026 13:52:11 +0900\n\n"
                "Hi Aoi-san,\nThank you for the updated pitch deck. Our team loved the light-bending mechanic.\n"
                "We'd like to meet at our Tokyo office (渋谷区道玄坂1-12-1, 8F) on December 15 at 14:00.\n"
                "Before the meeting, could you prepare:\n  1. A playable vertical slice (about 15 minutes)\n"
                "  2. A draft of the Steam store page\n  3. A plan for Simplified Chinese (简体中文) localization\n"
                "Best regards,\n田中 美咲 / Misaki Tanaka — Producer, Hoshizora Publishing")


def test_a_question_naming_someone_by_their_full_name_finds_the_message_that_does(home: Path, store_url: str) -> None:
    """Found by a Japanese indie developer: "Who is Misaki Tanaka?" found her pasted email, "What is Misaki Tanaka's
    email?" nothing — the email, far from the question in meaning (cosine 0.21) and saying "メール", not "email", was
    read as a passing mention of some other Tanaka. A full name said as the question says it is no passing mention."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        for text in (PASTED_EMAIL, "BGMは作曲家の森さんに依頼することにした。予算は80万円、全12曲。",
                     "Godot 4.3 ではまず TileMapLayer とシェーダーの移植から始めましょう。"):
            memory.append("sora-dev", "user", text)
        memory.worker().drain()
        for query in ("What is Misaki Tanaka's email?", "Misaki Tanaka email"):
            hits = memory.search(query).hits
            assert hits and "m.tanaka@" in hits[0].message.content, query
        assert memory.search("What is Kenji Tanaka's email?").hits == []  # another Tanaka: still no one this memory met


def test_an_acronyms_plural_names_what_the_acronym_does(home: Path, store_url: str) -> None:
    """Found by a new user over HTTP: "list the rejected PRs" had no hits beside "PR 42 rejected: …" ("no message close
    to this query speaks of prs"), while "which PR's were rejected" had them. "PRs", "APIs", "IDs" are the acronym's
    plural, and any message holding the acronym knows it."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        for text in ("PR 42 rejected: the migration drops a column without a backfill",
                     "PR 43 approved after the reviewer asked for tests", "lunch was pasta today"):
            memory.append("team", "user", text)
        memory.worker().drain()
        for query in ("list the rejected PRs", "which PR's were rejected"):
            hits = memory.search(query).hits
            assert hits and "PR 42 rejected" in hits[0].message.content, query
        assert memory.search("list the rejected ZQXs").hits == []  # an acronym nothing stored holds: still no hits


BENS = "two new Bens. Ben Okafor (Toronto, backend/go) — 105k. Ben Alvarez (Austin, SRE, kubernetes) — expects 140k."


def test_a_city_the_messages_name_is_a_place_not_a_stranger(home: Path, store_url: str) -> None:
    """Found by a recruiter: "Who lives in Austin?" had no hits ("no message close to this query speaks of austin", best
    similarity 0.17 < 0.55) beside her terse note naming Austin, while "who is in Austin" had it; 13 of her 27 cities came
    back empty. A name after "in" is a place, not a third party this memory never met: a message naming it knows it."""
    memory = open_memory(home, store_url, embedder="local")
    note = memory.append("bens", "user", BENS)["id"]
    memory.worker().drain()
    for query in ("Who lives in Austin?", "Who lives in Toronto?", "Which candidates are in Austin?", "anyone in Toronto"):
        assert note in [h.message.id for h in memory.search(query).hits], query
    assert memory.search("Who lives in Zorbton?").hits == []  # a place nothing names: still nothing
    assert memory.search("Which hotel did Nate book in Austin?").hits == []  # a stranger stays one beside a stored city
    assert Floor(0.35, 0.45, 0.55).for_names("Who lives in Austin?") == 0.45
    assert Floor(0.35, 0.45, 0.55).for_names("Where does Nate live in Austin?") == 0.55


def test_a_fact_is_held_to_the_full_name_asked(home: Path, store_url: str) -> None:
    """Found by a recruiter: "Does Ben Carter know Kubernetes?" had no message hits, yet the recall block held facts about
    Ben Okafor and Ben Alvarez: beside an emptied search a fact stood when it named "ben", not the "Ben Carter" asked."""
    assert not names_any(asked_names("Does Ben Carter know Kubernetes?"), "Ben Okafor prefers remote work.")
    assert names_any(asked_names("Does Ben Carter know Kubernetes?"), "Ben Carter has run kubernetes for years.")
    assert asked_names("What did Zorblax paint?") == ["zorblax"]
    memory = open_memory(home, store_url, embedder="local")
    memory.append("bens", "user", BENS)
    memory.facts.write("Ben Okafor prefers remote work.")
    memory.worker().drain()
    result = memory.search("Does Ben Carter know Kubernetes?")
    assert result.hits == [] and result.unknown == ["ben carter", "kubernetes"]
    assert "Ben Okafor prefers remote work" not in memory.recall(None, "Does Ben Carter know Kubernetes?", 1000).block


FOUNDER = ["monday recap: uncork call w jess (fine), 500 global w ayo — ayo basically said they're not doing US seed right now, soft pass",
           "wed: initialized w priya. honestly best call so far?? she'd already read the deck twice",
           "tues: sequoia w raj. he liked the wedge but asked a ton about CAC payback",
           "thu boldstart w nina, she is skeptical on revenue ($38k MRR)"]


def test_what_someone_said_is_asked_of_them_and_a_message_naming_them_answers(home: Path, store_url: str) -> None:
    """Found by a founder over MCP: "what did Raj say", "status of Initialized" had no hits ("no message close to this
    query speaks of raj … 0.42 < 0.55") beside "tues: sequoia w raj. he liked the wedge …": "say" and "status" were read as
    something asked that the hit naming Raj, typed in lower case, had to say too. They ask of the person; a name nobody
    wrote still finds nothing. (Left open: "what did 500 Global say", whose "500" is read as something asked.)"""
    memory = open_memory(home, store_url, embedder="local")
    memory.ingest_session("founder", [{"role": "user", "content": text} for text in FOUNDER])
    memory.worker().drain()
    for query, said in [("what did Raj say", 2), ("what did Ayo say", 0), ("status of Initialized", 1), ("any news from Nina?", 3)]:
        found = [h.message.content for h in memory.search(query).hits]
        assert found and found[0] == FOUNDER[said], (query, found)
    assert memory.search("what did Marcus say").hits == []


TUTOR = [("hi! so my name is Emma, im english (from manchester) but I live in Valencia since 2024. I work as a nurse at "
         "Hospital La Fe. my level is A2 i think, my teacher at the academia said A2 last year"),
         "para!! the arrow! the clinic is the goal of my work lol",
         "por, para, por",
         ("big news: I left La Fe! I started at a new job on the 1st, a small clinic in Ruzafa — Clínica Russafa Salud, day "
         "shifts only, no more nights 🙌"),
         "and we found a flat in Ruzafa too! we move at the end of august, so I can walk to work"]
ELSEWHERE = ["i finished chapter 5 of una nota falsa. the detective finds the fake money in a suitcase",
             "last week Javi and I went to the Albufera with Lola, we ate all i pebre"]


@pytest.mark.xfail(strict=True, reason="left open (issue 18): the rule tried (`_outranked`: kept when nearer than the keyword "
                   "hits it outranks) did not hold on this small store, where the new job ranks below them")
def test_a_message_worded_otherwise_is_kept_when_nearer_than_the_keyword_hits(home: Path, store_url: str) -> None:
    """Found by a Spanish tutor bot: "where do I work?" kept three old lines saying "work" (cosines 0.20–0.24) and dropped
    "big news: I left La Fe! I started at a new job …", the nearest message of all (0.30) but under the similarity floor
    (0.35) and without the word. A short question sits low in cosine; beside keyword hits, a message nearer than they
    are is as much evidence. Lines farther than them stay out."""
    memory = open_memory(home, store_url, embedder="local")
    memory.ingest_session("tutor", [{"role": "user", "content": text} for text in TUTOR])
    memory.ingest_session("reading", [{"role": "user", "content": text} for text in ELSEWHERE])
    memory.worker().drain()
    found = [h.message.content for h in memory.search("where do I work?").hits]
    assert TUTOR[3] in found and not set(ELSEWHERE) & set(found), found


DRILLS = ["vocabulario: el transporte\n\n- el metro\n- la parada\n- el billete sencillo\n- el bonobús\n- perder el tren",
          "¡Genial! Para la próxima clase: escribe 5 frases sobre tu rutina diaria en el hospital.",
          ("hola! aqui mis frases: 1. me levanto a las 6. 2. voy al hospital en bici. 3. trabajo en la planta de cardiologia."
          " 4. hoy soy muy cansada. 5. despues del trabajo paseo con Lola"),
          ("¡Es el error más común! Practicamos:\n1. Mi novio [____] de Valencia.\n2. Hoy [____] (yo) nerviosa.\n3. El "
          "hospital [____] cerca de mi casa.\n4. La sopa [____] fría.")]


@pytest.mark.xfail(strict=True, reason="left open: dropping another language's little words as evidence (the floor's "
                   "_not_calendar) cost the same user's \"how many times did I confuse por and para?\" its evidence")
def test_another_languages_little_words_are_no_evidence_on_their_own(home: Path, store_url: str) -> None:
    """Found by a Spanish tutor bot: "when did I start reading La sombra del viento?" had 100 hits: "la" and "del" matched
    every Spanish line (drills, vocabulary lists). A hit matching only another language's little words is no keyword
    evidence, as one matching only a date's words is not."""
    memory = open_memory(home, store_url, embedder="local")
    started = 'empecé "La sombra del viento" de Carlos Ruiz Zafón!! my first real novel, not graded. es dificil pero me encanta'
    memory.ingest_session("tutor", [{"role": "user", "content": text} for text in [*DRILLS, started]])
    memory.worker().drain()
    found = [h.message.content for h in memory.search("when did I start reading La sombra del viento?").hits]
    assert found == [started]


def test_what_someone_said_is_not_answered_by_their_name_in_code_or_on_their_things(home: Path, store_url: str) -> None:
    """Found in review: "what did John say?" and "what does John think?" returned a code sample's `User(name='John')` and,
    beside it, an unrelated "the deploy pipeline … is blocked"; "what did Mom say?" returned "Mom's birthday cake recipe".
    A name in code or only as a thing's owner, far from the question, is no evidence of what they said."""
    memory = open_memory(home, store_url, embedder="local")
    memory.ingest_session("code", [{"role": "user", "content": text} for text in [
        "def greet():\n    user = User(name='John', age=3)\n    return render(user)",
        "the deploy pipeline for payments is blocked on the migration", "Mom's birthday cake recipe needs 3 eggs", *FOUNDER]])
    memory.worker().drain()
    for query in ["what did John say?", "what does John think?", "what did Mom say?"]:
        assert memory.search(query).hits == [], query
    assert memory.search("what did Raj say").hits[0].message.content == FOUNDER[2]


# a support bot's memory on one shared server: each customer's conversations in their channel (and tag)
SUPPORT = {
    "tyrell": [[("user", "the mobile app crashes on android 14 when opening reports"),
                ("assistant", "Thanks for the trace — a fix ships in app version 5.2.1 next week.")],
               [("user", "Rachael from Tyrell Robotics. Pro plan, 30 seats, our SLA is 8 business hours"),
                ("assistant", "Thanks Rachael, noted.")],
               [("user", "After Google Workspace SSO login every user gets 403 Forbidden on /dashboard. started after we enforced 2SV"),
                ("assistant", "Opened TCK-4990 for the Google Workspace SSO 403.")]],
    "wonka": [[("user", "whats the max file size for attachments"), ("assistant", "25 MB per file on every plan.")],
              [("user", "Charlie from Wonka Confections, Pro plan with 22 seats. SSO with OneLogin drops the email attribute"),
               ("assistant", "Opened TCK-4955 for the OneLogin email attribute.")],
              [("user", "onelogin sso fixed after we remapped the attribute, close TCK-4955 thanks!"), ("assistant", "Closed TCK-4955.")]],
    "acme": [[("user", "hi, this is Dana Whitfield from Acme Logistics. we're on the Starter plan with 10 seats right now."),
              ("assistant", "Thanks Dana! I've noted Acme Logistics is on Starter with 10 seats.")],
             [("assistant", "Sorry about that. I opened ticket TCK-4812 for the Okta SAML redirect loop and escalated it."),
              ("user", "thx. pls keep TCK-4812 open until we confirm the fix on our side"),
              ("assistant", "Will do — TCK-4812 stays open until you confirm.")],
             [("user", "we signed the Enterprise contract yesterday! 60 seats, and the contract includes the 4-hour response SLA"),
              ("assistant", "Congratulations! Acme Logistics is now Enterprise, 60 seats, with a 4-hour response SLA.")]],
}


def support_memory(home: Path, store_url: str) -> Memory:
    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder="local", embed_cache="off"))
    for customer, sessions in SUPPORT.items():
        for n, turns in enumerate(sessions):
            session = f"support-{customer}-{n}"
            memory.ingest_session(session, [{"role": r, "content": c} for r, c in turns], channel=customer, agent="support-bot")
            memory.tags.add(f"user:{customer}", session=session)
    memory.worker().drain()
    return memory


def test_a_word_naming_the_scope_is_no_name_the_hits_must_speak_of(home: Path, store_url: str) -> None:
    """Found by a support bot's team: "why do Tyrell users get 403 after login?" in channel tyrell had no hits ("no message
    close to this query speaks of tyrell … (best similarity 0.46 < 0.55)"), and "why do users get 403 after login?" two:
    the customer's "After Google Workspace SSO login every user gets 403 Forbidden…" never says "Tyrell". In a scope every
    message is of it; a name nothing in it speaks of still finds nothing."""
    with support_memory(home, store_url) as memory:
        for scope in ({"channel": "tyrell"}, {"tag": "user:tyrell"}):
            found = [h.message.content for h in memory.search("why do Tyrell users get 403 after login?", **scope).hits]
            assert found and found[0].startswith("After Google Workspace SSO login"), (scope, found)
            assert memory.search("why do Nate's users get 403 after login?", **scope).hits == []


def test_a_question_of_two_asks_finds_what_is_stored_for_one(home: Path, store_url: str) -> None:
    """Found by a support bot's team: "what plan are we on and what is our SLA?" in channel wonka had no hits ("nothing
    stored mentions sla"), though "Pro plan with 22 seats" is in scope and "what plan are we on?" alone found it; and the
    note was untrue, other customers' messages say SLA. An ask of the user's own that names nothing is answered by what
    is stored for it; a query about nothing stored still finds nothing, and its note speaks of the scope searched."""
    with support_memory(home, store_url) as memory:
        for query in ("what plan are we on and what is our SLA?", "What plan are we on? And our SLA?"):
            found = [h.message.content for h in memory.search(query, channel="wonka").hits]
            assert any("Pro plan with 22 seats" in text for text in found), (query, found)
        result = memory.search("what is our SLA?", channel="wonka")
        assert result.hits == [] and result.notes[0].startswith("nothing stored in channel wonka mentions sla"), result.notes
        assert memory.search("zzqqxx", channel="wonka").hits == []
        assert memory.search("What did Zorblax paint and what did Nate eat?", channel="wonka").hits == []


def test_a_code_nothing_stores_finds_no_code_of_its_prefix(home: Path, store_url: str) -> None:
    """Found by a support bot's team: "TCK-9999" (no such ticket) ranked "Will do — TCK-4812 stays open…" and "Closed
    TCK-4955." first, with no note, and its recall block held 30 lines: the model reads every code of one prefix alike,
    so their cosines passed the floor. A code is asked for exactly, as a name is."""
    with support_memory(home, store_url) as memory:
        for query in ("TCK-9999", "what is the status of TCK-9999?", "tck-9999 okta loop"):
            result = memory.search(query)
            assert result.hits == [] and result.notes[0].startswith("nothing stored says"), (query, result.notes)
        assert "nothing stored says TCK-9999" in memory.search("TCK-9999").notes[0]
        assert "TCK-4812" not in memory.recall(None, "TCK-9999", 1000).block
        found = [h.message.content for h in memory.search("TCK-4812").hits]
        assert found and all("TCK-4812" in text for text in found[:3]), found
        assert memory.search("is TCK-4955 closed?", channel="wonka").hits[0].message.content == "Closed TCK-4955."
