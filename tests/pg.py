"""PostgreSQL for the tests: one server per test session, one fresh database per use.

The server is `PALIMPSEST_TEST_POSTGRES_URL` when set, else a throwaway one started by
`scripts/postgres.sh` (which installs PostgreSQL and pgvector when missing) the first
time a test asks for it, and stopped when the test process exits. Every call of
`fresh_database_url()` creates a new, empty database on it (`CREATE DATABASE` from
template1 is a few tens of milliseconds), and `drop_databases()` removes them.

When no server can be had, the test is skipped with the reason, unless
`PALIMPSEST_REQUIRE_POSTGRES=1` (CI), where it fails instead.
"""

from __future__ import annotations

import atexit
import itertools
import os
import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "postgres.sh"
_counter = itertools.count()
_state: dict[str, str] = {}  # url, pgdata, error
_created: list[str] = []


def _unavailable(reason: str) -> None:
    if os.environ.get("PALIMPSEST_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PALIMPSEST_REQUIRE_POSTGRES=1 but no PostgreSQL server: {reason}")
    pytest.skip(f"PostgreSQL not available ({reason}); set PALIMPSEST_TEST_POSTGRES_URL or run scripts/postgres.sh")


def _start() -> None:
    try:
        proc = subprocess.run(
            ["bash", str(SCRIPT), "start"], check=False, capture_output=True, text=True, timeout=1200,
            env={**os.environ, "PG_FAST": "1", "PG_OWNER_PID": str(os.getpid())},  # never outlives the tests
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        _state["error"] = f"scripts/postgres.sh could not run: {exc}"
        return
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines or not lines[-1].startswith("postgresql://"):
        tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
        _state["error"] = f"scripts/postgres.sh failed (exit {proc.returncode}): {tail}"
        return
    _state["url"] = lines[-1]
    _state["pgdata"] = next((ln.split("=", 1)[1] for ln in lines if ln.startswith("PGDATA=")), "")
    atexit.register(stop_server)


def server_url() -> str:
    """The admin URL of the test server (starting it on first use), or skip / fail."""
    if "url" not in _state and "error" not in _state:
        external = os.environ.get("PALIMPSEST_TEST_POSTGRES_URL")
        if external:
            _state["url"] = external
        else:
            _start()
    if "url" not in _state:
        _unavailable(_state.get("error", "unknown error"))
    return _state["url"]


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


def fresh_database_url() -> str:
    """A URL to a new, empty database (no extensions, no tables) on the test server."""
    import psycopg

    admin = server_url()
    name = f"palimpsest_test_{os.getpid()}_{next(_counter)}"
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error as exc:
        _unavailable(f"cannot create a database on {admin}: {exc}")
    _created.append(name)
    return with_database(admin, name)


def drop_databases() -> None:
    """Drop every database `fresh_database_url` made (closing what still uses them)."""
    if not _created or "url" not in _state:
        return
    import psycopg

    try:
        with psycopg.connect(_state["url"], autocommit=True, connect_timeout=10) as conn:
            while _created:
                conn.execute(f'DROP DATABASE IF EXISTS "{_created.pop()}" WITH (FORCE)')
    except psycopg.Error:
        pass


def own_server_data() -> str:
    """The data folder of the server these tests started ("" for an external server)."""
    server_url()
    return _state.get("pgdata", "")


def pause_server(pgdata: str) -> None:
    subprocess.run(["bash", str(SCRIPT), "pause", pgdata], check=True, capture_output=True, timeout=60)


def resume_server(pgdata: str) -> None:
    subprocess.run(["bash", str(SCRIPT), "resume", pgdata], check=True, capture_output=True, timeout=60)


def stop_server() -> None:
    pgdata = _state.pop("pgdata", "")
    drop_databases()
    if pgdata:
        subprocess.run(["bash", str(SCRIPT), "stop", pgdata], check=False, capture_output=True, timeout=60)
    _state.pop("url", None)
