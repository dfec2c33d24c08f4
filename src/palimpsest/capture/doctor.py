"""`palimpsest doctor`: is memory reaching the harness and the harness reaching memory?

Each check answers ok, warn or problem with what it saw and, for anything but ok, the
command that fixes it. The checks, in order: the server answers (`/healthz`); it accepts
capture (an empty batch is posted: 400 means the route is there, 404 that writes are off,
401 a missing token — nothing is written); the hooks of each harness found on this machine
are installed and their binary exists; the embedder is configured and embedding keeps
up; the job backlog; events the indexer quarantined (a journal line the store refused:
kept in the journal, missing from search until retried); the last capture; the spool and
the dead letters. The backlog, the quarantine and the LLM's replies are the server's stats
when it answers (on a client machine of a shared server the home is empty, or not there:
doctor had opened — and so created — it and called its empty queue the server's), else read
from the home itself, when it exists, so they are reported with the server down too.
"""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from ..settings import Settings
from . import setup
from .client import Spool

OK, WARN, PROBLEM = "ok", "warn", "problem"
BACKLOG_WARN = 1000
LLM_BAD_MIN = 5  # invalid or failed LLM replies before doctor weighs them against the good ones
HOOK_EVENTS = ("UserPromptSubmit", "Stop")


@dataclass
class Check:
    name: str
    state: str
    detail: str
    fix: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


