"""The home folder is its owner's alone (0700): with a umask of 022 the index, the facts snapshot and
the embedding cache in it were readable by every account on the machine (found by a security review:
`sqlite3 -readonly ~/.palimpsest/palimpsest.db` as another user printed the messages)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from palimpsest import Memory, Settings
from palimpsest.capture import CaptureClient


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_home_is_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        with Memory(tmp_path / "new" / "home", settings=Settings.load(env={}, embedder="none")) as m:
            m.append("s", "user", "the staging password is in the vault")
        assert _mode(tmp_path / "new" / "home") == 0o700
        shared = tmp_path / "shared"
        shared.mkdir(mode=0o755)
        os.chmod(shared, 0o755)
        with Memory(shared, settings=Settings.load(env={}, embedder="none")):
            pass
        assert _mode(shared) == 0o700  # an existing home of this user that others could read, tightened
        elsewhere = tmp_path / "user-files"  # a folder of other things given as the home (PALIMPSEST_HOME=~): left as it is
        elsewhere.mkdir(mode=0o755)
        os.chmod(elsewhere, 0o755)
        (elsewhere / "notes.txt").write_text("mine")
        Memory(elsewhere, settings=Settings.load(env={}, embedder="none")).close()
        assert _mode(elsewhere) == 0o755
        client = CaptureClient("http://127.0.0.1:9", tmp_path / "hook-first" / "home", timeout=0.2)
        client.close()
        assert _mode(tmp_path / "hook-first" / "home") == 0o700  # the capture hook may be the first to write in it
    finally:
        os.umask(old)
