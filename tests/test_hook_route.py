"""`POST /api/hook/recall` (issue 19): the server reads the harness's hook JSON and answers
with exactly what `palimpsest recall --hook` prints — the hookSpecificOutput JSON, the bare
block, or nothing — so the hook process needs no JSON of its own; on both backends."""

from __future__ import annotations

import json

import httpx

from palimpsest import Memory
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
