"""Document vaults: index a folder, keep it in line by content hash, and query it.

`index` walks the vault folder, and for each new or changed file (by sha256; a file only
touched keeps its chunks) extracts the text (`extract.py`), cuts it into chunks in the
embedding model's own tokens (`chunking.py`) and stores them with their vectors, one
document per transaction. A file that cannot be read is reported by path — with the rest
of the vault indexed — and remembered with its error and hash, so `--stale` does not try
it again until it changes. Without an embedder (or while it is down) chunks are stored
without vectors and the next `index` embeds them; queries are keyword-only meanwhile.

`query` is hybrid: BM25 over heading path and text, normalised within the query, and
the cosine similarity, clipped to [0, 1]; `score = (w_fts·fts + w_semantic·similarity) /
(w_fts + w_semantic)`, the search weights (time and importance do not apply to a
document). A natural-language question that matches no chunk with all its words falls
back to any word, like the rest of search.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ..decisions import Decision
from ..errors import Conflict, InvalidInput, PalimpsestError
from ..records import iso, utcnow
from ..search import Weights, check_limit, check_query, floor_for, rank
from ..segment import keyword_words
from ..store.documents_base import OWNER, ChunkQuery, ChunkRow, DocumentRow, Reader, VaultRow
from .chunking import Chunker, Tokenizer, embed_text
from .extract import EXTENSIONS, ExtractError, extract
from .files import FileInfo, check_writable_name, resolve_inside, safe_relative, sha256, walk, write_inside

log = logging.getLogger(__name__)

List = list  # the classes below have a method named `list`


MAX_DOCUMENT_BYTES = 64 * 1024 * 1024  # a larger file is reported, not read
MAX_WRITE_BYTES = 8 * 1024 * 1024  # a document written through the API (it is journaled whole)
TEXT_EXTENSIONS = (".md", ".markdown", ".txt")  # what text written through the API may be
EMBED_BATCH = 64


@dataclass
class IndexReport:
    vault: str
    indexed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    chunks: int = 0
    pages: int = 0
    embedded: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ChunkHit:
    """One chunk found: where it is (vault, document, heading path, PDF or form-feed
    pages), the metadata of the document (its front matter overlaid by what the writer
    attached), the cosine `similarity` in [0, 1] (None without vectors) and the score."""

    id: str
    vault: str
    document: str
    title: str
    heading_path: str
    text: str
    ordinal: int
    similarity: float | None
    score: float
    parts: dict[str, float]
    metadata: dict[str, Any]
    indexed_at: str
    pages: list[int] = field(default_factory=list)
    changed_at: str = ""  # when its document's content last changed (`changed_at`): the date recall shows it under

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["score"] = round(self.score, 6)
        d["similarity"] = None if self.similarity is None else round(self.similarity, 6)
        d["parts"] = {k: round(v, 6) for k, v in self.parts.items()}
        return d


@dataclass
class QueryResult:
    hits: list[ChunkHit]
    mode: str  # hybrid | keyword
    match: str = "all"
    notes: list[str] = field(default_factory=list)
    took_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "match": self.match, "notes": self.notes, "took_ms": round(self.took_ms, 2),
                "hits": [h.to_dict() for h in self.hits]}


def chunk_id(vault: str, path: str, digest: str, ordinal: int) -> str:
    return "chk_" + hashlib.sha256(f"{vault}\x00{path}\x00{digest}\x00{ordinal}".encode()).hexdigest()[:20]


def merged_metadata(stored: dict[str, Any]) -> dict[str, Any]:
    """What a reader sees: the file's own (front matter) overlaid by the writer's."""
    return {**(stored.get("file") or {}), **(stored.get("writer") or {})}


def changed_at(old: DocumentRow | None, digest: str, mtime: float) -> str:
    """When a document's content last changed: the date it had while its hash stays the same, else its file's
    modification time. Dated by indexing, a `--full` re-index put an unchanged refund policy under today's date in
    recall, after the newer chat lines that had changed the policy, where it read as the newest word."""
    if old is not None and old.sha256 == digest and old.metadata.get("changed_at"):
        return str(old.metadata["changed_at"])
    return iso(datetime.fromtimestamp(mtime, UTC))


def document_date(stored: dict[str, Any], indexed_at: str) -> str:
    """A document's date (`changed_at`), or when it was indexed for one indexed before documents kept that."""
    return str(stored.get("changed_at") or indexed_at)


