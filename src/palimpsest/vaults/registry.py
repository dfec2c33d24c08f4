"""The vault registry and the `Vaults` facade: one list of every vault a user sees.

A vault is a named, typed collection: `semantic` (documents, `vaults.documents`),
`skill` (procedures, `vaults.skills`) or `episodic` (facts; registered through
`memory.facts.init_vault` and listed here with the others). A document or skill vault
lives in a folder: a chosen one (`path`, a *local* vault, e.g. in a project) or
`<home>/vaults/<name>` (*global*). It is `public` (every agent of this memory reads it)
or `restricted` (only the agents it names; invisible to every other agent — the store's
queries filter on it). Vaults are attached to agents and sessions: search and recall of
a session read the vaults attached to it or to its agent, and only those the agent may read.

Every registry change and every document or skill written through the API is journaled
first, as a decision event in the system journal (`<home>/system/sessions/vaults/`),
then applied to the store with its journal key, so replay is idempotent. A store that
has no vault while the journal has some was lost or replaced: opening restores the
registry, rewrites API-written files that are missing, and indexes the folders again
(chunks and vectors are recomputed, not journaled).
"""

from __future__ import annotations

import logging
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import Conflict, InvalidInput, NotFound
from ..kernel import Kernel
from ..records import check_session_id, check_text, iso, utcnow
from ..store.documents_base import OWNER, Reader, VaultChange, VaultRow
from .documents import Documents
from .skills import Skills

List = list  # the classes below have a method named `list`

if TYPE_CHECKING:
    from ..facts import Facts

log = logging.getLogger(__name__)
TYPES = ("semantic", "skill", "episodic")
ACCESS = ("public", "restricted")
SYSTEM_SESSION = "vaults"


def new_key(prefix: str = "vop") -> str:
    return f"{prefix}_{time.time_ns():019d}{secrets.token_hex(3)}"


def check_name(name: Any) -> str:
    from ..facts import VAULT_RE

    if not isinstance(name, str) or not VAULT_RE.fullmatch(name):
        raise InvalidInput("vault names are 1–64 letters, digits and ._- (not starting with punctuation)")
    return name


def check_agents(agents: Any) -> list[str]:
    if agents is None:
        return []
    if isinstance(agents, str) or not isinstance(agents, (list, tuple)):
        raise InvalidInput("readers must be a list of agent names")
    out = []
    for a in agents:
        a = check_text(a, "reader", allow_none=False)
        if not a or not a.strip() or len(a) > 200:
            raise InvalidInput("each reader is a non-empty agent name of at most 200 characters")
        if a.strip() not in out:
            out.append(a.strip())
    return sorted(out)


