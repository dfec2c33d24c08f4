"""Skill vaults on both backends: Markdown with YAML front matter, listed and read,
written through the API, bad front matter reported by file, triggers matched against a
turn, and the recall hook loading a triggered skill of an attached vault."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.errors import InvalidInput, NotFound
from palimpsest.vaults import Reader, Vaults
from palimpsest.vaults.extract import ExtractError
from palimpsest.vaults.skills import parse_skill, triggered

RELEASE = """---
name: release
description: Cut a release of the service
triggers: [release, "ship it"]
owner: ops
version: 2
---
1. Tag the commit.
2. Push the tag.
"""


@pytest.fixture
def vaults(memory: Memory) -> Vaults:
    return memory.vaults


def test_parse_keeps_every_other_field_as_metadata() -> None:
    s = parse_skill("ops", "release.md", RELEASE.encode())
    assert (s.name, s.description, s.triggers) == ("release", "Cut a release of the service", ["release", "ship it"])
    assert s.metadata == {"owner": "ops", "version": 2}
    assert s.body == "1. Tag the commit.\n2. Push the tag."
    assert parse_skill("v", "a.md", b"---\nname: solo\ntriggers: deploy\n---\nbody").triggers == ["deploy"]


@pytest.mark.parametrize("text, error", [
    ("no front matter at all", "no front matter"),
    ("---\nname: [broken\n---\nbody", "not YAML"),
    ("---\ndescription: nameless\n---\nbody", "lacks a name"),
    ("---\n- just\n- a list\n---\n", "mapping"),
    ("---\nname: x\ntriggers: {a: 1}\n---\n", "triggers"),
    ("---\nname: x\n", "not closed"),
])
def test_bad_front_matter_is_explained(text: str, error: str) -> None:
    with pytest.raises(ExtractError, match=error):
        parse_skill("v", "bad.md", text.encode())


def test_triggers_match_whole_words_case_insensitively() -> None:
    s = parse_skill("ops", "release.md", RELEASE.encode())
    assert triggered(s, "Can you SHIP IT today?")
    assert triggered(s, "prepare the release notes")
    assert not triggered(s, "the releases page")  # a different word
    assert not triggered(s, "shipit")


def test_index_list_read_and_bad_files(vaults: Vaults, tmp_path: Path) -> None:
    folder = tmp_path / "skills"
    folder.mkdir()
    (folder / "release.md").write_text(RELEASE)
    (folder / "deploy.md").write_text("---\nname: deploy\ndescription: Deploy to production\n---\nRun make deploy.\n")
    (folder / "broken.md").write_text("---\nname: [oops\n---\n")
    (folder / "nameless.md").write_text("---\ndescription: who am I\n---\n")
    (folder / "copy.md").write_text("---\nname: deploy\ndescription: a second deploy\n---\n")
    (folder / "notes.txt").write_text("ignored: not a skill file")
    vaults.init("ops", "skill", path=folder)
    report = vaults.index("ops")
    errors = {e["path"]: e["error"] for e in report.errors}
    assert set(errors) == {"broken.md", "nameless.md", "deploy.md"}  # the first file in path order keeps a name
    assert "not YAML" in errors["broken.md"] and "lacks a name" in errors["nameless.md"] and "duplicate" in errors["deploy.md"]
    listed = vaults.skill_list("ops")
    assert [(s.name, s.path) for s in listed] == [("deploy", "copy.md"), ("release", "release.md")]
    assert vaults.skill("ops", "release").metadata == {"owner": "ops", "version": 2}
    with pytest.raises(NotFound):
        vaults.skill("ops", "missing")
    (folder / "release.md").unlink()
    assert "release" not in {s.name for s in vaults.skill_list("ops")}
    with pytest.raises(InvalidInput):
        vaults.query("ops", "anything")  # a skill vault is not queried like documents


def test_a_skill_name_with_a_control_character_is_refused_before_anything_is_written(vaults: Vaults) -> None:
    """Found by a security review: a NUL in the name wrote and indexed `x-y.md`, then answered 500."""
    row = vaults.init("ops", "skill")
    for name in ("x\u0000y", "a\nb", "\u001b]0;pwned\u0007"):
        with pytest.raises(InvalidInput, match="control"):
            vaults.write_skill("ops", name, "d", "b")
    assert not list(vaults.folder(row).glob("*.md"))


def test_a_skill_written_beside_a_broken_file_is_written_and_said_so(vaults: Vaults) -> None:
    """Found by a security review: a write into a skill vault holding an unrelated dangling link answered 400 ("written
    to release.md but not indexed: broken symbolic link", of the other file), though the skill was written and read."""
    row = vaults.init("ops", "skill")
    folder = vaults.folder(row)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "old-notes.md").symlink_to(folder / "nowhere" / "gone.md")
    written = vaults.write_skill("ops", "release", "How we release", "1. tag\n2. ship")
    assert written.name == "release" and vaults.skill("ops", "release").body.startswith("1. tag")


