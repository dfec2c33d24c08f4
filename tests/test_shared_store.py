"""Several homes on one store (several machines on one PostgreSQL): a message written through
one home is read whole from the other — from that home's journal when this machine can read
it, else the index's copy, saying so (it was `not_found`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from palimpsest import Memory, Settings
from palimpsest.errors import NotFound

LONG = "the whole tool output " * 2000  # past a small field cap


def test_get_full_of_a_message_written_through_another_home(tmp_path: Path, store_url: str) -> None:
    settings = Settings.load(env={}, embedder="none", field_cap=1000)
    a, b = tmp_path / "a", tmp_path / "b"
    with Memory(a, store_url, settings=settings) as home_a:
        written = home_a.append("shared", "tool", "ran it", tool_name="bash", tool_result=LONG)
    with Memory(b, store_url, settings=settings) as home_b:
        full = home_b.get_full(written["id"])
        assert full["tool_result"] == LONG and "note" not in full  # a's journal, on this machine
        shutil.move(a, tmp_path / "elsewhere")  # a is another machine now
        full = home_b.get_full(written["id"])
        assert full["tool_result"] == LONG[: len(full["tool_result"])] and len(full["tool_result"]) < len(LONG)
        assert "written through another home" in full["note"] and "capped" in full["note"]
        own = home_b.append("shared", "user", "mine")
        (b / "sessions" / "shared" / "events.jsonl").write_text("")  # this home's own journal lost its line: still an error
        with pytest.raises(NotFound):
            home_b.get_full(own["id"])


def test_the_same_event_through_two_homes_is_one_row_and_said_so(tmp_path: Path, store_url: str) -> None:
    """A capture retried through another server, or one transcript ingested from two
    machines: one row in the shared index, and the second writer is told it is a duplicate
    under the id the index holds (it was told `stored` under an id no search returns)."""
    settings = Settings.load(env={}, embedder="none")
    turns = [{"role": "user", "content": f"turn {i}", "event_key": f"k-{i}"} for i in range(5)]
    with Memory(tmp_path / "a", store_url, settings=settings) as a, Memory(tmp_path / "b", store_url, settings=settings) as b:
        first = a.append("s", "user", "retry me please", event_key="k-retry")
        again = b.append("s", "user", "retry me please", event_key="k-retry")
        assert (first["stored"], again["stored"], again["duplicate"]) == (True, False, True)
        assert again["id"] == first["id"] and b.get_full(again["id"])["content"] == "retry me please"
        ingested = a.ingest_session("t", turns)
        repeated = b.ingest_session("t", turns)
        assert (ingested["stored"], repeated["stored"], repeated["duplicates"]) == (5, 0, 5)
        assert repeated["ids"] == ingested["ids"]
        assert b.stats()["messages"] == 6
        # found by a platform engineer: the same retry through b a second time (b's own journal took it before) had
        # answered b's journal's id, which no search returns, and b's time
        once_more = b.append("s", "user", "retry me please", event_key="k-retry")
        assert (once_more["id"], once_more["duplicate"]) == (first["id"], True)
        assert once_more["created_at"] == first["created_at"]
        assert b.ingest_session("t", turns)["ids"] == ingested["ids"]


def test_a_cli_write_while_the_store_is_away_is_journaled_and_indexed_later(tmp_path: Path) -> None:
    """The CLI refused every write while PostgreSQL was down (exit 6, nothing journaled):
    the write was lost unless retried. Now it is journaled, says so, and is indexed when the
    store is back (here: the same home pointed at a store that answers)."""
    from test_setup import palimpsest

    home, away = tmp_path / "h", "postgresql://postgres@127.0.0.1:1/gone"
    done = palimpsest(tmp_path, "--home", str(home), "--store", away, "append", "s1", "user", "written while the store was down")
    assert done.returncode == 0 and done.stdout.endswith("stored\n") and "writing to the journal in" in done.stderr
    transcript = "\n".join(['{"role": "user", "content": "a1"}', '{"role": "user", "content": "a2"}'])
    done = palimpsest(tmp_path, "--home", str(home), "--store", away, "ingest", "s2", "-", "--json", stdin=transcript)
    assert done.returncode == 0 and '"stored": 2' in done.stdout and '"indexed": false' in done.stdout
    again = palimpsest(tmp_path, "--home", str(home), "--store", away, "append", "s1", "user", "written while the store was down")
    assert again.returncode == 0 and again.stdout.endswith("duplicate\n")  # the journal deduplicates alone
    assert palimpsest(tmp_path, "--home", str(home), "jobs", "run").returncode == 0  # a store that answers: caught up
    with Memory(home, settings=Settings.load(env={}, embedder="none")) as memory:
        assert [m.content for m in memory.browse(session="s1")] == ["written while the store was down"]
        assert [m.content for m in memory.browse(session="s2")] == ["a1", "a2"]


def test_a_sessions_events_through_one_of_two_homes_say_what_they_hold(tmp_path: Path, store_url: str) -> None:
    """Found by a new user running two servers on one PostgreSQL: each replayed only its home's
    share of a session (100 of 200 events, nothing said), and a session written only through
    the other answered `no session`, though search and browse found it."""
    import httpx

    from palimpsest.server.run import ServerThread

    settings = Settings.load(env={}, embedder="none", distill=False, tool_synth=False)
    with Memory(tmp_path / "a", store_url, settings=settings) as a, Memory(tmp_path / "b", store_url, settings=settings) as b:
        a.append("shared", "user", "from a")
        b.append("shared", "user", "from b")
        b.append("only-b", "user", "b alone")
        a.append("only-a", "user", "a alone")
        with ServerThread(a) as url:
            page = httpx.get(f"{url}/api/sessions/shared/events").json()["result"]
            assert page["partial"] is True and "another home" in page["note"]
            assert [e.get("content") for e in page["events"] if e.get("type", "message") == "message"] == ["from a"]
            gone = httpx.get(f"{url}/api/sessions/only-b/events")
            assert gone.status_code == 404 and "written through another home" in gone.json()["error"]["message"]
            own = httpx.get(f"{url}/api/sessions/only-a/events").json()["result"]
            assert "partial" not in own and "note" not in own
            assert httpx.get(f"{url}/api/sessions/nowhere/events").json()["error"]["message"] == "no session 'nowhere'"


def test_an_export_names_the_sessions_other_homes_wrote(tmp_path: Path, store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by a shared server's user: an export from one home left out the sessions written
    through the other (and a correction made there) and said nothing; it now names them."""
    from palimpsest.cli import main

    settings = Settings.load(env={}, embedder="none")
    with Memory(tmp_path / "a", store_url, settings=settings) as a, Memory(tmp_path / "b", store_url, settings=settings) as b:
        a.append("ours", "user", "written through a")
        b.append("theirs", "user", "written through b")
        b.append("both", "user", "b's half")
        a.append("both", "user", "a's half")
        assert a.sessions_elsewhere() == ["both", "theirs"] and b.sessions_elsewhere() == ["both", "ours"]
    code = main(["--home", str(tmp_path / "a"), "--store", store_url, "export", str(tmp_path / "x.jsonl"), "--json"])
    out = capsys.readouterr()
    assert code == 0 and "2 sessions of the store have messages written through other homes (both, theirs)" in out.err


