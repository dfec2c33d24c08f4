"""Chunking in the embedding model's own tokens, with 15% overlap and heading paths.

A document arrives as `Section`s (a heading path and its text; Markdown and DOCX are cut
on their headings, PDF and plain text are one section whose page breaks are remembered).
Each section is tokenized once with the embedder's tokenizer (offsets kept), then cut
into windows of at most `limit` tokens *including* the heading path the chunk is embedded
with, so every chunk is embedded whole — no window of the model ever drops its tail.

Where a window ends: the last paragraph break, else line break, else sentence end, else
word start in its last 40%; a word longer than a whole window is the only thing ever cut
mid-word. The next window starts `round(overlap × length)` tokens before that end (15% by
default), moved by at most one token to land on a word start — so consecutive chunks
share 15% ± one token, and a chunk never starts in the middle of a word unless it must.
Cutting on pre-tokenizer word boundaries means a chunk re-tokenizes to exactly the tokens
it was cut from; the count is checked anyway and a chunk that would exceed is shortened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

OVERLAP = 0.15
SEPARATOR = " > "
PREFIX_SHARE = 0.25  # a heading path takes at most this share of a chunk's tokens


@dataclass
class Section:
    heading_path: list[str]
    text: str
    pages: list[tuple[int, int]] = field(default_factory=list)  # (char offset, page number) where each page starts


@dataclass
class Chunk:
    ordinal: int
    heading_path: str
    text: str
    token_count: int  # of `embed_text`, what the limit bounds
    start_token: int  # window in the section's tokens (tests measure the overlap with these)
    end_token: int
    section: int
    start_char: int = 0  # span of `text` in the section's text
    end_char: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def embed_text(self) -> str:
        return embed_text(self.heading_path, self.text)


def embed_text(heading_path: str, text: str) -> str:
    """What a chunk's vector stands for: its heading path, then its text."""
    return f"{heading_path}\n{text}" if heading_path else text


class Tokenizer:
    """The embedding model's tokenizer (a `tokenizers.Tokenizer`): token offsets and word
    starts of a text, and exact counts."""

    def __init__(self, tok: Any = None) -> None:
        if tok is None:
            from ..tokens import _tokenizer

            tok = _tokenizer()
        self._tok = tok

    def encode(self, text: str) -> tuple[list[tuple[int, int]], list[bool]]:
        """Offsets of every token and whether it starts a word. Long texts are encoded in
        pieces cut at line ends (the tokenizer splits on whitespace first, so the tokens
        are the same), in one parallel batch: one 2 MB string is ~4x slower."""
        pieces = _pieces(text)
        offsets: list[tuple[int, int]] = []
        starts: list[bool] = []
        for at, enc in zip((p[0] for p in pieces), self._tok.encode_batch([text[a:b] for a, b in pieces], add_special_tokens=False)):
            words = enc.word_ids
            offsets += [(a + at, b + at) for a, b in enc.offsets]
            starts += [i == 0 or words[i] != words[i - 1] or words[i] is None for i in range(len(words))]
        return offsets, starts

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids) if text else 0

    def truncate(self, text: str, budget: int) -> str:
        enc = self._tok.encode(text, add_special_tokens=False)
        return text if len(enc.ids) <= budget else text[: enc.offsets[budget - 1][1]] if budget > 0 else ""


