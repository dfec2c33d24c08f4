"""Hybrid search latency of one source tree on a home it loaded itself, for a before/after
alternated by hand (docs/retrieval.md, "Eighth session"). Run with the tree as the working
directory and `PYTHONPATH=<tree>/src`:

    python bench/hybrid_ab.py load HOME 100000     # bench/search.py's corpus, random unit vectors
    python bench/hybrid_ab.py time HOME [w_seed=0]  # 200 queries as bench/search.py runs them; one JSON line
    python bench/hybrid_ab.py time HOME when        # the same, each asked as "When did we … ?" (the w_dated stage's worst case)

Vector search is exact (`ann_threshold` above the count), so no process spends minutes
building an HNSW graph of its own before the timed queries. Settings given as `name=value`
are passed to `Settings.load`, so one tree can be timed with a stage turned off.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd() / "bench"))  # the tree's own bench helpers
from common import Corpus
from search import add_vectors, load, run

from palimpsest import Memory, Settings

EXACT = 10**9  # an ann_threshold no home here reaches


def main(argv: list[str]) -> int:
    what, home = argv[0], argv[1]
    if what == "load":
        with Memory(settings=Settings.load(env={}, home=home, embedder="none")) as memory:
            load(memory, int(argv[2]))
        with Memory(settings=Settings.load(env={}, home=home, embedder="local", embed_cache="off", ann_threshold=EXACT)) as memory:
            add_vectors(memory, memory.embedder.model_id)
        return 0
    asks_when = "when" in argv[2:]
    extra = {k: float(v) for k, v in (kv.split("=", 1) for kv in argv[2:] if kv != "when")}
    with Memory(settings=Settings.load(env={}, home=home, embedder="local", embed_cache="off", ann_threshold=EXACT, **extra)) as memory:
        memory.search("warm up", limit=10, touch=False)
        queries = Corpus(seed=99).queries(200)
        result = run(memory, [f"When did we talk about {q}" for q in queries] if asks_when else queries)
    print(json.dumps({k: round(v, 2) for k, v in result.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
