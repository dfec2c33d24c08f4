"""`POST /api/hook/recall` (issue 19): the server reads the harness's hook JSON and answers
with exactly what `palimpsest recall --hook` prints — the hookSpecificOutput JSON, the bare
block, or nothing — so the hook process needs no JSON of its own; on both backends."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from palimpsest import Memory
from palimpsest.errors import InvalidInput
from palimpsest.server.run import ServerThread

HOOK = {"session_id": "0d2f7e3b-harness-uuid", "hook_event_name": "UserPromptSubmit", "prompt": "what was the retry cap?",
        "cwd": "/src/app", "transcript_path": "/x.jsonl"}


def test_the_hook_answer_comes_ready_to_print(memory: Memory) -> None:
    memory.append("old", "user", "the retry cap is below the upstream timeout")
    with ServerThread(memory) as url:
        def ask(body: object, **query: object) -> httpx.Response:
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            return httpx.post(f"{url}/api/hook/recall", content=raw, params=query, headers={"Content-Type": "application/json"})

        answer = ask(HOOK)
        assert answer.status_code == 200 and answer.text.endswith("\n")
        out = json.loads(answer.text)["hookSpecificOutput"]
        assert out["hookEventName"] == "UserPromptSubmit" and out["additionalContext"].startswith("<system-reminder>")
        assert "retry cap is below" in out["additionalContext"]
        text = ask(HOOK, format="text", budget=400).text
        assert text.startswith("<system-reminder>") and "retry cap is below" in text
        assert ask({**HOOK, "prompt": "  "}).text == "" and ask(b"not json").text == "" and ask([1, 2]).text == ""
        deep = ask(b'{"prompt": "x", "a": ' + b"[" * 100000 + b"]" * 100000 + b"}")  # a 500 before (RecursionError)
        assert deep.status_code == 200 and deep.text == ""
        assert ask(HOOK, format="yaml").status_code == 400
        assert ask(HOOK, budget=0).text == ""  # no room for even the envelope: nothing


def test_an_event_that_is_no_prompts_and_a_negative_budget_get_no_block(memory: Memory) -> None:
    """Found by a Claude Code user: `"hook_event_name": "FooBar"` was answered a block marked `hookEventName: "FooBar"`
    (an event whose output takes no context), and `?budget=-5` a 200 with an empty body, as if memory held nothing."""
    memory.append("old", "user", "the retry cap is below the upstream timeout")
    with ServerThread(memory) as url:
        def ask(body: object, **query: object) -> httpx.Response:
            return httpx.post(f"{url}/api/hook/recall", content=json.dumps(body).encode(), params=query,
                              headers={"Content-Type": "application/json"})

        assert ask({**HOOK, "hook_event_name": "FooBar"}).text == ""
        assert ask({**HOOK, "hook_event_name": "SessionStart"}, format="text").text == ""
        no_event = {k: v for k, v in HOOK.items() if k != "hook_event_name"}  # (an older harness's)
        assert json.loads(ask(no_event).text)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
        assert "retry cap" in ask({**HOOK, "hook_event_name": "chat.message"}, format="text").text  # the OpenCode plugin's
        refused = ask(HOOK, budget=-5)
        assert refused.status_code == 400 and "budget must be 0 or more" in refused.text


def test_a_prompt_holding_a_lone_surrogate_is_recalled_for_as_capture_keeps_it(memory: Memory) -> None:
    """Found by a new user: `{"prompt": "Bad \\ud800 Heizung warm", …}` got no recall, silently (the route answered 400
    "query holds a lone surrogate", the hook printed nothing, exit 0), while capture keeps such a character as U+FFFD
    (`harness.common.repaired`): the prompt is read so too, and recalls."""
    memory.append("old", "user", "die Heizung bleibt warm, wenn das Ventil 3 offen ist")
    raw = b'{"session_id": "s1", "hook_event_name": "UserPromptSubmit", "prompt": "Bad \\ud800 Heizung warm"}'
    with ServerThread(memory) as url:
        answer = httpx.post(f"{url}/api/hook/recall", content=raw, headers={"Content-Type": "application/json"})
        printed = subprocess.run([sys.executable, "-m", "palimpsest", "recall", "--hook", "--url", url], input=raw,
                                 capture_output=True, timeout=60, check=False)
        deep = httpx.post(f"{url}/api/hook/recall", content=raw[:-1] + b', "a": ' + b"[" * 900 + b"]" * 900 + b"}",
                          headers={"Content-Type": "application/json"})
    assert answer.status_code == 200 and "Heizung bleibt warm" in answer.text
    assert printed.returncode == 0 and "Heizung bleibt warm" in printed.stdout.decode()
    assert deep.status_code == 200 and "Heizung bleibt warm" in deep.text


def test_the_hook_keeps_another_repositorys_decisions_out_of_this_ones_block(memory: Memory, tmp_path: Path) -> None:
    """Found by a Claude Code user with two repositories: in billing-api the block led with shop-web's "package manager
    is pnpm", and an "earlier; newer" mark paired the two repositories' retry counts."""
    repo = tmp_path / "billing-api"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:acme/billing-api.git"], check=True)
    said = {}
    for session, project, text in (("a1", "billing-api", "Decision: the package manager is uv, and the Stripe client retries 5 times."),
                                   ("b1", "shop-web", "Decision: the package manager is pnpm, and the fetch client retries 2 times."),
                                   ("b2", "shop-web", "I prefer short answers about the package manager."),
                                   ("plain", None, "The package manager docs live in the team wiki.")):
        said[session] = memory.append(session, "user", text)["id"]
        if project:
            memory.tags.add(f"project:{project}", session=session)
        memory.facts.curator.write({"text": text, "source": f"event:{said[session]}"})
    with ServerThread(memory) as url:
        def block(cwd: str) -> str:
            body = json.dumps({**HOOK, "prompt": "Which package manager do we use, and how many retries?", "cwd": cwd}).encode()
            out = httpx.post(f"{url}/api/hook/recall", content=body, params={"format": "text"}, headers={"Content-Type": "application/json"})
            return out.text

        mine = block(str(repo))
        assert "uv" in mine and "pnpm" not in mine and "retries 2" not in mine
        assert "short answers" in mine and "team wiki" in mine  # a person's own word and what no repository said stay
        elsewhere = block(str(tmp_path / "no-such-folder"))  # a folder not here: no project, every repository's
        assert "uv" in elsewhere and "pnpm" in elsewhere
    scoped = memory.recall(None, "Which package manager do we use?", project="shop-web").block
    assert "pnpm" in scoped and "is uv" not in scoped
    with pytest.raises(InvalidInput, match="project must be a non-empty string"):
        memory.recall(None, "package manager", project=" ")



