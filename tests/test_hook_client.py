"""The recall hook's own HTTP client (a bare socket, for its start-up time): against a real
HTTP server on loopback it reads a plain and a chunked answer's bytes, sends the token, and
takes any status but 200 for "nothing"."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from palimpsest.cli.hook import post

ANSWER = {"ok": True, "result": {"block": "<system-reminder>ünïcode ✓</system-reminder>"}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Handler.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": json.loads(body)})
        data = json.dumps(ANSWER, ensure_ascii=False).encode()
        if self.path.endswith("/broken"):
            self.send_response(500)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")
        elif self.path.endswith("/chunked"):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for piece in (data[:7], data[7:]):
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        self.close_connection = True

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_plain_and_chunked_answers_and_the_token(url: str) -> None:
    body = json.dumps({"query": "q"}).encode()
    data = json.dumps(ANSWER, ensure_ascii=False).encode()
    assert post(url + "/api/plain", body, "tok-1", 5) == data
    assert post(url + "/api/chunked", body, None, 5) == data
    assert Handler.seen[-2]["auth"] == "Bearer tok-1" and Handler.seen[-1]["auth"] is None
    assert Handler.seen[-1] == {"path": "/api/chunked", "auth": None, "body": {"query": "q"}}


def test_an_error_status_or_another_scheme_is_nothing(url: str) -> None:
    assert post(url + "/broken", b"{}", None, 5) is None
    assert post(url.replace("http://", "ftp://") + "/x", b"{}", None, 5) is None
