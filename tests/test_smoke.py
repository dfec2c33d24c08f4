from palimpsest import Memory


def test_append_search_roundtrip(memory: Memory) -> None:
    memory.append("s1", "user", "the retry cap matches the upstream timeout")
    hits = memory.search("retry cap").hits
    assert [h.message.content for h in hits] == ["the retry cap matches the upstream timeout"]