class Documents:
    def __init__(self, vaults: Any) -> None:  # `registry.Vaults`, which builds this part
        self.vaults = vaults
        self.embedding = vaults.kernel.embedding
        self.settings = vaults.settings
        self.store = vaults.store
        self._chunker: tuple[str, Chunker] | None = None
        self._restored: dict[tuple[str, str], dict[str, Any]] = {}  # writer metadata of documents restored from the journal

    # -- chunking and embedding ----------------------------------------------
    def embedder(self) -> Any:
        try:
            return self.embedding.model
        except Exception:
            return None

    def chunker(self) -> Chunker:
        """Chunks sized for the embedder: its input limit minus [CLS]/[SEP] (254 tokens for
        the local model), or `doc_chunk_tokens` when set (or when the model has no known limit)."""
        embedder = self.embedder()
        setting = int(getattr(self.settings, "doc_chunk_tokens", 0) or 0)
        model_limit = int(getattr(embedder, "max_tokens", 0) or 0) - 2
        limit = min(setting, model_limit) if setting and model_limit > 0 else setting or (model_limit if model_limit > 0 else 254)
        key = f"{getattr(embedder, 'model_id', None)}:{limit}"
        if self._chunker is None or self._chunker[0] != key:
            tok = getattr(embedder, "_tok", None)
            self._chunker = (key, Chunker(limit, tokenizer=Tokenizer(tok) if tok is not None else None))
        return self._chunker[1]

    def _vectors(self, texts: List[str], report: IndexReport) -> tuple[str | None, List[np.ndarray | None]]:
        embedder = self.embedder()
        if embedder is None or not texts:
            return None, [None] * len(texts)
        try:
            out: List[np.ndarray | None] = []
            for start in range(0, len(texts), EMBED_BATCH):
                # through the cache (a restore, `--full` or a rename had embedded every chunk again)
                out += list(self.embedding.embed(texts[start:start + EMBED_BATCH], self.settings.embed_timeout))
            report.embedded += len(texts)
            return embedder.model_id, out
        except PalimpsestError as exc:
            if not any("embedder" in n for n in report.notes):
                report.notes.append(f"embedder unavailable ({exc}): chunks stored without vectors; `index` embeds them later")
            return None, [None] * len(texts)

    # -- indexing ------------------------------------------------------------
    def status(self, row: VaultRow) -> dict[str, Any]:
        """Which documents changed since indexing, which were deleted, which files were
        never indexed (`new`), which failed, and what the walk could not take."""
        files, problems = walk(self.vaults.folder(row), EXTENSIONS)
        plan = self._plan(row, files)
        return {"vault": row.name, "changed": sorted(plan["changed"]), "deleted": sorted(plan["deleted"]),
                "new": sorted(plan["new"]), "unchanged": len(plan["unchanged"]) + len(plan["touched"]),
                "failed": [{"path": d.path, "error": d.error} for d in plan["failed"]], "problems": problems,
                "warned": [{"path": d.path, "warnings": list(d.metadata.get("warnings") or [])}
                           for d in plan["docs"].values() if d.path in files and (d.metadata or {}).get("warnings")]}

    def _plan(self, row: VaultRow, files: dict[str, FileInfo]) -> dict[str, Any]:
        docs = {d.path: d for d in self.store.document_rows(row.name)}
        plan: dict[str, Any] = {"new": {}, "changed": {}, "unchanged": [], "touched": {}, "failed": [],
                                "deleted": [p for p in docs if p not in files], "docs": docs}
        for path, info in files.items():
            doc = docs.get(path)
            if doc is None:
                plan["new"][path] = info
                continue
            if (doc.mtime, doc.size) == (info.mtime, info.size):
                same = True
            else:
                try:
                    same = sha256(info.full.read_bytes()) == doc.sha256
                except OSError:
                    same = False
                if same:
                    plan["touched"][path] = info
            if not same:
                plan["changed"][path] = info
            elif doc.error:
                plan["failed"].append(doc)
            elif path not in plan["touched"]:
                plan["unchanged"].append(path)
        return plan

    def index(self, row: VaultRow, *, full: bool = False, progress: Any = None, only: List[str] | None = None) -> IndexReport:
        started = time.perf_counter()
        report = IndexReport(row.name)
        folder = self.vaults.folder(row)
        if not folder.is_dir():
            report.errors.append({"path": ".", "error": f"the vault folder {folder} does not exist"})
            return report
        files, problems = walk(folder, EXTENSIONS)
        report.errors += problems
        plan = self._plan(row, files)
        todo = {**plan["new"], **plan["changed"]}
        if full:
            todo = dict(files)
        else:
            for path, info in plan["touched"].items():
                self.store.touch_document(row.name, path, info.mtime, info.size)
        if only is not None:
            todo = {p: i for p, i in todo.items() if p in only}
        still = [d for d in plan["failed"] if d.path not in todo and (only is None or d.path in only)]
        report.unchanged = len(files) - len(todo) - len(still)
        # a file that failed and has not changed since still fails: said each time, not counted as indexed and unchanged
        report.errors += [{"path": d.path, "error": f"{d.error} (unchanged since it failed)"} for d in still]
        for n, (path, info) in enumerate(sorted(todo.items()), 1):
            self._index_file(row, info, plan["docs"].get(path), report)
            if progress:
                progress(n, len(todo))
        if only is None and plan["deleted"]:
            # journaled, so a restore does not bring back a document written through the API and deleted since
            self.vaults.record("remove_documents", row.name, {"vault": row.name, "paths": sorted(plan["deleted"])})
            self.store.remove_documents(row.name, plan["deleted"])
            report.removed = sorted(plan["deleted"])
        self._embed_missing(row, report)
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    def _index_file(self, row: VaultRow, info: FileInfo, old: DocumentRow | None, report: IndexReport,
                    writer: dict[str, Any] | None = None) -> None:
        if writer is None:
            writer = old.metadata.get("writer") if old else self._restored.get((row.name, info.path))
        stored: dict[str, Any] = {"writer": writer or {}}
        try:
            if info.full.stat().st_size > MAX_DOCUMENT_BYTES:
                raise ExtractError(f"larger than {MAX_DOCUMENT_BYTES // 2**20} MB")
            data = info.full.read_bytes()
        except FileNotFoundError:
            report.errors.append({"path": info.path, "error": "deleted while indexing"})
            if old is not None:
                self.store.remove_documents(row.name, [info.path])
                report.removed.append(info.path)
            return
        except (OSError, ExtractError) as exc:
            report.errors.append({"path": info.path, "error": f"cannot read: {getattr(exc, 'strerror', None) or exc}"})
            return
        doc = DocumentRow(row.name, info.path, sha256(data), info.mtime, len(data), iso(utcnow()))
        stored["changed_at"] = changed_at(old, doc.sha256, info.mtime)
        try:
            extracted = extract(info.path, data)
        except ExtractError as exc:
            report.errors.append({"path": info.path, "error": str(exc)})
            doc.error, doc.metadata = str(exc), stored
            self.store.replace_document(doc, [], None)
            return
        report.warnings += [{"path": info.path, "warning": w} for w in extracted.warnings]
        chunks = self.chunker().chunk(extracted.sections)
        model, vectors = self._vectors([c.embed_text for c in chunks], report)
        rows = [ChunkRow(chunk_id(row.name, info.path, doc.sha256, c.ordinal), row.name, info.path, c.ordinal, c.heading_path,
                         c.text, c.token_count, c.metadata, v, keywords=keyword_words(f"{c.heading_path} {c.text}"))
                for c, v in zip(chunks, vectors)]
        doc.title, doc.pages = extracted.title, extracted.pages
        doc.metadata = {**stored, "file": _plain(extracted.metadata)}
        if extracted.warnings:  # kept with the document: a scan's "no text … run OCR" had been said once, then lost
            doc.metadata["warnings"] = list(extracted.warnings)
        self.store.replace_document(doc, rows, model)
        report.indexed.append(info.path)
        report.chunks += len(rows)
        report.pages += extracted.pages

    def _embed_missing(self, row: VaultRow, report: IndexReport) -> None:
        embedder = self.embedder()
        if embedder is None:
            return
        while todo := self.store.chunks_without_vectors(embedder.model_id, row.name, 256):
            model, vectors = self._vectors([embed_text(c.heading_path, c.text) for c in todo], report)
            if model is None:
                return
            self.store.put_chunk_vectors(model, [(c.id, v) for c, v in zip(todo, vectors) if v is not None])

    def list(self, row: VaultRow) -> List[dict[str, Any]]:
        out = []
        for d in self.store.document_rows(row.name):
            item = d.to_dict()
            item["metadata"] = merged_metadata(d.metadata)
            item["warnings"] = list(d.metadata.get("warnings") or [])
            item["changed_at"] = document_date(d.metadata, d.indexed_at)
            out.append(item)
        return out

    # -- writing -------------------------------------------------------------
    def write(self, row: VaultRow, path: str, content: str | bytes, metadata: dict[str, Any] | None = None,
              overwrite: bool = False) -> dict[str, Any]:
        """Write a document into the vault folder and index it at once. Text goes to .md /
        .txt; bytes may also be .pdf / .docx. Journaled first (principle 2).

        A file there holding what the API never wrote (the user's own, or one edited since) is
        replaced only with `overwrite`, and its old content is journaled with the write: an
        agent's write had replaced a researcher's notes for good."""
        is_text = isinstance(content, str)
        rel = safe_relative(path, TEXT_EXTENSIONS if is_text else EXTENSIONS)
        check_writable_name(self.vaults.writable_folder(row), path)
        if not isinstance(content, (str, bytes)):
            raise InvalidInput("content must be text (or bytes for .pdf / .docx)")
        data = content.encode("utf-8") if isinstance(content, str) else content
        if len(data) > MAX_WRITE_BYTES:
            raise InvalidInput(f"a document written through the API holds at most {MAX_WRITE_BYTES // 2**20} MB")
        writer = _plain(metadata or {}, strict=True)
        payload = {"path": rel, "metadata": writer, "sha256": sha256(data)}
        if not is_text:
            payload["content_b64"] = base64.b64encode(data).decode("ascii")
        existing = resolve_inside(self.vaults.writable_folder(row), rel)  # refused before anything is journaled
        if existing.is_file() and existing.stat().st_size > MAX_WRITE_BYTES:
            raise Conflict(f"{rel} is in vault {row.name} already, larger than a write keeps a copy of "
                           f"({MAX_WRITE_BYTES // 2**20} MB): move it out of the vault first")
        before = existing.read_bytes() if existing.is_file() else None
        if before is not None and sha256(before) != payload["sha256"] and not self.vaults.wrote(row.name, rel, sha256(before)):
            if not overwrite:
                raise Conflict(f"{rel} is in vault {row.name} already and was not written through the API (or was changed "
                               "since): pass overwrite (`--overwrite`) to replace it (its content is then kept in the vault journal)")
            payload["replaced"] = {"sha256": sha256(before), "content_b64": base64.b64encode(before).decode("ascii")}
        self.vaults.record("write_document", f"{row.name}/{rel}", {"vault": row.name, **payload}, content=content if isinstance(content, str) else "")
        self.vaults.note_written(row.name, rel, payload["sha256"])
        target = write_inside(self.vaults.folder(row), rel, data)
        st = target.stat()
        report = IndexReport(row.name)
        old = next((d for d in self.store.document_rows(row.name) if d.path == rel), None)
        self._index_file(row, FileInfo(rel, target, st.st_mtime, st.st_size), old, report, writer)
        return {"vault": row.name, "path": rel, "sha256": payload["sha256"], "chunks": report.chunks, "errors": report.errors,
                "warnings": report.warnings, "notes": report.notes}

    def restore_written(self, decisions: List[Decision]) -> int:
        """Rewrite documents and skills written through the API whose file is missing (the
        last decision per path wins: a later removal is respected). Skills had been left out:
        an export imported into a new home listed its skill vault as empty, folder missing."""
        last: dict[tuple[str, str], tuple[str, dict[str, Any], str]] = {}
        for d in decisions:
            meta, content = d.meta, d.content
            if d.op in ("write_document", "write_skill"):
                last[(meta["vault"], meta["path"])] = (d.op, meta, content)
            elif d.op == "remove_documents":
                last.update({(meta["vault"], p): (d.op, meta, "") for p in meta.get("paths", [])})
        restored = 0
        for (vault, path), (op, meta, content) in last.items():
            rows = self.store.vault_rows(OWNER, [vault])
            if op == "remove_documents" or not rows:
                continue
            if op == "write_document":
                self._restored[(vault, path)] = meta.get("metadata") or {}
            if rows[0].path:  # a folder the user chose, whose files are theirs (and an import's is another machine's): a
                continue      # crafted export had written ~/.ssh/authorized_keys through a vault "on" the home folder
            try:
                binary = op == "write_document" and "content_b64" in meta
                rel = safe_relative(path, (".md",) if op == "write_skill" else EXTENSIONS if binary else TEXT_EXTENSIONS)
                folder = self.vaults.writable_folder(rows[0])
                if resolve_inside(folder, rel).exists():
                    continue
                data = base64.b64decode(meta["content_b64"]) if "content_b64" in meta else content.encode("utf-8")
                write_inside(folder, rel, data)
                restored += 1
            except (InvalidInput, Conflict, ValueError) as exc:  # a path no write may take, a link out, the folder gone
                log.warning("not restoring %s/%s: %s", vault, path, exc)
        return restored

    # -- querying ------------------------------------------------------------
    def query(self, row: VaultRow, question: str, *, limit: int = 5, reader: Reader = OWNER) -> QueryResult:
        """A vault's chunks for `question`, above the relevance floor (`floor_similarity`, as
        message search): a query of no words, or about nothing the vault holds, gave five chunks at random."""
        return self.hybrid(question, ChunkQuery(reader, vaults=[row.name]), limit=limit, min_similarity=None)

    def search(self, query: str, *, session: str | None = None, agent: str | None = None, vaults: List[str] | None = None,
               limit: int = 10, min_similarity: float | None = None, query_vector: Any = None) -> QueryResult:
        """Chunks of the document vaults attached to `session` or to its agent (or to
        `agent`), readable by that agent, optionally narrowed to `vaults`, above the relevance
        floor as `query` (a chunk at a cosine of 0.07 came with "purple elephant trombone").
        Without a session and an agent nothing is attached, so nothing is found. This is what
        search and recall call."""
        reader, targets = self.vaults.attached(session, agent)
        if not targets:
            return QueryResult([], "keyword", notes=["no session or agent: no vault is attached"])
        return self.hybrid(query, ChunkQuery(reader, vaults=vaults, attached_to=targets), limit=limit,
                           min_similarity=min_similarity, query_vector=query_vector)

    def hybrid(self, question: str, q: ChunkQuery, *, limit: int = 5, min_similarity: float | None = 0.0,
               query_vector: Any = None) -> QueryResult:
        """Chunks by the one hybrid ranking (`search.hybrid`): BM25 and cosine only, weighted
        by `w_fts` and `w_semantic` rescaled to sum to 1 (keywords alone without vectors);
        a chunk with no keyword match needs a cosine above 0 and at least `min_similarity`."""
        started = time.perf_counter()
        question = check_query(question)
        check_limit(limit)
        notes: List[str] = []
        vector, model = self._query_vector(question, notes, query_vector)
        q.model = model
        if min_similarity is None:  # the relevance floor of the model's vectors (off without them)
            min_similarity = floor_for(model or "", self.settings.floor_similarity).similarity if vector is not None else 0.0
        source = ChunkSource(self.store, q, model or "", min_similarity)
        s = self.settings
        total = (s.w_fts + s.w_semantic) or 1.0
        weights = Weights(s.w_fts / total, s.w_semantic / total, 0.0, 0.0) if vector is not None else Weights(1.0, 0.0, 0.0, 0.0)
        ranking = rank(source, question, weights, pool=max(limit * 5, 50), vector=vector)
        if ranking.match == "any":
            notes.insert(0, "no chunk matched every word; showing chunks that match any word")
        hits = []
        for h in ranking.hits[:limit]:
            r = h.row
            cos = ranking.cosines.get(h.id)
            sim = min(1.0, max(0.0, cos)) if cos is not None else (0.0 if vector is not None else None)
            hits.append(ChunkHit(h.id, r.vault, r.path, r.title, r.heading_path, r.text, r.ordinal, sim, h.score, h.parts,
                                 merged_metadata(r.doc_metadata), r.indexed_at, list(r.metadata.get("pages", [])),
                                 document_date(r.doc_metadata, r.indexed_at)))
        if not hits and min_similarity:
            notes.append(f"no chunk matches a word of the query or is close enough to it (cosine {min_similarity})")
        return QueryResult(hits, "hybrid" if vector is not None else "keyword", ranking.match, notes,
                           (time.perf_counter() - started) * 1000)

    def _query_vector(self, question: str, notes: List[str], given: Any) -> tuple[Any, str | None]:
        embedder = self.embedder()
        if embedder is None:
            notes.append("no embedder configured: ranked by keywords only")
            return None, None
        if not question.strip():
            return None, None
        try:
            return (given if given is not None else self.embedding.query(question)), embedder.model_id
        except PalimpsestError as exc:
            notes.append(f"embedder unavailable ({exc}): ranked by keywords only")
            return None, None


