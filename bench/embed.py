"""Embedding throughput of the default local model on this machine.

    python bench/embed.py [--threads 2] [--limit N] [--write]

Embeds every LoCoMo dev turn (as the indexer would: speaker, text and search context)
without the cache, and reports messages/s, tokens/s, the time to embed the LoCoMo set,
single-query latency p50/p95, and the model load time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import machine, summary_ms, table, write_section
from retrieval import load, locomo_sessions

from palimpsest import Memory, Settings
from palimpsest.embed import LocalEmbedder
from palimpsest.search import embedding_text
from palimpsest.tokens import count_tokens

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval" / "locomo-dev.json"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--limit", type=int, default=None, help="embed only the first N turns")
    p.add_argument("--path", default=str(EVAL))
    p.add_argument("--write", action="store_true")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as home:
        memory = Memory(settings=Settings.load(env={}, home=home, embedder="none"))
        for conv in load(args.path):
            for session, _, turns in locomo_sessions(conv):
                memory.ingest_session(session, turns)
        messages = memory.browse(limit=1000)
        offset = 1000
        while len(page := memory.browse(limit=1000, offset=offset)):
            messages += page
            offset += 1000
        memory.close()
    texts = [embedding_text(m) for m in messages][: args.limit]
    t0 = time.perf_counter()
    embedder = LocalEmbedder(threads=args.threads)
    load_s = time.perf_counter() - t0
    tokens = sum(count_tokens(t) for t in texts)
    t0 = time.perf_counter()
    for i in range(0, len(texts), 64):
        embedder.embed_batch(texts[i : i + 64])
    seconds = time.perf_counter() - t0
    queries = []
    for t in texts[:100]:
        q0 = time.perf_counter()
        embedder.embed(t[:80])
        queries.append(time.perf_counter() - q0)
    lat = summary_ms(queries)
    result = {"messages": len(texts), "seconds": round(seconds, 1), "messages_per_s": round(len(texts) / seconds, 1),
              "tokens_per_s": round(tokens / seconds), "query_p50_ms": round(lat["p50_ms"], 1), "query_p95_ms": round(lat["p95_ms"], 1),
              "load_s": round(load_s, 2), "threads": args.threads}
    text = table([(str(result["messages"]), f"{result['seconds']}", f"{result['messages_per_s']}", f"{result['tokens_per_s']}",
                   f"{result['query_p50_ms']}", f"{result['query_p95_ms']}", f"{result['load_s']}")],
                 ("LoCoMo turns", "seconds", "messages/s", "tokens/s", "query p50 ms", "query p95 ms", "load s"))
    print(text)
    if args.write:
        write_section("Embedding throughput", f"{machine()}\n\n`python bench/embed.py --threads {args.threads}`\n\n{text}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
