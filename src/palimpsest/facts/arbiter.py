"""The LLM for the undecided band: pairs the deterministic gate cannot settle.

The gate (`curator.judge`) settles most pairs from words, slots and vectors. Two kinds of
pair it cannot: the related band (close in topic, not the same, nothing saying one
replaced the other) and one slot with one value whose embeddings disagree. When an LLM is
configured, such a pair goes to it with a structured output — an action (confirm,
supersede, related, new) and the slot it saw — constrained by `ARBITER_SCHEMA` and
validated (`LLM.structured_call`). Its verdict is journaled in the facts' decision log
(`arbitrated`: the pair, the verdict, the model) before the curator acts on it, and the
act is journaled like any other fact operation. An unreachable LLM or a malformed reply
(parked by the LLM client and counted there) leaves the candidate parked
(`pending_semantic`): nothing is written, and the drain curates it later on the
deterministic path. Without an LLM the deterministic path decides.
"""

from __future__ import annotations

from typing import Any

from .model import DOMAIN, Fact, _new_id

ACTIONS = ("confirm", "supersede", "related", "new")
ARBITER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["action", "slot"],
    "properties": {
        "action": {"enum": list(ACTIONS)},
        "slot": {"type": "string", "maxLength": 200},
    },
}
PROMPT = """You curate a long-term memory of facts. Given an EXISTING fact and a NEW statement, decide what the new one does:
- confirm: it says the same thing (the same subject, attribute and value, maybe in other words);
- supersede: the same subject and attribute with a different value that replaces the old one now;
- related: about the same subject, but both can hold at once (another attribute, or another value beside it);
- new: about something else.
Return JSON: action (confirm, supersede, related or new) and slot (the subject and attribute, e.g. "user / home city";
empty when new). Use only what the two statements say."""


def in_band(action: str, slot: str | None) -> bool:
    """The pairs the LLM decides when there is one: the related band, and one slot with one
    value that the gate did not confirm."""
    return action == "related" or (slot == "same" and action != "confirm")


def ask(llm: Any, text: str, said_at: str, fact: Fact) -> dict[str, Any]:
    """The model's verdict on (fact, text): `{"action", "slot"}`, validated against the schema.
    Raises what `LLM.structured_call` raises (`LLMError`, `InvalidReply`)."""
    user = (f"EXISTING (holds since {fact.valid_from}): {' '.join(fact.text.split())}\n"  # one line each: a line break
            f"NEW (said {said_at}): {' '.join(text.split())}")  # in a statement could forge a line of the prompt's own
    reply = llm.structured_call([{"role": "system", "content": PROMPT}, {"role": "user", "content": user}], ARBITER_SCHEMA,
                                task="curate", name="curate", max_tokens=200, context={"fact": fact.id, "candidate": text[:500]},
                                patience=getattr(llm, "wait", None))  # inside a write: tried once, briefly (then parked)
    return reply.data  # type: ignore[no-any-return]


def journal(facts: Any, text: str, fact: Fact, verdict: dict[str, Any], model: str) -> str:
    """The verdict in the facts' decision log (no store change: the act that follows has its own)."""
    key = _new_id("arb")
    facts.decisions.record(DOMAIN, "arbitrated", key=key, subject=fact.id, content=f"{verdict['action']}: {text[:200]}",
                           created_at=facts.now(), candidate=text, fact=fact.id, verdict=verdict, model=model)
    return key
