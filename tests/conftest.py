"""Shared fixtures. `store_url` runs a test once per backend (SQLite, PostgreSQL)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

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
