#!/usr/bin/env bash
# The weight/recipe comparison behind the search defaults (docs/retrieval.md).
# Usage: bench/sweep.sh locomo ../shared/eval/locomo-dev.json > bench/out/sweep-locomo.txt
set -u
ds=$1; path=$2; shift 2
run() { echo "== $*"; .venv/bin/python bench/retrieval.py "$ds" "$path" "$@" | tail -1; }
run --embedder none --w-temporal 0
run --embedder local --w-fts 0 --w-semantic 1 --w-temporal 0 --w-importance 0
run --embedder local --w-temporal 0
run --embedder local --w-temporal 0.3
run --embedder local --w-temporal 0.1
run --embedder local --w-temporal 0.05
run --embedder local --w-temporal 0.05 --decay-clock accessed
run --embedder local --recipe rrf
run --embedder local --w-temporal 0 --w-session 0.1
run --embedder local --w-temporal 0.05 --w-session 0.1