def test_written_skills_join_recall_when_triggered(vaults: Vaults, memory: Memory) -> None:
    vaults.init("ops", "skill")
    vaults.init("private", "skill", access="restricted", readers=["root"])
    s = vaults.write_skill("ops", "Release Train", "How we ship", "1. freeze\n2. tag", triggers=["ship it"], metadata={"team": "infra"})
    assert (s.path, s.metadata) == ("release-train.md", {"team": "infra"})
    vaults.write_skill("private", "reboot", "Reboot the fleet", "ask first", triggers=["ship it"])
    memory.append("s1", "user", "hello there", agent="coder")
    assert memory.recaller.skill_items("s1", "please ship it now") == []  # not attached yet
    vaults.attach("ops", agent="coder")
    vaults.attach("private", session="s1")  # attached, but coder may not read it
    found = memory.recaller.skill_items("s1", "please ship it now")
    assert [f.id for f in found] == ["skill:ops/Release Train"]
    assert memory.recaller.skill_items("s1", "nothing relevant") == []
    block = memory.recall("s1", "please ship it now").block
    assert "skill:ops/Release Train" in block and "freeze" in block and "reboot" not in block
    assert [s.name for s in vaults.skills.matching("s1", "ship it", agent="root")] == ["reboot"]
    assert vaults.write_skill("ops", "Release Train", "How we ship, v2", "1. tag").path == "release-train.md"
    # "release/train" has the same slug: a file of its own (it replaced the other, found by a security review)
    assert vaults.write_skill("ops", "release/train", "Another", "curl x | sh").path == "release-train-2.md"
    assert vaults.skill("ops", "Release Train").description == "How we ship, v2"
    assert {s.name for s in vaults.skill_list("ops", Reader())} >= {"Release Train", "release/train"}
    assert vaults.skill("ops", "Release Train").triggers == []
    with pytest.raises(NotFound):
        vaults.skill_list("private", Reader(agent="coder"))


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from palimpsest.cli import main

    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
    base = ["--home", str(tmp_path / "home")]

    def run(*argv: str) -> Any:
        code = main([*base, *argv, "--json"])
        out = capsys.readouterr().out
        assert code == 0, out
        return json.loads(out)

    run("vault", "init", "ops", "--type", "skill")
    (tmp_path / "home" / "vaults" / "ops" / "release.md").write_text(RELEASE)
    assert run("write-skill", "ops", "deploy", "--description", "Deploy", "--trigger", "deploy", "--body", "make deploy")["name"] == "deploy"
    assert [s["name"] for s in run("skills", "ops")] == ["deploy", "release"]
    assert run("skill", "ops", "release")["triggers"] == ["release", "ship it"]
    assert main([*base, "skill", "ops", "nope"]) == 3


def test_a_skill_file_that_fails_is_failed_not_new_for_good(vaults: Vaults) -> None:
    """Found by a researcher: a skill vault with a file of no front matter and one with no name said "2 failed" on
    `index`, then "stale (0 changed, 0 deleted, 2 new)" on `vault list` and the panel, for good."""
    row = vaults.init("protocols", "skill")
    folder = vaults.folder(row)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plain.md").write_text("just some notes, no front matter\n")
    (folder / "noname.md").write_text("---\ndescription: what it does\n---\nbody\n")
    vaults.write_skill("protocols", "release", "How we release", "1. tag\n2. ship")
    report = vaults.index("protocols")
    assert sorted(e["path"] for e in report.errors) == ["noname.md", "plain.md"]
    status = vaults.status("protocols")
    assert status["new"] == [] and sorted(f["path"] for f in status["failed"]) == ["noname.md", "plain.md"]
    assert [d["state"] for d in vaults.list() if d["name"] == "protocols"] == ["indexed (2 failed)"]
