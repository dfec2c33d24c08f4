"""Text out of files: `.pdf` (pypdf), `.docx` (python-docx), `.md` and `.txt`.

`extract(path, data)` returns an `Extracted` (sections, page count, title, metadata,
warnings) or raises `ExtractError` with a sentence a person can act on: an encrypted or
corrupt PDF, a `.docx` that is some other zip, a binary file named `.txt`. A PDF's
typographic ligatures (ﬁ, ﬂ, ﬃ …) become their letters. Text that is
not valid UTF-8 is read as Windows-1252 (what such files nearly always are) with a
warning, never dropped. Markdown front matter (`---` YAML `---`) becomes the document's
metadata (and `title`), not text.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from .chunking import Section, markdown_sections

EXTENSIONS = (".md", ".markdown", ".txt", ".pdf", ".docx")
log = logging.getLogger(__name__)


# the typographic ligatures a PDF's fonts draw ("ﬁnancial oﬃce"): as letters, so "financial" finds them
_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl", "\ufb05": "st",
                            "\ufb06": "st"})


def unligated(text: str) -> str:
    return text.translate(_LIGATURES)


class ExtractError(Exception):
    """A file whose text cannot be had; the message says why."""


class FrontMatterError(ExtractError):
    """A `---` fence around what is not a YAML mapping: a skill is refused, a document read whole with a warning."""


@dataclass
class Extracted:
    sections: list[Section]
    pages: int = 0
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def extract(path: str, data: bytes) -> Extracted:
    """The text of a file, titled by its own title (metadata, front matter, first heading) or else by its file name:
    a PDF with no title in its metadata had listed an empty title in `docs` while a .txt got its name (a paralegal's)."""
    extracted = _by_type(path, data)
    extracted.title = extracted.title.strip() or PurePosixPath(path).stem
    return extracted


def _by_type(path: str, data: bytes) -> Extracted:
    suffix = PurePosixPath(path).suffix.lower()
    if suffix == ".pdf":
        return _pdf(data)
    if suffix == ".docx":
        return _docx(data)
    text, warnings = decode_text(data)
    if suffix in (".md", ".markdown"):
        try:
            meta, body = split_front_matter(text, strict=False)
        except FrontMatterError as exc:  # ("title: Notes: draft" unquoted): the metadata is lost, so say so
            meta, body = {}, text
            warnings = [*warnings, f"{exc}; read as text, without metadata"]
        sections = markdown_sections(body)
        first = next((s.heading_path[0] for s in sections if s.heading_path), "")
        title = str(meta.get("title") or first)
        return Extracted(sections, 0, title, meta, warnings)
    pages = text.split("\f")
    starts, at = [], 0
    for number, page in enumerate(pages, 1):
        starts.append((at, number))
        at += len(page) + 1
    return Extracted([Section([], text, starts if len(pages) > 1 else [])], len(pages) if len(pages) > 1 else 0,
                     "", {}, warnings)


def decode_text(data: bytes) -> tuple[str, list[str]]:
    """UTF-8 (a BOM is dropped), else Windows-1252 with a warning; binary data is refused."""
    head = data[:8192]
    if b"\x00" in head or (head and sum(b < 9 or 13 < b < 32 for b in head) > len(head) * 0.05):
        raise ExtractError("binary content, not text (NUL or control bytes)")
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        warning = f"not valid UTF-8 (byte {exc.start}); read as Windows-1252"
        return data.decode("cp1252", errors="replace"), [warning]


def split_front_matter(text: str, *, strict: bool) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a text opening with `---` YAML `---`. Without front matter:
    ({}, text), or `ExtractError` when `strict`. Invalid YAML or a non-mapping between
    closed fences raises `FrontMatterError` either way."""
    import yaml

    if not text.startswith("---"):
        if strict:
            raise ExtractError("no front matter (a skill opens with `---`, YAML with name and description, `---`)")
        return {}, text
    lines = text.splitlines(keepends=True)
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if lines[0].rstrip() != "---" or end is None:
        if strict:
            raise ExtractError("front matter is not closed by a `---` line")
        return {}, text
    try:
        meta = yaml.safe_load("".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"front matter is not YAML: {' '.join(str(exc).split())[:300]}") from None
    if not isinstance(meta, dict):
        raise FrontMatterError("front matter must be a YAML mapping (name: …, description: …)")
    return {str(k): v for k, v in meta.items()}, "".join(lines[end + 1:])


def _pdf(data: bytes) -> Extracted:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings ("EOF marker not found") printed raw amid a report
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractError("encrypted PDF: it needs a password")
        texts = [unligated(page.extract_text() or "") for page in reader.pages]
    except ExtractError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError) as exc:
        raise ExtractError(f"corrupt or unreadable PDF: {exc}") from None
    except Exception as exc:
        if "encrypt" in str(exc).lower() or "crypt" in type(exc).__name__.lower():
            raise ExtractError(f"encrypted PDF: {exc}") from None
        raise ExtractError(f"corrupt or unreadable PDF: {type(exc).__name__}: {exc}") from None
    starts, at = [], 0
    for number, page in enumerate(texts, 1):
        starts.append((at, number))
        at += len(page) + 2
    title = ""
    try:
        info: Any = reader.metadata or {}
        title = str(info.get("/Title") or "")
    except Exception as exc:
        log.debug("PDF without a readable title: %s", exc)
    empty = f"no text in its {len(texts)} page{'s' if len(texts) != 1 else ''}: a scan without a text layer? (run OCR on it first)"
    warnings = [] if any(t.strip() for t in texts) else [empty]
    return Extracted([Section([], "\n\n".join(texts), starts)], len(texts), title, {}, warnings)


def _docx(data: bytes) -> Extracted:
    import zipfile

    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise ExtractError(f"not a Word document (.docx): {exc or type(exc).__name__}") from None
    except Exception as exc:
        raise ExtractError(f"not a readable Word document: {type(exc).__name__}: {exc}") from None
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    body: list[str] = []

    def flush() -> None:
        if "".join(body).strip():
            sections.append(Section([h for _, h in stack], "\n\n".join(body)))
        body.clear()

    for block in _blocks(document):
        level = _heading_level(block)
        if level and block.text.strip():
            flush()
            stack = [(lv, h) for lv, h in stack if lv < level] + [(level, block.text.strip())]
        elif hasattr(block, "rows"):
            body.append("\n".join(" | ".join(c.text.strip() for c in row.cells) for row in block.rows))
        elif block.text.strip():
            body.append(block.text)
    flush()
    title = document.core_properties.title or next((s.heading_path[0] for s in sections if s.heading_path), "")
    return Extracted(sections, 0, title)


def _blocks(document: Any) -> Any:
    """Paragraphs and tables in document order."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    for child in document.element.body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            yield Paragraph(child, document)
        elif tag == "tbl":
            yield Table(child, document)


def _heading_level(block: Any) -> int:
    style = getattr(getattr(block, "style", None), "name", "") or ""
    if style == "Title":
        return 1
    if style.startswith("Heading "):
        try:
            return int(style.split()[1]) + 1  # under the Title, when there is one
        except (IndexError, ValueError):
            return 0
    return 0
