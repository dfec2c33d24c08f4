#!/usr/bin/env bash
# The weight/recipe comparison behind the search defaults (docs/retrieval.md).
# Usage: bench/sweep.sh locomo ../shared/eval/locomo-dev.json > bench/out/sweep-locomo.txt
#        bench/sweep.sh longmemeval ../shared/eval/longmemeval-s-dev.jsonl.gz > bench/out/sweep-longmemeval.txt
# "plain" = without the conversation re-ranking (--w-reply 0 --w-speaker 0).
set -u
ds=$1; path=$2; shift 2
plain="--w-reply 0 --w-speaker 0"
run() { echo "== $*"; .venv/bin/python bench/retrieval.py "$ds" "$path" --json "$@" | tail -1; }
run --embedder none --w-temporal 0 $plain
run --embedder none
run --embedder local --w-fts 0 --w-semantic 1 --w-temporal 0 --w-importance 0 $plain
run --embedder local --w-temporal 0 $plain
run --embedder local --w-temporal 0.3 $plain
run --embedder local --w-temporal 0.1 $plain
run --embedder local --w-temporal 0.05 $plain
run --embedder local --w-temporal 0.05 --decay-clock accessed $plain
run --embedder local --recipe rrf
run --embedder local --w-temporal 0 --w-session 0.1 $plain
run --embedder local --w-temporal 0.05 --w-session 0.1 $plain
run --embedder local --w-speaker 0
run --embedder local --w-reply 0
run --embedder local --w-reply 0.3
run --embedder local --w-reply 0.7
run --embedder local --w-speaker 0.2
run --embedder local
