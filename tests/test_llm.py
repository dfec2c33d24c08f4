"""The LLM client against a fake OpenAI-compatible server: retries, structured modes,
validation, parking, cancellation, token accounting."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakeopenai import FakeOpenAI, Reply
from palimpsest import Memory, Settings
from palimpsest.decisions import DecisionLog
from palimpsest.llm import LLM, Cancelled, InvalidReply, LLMError

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["answer"],
          "properties": {"answer": {"type": "string"}, "n": {"type": "integer"}}}
MSGS = [{"role": "user", "content": "say something"}]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as f:
        yield f


def client(fake: FakeOpenAI, tmp_path: Path | None = None, store: object = None, **kw: object) -> LLM:
    decisions = DecisionLog(tmp_path) if tmp_path else None
    opts: dict = {"backoff": "0.01,0.01,0.01", "timeout": 5.0, "structured": "json_schema", **kw}
    return LLM(fake.url, "fake-model", store=store, decisions=decisions, **opts)


def test_plain_chat_and_headers(fake: FakeOpenAI) -> None:
    fake.push(Reply.text("hello there"))
    reply = client(fake, api_key="sk-test").chat(MSGS, task="t")
    assert reply.text == "hello there" and reply.prompt_tokens > 0 and reply.completion_tokens > 0
    assert fake.headers[0]["Authorization"] == "Bearer sk-test"
    assert fake.requests[0]["model"] == "fake-model"


def test_key_command(fake: FakeOpenAI) -> None:
    fake.push(Reply.text("ok"))
    client(fake, key_command="echo tok-123").chat(MSGS)
    assert fake.headers[0]["Authorization"] == "Bearer tok-123"


def test_retries_429_and_500_then_succeeds(fake: FakeOpenAI) -> None:
    fake.push(Reply.status(429), Reply.status(500), Reply.status(503), Reply.json({"answer": "x"}))
    reply = client(fake).structured_call(MSGS, SCHEMA, task="t")
    assert reply.data == {"answer": "x"} and len(fake.requests) == 4


def test_gives_up_after_three_retries(fake: FakeOpenAI) -> None:
    fake.push(*[Reply.status(500)] * 5)
    with pytest.raises(LLMError, match="failed 4 times"):
        client(fake).chat(MSGS)
    assert len(fake.requests) == 4


def test_backoff_is_the_setting(fake: FakeOpenAI) -> None:
    fake.push(Reply.status(429), Reply.status(429), Reply.text("ok"))
    started = time.monotonic()
    client(fake, backoff="0.2,0.3,5").chat(MSGS)
    assert 0.45 <= time.monotonic() - started < 3


def test_slow_reply_times_out_and_is_retried(fake: FakeOpenAI) -> None:
    fake.push(Reply.slow(1.5, "late"), Reply.text("on time"))
    assert client(fake, timeout=0.5).chat(MSGS).text == "on time"


def test_hanging_endpoint_fails_cleanly(fake: FakeOpenAI) -> None:
    fake.push(*[Reply.hang_forever()] * 2)
    started = time.monotonic()
    with pytest.raises(LLMError):
        client(fake, timeout=0.3, retries=1).chat(MSGS)
    assert time.monotonic() - started < 5


def test_cancel_stops_a_request_in_flight(fake: FakeOpenAI) -> None:
    fake.push(Reply.hang_forever())
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        client(fake, timeout=30).chat(MSGS, cancel=cancel)
    assert time.monotonic() - started < 3


def test_cancel_stops_the_backoff_wait(fake: FakeOpenAI) -> None:
    fake.push(Reply.status(500), Reply.text("never"))
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    with pytest.raises(Cancelled):
        client(fake, backoff="30").chat(MSGS, cancel=cancel)


@pytest.mark.parametrize("bad,problem", [
    (Reply.text("Sure! Here is the answer: x"), "not JSON"),
    (Reply.json({"answer": 3}), "breaks the schema"),
    (Reply.json({"answer": "x", "extra": 1}), "breaks the schema"),
    (Reply.cut('{"answer": "trunc'), "cut off"),
])
def test_invalid_reply_is_parked_and_counted(fake: FakeOpenAI, tmp_path: Path, sqlite_memory: Memory, bad: Reply, problem: str) -> None:
    fake.push(bad)
    llm = client(fake, tmp_path, store=sqlite_memory.store)
    with pytest.raises(InvalidReply, match=problem):
        llm.structured_call(MSGS, SCHEMA, task="distill", context={"job": 7})
    parked = llm.parked()
    assert len(parked) == 1 and parked[0]["reply"] == bad.content and parked[0]["context"] == {"job": 7}
    assert sqlite_memory.store.llm_usage()["distill"]["invalid"] == 1


def test_a_huge_invalid_reply_is_parked_as_its_head_and_size(fake: FakeOpenAI, tmp_path: Path, sqlite_memory: Memory) -> None:
    """Found by a new user: 1 MB of junk after the JSON was journaled whole on every try."""
    from palimpsest.llm import PARKED_CHARS

    fake.push(Reply.text('{"answer": "x", ' + "junk " * 200_000))  # (an object cut off by junk: no JSON to read)
    llm = client(fake, tmp_path, store=sqlite_memory.store)
    with pytest.raises(InvalidReply):
        llm.structured_call(MSGS, SCHEMA, task="distill")
    (p,) = llm.parked()
    assert len(p["reply"]) == PARKED_CHARS and p["reply_chars"] == 16 + 1_000_000


@pytest.mark.parametrize("mode,field", [("json_schema", "response_format"), ("grammar", "grammar"), ("guided_json", "guided_json")])
def test_structured_modes(fake: FakeOpenAI, mode: str, field: str) -> None:
    fake.push(Reply.json({"answer": "x"}))
    reply = client(fake, structured=mode).structured_call(MSGS, SCHEMA, task="t")
    assert field in fake.requests[0] and reply.mode == mode
    if mode == "grammar":
        assert fake.requests[0]["grammar"].startswith("root ::=")


def test_auto_falls_back_to_a_mode_the_endpoint_takes(tmp_path: Path) -> None:
    with FakeOpenAI(responder=lambda body: Reply.json({"answer": "y"}), accept_modes=("grammar",)) as fake:
        llm = client(fake, structured="auto")
        assert llm.structured_call(MSGS, SCHEMA, task="t").mode == "grammar"
        llm.structured_call(MSGS, SCHEMA, task="t")
        assert [("grammar" in r) for r in fake.requests] == [False, True, True]  # json_schema refused once, then remembered


def test_auto_ends_with_a_non_strict_schema() -> None:
    def responder(body: dict) -> Reply:
        strict = body.get("response_format", {}).get("json_schema", {}).get("strict")
        return Reply.json({"answer": "z"}) if strict is False else Reply.status(400)

    with FakeOpenAI(responder=responder) as fake:
        reply = client(fake, structured="auto").structured_call(MSGS, SCHEMA, task="t")
        assert reply.mode == "json_schema_loose" and len(fake.requests) == 4


def test_token_accounting_per_task_in_stats(fake: FakeOpenAI, memory: Memory) -> None:
    fake.push(Reply.status(500), Reply.text("a" * 40), Reply.text("b" * 80))
    llm = client(fake, store=memory.store)
    llm.chat(MSGS, task="summarize-leaf")
    llm.chat(MSGS, task="distill")
    usage = memory.stats()["llm"]
    assert usage["summarize-leaf"]["calls"] == 1 and usage["summarize-leaf"]["failures"] == 1
    assert usage["summarize-leaf"]["completion_tokens"] == 11 and usage["distill"]["completion_tokens"] == 21
    assert usage["distill"]["prompt_tokens"] > 0


def test_memory_llm_from_settings(fake: FakeOpenAI, home: Path) -> None:
    settings = Settings.load(env={}, embedder="none", llm_url=fake.url, llm_model="m", llm_backoff="0")
    with Memory(home, settings=settings) as memory:
        assert memory.llm is not None and memory.llm.model == "m" and memory.llm.backoff == [0.0]
    with Memory(home, settings=Settings.load(env={}, embedder="none")) as memory:
        assert memory.llm is None


def test_unknown_structured_mode_refused() -> None:
    with pytest.raises(ValueError):
        LLM("http://127.0.0.1:9/v1", "m", structured="politely")


# -- found by a user with an LLM configured (thirtieth session) ---------------------------------
def test_a_key_with_a_line_break_is_trimmed_and_never_shown(fake: FakeOpenAI) -> None:
    """A key read from a CRLF .env file ("sk-…\\r") had failed every call with an error quoting the
    whole key (CLI, logs, doctor, the job's last error, a synthesized answer's reason)."""
    fake.push(Reply.text("ok"))
    client(fake, api_key="sk-SECRET-abc123\r").chat(MSGS)
    assert fake.headers[0]["Authorization"] == "Bearer sk-SECRET-abc123"
    llm = client(fake, key_command="printf 'sk-SECRET-abc\\nmore'")  # a line break inside: no header can carry it
    with pytest.raises(LLMError) as info:
        llm.chat(MSGS)
    assert "sk-SECRET" not in str(info.value) and "line break" in str(info.value)
    assert len(fake.requests) == 1  # refused before sending, and not retried
    status, said = llm.probe()
    assert status == "problem" and "sk-SECRET" not in said


def test_retry_after_is_honoured(fake: FakeOpenAI) -> None:
    fake.push(Reply("", status_code=429, headers={"Retry-After": "1"}), Reply.text("ok"))
    started = time.monotonic()
    client(fake, backoff="0,0,0").chat(MSGS)
    assert time.monotonic() - started >= 0.9 and fake.requests[0]["stream"] is False


def test_a_stream_is_named_and_not_retried(fake: FakeOpenAI) -> None:
    fake.push(*[Reply("data: {}\n\n", headers={"Content-Type": "text/event-stream"})] * 4)
    with pytest.raises(LLMError, match="text/event-stream"):
        client(fake).chat(MSGS)
    assert len(fake.requests) == 1


def test_grammar_mode_takes_a_schema_with_patterns_and_long_strings(fake: FakeOpenAI) -> None:
    """The wiki's patch schema (a `pattern` on its sources) had failed every call in grammar mode."""
    schema = {"type": "object", "additionalProperties": False, "required": ["id", "text"],
              "properties": {"id": {"type": "string", "pattern": "^#[0-9]+$"}, "text": {"type": "string", "maxLength": 4000}}}
    fake.push(Reply.json({"id": "#3", "text": "x"}), Reply.json({"id": "three", "text": "x"}))
    llm = client(fake, structured="grammar")
    assert llm.structured_call(MSGS, schema, task="t").data == {"id": "#3", "text": "x"}
    assert "pattern" not in fake.requests[0]["grammar"]
    with pytest.raises(InvalidReply):  # the reply is still held to the whole schema
        llm.structured_call(MSGS, schema, task="t")


