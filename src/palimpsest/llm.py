"""The LLM client: chat completions against any OpenAI-compatible endpoint.

One `LLM` per memory (`memory.llm`), configured by the `llm_*` settings; without
`llm_url` it is `None` and every caller takes its deterministic local fallback.

A call is retried on transport errors, timeouts, 429 and 5xx: `llm_retries` times (3),
sleeping the `llm_backoff` delays (5, 10, 15 s) in between; a `cancel` event stops the
wait and the request in flight. Structured calls send the JSON schema the way the
endpoint understands it (`llm_structured`): `response_format` json_schema (OpenAI,
llama.cpp, vLLM), a GBNF `grammar` compiled by `palimpsest.grammar` (llama.cpp), or
`guided_json` (vLLM). `auto` starts with json_schema and, when the endpoint refuses the
request (400), tries grammar, then guided_json, and keeps the first that worked.

Every reply of a structured call is validated against the schema (principle 4: typed,
not prose). A reply that is not JSON, breaks the schema or was cut off at max tokens is
never dropped: it is parked — journaled with its raw text as an `llm` decision event in
the system journal (`<home>/system/sessions/llm/events.jsonl`) — counted, and raised as
`InvalidReply`, so the job that asked is retried by the worker. Token accounting (calls,
prompt and completion tokens, failures, invalid replies) is kept per task in the store
and shown by `memory_stats` under `llm`.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import shlex
import subprocess
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

import httpx
from jsonschema import Draft202012Validator

from .credentials import withheld
from .decisions import DecisionLog
from .errors import Interrupted, LLMError, redact_url
from .settings import STRUCTURED_MODES, delays

log = logging.getLogger(__name__)
SYSTEM_SESSION = "llm"
MODES = STRUCTURED_MODES
PARKED_CHARS = 65536  # of an invalid reply kept in the journal
MAX_RETRY_AFTER = 60.0  # the longest wait an endpoint's Retry-After is granted
BAD_HEADER = ("the API key (llm_api_key or the output of llm_key_command) holds a character no HTTP header may carry — "
              "a line break from a file written on Windows? Nothing was sent")


class InvalidReply(LLMError):
    """The reply was not JSON, broke the schema, or was cut off; it was parked."""

    code = "llm_invalid_reply"


class Cancelled(LLMError, Interrupted):
    """The call was closed because the server stops (`LLM.stopping`)."""

    code = "llm_cancelled"


@dataclass
class Reply:
    text: str
    data: Any = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    model: str = ""
    mode: str | None = None


@dataclass
class _Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0
    invalid: int = 0
    extra: dict[str, int] = field(default_factory=dict)


def parse_backoff(text: str | list[float]) -> list[float]:
    if isinstance(text, list):
        return [float(x) for x in text]
    return delays(str(text))


class LLM:
    """An OpenAI-compatible chat endpoint. Thread-safe; one HTTP client per call."""

    def __init__(self, url: str, model: str, *, api_key: str = "", key_command: str = "", timeout: float = 120.0,
                 retries: int = 3, backoff: str | list[float] = "5,10,15", structured: str = "auto",
                 max_tokens: int = 1024, store: Any = None, decisions: DecisionLog | None = None, wait: float = 20.0) -> None:
        if structured not in ("auto", *MODES):
            raise ValueError(f"llm_structured must be auto, {', '.join(MODES)}; got {structured!r}")
        # the user info and the query of the URL apart: "http://user:pw@host/v1?key=K" had sent its requests to
        # "/v1?key=K/chat/completions", and Basic auth from the user info instead of the API key
        parts = urlsplit(url.strip().rstrip("/"))
        netloc = parts.netloc.rpartition("@")[2]
        self._basic = (unquote(parts.username or ""), unquote(parts.password or "")) if "@" in parts.netloc else None
        self._query = parts.query
        self.url = urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
        self.shown = redact_url(url.strip().rstrip("/"))  # what messages and logs say: a password in the URL never
        self.model = model
        self.api_key = api_key.strip()  # a key read from a CRLF .env file ends in "\r", which no header may carry
        self.key_command = key_command
        self.timeout = timeout
        self.wait = wait  # the `patience` of a call someone waits on (setting `llm_wait`)
        # the event a stopping server sets (`service.run_background`): a call in flight without a `cancel` of its own is
        # closed then, not waited on for the join's 30 s and left `running` until its job's lease ran out
        self.stopping: threading.Event | None = None
        self.retries = retries
        self.backoff = parse_backoff(backoff)
        self.structured = structured
        self.max_tokens = max_tokens
        self.store = store
        self.decisions = decisions
        self._mode: str | None = None if structured == "auto" else structured
        self._lock = threading.Lock()
        self._keys: set[str] = set()  # every key sent (a key command may give another each time), hidden in messages
        # a secret in the URL's query ("?api_key=…"), as given and as decoded; not "api-version=2024-01-01"
        self._keys.update(v for k, v in parse_qsl(self._query) if len(v) > 3 and _SECRET_NAME.search(k))
        self._keys.update(v for k, v in (p.partition("=")[::2] for p in self._query.split("&")) if len(v) > 3 and _SECRET_NAME.search(k))

    @classmethod
    def from_settings(cls, settings: Any, store: Any = None, decisions: DecisionLog | None = None) -> LLM | None:
        if not settings.llm_url:
            return None
        return cls(settings.llm_url, settings.llm_model, api_key=settings.llm_api_key, key_command=settings.llm_key_command,
                   timeout=settings.llm_timeout, retries=settings.llm_retries, backoff=settings.llm_backoff,
                   structured=settings.llm_structured, max_tokens=settings.llm_max_tokens, store=store, decisions=decisions,
                   wait=settings.llm_wait)

    def probe(self, timeout: float = 5.0) -> tuple[str, str]:
        """(ok | warn | problem, what was seen) of the endpoint, asked for its models (`GET
        /models`, no tokens spent): for `palimpsest doctor`, where a wrong URL, a refused key or
        an HTML page was otherwise seen only as every job falling back to the local rules."""
        try:
            r = httpx.get(self._endpoint("models"), headers=self._headers(), timeout=timeout, trust_env=False)
        except LLMError as exc:
            return "problem", self._scrub(str(exc))[:300]
        except httpx.HTTPError as exc:
            return "problem", f"{self.shown} does not answer ({type(exc).__name__}: {self._scrub(str(exc))[:120]})"
        if r.status_code in (401, 403):
            return "problem", f"{self.shown} refuses the key ({r.status_code})"
        if r.status_code != 200:
            return "warn", f"{self.shown}/models answered {r.status_code}: is the URL the API's base (…/v1)?"
        try:
            listed = [str(m.get("id")) for m in r.json().get("data", []) if isinstance(m, dict)]
        except (ValueError, AttributeError):
            return "problem", f"{self.shown}/models answered no JSON: is it an OpenAI-compatible API's base URL?"
        if listed and self.model not in listed:
            return "warn", f"{self.shown} does not list the model {self.model!r} (it lists {', '.join(listed[:5])})"
        return "ok", f"{self.shown} answers; model {self.model}"

    # -- calls ---------------------------------------------------------------
    def chat(self, messages: list[dict[str, str]], *, task: str = "chat", max_tokens: int | None = None,
             cancel: threading.Event | None = None, temperature: float = 0.0) -> Reply:
        """A plain completion: the reply's text (retried on transient failures)."""
        body = {"model": self.model, "messages": _withheld(messages), "max_tokens": max_tokens or self.max_tokens,
                "temperature": temperature, "stream": False}
        return self._call(body, task, cancel)

    def structured_call(self, messages: list[dict[str, str]], schema: dict[str, Any], *, task: str, name: str = "reply",
                        max_tokens: int | None = None, cancel: threading.Event | None = None, context: dict[str, Any] | None = None,
                        patience: float | None = None) -> Reply:
        """A completion constrained to `schema`; `reply.data` is the validated JSON. An
        invalid reply is parked (with `context`, e.g. the job it was for) and raises `InvalidReply`.
        `patience`: a call someone waits on (a verdict inside a write, an answer to a search)
        is tried once, for at most that many seconds — a hung endpoint held `facts write` 510 s
        and `search --synthesize` 512 s with the defaults' retries and 120 s timeout."""
        base = {"model": self.model, "messages": _withheld(messages), "max_tokens": max_tokens or self.max_tokens, "temperature": 0.0,
                "stream": False}
        # last resort of `auto`: the schema without `strict` (OpenAI's strict mode refuses some
        # keywords, e.g. minLength on older models); the reply is validated all the same
        modes = [self._mode] if self._mode else [*MODES, "json_schema_loose"]
        last: LLMError | None = None
        for mode in modes:
            try:
                reply = self._call({**base, **_constraint(mode, schema, name)}, task, cancel, patience)
            except _Refused as exc:
                last = LLMError(f"{self.shown} refused {mode} structured output: {exc}")
                continue
            self._mode = self._mode or mode
            reply.mode = mode
            reply.data = self._validate(reply, schema, task, context)
            return reply
        raise last or LLMError("no structured output mode worked")

    def _validate(self, reply: Reply, schema: dict[str, Any], task: str, context: dict[str, Any] | None) -> Any:
        problem = None
        if reply.finish_reason == "length":
            problem = "cut off at max tokens"
        else:
            try:
                data = _json_of(reply.text)
            except ValueError as exc:
                problem = f"not JSON: {exc}"
            else:
                errors = sorted(Draft202012Validator(schema).iter_errors(data), key=lambda e: e.path)
                if not errors:
                    return data
                err = errors[0]
                problem = f"breaks the schema at {'/'.join(map(str, err.absolute_path)) or '(root)'}: {err.message[:200]}"
        self._count(task, invalid=1)
        key = self.park(task, reply.text, problem, context)
        raise InvalidReply(f"{task}: the model's reply {problem}; parked as {key}")

    def park(self, task: str, raw: str, problem: str, context: dict[str, Any] | None = None) -> str:
        """Journal an invalid reply (never dropped); returns its key."""
        key = f"park_{time.time_ns()}"
        if self.decisions is not None:
            # a reply past PARKED_CHARS is kept as its head, with its size: 1 MB of junk a try made the journal 2 MB a session
            self.decisions.record(SYSTEM_SESSION, "parked", key=key, content=f"parked {task}: {problem}"[:300], task=task,
                                  problem=problem, reply=raw[:PARKED_CHARS], **({"reply_chars": len(raw)} if len(raw) > PARKED_CHARS else {}),
                                  context=context or {}, model=self.model)
        log.warning("LLM reply for %s parked (%s): %s", task, problem, key)
        return key

    def parked(self, limit: int = 100) -> list[dict[str, Any]]:
        return parked(self.decisions, limit) if self.decisions is not None else []

    # -- transport -----------------------------------------------------------
    def _call(self, body: dict[str, Any], task: str, cancel: threading.Event | None, patience: float | None = None) -> Reply:
        retries = self.retries if patience is None else 0
        timeout = self.timeout if patience is None else min(self.timeout, patience)
        delays = self.backoff[:retries] + [0.0] * max(0, retries - len(self.backoff))
        for attempt in range(retries + 1):
            if cancel is not None and cancel.is_set() or self.stopping is not None and self.stopping.is_set():
                raise Cancelled(f"{task}: cancelled")
            try:
                return self._once(body, task, cancel, timeout)
            except _Transient as exc:
                self._count(task, failures=1)
                said = self._scrub(str(exc))
                if attempt >= retries:
                    raise LLMError(f"{task}: {self.shown} failed {attempt + 1} times; last: {said}") from None
                delay = max(delays[attempt], min(exc.retry_after, MAX_RETRY_AFTER))  # the endpoint's Retry-After, within reason
                log.warning("LLM %s: %s; retrying in %.1f s", task, said, delay)
                if (cancel or self.stopping) is not None and (cancel or self.stopping).wait(delay):  # type: ignore[union-attr]
                    raise Cancelled(f"{task}: cancelled") from None
                if cancel is None and self.stopping is None:
                    time.sleep(delay)
        raise AssertionError("unreachable")

    def _once(self, body: dict[str, Any], task: str, cancel: threading.Event | None, timeout: float | None = None) -> Reply:
        client = httpx.Client(timeout=self.timeout if timeout is None else timeout)
        try:
            if cancel is not None:
                response = _cancellable(lambda: self._post(client, body), cancel, client, task)
            elif self.stopping is not None:  # a stopping server ends it (a thread of its own: never queued behind others)
                response = _cancellable(lambda: self._post(client, body), self.stopping, client, task, own_thread=True)
            else:
                response = self._post(client, body)
        finally:
            client.close()
        return self._reply(response, task)

    def _post(self, client: httpx.Client, body: dict[str, Any]) -> httpx.Response:
        try:
            return client.post(self._endpoint("chat/completions"), json=body, headers=self._headers())
        except httpx.TimeoutException as exc:
            raise _Transient(f"timed out after {client.timeout.read} s ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise _Transient(f"{type(exc).__name__}: {exc}") from None

    def _reply(self, response: httpx.Response, task: str) -> Reply:
        said = self._scrub(response.text[:2000])  # an endpoint may echo the request's headers, the key among them
        if response.status_code == 429 or response.status_code >= 500:
            raise _Transient(f"HTTP {response.status_code}: {said[:200]}", _retry_after(response))
        if response.status_code == 400:
            raise _Refused(said[:300])
        if response.status_code >= 300:
            self._count(task, failures=1)
            raise LLMError(f"{task}: {self.shown} answered HTTP {response.status_code}: {said[:300]}")
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            self._count(task, failures=1)
            raise LLMError(f"{task}: {self.shown} answered a stream (text/event-stream) to a request with \"stream\": false: "
                           "Palimpsest needs an endpoint that answers whole completions")
        try:
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise _Transient(f"not a chat completion: {exc}{_said_error(response)}") from None
        usage = data.get("usage") or {}
        reply = Reply(text, prompt_tokens=int(usage.get("prompt_tokens") or 0), completion_tokens=int(usage.get("completion_tokens") or 0),
                      finish_reason=choice.get("finish_reason"), model=str(data.get("model") or self.model))
        self._count(task, calls=1, prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens)
        return reply

    def _headers(self) -> dict[str, str]:
        key = self.api_key
        if self.key_command:
            key = self._run_key_command()
        if key:
            self._keys.add(key)
            if not (key.isascii() and key.isprintable()):  # a line break, a pasted non-breaking space or "…": no header carries
                raise LLMError(BAD_HEADER)  # it (httpx's error quoted the header, the key in it), refused before sending, never retried
        if key:
            return {"Authorization": f"Bearer {key}"}
        if self._basic is not None:  # the URL's user info, when no key is set (a key wins: it had been dropped silently)
            user, password = self._basic
            basic = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            self._keys.update(k for k in (basic, f"{user}:{password}", password) if len(k) > 2)
            return {"Authorization": f"Basic {basic}"}
        return {}

    def _run_key_command(self) -> str:
        """The key `llm_key_command` prints; a command that cannot run, fails or hangs is an `LLMError` (a
        missing one had crashed `doctor`, and cost a search its hits), its message without what looks like a key."""
        try:
            done = subprocess.run(shlex.split(self.key_command), check=False, capture_output=True, text=True, timeout=30)
        except ValueError as exc:  # shlex: "No closing quotation"
            raise LLMError(f"llm_key_command cannot be read as a command line: {exc}") from None
        except subprocess.TimeoutExpired:
            raise LLMError("llm_key_command did not finish in 30 s") from None
        except OSError as exc:  # not found, not executable
            raise LLMError(f"llm_key_command cannot run: {exc.strerror or exc} ({self.key_command.split()[0]!r})") from None
        if done.returncode != 0:
            said = _KEY_LIKE.sub("***", self._scrub(done.stderr.strip()))[:200]
            raise LLMError(f"llm_key_command failed ({done.returncode}): {said}")
        return done.stdout.strip()

    def _endpoint(self, path: str) -> str:
        return f"{self.url}/{path}" + (f"?{self._query}" if self._query else "")

    def _scrub(self, text: str) -> str:
        """`text` with every key this client has sent hidden, and any credential a reply quotes (an endpoint echoed
        `Basic dXNlcjpwYTU1d29yZA==`, the URL's password in base64): an error that quotes a request never shows one."""
        for key in sorted(self._keys, key=len, reverse=True):
            text = text.replace(key, "***")
        return _CREDENTIALS.sub(lambda m: f"{m.group(1)} ***", text)

    def _count(self, task: str, **counts: int) -> None:
        if self.store is None:
            return
        try:
            self.store.add_llm_usage(task, **counts)
        except Exception as exc:
            log.warning("LLM usage not recorded: %s", exc)


_CREDENTIALS = re.compile(r"\b(Basic|Bearer)\s+[A-Za-z0-9+/=._~-]{4,}")
_KEY_LIKE = re.compile(r"\b(?:sk|pk|rk|key|tok)[-_][A-Za-z0-9_-]{6,}|\b[A-Za-z0-9_-]{32,}\b")  # what a key command's error may quote
def _withheld(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The messages as sent: a credential a stored text says is not (`credentials.withheld`)."""
    return [{**m, "content": withheld(m["content"])} if isinstance(m.get("content"), str) else m for m in messages]


_FENCED = re.compile(r"\A\s*```(?:json|JSON)?[ \t]*\n(.*?)\n?```\s*\Z", re.DOTALL)


def _unfenced(text: str) -> str:
    """A reply's JSON without the Markdown fence some endpoints wrap it in (```json … ```), which ignore
    `response_format`: each such reply had been parked as "not JSON" and asked again, four calls a job."""
    m = _FENCED.match(text)
    return m.group(1) if m else text


_THINKING = re.compile(r"\A\s*<(think|thinking|reasoning)>.*?</\1>\s*", re.DOTALL | re.IGNORECASE)
_FENCE_INSIDE = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)\n?```", re.DOTALL)


def _json_of(text: str) -> Any:
    """The JSON a reply holds: the whole of it, else after a reasoning model's `<think>` block, inside a fence among prose,
    or the one object the prose around it introduces ("Here is the JSON: {…}"). Small local models answer so; each such
    reply had been parked and the job left to the local rules (found with a sloppy local model). Raises ValueError."""
    try:
        return json.loads(_unfenced(text))
    except ValueError as exc:
        first = exc
    body = _THINKING.sub("", text[:PARKED_CHARS * 64])
    fenced = _FENCE_INSIDE.search(body)
    for candidate in ([fenced.group(1)] if fenced else []) + [body]:
        start = candidate.find("{")
        if start < 0:
            continue
        try:
            data, end = json.JSONDecoder().raw_decode(candidate, start)
        except ValueError:
            continue
        if isinstance(data, dict) and "{" not in candidate[end:]:  # one object, prose around it: not two answers
            return data
    raise first


_SECRET_NAME = re.compile(r"key|token|secret|pass|auth|sig|code|credential", re.IGNORECASE)


class _Transient(Exception):
    """Worth retrying: timeouts, connection errors, 429, 5xx, a garbled body."""

    def __init__(self, message: str, retry_after: float = 0.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def _said_error(response: httpx.Response) -> str:
    """What an endpoint said was wrong in a body that is no completion (`{"error": {"message": "model failed to load"}}`,
    with a 200), for the message: it had said only "not a chat completion: 'choices'" (found with a sloppy local server)."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return ""
    said = error.get("message") if isinstance(error, dict) else error
    return f" (the endpoint said: {' '.join(str(said).split())[:300]})" if said else ""


def _retry_after(response: httpx.Response) -> float:
    """The seconds a 429 or 503 asks the client to wait (`Retry-After` in seconds; a date is not read)."""
    try:
        return max(0.0, float(response.headers.get("retry-after", "0")))
    except ValueError:
        return 0.0


class _Refused(Exception):
    """HTTP 400: the endpoint does not take this request (e.g. this structured mode)."""


_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="palimpsest-llm")


def _cancellable(fn: Any, cancel: threading.Event, client: httpx.Client, task: str, own_thread: bool = False) -> httpx.Response:
    """Run the request on a pool thread (or a thread of its own); if `cancel` is set first,
    close the client (which aborts the request in flight) and raise `Cancelled`."""
    future = _on_own_thread(fn) if own_thread else _POOL.submit(fn)
    while not future.done():
        if cancel.wait(0.05):
            client.close()
            raise Cancelled(f"{task}: cancelled")
    return future.result()


def _on_own_thread(fn: Any) -> Future[Any]:
    future: Future[Any] = Future()

    def run() -> None:
        try:
            future.set_result(fn())
        except BaseException as exc:  # noqa: BLE001 — handed to the caller as the call's own
            future.set_exception(exc)

    threading.Thread(target=run, name="palimpsest-llm-call", daemon=True).start()
    return future


def _constraint(mode: str, schema: dict[str, Any], name: str) -> dict[str, Any]:
    if mode in ("json_schema", "json_schema_loose"):
        strict = mode == "json_schema"
        return {"response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": strict}}}
    if mode == "grammar":
        from .grammar import schema_to_gbnf

        return {"grammar": schema_to_gbnf(_for_grammar(schema))}
    return {"guided_json": schema}


def parked(decisions: DecisionLog, limit: int = 100) -> list[dict[str, Any]]:
    """The newest parked replies in the decision log."""
    found = [{"key": d.key, "at": d.created_at, **d.meta} for _, d in decisions.read(SYSTEM_SESSION) if d.op == "parked"]
    return found[-limit:][::-1]


def usage(store: Any) -> dict[str, Any]:
    """Token accounting per task, for `memory_stats`."""
    try:
        return store.llm_usage()
    except Exception as exc:
        return {"error": str(exc)}


def _for_grammar(schema: Any) -> Any:
    """The schema without what a grammar cannot enforce — `pattern`, a string length past `grammar.MAX_REPEAT` — for
    the grammar only: the reply is validated against the whole schema all the same (the wiki's patch schema had made
    grammar mode fail every time)."""
    from .grammar import MAX_REPEAT

    if isinstance(schema, dict):
        return {k: _for_grammar(v) for k, v in schema.items()
                if not (k == "pattern" and isinstance(v, str) or k == "maxLength" and isinstance(v, int) and v > MAX_REPEAT)}
    if isinstance(schema, list):
        return [_for_grammar(v) for v in schema]
    return schema
