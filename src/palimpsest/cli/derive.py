"""After a CLI write: the derived work for what it wrote, here or by a running server.

The CLI alone gets the full memory (issue 19). A write from the CLI (`append`, `ingest`,
`import`) journals and indexes at once, and queues the derived work: embedding, then
distillation, summaries, tags. `palimpsest serve` runs that queue; without it the CLI
was keyword-only. So after a write the command asks whether a server answers at
`PALIMPSEST_URL` (`/healthz`, 0.5 s at most):

- no server: the embeddings of what it wrote are computed here, in the same command (a
  progress bar on a terminal), so search and recall have vectors when it returns; a backlog
  queued before (an `import --no-derive`) is left to `jobs run` or the server; the other jobs — which
  may call an LLM and take long — stay queued (but for tool calls' sentences when no LLM
  is configured: a template, made here too), and a line on stderr says how many and
  the two ways to run them (`palimpsest jobs run`, or `palimpsest serve`);
- a server answers and takes its jobs from this home's store (its `/healthz` names the
  store it serves, `store.fingerprint`): its worker runs them; a server of another store is
  no server here.

`--no-derive` leaves everything queued (scripts doing many writes, then one `jobs run`).
Jobs are claimed with leases, so a server that starts meanwhile never runs one twice.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import progress, server_answers

EMBED = "embed"
TOOL_SYNTH = "tool-synth"


def add_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-derive", action="store_true",
                   help="leave the embedding and the other derived work queued (for `palimpsest serve` or `palimpsest jobs run`)")


def after_writes(args: argparse.Namespace, memory: Any) -> dict[str, Any]:
    """Run (or leave) the derived work of the writes just made; says what it did on stderr."""
    url = memory.settings.url
    if getattr(args, "no_derive", False):
        return _say(args, {"embedded": 0, "queued": _queued(memory), "server": None, "url": url})
    if server_answers(url, memory.store_fingerprint):
        return _say(args, {"embedded": 0, "queued": _queued(memory), "server": url, "url": url})
    embedded, keys = 0, memory.embeds_queued or []
    if memory.settings.embedder != "none" and keys:
        before, worker, ran = _vectors(memory), memory.worker(tasks=[EMBED], keys=keys), 0
        with progress(args, "embedding") as update:  # (counted in jobs: each embeds a batch of messages)
            while batch := worker.run_once():
                ran += batch
                update(ran, max(ran, len(keys)))
        embedded = _vectors(memory) - before
    if not memory.settings.llm_url and _queued(memory).get(TOOL_SYNTH):
        # without an LLM a tool call's sentence is a template, made in microseconds: after a rebuild or an import every
        # tool call's text was blank (and no search found it) until `jobs run` (a data steward's)
        memory.worker(tasks=[TOOL_SYNTH]).drain()
    return _say(args, {"embedded": embedded, "queued": _queued(memory), "server": None, "url": url})


def _vectors(memory: Any) -> int:
    return sum(int(m.get("count", 0)) for m in memory.store.vector_models().values())


def _queued(memory: Any) -> dict[str, int]:
    return {t: s.get("queued", 0) for t, s in memory.jobs()["tasks"].items() if s.get("queued")}


def _say(args: argparse.Namespace, done: dict[str, Any]) -> dict[str, Any]:
    if getattr(args, "json", False):
        return done
    waiting = sum(done["queued"].values())
    lines = []
    if done["embedded"]:
        lines.append(f"embedded {done['embedded']} messages here (no server of this store at {done['url']})")
    if waiting and done["server"]:
        lines.append(f"{waiting} derived jobs queued; the server at {done['server']} runs them (if it serves this home)")
    elif waiting:
        tasks = ", ".join(f"{t} {n}" for t, n in sorted(done["queued"].items()))
        lines.append(f"{waiting} derived jobs wait ({tasks}): run `palimpsest jobs run` (compaction and a session's last turn once "
                     "it is quiet a minute), or keep `palimpsest serve` running")
    for line in lines:
        print(f"palimpsest: {line}", file=sys.stderr)
    return done
