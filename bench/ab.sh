#!/usr/bin/env bash
# Before/after in one run: alternate two source trees through bench/ingest.py and
# bench/search.py, so both sides see the same (noisy) machine.
#
#   bench/ab.sh BEFORE_CHECKOUT [AFTER_CHECKOUT=this one] [MESSAGES=30000] [ROUNDS=2]
#
# e.g. `git worktree add /tmp/before 6d15345 && bench/ab.sh /tmp/before`. Each side runs
# with PYTHONPATH at its own src/ (the venv is this checkout's); outputs (one JSON object
# last per run) go to /tmp/ab/<bench>.<side>.<round>.out.
set -euo pipefail
before="$(cd "$1" && pwd)"; after="$(cd "${2:-$(dirname "$0")/..}" && pwd)"
messages="${3:-30000}"; rounds="${4:-2}"
python="$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python"
out=/tmp/ab; mkdir -p "$out"
for i in $(seq 1 "$rounds"); do
  for side in before after; do
    dir="$before"; [ "$side" = after ] && dir="$after"
    (cd "$dir" && PYTHONPATH="$dir/src" "$python" bench/ingest.py --messages "$messages" --repeat 1 --no-write --json \
      > "$out/ingest.$side.$i.out" 2>&1)
    home="$(mktemp -d)"
    (cd "$dir" && PYTHONPATH="$dir/src" "$python" bench/search.py --messages "$messages" --vectors --home "$home" --no-write \
      --json > "$out/search.$side.$i.out" 2>&1)
    rm -rf "$home"
    echo "$side $i: ingest $(tail -1 "$out/ingest.$side.$i.out" | head -c 120)"
  done
done