def test_a_client_machines_cli_says_it_reads_its_own_home_not_the_server(tmp_path: Path, store_url: str,
                                                                         capsys: pytest.CaptureFixture[str],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a platform engineer with one shared server and PALIMPSEST_URL on three machines: on a client, `search`
    answered nothing ("no vectors indexed yet") and `stats` said sqlite, 0 messages, while the server held 3,299."""
    from palimpsest.cli import main
    from palimpsest.server.run import ServerThread

    client = tmp_path / "client"
    with Memory(tmp_path / "server", store_url, settings=Settings.load(env={}, embedder="none")) as served, ServerThread(served) as url:
        served.append("s1", "user", "the rate limit is 100 requests a minute")
        for name, value in (("PALIMPSEST_URL", url), ("PALIMPSEST_HOME", str(client)), ("PALIMPSEST_EMBEDDER", "none")):
            monkeypatch.setenv(name, value)
        for argv in (["search", "rate limit"], ["stats"], ["facts", "list"], ["jobs", "status"], ["recall", "rate limit"]):
            assert main(argv) == 0, argv
            said = capsys.readouterr().err
            assert f"not the server at {url}" in said and str(client) in said, (argv, said)
        monkeypatch.setenv("PALIMPSEST_STORE", store_url)  # a client of the server's own database reads what it serves
        assert main(["search", "rate limit"]) == 0
        assert "not the server" not in capsys.readouterr().err
        monkeypatch.delenv("PALIMPSEST_STORE")  # a server that names no store (an older one): nothing to say of it (review)
        monkeypatch.setattr("palimpsest.cli.common.server_store", lambda url: "")
        assert main(["search", "rate limit"]) == 0
        assert "not the server" not in capsys.readouterr().err


def test_a_client_whose_hooks_name_the_server_is_told_so_without_palimpsest_url(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a platform engineer: on a client set up with `setup claude-code --url http://HOST:PORT`, `search "jwt"`
    and `stats` without PALIMPSEST_URL exported answered an empty table and 0 sessions from a new, empty home, with no
    note — the warning came only with the variable, though `doctor` and `capture --replay` read the hooks' server."""
    from palimpsest.capture import setup
    from palimpsest.cli import main
    from palimpsest.server.run import ServerThread
    from test_setup import EXE

    user = tmp_path / "user"
    with Memory(tmp_path / "server", settings=Settings.load(env={}, embedder="none")) as served, ServerThread(served) as url:
        served.append("s1", "user", "auth uses jwt with RS256")
        setup.apply(setup.plan("claude-code", setup.Command(str(EXE), url=url), {"HOME": str(user)}), user / ".palimpsest")
        monkeypatch.setenv("HOME", str(user))
        monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
        monkeypatch.setenv("PALIMPSEST_EMBEDDER", "none")
        for argv in (["search", "jwt"], ["stats"]):
            assert main(argv) == 0, argv
            said = capsys.readouterr().err
            assert f"not the server at {url}" in said and str(user / ".palimpsest") in said, (argv, said)


def test_a_client_off_the_network_pays_no_wait_for_the_warning(tmp_path: Path, store_url: str, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Found in review: every CLI command on a machine whose hooks name a server asked its `/healthz` (0.5 s, name
    resolution not counted), so a laptop off the VPN paid on every `search` — seconds where its resolver hangs. A
    server on another machine cannot serve this machine's SQLite file: that is said without asking; a database store
    it may share is asked within 0.5 s, name resolution included."""
    import socket
    import time

    from palimpsest.capture import setup
    from palimpsest.cli import main
    from test_setup import EXE

    url = "http://memory.corp.example:8765"  # (the VPN's name: its resolver is not reachable)
    user = tmp_path / "user"
    setup.apply(setup.plan("claude-code", setup.Command(str(EXE), url=url), {"HOME": str(user)}), user / ".palimpsest")
    resolve = socket.getaddrinfo

    def hanging(host: object, *args: object, **kwargs: object) -> object:
        if host == "memory.corp.example":
            time.sleep(3)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return resolve(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    for name, value in (("HOME", str(user)), ("PALIMPSEST_EMBEDDER", "none"), ("PALIMPSEST_STORE", store_url)):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert main(["stats"]) == 0  # (the store made and migrated before the command timed)
    capsys.readouterr()
    started = time.monotonic()
    assert main(["search", "jwt"]) == 0
    took, said = time.monotonic() - started, capsys.readouterr().err
    assert took < 1.5, took
    if store_url.startswith("sqlite"):
        assert f"not the server at {url}" in said, said


def test_a_home_moved_to_another_folder_owns_its_journals(tmp_path: Path, store_url: str) -> None:
    """Found by a developer moving her memory to a new laptop (`cp -a ~/.palimpsest`, the old
    folder renamed): the moved home's export said its 10 sessions had messages "written
    through other homes", and get-full named the old folder's journal, the one it fell back to
    reading. The index records the home that wrote a row by its journal id, which moves with it."""
    settings = Settings.load(env={}, embedder="none")
    old, new = tmp_path / "old", tmp_path / "new"

    def url(home: Path) -> str:  # an embedded store moves with its home; PostgreSQL stays where it is
        return f"sqlite:///{home / 'palimpsest.db'}" if store_url.startswith("sqlite") else store_url

    with Memory(old, url(old), settings=settings) as before:
        written = before.append("s", "user", "the staging db host is staging-pg.internal")
    shutil.copytree(old, new)
    with Memory(new, url(new), settings=settings) as moved:
        moved.append("s", "user", "and the prod one is prod-pg.internal")
        assert moved.sessions_elsewhere() == [] and moved.journals_elsewhere("s") == 0
        assert moved.get_full(written["id"])["journal_path"] == str(new / "sessions" / "s" / "events.jsonl")
        (new / "sessions" / "s" / "events.jsonl").write_text("")  # its own journal lost the line: not the old home's read
        with pytest.raises(NotFound):
            moved.get_full(written["id"])


def test_a_home_indexed_before_rows_named_their_journal_is_its_own_once_moved(tmp_path: Path, store_url: str) -> None:
    """The same move, of a home whose index was written before rows recorded their journal's
    id: the migration gives the rows of a session one journal indexed that journal's id."""
    import sqlite3
    from importlib import resources

    import psycopg

    settings = Settings.load(env={}, embedder="none")
    old, new = tmp_path / "old", tmp_path / "new"
    backend = "sqlite" if store_url.startswith("sqlite") else "postgres"
    url = f"sqlite:///{old / 'palimpsest.db'}" if backend == "sqlite" else store_url
    with Memory(old, url, settings=settings) as before:
        before.append("s", "user", "the staging db host is staging-pg.internal")
    folder = resources.files("palimpsest.store.migrations").joinpath(backend)
    version = next(int(p.name.split("_")[0]) for p in folder.iterdir() if p.name.endswith("_message_journal_ids.sql"))
    undo = ["ALTER TABLE messages DROP COLUMN journal_id", f"DELETE FROM schema_migrations WHERE version = {version}"]
    if backend == "sqlite":
        with sqlite3.connect(old / "palimpsest.db") as conn:
            for sql in undo:
                conn.execute(sql)
    else:
        with psycopg.connect(store_url, autocommit=True) as conn:
            for sql in undo:
                conn.execute(sql)
    shutil.move(old, new)
    with Memory(new, url.replace(str(old), str(new)), settings=settings) as moved:
        assert moved.sessions_elsewhere() == [] and moved.journals_elsewhere("s") == 0


def test_an_export_imported_through_a_second_home_says_the_index_had_its_messages(tmp_path: Path, store_url: str) -> None:
    """Found by a developer moving to a shared PostgreSQL: the first home's export imported
    through a second home said "154 stored, 0 already there" while the index gained nothing
    (it held all 46 messages). The second home's journal keeps its copy, under the same ids."""
    from palimpsest.importers import export_memory, import_file

    settings = Settings.load(env={}, embedder="none")
    export = tmp_path / "x.jsonl"
    with Memory(tmp_path / "a", store_url, settings=settings) as a, Memory(tmp_path / "b", store_url, settings=settings) as b:
        ids = [a.append("s", "user", f"turn {i}")["id"] for i in range(3)]
        with export.open("w") as out:
            export_memory(a, out)
        report = import_file(b, export)
        assert report.stored == report.records_kept and report.duplicates >= 3 and report.ids_reassigned == 0
        assert b.stats()["messages"] == 3 and [e.id for e in b.journal.read("s") if e.type == "message"] == ids
