"""The curator's pair model (`palimpsest.facts.pairs`): what the rules leave at related or
new, read again by the shipped logistic regression (confirm or unlink only) — with the bundled MiniLM, on both backends.
The pairs here were written for these tests; none is in a bench set."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fakeopenai import FakeOpenAI, Reply
from palimpsest import Memory, Settings
from palimpsest.cli import main
from palimpsest.facts import Facts, pairs, slots
from palimpsest.facts.curator import compare, decide, judge

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def embedder():
    from palimpsest.embed import get_embedder

    return get_embedder("local")


def curate(memory: Memory, embedder, old: str, new: str, learned: bool, vault: str):
    facts = Facts(memory.store, memory.home, embedder=lambda: embedder)
    facts.curator.learned = learned
    facts.init_vault(vault)
    first = facts.curator.write({"text": old, "vault": vault, "valid_from": "2024-01-01"}).fact
    return facts, first, facts.curator.write({"text": new, "vault": vault, "valid_from": "2024-06-01"})


@pytest.mark.parametrize(("old", "new"), [
    ("I'm a Chelsea fan.", "Our Chelsea flat has a leaking roof."),  # a club and a district: one word, two things
    ("I love hiking in the Alps.", "I love the soundtrack of that film."),  # one verb of one holder, nothing else shared
])
def test_the_pair_model_unlinks_what_only_looks_related(memory: Memory, embedder, old: str, new: str) -> None:
    _, _, by_rules = curate(memory, embedder, old, new, False, "rules")
    assert by_rules.action == "related"
    facts, first, d = curate(memory, embedder, old, new, True, "learned")
    assert d.action == "new" and "read by the pair model" in d.reason
    assert facts.get(first.id).status == "current" and not d.fact.related_to  # type: ignore[union-attr]


@pytest.mark.parametrize(("old", "new"), [
    ("My brother Sam is a teacher.", "Sam coaches the school's chess club on Fridays."),  # one person, another thing said of him
    ("Our cloud provider is AWS.", "Everything runs on Google Cloud."),  # a change it reads (no marker): it may link, never supersede
])
def test_the_pair_model_links_short_close_statements_and_never_supersedes(memory: Memory, embedder, old: str, new: str) -> None:
    _, _, by_rules = curate(memory, embedder, old, new, False, "rules")
    facts, first, d = curate(memory, embedder, old, new, True, "learned")
    assert by_rules.action == "new" and d.action == "related" and "read by the pair model" in d.reason
    assert facts.get(first.id).status == "current" and d.fact.related_to == [first.id]  # type: ignore[union-attr]


@pytest.mark.parametrize(("old", "new", "superseded"), [
    ("Our team chat is Slack.", "We are on Microsoft Teams for chat now.", True),  # another name, "now"
    ("I buy my coffee beans from Ozone.", "I get my beans from Origin these days.", True),
    ("We host the wiki on Confluence.", "The wiki lives in Notion these days.", True),
    ("The book club meets at the library.", "We moved book club to the café on Elm Street.", True),  # the verb says it
    ("Our cloud provider is AWS.", "We moved everything to Google Cloud.", True),
    ("Our billing service is written in PHP.", "We rewrote the billing service in Elixir.", True),  # verbs of change
    ("The Orion launch is set for April 3.", "Orion slipped to the end of May.", True),
    ("My aunt lives in Porto.", "My aunt relocated to Faro last spring.", True),
    ("I passed my driving test.", "I passed the exam with distinction.", False),  # "passed … with": no change
    ("My dog is called Rufus.", "My neighbour's dog is called Biscuit now.", False),  # another holder
    ("I went to Lisbon in March.", "I went to Porto in May.", False),  # two trips: "went" says no change
    ("My friends and I went to a comic convention last month.", "I went on a hiking trip last week with some coworkers.",
     False),  # chat (LoCoMo): a verb the parser reads as a change, no value named
    ("I've been growing basil on the balcony.", "The basil is doing really well now.", False),  # a state, no value named
    ("I prefer tea in the morning.", "I take tea rather than coffee now.", False),  # "rather than": the slot reading's to weigh
    ("I've been using a face wash my dermatologist recommended and it has been working well for my skin.",
     "I'm definitely going to look into some new moisturizers for my skin now.", False),  # chat: "now" of anything
    ("I still have a lot to learn about Canada.", "Now, I can focus on rebuilding my life here in Canada.", False),  # "Now," opens
    ("I've watched The Crown with my sister.", "I've been watching The Crown for about a month now.", False),  # how long it has held
])
def test_a_change_said_by_a_marker_supersedes_whatever_the_words(memory: Memory, embedder, old: str, new: str,
                                                                   superseded: bool) -> None:
    """A plain change with few shared words ("Our docs site is hosted on Netlify." / "The
    documentation now lives on Cloudflare Pages.") was left new or related beside what it
    replaced: now "now", "these days", "from now on", "instead" or a verb of change ("moved",
    "switched", "migrated"; not "went"), another name or one number for another, a cosine of
    0.4 and two short statements of one holder supersede, by the rules (the pair model never does)."""
    facts, first, d = curate(memory, embedder, old, new, True, "v")
    assert (facts.get(first.id).status == "superseded") is superseded, d.reason  # type: ignore[union-attr]
    assert (d.action == "supersede") is superseded and "pair model" not in d.reason if superseded else d.action != "supersede"
    if new == "The wiki lives in Notion these days.":  # the decision says why
        assert d.reason == "says it changed (“these days”), with another name: an update"


def test_the_pair_model_links_neither_long_nor_distant_statements() -> None:
    linker = always("related")
    linker.link_words, linker.link_cosine = 10, 0.5
    old, new = "My brother Sam is a teacher.", "Sam coaches the school's chess club on Fridays."
    assert decide(compare(new, old, 0.6), True, new, old, linker)[0] == "related"
    assert decide(compare(new, old, 0.4), True, new, old, linker)[0] == "new"  # the vectors hold them apart
    chat = "Sam coaches the school's chess club on Fridays, which I think is great for the kids, honestly."
    assert decide(compare(chat, old, 0.6), True, chat, old, linker)[0] == "new"  # chat: "also" joined whatever it met


def test_what_the_rules_decide_the_model_leaves(memory: Memory, embedder) -> None:
    _, _, d = curate(memory, embedder, "Our CI runs on CircleCI.", "CI is on Buildkite now.", True, "v")
    assert d.action == "supersede" and "pair model" not in d.reason  # the slot reading decided it


def test_facts_write_from_the_cli_uses_the_model(capsys: pytest.CaptureFixture[str], home: Path, store_url: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PALIMPSEST_EMBEDDER", "local")
    said = ("I'm a Chelsea fan.", "Our Chelsea flat has a leaking roof.")
    for text, day in zip(said, ("2024-01-01", "2024-06-01")):
        assert main(["--home", str(home), "--store", store_url, "facts", "write", text, "--valid-from", day, "--json"]) == 0
    d = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert d["action"] == "new" and "pair model" in d["reason"]
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="none")) as memory:
        assert sorted(f.text for f in memory.facts.query()) == sorted(said)


@pytest.mark.parametrize("on", ["1", "0"])
def test_the_setting_turns_it_off(home: Path, store_url: str, on: str) -> None:
    s = Settings.load(env={"PALIMPSEST_CURATOR_MODEL": on}, embedder="local")
    with Memory(home, store_url, settings=s) as memory:
        memory.facts.curator.write({"text": "I'm a Chelsea fan.", "valid_from": "2024-01-01"})
        d = memory.facts.curator.write({"text": "Our Chelsea flat has a leaking roof.", "valid_from": "2024-06-01"})
        assert d.action == ("new" if on == "1" else "related")


@pytest.mark.parametrize(("said", "then", "superseded"), [
    ("I never realized how much light my plants need.", "I'm definitely going to buy a grow lamp now.", False),  # "now": no change of it
    ("I've been growing basil on the balcony.", "The basil is doing really well now.", False),
    ("My deploy target is Heroku for the API.", "Correction: my deploy target is Fly.io now.", True),  # a correction of its slot
])
def test_a_change_heard_in_chat_supersedes_only_its_slot(home: Path, store_url: str, said: str, then: str, superseded: bool) -> None:
    """The local distiller takes a sentence with "now" for a correction of whatever it changes; with the
    embedder, the nearest fact at a cosine of 0.5 is not that (found on the LongMemEval haystacks)."""
    with Memory(home, store_url, settings=Settings.load(env={}, embedder="local")) as memory:
        first = memory.facts.curator.write({"text": said, "valid_from": "2024-01-01"}).fact
        memory.append("s", "user", then, created_at="2024-06-01T10:00:00Z")
        memory.distiller.close_turn("s", use_llm=False)
        assert (memory.facts.get(first.id).status == "superseded") is superseded  # type: ignore[union-attr]
        assert len(memory.facts.query()) == (1 if superseded else 2)


def always(label: str) -> pairs.PairModel:
    """A model that says `label` for every pair with certainty (its bias alone)."""
    n = len(pairs.FEATURES)
    weights = [[0.0] * len(pairs.LABELS) for _ in range(n)] + [[50.0 if x == label else 0.0 for x in pairs.LABELS]]
    return pairs.PairModel({"features": list(pairs.FEATURES), "labels": list(pairs.LABELS), "mean": [0.0] * n, "scale": [1.0] * n,
                            "weights": weights, "confirm_at": 0.9, "max_words": 17})


@pytest.mark.parametrize(("old", "new"), [
    ("Alice reports to Bob.", "Bob reports to Alice."),  # the same words, another statement
    ("The train leaves at 8:05.", "The train leaves at 8:35."),  # a number differs
    ("Meeting with Sarah on Friday.", "Meeting with Sandra on Friday."),  # a name differs
    ("The gate opens at noon.", "The gate does not open at noon."),  # a negation
    ("Ich trinke Kaffee.", "Ich trinke keinen Kaffee."),  # a negation in another language (it had been a confirmation)
    ("Ich wohne in Köln.", "Ich wohne nicht mehr in Köln."),
    ("Bebo café.", "Nunca bebo café."),
    ("Yusuf is engaged to Leila.", "Yusuf and Leila are married."),  # a later stage of one thing (the rules merged it)
    ("Ines is dating Tom.", "Ines and Tom got engaged."),
])
def test_no_model_merges_what_the_words_keep_apart(old: str, new: str) -> None:
    s = compare(new, old, 0.95)
    assert pairs.says_two_things(s) and judge(s, True) != "confirm"
    assert decide(s, True, new, old, always("confirm"))[0] != "confirm"


def test_a_model_confirms_only_past_its_threshold() -> None:
    s = compare("Home for me is Porto.", "I live in Porto.", 0.8)
    assert not pairs.says_two_things(s) and judge(s, True) in ("related", "new")
    said, old = "Home for me is Porto.", "I live in Porto."
    assert decide(s, True, said, old, always("confirm")) == ("confirm", "the same statement in other words (read by the pair model)")
    shy = always("confirm")
    shy.confirm_at = 1.01
    assert decide(s, True, said, old, shy)[0] != "confirm"
    assert decide(s, True, said, old, always("supersede"))[0] == "related"  # a supersession is the rules' alone
    more = compare(said, "Home for me is Porto, by the sea.", 0.6)  # one says all the other does, and more
    assert more.refines and not pairs.says_two_things(more) and judge(more, True) in ("related", "new")
    assert decide(more, True, said, "Home for me is Porto, by the sea.", always("confirm"))[0] != "confirm"
    apart = compare("I love the soundtrack of that film.", "I commute by bike.", 0.1)
    assert judge(apart, True) == "new"  # nor does it link what the rules did not
    assert decide(apart, True, "I love the soundtrack of that film.", "I commute by bike.", always("related"))[0] == "new"
    long = old + " I moved here for work years ago and I love the light, the river and the food."
    assert len(long.split()) > 17 and decide(s, True, said, long, always("confirm"))[0] == judge(s, True)  # longer than it knows
    s.semantic = None
    assert decide(s, True, said, old, always("confirm"))[0] == judge(s, True)  # no embedder: the rules alone


def test_an_unreadable_model_file_leaves_the_rules_to_decide(memory: Memory, embedder, monkeypatch: pytest.MonkeyPatch,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> pairs.PairModel:
        raise ValueError("curator-pairs.json: Expecting value: line 1 column 1")

    monkeypatch.setattr(pairs, "shipped", broken)
    facts, first, d = curate(memory, embedder, "I'm a Chelsea fan.", "Our Chelsea flat has a leaking roof.", True, "v")
    assert d.action == "related" and d.fact is not None and facts.get(first.id).status == "current"  # type: ignore[union-attr]
    assert "pair model cannot be read" in caplog.text and not facts.curator.learned


def test_a_model_file_of_other_features_is_refused() -> None:
    spec = json.loads((ROOT / "src/palimpsest/data/curator-pairs.json").read_text(encoding="utf-8"))
    spec["features"] = spec["features"][:-1]
    with pytest.raises(ValueError, match="other features"):
        pairs.PairModel(spec)


def test_the_shipped_model_is_what_the_development_pairs_train() -> None:
    """Nobody edits the weights by hand: bench/train_curator.py on the pair files gives them."""
    r = subprocess.run([sys.executable, str(ROOT / "bench/train_curator.py"), "--check"], check=False, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_with_an_llm_it_decides_the_band_the_rules_leave(home: Path, store_url: str) -> None:
    with FakeOpenAI() as fake:
        fake.push(Reply.json({"action": "related", "slot": "user / football"}))
        s = Settings.load(env={}, embedder="local", llm_url=fake.url, llm_model="m", llm_backoff="0,0,0", llm_structured="json_schema")
        with Memory(home, store_url, settings=s) as memory:
            memory.facts.curator.write({"text": "I'm a Chelsea fan.", "valid_from": "2024-01-01"})
            d = memory.facts.curator.write({"text": "Our Chelsea flat has a leaking roof.", "valid_from": "2024-06-01"})
            assert d.action == "related" and "decided by the LLM" in d.reason and len(fake.requests) == 1


@pytest.mark.parametrize(("old", "new", "cosine", "action"), [
    # both name both stages: the same statement, not a later stage
    ("Yusuf and Leila got engaged in May and married in June.", "Yusuf and Leila were engaged in May and got married in June.",
     0.99, "confirm"),
    ("The parser is written in C.", "We rewrote the parser in a weekend.", 0.5, "new"),  # "in a weekend": how, not what
    ("The landing page is built with React.", "I rebuilt the landing page with my cofounder.", 0.5, "new"),
    ("We use Python for the backend.", "We switched the backend to Go.", 0.44, "supersede"),  # Go, the language
    ("We went to Lisbon in May.", "We are in Porto now.", 0.51, "new"),  # a past happening stays what happened
    ("I buy my coffee beans from Ozone.", "These days I get my beans from Origin.", 0.62, "supersede"),  # the marker opens it
])
def test_the_marker_rule_on_what_a_review_found(old: str, new: str, cosine: float, action: str) -> None:
    assert judge(compare(new, old, cosine), True) == action


@pytest.mark.parametrize(("text", "adverb"), [
    ("Design is handled by Rui now.", "now"), ("These days I get my beans from Origin.", "These days"),
    ("From now on, replies in German.", "From now on"), ("I don't smoke anymore.", "anymore"), ("We use Notion instead.", "instead"),
    ("Now, I can focus on my life here.", ""), ("Right now I am busy.", ""), ("I am free just now.", ""),
    ("I have known it for ages now.", ""), ("Any more questions?", ""), ("The Power of Now is a book.", ""),
    ("Nights out are rare now that I have kids.", ""), ("I'm now considering the Fitbit.", ""), ("I take tea instead of coffee.", ""),
])
def test_which_adverbs_say_a_change(text: str, adverb: str) -> None:
    assert slots.change_adverb(text) == adverb
