"""Skill vaults: procedures as Markdown files with YAML front matter.

    ---
    name: release
    description: Cut a release of the service
    triggers: [release, "cut a release", ship it]
    ---
    1. …

`name` is required (unique in its vault), `description` expected; every other field is
kept as metadata, `triggers` (a string or a list of strings) among them. Nothing is
embedded: a skill is chosen by what it is for. The folder is the truth; `index` parses
new and changed files (by content hash) into the store, where listing and recall read
them, and reports each file it cannot take (not YAML, no name, a duplicate name, …).

Recall: a skill of a vault attached to the session or its agent (and readable by that
agent) joins the turn's memory when one of its triggers occurs in the turn's text —
case-insensitively, on word boundaries (`ship it` matches "can you ship it today").
"""

from __future__ import annotations

import json
import logging
import re
import time
import unicodedata
from typing import Any

import yaml

from ..errors import InvalidInput, NotFound
from ..records import check_text, iso, utcnow
from ..store.documents_base import OWNER, SkillRow, VaultRow
from .extract import ExtractError, decode_text, split_front_matter
from .files import FileInfo, resolve_inside, safe_relative, sha256, walk, write_inside

List = list  # the classes below have a method named `list`


log = logging.getLogger(__name__)
SKILL_EXTENSIONS = (".md",)
MAX_SKILL_BYTES = 1024 * 1024
NAME_MAX = 128


def parse_skill(vault: str, path: str, data: bytes, mtime: float = 0.0) -> SkillRow:
    """A skill file as a row, or `ExtractError` saying what is wrong with it."""
    if len(data) > MAX_SKILL_BYTES:
        raise ExtractError(f"a skill file holds at most {MAX_SKILL_BYTES // 1024} KB")
    text, _ = decode_text(data)
    meta, body = split_front_matter(text, strict=True)
    name = meta.pop("name", None)
    if not isinstance(name, str) or not name.strip():
        raise ExtractError("front matter lacks a name (name: …)")
    if len(name.strip()) > NAME_MAX:
        raise ExtractError(f"a skill name holds at most {NAME_MAX} characters")
    description = meta.pop("description", "") or ""
    if not isinstance(description, str):
        raise ExtractError("description must be text")
    triggers = meta.get("triggers", [])
    if isinstance(triggers, str):
        triggers = [triggers]
    if not isinstance(triggers, list) or not all(isinstance(t, (str, int, float)) for t in triggers):
        raise ExtractError("triggers must be a string or a list of strings")
    triggers = [str(t).strip() for t in triggers if str(t).strip()]
    meta = json.loads(json.dumps({k: v for k, v in meta.items() if k != "triggers"}, default=str))
    return SkillRow(vault, name.strip(), description.strip(), triggers, meta, path, body.strip("\n"), sha256(data), mtime,
                    len(data), iso(utcnow()))


def _norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return " " + " ".join(re.sub(r"[^\w]+", " ", text).split()) + " "


def triggered(skill: SkillRow, turn: str) -> bool:
    """Does one of the skill's triggers occur in the turn (case-insensitive, whole words)?"""
    norm = _norm(turn)
    return any((t := _norm(trigger)).strip() and t in norm for trigger in skill.triggers)


