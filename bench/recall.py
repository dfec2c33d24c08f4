"""Recall quality and speed (issue 6).

    python bench/recall.py quality longmemeval ../shared/eval/longmemeval-s-dev.jsonl.gz [--embedder none]
    python bench/recall.py quality locomo ../shared/eval/locomo-dev.json [--split a|b] [--derive] [--whole-ids] [--tokens-per-hit N] [--weight w_topic=0 …]
    python bench/recall.py speed [--messages 100000]
    python bench/recall.py knowledge ../shared/eval/longmemeval-s-dev.jsonl.gz
    python bench/recall.py facts ../shared/eval/longmemeval-s-dev.jsonl.gz [--split a|b] [--fact-share 0.6,1.0]

quality: for each question (a fresh memory per LongMemEval question, per LoCoMo
conversation), the recall block at budgets 1,000 / 2,000 / 4,000 tokens; the share of
questions with any / all of their evidence turns inside the block, and the tokens used.
speed: block assembly p50/p95 at N stored messages (synthetic corpus, keyword + vectors
from the hash embedder so the numbers measure recall, not the model).
knowledge: the LongMemEval knowledge-update questions, each haystack ingested and every
turn distilled into facts (the local fallback; no LLM), then the 4,000-token block: does
it hold the updated value (`KNOWLEDGE_KEYS`, labelled by hand), does the superseded value
show — anywhere, and in a line that is not marked `earlier; newer: …` (`recall/updates.py`) or `no longer holds` (a
question about what held before) — and does any retired fact, or a message it was heard in, reach it unmarked?
facts: every LongMemEval question with its haystack distilled locally (as `knowledge`): all
evidence in the block at each budget, where a fact attested by an evidence turn counts for
it — the measure the facts' share of the budget (`pack.FACT_SHARE`) is chosen on; each
`--fact-share` value is run on the same memories (1.0 = no cap). About 25 minutes here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from common import Corpus, machine, summary_ms, table, write_section
from retrieval import CACHE, lme_sessions, lme_time, load, locomo_sessions, split

from palimpsest import Memory, Settings
from palimpsest.embed import EmbeddingCache, get_embedder
from palimpsest.store.facts_base import FactQuery

BUDGETS = (1000, 2000, 4000)


def _memory(home: str, embedder: Any, cache: Any, overrides: dict[str, float] | None = None) -> Memory:
    settings = {"w_temporal": 0.0, **(overrides or {})}
    m = Memory(settings=Settings.load(env={}, home=home, embedder="local" if embedder else "none", timezone="UTC", **settings))
    if embedder:
        m.use_embedder(embedder, cache)
    return m


def _score(memory: Memory, question: str, evidence: set[str], key: str, now: Any, tally: dict[int, list[tuple[float, float, int]]]) -> None:
    for budget in BUDGETS:
        r = memory.recall(None, question, budget, now=now)
        shown = [i.id for i in r.items if i.kind == "message"]
        got = {memory.store.get_messages([i])[0].metadata.get(key) for i in shown} if key != "has_answer" else None
        if key == "has_answer":
            hits = {i for i in shown if memory.store.get_messages([i])[0].metadata.get("has_answer")}
            found = len(hits)
        else:
            found = len(evidence & (got or set()))
        total = len(evidence)
        tally[budget].append((1.0 if found else 0.0, 1.0 if found >= total else 0.0, r.tokens))


def variant(whole_ids: bool, tokens_per_hit: int | None) -> None:
    """Patch in a variant of the block for a before/after: lines with whole message ids (as
    before short ids), another `TOKENS_PER_HIT`."""
    from palimpsest.recall import block, recaller

    if whole_ids:
        block.RecallItem.ref = property(lambda self: self.id)  # type: ignore[method-assign,assignment]
    if tokens_per_hit:
        recaller.TOKENS_PER_HIT = tokens_per_hit


def quality(args: argparse.Namespace) -> dict[str, Any]:
    variant(args.whole_ids, args.tokens_per_hit)
    embedder = get_embedder(args.embedder) if args.embedder != "none" else None
    cache = EmbeddingCache(CACHE) if embedder else None
    tally: dict[int, list[tuple[float, float, int]]] = {b: [] for b in BUDGETS}
    data = load(args.path)
    if args.dataset == "longmemeval":
        for q in split(data, args.split)[: args.max_questions]:
            with tempfile.TemporaryDirectory() as home:
                memory = _memory(home, embedder, cache, dict(args.weights))
                for session, msgs in lme_sessions(q):
                    memory.ingest_session(session, msgs)
                if embedder:
                    memory.reindex()
                n_answer = sum(1 for s in q["haystack_sessions"] for t in s if t.get("has_answer"))
                _score(memory, q["question"], set(range(n_answer)), "has_answer", lme_time(q["question_date"]), tally)
                memory.close()
    else:
        for conv in split(data, args.split):
            with tempfile.TemporaryDirectory() as home:
                memory = _memory(home, embedder, cache, dict(args.weights))
                for session, _, turns in locomo_sessions(conv):
                    memory.ingest_session(session, turns)
                if embedder:
                    memory.reindex()
                if args.derive:  # the work a server does once the imported sessions are quiet: summaries, then wiki pages
                    for session, _, _ in locomo_sessions(conv):
                        memory.summaries.compact(session, final=True, use_llm=False)
                    memory.worker(tasks=["extract-wiki", "wiki-backfill"]).drain()
                for qa in conv["qa"][: args.max_questions]:
                    if qa.get("category") != 5 and qa.get("evidence"):
                        _score(memory, qa["question"], set(qa["evidence"]), "dia_id", None, tally)
                memory.close()
    rows = {b: {"any": statistics.fmean(x[0] for x in v), "all": statistics.fmean(x[1] for x in v),
                "tokens_p50": statistics.median(x[2] for x in v), "questions": len(v)} for b, v in tally.items()}
    return {"dataset": args.dataset, "embedder": args.embedder, "split": args.split, "budgets": rows}


def speed(args: argparse.Namespace) -> dict[str, Any]:
    corpus = Corpus(seed=5)
    with tempfile.TemporaryDirectory() as home:
        memory = Memory(settings=Settings.load(env={}, home=home, embedder="hash", embed_cache="off"))
        batch: dict[str, list[dict[str, Any]]] = {}
        for session, msg in corpus.messages(args.messages):
            batch.setdefault(session, []).append(msg)
            if sum(len(v) for v in batch.values()) >= 5000:
                for s, msgs in batch.items():
                    memory.ingest_session(s, msgs)
                batch = {}
        for s, msgs in batch.items():
            memory.ingest_session(s, msgs)
        memory.reindex()
        samples = []
        for q in corpus.queries(args.queries):
            t0 = time.perf_counter()
            memory.recall(corpus.sessions[0], q, 4000)
            samples.append(time.perf_counter() - t0)
        memory.close()
    return {"messages": args.messages, "queries": args.queries, **summary_ms(samples)}


# The LongMemEval dev set's knowledge-update questions, labelled by hand once from their
# evidence turns (not tuned against): the words of the updated value, and of the value it
# replaced (None where the question asks for the first value, so nothing is superseded).
# The data set's own answers are sentences ("Yes. (You have a road bike too.)"), which a
# substring test of the block can never find.
KNOWLEDGE_KEYS: dict[str, tuple[str, str | None]] = {
    "06db6396": ("5th project", "4 projects"),
    "07741c44": ("under my bed", None),
    "0e4e4c46": ("132 points", "124 points"),
    "2133c1b5_abs": ("living in harajuku for 3 months", "been a month now"),
    "5831f84d": ("15 crash course", "10 videos"),
    "59524333": ("6:00 pm", "7:00 pm"),
    "72e3ee87": ("50 episodes", "episode 10"),
    "89941a93": ("four bikes", "other two bikes"),
    "89941a94": ("road bike", None),
    "b01defab": ("recently finished", "get back to"),
}


def knowledge(args: argparse.Namespace) -> dict[str, Any]:
    rows = []
    for q in [q for q in load(args.path) if q["question_type"] == "knowledge-update"][: args.max_questions]:
        with tempfile.TemporaryDirectory() as home:
            memory = _distilled(q, home, args.embedder)
            block = memory.recall(None, q["question"], 4000, now=lme_time(q["question_date"]))
            facts = [i for i in block.items if i.kind == "fact"]
            retired = [i for i in facts if memory.facts.get(i.id).status != "current"] if facts else []
            text = " ".join(block.block.lower().split())
            unmarked = " ".join(" ".join(line.lower().split()) for line in block.block.splitlines()
                                if "· earlier; newer:" not in line and "no longer holds]" not in line)
            updated, stale = KNOWLEDGE_KEYS.get(q["question_id"], (str(q["answer"]), None))
            rows.append({"id": q["question_id"], "answer_in_block": str(q["answer"]).lower() in text,
                         "updated_in_block": updated in text, "superseded_in_block": bool(stale) and stale in text,
                         "superseded_as_current": bool(stale) and stale in unmarked,
                         "facts_in_block": len(facts), "retired_facts_in_block": len(retired),
                         "retired_sources_in_block": _retired_sources(memory, block.items),
                         "facts_total": memory.facts.stats().get("facts", 0),
                         "facts_superseded": sum(1 for r in memory.store.query_facts(FactQuery()) if r.superseded_by)})
            if args.show_superseded:  # every supersession, to read whether it retired a true statement
                for r in memory.store.query_facts(FactQuery()):
                    if r.superseded_by:
                        print(f"[{q['question_id']}] {r.text!r} → {memory.facts.get(r.superseded_by).text!r}", file=sys.stderr)
            memory.close()
    n = max(1, len(rows))
    return {"questions": len(rows), "answer_in_block": sum(r["answer_in_block"] for r in rows) / n,
            "updated_in_block": sum(r["updated_in_block"] for r in rows) / n,
            "superseded_in_block": sum(r["superseded_in_block"] for r in rows),
            "superseded_as_current": sum(r["superseded_as_current"] for r in rows),
            "retired_facts_in_block": sum(r["retired_facts_in_block"] for r in rows),
            "retired_sources_in_block": sum(r["retired_sources_in_block"] for r in rows), "rows": rows}


def _distilled(q: dict[str, Any], home: str, embedder: str = "none") -> Memory:
    """The question's haystack ingested and distilled locally; with `embedder` "local" the
    curator reads the facts' cosines (and the pair model decides), messages stay unembedded."""
    memory = Memory(settings=Settings.load(env={}, home=home, embedder=embedder, w_temporal=0.0, timezone="UTC"))
    for session, msgs in lme_sessions(q):
        memory.ingest_session(session, msgs)
        memory.distiller.close_turn(session, use_llm=False)  # the last turn of each session closes with it
    memory.worker(tasks=["distill"]).drain()
    return memory


