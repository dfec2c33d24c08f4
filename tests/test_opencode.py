"""OpenCode capture (issue 19): a session's parts read from OpenCode's own SQLite database
(built here with the tables OpenCode 1.2 creates), the database recorded as a pointer on
every event and in the session's settings, never copied; a second capture sends only what
changed; a missing database is a clear refusal."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from palimpsest import Memory, Settings
from palimpsest.harness import opencode
from palimpsest.server.run import ServerThread
from test_capture import free_port
from test_setup import EXE, env_for

SCHEMA = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL,
                      title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
                      data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
                   time_updated INTEGER NOT NULL, data TEXT NOT NULL);
"""
SESSION = "ses_4d585107dffeO9bO3HvMdvLYyC"
T0 = 1_772_618_400_000  # 2026-03-04T10:00:00Z in milliseconds


def make_db(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.execute("INSERT INTO project VALUES ('p1', '/src/app', ?, ?)", (T0, T0))
    conn.execute("INSERT INTO session VALUES (?, 'p1', NULL, 'retry', '/src/app', 'Retry cap', '1.2.3', ?, ?)", (SESSION, T0, T0))
    message(conn, "msg_1", {"role": "user"}, 1)
    part(conn, "prt_1", "msg_1", {"type": "text", "text": "why does the retry loop give up so early?"}, 1)
    message(conn, "msg_2", {"role": "assistant", "modelID": "qwen3-coder"}, 2)
    part(conn, "prt_2", "msg_2", {"type": "step-start"}, 2)
    part(conn, "prt_3", "msg_2", {"type": "reasoning", "text": "The limits come first."}, 3)
    part(conn, "prt_4", "msg_2", {"type": "tool", "tool": "read", "callID": "call_1",
                                   "state": {"status": "completed", "input": {"filePath": "retry.toml"},
                                             "output": "max_retries = 3  # the retry cap is below the upstream timeout"}}, 4)
    part(conn, "prt_5", "msg_2", {"type": "text", "text": "The retry cap is below the upstream timeout."}, 5)
    conn.commit()
    return conn


def message(conn: sqlite3.Connection, mid: str, data: dict[str, Any], n: int) -> None:
    conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, SESSION, T0 + n * 1000, T0 + n * 1000, json.dumps(data)))


def part(conn: sqlite3.Connection, pid: str, mid: str, data: dict[str, Any], n: int) -> None:
    conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (pid, mid, SESSION, T0 + n * 1000, T0 + n * 1000, json.dumps(data)))


def test_parts_become_messages_tool_calls_results_and_kept_records(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    make_db(db).close()
    events, cursor, settings = opencode.read(db, SESSION)
    shown = [(e["type"], e["role"], e.get("tool_name"), e["event_key"]) for e in events]
    assert shown == [("message", "user", None, "oc:prt_1"), ("source_record", "source", None, "oc:prt_2"),
                     ("message", "assistant", None, "oc:prt_3"), ("message", "assistant", "read", "oc:prt_4:call"),
                     ("message", "tool", "read", "oc:prt_4:result"), ("message", "assistant", None, "oc:prt_5")]
    assert events[2]["metadata"]["thinking"] is True and events[3]["tool_args"] == {"filePath": "retry.toml"}
    assert events[0]["created_at"] == "2026-03-04T10:00:01.000Z" and cursor == T0 + 5000
    assert all(e["metadata"]["source_path"] == str(db) for e in events)  # a pointer to the database, on every event
    assert settings == {"opencode_db": str(db), "cwd": "/src/app", "title": "Retry cap", "version": "1.2.3"}
    assert opencode.read(db, SESSION, cursor)[0] == []


def capture(home: Path, url: str, hook: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    env = {**env_for(home), "PALIMPSEST_HOME": str(home / ".palimpsest"), "XDG_DATA_HOME": str(home / "data")}
    return subprocess.run([str(EXE), "capture", "--agent", "opencode", "--url", url, "--json"], input=json.dumps(hook),
                          capture_output=True, text=True, env=env, timeout=60, check=False)


def test_capture_reads_the_database_in_place_and_only_what_changed(tmp_path: Path) -> None:
    home, port = tmp_path / "user", free_port()
    db = home / "data" / "opencode" / "opencode.db"  # the default place under XDG_DATA_HOME
    db.parent.mkdir(parents=True)
    conn = make_db(db)
    url = f"http://127.0.0.1:{port}"
    hook = {"session_id": SESSION, "hook_event_name": "session.idle"}
    with Memory(tmp_path / "server", settings=Settings.load(env={}, embedder="none", enable_write=True)) as memory, \
            ServerThread(memory, port=port):
        done = capture(home, url, hook)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["stored"] == 6
        [session] = memory.sessions()
        assert (session.agent, session.settings["opencode_db"], session.settings["cwd"]) == ("opencode", str(db), "/src/app")
        assert any("retry cap" in (m.tool_result or "") for m in memory.browse(session=SESSION))
        part(conn, "prt_6", "msg_2", {"type": "text", "text": "Raise it to 8."}, 6)
        conn.commit()
        done = capture(home, url, hook)
        assert (done.returncode, json.loads(done.stdout)["stored"], json.loads(done.stdout)["duplicates"]) == (0, 1, 0)
        assert "Raise it to 8." in [m.content for m in memory.browse(session=SESSION)]
    conn.close()
    assert not [p for p in (home / ".palimpsest").rglob("*") if p.suffix == ".db"]  # never copied
    done = capture(home, url, {**hook, "opencode_db": str(tmp_path / "nope.db")})
    assert done.returncode == 1 and "no OpenCode database" in done.stderr


def test_another_release_channels_database_is_found_by_its_session(tmp_path: Path) -> None:
    """OpenCode's beta keeps its sessions in opencode-beta.db beside opencode.db: the one
    holding the session is read, without `opencode_db` in the hook."""
    home, port = tmp_path / "user", free_port()
    folder = home / "data" / "opencode"
    folder.mkdir(parents=True)
    stable = sqlite3.connect(folder / "opencode.db")  # the stable channel's, without this session
    stable.executescript(SCHEMA)
    stable.close()
    (folder / "opencode-dev.db").write_bytes(b"not a database")  # unreadable files are passed over
    make_db(folder / "opencode-beta.db").close()
    assert opencode.find_db({"XDG_DATA_HOME": str(home / "data")}, SESSION) == folder / "opencode-beta.db"
    assert opencode.find_db({"XDG_DATA_HOME": str(home / "data")}, "ses_unknown") == folder / "opencode.db"
    url = f"http://127.0.0.1:{port}"
    with Memory(tmp_path / "server", settings=Settings.load(env={}, embedder="none", enable_write=True)) as memory, \
            ServerThread(memory, port=port):
        done = capture(home, url, {"session_id": SESSION, "hook_event_name": "session.idle"})
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["stored"] == 6
        [session] = memory.sessions()
        assert session.settings["opencode_db"] == str(folder / "opencode-beta.db")