class Doctor:
    """The checks, over one settings object and this process's environment."""

    def __init__(self, settings: Settings, env: dict[str, str], url: str | None = None, timeout: float = 3.0) -> None:
        self.settings, self.env = settings, env
        # the hooks' server, not the default one: doctor called it down while the hooks worked against theirs (a new
        # user's); the variable set still wins
        self.url = (url or env.get("PALIMPSEST_URL") or setup.hooks_url(env) or settings.url).rstrip("/")
        headers = {"Authorization": f"Bearer {settings.token}"} if settings.token else {}
        self.http = httpx.Client(timeout=timeout, headers=headers, trust_env=False)
        self.stats: dict[str, Any] | None = None
        self.up = False  # the server answered: the counts are its stats, never this machine's home
        self._home: dict[str, Any] | None = None

    def run(self) -> list[Check]:
        checks: list[Check] = []
        try:
            self.up = self.server(checks)
            if self.up:
                self.store(checks)
                self.capture(checks)
                self.stats = self._tool("memory_stats")
            self.hooks(checks)
            self.embedder(checks)
            self.llm(checks)
            self.backlog(checks)
            self.quarantine(checks)
            self.last_capture(checks)
            self.spool(checks)
        finally:
            self.http.close()
        return checks

    def _tool(self, name: str, args: dict[str, Any] | None = None) -> Any:
        try:
            r = self.http.post(f"{self.url}/api/memory/tool/{name}", json=args or {})
            return r.json().get("result") if r.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None

    # -- the checks ------------------------------------------------------------------
    def server(self, checks: list[Check]) -> bool:
        try:
            r = self.http.get(f"{self.url}/healthz")
            version = r.json().get("result", {}).get("version", "?")
        except (httpx.HTTPError, ValueError) as exc:
            checks.append(Check("server", PROBLEM, f"{self.url} does not answer ({type(exc).__name__})",
                                f"start it: {_serve_command(self.url)}; another address: set PALIMPSEST_URL"))
            return False
        checks.append(Check("server", OK, f"{self.url} answers (palimpsest {version}); panel at {self.url}/panel"))
        return True

    def store(self, checks: list[Check]) -> None:
        """The server's index database, as its `/readyz` says (the server answered while PostgreSQL was down,
        and doctor said all was well)."""
        try:
            r = self.http.get(f"{self.url}/readyz")
            body = r.json()
        except (httpx.HTTPError, ValueError) as exc:
            checks.append(Check("store", PROBLEM, f"/readyz did not answer ({type(exc).__name__})", "check the server's log"))
            return
        if r.status_code == 200:
            return
        error = body.get("error") or {} if isinstance(body, dict) else {}
        if r.status_code == 401:
            checks.append(Check("store", PROBLEM, "the server wants a token", "set PALIMPSEST_TOKEN to the server's token"))
        elif error.get("code") == "journal_unwritable":
            checks.append(Check("store", PROBLEM, "the server's home folder is not writable: nothing can be journaled",
                                "give the server's user write access to its home (PALIMPSEST_HOME)"))
        else:
            checks.append(Check("store", PROBLEM, f"the server's index database does not answer ({error.get('message') or r.status_code}); "
                                "search and recall fail until it does, writes are journaled and indexed when it is back",
                                "start the database (PostgreSQL) or check PALIMPSEST_STORE and the server's log"))

    def capture(self, checks: list[Check]) -> None:
        try:
            r = self.http.post(f"{self.url}/api/capture", json={})
        except httpx.HTTPError as exc:
            checks.append(Check("capture", PROBLEM, f"no answer: {exc}", "check the server's log"))
            return
        if r.status_code == 400:
            checks.append(Check("capture", OK, "the server accepts capture batches"))
        elif r.status_code == 404:
            checks.append(Check("capture", PROBLEM, "the server refuses capture: writes are off (capture is a write)",
                                "restart the server with PALIMPSEST_ENABLE_WRITE=1, then `palimpsest capture --requeue-dead`"))
        elif r.status_code == 401:
            checks.append(Check("capture", PROBLEM, "the server wants a token", "set PALIMPSEST_TOKEN to the server's token"))
        else:
            checks.append(Check("capture", PROBLEM, f"the server answered {r.status_code}: {r.text[:200]}", "check the server's log"))

    def hooks(self, checks: list[Check]) -> None:
        seen = False
        for harness, folder in setup.harness_dirs(self.env).items():
            if not folder.is_dir():
                continue
            seen = True
            found = setup.installed(harness, self.env)
            missing = [e for e in HOOK_EVENTS if e not in found]
            broken = sorted({c for cs in found.values() for c in cs if not _runnable(c)})
            if missing:
                checks.append(Check(f"hooks {harness}", PROBLEM, f"no palimpsest hook on {', '.join(missing)} in "
                                    f"{setup.files_of(harness, self.env)[0]}", f"palimpsest setup {harness}"))
            elif harness == "claude-code" and (late := [e for e in setup.SESSION_HOOKS if e not in found]):
                checks.append(Check(f"hooks {harness}", WARN, f"no palimpsest capture on {', '.join(late)}: a turn ended by an "
                                    "interrupt and /exit is not captured, nor a compaction before the next prompt's recall",
                                    f"palimpsest setup {harness}"))
            elif broken:
                checks.append(Check(f"hooks {harness}", PROBLEM, f"the hook's binary is missing: {broken[0]}",
                                    f"palimpsest setup {harness} (writes this binary's path)"))
            else:
                checks.append(Check(f"hooks {harness}", OK, "recall before each turn, capture after it"))
        urls = setup.hooks_urls(self.env)
        if len(urls) > 1:  # (doctor asked one server: the default)
            checks.append(Check("hooks", WARN, f"the hooks talk to {len(urls)} servers: {', '.join(sorted(urls))}",
                                "run `palimpsest setup <harness> --url URL` with one URL for all, or `palimpsest doctor --url` each"))
        if not seen:
            checks.append(Check("hooks", WARN, "no Claude Code, Codex, qwen-code or OpenCode configuration found on this machine",
                                "palimpsest setup claude-code | codex | qwen-code | opencode | mcp-client"))

    def embedder(self, checks: list[Check]) -> None:
        if self.stats is None:
            name = self.settings.embedder
            checks.append(Check("embedder", WARN, f"configured: {name} (the server was not asked)", ""))
            return
        e = self.stats.get("embeddings", {})
        if e.get("embedder") == "none":
            checks.append(Check("embedder", WARN, "none: search and recall are keyword-only",
                                "unset PALIMPSEST_EMBEDDER (the local model) and restart the server"))
        elif e.get("failed"):
            checks.append(Check("embedder", PROBLEM, f"{e['failed']} embedding jobs failed", "palimpsest jobs status; palimpsest jobs retry-failed --task embed"))
        else:
            coverage = ", ".join(f"{m}: {c:.0%}" for m, c in (e.get("coverage") or {}).items()) or "no vectors yet"
            checks.append(Check("embedder", OK, f"{e.get('embedder')} ({coverage}; {e.get('queued', 0)} queued)"))

    def llm(self, checks: list[Check]) -> None:
        """The LLM endpoint, when one is configured: asked for its models (no tokens spent)."""
        if not self.settings.llm_url:
            return
        from ..llm import LLM

        client = LLM.from_settings(self.settings)
        assert client is not None
        state, detail = client.probe()
        fix = {OK: "", WARN: "check PALIMPSEST_LLM_URL and PALIMPSEST_LLM_MODEL (`palimpsest settings`)",
               PROBLEM: "check PALIMPSEST_LLM_URL and PALIMPSEST_LLM_API_KEY (`palimpsest settings`); until then distillation, "
                        "summaries and the curator use the local rules"}[state]
        if state == OK:
            state, detail, fix = self._llm_replies(detail)
        checks.append(Check("llm", state, detail, fix))

    def _llm_replies(self, detail: str) -> tuple[str, str, str]:
        """What the endpoint's replies were worth: an endpoint that lists its models and answers prose (or a stream, or
        errors) to every call had been "ok" while each job fell back to the local rules."""
        usage = self._counts().get("llm") or {}
        counts = [u for u in usage.values() if isinstance(u, dict)]
        calls, invalid, failures = (sum(int(u.get(k) or 0) for u in counts) for k in ("calls", "invalid", "failures"))
        if invalid + failures >= LLM_BAD_MIN and 2 * (invalid + failures) > calls + failures:
            return (WARN, f"{detail}, but of its {calls + failures} replies {invalid} broke the schema and {failures} failed",
                    "palimpsest llm parked (what it answered); palimpsest jobs status; until then the local rules stand in")
        return OK, detail, ""

    def _counts(self) -> dict[str, Any]:
        """The jobs, the quarantine and the LLM's usage: the server's stats when it answered
        ({} when it would not give them), else this machine's home's."""
        return (self.stats or {}) if self.up else self._read_home()

    def _read_home(self) -> dict[str, Any]:
        """The job counts and the quarantine of the home, read once: {"missing": True} for a
        home or store not created yet, {"error": text} when it cannot be opened."""
        if self._home is None:
            from ..memory import Memory

            if not Memory.made(self.settings):  # opening would create them
                self._home = {"missing": True}
                return self._home
            try:
                with Memory(settings=self.settings) as memory:
                    self._home = {"jobs": memory.jobs(), "quarantine": memory.quarantine_stats(), "llm": memory.llm_usage()}
            except Exception as exc:  # noqa: BLE001 — a report, not a failure
                self._home = {"error": str(exc)}
        return self._home

    def backlog(self, checks: list[Check]) -> None:
        counts = self._counts()
        if counts.get("missing"):
            if _here(self.url):
                checks.append(Check("jobs", WARN, f"no memory at {self.settings.home_path} yet", "palimpsest serve (it creates it)"))
            else:  # a client machine: its server is elsewhere, and a second one here would serve an empty memory
                checks.append(Check("jobs", WARN, f"the job queue is the server's at {self.url}, which does not answer",
                                    "see the server check"))
            return
        if "error" in counts:
            checks.append(Check("jobs", WARN, f"the job queue could not be read: {counts['error']}", "palimpsest jobs status"))
            return
        if "jobs" not in counts:  # the server answered and did not give its stats (a token missing), or an older server's
            checks.append(Check("jobs", WARN, f"the job queue of the server at {self.url} could not be read",
                                "`palimpsest jobs status` where the server runs"))
            return
        tasks = counts["jobs"]["tasks"]
        queued = sum(s.get("queued", 0) + s.get("running", 0) for s in tasks.values())
        failed = sum(s.get("failed", 0) for s in tasks.values())
        detail = f"{queued} waiting, {failed} failed"
        if failed:
            checks.append(Check("jobs", PROBLEM, detail, "palimpsest jobs status (why); palimpsest jobs retry-failed"))
        elif queued > BACKLOG_WARN:
            checks.append(Check("jobs", WARN, detail, "keep `palimpsest serve` running, or `palimpsest jobs run`"))
        else:
            checks.append(Check("jobs", OK, detail))

    def quarantine(self, checks: list[Check]) -> None:
        found = self._counts().get("quarantine")
        if not found:
            return  # no home yet, or it could not be read: the jobs check says which
        if not found["count"]:
            checks.append(Check("quarantine", OK, "every journal line is indexed"))
            return
        last = found["latest"][0] if found["latest"] else {}
        where = f"; latest: session {last.get('session')} line {last.get('line')}: {str(last.get('reason', ''))[:200]}" if last else ""
        checks.append(Check("quarantine", WARN, f"{found['count']} journal events the index refused (kept in the journal, "
                            f"not searchable){where}", "palimpsest retry-quarantined (after an upgrade); palimpsest stats --json shows them"))

    def last_capture(self, checks: list[Check]) -> None:
        states = list((self.settings.home_path / "capture-state").glob("*.json"))
        if not states:
            checks.append(Check("last capture", WARN, "no capture yet", "run a turn in the harness; see the hooks check"))
            return
        newest = max(p.stat().st_mtime for p in states)
        ago = time.time() - newest
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(newest))
        checks.append(Check("last capture", OK, f"{when} ({_ago(ago)} ago, {len(states)} transcripts followed)"))

    def spool(self, checks: list[Check]) -> None:
        spool = Spool(self.settings.home_path)
        pending = spool.pending()
        dead = sorted(spool.dead.glob("*.json")) if spool.dead.is_dir() else []
        if dead:
            reason = _reason(dead[-1])
            checks.append(Check("dead letters", PROBLEM, f"{len(dead)} batches refused by the server; last: {reason}",
                                "fix the cause, then `palimpsest capture --requeue-dead`"))
        else:
            checks.append(Check("dead letters", OK, "none"))
        refusal = spool.refusal()
        if pending and refusal:  # (the server answers and refuses this client: "start the server" was no fix)
            checks.append(Check("spool", PROBLEM, f"{pending} batches waiting: the server refused the last: {refusal}",
                                "set what it names; they replay at the next capture, or `palimpsest capture --replay`"))
        elif pending:
            checks.append(Check("spool", WARN, f"{pending} batches waiting for the server",
                                "start the server; they replay at the next capture, or `palimpsest capture --replay`"))
        else:
            checks.append(Check("spool", OK, "empty"))