def test_what_the_curator_would_refuse_is_an_invalid_distill_reply() -> None:
    """A 246-character entity passed the schema and the curator refused the fact: the turn was marked
    distilled and its facts were gone. The schema now holds the curator's bounds, so such a reply is
    parked and retried, then the local rules distill the turn."""
    from jsonschema import Draft202012Validator

    from palimpsest.distill import DISTILL_SCHEMA
    from palimpsest.summaries.compactor import SUMMARY_SCHEMA

    good = {"summary": "s", "facts": [{"text": "I live in Berlin.", "kind": "fact", "entities": ["Berlin"], "valid_from": None}],
            "corrections": [], "tasks": []}
    check = Draft202012Validator(DISTILL_SCHEMA)
    assert check.is_valid(good)
    for bad in ("O" * 246, "", "   "):
        assert not check.is_valid({**good, "facts": [{**good["facts"][0], "entities": [bad]}]})
    assert not check.is_valid({**good, "facts": [{**good["facts"][0], "text": "  "}]})
    assert not check.is_valid({**good, "tasks": ["x" * 9000]})
    assert not Draft202012Validator(SUMMARY_SCHEMA).is_valid({"summary": "x" * 2_000_000, "identifiers": []})



def test_an_endpoint_that_echoes_the_key_never_shows_it(fake: FakeOpenAI) -> None:
    """Found in review: the body of a 400, 401 or 404 was quoted whole, and an endpoint that echoes the
    request's headers put the key in the job's last error and a synthesized answer's reason."""
    fake.responder = lambda body: Reply('{"error": "bad request, Authorization: Bearer sk-SECRET-123"}', status_code=401)
    with pytest.raises(LLMError) as info:
        client(fake, api_key="sk-SECRET-123").chat(MSGS)
    assert "sk-SECRET" not in str(info.value)