def _evidence_shown(memory: Memory, items: list[Any]) -> int:
    """Evidence turns in the block: shown as themselves, or through a fact heard in them."""
    ids = {i.id for i in items if i.kind == "message"}
    ids |= {s.split(":", 1)[-1] for i in items if i.kind == "fact" for s in i.sources}
    found = memory.store.get_messages(sorted(i for i in ids if i.startswith("evt_")))
    return sum(1 for m in found if m.metadata.get("has_answer"))


def facts(args: argparse.Namespace) -> dict[str, Any]:
    from palimpsest.recall import pack

    shares = [float(x) for x in args.fact_share.split(",")]
    tally: dict[float, dict[int, list[float]]] = {s: {b: [] for b in BUDGETS} for s in shares}
    for q in split(load(args.path), args.split)[: args.max_questions]:
        n_answer = sum(1 for s in q["haystack_sessions"] for t in s if t.get("has_answer"))
        with tempfile.TemporaryDirectory() as home:
            memory = _distilled(q, home)
            for share in shares:
                pack.FACT_SHARE = share
                for budget in BUDGETS:
                    r = memory.recall(None, q["question"], budget, now=lme_time(q["question_date"]))
                    tally[share][budget].append(1.0 if _evidence_shown(memory, r.items) >= n_answer else 0.0)
            memory.close()
    return {"split": args.split, "shares": {s: {b: statistics.fmean(v) for b, v in t.items()} for s, t in tally.items()},
            "questions": len(tally[shares[0]][BUDGETS[0]])}