def test_the_hook_is_scoped_to_the_repository_the_client_names_in_a_folder_the_server_cannot_see(memory: Memory) -> None:
    """A shared server on another machine read the hook's `cwd` on its own disk, where a client's folder is not: the
    block of a client in acme/billing-api held shop-web's "package manager is pnpm". The client names the repository
    of its folder (`palimpsest recall --hook` sends `project`); the server reads the folder only when it names none."""
    for session, project, text in (("a1", "acme/billing-api", "Decision: the package manager is uv, and the Stripe client retries 5 times."),
                                   ("b1", "acme/shop-web", "Decision: the package manager is pnpm, and the fetch client retries 2 times.")):
        memory.append(session, "user", text)
        memory.tags.add(f"project:{project}", session=session)
    client_only = {**HOOK, "prompt": "Which package manager do we use, and how many retries?", "cwd": "/home/dev/work/billing-api"}
    with ServerThread(memory) as url:
        def block(**query: str) -> str:
            return httpx.post(f"{url}/api/hook/recall", content=json.dumps(client_only).encode(), params={"format": "text", **query},
                              headers={"Content-Type": "application/json"}).text

        mine = block(project="acme/billing-api")
        assert "is uv" in mine and "pnpm" not in mine
        said_none = block(project="")  # the client's folder is in no project (it is no folder there): none, not the server's reading
        older = block()  # an older client names nothing: the server reads the folder, not on its disk here, so no project
    assert "is uv" in said_none and "pnpm" in said_none and "is uv" in older and "pnpm" in older

def test_another_repositorys_many_lines_leave_this_ones_answer_in_the_block(memory: Memory) -> None:
    """Found by a home-automation user: 300 lines about a lamp in one repository took every place search handed recall,
    the project filter then left none, and the block in the repository that held the answer was empty."""
    for i in range(300):
        memory.append("ha-1", "user", f"Wohnzimmerdeckenlampe Szene {i}", created_at="2026-10-01T10:00:00Z")
    memory.append("z2m-1", "user", "Die Wohnzimmerdeckenlampe ist eine IKEA TRADFRI LED2109G6.", created_at="2026-10-15T17:30:00Z")
    memory.tags.add("project:me/ha", session="ha-1")
    memory.tags.add("project:me/z2m", session="z2m-1")
    memory.worker().drain()
    block = memory.recall(None, "Welches Modell ist die Wohnzimmerdeckenlampe?", budget=2000, project="me/z2m").block
    assert "LED2109G6" in block and "Szene" not in block
    assert "Szene" in memory.recall(None, "Wohnzimmerdeckenlampe Szene", budget=2000, project="me/ha").block


def test_a_folder_that_is_no_repository_reads_the_folders_below_it(memory: Memory, tmp_path: Path) -> None:
    """Found by a home-automation user: ~/homelab's folders, none a repository, were each a project apart, and recall
    started in ~/homelab held nothing said in ~/homelab/esphome; a sibling folder stays apart."""
    from palimpsest.harness.project import project_of

    lab = tmp_path / "homelab"
    for folder, text in (("esphome", "The bathroom ESP sits at 192.168.178.52."), ("zigbee", "The Zigbee channel is 25.")):
        (lab / folder).mkdir(parents=True)
        memory.append(folder, "user", text)
        memory.tags.add(f"project:{project_of(str(lab / folder))}", session=folder)
    memory.worker().drain()
    assert "192.168.178.52" in memory.recall(None, "Which address has the bathroom ESP?", project=project_of(str(lab))).block
    assert "192.168.178.52" not in memory.recall(None, "Which address has the bathroom ESP?",
                                                 project=project_of(str(lab / "zigbee"))).block