class Chunker:
    """Cuts sections into chunks of at most `limit` tokens with `overlap` between neighbours."""

    def __init__(self, limit: int, overlap: float = OVERLAP, tokenizer: Tokenizer | None = None) -> None:
        if limit < 16:
            raise ValueError("a chunk limit below 16 tokens leaves no room for text")
        self.limit = limit
        self.overlap = overlap
        self.tok = tokenizer or Tokenizer()

    def chunk(self, sections: list[Section]) -> list[Chunk]:
        out: list[Chunk] = []
        for number, section in enumerate(sections):
            path = self._path(section.heading_path)
            for chunk in self._section(section, path, number):
                chunk.ordinal = len(out)
                out.append(chunk)
        return out

    def _path(self, headings: list[str]) -> str:
        path = SEPARATOR.join(" ".join(h.split()) for h in headings if h.strip())
        return self.tok.truncate(path, int(self.limit * PREFIX_SHARE))

    def _section(self, section: Section, path: str, number: int) -> list[Chunk]:
        text = section.text
        if not text.strip():
            return []
        offsets, starts = self.tok.encode(text)
        if not offsets:
            return []
        prefix = self.tok.count(path + "\n") if path else 0
        size = self.limit - prefix
        chunks, s, n = [], 0, len(offsets)
        while True:
            e = n if n - s <= size else self._end(text, offsets, starts, s, s + size)
            chunk = self._make(section, path, number, offsets, s, e, prefix + e - s if starts[s] and (e == n or starts[e]) else None)
            while chunk.token_count > self.limit and e - s > 1:  # a mid-word cut re-tokenized longer
                e -= 1
                chunk = self._make(section, path, number, offsets, s, e, None)
            chunks.append(chunk)
            if e >= n:
                return chunks
            s = self._next_start(starts, s, e)

    def _next_start(self, starts: list[bool], s: int, e: int) -> int:
        target = e - round(self.overlap * (e - s))
        for cand in (target, target + 1, target - 1):
            if s < cand < e and starts[cand]:
                return cand
        return max(s + 1, min(target, e - 1)) if target > s else s + 1

    @staticmethod
    def _end(text: str, offsets: list[tuple[int, int]], starts: list[bool], s: int, hard: int) -> int:
        """The best place to end a window [s, hard): a token that starts a paragraph, a
        line, a sentence or at least a word, as late as possible in the last 40%."""
        low = s + max(1, int((hard - s) * 0.6))
        best: dict[int, int] = {}
        for e in range(hard, low - 1, -1):
            if not starts[e]:
                continue
            gap = text[offsets[e - 1][1]:offsets[e][0]]
            rank = 3 if "\n\n" in gap else 2 if "\n" in gap else 1 if text[offsets[e - 1][0]:offsets[e - 1][1]] in ".!?" else 0
            best.setdefault(rank, e)
            if rank == 3:
                break
        return best[max(best)] if best else hard

    def _make(self, section: Section, path: str, number: int, offsets: list[tuple[int, int]], s: int, e: int,
              count: int | None) -> Chunk:
        """The chunk of tokens [s, e). `count` is known when both ends are word starts (the
        tokenizer cuts words the same way in any substring that starts on a word); a
        mid-word cut is counted again."""
        start, end = offsets[s][0], offsets[e - 1][1]
        body = section.text[start:end]
        if count is None:
            count = self.tok.count(embed_text(path, body))
        meta: dict[str, Any] = {}
        if section.pages:
            first, last = _page_at(section.pages, start), _page_at(section.pages, max(start, end - 1))
            meta["pages"] = [first, last] if last != first else [first]
        return Chunk(0, path, body, count, s, e, number, start, end, meta)


def _pieces(text: str, size: int = 8192) -> list[tuple[int, int]]:
    """(start, end) of pieces of about `size` characters, each ending after a newline
    when there is one (else at whitespace, else anywhere)."""
    out, start, n = [], 0, len(text)
    while start < n:
        end = min(n, start + size)
        if end < n:
            cut = text.rfind("\n", start + size // 2, end)
            if cut < 0:
                cut = max(text.rfind(" ", start + size // 2, end), text.rfind("\t", start + size // 2, end))
            end = cut + 1 if cut >= 0 else end
        out.append((start, end))
        start = end
    return out


def _page_at(pages: list[tuple[int, int]], offset: int) -> int:
    page = pages[0][1]
    for at, number in pages:
        if at > offset:
            break
        page = number
    return page


# -- Markdown ------------------------------------------------------------------
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")


def markdown_sections(text: str) -> list[Section]:
    """Sections of a Markdown text, cut on ATX (`#`) and setext headings outside code
    fences; each carries the path of headings above it (`Guide > Install > Linux`)."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    fence: str | None = None
    lines = text.splitlines()

    def flush() -> None:
        if "".join(body).strip():
            sections.append(Section([h for _, h in stack], "\n".join(body).strip("\n")))
        body.clear()

    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            body.append(line)
            continue
        if m:
            fence = m.group(1)
            body.append(line)
            continue
        heading = _ATX.match(line)
        level, title = (len(heading.group(1)), heading.group(2) or "") if heading else (0, "")
        if not heading and body and body[-1].strip() and _SETEXT.match(line) and not _is_table_rule(line, body[-1]):
            level, title = (1 if line.strip()[0] == "=" else 2), body.pop()
        if level:
            flush()
            stack = [(lv, h) for lv, h in stack if lv < level] + [(level, title.strip())]
            continue
        body.append(line)
    flush()
    return sections


def _is_table_rule(line: str, previous: str) -> bool:
    """`---` under a line is a setext heading, unless the line above is a table row or the
    rule ends a list item or front matter — keep those as text."""
    return "|" in previous or previous.lstrip().startswith(("- ", "* ", "+ ")) or previous.strip() == "---"