class Vaults:
    """Every vault of one memory. Reach it as `memory.vaults`."""

    def __init__(self, kernel: Kernel, facts: Facts) -> None:
        self.kernel, self.facts = kernel, facts
        self.store, self.settings = kernel.store, kernel.settings
        self.home = Path(kernel.home)
        self.decisions = kernel.decisions
        self._written: dict[tuple[Any, Any], set[str]] = {}  # (vault, path) → contents the API wrote there (`wrote`)
        self.restored: list[Any] = []  # the index reports of vaults a replay restored (`_rewrite_and_index`)
        self.documents = Documents(self)
        self.skills = Skills(self)
        self.decisions.restore_if_lost(SYSTEM_SESSION, lambda: not (self.store.vault_rows(OWNER) or self.store.vault_ops_applied()),
                                       self._restore)

    # -- registry ------------------------------------------------------------
    def init(self, name: str, type: str = "semantic", path: str | Path | None = None, *, access: str = "public",
             readers: List[str] | None = None, description: str | None = None) -> VaultRow:
        """Register a vault (idempotent for the same name, type and folder). A document or
        skill vault's folder is `path` (local) or `<home>/vaults/<name>` (global); it is
        created if missing."""
        check_name(name)
        if type not in TYPES:
            raise InvalidInput(f"vault type is one of {', '.join(TYPES)}; got {type!r}")
        if access not in ACCESS:
            raise InvalidInput(f"access is public or restricted; got {access!r}")
        folder = None
        if path is not None:
            if type == "episodic":
                raise InvalidInput("an episodic (fact) vault lives in the store; it takes no --path")
            folder = str(Path(path).expanduser().resolve())
        existing = self.store.vault_rows(OWNER, [name])
        if existing:
            row = existing[0]
            if row.type != type:
                raise Conflict(f"vault {name!r} exists with type {row.type!r}")
            if folder is not None and row.path != folder:
                raise Conflict(f"vault {name!r} exists in {self.folder(row)}")
            return row
        if type != "episodic" and name in {v.name for v in self.facts.vaults()}:
            raise Conflict(f"a fact vault named {name!r} exists")
        if type != "episodic":
            self._one_folder_each(name, Path(folder) if folder else self.folder(VaultRow(name, type, None, access, [], "", "")).resolve())
        if type == "episodic":
            self.facts.init_vault(name, "episodic", description)
        row = VaultRow(name, type, folder, access, check_agents(readers), check_text(description, "description"), iso(utcnow()))
        if type != "episodic":
            self.folder(row).mkdir(parents=True, exist_ok=True)
        self._commit("init", VaultChange(vault=row), name)
        return self.get(name)

    def _one_folder_each(self, name: str, folder: Path) -> None:
        """Refuse a folder another vault reads, or one inside or around it: two vaults of one
        folder indexed every file twice, and each hit came back twice to a reader of both."""
        for other in self.store.vault_rows(OWNER):
            if other.type == "episodic" or other.name == name:
                continue
            theirs = self.folder(other).resolve()
            if folder == theirs or theirs in folder.parents or folder in theirs.parents:
                raise Conflict(f"vault {other.name!r} reads {theirs} already; give vault {name!r} a folder of its own")

    def get(self, name: str, reader: Reader = OWNER) -> VaultRow:
        """The vault, if `reader` may see it (a restricted vault is NotFound to other agents)."""
        rows = self.store.vault_rows(reader, [check_name(name)])
        if not rows:
            if name in {v.name for v in self.facts.vaults()}:  # (a fact vault is everyone's: `vault_list` shows it)
                return self._fact_vault_row(name)
            raise NotFound(f"no vault named {name!r}; create it with `palimpsest vault init {name} --type semantic` (or skill)")
        return rows[0]

    def _fact_vault_row(self, name: str) -> VaultRow:
        v = next(v for v in self.facts.vaults() if v.name == name)
        return VaultRow(v.name, "episodic", None, "public", [], v.description, v.created_at)

    def of_type(self, name: str, types: tuple[str, ...], reader: Reader = OWNER) -> VaultRow:
        try:
            row = self.get(name, reader)
        except NotFound:  # the hint names the type asked for ("--type semantic" was said to one writing a skill)
            raise NotFound(f"no vault named {name!r}; create it with `palimpsest vault init {name} --type {types[0]}`") from None
        if row.type not in types:
            article = "an" if row.type[:1] in "aeiou" else "a"
            raise InvalidInput(f"vault {name!r} is {article} {row.type} vault; this needs a {' or '.join(types)} vault")
        return row

    def folder(self, row: VaultRow) -> Path:
        return Path(row.path) if row.path else self.home / "vaults" / check_name(row.name)

    def writable_folder(self, row: VaultRow) -> Path:
        """The folder a write goes into. A folder the vault was made on must be there: moved or
        unmounted, a write had made it anew with its one file, and the next `index` then dropped
        every other document (as `index` refuses, so does a write). A vault under the home is
        made by its first write."""
        folder = self.folder(row)
        if row.path and not folder.is_dir():
            raise Conflict(f"the vault folder {folder} does not exist (moved or unmounted?): nothing was written; "
                           f"put the folder back, or make the vault again on its new folder")
        return folder

    def rows(self, reader: Reader = OWNER) -> List[VaultRow]:
        """Every vault the reader may see, fact vaults included (by name)."""
        rows = {r.name: r for r in self.store.vault_rows(reader)}
        for v in self.facts.vaults():
            rows.setdefault(v.name, VaultRow(v.name, "episodic", None, "public", [], v.description, v.created_at))
        return [rows[k] for k in sorted(rows)]

    def list(self, reader: Reader = OWNER) -> List[dict[str, Any]]:
        """Each vault with its type, folder, scope, access, attachments, size and state."""
        return [self.describe(row) for row in self.rows(reader)]

    def describe(self, row: VaultRow) -> dict[str, Any]:
        d = row.to_dict()
        if row.type == "episodic":
            n = len(self.facts.query(row.name))
            d.update(path=None, scope="store", size={"facts": n}, state="ok")
            return d
        folder = self.folder(row)
        d.update(path=str(folder), scope="local" if row.path else "global", size=self.store.document_stats(row.name))
        d["state"] = self._state(row, folder)
        return d

    def _state(self, row: VaultRow, folder: Path) -> str:
        if not folder.is_dir():
            return "folder missing"
        st = self.skills.status(row) if row.type == "skill" else self.documents.status(row)
        stale = len(st["changed"]) + len(st["deleted"]) + len(st["new"])
        if stale:
            return f"stale ({len(st['changed'])} changed, {len(st['deleted'])} deleted, {len(st['new'])} new)"
        if st["failed"]:
            return f"indexed ({len(st['failed'])} failed)"
        return "indexed" if st["unchanged"] else "empty"

    def set_access(self, name: str, access: str, readers: List[str] | None = None) -> VaultRow:
        """Make a vault public, or restricted to the agents named."""
        row = self.get(name)
        if access not in ACCESS:
            raise InvalidInput(f"access is public or restricted; got {access!r}")
        if row.name not in {r.name for r in self.store.vault_rows(OWNER, [name])}:
            raise InvalidInput(f"{name!r} is a fact vault made through `facts`; register it with `vault init {name} --type episodic` first")
        row.access, row.readers = access, check_agents(readers) if readers is not None else row.readers
        row.attachments = []
        self._commit("access", VaultChange(vault=row), name)
        return self.get(name)

    def attach(self, name: str, *, agent: str | None = None, session: str | None = None, attach: bool = True) -> VaultRow:
        """Attach the vault to an agent or a session (or detach it, `attach=False`)."""
        self.get(name)
        if (agent is None) == (session is None):
            raise InvalidInput("attach to exactly one of an agent or a session")
        if not self.store.vault_rows(OWNER, [name]):
            self.init(name, "episodic")  # a fact vault made through `facts`: register it first
        kind, target = ("agent", check_agents([agent])[0]) if agent is not None else ("session", check_session_id(session))
        change = VaultChange(attachment={"vault": name, "kind": kind, "target": target, "at": iso(utcnow())}, attach=attach)
        self._commit("attach" if attach else "detach", change, name)
        return self.get(name)

    def detach(self, name: str, *, agent: str | None = None, session: str | None = None) -> VaultRow:
        return self.attach(name, agent=agent, session=session, attach=False)

    def attached(self, session: str | None = None, agent: str | None = None) -> tuple[Reader, List[tuple[str, str]]]:
        """Who reads for a session (its agent, unless `agent` is given) and what it is attached to."""
        if agent is None and session is not None:
            s = self.store.get_session(session)
            agent = s.agent if s is not None else None
        targets = ([("session", session)] if session else []) + ([("agent", agent)] if agent else [])
        return Reader(agent=agent), targets

    # -- journal -------------------------------------------------------------
    def _commit(self, op: str, change: VaultChange, subject: str) -> None:
        key = new_key()
        change.op_key = key
        self.record(op, subject, {"change": change.to_dict()}, key)
        self.store.apply_vault_change(change)

    def record(self, op: str, subject: str, meta: dict[str, Any], key: str | None = None, content: str = "") -> str:
        """Journal one decision of the vaults domain (fsynced before anything else changes)."""
        return self.decisions.record(SYSTEM_SESSION, op, subject=subject, key=key or new_key(), content=content or None, **meta)

    def wrote(self, vault: str, rel: str, sha: str) -> bool:
        """Whether the API wrote content `sha` at `rel` in `vault` (it is in the journal). Read
        from the journal once, then kept; an unknown one reads it again (another process's write):
        a bulk load had re-read the whole journal, every document's content, on each write."""
        if sha in self._written.get((vault, rel), ()):
            return True
        self._written = {}
        for d in self.decisions.taken(SYSTEM_SESSION, changes_only=False):
            if d.op == "write_document" and d.meta.get("sha256"):
                self._written.setdefault((d.meta.get("vault"), d.meta.get("path")), set()).add(d.meta["sha256"])
        return sha in self._written.get((vault, rel), ())

    def note_written(self, vault: str, rel: str, sha: str) -> None:
        """A write this process journaled (`wrote` knows it without reading the journal again)."""
        if self._written:
            self._written.setdefault((vault, rel), set()).add(sha)

    def chunk(self, chunk_id: str, reader: Reader = OWNER) -> dict[str, Any]:
        """One document chunk by the id a recall block or a search shows (`chk_…`), if `reader`
        may read its vault: where it is (vault, document, heading, pages) and its text."""
        rows = self.store.get_chunks([chunk_id]) if isinstance(chunk_id, str) else []
        if not rows:
            raise NotFound(f"no document chunk with id {str(chunk_id)[:80]!r}")
        r = rows[0]
        try:
            self.get(r.vault, reader)
        except NotFound:
            raise NotFound(f"no document chunk with id {chunk_id[:80]!r}") from None  # (a vault it may not read is none)
        return {"id": r.id, "kind": "document", "vault": r.vault, "document": r.path, "title": r.title,
                "heading_path": r.heading_path, "pages": list(r.metadata.get("pages", [])), "content": r.text,
                "indexed_at": r.indexed_at}

    def replay(self) -> int:
        """Apply journaled registry changes the store has not applied yet (idempotent)."""
        return self.decisions.replay(SYSTEM_SESSION, self.store.vault_ops_applied(), self._apply_replayed)

    def _apply_replayed(self, d: Any) -> int:
        change = VaultChange.from_dict(d.change, d.key)
        if change.vault is not None:
            try:  # a journal line is an export's too: a name "../../x" or "/abs" had made a folder outside the home
                check_name(change.vault.name)
            except InvalidInput as exc:
                raise Conflict(f"vault {str(change.vault.name)[:80]!r} not restored: {exc}") from None
        return self.store.apply_vault_change(change)

    def catch_up(self) -> int:
        """What `replay` applies, made whole: an export imported into a home that has vaults of its own replayed none of
        the export's (its vaults and their documents were in the journal, and nowhere else). The documents written
        through the API are written again where missing, and the vaults the replay made are indexed."""
        before = {row.name for row in self.store.vault_rows(OWNER)}
        n = self.replay()
        if n:  # (a folder the export names is another machine's: such a vault is listed, and indexed when the user says)
            self._rewrite_and_index(lambda row: row.name not in before and not row.path)
        return n

    def _restore(self) -> int:
        """A registry lost with its store: replay it, rewrite documents written through the
        API, and index every document and skill vault again."""
        n = self.replay()
        self._rewrite_and_index(lambda row: True)
        return n

    def _rewrite_and_index(self, which: Any) -> None:
        """(Each vault's index report is kept in `restored`: an import that re-indexed three vaults for 17 minutes had said
        only "38 stored", not a word of the vaults nor of their 7 failed files — found by a researcher.)"""
        self.documents.restore_written(self.decisions.taken(SYSTEM_SESSION, changes_only=False))
        for row in self.store.vault_rows(OWNER, types=["semantic", "skill"]):
            if which(row):
                self.restored.append(self.index(row.name))

    # -- documents and skills (CLI names) -----------------------------------
    def index(self, name: str, *, full: bool = False, reader: Reader = OWNER, progress: Any = None) -> Any:
        """Bring a vault's index in line with its folder (`full`: re-read every file)."""
        row = self.of_type(name, ("semantic", "skill"), reader)
        if row.type == "skill":
            return self.skills.index(row, full=full)
        return self.documents.index(row, full=full, progress=progress)

    def reindex(self, name: str, *, stale: bool = False, reader: Reader = OWNER, progress: Any = None) -> Any:
        """`stale=True`: touch only what changed (by content hash); else re-read everything."""
        return self.index(name, full=not stale, reader=reader, progress=progress)

    def status(self, name: str, reader: Reader = OWNER) -> dict[str, Any]:
        row = self.of_type(name, ("semantic", "skill"), reader)
        return self.skills.status(row) if row.type == "skill" else self.documents.status(row)

    def docs(self, name: str, reader: Reader = OWNER) -> List[dict[str, Any]]:
        return self.documents.list(self.of_type(name, ("semantic",), reader))

    def query(self, name: str, question: str, *, limit: int = 5, reader: Reader = OWNER) -> Any:
        return self.documents.query(self.of_type(name, ("semantic",), reader), question, limit=limit, reader=reader)

    def write_document(self, name: str, path: str, content: str | bytes, *, metadata: dict[str, Any] | None = None,
                       overwrite: bool = False, reader: Reader = OWNER) -> dict[str, Any]:
        return self.documents.write(self.of_type(name, ("semantic",), reader), path, content, metadata, overwrite)

    def search(self, query: str, **options: Any) -> Any:
        """Chunks of the vaults attached to a session or agent (see `Documents.search`)."""
        return self.documents.search(query, **options)

    def skill_list(self, name: str, reader: Reader = OWNER) -> List[Any]:
        return self.skills.list(self.of_type(name, ("skill",), reader))

    def skill(self, name: str, skill: str, reader: Reader = OWNER) -> Any:
        return self.skills.get(self.of_type(name, ("skill",), reader), skill)

    def write_skill(self, name: str, skill: str, description: str, body: str, *, triggers: List[str] | None = None,
                    metadata: dict[str, Any] | None = None, reader: Reader = OWNER) -> Any:
        return self.skills.write(self.of_type(name, ("skill",), reader), skill, description, body, triggers, metadata)
