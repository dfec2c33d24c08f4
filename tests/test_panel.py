"""The memory panel: in a real headless browser (Debian's chromium driven by Playwright, never
a downloaded browser) against the real server, plus its HTTP rules without a browser:
CSRF, writes off, bad input, and stored HTML shown as text, never run.

Screenshots of every view land in tests/.artifacts/panel/ (gitignored)."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from palimpsest import Memory, Settings
from palimpsest.server.guard import panel_cookie
from palimpsest.server.run import ServerThread
from palimpsest.store import NewJob

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).parent / ".artifacts" / "panel"
XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def _seed(memory: Memory) -> dict[str, Any]:
    memory.append("deploy-1", "user", "How do we deploy the kubernetes cluster?", title="Deploying", agent="coder",
                  settings={"cwd": "/src/palimpsest", "tags": ["project:palimpsest"]})
    memory.append("deploy-1", "assistant", "", tool_name="bash", tool_args={"cmd": "kubectl get nodes"}, tool_result="node-1 Ready")
    memory.append("deploy-1", "assistant", "The kubernetes cluster has one ready node.")
    memory.append("evil", "user", f"kubernetes {XSS}", title=XSS)
    fact = memory.facts.write("The cluster runs kubernetes 1.30", valid_from="2026-01-01T00:00:00Z")
    memory.tags.suggest(["topic:kubernetes", "topic:ops"], session="deploy-1")
    memory.tags.suggest([f"note:{XSS[:150]}"], session="evil")
    memory.ingest_session("long", [{"role": "user", "content": f"kubernetes rollout step {i} of the plan"} for i in range(30)])
    memory.summaries.compact("long", final=True)
    leaf = memory.store.session_summaries("long", 0)[0]
    memory.tags.suggest(["topic:rollouts"], summary=leaf.id, source=leaf.id)
    memory.store.enqueue([NewJob("no-such-task", {"x": 1}, job_key="doomed", max_attempts=1)])
    memory.worker(tasks=["no-such-task"]).drain()
    return {"fact": fact.id}


@pytest.fixture
def served(home: Path) -> Iterator[tuple[Memory, str, dict[str, Any]]]:
    m = Memory(home, settings=Settings.load(env={}, embedder="none", enable_write=True, distill=False, tool_synth=False))
    seeded = _seed(m)
    with ServerThread(m) as url:
        yield m, url, seeded
    m.close()


# -- HTTP rules, no browser ----------------------------------------------------------
def _csrf(client: httpx.Client, url: str) -> str:
    page = client.get(url + "/panel/tags")
    return re.search(r'name="csrf" content="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]


def test_pages_escape_stored_html_and_set_a_strict_cookie(served: tuple[Memory, str, dict[str, Any]]) -> None:
    _, url, seeded = served
    with httpx.Client() as c:
        for path in ("/panel", "/panel/sessions/evil", "/panel/search?q=kubernetes&scores=1", "/panel/tags", "/panel/health",
                     f"/panel/facts/{seeded['fact']}", "/panel/facts", f"/panel/search?q={XSS}&tag=x:{XSS}"):
            r = c.get(url + path)
            assert r.status_code in (200, 400), path
            assert "<script>window.__xss" not in r.text and "<img src=x" not in r.text, path
            assert "script-src 'self'" in r.headers["content-security-policy"]
        cookie = c.get(url + "/panel").headers["set-cookie"].lower()
        assert "samesite=strict" in cookie and "httponly" in cookie
        assert c.get(url + "/").headers["location"] == "/panel"
        browsed = c.get(url + "/panel/search?tag=project%EF%BC%9Apalimpsest").text  # filters alone browse; a full-width colon
        assert "How do we deploy" in browsed and "onerror" not in browsed
        assert c.get(url + "/panel/sessions/nope").status_code == 404
        assert c.get(url + "/panel/search?q=x&since=not-a-date").status_code == 400
        assert c.get(url + "/panel/search?q=" + "x" * 3000).status_code == 400
        for bad in ("0", "1000"):  # one message for both ends (limit=0 was "an integer from 1 to 1000", 1000 "from 0 to 200")
            r = c.get(url + f"/panel/search?q=fault&limit={bad}")
            assert r.status_code == 400 and "limit must be a whole number from 1 to 200" in r.text, bad
        assert c.get(url + "/panel/find?id=" + seeded["fact"], follow_redirects=False).status_code == 303


def test_a_bidirectional_override_is_shown_not_obeyed(served: tuple[Memory, str, dict[str, Any]]) -> None:
    """Found by a privacy-minded user: "\u202eevil\u202c" in a message was displayed as "live"."""
    memory, url, _ = served
    memory.append("bidi", "user", "file name: report\u202efdp.exe ends", title="t\u2067x\u2069")
    with httpx.Client() as c:
        for path in ("/panel/sessions/bidi", "/panel/search?q=report"):
            page = c.get(url + path).text
            assert "\u202e" not in page and "\u2067" not in page and "⟦U+202E⟧" in page, path


def test_search_shows_summaries_and_documents_too(served: tuple[Memory, str, dict[str, Any]]) -> None:
    """Found by a panel user: `memory_search` returned a document chunk and summaries the panel's search never showed."""
    memory, url, _ = served
    memory.vaults.init("runbooks", "semantic")
    memory.vaults.write_document("runbooks", "deploy.md", "# Deploy\n\n## Brno\n\nThe Brno datacenter hosts the <b>staging</b> racks.\n")
    memory.vaults.attach("runbooks", agent="coder")
    with httpx.Client() as c:
        page = c.get(url + "/panel/search?q=Brno+datacenter&agent=coder").text
        assert "Documents" in page and "deploy.md" in page and "Brno" in page and "<b>staging</b>" not in page
        assert "1 document chunks" in page and "0 hits" not in page  # the count had said "0 hits" above the chunk it showed
        page = c.get(url + "/panel/search?q=kubernetes+rollout").text
        assert "Summaries" in page and "/panel/sessions/long" in page
        typo = c.get(url + "/panel/vaults")  # found too: raw JSON
        assert typo.status_code == 404 and "text/html" in typo.headers["content-type"] and "no panel page /panel/vaults" in typo.text
        past = c.get(url + "/panel/sessions?offset=1000").text  # found too: "No sessions yet" while three exist
        assert "No sessions past 1000" in past and "No sessions yet" not in past
        retracted = memory.facts.write("The cluster runs on bare metal.")
        memory.facts.retract(retracted.id)
        assert "→ now" not in c.get(url + f"/panel/facts/{retracted.id}").text  # a retracted fact held never