def test_credentials_in_the_url_are_sent_right_and_never_shown(fake: FakeOpenAI) -> None:
    """Found by a security review: with `http://user:pa55word@host/v1` the requests carried Basic auth and not the
    API key; an endpoint's echo of `Basic dXNlcjpwYTU1d29yZA==` (the password in base64) reached the job's error;
    and `…/v1?api_key=QSECRET` posted to `/v1?api_key=QSECRET/chat/completions`."""
    base = fake.url.replace("http://", "http://user:pa55word@") + "?api_key=QSECRET"
    fake.push(Reply("hi"))
    LLM(base, "m", api_key="sk-KEY-1234", backoff="0", structured="json_schema").chat(MSGS)
    assert fake.headers[-1]["Authorization"] == "Bearer sk-KEY-1234" and fake.paths[-1].endswith("/chat/completions?api_key=QSECRET")
    fake.responder = lambda body: Reply('{"error": "bad key Basic dXNlcjpwYTU1d29yZA== for QSECRET"}', status_code=401)
    llm = LLM(base, "m", backoff="0", structured="json_schema")  # no key: the URL's user info is the credential
    with pytest.raises(LLMError) as info:
        llm.chat(MSGS)
    assert fake.headers[-1]["Authorization"].startswith("Basic ")
    for secret in ("dXNlcjpwYTU1d29yZA", "pa55word", "QSECRET"):
        assert secret not in str(info.value) and secret not in llm.shown, secret