def _retired_sources(memory: Memory, items: list[Any]) -> int:
    """Message lines of the block that a superseded, retracted or closed fact was heard in, not marked so (a question
    about what held before is shown the retired statement, marked `no longer holds`)."""
    count = 0
    for i in items:
        if i.kind == "message" and "no longer holds" not in i.note:
            heard = [memory.facts.get(r.id) for r in memory.store.query_facts(FactQuery(source=i.id))]
            count += any(f.status in ("superseded", "retracted", "closed") for f in heard)
    return count


def _weight(text: str) -> tuple[str, float]:
    name, _, value = text.partition("=")
    if not name.startswith("w_") or not value:
        raise argparse.ArgumentTypeError(f"expected w_NAME=VALUE, got {text!r}")
    return name, float(value)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="what", required=True)
    q = sub.add_parser("quality")
    q.add_argument("dataset", choices=["longmemeval", "locomo"])
    q.add_argument("path")
    q.add_argument("--embedder", default="local", choices=["local", "hash", "none"])
    q.add_argument("--max-questions", type=int)
    q.add_argument("--derive", action="store_true", help="LoCoMo: summarise every session (as quiet compaction does) and mine the wiki first")
    q.add_argument("--split", choices=["a", "b"], help="one half of the dev set (LoCoMo by conversation, LongMemEval by question)")
    q.add_argument("--whole-ids", action="store_true", help="lines show whole message ids (the block before short ids)")
    q.add_argument("--tokens-per-hit", type=int, help="hits asked of search: budget / this (default recaller.TOKENS_PER_HIT)")
    q.add_argument("--weight", dest="weights", action="append", type=_weight, default=[], metavar="NAME=VALUE",
                   help="a search weight for this run, e.g. --weight w_topic=0 (repeatable)")
    k = sub.add_parser("knowledge")
    k.add_argument("path")
    k.add_argument("--max-questions", type=int)
    k.add_argument("--embedder", default="none", choices=["local", "none"],
                   help="local: the curator with the bundled MiniLM (its cosines and the pair model); messages are not embedded")
    k.add_argument("--show-superseded", action="store_true", help="print each superseded fact and what replaced it (stderr)")
    f = sub.add_parser("facts")
    f.add_argument("path")
    f.add_argument("--split", choices=["a", "b"], help="one half of the dev set (by question)")
    f.add_argument("--fact-share", default="0.6", help="comma-separated shares of the budget facts may take (1.0: no cap)")
    f.add_argument("--max-questions", type=int)
    s = sub.add_parser("speed")
    s.add_argument("--messages", type=int, default=100_000)
    s.add_argument("--queries", type=int, default=200)
    p.add_argument("--write", action="store_true", help="record the figures in bench/RESULTS.md")
    args = p.parse_args(argv)
    result = {"quality": quality, "speed": speed, "knowledge": knowledge, "facts": facts}[args.what](args)
    if args.what == "knowledge":
        text = table([(r["id"], str(r["answer_in_block"]), str(r["updated_in_block"]), str(r["superseded_in_block"]),
                       str(r["superseded_as_current"]), str(r["facts_in_block"]),
                       str(r["retired_facts_in_block"]), str(r["retired_sources_in_block"]), str(r["facts_total"]), str(r["facts_superseded"])) for r in result["rows"]],
                     ("question", "data set's answer in block", "updated value in block", "superseded value in block",
                      "superseded value in an unmarked line", "facts in block",
                      "retired facts in block", "retired facts' messages in block", "facts distilled", "of them superseded"))
        text += (f"\n\nupdated value in block {sum(r['updated_in_block'] for r in result['rows'])}/{result['questions']}, "
                 f"superseded value in block {result['superseded_in_block']} (in a line not marked earlier: "
                 f"{result['superseded_as_current']}), data set's answer in block {sum(r['answer_in_block'] for r in result['rows'])}/{result['questions']}, retired facts in block {result['retired_facts_in_block']}, "
                 f"their messages in block {result['retired_sources_in_block']}")
        heading = "Recall: knowledge updates (LongMemEval, distilled locally)"
    elif args.what == "facts":
        text = table([(f"{share:g}", *(f"{v:.3f}" for v in row.values())) for share, row in result["shares"].items()],
                     ("facts' share", *(f"all evidence @{b}" for b in BUDGETS)))
        heading = f"Recall with distilled facts (LongMemEval{', half ' + result['split'] if result['split'] else ''})"
    elif args.what == "quality":
        rows = [(str(b), f"{v['any']:.3f}", f"{v['all']:.3f}", f"{v['tokens_p50']:.0f}", str(v["questions"])) for b, v in result["budgets"].items()]
        text = table(rows, ("budget", "any evidence in block", "all evidence in block", "tokens p50", "questions"))
        heading = f"Recall ({result['dataset']}, embedder {result['embedder']}{', half ' + result['split'] if result['split'] else ''})"
    else:
        text = table([(f"{result['messages']:,}", f"{result['p50_ms']:.1f}", f"{result['p95_ms']:.1f}")], ("messages", "p50 ms", "p95 ms"))
        heading = "Recall block assembly"
    print(text)
    if args.write:
        write_section(heading, f"{machine()}\n\n`python bench/recall.py {' '.join(argv or sys.argv[1:])}`\n\n{text}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
