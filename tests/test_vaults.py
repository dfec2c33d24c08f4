"""Document vaults on both backends: real PDF, DOCX, Markdown and text files made here;
indexing, hybrid query, status and stale re-indexing by content hash, access control in
the store, attachments, documents written through the API (and restored from the
journal into a new store), every bad input of the issue reported by file, and the CLI."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from palimpsest import Memory, Settings, tools
from palimpsest.embed import HashEmbedder
from palimpsest.errors import Conflict, InvalidInput, NotFound
from palimpsest.vaults import Reader, Vaults


def make_pdf(pages: list[str], password: str | None = None) -> bytes:
    """A real PDF (Helvetica text, one page per string), written with pypdf."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    w = PdfWriter()
    font = w._add_object(DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                                           NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for text in pages:
        page = w.add_blank_page(612, 792)
        lines = [line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for line in text.split("\n")]
        stream = DecodedStreamObject()
        stream.set_data(("BT /F1 11 Tf 72 720 Td 14 TL " + " ".join(f"({line}) Tj T*" for line in lines) + " ET").encode("latin-1"))
        page[NameObject("/Contents")] = w._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    if password:
        w.encrypt(password)
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def make_docx(title: str, parts: list[tuple[str, str]], table: list[list[str]] | None = None) -> bytes:
    import docx

    d = docx.Document()
    d.add_heading(title, level=1)
    for heading, text in parts:
        d.add_heading(heading, level=2)
        d.add_paragraph(text)
    if table:
        t = d.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, cell in enumerate(row):
                t.cell(r, c).text = cell
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


@pytest.fixture
def vaults(memory: Memory) -> Vaults:
    memory.use_embedder(HashEmbedder())
    return memory.vaults


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "handbook"
    (folder / "guides").mkdir(parents=True)
    (folder / "manual.pdf").write_bytes(make_pdf(["Chapter one\nthe reactor cooling loop uses glycol", "Chapter two\nthe turbine spins at 3000 rpm"]))
    (folder / "policy.docx").write_bytes(make_docx("Policy", [("Travel", "book flights through the portal"), ("Expenses", "receipts within 30 days")],
                                                   [["item", "limit"], ["hotel", "150 euros"]]))
    (folder / "guides" / "install.md").write_text("# Guide\n## Install\n### Linux\nrun apt install palimpsest\n### macOS\nbrew install palimpsest\n")
    (folder / "notes.txt").write_text("the staging database password rotates weekly\n")
    return folder


def test_index_and_query_every_format(vaults: Vaults, corpus: Path) -> None:
    vaults.init("handbook", "semantic", path=corpus)
    report = vaults.index("handbook")
    assert sorted(report.indexed) == ["guides/install.md", "manual.pdf", "notes.txt", "policy.docx"]
    assert report.errors == [] and report.pages == 2 and report.embedded == report.chunks

    hit = vaults.query("handbook", "turbine rpm").hits[0]
    assert (hit.document, hit.pages) == ("manual.pdf", [1, 2])  # two short pages make one chunk
    assert 0 <= hit.similarity <= 1 and 0 < hit.score <= 1
    hit = vaults.query("handbook", "install on linux").hits[0]
    assert (hit.document, hit.heading_path, hit.title) == ("guides/install.md", "Guide > Install > Linux", "Guide")
    hit = vaults.query("handbook", "hotel limit").hits[0]
    assert hit.document == "policy.docx" and "hotel | 150 euros" in hit.text and hit.heading_path.startswith("Policy")
    hit = vaults.query("handbook", "how often does the staging password rotate?").hits[0]
    assert hit.document == "notes.txt"
    ids = [h.id for h in vaults.query("handbook", "glycol").hits]
    vectors = vaults.store.chunk_vectors(HashEmbedder().model_id, ids)
    assert set(vectors) == set(ids) and all(v.shape == (HashEmbedder().dim,) and v.dtype == np.float32 for v in vectors.values())
    result = vaults.query("handbook", "glycol")
    assert result.mode == "hybrid" and result.hits[0].parts["fts"] == 1.0
    assert all(0 <= h.similarity <= 1 for h in result.hits if h.similarity is not None)


def test_status_and_stale_reindex_touch_only_what_changed(vaults: Vaults, corpus: Path) -> None:
    vaults.init("handbook", "semantic", path=corpus)
    vaults.index("handbook")
    (corpus / "notes.txt").write_text("the staging password now rotates daily\n")
    (corpus / "manual.pdf").unlink()
    (corpus / "new.md").write_text("# New\nfresh content\n")
    install = corpus / "guides" / "install.md"
    os.utime(install, (1, 1))  # touched, same content
    status = vaults.status("handbook")
    assert (status["changed"], status["deleted"], status["new"]) == (["notes.txt"], ["manual.pdf"], ["new.md"])
    assert status["unchanged"] == 2

    report = vaults.reindex("handbook", stale=True)
    assert sorted(report.indexed) == ["new.md", "notes.txt"] and report.removed == ["manual.pdf"]
    assert vaults.status("handbook")["changed"] == [] and vaults.status("handbook")["new"] == []
    assert vaults.query("handbook", "rotates daily").hits[0].document == "notes.txt"
    assert not [h for h in vaults.query("handbook", "turbine").hits if h.document == "manual.pdf"]
    assert sorted(vaults.reindex("handbook").indexed) == ["guides/install.md", "new.md", "notes.txt", "policy.docx"]


def test_a_document_is_dated_by_when_its_content_last_changed(vaults: Vaults, memory: Memory, tmp_path: Path) -> None:
    """Found by a support bot's builder: documents were dated by when they were indexed, and `index --full` re-dated an
    unchanged file, so recall showed an old refund policy under today's date, after the newer chat lines that changed
    the policy. A document's date is its file's modification time, kept while its content stays the same."""
    folder = tmp_path / "policy"
    folder.mkdir()
    policy = folder / "refunds.md"
    policy.write_text("# Refunds\n\nRefunds are paid back within 30 days.\n")
    os.utime(policy, (1736935200, 1736935200))  # 2025-01-15 10:00 UTC
    vaults.init("policy", "semantic", path=folder)

    def dated() -> tuple[str, str]:
        listed = vaults.docs("policy")[0]["changed_at"]
        return listed, vaults.query("policy", "refunds").hits[0].changed_at

    vaults.attach("policy", agent="bici-bot")
    memory.append("c1", "user", "hi, how long do refunds take?", agent="bici-bot")
    vaults.index("policy")
    vaults.index("policy", full=True)
    assert [i.date for i in memory.recall("c1", "how long do refunds take?").items if i.kind == "document"] == ["2025-01-15"]
    assert dated() == ("2025-01-15T10:00:00.000000Z",) * 2
    vaults.reindex("policy")
    os.utime(policy, (1767225600, 1767225600))  # touched, same content
    vaults.index("policy")
    vaults.index("policy", full=True)
    assert dated() == ("2025-01-15T10:00:00.000000Z",) * 2
    policy.write_text("# Refunds\n\nRefunds are paid back within 14 days.\n")
    os.utime(policy, (1767312000, 1767312000))  # 2026-01-02: changed
    vaults.index("policy")
    assert dated() == ("2026-01-02T00:00:00.000000Z",) * 2


def test_an_index_with_a_failed_document_exits_2_after_indexing_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from palimpsest.cli import main

    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "hash")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\nthe good document about kestrels\n")
    (folder / "corrupt.pdf").write_bytes(make_pdf(["fine"])[:300])
    base = ["--home", str(tmp_path / "cli-home")]
    assert main([*base, "vault", "init", "d", "--path", str(folder)]) == 0
    capsys.readouterr()
    assert main([*base, "index", "d", "--json"]) == 2  # a script can tell: `index d && publish` stops here
    report = json.loads(capsys.readouterr().out)
    assert report["indexed"] == ["good.md"] and [e["path"] for e in report["errors"]] == ["corrupt.pdf"]
    assert main([*base, "index", "d"]) == 2  # and says so again while the file still fails
    assert "failed corrupt.pdf" in capsys.readouterr().err
    (folder / "corrupt.pdf").unlink()
    assert main([*base, "index", "d"]) == 0
    assert main([*base, "reindex", "d"]) == 0


