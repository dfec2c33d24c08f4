"""PostgreSQL stopped in the middle of a capture run, then started again (issue 10, "Faults").

Writes keep landing in the journal while the server is down, the indexer stalls at its
cursor, and when the server is back everything drains: nothing lost, nothing doubled.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

import pg
from palimpsest import Memory, Settings


@pytest.fixture
def paused_server() -> Iterator[tuple[str, str]]:
    """(database URL, data folder) on the server these tests own; resumed afterwards."""
    url = pg.fresh_database_url()
    pgdata = pg.own_server_data()
    if not pgdata:
        pytest.skip("needs the test's own PostgreSQL server (not PALIMPSEST_TEST_POSTGRES_URL) to stop it")
    yield url, pgdata
    try:
        psycopg.connect(url, connect_timeout=3).close()
    except psycopg.OperationalError:
        pg.resume_server(pgdata)


def test_capture_survives_postgres_stopping(tmp_path: Path, paused_server: tuple[str, str]) -> None:
    url, pgdata = paused_server
    memory = Memory(tmp_path / "home", url, settings=Settings.load(env={}, embedder="none"))
    try:
        for i in range(5):
            assert memory.append("run", "user", f"before the outage {i}")["indexed"]
        cursor_before = memory.store.cursor("run")
        pg.pause_server(pgdata)
        started = time.monotonic()
        during = [memory.append("run", "user", f"during the outage {i}") for i in range(20)]
        elapsed = time.monotonic() - started
        assert all(r["stored"] and not r["indexed"] for r in during)  # journaled, not indexed
        assert elapsed < 20, f"20 appends took {elapsed:.1f}s while the store was down"
        # a repeat of an acknowledged write is still recognised from the journal
        pg.resume_server(pgdata)
        time.sleep(2.1)  # past the fail-fast window
        assert memory.store.cursor("run") == cursor_before  # the indexer stalled at its cursor
        assert memory.catch_up() == 20
        assert memory.catch_up() == 0
        for i in range(3):
            assert memory.append("run", "user", f"after the outage {i}")["indexed"]
        rows = memory.browse(session="run", limit=100)
        contents = [m.content for m in rows]
        assert len(contents) == 28 and len(set(contents)) == 28
        assert contents[:5] == [f"before the outage {i}" for i in range(5)]
        assert memory.search("outage during").hits
    finally:
        memory.close()


def test_a_role_that_may_not_create_is_refused_clearly(tmp_path: Path) -> None:
    """Found running a shared server with a least-privilege role: `palimpsest stats` ended in a traceback
    (InsufficientPrivilege at `CREATE TABLE IF NOT EXISTS schema_migrations`)."""
    import os
    from urllib.parse import urlsplit, urlunsplit

    from palimpsest.errors import StoreRefused

    url = pg.fresh_database_url()
    with Memory(tmp_path / "owner", url, settings=Settings.load(env={}, embedder="none")) as owner:
        owner.append("s", "user", "hello")
    role = f"palimpsest_dml_{os.getpid()}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP ROLE IF EXISTS "{role}"')
        conn.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD 'dml'")
        conn.execute(f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "{role}"')
        conn.execute(f'GRANT CONNECT ON DATABASE "{urlsplit(url).path[1:]}" TO "{role}"')
    parts = urlsplit(url)
    limited = urlunsplit(parts._replace(netloc=f"{role}:dml@{parts.hostname}:{parts.port}"))
    try:
        with pytest.raises(StoreRefused, match="must own its tables"):
            Memory(tmp_path / "dml", limited, settings=Settings.load(env={}, embedder="none")).stats()
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'REVOKE ALL ON ALL TABLES IN SCHEMA public FROM "{role}"')
            conn.execute(f'REVOKE ALL ON DATABASE "{urlsplit(url).path[1:]}" FROM "{role}"')
            conn.execute(f'DROP ROLE "{role}"')


def test_an_http_client_is_not_told_the_database_address(tmp_path: Path, paused_server: tuple[str, str],
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """Found by a platform engineer: with PostgreSQL down, API clients were answered `postgresql://palimpsest:***@
    127.0.0.1:18729/palimpsest is unavailable` — the database's user, host, port and name."""
    import httpx

    from palimpsest.server.run import ServerThread

    url, pgdata = paused_server
    with Memory(tmp_path / "home", url, settings=Settings.load(env={}, embedder="none")) as memory, ServerThread(memory) as server:
        pg.pause_server(pgdata)
        r = httpx.post(f"{server}/api/memory/tool/memory_search", json={"query": "rate limit"}, timeout=60)
        assert r.status_code == 503 and r.json()["error"]["code"] == "store_unavailable"
        said = r.json()["error"]["message"]
        assert url.split("@")[-1] not in said and "postgresql://" not in said and str(psycopg.conninfo.conninfo_to_dict(url)["port"]) not in said
        assert "its log says why" in said
    assert any("told a client" in r.getMessage() and url.split("@")[-1] in r.getMessage() for r in caplog.records)  # and it does
