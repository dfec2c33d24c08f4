"""The conversation re-ranking of hybrid search: a turn shares in its reply's score, and
turns by whom the query is about come first (docs/retrieval.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.records import Hit
from palimpsest.search import Weights, conversation_rerank, query_subject
from palimpsest.search.conversation import answers


@pytest.mark.parametrize(
    ("query", "speakers", "subject"),
    [
        ("What breed is my dog?", set(), ("role", "user")),
        ("How long have I been collecting stamps?", set(), ("role", "user")),
        ("Can you remind me which beer you recommended?", set(), ("role", "assistant")),
        ("I'm going back to our previous conversation about dinosaurs.", set(), ("role", "assistant")),
        ("Which dessert shop did we talk about last time?", set(), ("role", "assistant")),
        ("What did you recommend for my back pain?", set(), ("role", "assistant")),
        ("Can you suggest a hotel for my trip?", set(), ("role", "user")),  # a request, not a memory of a reply
        ("When did Caroline go to the support group?", {"Caroline", "Melanie"}, ("speaker", "Caroline")),
        ("What is Caroline's job?", {"Caroline", "Melanie"}, ("speaker", "Caroline")),
        ("How did I meet Melanie?", {"Caroline", "Melanie"}, ("speaker", "Melanie")),  # a name is more specific than "I"
        ("Did Caroline and Melanie ever meet?", {"Caroline", "Melanie"}, None),  # both: no preference
        ("Which event happened first, the road trip or the lens?", set(), None),
        ("Where did Carolina live?", {"Carol"}, None),  # whole words only
    ],
)
def test_query_subject(query: str, speakers: set[str], subject: tuple[str, str] | None) -> None:
    assert query_subject(query, speakers) == subject


def _hits(memory: Memory, scores: dict[str, float]) -> list[Hit]:
    by_content = {m.content: m for _, m in memory.store.scan(memory.filters(), 100, 0)}
    return [Hit(by_content[text], score, {}) for text, score in scores.items()]


def test_a_turn_inherits_part_of_its_replys_lead(sqlite_memory: Memory) -> None:
    sqlite_memory.ingest_session("s1", [
        {"role": "user", "content": "Max needs a new collar, golden retrievers pull hard"},
        {"role": "assistant", "content": "For a dog that pulls, a harness is kinder than a collar"},
        {"role": "user", "content": "Thanks, I will look at harnesses"},
    ])
    sqlite_memory.ingest_session("s2", [{"role": "user", "content": "Unrelated words about the weather"}])
    hits = _hits(sqlite_memory, {
        "Max needs a new collar, golden retrievers pull hard": 0.2,
        "For a dog that pulls, a harness is kinder than a collar": 0.6,
        "Thanks, I will look at harnesses": 0.1,  # its reply is not a candidate: nothing to inherit
        "Unrelated words about the weather": 0.3,
    })
    ranked = conversation_rerank(hits, "what breed is the dog", Weights(reply=0.5, speaker=0.0))
    score = {h.message.content: h.score for h in ranked}
    assert score["Max needs a new collar, golden retrievers pull hard"] == pytest.approx(0.2 + 0.5 * 0.4)
    assert ranked[0].message.content.startswith("For a dog")
    assert ranked[1].message.content.startswith("Max needs")  # above the unrelated 0.3 now
    assert ranked[1].parts["reply"] == pytest.approx(0.4)
    # the reply gains nothing from the turn before it, nor the last turn from anything
    assert score["For a dog that pulls, a harness is kinder than a collar"] == pytest.approx(0.6)
    assert score["Thanks, I will look at harnesses"] == pytest.approx(0.1)


def test_turns_that_are_not_adjacent_inherit_nothing(sqlite_memory: Memory) -> None:
    sqlite_memory.ingest_session("s1", [
        {"role": "user", "content": "first turn"},
        {"role": "assistant", "content": "second turn"},
        {"role": "user", "content": "third turn"},
    ])
    hits = _hits(sqlite_memory, {"first turn": 0.1, "third turn": 0.9})  # the turn between is no candidate
    ranked = conversation_rerank(hits, "turn", Weights(reply=0.5, speaker=0.0))
    assert {h.message.content: h.score for h in ranked} == {"first turn": 0.1, "third turn": 0.9}


def test_turns_by_whom_the_query_is_about_gain_the_speaker_bonus(sqlite_memory: Memory) -> None:
    sqlite_memory.ingest_session("s1", [
        {"role": "user", "content": "alpha", "metadata": {"speaker": "Ann"}},
        {"role": "assistant", "content": "beta", "metadata": {"speaker": "Bob"}},
    ])
    def ranked(query: str) -> list[str]:
        hits = _hits(sqlite_memory, {"alpha": 0.5, "beta": 0.55})
        return [h.message.content for h in conversation_rerank(hits, query, Weights(reply=0.0, speaker=0.15))]
    assert ranked("what did Bob say") == ["beta", "alpha"]
    assert ranked("what did Ann say") == ["alpha", "beta"]
    assert ranked("what is the plan") == ["beta", "alpha"]


def _search(home: Path, store_url: str, query: str, **weights: float) -> list[str]:
    settings = Settings.load(env={}, embedder="none", **weights)
    with Memory(home, store_url, settings=settings) as memory:
        if not memory.store.scan(memory.filters(), 1, 0):
            memory.ingest_session("pets", [
                {"role": "user", "content": "Max chews every collar; he is a golden retriever, a big dog"},
                {"role": "assistant", "content": "A golden retriever is a dog breed that loves to chew: dog breed experts suggest chew toys"},
            ])
            memory.ingest_session("park", [
                {"role": "user", "content": "Where can I walk tonight?"},
                {"role": "assistant", "content": "The dog park has a dog fountain"},
            ])
        return [h.message.content for h in memory.search(query, limit=10, touch=False).hits]


def test_search_ranks_the_users_own_turn_above_a_stranger_reply(home: Path, store_url: str) -> None:
    query = "Which dog breed?"
    plain = _search(home, store_url, query, w_reply=0.0, w_speaker=0.0)
    assert plain.index("The dog park has a dog fountain") < plain.index("Max chews every collar; he is a golden retriever, a big dog")
    reranked = _search(home, store_url, query)  # the defaults
    assert reranked.index("Max chews every collar; he is a golden retriever, a big dog") < reranked.index("The dog park has a dog fountain")
    # the same words in the first person: the user's own turns gain the speaker bonus
    first_person = _search(home, store_url, "Which breed is my dog?", w_reply=0.0)
    assert first_person.index("Max chews every collar; he is a golden retriever, a big dog") < first_person.index("The dog park has a dog fountain")


FOLLOW = Weights(answer=0.0, follow=0.5, topic=0.0)
PICNIC = [
    {"role": "user", "content": "Last weekend I had a picnic with friends from church, we played games", "metadata": {"speaker": "Maria"}},
    {"role": "assistant", "content": "Sounds lovely! What games did you play?", "metadata": {"speaker": "John"}},
    {"role": "user", "content": "Charades and a scavenger hunt, we laughed a lot", "metadata": {"speaker": "Maria"}},
    {"role": "assistant", "content": "Fun. I went hiking instead.", "metadata": {"speaker": "John"}},
    {"role": "user", "content": "Hiking sounds great too", "metadata": {"speaker": "Maria"}},
]


def test_the_answer_to_a_follow_up_question_inherits_part_of_the_best_hits_lead(memory: Memory) -> None:
    memory.ingest_session("s1", PICNIC)
    memory.ingest_session("s2", [{"role": "user", "content": "Unrelated words about the weather"}])
    hits = _hits(memory, {PICNIC[0]["content"]: 0.8, PICNIC[2]["content"]: 0.2, "Unrelated words about the weather": 0.3,
                          PICNIC[3]["content"]: 0.25, PICNIC[4]["content"]: 0.1})
    ranked = answers(hits, FOLLOW)
    score = {h.message.content: h.score for h in ranked}
    # two turns on, the same speaker, right after the listener's question: 0.2 + 0.5 × 0.6
    assert score[PICNIC[2]["content"]] == pytest.approx(0.5) and ranked[1].message.content == PICNIC[2]["content"]
    assert ranked[1].parts["follow"] == pytest.approx(0.6)
    # after a turn that asks nothing ("Fun. I went hiking instead."), nothing is inherited
    assert score[PICNIC[4]["content"]] == pytest.approx(0.1)
    assert score["Unrelated words about the weather"] == pytest.approx(0.3)
    assert answers([], FOLLOW) == [] and [h.score for h in answers(_hits(memory, {PICNIC[2]["content"]: 0.2}), FOLLOW)] == [0.2]


def test_a_follow_up_by_another_speaker_or_a_worse_hits_inherits_nothing(memory: Memory) -> None:
    memory.ingest_session("s1", PICNIC)
    # John's "Fun. I went hiking instead." is two on from his question, but follows Maria's answer (no question)
    hits = _hits(memory, {PICNIC[1]["content"]: 0.7, PICNIC[3]["content"]: 0.1, PICNIC[0]["content"]: 0.2, PICNIC[2]["content"]: 0.4})
    score = {h.message.content: h.score for h in answers(hits, FOLLOW)}
    assert score[PICNIC[3]["content"]] == pytest.approx(0.1)
    assert score[PICNIC[2]["content"]] == pytest.approx(0.4)  # it leads the picnic turn: nothing to inherit


def test_the_reply_to_a_question_among_the_best_hits_inherits_part_of_its_lead(memory: Memory) -> None:
    memory.ingest_session("s1", [
        {"role": "assistant", "content": "Who's your favorite basketball team?", "metadata": {"speaker": "Tim"}},
        {"role": "user", "content": "The Wolves, no doubt.", "metadata": {"speaker": "John"}},
        {"role": "assistant", "content": "Nice pick. Mine too.", "metadata": {"speaker": "Tim"}},
        {"role": "user", "content": "Great game last night.", "metadata": {"speaker": "John"}},
    ])
    hits = _hits(memory, {"Who's your favorite basketball team?": 0.8, "The Wolves, no doubt.": 0.2,
                          "Nice pick. Mine too.": 0.3, "Great game last night.": 0.1})
    score = {h.message.content: h.score for h in answers(hits, Weights(answer=0.5, follow=0.0, topic=0.0))}
    assert score["The Wolves, no doubt."] == pytest.approx(0.2 + 0.5 * 0.6)  # the question's reply
    assert score["Nice pick. Mine too."] == pytest.approx(0.3)  # not a question's reply
    assert score["Great game last night."] == pytest.approx(0.1)  # "Nice pick. Mine too." asks nothing


def test_the_turn_a_follow_up_question_was_about_inherits_part_of_its_answers_lead(memory: Memory) -> None:
    memory.ingest_session("s1", PICNIC)
    topic = Weights(answer=0.0, follow=0.0, topic=0.5)
    hits = _hits(memory, {PICNIC[2]["content"]: 0.8, PICNIC[0]["content"]: 0.2, PICNIC[1]["content"]: 0.1})
    score = {h.message.content: h.score for h in answers(hits, topic)}
    assert score[PICNIC[0]["content"]] == pytest.approx(0.2 + 0.5 * 0.6)  # "What games?" asked about it
    assert score[PICNIC[1]["content"]] == pytest.approx(0.1)  # the question itself gains nothing
    # "Hiking sounds great too" follows "Fun. I went hiking instead.", which asks nothing
    hits = _hits(memory, {PICNIC[4]["content"]: 0.8, PICNIC[2]["content"]: 0.2})
    assert {h.message.content: h.score for h in answers(hits, topic)}[PICNIC[2]["content"]] == pytest.approx(0.2)


def test_the_first_ten_of_a_search_for_ten_are_the_first_ten_of_one_for_twenty(home: Path, store_url: str) -> None:
    """Found by a new user with a year of chat: the one message about their car was missing from a search for 10 and
    fourth in a search for 20 (candidates, and the scores normalised over them, depended on the limit)."""
    import random

    rng = random.Random(7)
    words = ["car", "drive", "honda", "civic", "april", "road", "trip", "weekend", "coffee", "dinner", "friend", "movie", "work", "meeting", "garden"]
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="hash", embed_cache="off")) as memory:
        memory.ingest_session("chat", [{"role": "user", "content": " ".join(rng.choice(words) for _ in range(12))} for _ in range(400)])
        memory.worker().drain()
        for query in ("What car did I drive in April?", "honda civic road trip", "coffee with a friend"):
            ten = [h.message.id for h in memory.search(query, limit=10, touch=False).hits]
            twenty = [h.message.id for h in memory.search(query, limit=20, touch=False).hits]
            assert ten == twenty[:10], query


def test_a_bare_acknowledgement_comes_after_what_it_acknowledges(home: Path, store_url: str) -> None:
    """A parent's: "Okay!" was second for "marisol's number?", found by its search context (the number said before it),
    and 66 of 413 top-ten places were such replies. They stay findable, after the others."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        _acknowledged(memory)


