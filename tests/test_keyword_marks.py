"""A word inside a path, a host or an identifier is a word on both backends: SQLite's FTS5
cuts at every mark, PostgreSQL's parser read `src/palimpsest/search/messages.py`,
`fly.io` or `v1.2.3` as one token, so "messages.py" found the message on SQLite only
(migration 0015: the marks become spaces on both sides of PostgreSQL's match)."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest import Memory, Settings

TEXTS = [
    "The bug is in src/palimpsest/search/messages.py, line 120.",
    "tests/test_module_17.py::test_case FAILED",
    "We deploy to fly.io with flyctl v1.2.3; mail ops-team@example.com",
    "Nothing to see here.",
]


@pytest.fixture
def marked(home: Path, store_url: str) -> Memory:
    memory = Memory(home, store_url, settings=Settings.load(env={}, embedder="none"))
    memory.ingest_session("s", [{"role": "user", "content": t} for t in TEXTS])
    memory.facts.write("The payments service lives in services/payments/api.go.")
    yield memory
    memory.close()


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("messages.py", 0), ("search/messages", 0), ("palimpsest", 0),
        ("test_module_17", 1), ("test_module_17.py", 1),
        ("fly.io", 2), ("fly", 2), ("v1.2.3", 2), ("ops-team", 2), ("example.com", 2),
    ],
)
def test_a_word_inside_a_path_or_a_host_is_found(marked: Memory, query: str, found: int) -> None:
    hits = marked.search(query, limit=5).hits
    assert [h.message.content for h in hits][:1] == [TEXTS[found]]


def test_a_fact_naming_a_path_is_found_by_its_file(marked: Memory) -> None:
    assert [h.fact.text for h in marked.facts.search("api.go")] == ["The payments service lives in services/payments/api.go."]
