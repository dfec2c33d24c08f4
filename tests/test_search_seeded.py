"""The second keyword round seeded by the first hits' names (docs/retrieval.md, "Third pass")."""

from __future__ import annotations

from pathlib import Path

from palimpsest import Memory, Settings
from palimpsest.records import Hit, Message
from palimpsest.search.seeded import seeded_round

TURNS = [
    {"role": "user", "content": "I went hiking at the lake with Rex last weekend", "metadata": {"speaker": "Ann"}},
    {"role": "assistant", "content": "Sounds lovely, Ann.", "metadata": {"speaker": "Bo"}},
    {"role": "user", "content": "The weather turned cold on Tuesday", "metadata": {"speaker": "Ann"}},
    {"role": "user", "content": "Later Rex chased a squirrel up an oak tree", "metadata": {"speaker": "Ann"}},
]


def _search(home: Path, store_url: str, seed: float) -> list[str]:
    m = Memory(home, store_url, settings=Settings.load(env={}, embedder="none", w_seed=seed))
    try:
        m.ingest_session("s1", TURNS)
        return [h.message.content for h in m.search("Where did I go hiking?", limit=5).hits]
    finally:
        m.close()


def test_a_turn_naming_what_the_best_hit_names_joins(tmp_path: Path, store_url: str) -> None:
    without = _search(tmp_path / "off", store_url, 0.0)
    with_seed = _search(tmp_path / "on", store_url, 0.05)
    rex = "Later Rex chased a squirrel up an oak tree"
    assert rex not in without  # it shares no word with the question
    assert rex in with_seed  # "Rex", named by the best hit, brings it
    assert with_seed[0] == without[0]  # the first hit stays first
    assert "The weather turned cold on Tuesday" not in with_seed  # a weekday is not a name


class _Source:
    """The two methods of `hybrid.Source` the round uses, over a dict of messages."""

    def __init__(self, messages: dict[str, Message]) -> None:
        self.messages = messages
        self.asked: list[list[str]] = []

    def keyword(self, terms: list[str], match_all: bool, limit: int) -> list[tuple[str, float]]:
        self.asked.append(terms)
        found = [(i, float(sum(t in m.content.lower() for t in terms))) for i, m in self.messages.items()]
        return sorted([f for f in found if f[1] > 0], key=lambda f: -f[1])[:limit]

    def rows(self, ids: list[str]) -> dict[str, Message]:
        return {i: self.messages[i] for i in ids if i in self.messages}


def _msg(mid: str, content: str, speaker: str = "") -> Message:
    return Message(id=mid, session="s", role="user", content=content, created_at="2024-01-01T00:00:00Z",
                   metadata={"speaker": speaker} if speaker else {})


def test_seeds_skip_the_query_and_the_speakers() -> None:
    messages = {"a": _msg("a", "Then Nate and I met Maria in Paris", "Joanna"), "b": _msg("b", "Maria loves Paris", "Nate"),
                "c": _msg("c", "Sure thing", "Nate")}
    source = _Source(messages)
    hits = seeded_round([Hit(messages["a"], 1.0, {"fts": 1.0}), Hit(messages["c"], 0.5, {})], "Where did Joanna meet Maria?", source, 50, 0.05)
    assert source.asked == [["paris"]]  # not maria (the query), nor nate / joanna (speakers)
    assert [h.message.id for h in hits] == ["a", "c", "b"] and hits[2].parts["seed"] > 0
    assert seeded_round(hits, "x", source, 50, 0.0) == hits  # weight 0: off
