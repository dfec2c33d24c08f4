"""Chunking in the embedding model's own tokens (the real tokenizer, `tokens.py`): no
chunk above the limit, 15% ± one token of overlap, heading paths from Markdown (deep
headings, code blocks, tables) and DOCX, page numbers from PDF and form feeds."""

from __future__ import annotations

import itertools
import random

import pytest

from palimpsest.vaults.chunking import Chunker, Section, Tokenizer, markdown_sections
from palimpsest.vaults.extract import ExtractError, decode_text, extract, split_front_matter

LIMIT = 254  # the local model's 256 minus [CLS] and [SEP]
WORDS = ["memory", "journal", "index", "vector", "retrieval", "the", "of", "a", "to", "and", "chunk", "overlap", "token", "heading",
         "internationalisation", "pneumonoultramicroscopic", "2026-11-30", "v1.2.3", "naïve", "café", "über", "Straße", "—",
         "“quoted”", "(parenthesised)", "x=y+z;"]


def prose(n_paragraphs: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    paragraphs = []
    for _ in range(n_paragraphs):
        sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 25))) + "." for _ in range(rng.randint(1, 8))]
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs)


def count_tokens(text: str) -> int:
    """The embedding model's own count, the one chunks are cut to (a word WordPiece cannot read is one
    `[UNK]` to the model, whatever `tokens.count_tokens` says of it for an LLM's budget)."""
    return Tokenizer().count(text)


def check_chunks(chunks: list, limit: int = LIMIT, sections: list[Section] | None = None) -> None:
    assert chunks
    for c in chunks:
        assert count_tokens(c.embed_text) == c.token_count <= limit, c.text[:80]
    for a, b in itertools.pairwise(chunks):
        if a.section != b.section:
            continue
        assert b.start_token > a.start_token
        overlap = a.end_token - b.start_token
        assert abs(overlap - round(0.15 * (a.end_token - a.start_token))) <= 1
        if sections is not None:  # the text they share, measured again with the tokenizer
            shared = sections[a.section].text[b.start_char:a.end_char]
            assert a.text.endswith(shared) and b.text.startswith(shared)
            assert abs(count_tokens(shared) - round(0.15 * (a.end_token - a.start_token))) <= 1


def test_long_prose_never_exceeds_the_limit_and_overlaps_by_15_percent() -> None:
    sections = [Section(["Guide", "Install", "Linux"], prose(200))]
    chunks = Chunker(LIMIT).chunk(sections)
    assert len(chunks) > 20
    check_chunks(chunks, LIMIT, sections)
    assert all(c.heading_path == "Guide > Install > Linux" for c in chunks)
    assert all(c.embed_text.startswith("Guide > Install > Linux\n") for c in chunks)


@pytest.mark.parametrize("limit", [16, 64, 100, 254, 512])
def test_every_limit_holds(limit: int) -> None:
    sections = [Section(["A heading"], prose(30, seed=limit))]
    check_chunks(Chunker(limit).chunk(sections), limit, sections)


def test_a_word_longer_than_a_chunk_is_cut_and_still_fits() -> None:
    blob = "x" * 5000 + " tail words here"
    check_chunks(Chunker(64).chunk([Section([], blob)]), 64)


def test_chunks_end_on_paragraphs_when_they_can() -> None:
    chunks = Chunker(LIMIT).chunk([Section([], prose(60, seed=3))])
    ends = sum(1 for c in chunks[:-1] if c.text.endswith("."))
    assert ends >= 0.8 * (len(chunks) - 1)


def test_a_deep_heading_path_is_capped_to_a_quarter_of_the_chunk() -> None:
    path = [f"level {i} " + "word " * 20 for i in range(6)]
    chunks = Chunker(64).chunk([Section(path, prose(5))])
    check_chunks(chunks, 64)
    assert count_tokens(chunks[0].heading_path) <= 16


MARKDOWN = """---
title: The Guide
tags: [a, b]
---
Preface before any heading.

# Guide
Intro.

## Install

### Linux
Run this:

```bash
# not a heading: a shell comment
apt install palimpsest
```

| os | command |
|----|---------|
| Debian | apt |

#### Debian ####
On Debian 13.

### macOS
brew install palimpsest

Setext heading
==============
Top-level again.

Sub part
--------
Second level.

~~~
## still code
~~~
"""


def test_markdown_heading_paths_code_blocks_and_tables() -> None:
    meta, body = split_front_matter(MARKDOWN, strict=False)
    assert meta == {"title": "The Guide", "tags": ["a", "b"]}
    paths = {" > ".join(s.heading_path): s.text for s in markdown_sections(body)}
    assert list(paths) == ["", "Guide", "Guide > Install > Linux", "Guide > Install > Linux > Debian", "Guide > Install > macOS",
                           "Setext heading", "Setext heading > Sub part"]
    assert "# not a heading" in paths["Guide > Install > Linux"] and "| Debian | apt |" in paths["Guide > Install > Linux"]
    assert "## still code" in paths["Setext heading > Sub part"]
    doc = extract("guide.md", MARKDOWN.encode())
    assert doc.title == "The Guide" and doc.metadata["tags"] == ["a", "b"]
    chunks = Chunker(LIMIT).chunk(doc.sections)
    assert [c.heading_path for c in chunks][2] == "Guide > Install > Linux"


def test_a_thousand_page_text_is_chunked_within_limits() -> None:
    pages = [prose(3, seed=i)[:1500] for i in range(1000)]
    doc = extract("book.txt", "\f".join(pages).encode())
    assert doc.pages == 1000
    chunks = Chunker(LIMIT).chunk(doc.sections)
    assert len(chunks) > 1000
    for c in chunks[::50]:
        assert count_tokens(c.embed_text) <= LIMIT
    assert max(c.token_count for c in chunks) <= LIMIT
    assert chunks[0].metadata["pages"][0] == 1 and chunks[-1].metadata["pages"][-1] == 1000
    pages_seen = [c.metadata["pages"][0] for c in chunks]
    assert pages_seen == sorted(pages_seen)


def test_text_decoding() -> None:
    assert decode_text("\ufeffhello".encode()) == ("hello", [])
    text, warnings = decode_text("café".encode("latin-1"))
    assert text == "café" and "not valid UTF-8" in warnings[0]
    with pytest.raises(ExtractError, match="binary"):
        decode_text(b"\x7fELF\x02\x01\x01\x00\x00\x00")


def test_front_matter_errors_are_explained() -> None:
    with pytest.raises(ExtractError, match="not YAML"):
        split_front_matter("---\nname: [unclosed\n---\nbody", strict=True)
    with pytest.raises(ExtractError, match="mapping"):
        split_front_matter("---\n- a list\n---\nbody", strict=True)
    with pytest.raises(ExtractError, match="no front matter"):
        split_front_matter("just text", strict=True)
    assert split_front_matter("---\nno fence closes this\n", strict=False) == ({}, "---\nno fence closes this\n")


def test_a_documents_broken_front_matter_is_a_warning_and_its_text_is_kept() -> None:
    broken = extract("notes.md", b"---\ntitle: Launch: the plan\n---\n# Plan\nship on Friday\n")
    assert broken.metadata == {} and "ship on Friday" in broken.sections[-1].text
    assert broken.warnings == [f"{broken.warnings[0].split(';')[0]}; read as text, without metadata"]
    assert "front matter is not YAML" in broken.warnings[0]
    fine = extract("notes.md", b'---\ntitle: "Launch: the plan"\n---\n# Plan\nship on Friday\n')
    assert fine.metadata == {"title": "Launch: the plan"} and fine.title == "Launch: the plan" and fine.warnings == []
