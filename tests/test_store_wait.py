"""`serve` and `worker` started before their PostgreSQL wait for it (`store_wait`) instead of
exiting 6 after five tries in 5 s (found by a team's ops engineer: a service started at boot
before its database never came up)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from pg import fresh_database_url
from test_capture import free_port
from test_setup import EXE


class Relay:
    """A TCP relay from a loopback port to the test PostgreSQL, opened when asked: the database
    "comes up" at that address only then."""

    def __init__(self, port: int, target: tuple[str, int]) -> None:
        self.port, self.target = port, target
        self.sock: socket.socket | None = None

    def open(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        assert self.sock is not None
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()


def _env(tmp_path: Path, store: str, wait: str) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path), "PALIMPSEST_HOME": str(tmp_path / "home"), "PALIMPSEST_STORE": store,
            "PALIMPSEST_EMBEDDER": "none", "PALIMPSEST_STORE_WAIT": wait}


def test_a_worker_started_before_its_database_waits_for_it(tmp_path: Path) -> None:
    real = urlsplit(fresh_database_url())
    port = free_port()
    store = urlunsplit(real._replace(netloc=real.netloc.replace(f"{real.hostname}:{real.port}", f"127.0.0.1:{port}")))
    relay = Relay(port, (real.hostname or "127.0.0.1", real.port or 5432))
    proc = subprocess.Popen([str(EXE), "worker"], env=_env(tmp_path, store, "60"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(8)  # longer than the five tries it gave up after
        assert proc.poll() is None, proc.communicate()
        relay.open()
        time.sleep(6)
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert err.count("waiting for it") == 1
    finally:
        if proc.poll() is None:
            proc.kill()
        relay.close()


def test_no_wait_fails_at_once_with_the_reason(tmp_path: Path) -> None:
    store = f"postgresql://nobody:pw@127.0.0.1:{free_port()}/none"
    done = subprocess.run([str(EXE), "worker"], env=_env(tmp_path, store, "0"), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 6 and "cannot connect to PostgreSQL" in done.stderr and "pw@" not in done.stderr


def test_a_refusal_is_not_waited_for(tmp_path: Path) -> None:
    real = urlsplit(fresh_database_url())
    store = urlunsplit(real._replace(path="/no_such_database_here"))
    done = subprocess.run([str(EXE), "worker"], env=_env(tmp_path, store, "300"), capture_output=True, text=True, timeout=120, check=False)
    # an unknown database is a refusal, not a database still starting: it had been retried for the whole store_wait
    assert done.returncode == 6 and "does not exist" in done.stderr and "waiting for it" not in done.stderr
