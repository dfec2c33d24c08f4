"""Queries about nothing stored: does search return no hits, and recall only the live tail?

    python bench/noise.py ../shared/eval/locomo-dev.json [--json] [--list] [--split a|b]
    python bench/noise.py ../shared/eval/locomo-dev.json --longmemeval ../shared/eval/longmemeval-s-dev.jsonl.gz

The noise set (`noise_set`, deterministic, 200 queries) is asked of the LoCoMo dev
conversations, each loaded into a fresh memory as `bench/retrieval.py` does:

- 120 **questions from another conversation**: a LoCoMo question of conversation i asked
  of conversation i+1, i+2, … (round robin), kept only when it names none of the target's
  two speakers (conv-41 and conv-43 both have a John) — about people that memory never met;
- 40 **made-up words** (two to four pronounceable nonsense words: "vorbik tralune");
- 40 **random English words** (three to five drawn from `WORDS`, uncommon words that no
  dev conversation uses).

Reported: the share of queries with no message hit (`memory.search`, limit 20), and the
share whose recall block (4,000 tokens, from the conversation's last session) holds
nothing but that session's live tail, overall and per kind of noise. The same run also
reports the floor's cost: every dev question of those conversations is searched, and its
evidence recall@10 is printed beside the noise figures.

With `--longmemeval` the queries are asked of LongMemEval haystacks instead (10 by
default, 20 queries each; `haystack_noise_set`): 120 LoCoMo questions that name one of
their own speakers, and the same 80 made-up and random-word strings.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from retrieval import CACHE, lme_sessions, lme_time, load, locomo_sessions, open_memory, split

from palimpsest.embed import EmbeddingCache, get_embedder

SEED = 18
CROSS, MADE_UP, WORDS_N = 120, 40, 40
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
WORDS = ["obsidian", "quorum", "zeppelin", "lanthanum", "isotope", "parabola", "sextant", "abacus", "trilobite", "basalt", "ferrule", "gimbal", "halyard", "isthmus", "jackal", "kelp", "lichen", "monsoon", "nebula", "oboe", "plinth", "quince", "rhubarb", "sarcophagus", "tundra", "ukulele", "vestibule", "walrus", "xylem", "yurt", "zircon", "anvil", "barnacle", "cormorant", "dirigible", "escarpment", "fjord", "gargoyle", "hydrant", "igloo", "jodhpurs", "kumquat", "linoleum", "marzipan", "narwhal", "ocelot", "pewter", "quagmire", "reliquary", "sprocket", "turbine", "umlaut", "vellum", "wombat", "yodel", "ziggurat"]


def made_up(rng: random.Random) -> str:
    return " ".join("".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 3, 3)))) for _ in range(rng.randint(2, 4)))


def names_any(question: str, names: set[str]) -> bool:
    return any(re.search(rf"\b{re.escape(n)}\b", question, re.IGNORECASE) for n in names)


def noise_set(convs: list[dict[str, Any]], seed: int = SEED) -> list[dict[str, Any]]:
    """200 queries, each {"target": conversation index, "kind", "query"}."""
    rng = random.Random(seed)
    speakers = [{c["conversation"]["speaker_a"], c["conversation"]["speaker_b"]} for c in convs]
    out: list[dict[str, Any]] = []
    pools = [[qa["question"] for qa in c["qa"] if qa.get("category") in (1, 2, 3, 4)] for c in convs]
    for p in pools:
        rng.shuffle(p)
    i = 0
    while sum(1 for q in out if q["kind"] == "cross") < CROSS:
        source = i % len(convs)
        target = (source + 1 + (i // len(convs)) % (len(convs) - 1)) % len(convs)
        i += 1
        while pools[source]:
            question = pools[source].pop()
            if not names_any(question, speakers[target]):
                out.append({"target": target, "kind": "cross", "query": question})
                break
    for n in range(MADE_UP):
        out.append({"target": n % len(convs), "kind": "made-up", "query": made_up(rng)})
    for n in range(WORDS_N):
        out.append({"target": n % len(convs), "kind": "words", "query": " ".join(rng.sample(WORDS, rng.randint(3, 5)))})
    return out


def haystack_noise_set(convs: list[dict[str, Any]], haystacks: int, seed: int = SEED) -> list[dict[str, Any]]:
    """200 queries for `haystacks` LongMemEval haystacks: LoCoMo questions that name one of
    their conversation's speakers (nobody of a LongMemEval haystack), and the same made-up
    and random-word strings as `noise_set`, dealt round robin."""
    rng = random.Random(seed)
    pools = [[qa["question"] for qa in c["qa"] if qa.get("category") in (1, 2, 3, 4)
              and names_any(qa["question"], {c["conversation"]["speaker_a"], c["conversation"]["speaker_b"]})] for c in convs]
    for p in pools:
        rng.shuffle(p)
    cross = [pools[i % len(pools)][i // len(pools)] for i in range(CROSS)]
    strings = [q["query"] for q in noise_set(convs, seed) if q["kind"] != "cross"]
    kinds = ["cross"] * CROSS + ["made-up"] * MADE_UP + ["words"] * WORDS_N
    return [{"target": n % haystacks, "kind": k, "query": q} for n, (k, q) in enumerate(zip(kinds, cross + strings))]


def ask(memory: Any, queries: list[dict[str, Any]], session: str, now: datetime, empty: dict[str, list[float]],
        live_only: dict[str, list[float]]) -> None:
    """Each query's search (limit 20) and recall block (4,000 tokens from `session`), scored."""
    for q in queries:
        hits = memory.search(q["query"], limit=20, touch=False, now=now).hits
        block = memory.recall(session, q["query"], 4000, now=now)
        empty.setdefault(q["kind"], []).append(0.0 if hits else 1.0)
        live_only.setdefault(q["kind"], []).append(1.0 if all(i.kind == "live" for i in block.items) else 0.0)


