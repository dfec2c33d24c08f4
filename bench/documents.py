"""Document vaults: index throughput and query latency.

    python bench/documents.py [--store URL] [--pg URL] [--chunks 100000] [--queries 200] [--pdfs 30] [--skip-local] [--write]

1. Index throughput on a generated corpus of real files — PDFs (10 pages each, written
   with pypdf), DOCX (python-docx, headings and a table) and Markdown (nested headings,
   code blocks) — once with the local model (all-MiniLM-L6-v2 int8, what a user gets)
   and once with the hash embedder (extraction + chunking + storage alone). Reports
   pages/s (PDF pages), chunks/s and MB/s of input.
2. Query latency at `--chunks` chunks (default 100,000): chunks of ~120 words in 1,000
   documents are stored directly (no extraction) with vectors of the hash embedder at
   384 dimensions — the local model's dimension, so the vector scan costs what it would
   cost with the model; the model itself would take days of this machine to embed 100k
   chunks (~50–150 texts/s on 2 cores). Queries are the bench corpus's varied keyword
   queries; each is a full `vaults.query` (hybrid: BM25 + exact cosine over the readable
   vaults, query embedding included). Reports p50/p95 and the first query (cache load).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import Corpus, machine, summary_ms, table, write_section

from palimpsest import Memory, Settings
from palimpsest.embed import HashEmbedder
from palimpsest.records import iso, utcnow
from palimpsest.store.documents_base import ChunkRow, DocumentRow
from palimpsest.vaults.documents import chunk_id


def make_pdf(pages: list[str]) -> bytes:
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    w = PdfWriter()
    font = w._add_object(DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                                           NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for text in pages:
        page = w.add_blank_page(612, 792)
        words = text.split()
        lines = [" ".join(words[i:i + 12]) for i in range(0, len(words), 12)]
        stream = DecodedStreamObject()
        stream.set_data(("BT /F1 10 Tf 50 750 Td 12 TL " + " ".join(f"({line}) Tj T*" for line in lines) + " ET").encode("latin-1"))
        page[NameObject("/Contents")] = w._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def make_docx(corpus: Corpus, n_sections: int) -> bytes:
    import docx

    d = docx.Document()
    d.add_heading(corpus.text(3), level=1)
    for _ in range(n_sections):
        d.add_heading(corpus.text(2), level=2)
        for _ in range(3):
            d.add_paragraph(corpus.text(80))
    t = d.add_table(rows=4, cols=3)
    for r in range(4):
        for c in range(3):
            t.cell(r, c).text = corpus.word()
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def make_markdown(corpus: Corpus) -> str:
    parts = [f"# {corpus.text(3)}", corpus.text(60)]
    for i in range(4):
        parts += [f"## {corpus.text(2)}", corpus.text(120), f"### {corpus.text(2)}", corpus.text(90),
                  "```python", f"def f{i}():\n    # {corpus.text(5)}\n    return {i}", "```"]
    return "\n\n".join(parts)


def build_corpus(folder: Path, pdfs: int, docxs: int, mds: int) -> dict[str, int]:
    corpus = Corpus(seed=11)
    folder.mkdir(parents=True)
    for i in range(pdfs):
        (folder / f"report-{i:03}.pdf").write_bytes(make_pdf([corpus.text(400) for _ in range(10)]))
    for i in range(docxs):
        (folder / f"policy-{i:03}.docx").write_bytes(make_docx(corpus, 4))
    (folder / "guides").mkdir()
    for i in range(mds):
        (folder / "guides" / f"guide-{i:03}.md").write_text(make_markdown(corpus))
    return {"files": pdfs + docxs + mds, "bytes": sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())}


def index_run(home: Path, store: str | None, folder: Path, embedder: str) -> dict[str, float]:
    settings = Settings.load(env={}, embedder=embedder, embed_cache="off")
    with Memory(home, store, settings=settings) as memory:
        if embedder == "hash":
            memory.use_embedder(HashEmbedder(384))
        else:
            assert memory.embedder is not None  # load the model before the clock starts
        vaults = memory.vaults
        vaults.init("corpus", "semantic", path=folder)
        started = time.perf_counter()
        report = vaults.index("corpus")
        seconds = time.perf_counter() - started
    assert not report.errors, report.errors
    return {"seconds": seconds, "pages": report.pages, "chunks": report.chunks, "files": len(report.indexed)}


def load_chunks(memory: Memory, n: int, per_doc: int = 100) -> float:
    corpus = Corpus(seed=5)
    embedder = HashEmbedder(384)
    vaults = memory.vaults
    vaults.init("big", "semantic")
    started = time.perf_counter()
    for d in range(0, n, per_doc):
        path = f"doc-{d // per_doc:05}.md"
        texts = [corpus.text(120) for _ in range(min(per_doc, n - d))]
        vectors = embedder.embed_batch(texts)
        doc = DocumentRow("big", path, f"{d:064x}", 0.0, sum(len(t) for t in texts), iso(utcnow()), title=path)
        rows = [ChunkRow(chunk_id("big", path, doc.sha256, i), "big", path, i, f"Doc {d} > part {i // 10}", t, 160, {}, v)
                for i, (t, v) in enumerate(zip(texts, vectors))]
        memory.store.replace_document(doc, rows, embedder.model_id)
    return time.perf_counter() - started


def query_run(home: Path, store: str | None, n_chunks: int, n_queries: int) -> dict[str, float]:
    settings = Settings.load(env={}, embedder="none", embed_cache="off")
    with Memory(home, store, settings=settings) as memory:
        memory.use_embedder(HashEmbedder(384))
        load_s = load_chunks(memory, n_chunks)
        vaults = memory.vaults
        queries = Corpus(seed=9).queries(n_queries)
        started = time.perf_counter()
        vaults.query("big", queries[0], limit=10)
        first = time.perf_counter() - started
        samples = []
        for q in queries:
            t = time.perf_counter()
            vaults.query("big", q, limit=10)
            samples.append(time.perf_counter() - t)
    return {"load_s": load_s, "first_ms": first * 1000, **summary_ms(samples)}


def backend_of(url: str | None) -> str:
    return "PostgreSQL" if url and url.startswith("postgres") else "SQLite"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", help="store URL (default: SQLite in a temporary home)")
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--pdfs", type=int, default=30)
    ap.add_argument("--skip-local", action="store_true", help="index with the hash embedder only")
    ap.add_argument("--pg", help="also measure query latency on this PostgreSQL URL (an empty database)")
    ap.add_argument("--write", action="store_true", help="write the Documents section of bench/RESULTS.md")
    args = ap.parse_args()
    rows = []
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "corpus"
        info = build_corpus(folder, args.pdfs, 20, 30)
        for embedder in (["hash"] if args.skip_local else ["hash", "local"]):
            r = index_run(Path(tmp) / f"home-{embedder}", args.store, folder, embedder)
            label = "local model (MiniLM int8)" if embedder == "local" else "hash embedder (no model)"
            rows.append((label, str(r["files"]), str(r["pages"]), str(r["chunks"]), f"{r['seconds']:.1f}",
                         f"{r['pages'] / r['seconds']:.1f}", f"{r['chunks'] / r['seconds']:.1f}",
                         f"{info['bytes'] / 1024 / r['seconds']:.1f}"))
            print(rows[-1], flush=True)
        queries = {backend_of(args.store): query_run(Path(tmp) / "home-query", args.store, args.chunks, args.queries)}
        if args.pg:
            queries["PostgreSQL"] = query_run(Path(tmp) / "home-pg", args.pg, args.chunks, args.queries)
        print(queries, flush=True)
    backend = backend_of(args.store)
    body = "\n".join([
        (f"`python bench/documents.py{' --store …' if args.store else ''}` — {machine()}, {backend}; "
        f"load average {load[0]:.1f} → {os.getloadavg()[0]:.1f} during the run (the machine is shared)."),
        "",
        (f"Index throughput: a generated corpus of {args.pdfs} PDFs (10 pages each), 20 DOCX and 30 Markdown files "
        f"({info['bytes'] / 2**20:.1f} MB), chunked to 254 tokens with 15% overlap. Pages/s counts PDF pages; "
        "chunks/s every chunk (extraction, chunking, embedding, storage)."),
        "",
        table(rows, ("embedder", "files", "PDF pages", "chunks", "seconds", "pages/s", "chunks/s", "KB/s")),
        "",
        (f"Query latency at {args.chunks:,} chunks (1,000 documents; hash embedder at 384 dimensions, the local model's, "
        "so the exact vector scan costs the same; the model would need hours to embed them here): "
        f"`vaults.query(..., limit=10)`, {args.queries} varied keyword queries, hybrid (BM25 + exact cosine), "
        "query embedding included. PostgreSQL scans the readable chunks' vectors exactly (pgvector `<=>`, no ANN index)."),
        "",
        table([(name, f"{q['p50_ms']:.1f}", f"{q['p95_ms']:.1f}", f"{q['mean_ms']:.1f}", f"{q['first_ms']:.0f}", f"{q['load_s']:.0f}")
               for name, q in queries.items()],
              ("store", "p50 ms", "p95 ms", "mean ms", "first query ms", "load s")),
    ])
    print(body)
    if args.write:
        write_section("Documents", body)


if __name__ == "__main__":
    main()