def _runnable(command: str) -> bool:
    try:
        first = shlex.split(command)[0]
    except (ValueError, IndexError):
        return False
    return os.path.isabs(first) and os.access(first, os.X_OK)


def _reason(path: Path) -> str:
    try:
        return path.with_name(path.name + ".reason").read_text(encoding="utf-8").strip()[:300]
    except OSError:
        return "(no reason recorded)"


def _ago(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"


def report(checks: list[Check]) -> dict[str, Any]:
    return {"ok": all(c.state != PROBLEM for c in checks), "checks": [c.to_dict() for c in checks]}


def run(settings: Settings, env: dict[str, str], url: str | None = None) -> dict[str, Any]:
    return report(Doctor(settings, env, url).run())



def _serve_command(url: str) -> str:
    """How to serve `url` here: the hooks named port 18110 and the fix said `palimpsest serve`, which listens on 8765
    (found by a new user)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return "`palimpsest serve`"
    if not _here(url):
        return f"`palimpsest serve` on {host}"
    return f"`palimpsest serve --port {port}`" if port and port != 8765 else "`palimpsest serve` (or `make run`)"


def _here(url: str) -> bool:
    """Whether `url` names a server of this machine (loopback, `settings.loopback_host`; a URL naming no host is read
    as this machine's), not a shared one elsewhere."""
    from urllib.parse import urlsplit

    from ..settings import loopback_host

    try:
        host = urlsplit(url).hostname
    except ValueError:
        return True
    return host is None or loopback_host(host)