def test_bad_input_is_reported_by_file_and_the_rest_indexes(vaults: Vaults, tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\nthe good document about kestrels\n")
    (folder / "encrypted.pdf").write_bytes(make_pdf(["secret plans"], password="hunter2"))
    (folder / "corrupt.pdf").write_bytes(make_pdf(["fine"])[:300])
    fake = io.BytesIO()
    with zipfile.ZipFile(fake, "w") as z:
        z.writestr("hello.txt", "not a word document")
    (folder / "fake.docx").write_bytes(fake.getvalue())
    (folder / "binary.txt").write_bytes(bytes(range(256)) * 4)
    (folder / "latin1.txt").write_bytes("crème brûlée recipe".encode("latin-1"))
    (folder / "loop").symlink_to(folder / "loop")
    (folder / "sub").mkdir()
    (folder / "sub" / "up").symlink_to(folder)
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\nsecret outside text\n")
    (folder / "escape.md").symlink_to(outside)
    (folder / "zz-doomed.md").write_text("# Doomed\nthis file goes away mid-index\n")
    vaults.init("bad", "semantic", path=folder)

    def progress(done: int, total: int) -> None:
        if done == 1:
            (folder / "zz-doomed.md").unlink()

    report = vaults.documents.index(vaults.get("bad"), progress=progress)
    errors = {e["path"]: e["error"] for e in report.errors}
    assert "encrypted" in errors["encrypted.pdf"]
    assert "corrupt" in errors["corrupt.pdf"]
    assert "not a Word document" in errors["fake.docx"]
    assert "binary" in errors["binary.txt"]
    assert "loop" in errors["loop"] and "loop" in errors["sub/up"]
    assert "outside the vault" in errors["escape.md"]
    assert errors["zz-doomed.md"] == "deleted while indexing"
    assert sorted(report.indexed) == ["good.md", "latin1.txt"]
    assert report.warnings == [{"path": "latin1.txt", "warning": "not valid UTF-8 (byte 2); read as Windows-1252"}]
    assert vaults.query("bad", "crème brûlée").hits[0].document == "latin1.txt"
    assert vaults.query("bad", "kestrels").hits[0].document == "good.md"
    assert not vaults.query("bad", "secret outside").hits
    status = vaults.status("bad")
    assert {f["path"] for f in status["failed"]} == {"encrypted.pdf", "corrupt.pdf", "fake.docx", "binary.txt"}
    assert vaults.reindex("bad", stale=True).indexed == []  # failed files are not retried until they change
    again = vaults.documents.index(vaults.get("bad"))  # … and each run says they still fail (it said "0 failed", them "unchanged")
    assert {e["path"] for e in again.errors if "unchanged since it failed" in e["error"]} == {"encrypted.pdf", "corrupt.pdf",
                                                                                              "fake.docx", "binary.txt"}
    assert again.unchanged == 2  # good.md, latin1.txt


def test_a_restricted_vault_is_invisible_to_other_agents(vaults: Vaults, memory: Memory) -> None:
    vaults.init("open", "semantic")
    vaults.init("secret", "semantic", access="restricted", readers=["alice"])
    vaults.write_document("open", "a.md", "# Open\nthe launch window opens at dawn")
    vaults.write_document("secret", "b.md", "# Secret\nthe launch code is 0000")
    alice, bob = Reader(agent="alice"), Reader(agent="bob")
    assert [v["name"] for v in vaults.list(bob)] == ["open"]
    assert [v["name"] for v in vaults.list(alice)] == ["open", "secret"]
    with pytest.raises(NotFound):
        vaults.query("secret", "launch code", reader=bob)
    assert vaults.query("secret", "launch code", reader=alice).hits
    for agent in ("alice", "bob"):
        vaults.attach("open", agent=agent)
        vaults.attach("secret", agent=agent)
    assert {h.vault for h in vaults.search("launch", agent="alice").hits} == {"open", "secret"}
    assert {h.vault for h in vaults.search("launch", agent="bob").hits} == {"open"}
    vaults.set_access("secret", "public")
    assert {h.vault for h in vaults.search("launch", agent="bob").hits} == {"open", "secret"}


def test_search_reads_only_vaults_attached_to_the_session_or_its_agent(vaults: Vaults, memory: Memory) -> None:
    for name in ("team", "project", "other"):
        vaults.init(name, "semantic")
        vaults.write_document(name, "doc.md", f"# {name}\nthe {name} deployment checklist")
    memory.append("s1", "user", "hi", agent="coder")
    memory.append("s2", "user", "hi", agent="writer")
    vaults.attach("team", agent="coder")
    vaults.attach("project", session="s1")
    assert {h.vault for h in vaults.search("deployment checklist", session="s1").hits} == {"team", "project"}
    assert vaults.search("deployment checklist", session="s2").hits == []
    assert vaults.search("deployment checklist").hits == []
    vaults.detach("project", session="s1")
    assert {h.vault for h in vaults.search("deployment checklist", session="s1").hits} == {"team"}
    hit = vaults.search("deployment checklist", session="s1").hits[0]
    assert hit.id.startswith("chk_") and hit.to_dict()["document"] == "doc.md"


def test_written_documents_are_indexed_at_once_and_come_back_from_the_journal(
        vaults: Vaults, memory: Memory, store_url: str, tmp_path: Path) -> None:
    from test_facts import other_url

    vaults.init("notes", "semantic", access="restricted", readers=["coder"])
    vaults.attach("notes", agent="coder")
    written = vaults.write_document("notes", "ops/deploy.md", "# Deploy\nthe deploy key lives in vault seven",
                                    metadata={"author": "agent-7", "source": "evt_1"})
    assert written["chunks"] == 1
    hit = vaults.query("notes", "deploy key").hits[0]
    assert (hit.document, hit.metadata["author"], hit.heading_path) == ("ops/deploy.md", "agent-7", "Deploy")
    with pytest.raises(InvalidInput):
        vaults.write_document("notes", "../escape.md", "x")
    with pytest.raises(InvalidInput):
        vaults.write_document("notes", "a.exe", "x")
    (vaults.folder(vaults.get("notes")) / "ops" / "deploy.md").unlink()  # the folder lost it too

    settings = Settings.load(env={}, embedder="none")
    with Memory(memory.home, other_url(store_url, tmp_path, "replaced"), settings=settings) as second:
        second.use_embedder(HashEmbedder())
        restored = second.vaults
        row = restored.get("notes")
        assert (row.access, row.readers, row.attachments[0]["target"]) == ("restricted", ["coder"], "coder")
        hit = restored.query("notes", "deploy key").hits[0]
        assert (hit.document, hit.metadata["author"]) == ("ops/deploy.md", "agent-7")


def test_a_write_replaces_the_users_own_file_only_when_told_and_keeps_its_content(vaults: Vaults, memory: Memory) -> None:
    """Found by a researcher: an agent's `vault_write_document` replaced their hand-written notes
    in the vault folder, and the old text was nowhere."""
    import base64

    from palimpsest.vaults.registry import SYSTEM_SESSION

    vaults.init("research", "semantic")
    notes = vaults.folder(vaults.get("research")) / "reading-notes.md"
    notes.write_text("# Reading notes\nKrios costs 2,400 per day.\n")
    with pytest.raises(Conflict, match="pass overwrite"):
        vaults.write_document("research", "reading-notes.md", "overwritten by agent")
    assert notes.read_text().startswith("# Reading notes")
    vaults.write_document("research", "agent.md", "# Agent\nfirst draft")  # its own file: rewritten freely
    vaults.write_document("research", "agent.md", "# Agent\nsecond draft")
    vaults.write_document("research", "reading-notes.md", "# Reading notes\nKrios costs 2,400 per day.\n")  # the same bytes
    notes.write_text("# Reading notes\nedited by hand\n")  # changed since the API wrote it
    with pytest.raises(Conflict):
        vaults.write_document("research", "reading-notes.md", "overwritten by agent")
    result = tools.call(memory, "vault_write_document", {"vault": "research", "path": "reading-notes.md",
                                                          "content": "overwritten by agent", "overwrite": True}, enable_write=True)
    assert result["chunks"] == 1 and notes.read_text() == "overwritten by agent"
    last = [d for d in memory.decisions.taken(SYSTEM_SESSION, changes_only=False) if d.op == "write_document"][-1]
    assert base64.b64decode(last.meta["replaced"]["content_b64"]) == b"# Reading notes\nedited by hand\n"


def test_chinese_japanese_emoji_and_full_width_words_of_a_document_are_found(vaults: Vaults) -> None:
    """Found by a researcher: a DOCX chunk's 酵母 was found by no query (the query asks for
    character bigrams, the chunk's text was one unbroken run to the tokenizer), while a chat
    message's was."""
    vaults.init("r", "semantic")
    vaults.write_document("r", "jp.md", "# 発酵\n\n酵母の発酵速度は温度に依存する。\n\n## 中文\n\n长期记忆系统很重要。ＡＰＩ key 🎉\n")
    vaults.write_document("r", "en.md", "# Notes\n\nThe yeast grows faster when it is warm.\n")
    for query, start in [("酵母", "酵母の発"), ("长期记忆系统", "长期记忆"), ("API", "长期记忆"), ("🎉", "长期记忆")]:
        assert vaults.query("r", query).hits[0].text.startswith(start), query


def test_a_chunk_id_a_recall_block_shows_can_be_opened_by_whom_may_read_it(vaults: Vaults, memory: Memory) -> None:
    """Found by a researcher: the `chk_…` ids of every recall block's document lines were
    opened by nothing (`get-full` and `memory_get_full` said not found)."""
    from palimpsest.errors import NotFound

    vaults.init("open", "semantic")
    vaults.init("secret", "semantic", access="restricted", readers=["coder"])
    vaults.write_document("open", "grant.md", "# Grant\n\n## Costs\n\nThe Krios microscope costs 2,400 per day.\n")
    vaults.write_document("secret", "keys.md", "# Keys\n\nThe launch code is 0000.\n")
    mine = vaults.query("open", "Krios").hits[0].id
    theirs = vaults.query("secret", "launch code").hits[0].id
    full = memory.get_full(mine)
    assert (full["document"], full["heading_path"], full["content"]) == ("grant.md", "Grant > Costs", "The Krios microscope costs 2,400 per day.")
    assert tools.call(memory, "memory_get_full", {"id": mine}, enable_write=False)["content"].startswith("The Krios")
    assert tools.call(memory, "memory_get_full", {"id": theirs, "agent": "coder"}, enable_write=False)["vault"] == "secret"
    with pytest.raises(NotFound, match="no document chunk"):
        tools.call(memory, "memory_get_full", {"id": theirs, "agent": "intern"}, enable_write=False)
    with pytest.raises(NotFound, match="no document chunk"):
        memory.get_full("chk_00000000000000000000")


def test_a_file_another_process_wrote_through_the_api_is_no_users_own(vaults: Vaults, memory: Memory, store_url: str) -> None:
    """What the API wrote is known without re-reading the journal on every write (a bulk load had slowed with
    each document), and a write of another process on the same home is still known."""
    vaults.init("shared", "semantic")
    vaults.write_document("shared", "a.md", "# A\nfirst")  # this process knows its writes
    with Memory(memory.home, store_url, settings=Settings.load(env={}, embedder="none")) as other:
        other.vaults.write_document("shared", "b.md", "# B\nwritten by the other process")
    vaults.write_document("shared", "b.md", "# B\nrewritten here")  # not the user's own: no overwrite needed
    vaults.write_document("shared", "a.md", "# A\nsecond")


def test_two_vaults_never_read_one_folder(vaults: Vaults, tmp_path: Path) -> None:
    """Found by a researcher: `vault init research2 --path` of research's folder indexed every
    file twice (each hit came back twice to a reader of both)."""
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    vaults.init("research", "semantic", str(docs))
    assert vaults.init("research", "semantic", str(docs)).name == "research"  # the same again: idempotent
    for path in (docs, docs / "sub", tmp_path):
        with pytest.raises(Conflict, match="reads .* already"):
            vaults.init("research2", "semantic", str(path))
    (tmp_path / "other").mkdir()
    assert vaults.init("research2", "semantic", str(tmp_path / "other")).name == "research2"
    assert vaults.init("notes", "semantic").name == "notes"  # a global vault: a folder of its own under the home


def test_one_registry_for_every_vault_type(vaults: Vaults, memory: Memory, tmp_path: Path) -> None:
    memory.facts.write("Ada lives in Lyon")  # creates the default fact vault `facts`
    vaults.init("journal", "episodic")
    assert "journal" in {v.name for v in memory.facts.vaults()}
    vaults.init("docs", "semantic", path=tmp_path / "docs")
    vaults.init("procedures", "skill")
    listed = {v["name"]: v for v in vaults.list()}
    assert {k: v["type"] for k, v in listed.items()} == {"docs": "semantic", "facts": "episodic", "journal": "episodic", "procedures": "skill"}
    assert listed["docs"]["scope"] == "local" and listed["procedures"]["scope"] == "global"
    assert listed["procedures"]["path"] == str(memory.home / "vaults" / "procedures")
    assert listed["docs"]["state"] == "empty" and listed["facts"]["size"] == {"facts": 1}
    with pytest.raises(Conflict):
        vaults.init("docs", "skill")
    with pytest.raises(Conflict):
        vaults.init("facts", "semantic")
    assert vaults.init("docs", "semantic").name == "docs"  # idempotent
    with pytest.raises(InvalidInput):
        vaults.init("bad name!", "semantic")


def test_chunks_without_vectors_are_embedded_by_the_next_index(memory: Memory, tmp_path: Path) -> None:
    v = memory.vaults  # the memory fixture has no embedder
    v.init("plain", "semantic")
    v.write_document("plain", "a.md", "# A\nkeyword only for now")
    result = v.query("plain", "keyword")
    assert result.mode == "keyword" and result.hits[0].similarity is None
    memory.use_embedder(HashEmbedder())
    report = v.index("plain")
    assert report.embedded == 1
    assert v.query("plain", "keyword").hits[0].similarity is not None


def test_cli_round_trip(tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from palimpsest.cli import main

    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "hash")
    base = ["--home", str(tmp_path / "cli-home")]

    def run(*argv: str) -> Any:
        code = main([*base, *argv, "--json"])
        out = capsys.readouterr().out
        assert code == 0, out
        return json.loads(out)

    assert run("vault", "init", "hb", "--path", str(corpus))["scope"] == "local"
    assert run("vault", "init", "notes", "--type", "episodic")["type"] == "episodic"
    assert len(run("index", "hb")["indexed"]) == 4
    assert run("query", "hb", "install on linux")["hits"][0]["heading_path"] == "Guide > Install > Linux"
    (corpus / "notes.txt").write_text("changed\n")
    assert run("docs", "hb", "--status")["changed"] == ["notes.txt"]
    assert run("reindex", "hb", "--stale")["indexed"] == ["notes.txt"]
    assert run("write-document", "hb", "extra.md", "--text", "# Extra\nmore", "--meta", "k=1")["chunks"] == 1
    assert {d["path"]: d["metadata"] for d in run("docs", "hb")}["extra.md"] == {"k": 1}
    assert {v["name"] for v in run("vault", "list")} == {"hb", "notes"}
    assert run("vault", "attach", "hb", "--agent", "coder")["attachments"][0]["target"] == "coder"
    assert run("vault", "access", "hb", "--restricted", "--reader", "coder")["readers"] == ["coder"]
    assert run("vault", "list", "--agent", "stranger") == [v for v in run("vault", "list") if v["name"] == "notes"]
    assert main([*base, "query", "hb", "x", "--agent", "stranger"]) == 3


def test_tools_read_as_the_agent_named_never_as_the_owner(vaults: Vaults, memory: Memory) -> None:
    vaults.init("open", "semantic")
    vaults.init("secret", "semantic", access="restricted", readers=["alice"])
    tools.call(memory, "vault_write_document", {"vault": "open", "path": "a.md", "content": "# A\nthe harbour map"}, enable_write=True)
    with pytest.raises(NotFound):
        tools.call(memory, "vault_write_document", {"vault": "secret", "path": "b.md", "content": "x"}, enable_write=True)
    tools.call(memory, "vault_write_document", {"vault": "secret", "path": "b.md", "content": "# B\nthe harbour code",
                                                "agent": "alice"}, enable_write=True)
    assert [v["name"] for v in tools.call(memory, "vault_list", {}, enable_write=False)["vaults"]] == ["open"]
    hits = tools.call(memory, "vault_query", {"vault": "secret", "query": "harbour", "agent": "alice"}, enable_write=False)["hits"]
    assert hits[0]["document"] == "b.md"
    with pytest.raises(NotFound):
        tools.call(memory, "vault_query", {"vault": "secret", "query": "harbour"}, enable_write=False)
    with pytest.raises(NotFound):
        tools.call(memory, "vault_write_document", {"vault": "open", "path": "c.md", "content": "x"}, enable_write=False)


def test_a_written_document_deleted_since_is_not_restored(vaults: Vaults, memory: Memory, store_url: str, tmp_path: Path) -> None:
    from test_facts import other_url

    vaults.init("notes", "semantic")
    vaults.write_document("notes", "keep.md", "# Keep\nkept text")
    vaults.write_document("notes", "gone.md", "# Gone\nremoved text")
    (vaults.folder(vaults.get("notes")) / "gone.md").unlink()
    assert vaults.reindex("notes", stale=True).removed == ["gone.md"]
    (vaults.folder(vaults.get("notes")) / "keep.md").unlink()
    with Memory(memory.home, other_url(store_url, tmp_path, "replaced"), settings=Settings.load(env={}, embedder="none")) as second:
        assert [d["path"] for d in second.vaults.docs("notes")] == ["keep.md"]


def test_two_writers_of_one_document_do_not_collide(vaults: Vaults) -> None:
    import threading

    vaults.init("shared", "semantic")
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:
            for j in range(5):
                vaults.write_document("shared", "same.md", f"# Same\nversion {i}-{j}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [d["path"] for d in vaults.docs("shared")] == ["same.md"]
    assert len(vaults.query("shared", "version").hits) == 1


def test_a_write_never_follows_a_link_out_of_the_vault(vaults: Vaults, memory: Memory, tmp_path: Path) -> None:
    # issue 21: a link inside the vault folder took vault_write_document outside it
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.md").write_text("keep me")
    vaults.init("notes", "semantic")
    folder = vaults.folder(vaults.get("notes"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "out").symlink_to(outside)  # a folder link
    (folder / "victim.md").symlink_to(outside / "victim.md")  # a file link
    (folder / "new.md").symlink_to(outside / "new.md")  # a dangling link
    for path in ("out/victim.md", "out/sub/new.md", "victim.md", "new.md"):
        with pytest.raises(InvalidInput, match="outside the vault"):
            tools.call(memory, "vault_write_document", {"vault": "notes", "path": path, "content": "# Pwned\nx"}, enable_write=True)
    assert sorted(p.name for p in outside.iterdir()) == ["victim.md"] and (outside / "victim.md").read_text() == "keep me"
    assert vaults.docs("notes") == []
    # a link that stays inside is followed, as indexing follows it
    (folder / "real").mkdir()
    (folder / "inner").symlink_to(folder / "real")
    vaults.write_document("notes", "inner/ok.md", "# Ok\nstays inside")
    assert (folder / "real" / "ok.md").read_text() == "# Ok\nstays inside"
    vaults.init("skills", "skill")
    skills = vaults.folder(vaults.get("skills"))
    skills.mkdir(parents=True, exist_ok=True)
    (skills / "release.md").symlink_to(outside / "release.md")
    with pytest.raises(InvalidInput, match="outside the vault"):
        vaults.write_skill("skills", "release", "How we ship", "1. tag")
    assert not (outside / "release.md").exists()


def test_a_pdfs_ligatures_are_found_as_letters(vaults: Vaults, tmp_path: Path) -> None:
    """Found by a new user: a PDF drawn with ligature glyphs ("ﬁnancial … workﬂow") was found by
    no keyword search for "financial workflow" (Helvetica's 0xAE is fi, 0xAF fl)."""
    folder = tmp_path / "lig"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(make_pdf(["The \xaenancial team changed its work\xafow."]))
    (folder / "other.txt").write_text("the staging database password rotates weekly\n")
    vaults.init("lig", "semantic", path=folder)
    vaults.index("lig")
    hit = vaults.query("lig", "financial workflow").hits[0]
    assert hit.document == "report.pdf" and "financial team changed its workflow" in hit.text


def test_a_vault_query_about_nothing_it_holds_finds_nothing(home: Path, store_url: str, corpus: Path) -> None:
    """Found by a new user: a query of no words ('"', a zero-width space) or about nothing the
    vault holds ("creme brulee") gave five chunks at random. The relevance floor of message
    search applies (MiniLM's measured cosine)."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as m:
        m.vaults.init("handbook", "semantic", path=corpus)
        m.vaults.index("handbook")
        for nothing in ("creme brulee recipe", '"', "\u200b\u202e"):
            result = m.vaults.query("handbook", nothing)
            assert result.hits == [] and any("close enough" in n for n in result.notes), (nothing, result.hits)
        assert m.vaults.query("handbook", "how fast does the turbine spin?").hits[0].document == "manual.pdf"


def test_a_vault_of_another_type_or_none_gets_the_right_hint(vaults: Vaults, memory: Memory) -> None:
    """Found by an MCP client's user: `vault_query` on the fact vault `facts` said "no vault named
    'facts'; create it with … --type semantic" (vault_list shows it), and a skill written to a
    missing vault was told to create a semantic one."""
    memory.facts.write("the harbour opens at dawn")
    with pytest.raises(InvalidInput, match="'facts' is an episodic vault; this needs a semantic vault"):
        tools.call(memory, "vault_query", {"vault": "facts", "query": "harbour"}, enable_write=False)
    with pytest.raises(NotFound, match="--type skill"):
        tools.call(memory, "vault_write_skill", {"vault": "nowhere", "name": "x", "description": "d", "body": "b"}, enable_write=True)


def test_a_scan_without_text_is_said_and_a_latin1_file_is_written(vaults: Vaults, tmp_path: Path, home: Path, store_url: str,
                                                                    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a knowledge worker: a scanned PDF was "indexed" with nothing in it and no word of why, and
    `write-document --file` of a Windows-1252 text crashed with a UnicodeDecodeError traceback."""
    from pypdf import PdfWriter

    from palimpsest.cli import main

    folder = tmp_path / "scans"
    folder.mkdir()
    writer, buf = PdfWriter(), io.BytesIO()
    writer.add_blank_page(612, 792)
    writer.write(buf)
    (folder / "contract.pdf").write_bytes(buf.getvalue())
    vaults.init("scans", "semantic", folder)
    report = vaults.index("scans")
    assert any(w["path"] == "contract.pdf" and "no text" in w["warning"] for w in report.warnings)
    # and said again later (a researcher's: once said, the warning was nowhere, the scan listed as 0 chunks)
    vaults.index("scans")
    assert [w["path"] for w in vaults.status("scans")["warned"]] == ["contract.pdf"]
    assert "no text" in vaults.docs("scans")[0]["warnings"][0]
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Café crème brûlée at the Brno office".encode("cp1252"))
    vaults.init("notes", "semantic")
    capsys.readouterr()
    monkeypatch.setenv("PALIMPSEST_STORE", store_url)
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
    assert main(["--home", str(home), "write-document", "notes", "imports/latin.txt", "--file", str(latin), "--json"]) == 0
    assert "Windows-1252" in capsys.readouterr().err
    assert "Café crème" in vaults.query("notes", "Brno office").hits[0].text


def test_a_write_into_a_vault_whose_folder_is_gone_is_refused(vaults: Vaults, tmp_path: Path) -> None:
    """Found by a new user: with the vault's folder moved away (an unmounted drive), `write-document` made the
    folder anew with its one file, and the next `index` removed the eleven other documents."""
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "a.md").write_text("# A\nalpha text\n")
    (folder / "b.md").write_text("# B\nbeta text\n")
    vaults.init("handbook", "semantic", path=str(folder))
    vaults.reindex("handbook")
    folder.rename(tmp_path / "handbook-away")
    with pytest.raises(Conflict, match="does not exist"):
        vaults.write_document("handbook", "notes/agent.md", "# Agent\nnote")
    skills = tmp_path / "skills"
    skills.mkdir()
    vaults.init("howto", "skill", path=str(skills))
    skills.rmdir()
    with pytest.raises(Conflict, match="does not exist"):
        vaults.write_skill("howto", "deploy", "How we deploy", "Run make deploy.")
    assert not folder.exists() and not skills.exists()
    assert "does not exist" in vaults.reindex("handbook").errors[0]["error"]
    assert sorted(d["path"] for d in vaults.docs("handbook")) == ["a.md", "b.md"]


def test_document_chunks_are_embedded_through_the_cache(memory: Memory, corpus: Path, tmp_path: Path) -> None:
    """Found by a researcher: chunks went to the model directly, never through the embedding cache, so a `--full`
    re-index, a rename or an export restored into another home embedded every chunk again (17 minutes for one log)."""
    from palimpsest.embed import EmbeddingCache

    class Counting(HashEmbedder):
        texts = 0

        def embed_batch(self, texts: list[str]) -> np.ndarray:
            Counting.texts += len(texts)
            return super().embed_batch(texts)

    memory.use_embedder(Counting(), EmbeddingCache(tmp_path / "cache.sqlite"))
    memory.vaults.init("handbook", "semantic", path=corpus)
    first = memory.vaults.index("handbook")
    embedded = Counting.texts
    assert first.embedded > 0 and embedded > 0
    again = memory.vaults.index("handbook", full=True)
    assert again.chunks == first.chunks and Counting.texts == embedded  # every chunk's vector from the cache
    assert memory.vaults.query("handbook", "glycol cooling loop")


def test_a_link_to_a_file_of_the_vault_indexes_it_once(vaults: Vaults, tmp_path: Path) -> None:
    """Found by a researcher: "odd names/link-to-sourdough.md" pointing at "../notes/sourdough.md" made every query of
    the note answer twice, once per path."""
    folder = tmp_path / "research"
    (folder / "notes").mkdir(parents=True)
    (folder / "odd names").mkdir()
    (folder / "notes" / "sourdough.md").write_text("# Sourdough\nthe bramblewhisk starter wants rye flour\n")
    (folder / "odd names" / "link-to-sourdough.md").symlink_to(folder / "notes" / "sourdough.md")
    vaults.init("research", "semantic", path=folder)
    report = vaults.index("research")
    assert not report.errors and report.indexed == ["notes/sourdough.md"]
    hits = vaults.query("research", "bramblewhisk starter").hits
    assert [h.document for h in hits] == ["notes/sourdough.md"]


def test_a_file_name_that_is_not_utf8_is_indexed_under_its_escaped_name(vaults: Vaults, tmp_path: Path) -> None:
    """Found by a paralegal: `Procura\\xe7\\xe3o.md` (a Windows zip's cp1252 name) crashed `index` in chunk_id
    ("surrogates not allowed") and nothing after it was indexed."""
    folder = tmp_path / "escritorio"
    folder.mkdir()
    name = os.fsdecode(b"Procura\xe7\xe3o.md")  # as the OS gives it: the two bytes as surrogates
    (folder / name).write_text("# P\n\nPoderes forenses.\n")
    (folder / "zz_contrato.md").write_text("# C\n\nRenda mensal 900 euros.\n")
    vaults.init("escritorio", "semantic", path=folder)
    report = vaults.index("escritorio")
    assert report.errors == [] and report.indexed == ["Procura\\xe7\\xe3o.md", "zz_contrato.md"]
    assert vaults.query("escritorio", "renda mensal").hits[0].document == "zz_contrato.md"
    assert vaults.query("escritorio", "poderes forenses").hits[0].document == "Procura\\xe7\\xe3o.md"
    status = vaults.status("escritorio")
    assert (status["new"], status["changed"], status["problems"], status["unchanged"]) == ([], [], [], 2)
    assert vaults.index("escritorio").indexed == []  # known by that name the next time too
    (folder / name).unlink()
    assert vaults.index("escritorio").removed == ["Procura\\xe7\\xe3o.md"]


def test_a_name_that_reads_as_an_escape_is_another_file_and_a_write_never_lands_elsewhere(vaults: Vaults, tmp_path: Path) -> None:
    """Found in review: `Procura\\xe7\\xe3o.md` spelled with real backslashes was given the key of the file whose two
    bytes are not UTF-8, so one shadowed the other; and a write to that key (as a listing shows it, with overwrite) went
    to `Procura/xe7/xe3o.md`, a new nested file, since a write reads a backslash as a folder's."""
    folder = tmp_path / "escritorio"
    folder.mkdir()
    (folder / os.fsdecode(b"Procura\xe7\xe3o.md")).write_text("# P\n\nPoderes forenses.\n")
    (folder / "Procura\\xe7\\xe3o.md").write_text("# L\n\nUma copia com barras invertidas.\n")
    vaults.init("escritorio", "semantic", path=folder)
    indexed = vaults.index("escritorio").indexed
    assert len(indexed) == len(set(indexed)) == 2, indexed
    assert "Procura\\xe7\\xe3o.md" in indexed  # (the bytes' escape, as before)
    for key in indexed:
        with pytest.raises(InvalidInput, match="not a path a write"):
            vaults.write_document("escritorio", key, "# Novo\n", overwrite=True)
    assert len(list(folder.iterdir())) == 2 and all(p.is_file() for p in folder.iterdir())  # (no Procura/ folder)


def test_the_cli_shows_a_spoofing_or_multi_line_file_name_as_the_panel_does(home: Path, store_url: str, tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str],
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a paralegal: `relatorio\\u202efdp.exe.md` printed raw in `docs`, `query` and `search` (it reads as
    "relatorioexe.pdf.md"), and a name with a newline split the tab-separated `docs` listing; the panel shows ⟦U+202E⟧."""
    from palimpsest.cli import main

    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "hash")
    folder = tmp_path / "entregas"
    folder.mkdir()
    (folder / "relatorio\u202efdp.exe.md").write_text("# Relatorio\n\nO relatorio trimestral da gaivota.\n")
    (folder / "line\nbreak.md").write_text("# Quebra\n\nA gaivota quebrada.\n")
    base = ["--home", str(home), "--store", store_url]
    assert main([*base, "vault", "init", "entregas", "--path", str(folder)]) == 0
    assert main([*base, "vault", "attach", "entregas", "--agent", "paralegal"]) == 0
    assert main([*base, "index", "entregas"]) == 0
    capsys.readouterr()
    for argv in (["docs", "entregas"], ["query", "entregas", "gaivota"], ["search", "gaivota", "--agent", "paralegal"]):
        assert main([*base, *argv]) == 0
        out = capsys.readouterr().out
        assert "\u202e" not in out and "relatorio⟦U+202E⟧fdp.exe.md" in out, argv
        assert "line\nbreak" not in out, argv
    main([*base, "docs", "entregas"])
    assert [len(line.split("\t")) for line in capsys.readouterr().out.splitlines()] == [4, 4]
    # the status listing names files changed or new since the index (after a full one it lists none): one of each
    (folder / "relatorio\u202efdp.exe.md").write_text("# Relatorio\n\nO relatorio anual da gaivota.\n")
    (folder / "novo\u202egpj.exe.md").write_text("# Novo\n\nA gaivota nova.\n")
    (folder / "nova\nlinha.md").write_text("# Nova\n\nOutra gaivota.\n")
    assert main([*base, "docs", "entregas", "--status"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "\u202e" not in "\n".join(lines), lines
    assert {"changed  relatorio⟦U+202E⟧fdp.exe.md", "new      novo⟦U+202E⟧gpj.exe.md"} <= set(lines), lines
    assert [line.split()[0] for line in lines] == ["changed", "new", "new", "1"], lines  # (a name's newline splits no line)


def test_a_document_without_a_title_of_its_own_is_titled_by_its_file_name(vaults: Vaults, tmp_path: Path) -> None:
    """Found by a paralegal: Contrato_Arrendamento_Av_Liberdade.pdf, with no title in its metadata, listed an empty title
    in `palimpsest docs`, while a .txt gets its file name."""
    import docx

    folder = tmp_path / "arrendamentos"
    folder.mkdir()
    (folder / "Contrato_Arrendamento_Av_Liberdade.pdf").write_bytes(make_pdf(["Renda mensal de 900 euros."]))
    plain = io.BytesIO()
    untitled = docx.Document()
    untitled.add_paragraph("Carta sem titulo.")
    untitled.save(plain)
    (folder / "Carta_Compromisso.docx").write_bytes(plain.getvalue())
    (folder / "notas.txt").write_text("Notas do processo.\n")
    vaults.init("arrendamentos", "semantic", path=folder)
    vaults.index("arrendamentos")
    assert {d["path"]: d["title"] for d in vaults.docs("arrendamentos")} == {
        "Contrato_Arrendamento_Av_Liberdade.pdf": "Contrato_Arrendamento_Av_Liberdade", "Carta_Compromisso.docx": "Carta_Compromisso",
        "notas.txt": "notas"}