def test_the_health_page_shows_quarantined_events(home: Path) -> None:
    from test_index_faults import POISON, _write_raw

    with Memory(home, settings=Settings.load(env={}, embedder="none")) as m, ServerThread(m) as url:
        assert "None: every journal line is indexed" in httpx.get(url + "/panel/health").text
        _write_raw(m, "poisoned", [POISON["infinity in metadata"]("poisoned", 1)])
        m.catch_up()
        page = httpx.get(url + "/panel/health").text
    table = page[page.index('id="quarantine"'):]
    assert 'href="/panel/sessions/poisoned"' in table and "evt_poisoned_0001" in table
    assert "palimpsest retry-quarantined" in page and "events quarantined" in page


def test_actions_need_the_token_json_and_writes(served: tuple[Memory, str, dict[str, Any]]) -> None:
    _, url, _ = served
    body = {"tag": "topic:ops", "decision": "accept", "target_type": "session", "target_id": "deploy-1"}
    with httpx.Client() as c:
        token = _csrf(c, url)
        assert httpx.post(url + "/panel/action/tag-decide", json=body, headers={"X-Palimpsest-CSRF": token}).status_code == 403  # no cookie
        assert c.post(url + "/panel/action/tag-decide", json=body).status_code == 403  # no header
        assert c.post(url + "/panel/action/tag-decide", json=body, headers={"X-Palimpsest-CSRF": "forged"}).status_code == 403
        form = c.post(url + "/panel/action/tag-decide", data=body, headers={"X-Palimpsest-CSRF": token})
        assert form.status_code == 400  # a form post (what a cross-site page can send) is refused
        for bad in ({}, {**body, "tag": ""}, {**body, "tag": "x" * 70_000}, {**body, "target_type": "nope"}, {**body, "tag": ["x"]}):
            r = c.post(url + "/panel/action/tag-decide", json=bad, headers={"X-Palimpsest-CSRF": token})
            assert r.status_code in (400, 413) and r.json()["ok"] is False
        assert c.post(url + "/panel/action/nope", json={}, headers={"X-Palimpsest-CSRF": token}).status_code == 404
        ok = c.post(url + "/panel/action/tag-decide", json=body, headers={"X-Palimpsest-CSRF": token})
        assert ok.json()["result"]["state"] == "accepted"
    assert httpx.get(url + "/api/memory/tags/counts").json()["result"]["tags"][0]["sessions"] >= 1


