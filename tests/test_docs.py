"""The README's CLI and settings tables are made from the code; they must be current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_tables_are_current() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "docs.py"), "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_every_setting_has_help_and_an_environment_variable() -> None:
    from palimpsest.settings import SETTINGS

    assert len({s.env for s in SETTINGS}) == len(SETTINGS)
    for s in SETTINGS:
        # CODEX_HOME is Codex's own variable: capture honours it as Codex does
        assert s.help.strip() and (s.env.startswith("PALIMPSEST_") or s.env == "CODEX_HOME"), s.name