def test_a_key_no_header_can_carry_is_a_clear_error_not_a_crash(fake: FakeOpenAI) -> None:
    llm = client(fake, api_key="sk-SECRET\u00a0pasted")
    with pytest.raises(LLMError, match="no HTTP header may carry"):
        llm.chat(MSGS)
    status, said = llm.probe()
    assert status == "problem" and "sk-SECRET" not in said and fake.requests == []


@pytest.mark.parametrize(("command", "said"), [
    ("/nonexistent/get-key", "cannot run"),
    (f"{__file__}", "cannot run"),  # not executable
    ("pass show 'unclosed", "cannot be read as a command line"),
    ("sh -c 'echo token expired for sk-CMDKEY-abcdef123 >&2; exit 3'", "failed \\(3\\)"),
])
def test_a_key_command_that_cannot_give_a_key_is_an_llm_error(fake: FakeOpenAI, command: str, said: str) -> None:
    """Found by a user with a broken `llm_key_command`: `doctor`, `distill` and a synthesized
    search crashed with FileNotFoundError / PermissionError / ValueError tracebacks."""
    llm = client(fake, key_command=command)
    with pytest.raises(LLMError, match=said) as caught:
        llm.chat(MSGS)
    assert "sk-CMDKEY" not in str(caught.value) and not fake.requests
    status, seen = llm.probe()
    assert status == "problem" and re.search(said, seen)