def test_the_facts_page_shows_a_page_of_many_and_counts_them_all(home: Path) -> None:
    m = Memory(home, settings=Settings.load(env={}, embedder="none", distill=False, tool_synth=False))
    try:
        for i in range(205):  # `facts.write` does not curate: 205 facts hold (the page listed 500 at most and counted those)
            m.facts.write(f"Fact number {i} of many", valid_from=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z")
        with ServerThread(m) as url, httpx.Client() as c:
            first = c.get(url + "/panel/facts").text
            assert 'What holds now <span class="count">205</span>' in first and "1–200 of 205" in first
            assert "Fact number 0 of many" in first and "Fact number 199 of many" in first and "Fact number 200 " not in first
            assert 'href="?offset=200"' in first and "← Older" not in first
            last = c.get(url + "/panel/facts?offset=200").text
            assert "201–205 of 205" in last and "Fact number 204 of many" in last and "Fact number 199 " not in last
            assert 'href="?offset=0"' in last and "Newer →" not in last
            assert "Nothing here: 205 facts" in c.get(url + "/panel/facts?offset=9000").text  # past the end: said, not an error
            for bad in ("-1", "x", "1e3", "10000000"):
                assert c.get(url + f"/panel/facts?offset={bad}").status_code == 400, bad
            # 60 pairs to review: the first 50 shown, all counted (found by a new user: 399 cards, 326 KB, ~0.9 s)
            for i in range(60):
                m.facts.relate(m.facts.write(f"Review pair {i}", valid_from="2026-02-01").id, m.facts.query(limit=1)[0].id)
            page = c.get(url + "/panel/facts").text
            assert 'To review <span class="count">60</span>' in page and "The first 50 of 60 are shown" in page
            assert page.count("Review pair ") == 50
    finally:
        m.close()


def test_a_message_opened_from_a_hit_shows_the_turns_before_it_and_pages_both_ways(home: Path) -> None:
    """Found by a panel user: opening message 1,500 of a 2,000-message session from a search hit started the page at it
    (the question that led to it unseen, no "Earlier"), and "Later →" on the last page led to "No events."."""
    m = Memory(home, settings=Settings.load(env={}, embedder="none", distill=False, tool_synth=False))
    try:
        m.ingest_session("big", [{"role": "user", "content": f"migration log line {i}" + (" ZEBRAFISH-42" if i == 1500 else ""),
                                  "created_at": f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"} for i in range(2000)])
        hit = m.search("ZEBRAFISH-42", limit=1).hits[0].message
        with ServerThread(m) as url, httpx.Client() as c:
            page = c.get(url + f"/panel/sessions/big?around={hit.id}").text
            assert "migration log line 1495" in page and "migration log line 1494<" not in page
            assert f'id="{hit.id}"' in page and "← Earlier" in page and "Later →" in page
            assert 'start="1496"' in page  # numbered from the session's start
            last = c.get(url + "/panel/sessions/big?offset=1800").text
            assert "migration log line 1999" in last and "Later →" not in last
            assert "Later →" in c.get(url + "/panel/sessions/big?offset=1799").text
    finally:
        m.close()


def test_writes_off_panel_is_read_only(home: Path) -> None:
    m = Memory(home, settings=Settings.load(env={}, embedder="none", distill=False, tool_synth=False))
    _seed(m)
    try:
        with ServerThread(m) as url, httpx.Client() as c:
            page = c.get(url + "/panel/tags").text
            assert "Read-only" in page and 'data-action="tag-decide"' not in page
            token = _csrf(c, url)
            r = c.post(url + "/panel/action/tag-decide", json={"tag": "topic:ops", "decision": "accept", "target_type": "session",
                                                                "target_id": "deploy-1"}, headers={"X-Palimpsest-CSRF": token})
            assert (r.status_code, r.json()["error"]["code"]) == (403, "write_disabled")
            assert c.post(url + "/api/memory/tags/decide", json={}).status_code == 404
            assert c.get(url + "/api/memory/tags/pending").json()["ok"] is True
    finally:
        m.close()


# -- the browser ---------------------------------------------------------------------
@pytest.fixture
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip(f"no chromium at {CHROMIUM} (apt-get install -y chromium); the panel's browser tests need it")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def test_panel_in_a_browser(served: tuple[Memory, str, dict[str, Any]], browser: Any) -> None:
    memory, url, _ = served
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # bypass_csp: stored HTML must stay inert by escaping alone (the CSP is a second layer), and
    # Playwright's wait_for_function evaluates strings, which the panel's CSP forbids
    page = browser.new_page(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.accept()))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))

    def shot(name: str) -> None:
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        assert page.evaluate("window.__xss") is None, f"stored HTML ran on {name}"

    # sessions: browse, open one, tool calls folded, jump to an id
    page.goto(url + "/panel")
    assert page.locator("table.rows tbody tr").count() == 3
    shot("sessions")
    page.click("a:text-is('deploy-1')")
    tool = page.locator("details.tool").first
    assert tool.get_attribute("open") is None  # folded
    tool.locator("summary").click()
    assert "kubectl get nodes" in tool.inner_text()
    shot("session")
    message_id = memory.browse(session="deploy-1")[2].id
    page.fill("#jump-id", message_id)
    page.press("#jump-id", "Enter")
    page.wait_for_url(re.compile(f"around={message_id}"))
    assert page.locator(f"li.event.target#{message_id}").count() == 1

    page.goto(url + "/panel/sessions/long")
    leaf_id = memory.store.session_summaries("long", 0)[0].id
    block = page.locator(f"details.summary-block#{leaf_id}")
    assert "topic:rollouts" in block.locator("summary").inner_text()  # a leaf's own suggestion, on the leaf
    block.locator("summary").click()
    shot("session-summaries")

    # search: the same filters, highlights, scores on demand, keyboard focus with /
    page.goto(url + "/panel/search")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type("kubernetes cluster")
    page.keyboard.press("Enter")
    page.wait_for_selector("ol.hits li.hit")
    assert page.locator("mark").count() >= 2
    assert page.locator(".score").count() == 0
    page.goto(url + "/panel/search?q=kubernetes&tag=project:palimpsest&scores=1")
    assert {s.inner_text() for s in page.locator("ol.hits .event-head a:not(.pill)").all()} == {"deploy-1"}
    assert page.locator(".score").count() >= 1
    shot("search")
    page.goto(url + "/panel/sessions/evil")
    assert XSS in page.locator("h1").inner_text()  # shown as text
    page.goto(url + "/panel/search?q=onerror")
    shot("search-escaped")

    # tags: accept a suggestion, see it carried by the session
    page.goto(url + "/panel/tags")
    shot("tags")
    row = page.locator("#pending tr", has_text="topic:kubernetes")
    row.locator("button", has_text="Accept").click()
    page.wait_for_load_state("load")
    page.wait_for_function("!document.querySelector('#pending') || !document.querySelector('#pending').innerText.includes('topic:kubernetes')")
    assert "topic:kubernetes" in memory.tags.session_tags(["deploy-1"])["deploy-1"]
    # bad input: empty, script in a value (escaped), a merge into another key (refused, shown as text)
    page.click("form[data-action='taxonomy-upsert'] button")
    assert page.locator("form[data-action='taxonomy-upsert'] input[name=tag]:invalid").count() == 1  # the browser refuses empty
    page.fill("form[data-action='taxonomy-upsert'] input[name=tag]", "topic:<b>bold</b><script>window.__xss=3</script>")
    page.click("form[data-action='taxonomy-upsert'] button")
    page.wait_for_selector("#taxonomy >> text=<b>bold</b>")
    page.fill("form[data-action='tag-merge'] input[name=tag]", "topic:ops")
    page.fill("form[data-action='tag-merge'] input[name=into]", "other:ops")
    page.click("form[data-action='tag-merge'] button")
    page.wait_for_selector("#toast.bad")
    assert "merge within one key" in page.locator("#toast").inner_text()
    shot("tags-after")

    # facts: what holds now, a fact's history, supersede from there, see the change
    page.goto(url + "/panel/facts")
    shot("facts")
    page.click("text=The cluster runs kubernetes 1.30")
    page.fill("form[data-action='fact-supersede'] textarea", "The cluster runs kubernetes 1.31")
    page.click("form[data-action='fact-supersede'] button")
    page.wait_for_selector("ol.timeline li.step >> nth=1")
    assert page.locator("h1").inner_text() == "The cluster runs kubernetes 1.31"
    steps = page.locator("ol.timeline li.step")
    assert "superseded" in steps.nth(0).inner_text() and "current" in steps.nth(1).inner_text()
    shot("fact-history")
    assert [f.text for f in memory.facts.query()] == ["The cluster runs kubernetes 1.31"]
    page.goto(url + "/panel/facts")  # the old one is listed as retired, linked to what replaced it
    row = page.locator("#retired tbody tr", has_text="The cluster runs kubernetes 1.30")
    assert "superseded" in row.inner_text() and "The cluster runs kubernetes 1.31" in row.inner_text()
    shot("facts-retired")
    row.locator("td >> nth=3").locator("a").click()
    assert page.locator("h1").inner_text() == "The cluster runs kubernetes 1.31"

    # health: counts, queues with the failure and a retry button
    page.goto(url + "/panel/health")
    jobs = page.locator("#jobs tr", has_text="no-such-task")
    assert "no handler" in jobs.inner_text()
    shot("health")
    jobs.locator("button", has_text="Retry failed").click()
    page.wait_for_function("!document.querySelector('#jobs button')")
    assert memory.store.job_status()["tasks"]["no-such-task"].get("queued") == 1

    assert dialogs == ["Merge? Every tag of the first value moves to the second; the first stays as an alias."]
    assert errors == []
    page.close()


# -- a server with a token: the browser signs in -------------------------------------
TOKEN = "s3cret-token-for-the-panel-test"


@pytest.fixture
def served_with_token(home: Path) -> Iterator[tuple[Memory, str]]:
    m = Memory(home, settings=Settings.load(env={}, embedder="none", enable_write=True, distill=False, tool_synth=False,
                                            token=TOKEN))
    _seed(m)
    with ServerThread(m) as url:
        yield m, url
    m.close()


def test_with_a_token_the_panel_asks_to_sign_in_and_the_cookie_opens_only_the_panel(served_with_token: tuple[Memory, str]) -> None:
    _, url = served_with_token
    with httpx.Client() as c:
        r = c.get(url + "/panel/sessions", follow_redirects=False)
        assert (r.status_code, r.headers["location"]) == (303, "/panel/login")
        assert c.get(url + "/panel/action/nope").status_code == 303  # any page view: to the sign-in page
        assert c.post(url + "/panel/action/tag-decide", json={}).status_code == 401  # an action: refused outright
        form = c.get(url + "/panel/login")
        assert form.status_code == 200 and 'name="token"' in form.text
        assert c.get(url + "/panel/static/panel.css").status_code == 200  # the sign-in page's own style
        assert c.get(url + "/panel/loginx", follow_redirects=False).status_code == 303  # only the sign-in page itself is open
        for wrong in ("", "nope", TOKEN + "x", TOKEN[:-1], "' OR 1=1 --", "\u0000", "é" * 50, "x" * 5000):
            r = c.post(url + "/panel/login", data={"token": wrong}, follow_redirects=False)
            assert r.status_code in (401, 413) and "palimpsest_auth" not in r.headers.get("set-cookie", ""), wrong[:20]
        assert "not this server" in c.post(url + "/panel/login", data={"token": "nope"}).text
        name = f"palimpsest_auth_{url.rsplit(':', 1)[1]}"  # one cookie per server port
        past, future = int(time.time()) - 10, int(time.time()) + 3600
        for forged in ("forged", f"{future}.{'0' * 64}", panel_cookie(b"another token", future), panel_cookie(TOKEN.encode(), past),
                       f"{'9' * 40}.{'0' * 64}"):
            c.cookies.set(name, forged, path="/panel")
            assert c.get(url + "/panel", follow_redirects=False).status_code == 303, forged  # forged or expired
            c.cookies.clear()
        valid = panel_cookie(TOKEN.encode(), future)
        raw = {"Cookie": f'x={{"a": 1}}; {name}={valid}'}  # a neighbour cookie it cannot parse hides nothing
        assert c.get(url + "/panel", headers=raw, follow_redirects=False).status_code == 200
        assert c.get(url + "/panel", headers={"Cookie": f"palimpsest_auth_1={valid}"}, follow_redirects=False).status_code == 303
        r = c.post(url + "/panel/login", data={"token": TOKEN}, follow_redirects=False)
        assert (r.status_code, r.headers["location"]) == (303, "/panel")
        cookie = r.headers["set-cookie"].lower()
        assert cookie.startswith(name) and "httponly" in cookie and "samesite=strict" in cookie and "path=/panel" in cookie
        assert "max-age=604800" in cookie  # a week
        assert TOKEN.lower() not in cookie  # derived from the token, not the token
        page = c.get(url + "/panel/sessions")
        assert page.status_code == 200 and "deploy-1" in page.text and "Sign out" in page.text
        assert c.get(url + "/api/stats").status_code == 401  # the cookie is for the panel only
        assert c.get(url + "/api/stats", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        # an action still needs the CSRF token beside the cookie
        csrf = re.search(r'name="csrf" content="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        body = {"tag": "topic:ops", "decision": "accept", "target_type": "session", "target_id": "deploy-1"}
        assert c.post(url + "/panel/action/tag-decide", json=body).status_code == 403
        assert c.post(url + "/panel/action/tag-decide", json=body, headers={"X-Palimpsest-CSRF": csrf}).json()["ok"] is True
        out = c.post(url + "/panel/logout", follow_redirects=False)
        assert (out.status_code, out.headers["location"]) == (303, "/panel/login")
        assert c.get(url + "/panel", follow_redirects=False).status_code == 303


def test_without_a_token_the_sign_in_page_says_there_is_nothing_to_sign_in_to(served: tuple[Memory, str, dict[str, Any]]) -> None:
    _, url, _ = served
    with httpx.Client() as c:
        assert "nothing to sign in to" in c.get(url + "/panel/login").text
        r = c.post(url + "/panel/login", data={"token": "anything"}, follow_redirects=False)
        assert r.status_code == 200 and "palimpsest_auth" not in r.headers.get("set-cookie", "")
        assert "Sign out" not in c.get(url + "/panel").text


def test_signing_in_in_a_browser(served_with_token: tuple[Memory, str], browser: Any) -> None:
    _, url = served_with_token
    page = browser.new_page()
    page.goto(url + "/panel/tags")
    page.wait_for_url(re.compile(r"/panel/login$"))
    page.fill("#token", "wrong")
    page.click("form.login button")
    assert page.locator("[role=alert]").inner_text() == "That is not this server's token."
    page.fill("#token", TOKEN)
    page.click("form.login button")
    page.wait_for_url(re.compile(r"/panel$"))
    assert page.locator("table.rows tbody tr").count() == 3
    page.goto(url + "/panel/tags")  # the cookie carries on to every page
    assert page.locator("h1").first.inner_text() != "Sign in"
    page.click("form.logout button")
    page.wait_for_url(re.compile(r"/panel/login$"))
    page.goto(url + "/panel")
    page.wait_for_url(re.compile(r"/panel/login$"))


def test_wrong_tokens_are_rate_limited_per_client(served_with_token: tuple[Memory, str]) -> None:
    _, url = served_with_token
    with httpx.Client() as c:
        for _ in range(10):
            assert c.post(url + "/panel/login", data={"token": "guess"}, follow_redirects=False).status_code == 401
        for token in ("guess", TOKEN):  # past the limit even the right token waits: a guess must not be confirmed
            r = c.post(url + "/panel/login", data={"token": token}, follow_redirects=False)
            assert r.status_code == 429 and 0 < int(r.headers["retry-after"]) <= 60
            assert "Too many wrong tokens" in r.text and "palimpsest_auth" not in r.headers.get("set-cookie", "")
        assert c.get(url + "/api/stats", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200  # the API is not locked


def test_the_sign_in_limit_forgets_old_failures() -> None:
    from palimpsest.server.panel import SignInLimit

    now = [0.0]
    limit = SignInLimit(failures=3, window=60, clock=lambda: now[0])
    for _ in range(3):
        assert limit.wait("a") == 0
        limit.failed("a")
    assert limit.wait("a") == 60 and limit.wait("b") == 0
    now[0] = 30
    assert limit.wait("a") == 30
    now[0] = 60.5
    assert limit.wait("a") == 0


def test_no_page_overflows_a_390_px_phone(served: tuple[Memory, str, dict[str, Any]], browser: Any) -> None:
    """At a phone's width every view fits: nothing scrolls sideways (the widest element is
    named when something does), and each view's access key is its own."""
    _, url, seeded = served
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 390, "height": 844}, bypass_csp=True)
    wide = []
    for path in ("/panel/sessions", "/panel/sessions/deploy-1", "/panel/sessions/long", "/panel/search?q=kubernetes&scores=1",
                 "/panel/facts", f"/panel/facts/{seeded['fact']}", "/panel/tags", "/panel/wiki", "/panel/health"):
        page.goto(url + path)
        overflow = page.evaluate("""() => {
            const w = document.documentElement.clientWidth;
            if (document.documentElement.scrollWidth <= w) return null;
            const clipped = e => { for (let p = e.parentElement; p; p = p.parentElement) {
                if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return true; } return false; };
            const over = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > w + 1 && !clipped(e));
            const e = over[over.length - 1];
            return e ? `${e.tagName.toLowerCase()}.${e.className} (${Math.round(e.getBoundingClientRect().right)} px)` : 'unknown';
        }""")
        page.screenshot(path=str(ARTIFACTS / f"phone-{path.strip('/').replace('/', '-').split('?')[0]}.png"), full_page=True)
        if overflow:
            wide.append(f"{path}: {overflow}")
    keys = page.eval_on_selector_all("header nav a", "as => as.map(a => a.accessKey)")
    icon = page.evaluate("() => document.querySelector('link[rel=icon]').href")
    page.close()
    assert wide == []
    r = httpx.get(icon)
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg") and b"<svg" in r.content
    assert httpx.get(url + "/favicon.ico", follow_redirects=True).content == r.content
    assert len(keys) == len(set(keys)) == 6 and set("seftwh") == set(keys)


def test_search_results_stay_inside_the_page(served: tuple[Memory, str, dict[str, Any]], browser: Any) -> None:
    """Found by a panel user: a hit with a long session id or an unbroken tool result made the search page 4,800 px wide."""
    memory, url, _ = served
    memory.append("s-" + "verylongsessionid" * 11, "assistant", "", tool_name="bash", tool_args={"cmd": "cat"},
                  tool_result="zebrafish" + "x" * 3000)
    for width, height in ((1280, 800), (390, 844)):
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(url + "/panel/search?q=zebrafish&mode=substring")
        assert page.locator(".hit").count() >= 1
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1, width
        page.close()


def test_a_message_opened_among_many_of_one_moment_is_on_its_page(home: Path) -> None:
    """Found in review: 300 messages of one second, the 251st opened from a hit: the count of those before it was
    exclusive of its moment, the page opened at the session's start, and the message was not on it."""
    m = Memory(home, settings=Settings.load(env={}, embedder="none", distill=False, tool_synth=False))
    try:
        ids = m.ingest_session("burst", [{"role": "user", "content": f"burst line {i}", "created_at": "2025-01-01T00:00:00Z"}
                                         for i in range(300)])["ids"]
        with ServerThread(m) as url, httpx.Client() as c:
            page = c.get(url + f"/panel/sessions/burst?around={ids[250]}").text
        assert f'id="{ids[250]}"' in page and 'start="246"' in page
    finally:
        m.close()


def test_search_offers_more_hits_when_a_page_is_full(home: Path) -> None:
    """Found by a panel user: 2,000 matches showed 20 hits, with no way to more but typing `limit` into the URL."""
    m = Memory(home, settings=Settings.load(env={}, embedder="none", distill=False, tool_synth=False))
    try:
        m.ingest_session("big", [{"role": "user", "content": f"migration log line {i}"} for i in range(60)])
        with ServerThread(m) as url, httpx.Client() as c:
            first = c.get(url + "/panel/search?q=migration&session=big").text
            assert first.count('<li class="hit">') == 20 and "Show 40 →" in first and "limit=40" in first
            more = c.get(url + "/panel/search?q=migration&session=big&limit=40").text
            assert more.count('<li class="hit">') == 40 and "Show 80 →" in more
            last = c.get(url + "/panel/search?q=migration&session=big&limit=80").text
            assert last.count('<li class="hit">') == 60 and 'class="pager"' not in last
    finally:
        m.close()


def test_a_review_settled_from_the_panel_as_replaced(home: Path) -> None:
    """A parent's babysitter's new number, left for review: the panel's card offers "the new one replaces it"."""
    with Memory(home, settings=Settings.load(env={}, embedder="none", enable_write=True, distill=False)) as m, ServerThread(m) as url, httpx.Client() as c:
        old = m.facts.write("babysitter is marisol, her number is 555-0142.", valid_from="2026-09-01")
        new = m.facts.write("marisol has a new number: 555-0199.", valid_from="2026-11-01")
        m.facts.relate(new.id, old.id)
        page = c.get(url + "/panel/facts").text
        assert 'data-decision="replaces"' in page
        token = _csrf(c, url)
        body = {"new_id": new.id, "existing_id": old.id, "decision": "replaces"}
        r = c.post(url + "/panel/action/fact-settle", json=body, headers={"X-Palimpsest-CSRF": token})
        assert r.json()["result"]["id"] == new.id
        assert [f.text for f in m.facts.query()] == ["marisol has a new number: 555-0199."]
        bad = c.post(url + "/panel/action/fact-settle", json={**body, "decision": "maybe"}, headers={"X-Palimpsest-CSRF": token})
        assert bad.status_code == 400 and "replaces" in bad.json()["error"]["message"]


def test_the_jump_box_opens_a_document_chunk(memory: Memory) -> None:
    """Found by a paralegal: /panel/find?id=chk_fa786872c0b5eabc1d30 (an id a recall block shows, which `get-full`
    opens) answered 404 "no message, fact or session with id …"."""
    memory.vaults.init("escritorio", "semantic")
    memory.vaults.write_document("escritorio", "contratos/renda.md", "# Contrato\n\n## Renda\n\nRenda mensal de 900 <b>euros</b>.\n")
    chunk = memory.vaults.query("escritorio", "renda mensal").hits[0]
    with ServerThread(memory) as url, httpx.Client() as c:
        jump = c.get(url + f"/panel/find?id={chunk.id}", follow_redirects=False)
        assert jump.status_code == 303, jump.text
        page = c.get(url + jump.headers["location"])
        assert page.status_code == 200
        for shown in (chunk.id, "escritorio", "contratos/renda.md", "Contrato &gt; Renda", "Renda mensal de 900 &lt;b&gt;euros&lt;/b&gt;."):
            assert shown in page.text, shown
        missing = c.get(url + "/panel/chunks/chk_00000000000000000000")
        assert missing.status_code == 404 and "no document chunk" in missing.text
