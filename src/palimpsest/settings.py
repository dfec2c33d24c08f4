"""Every setting, declared once: name, default, environment variable, help.

Only this module reads the environment, and only when `Settings.load()` is called —
importing Palimpsest has no side effects. `palimpsest settings` renders this table with
the current value and where it came from (default, environment, or the caller).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # not `typing`'s: the recall hook imports this module, and `typing` costs it ~10 ms
if TYPE_CHECKING:
    from pathlib import Path  # (imported where it is used: `pathlib` costs the hook ~7 ms more)
    from typing import Any


class Setting:
    """One setting. A plain class rather than a dataclass: the recall hook, a process a
    harness starts before every turn, imports this module, and `dataclasses` costs ~15 ms."""

    __slots__ = ("default", "env", "help", "name", "parse")

    def __init__(self, name: str, default: Any, env: str, help: str, parse: Callable[[str], Any] = str) -> None:
        self.name, self.default, self.env, self.help, self.parse = name, default, env, help, parse


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"not a boolean: {text!r}")


def _zone_name(text: str) -> str:
    """An IANA time zone name this machine knows (tzdata ships with Palimpsest)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(text.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {text.strip()[:60]!r}: use an IANA name such as Europe/Berlin or America/New_York") from None
    return text.strip()


def _seconds(text: str) -> float:
    """A positive, finite number of seconds."""
    value = float(text)
    if not 0 < value < float("inf"):
        raise ValueError(f"must be a positive number of seconds, got {text.strip()[:40]!r}")
    return value


def _quiet_minutes(text: str) -> float:
    """0 (off), or minutes up to a year (a bound a date can be counted with: 1e10 had failed every write's derived jobs)."""
    value = float(text)
    if not 0 <= value <= 525_600:
        raise ValueError(f"must be 0 (off) or a number of minutes up to 525600 (a year), got {text.strip()[:40]!r}")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(f"must be 0 or more, got {text.strip()[:40]!r}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(f"must be 1 or more, got {text.strip()[:40]!r}")
    return value


def _http_url(text: str) -> str:
    """Empty, or a URL with its http(s) scheme ("127.0.0.1:8080/v1" had failed every call, retried as a network error)."""
    value = text.strip()
    if value and not value.lower().startswith(("http://", "https://")):
        raise ValueError(f"must start with http:// or https://, got {value[:40]!r}")
    return value


def delays(text: str) -> list[float]:
    """Comma-separated seconds, each 0 or more (`llm_backoff`)."""
    try:
        parts = [float(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise ValueError(f"must be seconds separated by commas (e.g. 5,10,15), got {text.strip()[:40]!r}") from None
    if any(not 0 <= p < float("inf") for p in parts):
        raise ValueError(f"each delay must be 0 or more seconds, got {text.strip()[:40]!r}")
    return parts


OWNER_TAGS = ("user", "project")  # the tag keys that say whose a session is (their values are identities, matched exactly)
OWNER_MARKS = ("agent", "channel", *OWNER_TAGS)  # what may tell whose a fact is (`fact_owners`)


def _owners(text: str) -> str:
    """Comma-separated marks of `OWNER_MARKS` (`fact_owners`)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in parts if p not in OWNER_MARKS]
    if unknown:
        raise ValueError(f"must be some of {', '.join(OWNER_MARKS)} separated by commas, got {unknown[0][:40]!r}")
    return ",".join(parts)


def _delays(text: str) -> str:
    delays(text)
    return text


STRUCTURED_MODES = ("json_schema", "grammar", "guided_json")  # how a JSON schema is sent (`llm.structured_call`)


def _structured(text: str) -> str:
    value = text.strip()
    if value not in ("auto", *STRUCTURED_MODES):
        raise ValueError(f"must be auto, {', '.join(STRUCTURED_MODES[:-1])} or {STRUCTURED_MODES[-1]}, got {value[:40]!r}")
    return value


EMBEDDERS = ("local", "openai", "hash", "none")


def _embedder(text: str) -> str:
    """One of `EMBEDDERS` (hash: a deterministic stand-in without meaning, for tests and benches): a typo had turned search
    keyword-only with a note at every query (found by a reader of the docs)."""
    value = text.strip()
    if value not in EMBEDDERS:
        raise ValueError(f"must be local, openai, hash or none, got {value[:40]!r}")
    return value


SETTINGS: tuple[Setting, ...] = (
    Setting("home", "~/.palimpsest", "PALIMPSEST_HOME", "Folder holding journals, spool and the default database."),
    Setting("store", "", "PALIMPSEST_STORE", "Index database: sqlite:///PATH or postgresql://… (default sqlite:///<home>/palimpsest.db)."),
    Setting("enable_write", False, "PALIMPSEST_ENABLE_WRITE", "Allow write tools over HTTP and MCP.", _bool),
    Setting("max_event_bytes", 16 * 1024 * 1024, "PALIMPSEST_MAX_EVENT_BYTES", "Largest single event accepted (bytes of UTF-8); larger ones are refused with a clear error.", int),
    Setting("field_cap", 16000, "PALIMPSEST_FIELD_CAP", "content / tool_result are capped at this many UTF-16 code units in the index; get_full restores them.", int),
    Setting("timezone", "", "PALIMPSEST_TIMEZONE", "Time zone messages are said in when they come with no time or a UTC one (IANA name, e.g. Europe/Berlin; empty: this machine's): the day 'yesterday' or 'today' means, and the clock the panel and CLI listings show. A `created_at` written without any zone (`2024-07-01T10:00:00`) is read as UTC, as are `--since`/`--until` without one: give the offset (`+02:00`) to say local time.", _zone_name),
    Setting("instant_idle_hours", 24.0, "PALIMPSEST_INSTANT_IDLE_HOURS", "Instant sessions idle this long are swept from the index (journal kept).", float),
    Setting("sweep_minutes", 30.0, "PALIMPSEST_SWEEP_MINUTES", "How often `serve` sweeps idle instant sessions.", float),
    Setting("embedder", "local", "PALIMPSEST_EMBEDDER", "Embedding model: local (MiniLM ONNX, shipped), openai (any /v1/embeddings endpoint), none, or hash (tests: no meaning).", _embedder),
    Setting("embed_threads", 2, "PALIMPSEST_EMBED_THREADS", "onnxruntime intra-op threads for the local embedder.", int),
    Setting("embed_cache", "", "PALIMPSEST_EMBED_CACHE", "Embedding cache file shared across memories (default <home>/embed-cache.sqlite; 'off' disables)."),
    Setting("embed_timeout", 300.0, "PALIMPSEST_EMBED_TIMEOUT", "Seconds one call of the embedding model (a batch is cut into calls of at most 16,000 characters) may run before the job fails and is retried.", float),
    Setting("query_embed_timeout", 5.0, "PALIMPSEST_QUERY_EMBED_TIMEOUT", "Seconds a query embedding may take before search goes on keyword-only.", float),
    Setting("embed_url", "", "PALIMPSEST_EMBED_URL", "Base URL of an OpenAI-compatible embeddings endpoint (…/v1)."),
    Setting("embed_model", "", "PALIMPSEST_EMBED_MODEL", "Model name sent to the embeddings endpoint."),
    Setting("embed_api_key", "", "PALIMPSEST_EMBED_API_KEY", "Bearer key for the embeddings endpoint."),
    Setting("recipe", "hybrid", "PALIMPSEST_RECIPE", "Search recipe: hybrid (weighted sum) or rrf (reciprocal rank fusion)."),
    Setting("w_fts", 0.3, "PALIMPSEST_W_FTS", "Weight of the normalised BM25 score.", float),
    Setting("w_semantic", 0.3, "PALIMPSEST_W_SEMANTIC", "Weight of the cosine similarity.", float),
    Setting("w_temporal", 0.05, "PALIMPSEST_W_TEMPORAL", "Weight of the time decay (DESIGN suggests 0.3; 0.05 measured best, see docs/retrieval.md).", float),
    Setting("w_importance", 0.1, "PALIMPSEST_W_IMPORTANCE", "Weight of importance by kind.", float),
    Setting("workspace", "", "PALIMPSEST_WORKSPACE", "Folder with SOUL.md, USER.md, AGENTS.md, … and memory/<date>.md for `palimpsest context`."),
    Setting("w_session", 0.0, "PALIMPSEST_W_SESSION", "Re-ranking bonus for hits whose session has other strong candidates.", float),
    Setting("w_reply", 0.5, "PALIMPSEST_W_REPLY", "Share of its reply's higher score a turn inherits (hybrid; see docs/retrieval.md).", float),
    Setting("w_speaker", 0.15, "PALIMPSEST_W_SPEAKER", "Bonus for turns by whom the query is about: first person → user, a named speaker → theirs (hybrid).", float),
    Setting("w_when", 0.2, "PALIMPSEST_W_WHEN", "Bonus for messages said on, or speaking of, the time a query names ('on 1 May 2022', 'last month'; hybrid).", float),
    Setting("w_answer", 0.3, "PALIMPSEST_W_ANSWER", "Share of a best hit's lead inherited by its reply when the hit is a question (hybrid).", float),
    Setting("w_follow", 0.3, "PALIMPSEST_W_FOLLOW", "Share of a best hit's lead inherited by the turn answering the listener's follow-up question about it (two turns on, after a question; hybrid).", float),
    Setting("w_topic", 0.3, "PALIMPSEST_W_TOPIC", "Share of a best hit's lead inherited by the same speaker's turn two before it, when the hit answers a question about that turn (hybrid).", float),
    Setting("w_dated", 0.1, "PALIMPSEST_W_DATED", "Bonus for messages that name a time of their own ('last Friday', 'in 2019') when the query asks when ('When did …', 'What year …'; hybrid).", float),
    Setting("w_seed", 0.05, "PALIMPSEST_W_SEED", "Weight of the second keyword round, seeded by names in the first hits that the query does not hold (hybrid).", float),
    Setting("session_cap", 0, "PALIMPSEST_SESSION_CAP", "Aggregation questions ('how many', 'all the' …): at most this many hits of one session before the other sessions' (0: no cap).", int),
    Setting("floor_similarity", "auto", "PALIMPSEST_FLOOR_SIMILARITY", "Relevance floor: a hit with no keyword match needs this cosine to the query; auto (measured for the local model, off for others), off, or a cosine (docs/retrieval.md)."),
    Setting("floor_unknown", "auto", "PALIMPSEST_FLOOR_UNKNOWN", "Relevance floor: a query of the user's (first or second person) naming only what no message holds returns nothing unless a message is this close; auto, off, or a cosine."),
    Setting("floor_stranger", "auto", "PALIMPSEST_FLOOR_STRANGER", "Relevance floor: a query about a third party naming only what no message holds returns nothing unless a message is this close; auto, off, or a cosine."),
    Setting("decay_clock", "created", "PALIMPSEST_DECAY_CLOCK", "Temporal decay counts days since created or since last accessed.", str),
    Setting("reinforcement_cap", 10, "PALIMPSEST_REINFORCEMENT_CAP", "Access counts above this add no more temporal boost.", int),
    Setting("ann_threshold", 50_000, "PALIMPSEST_ANN_THRESHOLD", "SQLite: vector counts above this answer unfiltered queries from an HNSW graph (built in the background) instead of exact cosine.", int),
    Setting("worker_batch", 32, "PALIMPSEST_WORKER_BATCH", "Jobs a worker claims at once.", int),
    Setting("host", "127.0.0.1", "PALIMPSEST_HOST", "Address `palimpsest serve` binds to; anything but loopback requires a token."),
    Setting("port", 8765, "PALIMPSEST_PORT", "Port `palimpsest serve` listens on.", int),
    Setting("store_wait", 300.0, "PALIMPSEST_STORE_WAIT", "Seconds `serve` and `worker` wait at start for a store that does not answer yet (a server started before its PostgreSQL); 0: fail at once.", float),
    Setting("token", "", "PALIMPSEST_TOKEN", "Bearer token the server requires (and the capture client sends); required to bind beyond loopback."),
    Setting("max_body_bytes", 32 * 1024 * 1024, "PALIMPSEST_MAX_BODY_BYTES", "Largest HTTP request body the server reads; larger ones get 413.", int),
    Setting("cors_origins", "", "PALIMPSEST_CORS_ORIGINS", "Comma-separated origins allowed by CORS (default: none, CORS closed)."),
    Setting("url", "http://127.0.0.1:8765", "PALIMPSEST_URL", "Server the capture client posts to."),
    Setting("mcp_agent", "", "PALIMPSEST_AGENT", "Agent recorded on MCP writes (memory_append, memory_ingest_session) that name none."),
    Setting("mcp_channel", "", "PALIMPSEST_CHANNEL", "Channel recorded on MCP writes that name none."),
    Setting("mcp_persona", "", "PALIMPSEST_PERSONA", "Persona recorded in the session settings (`persona`) of MCP writes that name none."),
    Setting("capture_timeout", 10.0, "PALIMPSEST_CAPTURE_TIMEOUT", "Seconds the capture client waits for the server before spooling.", float),
    Setting("curator_model", True, "PALIMPSEST_CURATOR_MODEL", "Let the curator's pair model (palimpsest.facts.pairs, shipped weights) read again what its rules leave at related or new, with an embedder and no LLM: it may confirm a paraphrase or unlink a pair, never link nor supersede (off: the rules alone).", _bool),
    Setting("fact_owners", "channel,user,project", "PALIMPSEST_FACT_OWNERS", "What tells whose a fact is: statements heard in sessions of different values of one of these (the session's channel or agent, its user: or project: tag) are never one fact, nor does one correct the other. Add agent when each agent serves other people (agents are one user's harnesses by default).", _owners),
    Setting("facts_snapshot", True, "PALIMPSEST_FACTS_SNAPSHOT", "Rewrite <home>/facts.jsonl after every fact change (off: only on `palimpsest facts snapshot`).", _bool),
    Setting("code_db", "", "PALIMPSEST_CODE_DB", "SQLite file of the code graph (default <home>/code.db); derived data, rebuilt by `code index`."),
    Setting("code_max_file_bytes", 1_000_000, "PALIMPSEST_CODE_MAX_FILE_BYTES", "Source files larger than this are not parsed by `code index` (reported as skipped).", int),
    Setting("codex_home", "~/.codex", "CODEX_HOME", "Codex CLI's home; `palimpsest capture` finds a Codex session's rollout file under <codex_home>/sessions."),
    Setting("body_timeout", 30.0, "PALIMPSEST_BODY_TIMEOUT", "Seconds the server waits for the next piece of a request body before answering 408 (slow clients).", float),
    Setting("capture_loopback", True, "PALIMPSEST_CAPTURE_LOOPBACK", "Accept POST /api/capture from loopback clients while writes are off: capture is how the owner's own harness writes; the write tools (a model's writes) still need PALIMPSEST_ENABLE_WRITE=1. Behind a reverse proxy every client looks local: set 0.", _bool),
    Setting("request_timeout", 60.0, "PALIMPSEST_REQUEST_TIMEOUT", "Seconds a request may take before the server answers 503 deadline_exceeded (its work is left to finish; retry writes with their event_key); 0: no limit.", float),
    Setting("header_timeout", 15.0, "PALIMPSEST_HEADER_TIMEOUT", "Seconds a client may take to send a request's headers (a new connection: from connecting) before the server closes it (slow clients); 0: no limit.", float),
    Setting("llm_url", "", "PALIMPSEST_LLM_URL", "Base URL of an OpenAI-compatible chat endpoint (…/v1); empty: no LLM, deterministic local fallbacks.",
            _http_url),
    Setting("llm_model", "", "PALIMPSEST_LLM_MODEL", "Model name sent to the chat endpoint."),
    Setting("llm_api_key", "", "PALIMPSEST_LLM_API_KEY", "Bearer key for the chat endpoint."),
    Setting("llm_key_command", "", "PALIMPSEST_LLM_KEY_COMMAND", "Command whose output is the bearer key, run before each call (short-lived tokens)."),
    Setting("llm_timeout", 120.0, "PALIMPSEST_LLM_TIMEOUT", "Seconds one chat request may take before it counts as failed and is retried.", _seconds),
    Setting("llm_retries", 3, "PALIMPSEST_LLM_RETRIES", "Retries of a chat request after a timeout, a connection error, 429 or 5xx.", _count),
    Setting("llm_backoff", "5,10,15", "PALIMPSEST_LLM_BACKOFF", "Seconds to wait before each retry, comma-separated.", _delays),
    Setting("llm_wait", 20.0, "PALIMPSEST_LLM_WAIT", "Seconds a call someone waits on may take — the curator's verdict inside a write, an answer to a search — tried once (then the write is parked for a later verdict; the search's hits come back without an answer).", _seconds),
    Setting("llm_structured", "auto", "PALIMPSEST_LLM_STRUCTURED", "How a JSON schema is sent: auto, json_schema (response_format), grammar (llama.cpp GBNF) or guided_json (vLLM).", _structured),
    Setting("llm_max_tokens", 1024, "PALIMPSEST_LLM_MAX_TOKENS", "Completion tokens asked for by default.", _positive),
    Setting("distill", True, "PALIMPSEST_DISTILL", "Distill every closed turn into facts (LLM, or the local fallback without one).", _bool),
    Setting("tool_synth", True, "PALIMPSEST_TOOL_SYNTH", "Describe tool calls that have no text (LLM, or a template sentence without one).", _bool),
    Setting("synthesize_answers", False, "PALIMPSEST_SYNTHESIZE_ANSWERS", "Allow memory_search synthesize=true to ask the LLM for an answer drawn from the hits.", _bool),
    Setting("compact_after", 200, "PALIMPSEST_COMPACT_AFTER", "A session with more unsummarised messages than this is compacted, oldest first.", int),
    Setting("compact_quiet_minutes", 0.0, "PALIMPSEST_COMPACT_QUIET_MINUTES", "A session quiet this long has all its messages summarised (when it has at least four unsummarised), so a short chat gets its summary and wiki pages too (0: off, the default: see docs/llm.md).", _quiet_minutes),
    Setting("compact_keep", 50, "PALIMPSEST_COMPACT_KEEP", "Newest messages of a session left unsummarised by routine compaction.", int),
    Setting("summary_leaf_tokens", 7000, "PALIMPSEST_SUMMARY_LEAF_TOKENS", "Token budget of the messages one leaf summary covers.", int),
    Setting("summary_branch_tokens", 14000, "PALIMPSEST_SUMMARY_BRANCH_TOKENS", "Token budget of the leaf summaries one branch summary covers.", int),
    Setting("summary_root_tokens", 20000, "PALIMPSEST_SUMMARY_ROOT_TOKENS", "Token budget of the branch summaries a root summary reads.", int),
    Setting("summary_max_tokens", 1200, "PALIMPSEST_SUMMARY_MAX_TOKENS", "Longest summary written (tokens), by the LLM or the extractive fallback.", int),
    Setting("doc_chunk_tokens", 0, "PALIMPSEST_DOC_CHUNK_TOKENS", "Tokens per document chunk, heading path included (0: the embedding model's input limit, 254 for the local model).", int),
    Setting("tags_suggest", True, "PALIMPSEST_TAGS_SUGGEST", "Propose tags after each leaf summary (or once a session without summaries goes quiet).", _bool),
    Setting("tags_quiet_minutes", 30.0, "PALIMPSEST_TAGS_QUIET_MINUTES", "A session without summaries is tagged once it has been quiet this long.", float),
    Setting("tags_max_suggestions", 5, "PALIMPSEST_TAGS_MAX_SUGGESTIONS", "Most tags proposed for one leaf summary or quiet session.", int),
    Setting("tags_reap_minutes", 60.0, "PALIMPSEST_TAGS_REAP_MINUTES", "How often `serve` reaps tags whose session or summary is gone.", float),
    Setting("wiki_extract", True, "PALIMPSEST_WIKI_EXTRACT", "Mine each new leaf summary into the topic wiki (the extract-wiki job).", _bool),
    Setting("wiki_min_leaves", 2, "PALIMPSEST_WIKI_MIN_LEAVES", "A name becomes a subject page once this many leaf summaries mention it.", int),
    Setting("wiki_statements_per_leaf", 3, "PALIMPSEST_WIKI_STATEMENTS_PER_LEAF", "Most statements one leaf adds to one page.", int),
    Setting("wiki_backfill_batch", 50, "PALIMPSEST_WIKI_BACKFILL_BATCH", "Leaves re-mined per wiki-backfill job after the pipeline version is raised.", int),
    Setting("wiki_backfill_delay", 300.0, "PALIMPSEST_WIKI_BACKFILL_DELAY", "Seconds a wiki-backfill batch waits behind fresh work (low priority).", float),
)

_BY_NAME = {s.name: s for s in SETTINGS}


class Settings:
    """Resolved settings. `Settings.load()` reads the environment; keywords override it."""

    def __init__(self, values: dict[str, Any], sources: dict[str, str]) -> None:
        self._values = values
        self._sources = sources
        self._cached: dict[str, Any] = {}  # what is worked out of the values once (`zone`)

    @classmethod
    def load(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        sources: dict[str, str] = {}
        for s in SETTINGS:
            if s.name in overrides and overrides[s.name] is not None:
                values[s.name], sources[s.name] = overrides[s.name], "argument"
            elif env.get(s.env) not in (None, ""):
                try:
                    values[s.name] = s.parse(env[s.env])
                except ValueError as exc:
                    from .errors import InvalidInput

                    raise InvalidInput(f"{s.env}: {exc}") from None
                sources[s.name] = "environment"
            else:
                values[s.name], sources[s.name] = s.default, "default"
        unknown = set(overrides) - set(_BY_NAME)
        if unknown:
            raise TypeError(f"unknown settings: {sorted(unknown)}")
        return cls(values, sources)

    def source(self, name: str) -> str:
        """Where a setting's value came from: `default`, `environment` or `argument`."""
        return self._sources[name]

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def zone(self) -> Any:
        """`timezone` as a `tzinfo`, or None for this machine's zone (`datetime.astimezone()`);
        `datetime.UTC` for a machine whose zone is UTC all year (nothing to work out per message).
        Worked out once per `Settings` (search asks on every query)."""
        if "zone" not in self._cached:
            self._cached["zone"] = self._zone()
        return self._cached["zone"]

    def _zone(self) -> Any:
        if not self.timezone:
            import time

            if time.timezone == 0 and not time.daylight:
                from datetime import UTC

                return UTC
            return None
        from zoneinfo import ZoneInfo

        try:
            return ZoneInfo(_zone_name(self.timezone))
        except ValueError as exc:
            from .errors import InvalidInput

            raise InvalidInput(f"timezone: {exc}") from None

    @property
    def home_path(self) -> Path:
        from pathlib import Path

        return Path(os.path.expanduser(str(self._values["home"]))).resolve()

    @property
    def store_url(self) -> str:
        return self._values["store"] or f"sqlite:///{self.home_path / 'palimpsest.db'}"

    def replace(self, **overrides: Any) -> Settings:
        values = dict(self._values)
        sources = dict(self._sources)
        for k, v in overrides.items():
            if k not in _BY_NAME:
                raise TypeError(f"unknown setting {k!r}")
            values[k], sources[k] = v, "argument"
        return Settings(values, sources)

    def describe(self) -> list[dict[str, Any]]:
        """Each setting with its value and its source, for `palimpsest settings`."""
        rows = []
        for s in SETTINGS:
            value = self._values[s.name]
            if s.name == "store":
                value = self.store_url
            if s.name in ("embed_api_key", "token", "llm_api_key") and value:
                value = "***"
            elif s.name in ("store", "llm_url", "embed_url") and value:
                from .errors import redact_url

                value = redact_url(value)
            rows.append({"name": s.name, "env": s.env, "value": value, "source": self._sources[s.name], "help": s.help})
        return rows


def loopback(url: str) -> bool:
    """Whether `url` names a server of this machine (a loopback host), not a shared one elsewhere. (Here, not in
    `capture.setup`: the recall hook asks it, and importing that package costs the hook httpx.)"""
    from urllib.parse import urlsplit

    return loopback_host(urlsplit(url).hostname or "")


def loopback_host(host: str) -> bool:
    """Whether a host name or address is this machine's ("localhost", 127.0.0.0/8, ::1, "[::1]"): the one reading of it
    for the server's guard, the clients and doctor."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False

def private_file(path: Path | str) -> None:
    """Create `path` for its owner only (0600) when it is not there yet: a SQLite index, cache or snapshot put outside
    the home by a setting (`--store sqlite:///…`, `PALIMPSEST_EMBED_CACHE`) holds what the home's 0700 had kept private
    (SQLite gives its -wal and -shm files the database's mode). Never raises: SQLite says what is wrong itself."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError:
        pass


def private_home(home: Path | str) -> None:
    """The home folder readable by its owner only (0700): the index, the facts snapshot and the
    vaults in it hold every message, and with a umask of 022 they were readable by every account
    on the machine (the journals themselves are 0600). Created so; an existing home of this
    user that others can read is tightened, once, with a warning — when it holds a memory already (a
    journal, an index), is empty or is named `.palimpsest`; a folder of other things is left as it is. Never raises: a home
    that cannot be changed is used as it is."""
    import logging
    from pathlib import Path

    home = Path(home)
    try:
        if not home.exists():
            home.mkdir(parents=True, mode=0o700)
            os.chmod(home, 0o700)  # whatever the umask
            return
        st = home.stat()
        ours = home.name == ".palimpsest" or not any(home.iterdir()) or any(  # (never a folder of other things: `PALIMPSEST_HOME=~`)
            (home / name).exists() for name in ("sessions", "palimpsest.db", "system", "capture-spool"))
        if ours and st.st_uid == os.getuid() and st.st_mode & 0o077:
            os.chmod(home, 0o700)
            logging.getLogger(__name__).warning("home %s was readable by other accounts: now 0700", home)
    except OSError:
        pass
