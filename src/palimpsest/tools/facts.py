"""Facts as tools: read what holds (now, at a world time, as known at a system time) and
a fact's history; with writes enabled, offer a statement to the curator or change a fact
explicitly (confirm, revise, supersede, close, retract, dispute, settle a review)."""

from __future__ import annotations

from typing import Any

from ..credentials import holds_credential
from ..errors import InvalidInput
from ..facts.model import SETTLEMENTS, STATUSES
from ..memory import Memory
from .registry import FILTERS, INTEGER, LIMIT, STRING, TIME, described, schema, tool

FACT_ID: dict[str, Any] = {"type": "string", "description": "a fact id (fct_…)"}
SOURCE: dict[str, Any] = {"type": "string", "description": "where it was heard: event:evt_… (or the short id a recall "
                                                         "block shows), document:PATH or person:NAME"}
ENTITIES: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "description": "the people, projects or things it is about"}
UNIT: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}
VAULT: dict[str, Any] = {"type": "string", "description": "the fact vault (default: the default vault)"}
KIND: dict[str, Any] = {"type": "string", "description": "correction, preference, fact, decision, task, …"}
TEXT: dict[str, Any] = {"type": "string", "description": "the statement, one sentence"}


def _facts(rows: list[Any]) -> dict[str, Any]:
    return {"facts": [f.to_dict() for f in rows]}


@tool("memory_facts", "Curated facts that hold now — or held in the world at `valid_at`, or as the system knew them at "
      "`known_at` — by vault, entity, kind or source, or those heard in sessions of an agent, channel or tag; or, with `status`, "
      "the superseded, retracted, merged … facts, latest first.",
      schema({"vault": VAULT, "entity": described(STRING, "only facts about this entity"), "kind": KIND, "source": SOURCE,
              "valid_at": described(TIME, "facts as they held in the world at this time"),
              "known_at": described(TIME, "facts as the system knew them at this time"),
              "status": {"type": "string", "enum": [*STATUSES, "all"],
                         "description": "instead of what holds: the facts of this status (superseded, retracted, …) or all"},
              "limit": {**INTEGER, "minimum": 1, "maximum": 1000, "description": "most facts to return (default 100)"},
              **{k: FILTERS[k] for k in ("agent", "channel", "tag")}}))
def memory_facts(memory: Memory, args: dict[str, Any]) -> Any:
    # one user's facts apart from another's (a bot serving many users: Mem0's get_all(user_id)), as a scoped search keeps them
    return _facts(memory.finder.facts_heard_in(lambda n: memory.facts.query(
        args.get("vault"), entity=args.get("entity"), kind=args.get("kind"), source=args.get("source"), valid_at=args.get("valid_at"),
        known_at=args.get("known_at"), status=args.get("status"), limit=n), args.get("limit", 100),
        **{k: args.get(k) for k in ("agent", "channel", "tag")}))


@tool("memory_fact_history", "A fact's whole supersession chain, oldest first, with who attested what and why each version "
      "replaced the one before or ended (`why`: the curator's or a person's reason, as journaled).",
      schema({"id": FACT_ID}, required=["id"]))
def memory_fact_history(memory: Memory, args: dict[str, Any]) -> Any:
    chain = memory.facts.history(args["id"])
    why = memory.facts.reasons([f.id for f in chain])  # why each version replaced the one before, or ended
    return {"facts": [{**f.to_dict(), "why": why.get(f.id, [])} for f in chain]}


@tool("memory_fact_reviews", "Pairs the curator found related (0.7–0.9 similar) and disputes, waiting for a decision: "
      "the first `limit` (default 20) and how many wait in all.", schema({"vault": VAULT, "limit": LIMIT}))
def memory_fact_reviews(memory: Memory, args: dict[str, Any]) -> Any:
    reviews, total = memory.facts.reviews(args.get("vault"), args.get("limit", 20))  # (Fact objects went out as their repr)
    return {"reviews": reviews, "total": total}