def test_two_repositories_of_one_name_keep_their_conventions_apart(memory: Memory, tmp_path: Path) -> None:
    """Found by a new user: acme/api and jdoe/api were both project `api`, and recall in jdoe's repository said
    acme's deploy target. A session tagged `project:api` by an earlier version (all that a user's stored sessions
    hold) still reads as its own in acme/api, as it did before projects were told apart."""
    repos = {}
    for owner in ("acme", "jdoe"):
        repos[owner] = tmp_path / owner / "api"
        repos[owner].mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(repos[owner])], check=True)
        subprocess.run(["git", "-C", str(repos[owner]), "remote", "add", "origin", f"git@github.com:{owner}/api.git"], check=True)
    for session, tag, text in (("old", "project:api", "Decision: the database is Postgres 16 on Neon."),
                               ("acme", "project:acme/api", "Decision: we deploy with make deploy-prod to Fly.io."),
                               ("jdoe", "project:jdoe/api", "Decision: we deploy with kubectl apply to GKE, and the database is SQLite.")):
        said = memory.append(session, "user", text)["id"]
        memory.tags.add(tag, session=session)
        memory.facts.curator.write({"text": text, "source": f"event:{said}"})
    with ServerThread(memory) as url:
        def block(cwd: Path) -> str:
            body = json.dumps({**HOOK, "prompt": "How do we deploy, and which database do we use?", "cwd": str(cwd)}).encode()
            return httpx.post(f"{url}/api/hook/recall", content=body, params={"format": "text"},
                              headers={"Content-Type": "application/json"}).text

        acme, jdoe = block(repos["acme"]), block(repos["jdoe"])
    assert "Fly.io" in acme and "Neon" in acme and "GKE" not in acme
    assert "GKE" in jdoe and "Fly.io" not in jdoe


def test_the_hook_leaves_out_the_running_sessions_turns_the_harness_shows(memory: Memory) -> None:
    """Found by a Claude Code user: on the second prompt of a session, all seven lines of the block were that session's
    own first turn, which the model had in its window; after a compaction, what came before it is recalled again."""
    memory.append("old", "user", "The retry cap for the Stripe client is 5.", created_at="2026-11-01T10:00:00Z")
    memory.append("run", "user", "Set the retry cap for the fetch client to 3.", created_at="2026-12-01T10:00:00Z")
    memory.append("run", "assistant", "Done: the fetch client's retry cap is 3.", created_at="2026-12-01T10:01:00Z")
    with ServerThread(memory) as url:
        def block() -> str:
            body = json.dumps({**HOOK, "session_id": "run", "prompt": "what retry cap did we set?"}).encode()
            return httpx.post(f"{url}/api/hook/recall", content=body, params={"format": "text"}, headers={"Content-Type": "application/json"}).text

        shown = block()
        assert "Stripe client is 5" in shown and "fetch client" not in shown
        memory.append("run", "user", "This session is being continued from a previous conversation. Summary: retry caps.",
                      metadata={"compact_summary": True}, created_at="2026-12-01T11:00:00Z")
        assert "fetch client" in block()  # before the compaction: out of the window, recalled again
    assert "fetch client" in memory.recall("run", "what retry cap did we set?").block  # a recall with its live tail, as before
    assert "fetch client" in memory.recall("run", "what retry cap did we set?", live_tail=0).block  # only a hook's harness shows it


def test_every_project_is_understood_by_the_library_and_so_by_every_surface(memory: Memory, capsys: pytest.CaptureFixture[str]) -> None:
    """Found in review: `"project": "*"` (every repository) was understood by the MCP tools alone; `memory.recall(project=
    "*")` and `palimpsest recall --project '*'` read it as a repository named `*` and left out every repository's
    sessions."""
    from palimpsest.cli import main

    for session, project, text in (("a1", "acme/api", "Decision: the api's package manager is uv."),
                                   ("w1", "acme/web", "Decision: the web's package manager is pnpm.")):
        memory.append(session, "user", text)
        memory.tags.add(f"project:{project}", session=session)
    memory.append("s", "user", "hello")
    assert "is uv" in memory.recall(None, "Which package manager do we use?").block  # (no scope: every repository)
    every = memory.recall(None, "Which package manager do we use?", project="*").block
    assert "is uv" in every and "is pnpm" in every, every
    context = memory.context("s", "Which package manager do we use?", project="*")["system_prompt"]
    assert "is uv" in context and "is pnpm" in context
    base = ["--home", str(memory.settings.home_path), "--store", memory.settings.store_url]
    assert main([*base, "recall", "Which package manager do we use?", "--project", "*"]) == 0
    out = capsys.readouterr().out
    assert "is uv" in out and "is pnpm" in out, out
