"""The vaults part of the Store contract: the vault registry, document chunks and skills.

Backends keep three things for `palimpsest.vaults`: the registry (`vaults`, their
readers and attachments, each change applied once per journal key, so replaying the
system journal is idempotent), the chunks of each indexed document (with an optional
vector of one model each, and full text over heading path and text), and the skills
parsed from skill vaults. They know nothing of files, extraction or chunking.

Access is enforced here, in the queries: every read of chunks, skills or vault rows takes
a `Reader` — the owner (the person at the CLI or the library, who sees every vault) or an
agent (who sees public vaults and the restricted vaults naming it). A restricted vault is
invisible to every other agent: it is not listed, searched or read, exactly as if it
did not exist.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Reader:
    """Who reads: `owner=True` sees every vault; an agent (or nobody, `agent=None`) sees
    public vaults, and restricted vaults only when they name it."""

    agent: str | None = None
    owner: bool = False


OWNER = Reader(owner=True)


@dataclass
class VaultRow:
    name: str
    type: str  # semantic | skill | episodic
    path: str | None  # a local vault's folder; None: global, under <home>/vaults/<name>
    access: str  # public | restricted
    readers: list[str]
    description: str | None
    created_at: str
    attachments: list[dict[str, str]] = field(default_factory=list)  # {kind: agent|session, target, at}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class VaultChange:
    """One registry operation: upsert a vault row (type never changes) and/or attach
    (`attach=True`) or detach a vault from an agent or a session."""

    op_key: str | None = None
    vault: VaultRow | None = None
    attachment: dict[str, str] | None = None  # {vault, kind, target, at}
    attach: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"vault": self.vault.to_dict() if self.vault else None, "attachment": self.attachment, "attach": self.attach}

    @classmethod
    def from_dict(cls, d: dict[str, Any], op_key: str | None = None) -> VaultChange:
        v = d.get("vault")
        return cls(op_key, VaultRow(**v) if v else None, d.get("attachment"), bool(d.get("attach", True)))


@dataclass
class DocumentRow:
    vault: str
    path: str  # relative to the vault folder, with `/`
    sha256: str
    mtime: float
    size: int
    indexed_at: str
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # extraction failed: kept so `--stale` does not retry an unchanged file
    chunks: int = 0
    pages: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ChunkRow:
    id: str
    vault: str
    path: str
    ordinal: int
    heading_path: str
    text: str
    token_count: int
    metadata: dict[str, Any] = field(default_factory=dict)
    vector: np.ndarray | None = None  # written with the chunk when known (not read back)
    title: str = ""  # read back: the document's
    doc_metadata: dict[str, Any] = field(default_factory=dict)  # read back: the writer's metadata
    indexed_at: str = ""  # read back
    keywords: str = ""  # written: what the keyword index holds beside the text (`segment.keyword_words`)


@dataclass
class SkillRow:
    vault: str
    name: str
    description: str
    triggers: list[str]
    metadata: dict[str, Any]
    path: str
    body: str
    sha256: str
    mtime: float
    size: int
    indexed_at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ChunkQuery:
    """Chunks a reader may read, narrowed to named vaults and/or to the vaults attached
    to a session or an agent (`attached_to`: [("session", id), ("agent", name)])."""

    reader: Reader
    vaults: list[str] | None = None
    attached_to: list[tuple[str, str]] | None = None
    model: str | None = None


class DocumentStoreContract(ABC):
    """What `palimpsest.vaults` asks of an index database (mixed into every backend)."""

    # -- registry ------------------------------------------------------------
    @abstractmethod
    def apply_vault_change(self, change: VaultChange) -> bool:
        """Apply one registry operation in one transaction; False (nothing written) when
        its `op_key` was applied before. A vault's type never changes (`Conflict`)."""

    @abstractmethod
    def vault_rows(self, reader: Reader, names: list[str] | None = None, types: list[str] | None = None) -> list[VaultRow]:
        """Vaults the reader may see (with readers and attachments), by name."""

    @abstractmethod
    def vault_ops_applied(self) -> set[str]: ...

    # -- documents -----------------------------------------------------------
    @abstractmethod
    def replace_document(self, doc: DocumentRow, chunks: list[ChunkRow], model: str | None) -> None:
        """Insert or replace a document and all its chunks (vectors of `model` where a
        chunk carries one) in one transaction."""

    @abstractmethod
    def touch_document(self, vault: str, path: str, mtime: float, size: int) -> None:
        """The file was touched but its content hash is unchanged: record the new stat."""

    @abstractmethod
    def remove_documents(self, vault: str, paths: list[str]) -> int: ...

    @abstractmethod
    def document_rows(self, vault: str) -> list[DocumentRow]:
        """Every indexed document of a vault (no chunks), by path."""

    @abstractmethod
    def get_chunks(self, ids: list[str]) -> list[ChunkRow]:
        """Chunks with their document's title, metadata and indexed_at, in the order asked."""

    @abstractmethod
    def chunk_keyword_search(self, terms: list[str], q: ChunkQuery, limit: int, match_all: bool) -> list[tuple[str, float]]:
        """(chunk id, BM25-like score, higher better) over heading path and text."""

    @abstractmethod
    def chunk_vector_search(self, model: str, query: np.ndarray, q: ChunkQuery, limit: int) -> list[tuple[str, float]]:
        """(chunk id, cosine) of the nearest chunk vectors of `model` among readable chunks."""

    @abstractmethod
    def chunk_vectors(self, model: str, ids: list[str]) -> dict[str, np.ndarray]: ...

    @abstractmethod
    def put_chunk_vectors(self, model: str, rows: list[tuple[str, np.ndarray]]) -> None:
        """One unit vector per chunk (replacing a vector of any other model)."""

    @abstractmethod
    def chunks_without_vectors(self, model: str, vault: str, limit: int) -> list[ChunkRow]: ...

    # -- skills --------------------------------------------------------------
    @abstractmethod
    def replace_skills(self, vault: str, skills: list[SkillRow], remove_paths: list[str]) -> None:
        """Upsert skills (by vault and name; a skill's file may move) and drop the skills
        of `remove_paths`, in one transaction."""

    @abstractmethod
    def skill_rows(self, reader: Reader, vaults: list[str] | None = None, names: list[str] | None = None,
                   attached_to: list[tuple[str, str]] | None = None, with_triggers: bool = False) -> list[SkillRow]:
        """Skills of the vaults the reader may see, ordered by vault and name."""

    @abstractmethod
    def document_stats(self, vault: str) -> dict[str, int]:
        """{documents, chunks, embedded, bytes, skills, errors} of one vault."""