class ChunkSource:
    """Document chunks as a `hybrid.Source` (no clock, no importance)."""

    stretch = False

    def __init__(self, store: Any, q: ChunkQuery, model: str, min_similarity: float) -> None:
        self.store, self.q, self.model = store, q, model
        self.min_semantic = max(min_similarity, 1e-12)  # "neither a keyword nor any likeness" is no hit

    def keyword(self, terms: List[str], match_all: bool, limit: int) -> List[tuple[str, float]]:
        return self.store.chunk_keyword_search(terms, self.q, limit, match_all)

    def count(self, terms: List[str], limit: int) -> int:
        return len(self.keyword(terms, True, limit))

    def vectors(self, vector: Any, limit: int) -> List[tuple[str, float]]:
        return self.store.chunk_vector_search(self.model, vector, self.q, limit)

    def cosines(self, ids: List[str], vector: Any) -> dict[str, float]:
        return {cid: float(np.dot(vec, vector)) for cid, vec in self.store.chunk_vectors(self.model, ids).items()}

    def rows(self, ids: List[str]) -> dict[str, ChunkRow]:
        return {c.id: c for c in self.store.get_chunks(ids)}

    def features(self, row: ChunkRow) -> dict[str, float]:
        return {}

    def tiebreak(self, row: ChunkRow) -> tuple[Any, ...]:
        return (row.id,)


def _plain(value: dict[str, Any], strict: bool = False) -> dict[str, Any]:
    """Metadata as plain JSON (dates from YAML become ISO strings)."""
    if not isinstance(value, dict):
        raise InvalidInput("metadata must be an object")
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False, default=None if strict else str))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"metadata must be plain JSON: {exc}") from None

