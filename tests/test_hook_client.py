"""The recall hook's own HTTP client (a bare socket, for its start-up time): against a real
HTTP server on loopback it reads a plain and a chunked answer's bytes, sends the token, and
takes any status but 200 for "nothing"."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

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



@pytest.fixture
def elsewhere() -> Iterator[str]:
    """The recording server named by this machine's host name, as a client names a shared server (`--url
    http://memory-box:8765`): a name, so no server of this machine to the hook."""
    name = socket.gethostname()
    if name == "localhost":
        pytest.skip("this machine's host name is localhost")
    server = ThreadingHTTPServer((socket.gethostbyname(name), 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://{name}:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_hook_names_the_repository_of_its_folder_to_a_server_elsewhere(url: str, elsewhere: str, tmp_path: Path) -> None:
    """A shared server on another machine read the hook's `cwd` on its own disk, where a client's folder is not, and
    the block of a client in acme/billing-api held other repositories' decisions. The hook sends the repository of its
    folder as this machine reads it (`project`), as capture tags this machine's sessions; a server of this machine
    reads the folder itself."""
    repo = tmp_path / "billing-api"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:acme/billing-api.git"], check=True)

    def sent(server: str, hook: dict[str, Any]) -> dict[str, list[str]]:
        done = subprocess.run([sys.executable, "-m", "palimpsest", "recall", "--hook", "--url", server], input=json.dumps(hook).encode(),
                              capture_output=True, timeout=60, check=False)
        assert done.returncode == 0
        return parse_qs(urlsplit(Handler.seen[-1]["path"]).query, keep_blank_values=True)

    hook = {"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "which package manager?"}
    assert sent(elsewhere, {**hook, "cwd": str(repo / "src")})["project"] == ["acme/billing-api"]
    assert sent(elsewhere, {**hook, "cwd": str(tmp_path / "gone")})["project"] == [""]  # a folder not here is in no project
    assert "project" not in sent(elsewhere, hook)  # no folder named: the hook says nothing of one
    assert "project" not in sent(url, {**hook, "cwd": str(repo)})  # a server of this machine reads the folder itself


def test_the_whole_call_is_bounded_from_the_process_start() -> None:
    """Found by a Claude Code user: against a server that accepts the connection and never answers, `recall --hook`
    returned after 2,784 ms while the docs said the whole call is bounded by `--timeout` (2 s): the alarm was set
    after the interpreter's start, the imports and the stdin read."""
    import time

    with socket.create_server(("127.0.0.1", 0)) as silent:  # (the kernel completes the connection: nothing answers)
        hook = {"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "what was the retry cap?"}
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "palimpsest", "recall", "--hook", "--timeout", "1",
                               "--url", f"http://127.0.0.1:{silent.getsockname()[1]}"],
                              input=json.dumps(hook).encode(), capture_output=True, timeout=60, check=False)
        took = time.monotonic() - started
    assert done.returncode == 0 and done.stdout == b""
    assert took < 1.0 + 0.1, took  # (the 0.1 s: the process's exit and the wait for it, after the bound)
