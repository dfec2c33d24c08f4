"""Shared fixtures. `store_url` runs a test once per backend (SQLite, PostgreSQL)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# days are read in this machine's zone where a message's time names none (`records.wall_clock`):
# the suite's expected days are UTC's on every machine (the zone tests name theirs)
os.environ["TZ"] = "UTC"
time.tzset()

from palimpsest import Memory, Settings

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never read the developer's own settings."""
    for key in list(os.environ):
        if key.startswith("PALIMPSEST_") and key not in ("PALIMPSEST_REQUIRE_POSTGRES", "PALIMPSEST_TEST_POSTGRES_URL"):
            monkeypatch.delenv(key, raising=False)


@pytest.fixture(autouse=True)
def _drop_test_databases() -> Iterator[None]:
    """After each test, drop the PostgreSQL databases it created (the server lives on)."""
    yield
    import sys

    pg = sys.modules.get("pg")
    if pg is not None:
        pg.drop_databases()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, home: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{home / 'palimpsest.db'}"
    from pg import fresh_database_url

    return fresh_database_url()


@pytest.fixture
def memory(home: Path, store_url: str) -> Iterator[Memory]:
    m = Memory(home, store_url, settings=Settings.load(env={}, embedder="none"))
    yield m
    m.close()


@pytest.fixture
def sqlite_memory(home: Path) -> Iterator[Memory]:
    m = Memory(home, settings=Settings.load(env={}, embedder="none"))
    yield m
    m.close()
