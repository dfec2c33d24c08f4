"""A fake OpenAI-compatible chat server on loopback (real HTTP), for tests.

    with FakeOpenAI() as fake:
        fake.push(Reply.json({"summary": "…"}), Reply.status(429), Reply.slow(2.0, "…"))
        settings = Settings.load(env={}, llm_url=fake.url, llm_model="fake", llm_backoff="0,0,0")

Scripted replies are served in order; when the script is empty, `responder(request)`
answers (by default: `{}` as the content). Every request body is kept in `requests`.
Replies: `Reply.json(obj)` / `Reply.text(str)` (a 200 completion, with usage counted
from the lengths), `Reply.status(code)`, `Reply.slow(seconds, content)`, `Reply.cut(text)`
(finish_reason "length"), `Reply.hang()` (never answers until the server stops).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str = "{}"
    status_code: int = 200
    delay: float = 0.0
    finish_reason: str = "stop"
    hang: bool = False
    only_mode: str | None = None  # answer 400 unless the request uses this structured mode
    headers: dict[str, str] | None = None  # more response headers (Retry-After, a content type)
    body: Any = None  # a whole body sent as it is, with the status (an error said in a 200)

    @classmethod
    def json(cls, obj: Any) -> Reply:
        return cls(json.dumps(obj))

    @classmethod
    def text(cls, text: str) -> Reply:
        return cls(text)

    @classmethod
    def status(cls, code: int) -> Reply:
        return cls("", status_code=code)

    @classmethod
    def slow(cls, seconds: float, content: str = "{}") -> Reply:
        return cls(content, delay=seconds)

    @classmethod
    def cut(cls, text: str) -> Reply:
        return cls(text, finish_reason="length")

    @classmethod
    def hang_forever(cls) -> Reply:
        return cls(hang=True)


def mode_of(body: dict[str, Any]) -> str | None:
    if "response_format" in body:
        return "json_schema"
    if "grammar" in body:
        return "grammar"
    if "guided_json" in body:
        return "guided_json"
    return None


class FakeOpenAI:
    def __init__(self, responder: Callable[[dict[str, Any]], Reply] | None = None, accept_modes: tuple[str, ...] | None = None) -> None:
        self.script: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []  # each POST's request target (path and query)
        self.responder = responder or (lambda body: Reply())
        self.accept_modes = accept_modes  # structured modes this endpoint takes (others: 400)
        self.models = ["m"]  # what GET /models lists
        self.models_status = 200
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    if fake.models_status != 200:
                        return self._send(fake.models_status, {"error": {"message": f"status {fake.models_status}"}})
                    return self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in fake.models]})
                return self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with fake.lock:
                    fake.requests.append(body)
                    fake.headers.append(dict(self.headers))
                    fake.paths.append(self.path)
                    reply = fake.script.pop(0) if fake.script else None
                mode = mode_of(body)
                if fake.accept_modes is not None and mode is not None and mode not in fake.accept_modes:
                    return self._send(400, {"error": {"message": f"{mode} is not supported"}})
                if reply is None:
                    reply = fake.responder(body)
                if reply.hang:
                    fake.stopping.wait(60)
                    return
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.body is not None:
                    return self._send(reply.status_code, reply.body, reply.headers)
                if reply.status_code != 200:
                    said = reply.content if reply.content not in ("", "{}") else f"status {reply.status_code}"
                    return self._send(reply.status_code, {"error": {"message": said}}, reply.headers)
                prompt = sum(len(m.get("content", "")) for m in body.get("messages", [])) // 4 + 1
                self._send(200, {"id": "cmpl-fake", "object": "chat.completion", "model": body.get("model", "fake"),
                                 "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content},
                                              "finish_reason": reply.finish_reason}],
                                 "usage": {"prompt_tokens": prompt, "completion_tokens": len(reply.content) // 4 + 1}}, reply.headers)

            def _send(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(obj).encode()
                try:
                    self.send_response(status)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    if "Content-Type" not in (headers or {}):
                        self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (cancelled, timed out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def push(self, *replies: Reply) -> None:
        with self.lock:
            self.script.extend(replies)

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
