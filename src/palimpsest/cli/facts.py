"""Fact commands. CtxVault-style verbs on a vault (`vault init`, `write-episode`,
`episodes`, `episode`, `supersede`, `confirm`, `revise`, `close`, `retract`, `dispute`)
and `palimpsest facts …`, the curator's front door, named after `memory.facts` methods."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import NotFound
from ..facts.model import SETTLEMENTS
from .common import add_command, count, emit, minute, open_memory


def register(sub: Any) -> None:
    # `vault init NAME --type episodic` and `vault list` live in cli/vaults.py (one registry of every vault)
    q = add_command(sub, "write-episode", write_episode, "Write a fact into a vault (open-ended unless --valid-to).")
    q.add_argument("vault")
    q.add_argument("text")
    _fact_args(q)

    q = add_command(sub, "episodes", episodes, "List the facts of a vault that hold now (or --valid-at / --known-at).")
    q.add_argument("vault")
    _query_args(q)

    q = add_command(sub, "episode", episode, "Show one fact; --history shows its whole supersession chain.")
    q.add_argument("vault")
    q.add_argument("id")
    q.add_argument("--history", action="store_true")
    q.add_argument("--known-at", help="as the system knew it then (ISO; naive = UTC)")

    q = add_command(sub, "supersede", supersede, "Correct a fact: it ends where the new text starts (--valid-from, default: when the --source message said it, else now).")
    q.add_argument("vault")
    q.add_argument("id")
    q.add_argument("text")
    q.add_argument("--valid-from")
    q.add_argument("--source")
    for name, func, help_ in (("confirm", confirm, "Heard again: one more attestation, confidence and last_seen up."),
                              ("revise", revise, "Say the same fact better: a new version, attestations kept."),
                              ("close", close, "The fact stopped holding (--at, default now); not a retraction."),
                              ("retract", retract, "The fact was never true (kept, out of every query)."),
                              ("dispute", dispute, "Flag two open facts that cannot both hold.")):
        q = add_command(sub, name, func, help_)
        _verb_args(q, name)

    p = add_command(sub, "facts", _vault_help, "The facts and their curator: write, review, search, history, snapshot, …", json_flag=False)
    fsub = p.add_subparsers(dest="facts_command", metavar="ACTION", required=True)
    _register_facts(fsub)


def _register_facts(fsub: Any) -> None:
    q = add_command(fsub, "write", curate, "Offer a candidate to the curator: confirm, relate, supersede or add.")
    q.add_argument("text")
    q.add_argument("--vault")
    q.add_argument("--kind", default="fact")
    q.add_argument("-e", "--entity", action="append", dest="entities", default=[])
    q.add_argument("--salience", type=float, default=0.5)
    q.add_argument("--confidence", type=float, default=0.7)
    q.add_argument("--valid-from")
    q.add_argument("--source", help="evt_… (or the short id a recall block shows), doc:PATH or person:NAME")
    q.add_argument("--corrects", help="the id, or the text, of the fact this corrects")
    q = add_command(fsub, "review", review, "Pairs the curator linked as related, waiting for a decision.")
    q.add_argument("--vault")
    q = add_command(fsub, "settle", settle, "Settle a review: `same` merges NEW into EXISTING, `replaces`: NEW supersedes EXISTING, `keep` keeps both.")
    q.add_argument("new")
    q.add_argument("existing")
    q.add_argument("decision", choices=list(SETTLEMENTS))
    q = add_command(fsub, "query", query, "Facts that hold now (or --valid-at / --known-at), across vaults.",
                    aliases=("list",))  # what a new user typed first
    q.add_argument("--vault")
    _query_args(q)
    q.add_argument("--status", help="instead of what holds: the facts of this status (current, superseded, retracted, closed, revised, "
                                    "merged, future) or all")
    for name, what in (("agent", "agent"), ("channel", "channel"), ("tag", "accepted tag (key:value)")):
        q.add_argument(f"--{name}", help=f"only facts heard in sessions of this {what} (a bot's one user)")
    q = add_command(fsub, "search", search, "Ranked search over facts (keyword + vector + time + importance).")
    q.add_argument("query")
    q.add_argument("--vault")
    q.add_argument("--kind")
    q.add_argument("--valid-at")
    q.add_argument("--known-at")
    q.add_argument("--limit", type=count(1), default=10)
    q = add_command(fsub, "get", get, "One fact by id, whatever its status.")
    q.add_argument("id")
    q.add_argument("--known-at")
    q = add_command(fsub, "history", history, "The supersession chain of a fact, oldest first.")
    q.add_argument("id")
    q = add_command(fsub, "supersede", supersede, "Correct a fact with a new text.")
    q.add_argument("id")
    q.add_argument("text")
    q.add_argument("--valid-from")
    q.add_argument("--source")
    for name, func, help_ in (("confirm", confirm, "Heard again."), ("revise", revise, "Say it better."),
                              ("close", close, "It stopped holding."), ("retract", retract, "It was never true."),
                              ("dispute", dispute, "Two facts that cannot both hold.")):
        q = add_command(fsub, name, func, help_)
        _verb_args(q, name, with_vault=False)
    q = add_command(fsub, "snapshot", snapshot, "Write the facts snapshot (default <home>/facts.jsonl).")
    q.add_argument("--path")
    q = add_command(fsub, "restore", restore, "Restore facts into an empty store from the snapshot, or --journal.")
    q.add_argument("--path", help="snapshot file (default <home>/facts.jsonl)")
    q.add_argument("--journal", action="store_true", help="replay the system journal instead")
    add_command(fsub, "replay", replay, "Apply journaled fact decisions the store has not applied yet.")
    add_command(fsub, "pending", pending, "Candidates parked while the store was unreachable.")
    add_command(fsub, "drain", drain, "Curate the parked candidates now.")
    add_command(fsub, "embed", embed, "Embed facts that have no vector of the current model.")
    add_command(fsub, "stats", stats, "Counts of vaults, facts, attestations and pending reviews.")


def _fact_args(q: argparse.ArgumentParser) -> None:
    q.add_argument("-e", "--entity", action="append", dest="entities", default=[], help="an entity (repeatable)")
    q.add_argument("--kind", default="fact", help="correction, preference, fact, decision, task, …")
    q.add_argument("--salience", type=float, default=0.5)
    q.add_argument("--confidence", type=float, default=0.7)
    q.add_argument("--valid-from", help="when it started holding (ISO; naive = UTC; default now)")
    q.add_argument("--valid-to", help="when it stopped holding, if already known")
    q.add_argument("--source", help="evt_… (or the short id a recall block shows), doc:PATH or person:NAME (default person:user)")


def _query_args(q: argparse.ArgumentParser) -> None:
    q.add_argument("--entity")
    q.add_argument("--kind")
    q.add_argument("--source")
    q.add_argument("--valid-at", help="what held in the world then (ISO; naive = UTC)")
    q.add_argument("--known-at", help="what the system had recorded by then")
    q.add_argument("--limit", type=count(1))


def _verb_args(q: argparse.ArgumentParser, name: str, with_vault: bool = True) -> None:
    if with_vault:
        q.add_argument("vault")
    q.add_argument("id")
    if name == "revise":
        q.add_argument("text")
    if name == "dispute":
        q.add_argument("other")
    if name in ("confirm", "close"):
        q.add_argument("--at", help="ISO time (naive = UTC; default now)")
    if name in ("confirm", "close", "revise", "retract"):
        q.add_argument("--source")
    if name == "retract":
        q.add_argument("--reason")


def _vault_help(args: argparse.Namespace) -> None:  # argparse requires an action; never reached
    raise SystemExit(2)


def _in_vault(memory: Any, args: argparse.Namespace, fact_id: str) -> None:
    vault = getattr(args, "vault", None)
    if vault and memory.facts.get(fact_id).vault != vault:
        raise NotFound(f"no fact {fact_id!r} in vault {vault!r}")


def print_facts(facts: list[Any]) -> None:
    for f in facts:
        d = f if isinstance(f, dict) else f.to_dict()
        end = minute(d["valid_to"]) if d["valid_to"] else "…"
        print(f"{d['id']}  [{d['status']}] {minute(d['valid_from'])} → {end}  conf {d['confidence']:.2f}  {d['text']}")
        for why in d.get("why") or []:
            print(f"    why: {why}")


def _emit_facts(args: argparse.Namespace, facts: list[Any]) -> None:
    emit(args, [f.to_dict() for f in facts], lambda r: print_facts(r))


# -- commands --------------------------------------------------------------------
def write_episode(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        fact = memory.facts.write(args.text, vault=args.vault, kind=args.kind, entities=args.entities, salience=args.salience,
                                  confidence=args.confidence, valid_from=args.valid_from, valid_to=args.valid_to, source=args.source)
    _emit_facts(args, [fact])


def episodes(args: argparse.Namespace) -> None:
    query(args)


def query(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        found = memory.finder.facts_heard_in(lambda n: memory.facts.query(
            args.vault, entity=args.entity, kind=args.kind, source=args.source, valid_at=args.valid_at, known_at=args.known_at,
            limit=n, status=getattr(args, "status", None)), args.limit,
            agent=getattr(args, "agent", None), channel=getattr(args, "channel", None), tag=getattr(args, "tag", None))
    _emit_facts(args, found)


def episode(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        _in_vault(memory, args, args.id)
        found = memory.facts.history(args.id) if args.history else [memory.facts.get(args.id, known_at=args.known_at)]
    _emit_facts(args, found)


def get(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        found = [memory.facts.get(args.id, known_at=args.known_at)]
    _emit_facts(args, found)


def history(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        found = memory.facts.history(args.id)
        why = memory.facts.reasons([f.id for f in found])
    emit(args, [{**f.to_dict(), "why": why.get(f.id, [])} for f in found], lambda r: print_facts(r))


def supersede(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        _in_vault(memory, args, args.id)
        fact = memory.facts.supersede(args.id, args.text, valid_from=args.valid_from, source=args.source)
    _emit_facts(args, [fact])


def confirm(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        _in_vault(memory, args, args.id)
        fact = memory.facts.confirm(args.id, source=args.source, at=args.at)
    _emit_facts(args, [fact])


def revise(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        _in_vault(memory, args, args.id)
        fact = memory.facts.revise(args.id, args.text, source=args.source)
    _emit_facts(args, [fact])


def close(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        _in_vault(memory, args, args.id)
        fact = memory.facts.close(args.id, at=args.at, source=args.source)
    _emit_facts(args, [fact])


def retract(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        _in_vault(memory, args, args.id)
        fact = memory.facts.retract(args.id, reason=args.reason, source=args.source)
        # (the version it had superseded, holding again: a retracted correction's supersession never happened)
        back = [memory.facts.get(fact.superseded_by)] if fact.superseded_by else []
    _emit_facts(args, [fact, *back])


def dispute(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        _in_vault(memory, args, args.id)
        _in_vault(memory, args, args.other)
        pair = memory.facts.dispute(args.id, args.other)
    _emit_facts(args, pair)


def curate(args: argparse.Namespace) -> None:
    candidate = {"text": args.text, "vault": args.vault, "kind": args.kind, "entities": args.entities, "salience": args.salience,
                 "confidence": args.confidence, "valid_from": args.valid_from, "source": args.source, "corrects": args.corrects}
    with open_memory(args) as memory:
        decision = memory.facts.curator.write(candidate)
    emit(args, decision.to_dict(), lambda r: print(f"{r['action']}: {(r['fact'] or {}).get('id', '')} {r['reason']}"))


def review(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        pairs = memory.facts.reviews(args.vault)[0]

    def human(rows: list[dict[str, Any]]) -> None:
        for p in rows:
            print(f"{p['new']['id']}  {p['new']['text']}\n  ~ {p['existing']['id']}  {p['existing']['text']}")
        print(f"{len(rows)} pending; settle with `palimpsest facts settle NEW EXISTING same|replaces|keep`")

    emit(args, pairs, human)


def settle(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        fact = memory.facts.settle(args.new, args.existing, args.decision)
    _emit_facts(args, [fact])


def search(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        hits = memory.facts.search(args.query, vault=args.vault, kind=args.kind, valid_at=args.valid_at,
                                   known_at=args.known_at, limit=args.limit)
    emit(args, [h.to_dict() for h in hits], lambda r: print("\n".join(f"{h['score']:.3f}  {h['id']}  {h['text']}" for h in r)))


def snapshot(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        path = memory.facts.snapshot(args.path)
    emit(args, {"path": str(path)}, lambda r: print(r["path"]))


def restore(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        n = memory.facts.restore_from_journal() if args.journal else memory.facts.restore_snapshot(args.path)
    emit(args, {"restored": n}, lambda r: print(f"restored {r['restored']}"))


def replay(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        n = memory.facts.replay()
    emit(args, {"applied": n}, lambda r: print(f"applied {r['applied']} decisions"))


def pending(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        rows = [{"key": k, "candidate": c} for k, c in memory.facts.curator.pending()]
    emit(args, rows, lambda r: print("\n".join(f"{x['key']}  {x['candidate'].get('text', '')}" for x in r)))


def drain(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        done = [d.to_dict() for d in memory.facts.curator.drain()]
    emit(args, done, lambda r: print(f"drained {len(r)}"))


def embed(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        n = memory.facts.embed_missing()
    emit(args, {"embedded": n}, lambda r: print(f"embedded {r['embedded']} facts"))


def stats(args: argparse.Namespace) -> None:
    with open_memory(args) as memory:
        s = memory.facts.stats()
    emit(args, s, lambda r: print("\n".join(f"{k}: {v}" for k, v in r.items())))
