#!/usr/bin/env bash
# The README's quick start, as a new user runs it, on a fresh clone (issue 19):
#   make run                                (a new .venv, installed from requirements.lock; capture from loopback is taken with writes off)
#   palimpsest setup claude-code            (into a fresh HOME)
#   a turn of Claude Code ends: its Stop hook runs the configured capture command line
#   the next prompt: its UserPromptSubmit hook returns a recall block holding that turn
# Everything lives in one temporary folder (clone, HOME, Palimpsest home); the server is
# stopped at the end whatever happens. Exit 0 only when the captured turn came back.
# Usage: bash scripts/quickstart.sh [REPO]   (default: this checkout, committed state)
set -euo pipefail
repo="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
work="$(mktemp -d)"
server=""
cleanup() {
  rc=$?
  if [ -n "$server" ]; then  # make and the server it started: the whole process group
    kill -TERM -- "-$server" 2>/dev/null
    for _ in $(seq 30); do kill -0 -- "-$server" 2>/dev/null || break; sleep 1; done
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

say() { printf 'quickstart: %s\n' "$*"; }
git clone --quiet "$repo" "$work/clone"
export HOME="$work/user" PALIMPSEST_HOME="$work/user/.palimpsest"
mkdir -p "$HOME/.claude"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
export PALIMPSEST_PORT="$port" PALIMPSEST_URL="http://127.0.0.1:$port"

say "make run (fresh .venv from requirements.lock)"
# setsid: a process group of its own, so that the cleanup stops the server make started too
(cd "$work/clone" && exec setsid make run >"$work/serve.log" 2>&1) &
server=$!
ready() { python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/readyz", timeout=2)' "$PALIMPSEST_URL" 2>/dev/null; }
for _ in $(seq 900); do  # (the install takes minutes on a cold pip cache)
  ready && break
  kill -0 "$server" 2>/dev/null || { tail -30 "$work/serve.log"; say "make run exited"; exit 1; }
  sleep 1
done
ready || { tail -30 "$work/serve.log"; say "the server never became ready"; exit 1; }
grep -q "panel: $PALIMPSEST_URL/panel" "$work/serve.log" || { say "the startup line does not name the panel"; exit 1; }

bin="$work/clone/.venv/bin/palimpsest"
say "palimpsest setup claude-code"
"$bin" setup claude-code >/dev/null
"$bin" doctor --json >"$work/doctor.json" || true  # a report (exit 1 for any problem): server, capture, hooks must be ok
python3 - "$work/doctor.json" <<'EOF' || { cat "$work/doctor.json"; say "doctor does not see the server, capture and hooks working"; exit 1; }
import json, sys
states = {c["name"]: c["state"] for c in json.load(open(sys.argv[1]))["checks"]}
sys.exit(0 if all(states.get(n) == "ok" for n in ("server", "capture", "hooks claude-code")) else 1)
EOF

hook() {  # the command line setup wrote for EVENT, as Claude Code runs it
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["hooks"][sys.argv[2]][-1]["hooks"][0]["command"])' \
    "$HOME/.claude/settings.json" "$1"
}
transcript="$work/turn.jsonl"
cat >"$transcript" <<'JSONL'
{"type": "user", "uuid": "u1", "sessionId": "qs-1", "timestamp": "2026-03-04T10:00:00Z", "message": {"role": "user", "content": "why does the nightly deploy fail?"}}
{"type": "assistant", "uuid": "a1", "sessionId": "qs-1", "timestamp": "2026-03-04T10:00:05Z", "message": {"role": "assistant", "content": [{"type": "text", "text": "The heliotrope retry cap is below the upstream timeout: raise it to 8."}]}}
JSONL
say "a turn ends: the Stop hook captures it"
printf '{"session_id": "qs-1", "transcript_path": "%s", "cwd": "%s", "hook_event_name": "Stop"}' "$transcript" "$work" \
  | sh -c "$(hook Stop)"
say "the next prompt: the UserPromptSubmit hook recalls it"
answer=""
for _ in $(seq 30); do  # (capture is indexed by the server's background pass, every 2 s)
  answer="$(printf '{"session_id": "qs-2", "prompt": "what was wrong with the heliotrope retry cap?", "hook_event_name": "UserPromptSubmit"}' \
    | sh -c "$(hook UserPromptSubmit)")"
  case "$answer" in *"heliotrope retry cap is below the upstream timeout"*) break ;; esac
  sleep 1
done
case "$answer" in
  *"heliotrope retry cap is below the upstream timeout"*) say "ok: the captured turn was recalled" ;;
  *) say "the recall block did not hold the captured turn: ${answer:-<nothing>}"; tail -20 "$work/serve.log"; exit 1 ;;
esac