@tool("memory_remember", "Offer a statement to the curator: it confirms a fact already known, supersedes the one it "
      "corrects, relates or disputes it, or writes a new fact.", schema({
          "text": TEXT, "vault": VAULT, "kind": KIND, "entities": ENTITIES,
          "salience": described(UNIT, "how much it matters, 0–1 (default by kind)"),
          "valid_from": described(TIME, "when it started to hold in the world (default: the time its source message names, "
                                         "else when that message was said; now without one)"),
          "source": SOURCE, "corrects": {"type": "string", "description": "the fact (id or text) this corrects"},
      }, required=["text"]), write=True, idempotent=False)
def memory_remember(memory: Memory, args: dict[str, Any]) -> Any:
    _no_credential(args.get("text"))
    return memory.facts.curator.write(args)


def _no_credential(text: Any) -> None:
    """A model's statement of a credential is no fact: facts are recalled into every session (found by an MCP user:
    memory_remember made "The staging DB password is …" a fact in another session's block). The user's own `facts
    write` stays free to keep one (a wifi password asked back)."""
    if isinstance(text, str) and holds_credential(text):
        raise InvalidInput("this looks like a credential (a key of a known shape, or a password or token with its value): "
                           "a fact is recalled into every session, so a tool does not make one; the message that said it "
                           "keeps it in its session")


@tool("memory_fact_confirm", "Hear a fact again: one more attestation, confidence and last_seen up.",
      schema({"id": FACT_ID, "source": SOURCE}, required=["id"]), write=True, idempotent=False)
def memory_fact_confirm(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.facts.confirm(args["id"], source=args.get("source"))


@tool("memory_fact_revise", "The same statement said better: new text, attestations kept.",
      schema({"id": FACT_ID, "text": described(TEXT, "the better wording"), "source": SOURCE}, required=["id", "text"]), write=True)
def memory_fact_revise(memory: Memory, args: dict[str, Any]) -> Any:
    _no_credential(args["text"])
    return memory.facts.revise(args["id"], args["text"], source=args.get("source"))


@tool("memory_fact_supersede", "A correction: the old fact ends exactly where the new one starts; both are kept, linked.",
      schema({"id": FACT_ID, "text": described(TEXT, "what holds instead"),
              "valid_from": described(TIME, "when the new one starts to hold (default: the time its source message "
                                            "names, else when that message was said; now without one)"), "source": SOURCE},
             required=["id", "text"]), write=True, idempotent=False)
def memory_fact_supersede(memory: Memory, args: dict[str, Any]) -> Any:
    _no_credential(args["text"])
    return memory.facts.supersede(args["id"], args["text"], valid_from=args.get("valid_from"), source=args.get("source"))


@tool("memory_fact_close", "The fact stopped holding (it was true until now, or until `at`).",
      schema({"id": FACT_ID, "at": described(TIME, "when it stopped holding (default now)"), "source": SOURCE}, required=["id"]), write=True)
def memory_fact_close(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.facts.close(args["id"], at=args.get("at"), source=args.get("source"))


@tool("memory_fact_retract", "The fact was never true.", schema({"id": FACT_ID, "reason": described(STRING, "why it was wrong"), "source": SOURCE}, required=["id"]),
      write=True)
def memory_fact_retract(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.facts.retract(args["id"], reason=args.get("reason"), source=args.get("source"))


@tool("memory_fact_dispute", "Two facts that cannot both hold: both stay open, flagged with each other.",
      schema({"id": FACT_ID, "other": described(FACT_ID, "the fact it cannot hold with (fct_…)")}, required=["id", "other"]), write=True)
def memory_fact_dispute(memory: Memory, args: dict[str, Any]) -> Any:
    return _facts(memory.facts.dispute(args["id"], args["other"]))


@tool("memory_fact_settle", "Decide a review: `same` merges the new fact into the existing one, `replaces`: the new fact "
      "supersedes the existing one (a value that changed), `keep` keeps both.",
      schema({"new": described(FACT_ID, "the newer fact of the review (fct_…)"),
              "existing": described(FACT_ID, "the fact it was found close to (fct_…)"), "decision": {"type": "string", "enum": list(SETTLEMENTS),
                                                                           "description": "same: merge new into existing; replaces: new supersedes existing; keep: keep both"}},
             required=["new", "existing", "decision"]), write=True)
def memory_fact_settle(memory: Memory, args: dict[str, Any]) -> Any:
    return memory.facts.settle(args["new"], args["existing"], args["decision"])
