"""PostgreSQL for the tests: owned by the PostgreSQL work (issue 10).

Until that lands, PostgreSQL-parametrised tests skip with a clear message.
"""

from __future__ import annotations

import os

import pytest


def fresh_database_url() -> str:
    if os.environ.get("PALIMPSEST_REQUIRE_POSTGRES") == "1":
        pytest.fail("PALIMPSEST_REQUIRE_POSTGRES=1 but the PostgreSQL backend is not available")
    pytest.skip("PostgreSQL backend not available")