class Skills:
    def __init__(self, vaults: Any) -> None:  # `registry.Vaults`, which builds this part
        self.vaults = vaults
        self.store = vaults.store

    def status(self, row: VaultRow) -> dict[str, Any]:
        files, problems = walk(self.vaults.folder(row), SKILL_EXTENSIONS)
        known = {s.path: s for s in self.store.skill_rows(OWNER, [row.name])}
        changed, new, failed, unchanged = [], [], [], 0
        for path, info in files.items():
            s = known.get(path)
            if s is None:  # never indexed, or failing (a skill that cannot be read is not stored): read to tell which
                from .documents import IndexReport

                trouble = IndexReport(row.name)
                if self._parse(row, info, trouble) is None:
                    failed.append({"path": path, "error": trouble.errors[0]["error"] if trouble.errors else "cannot be read"})
                else:
                    new.append(path)
            elif (s.mtime, s.size) != (info.mtime, info.size) and _digest(info) != s.sha256:
                changed.append(path)
            else:
                unchanged += 1
        deleted = sorted(p for p in known if p not in files)
        # (a file that fails was "new" for good: the vault stayed "stale" after every index — found by a researcher)
        return {"vault": row.name, "changed": sorted(changed), "deleted": deleted, "new": sorted(new), "unchanged": unchanged,
                "failed": sorted(failed, key=lambda f: f["path"]), "problems": problems}

    def index(self, row: VaultRow, *, full: bool = False, only: List[str] | None = None) -> Any:
        from .documents import IndexReport

        started = time.perf_counter()
        report = IndexReport(row.name)
        files, problems = walk(self.vaults.folder(row), SKILL_EXTENSIONS)
        report.errors += problems
        known = {s.path: s for s in self.store.skill_rows(OWNER, [row.name])}
        names = {s.name: s.path for s in known.values() if s.path in files}
        parsed: List[SkillRow] = []
        for path, info in sorted(files.items()):
            if only is not None and path not in only:
                continue
            old = known.get(path)
            if not full and old is not None and (old.mtime, old.size) == (info.mtime, info.size):
                report.unchanged += 1
                continue
            skill = self._parse(row, info, report)
            if skill is None:
                continue
            if names.get(skill.name, path) != path and names[skill.name] in files:
                report.errors.append({"path": path, "error": f"duplicate skill name {skill.name!r} (also {names[skill.name]})"})
                continue
            names[skill.name] = path
            if old is not None and old.sha256 == skill.sha256 and not full:
                report.unchanged += 1
            else:
                report.indexed.append(path)
            parsed.append(skill)
        gone = [p for p in known if p not in files] if only is None else []
        broken = [e["path"] for e in report.errors if e["path"] in known]
        self.store.replace_skills(row.name, parsed, gone + broken)
        report.removed = sorted(gone)
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    @staticmethod
    def _parse(row: VaultRow, info: FileInfo, report: Any) -> SkillRow | None:
        try:
            return parse_skill(row.name, info.path, info.full.read_bytes(), info.mtime)
        except FileNotFoundError:
            report.errors.append({"path": info.path, "error": "deleted while indexing"})
        except OSError as exc:
            report.errors.append({"path": info.path, "error": f"cannot read: {exc.strerror}"})
        except ExtractError as exc:
            report.errors.append({"path": info.path, "error": str(exc)})
        return None

    def list(self, row: VaultRow) -> List[SkillRow]:
        self.index(row)
        return self.store.skill_rows(OWNER, [row.name])

    def get(self, row: VaultRow, name: str) -> SkillRow:
        self.index(row)
        found = self.store.skill_rows(OWNER, [row.name], [name])
        if not found:
            raise NotFound(f"no skill named {name!r} in vault {row.name!r}")
        return found[0]

    def write(self, row: VaultRow, name: str, description: str, body: str, triggers: List[str] | None = None,
              metadata: dict[str, Any] | None = None) -> SkillRow:
        """Write (or replace) a skill file and index it at once; journaled first."""
        name = (check_text(name, "name", allow_none=False) or "").strip()
        if not name or len(name) > NAME_MAX:
            raise InvalidInput(f"a skill name is 1–{NAME_MAX} characters")
        if any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in name):  # (a NUL had written the file, then answered 500)
            raise InvalidInput("a skill name holds no control characters")
        description = check_text(description, "description") or ""
        body = check_text(body, "body") or ""
        if triggers is not None and (not isinstance(triggers, list) or not all(isinstance(t, str) for t in triggers)):
            raise InvalidInput("triggers must be a list of strings")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInput("metadata must be an object")
        front = {"name": name, "description": description, **({"triggers": triggers} if triggers else {}),
                 **{k: v for k, v in (metadata or {}).items() if k not in ("name", "description", "triggers")}}
        existing = self.store.skill_rows(OWNER, [row.name], [name])
        path = existing[0].path if existing else self._free_path(row, _slug(name))
        text = "---\n" + yaml.safe_dump(front, allow_unicode=True, sort_keys=False) + "---\n" + body.rstrip("\n") + "\n"
        parse_skill(row.name, path, text.encode("utf-8"))  # refuse what `index` would refuse, before journaling
        resolve_inside(self.vaults.writable_folder(row), path)  # refused before anything is journaled
        self.vaults.record("write_skill", f"{row.name}/{name}", {"vault": row.name, "path": path}, content=text)
        write_inside(self.vaults.folder(row), path, text.encode("utf-8"))
        report = self.index(row, only=[path])
        own = [e for e in report.errors if e.get("path") == path]  # (another file's trouble is no failure of this write)
        if own:
            raise InvalidInput(f"skill {name!r} written to {path} but not indexed: {own[0]['error']}")
        return self.store.skill_rows(OWNER, [row.name], [name])[0]

    def _free_path(self, row: VaultRow, slug: str) -> str:
        """A new skill's file: its name's slug, numbered past a file that holds another skill
        ("Deploy Prod" and "deploy/prod" are both `deploy-prod`: writing the second replaced
        the first, found by a security review)."""
        folder = self.vaults.folder(row)
        for n in range(1, 1000):
            path = safe_relative(_numbered(slug, n) + ".md", SKILL_EXTENSIONS)
            if not resolve_inside(folder, path).exists():
                return path
        raise InvalidInput(f"too many skills named like {slug!r}")

    def matching(self, session: str | None, turn: str, agent: str | None = None) -> List[SkillRow]:
        """Skills with a trigger in `turn`, from the skill vaults attached to the session or
        its agent that this agent may read."""
        if not turn.strip():
            return []
        reader, targets = self.vaults.attached(session, agent)
        if not targets:
            return []
        return [s for s in self.store.skill_rows(reader, attached_to=targets, with_triggers=True) if triggered(s, turn)]


def _digest(info: FileInfo) -> str:
    try:
        return sha256(info.full.read_bytes())
    except OSError:
        return ""


def _numbered(slug: str, n: int) -> str:
    return slug if n == 1 else f"{slug[:96]}-{n}"


def _slug(name: str) -> str:
    slug = re.sub(r"[^\w.-]+", "-", unicodedata.normalize("NFKC", name).strip().lower()).strip("-.")
    return slug[:100] or "skill"
