"""The vaults' tools for HTTP and MCP.

A tool call reads as the agent it names (`agent`), or
as no agent: public vaults only — never as the owner, so a restricted vault stays
invisible over the wire to every agent it does not name. Indexing a folder stays a CLI /
library operation (it reads the server's disk); writing a document or a skill is a write
tool, indexed at once.
"""

from __future__ import annotations

from typing import Any

from ..memory import Memory
from ..vaults import Reader
from .registry import BOOLEAN, OBJECT, QUERY, STRING, described, schema, tool

VAULT: dict[str, Any] = {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", "description": "vault name"}
AGENT: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 200,
                         "description": "read as this agent: public vaults and the restricted vaults naming it"}
LIMIT: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": 100, "description": "most chunks to return (default 5)"}
TRIGGERS: dict[str, Any] = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 200}, "maxItems": 64,
                            "description": "words or phrases that, said in a turn, load the skill into recall"}
METADATA: dict[str, Any] = {**OBJECT, "description": "front-matter fields to store with it"}


def _reader(args: dict[str, Any]) -> Reader:
    return Reader(agent=args.get("agent"))


@tool("vault_list", "The vaults this agent may read: name, type (semantic, skill, episodic), size and state.",
      schema({"agent": AGENT}))  # fmt: skip
def vault_list(memory: Memory, args: dict[str, Any]) -> Any:
    return {"vaults": memory.vaults.list(_reader(args))}


@tool("vault_query", "The chunks of a document vault closest to a question, with document, heading path, "
      "metadata and a similarity in [0, 1] (hybrid: keywords + embeddings).",
      schema({"vault": VAULT, "query": QUERY, "limit": LIMIT, "agent": AGENT}, required=["vault", "query"]))  # fmt: skip
def vault_query(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.vaults.query(args["vault"], args["query"], limit=args.get("limit", 5), reader=_reader(args))


@tool("vault_skills", "The skills of a skill vault: name, description, triggers.",
      schema({"vault": VAULT, "agent": AGENT}, required=["vault"]))  # fmt: skip
def vault_skills(memory: Memory, args: dict[str, Any]) -> Any:
    rows = memory.vaults.skill_list(args["vault"], _reader(args))
    return {"skills": [{"name": s.name, "description": s.description, "triggers": s.triggers} for s in rows]}


@tool("vault_skill", "Read one skill (its procedure and metadata).",
      schema({"vault": VAULT, "name": described(STRING, "the skill's name"), "agent": AGENT}, required=["vault", "name"]))  # fmt: skip
def vault_skill(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.vaults.skill(args["vault"], args["name"], _reader(args))


@tool("vault_write_document", "Write a text document (.md or .txt) into a document vault; it is indexed at once. A file holding what the "
      "tool never wrote is replaced only with overwrite (its old content is kept in the vault journal).",
      schema({"vault": VAULT, "path": described(STRING, "path inside the vault, ending .md or .txt"),
              "content": described(STRING, "the document's text"), "metadata": METADATA,
              "overwrite": described(BOOLEAN, "replace a file there holding what this tool never wrote"), "agent": AGENT},
             required=["vault", "path", "content"]), write=True)  # fmt: skip
def vault_write_document(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.vaults.write_document(args["vault"], args["path"], args["content"], metadata=args.get("metadata"),
                                        overwrite=bool(args.get("overwrite", False)), reader=_reader(args))


@tool("vault_write_skill", "Write (or replace) a skill in a skill vault; a trigger word in a turn loads it into recall.",
      schema({"vault": VAULT, "name": described(STRING, "the skill's name (its file name)"),
              "description": described(STRING, "one line: what the skill is for"),
              "body": described(STRING, "the procedure, as Markdown"), "triggers": TRIGGERS, "metadata": METADATA,
              "agent": AGENT}, required=["vault", "name", "body"]), write=True)  # fmt: skip
def vault_write_skill(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.vaults.write_skill(args["vault"], args["name"], args.get("description", ""), args["body"],
                                     triggers=args.get("triggers"), metadata=args.get("metadata"), reader=_reader(args))