def run_haystacks(convs: list[dict[str, Any]], args: argparse.Namespace, embedder: Any, cache: Any) -> dict[str, Any]:
    """The noise set asked of LongMemEval haystacks (the first `--haystacks` of the file, or
    of its `--split` half), each in a fresh memory as `bench/retrieval.py` loads them."""
    stacks = split(load(args.longmemeval), args.split)[: args.haystacks]
    queries = haystack_noise_set(convs, len(stacks))
    empty: dict[str, list[float]] = {}
    live_only: dict[str, list[float]] = {}
    for target, q in enumerate(stacks):
        with tempfile.TemporaryDirectory() as home:
            memory = open_memory(home, args, embedder, cache)
            session = ""
            for session, msgs in lme_sessions(q):
                memory.ingest_session(session, msgs)
            if embedder is not None:
                memory.reindex()
            ask(memory, [x for x in queries if x["target"] == target], session, lme_time(q["question_date"]), empty, live_only)
            memory.close()
    return summarise(queries, empty, live_only, [])


def summarise(queries: list[dict[str, Any]], empty: dict[str, list[float]], live_only: dict[str, list[float]],
              dev: list[float]) -> dict[str, Any]:
    mean = lambda xs: round(statistics.fmean(xs), 4) if xs else 0.0
    every = lambda d: [x for v in d.values() for x in v]
    return {"queries": len(every(empty)), "no_hits": mean(every(empty)), "live_tail_only": mean(every(live_only)),
            "per_kind": {k: {"n": len(v), "no_hits": mean(v), "live_tail_only": mean(live_only[k])} for k, v in empty.items()},
            "dev_recall@10": mean(dev), "dev_questions": len(dev)}


def run(convs: list[dict[str, Any]], args: argparse.Namespace, embedder: Any, cache: Any) -> dict[str, Any]:
    queries = noise_set(convs)
    empty: dict[str, list[float]] = {}
    live_only: dict[str, list[float]] = {}
    dev: list[float] = []
    for target, conv in enumerate(convs):
        if args.split and target % 2 != (0 if args.split == "a" else 1):
            continue
        with tempfile.TemporaryDirectory() as home:
            memory = open_memory(home, args, embedder, cache)
            last, session = datetime(1970, 1, 1, tzinfo=UTC), ""
            for session, start, turns in locomo_sessions(conv):
                memory.ingest_session(session, turns)
                last = max(last, start)
            if embedder is not None:
                memory.reindex()
            now = last + timedelta(days=1)
            ask(memory, [q for q in queries if q["target"] == target], session, now, empty, live_only)
            for qa in conv["qa"]:
                if qa.get("category") in (1, 2, 3, 4) and qa.get("evidence"):
                    hits = memory.search(qa["question"], limit=10, touch=False, now=now).hits
                    ranked = {h.message.metadata.get("dia_id") for h in hits}
                    dev.append(len(set(qa["evidence"]) & ranked) / len(qa["evidence"]))
            memory.close()
    return summarise(queries, empty, live_only, dev)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path", help="locomo-dev.json")
    p.add_argument("--json", action="store_true")
    p.add_argument("--list", action="store_true", help="print the noise set and stop")
    p.add_argument("--embedder", default="local", choices=["local", "hash", "none"])
    p.add_argument("--floor-similarity", help="relevance floor: auto, off or a cosine")
    p.add_argument("--floor-unknown", help="relevance floor for queries naming only what is not stored")
    p.add_argument("--floor-stranger", help="the same for queries about a third party")
    p.add_argument("--split", choices=["a", "b"], help="only the conversations (haystacks) of one half (as bench/retrieval.py --split)")
    p.add_argument("--longmemeval", metavar="PATH", help="ask the noise set of LongMemEval haystacks instead (longmemeval-s-dev.jsonl.gz)")
    p.add_argument("--haystacks", type=int, default=10, help="with --longmemeval: how many haystacks (20 queries each at 10)")
    args = p.parse_args(argv)
    for k in ("w_fts", "w_semantic", "w_temporal", "w_importance", "w_session", "w_reply", "w_speaker", "w_when", "w_dated", "w_answer", "w_follow", "w_topic", "session_cap", "recipe", "decay_clock"):
        setattr(args, k, None)
    convs = load(args.path)
    if args.list:
        for q in noise_set(convs):
            print(json.dumps(q))
        return 0
    embedder = get_embedder(args.embedder) if args.embedder != "none" else None
    cache = EmbeddingCache(CACHE) if embedder is not None else None
    started = time.time()
    result = (run_haystacks if args.longmemeval else run)(convs, args, embedder, cache)
    result["seconds"] = round(time.time() - started, 1)
    if not args.json:
        print(f"noise: {result['queries']} queries, no hits {result['no_hits']:.3f}, recall block live tail only {result['live_tail_only']:.3f};"
              f" dev recall@10 {result['dev_recall@10']:.3f} ({result['dev_questions']} questions)")
        for kind, v in result["per_kind"].items():
            print(f"  {kind:<8} n={v['n']:<4} no hits {v['no_hits']:.3f}  live tail only {v['live_tail_only']:.3f}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