def _acknowledged(memory: Memory) -> None:
    for day, (sitter, pay) in enumerate([("ana", "$18/hr"), ("bea", "$20/hr"), ("cleo", "$19/hr")]):
        memory.append(f"other-{day}", "user", f"{sitter} can babysit on fridays, she charges {pay}", created_at=f"2026-10-0{day + 1}T09:00:00Z")
        memory.append(f"other-{day}", "assistant", f"Noted: {sitter} on Fridays at {pay}.", created_at=f"2026-10-0{day + 1}T09:00:05Z")
    memory.append("sitter", "user", "marisol's number is 555-0199 now", created_at="2026-11-02T09:00:00Z")
    memory.append("sitter", "assistant", "Okay!", created_at="2026-11-02T09:00:05Z")
    memory.append("sitter", "user", "marisol charges $22/hr on weekend nights", created_at="2026-11-03T09:00:00Z")
    memory.append("sitter", "assistant", "Noted. Anything else?", created_at="2026-11-03T09:00:05Z")
    memory.worker().drain()
    said = [h.message.content for h in memory.search("marisol's number?", limit=10).hits]
    assert said[0] == "marisol's number is 555-0199 now"
    acks = [i for i, text in enumerate(said) if text in ("Okay!", "Noted. Anything else?")]
    assert acks and min(acks) > max(i for i, text in enumerate(said) if i not in acks)