def test_a_reply_fenced_as_markdown_is_read(fake: FakeOpenAI) -> None:
    """Found by an agent-loop builder: an endpoint that ignores `response_format` wraps its JSON in ```json … ```; each
    such reply was parked as "not JSON" and asked again, four calls a job before the local rules took over."""
    fake.push(Reply.text('```json\n{"answer": "x", "n": 2}\n```'))
    reply = client(fake).structured_call(MSGS, SCHEMA, task="t")
    assert reply.data == {"answer": "x", "n": 2} and len(fake.requests) == 1
    fake.push(Reply.text('Sure! ```json\n{"answer": "x", "n": "two"}\n``` hope it helps'))  # prose around it: read, then checked
    with pytest.raises(InvalidReply, match="schema"):
        client(fake).structured_call(MSGS, SCHEMA, task="t")


@pytest.mark.parametrize("said", [
    '<think>The user wants JSON {maybe}.</think>\n{"answer": "x", "n": 2}',  # a reasoning model's thoughts first
    'Here is the JSON you asked for:\n{"answer": "x", "n": 2}\nLet me know if you need more.',  # prose around one object
    'Sure!\n```json\n{"answer": "x", "n": 2}\n```\nDone.',  # a fence among prose
])
def test_a_local_models_json_among_its_words_is_read(fake: FakeOpenAI, said: str) -> None:
    """Found with a sloppy small local model: each of these was parked as "not JSON" and the job left to the local rules
    (three times the calls, no facts or summaries from the model); two objects are still no answer."""
    fake.push(Reply.text(said))
    assert client(fake).structured_call(MSGS, SCHEMA, task="t").data == {"answer": "x", "n": 2} and len(fake.requests) == 1
    fake.push(Reply.text('{"answer": "x", "n": 2} or {"answer": "y", "n": 3}'))
    with pytest.raises(InvalidReply, match="not JSON"):
        client(fake).structured_call(MSGS, SCHEMA, task="t")


def test_no_credential_is_sent_to_the_model(home: Path, fake: FakeOpenAI) -> None:
    """Found by an agent-loop builder: a key said in a session (which the distiller already kept out of facts) went to
    the endpoint in every prompt that carried its message, and came back in a summary recalled into another project."""
    fake.push(Reply.json({"summary": "deploy notes", "facts": [], "corrections": [], "tasks": []}))
    settings = Settings.load(env={}, embedder="none", llm_url=fake.url, llm_model="m", llm_backoff="0,0,0", llm_structured="json_schema")
    with Memory(home, settings=settings) as memory:
        memory.append("s1", "user", "Use key sk-live-4f9aB3cdefghijklmnopq for Stripe; the DB is postgres://atlas:Sup3rS3cret!@db:5432/atlas "
                      "and the staging password is hunter2-Secret!", created_at="2026-02-01T10:00:00Z")
        memory.distiller.turn("s1", memory.distiller.turn_messages("s1", None, None), use_llm=True)
    sent = json.dumps(fake.requests[-1])
    assert "sk-live-4f9aB3" not in sent and "Sup3rS3cret" not in sent and "hunter2" not in sent
    assert "[credential withheld]" in sent and "postgres://atlas:" in sent and "Stripe" in sent


def test_an_error_said_in_a_200_body_is_named(fake: FakeOpenAI) -> None:
    """Found with a sloppy local server: a 200 whose body was {"error": {"message": "model failed to load"}} was reported
    only as "not a chat completion: 'choices'"; what the endpoint said is in the message now."""
    for _ in range(4):
        fake.push(Reply(body={"error": {"message": "model failed to load"}}))
    with pytest.raises(LLMError, match="model failed to load"):
        client(fake).chat(MSGS)
