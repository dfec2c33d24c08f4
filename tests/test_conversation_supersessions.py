"""Pairs from conversation that the curator took for updates and must not (found on the
LongMemEval dev haystacks, `bench/recall.py knowledge --show-superseded`): a negation in a
relative clause, a number that says when rather than what, a list's enumerator, "still",
a time expression the subject hides behind. Each is checked with the cosine the bundled
model gives the pair and without an embedder; the updates beside them still supersede."""

from __future__ import annotations

import pytest

from palimpsest import Memory
from palimpsest.facts import slots
from palimpsest.facts.curator import compare, judge

BINS_OLD = ("I'm also planning to use my new storage bins to store items that I don't use frequently, like out-of-season clothes "
            "and special occasion dresses.")
BINS_NEW = ("I'm planning to use my new storage bins to store some of the clothes that I've kept, like my out-of-season clothes "
            "and special occasion dresses.")

NOT_UPDATES = [  # (earlier, later, the cosine MiniLM gives them)
    (BINS_OLD, BINS_NEW, 0.95),
    (("Speaking of which, the week before last, on June 8th, I went to the Joshua Tree Music Festival in Indio, California, and it "
      "was amazing!"), ("Speaking of which, the week before last, on June 8th, I went to the Joshua Tree Music Festival in Indio, "
                        "California, and we camped out for the whole weekend."), 0.93),
    ("I was passing the park on my way to school when I lived there", '(2)I "used to pass" the park on my way to school when I lived there',
     0.80),
    (("I got those clothes from a store I stumbled upon about three weeks ago while window shopping, and I ended up buying two tops "
      "and a pair of distressed denim jeans."), ("I recently bought a pair of distressed denim jeans from a store I stumbled upon while "
                                                 "window shopping, and I ended up getting two tops as well."), 0.90),
    ("Your king is on e1, in check from my rook on e8.", "Your king is still on e1.", 0.74),
    ("I have three little kids.", "My kids are 18.", 0.68),
    # a number before a unit or a word that is no thing counted ("35 minutes", "$4,500 per month", "7:30 AM on", "20% off")
    (("Look, I suppose by way of an agenda for the call today, we've got another 35 minutes set aside and thought it'd best just "
      "to kind of keep this pretty conversational."),
     "I'll set reminders on my phone to alert me when I've reached my daily limit of 20 minutes.", 0.26),
    ("I earn around $4,500 per month, and it's a fixed salary.",
     "I'll allocate $700 per month towards the credit card debt and try to pay it off.", 0.42),
    ("I need to wake up at 7:30 AM on typical weekdays.",
     "I have a morning yoga class at 7:00 AM on weekdays, so I'd like to make sure I have some time to get ready beforehand.", 0.46),
    ("I actually used a 20% off coupon on skincare products from my local pharmacy last week, and it was a great deal!",
     "I love pasta and I have a 10% off coupon for it from my favorite grocery store.", 0.43),
    # a "now" of chat, and a number of how long, change nothing
    ("I've actually been dancing salsa for about 9 weeks now, and I'm really loving it.",
     "I've been using it at least three times a week, and it's been really reliable.", 0.23),
    ("I've been taking a stand-up comedy class for 6 weeks now, and it's been a blast.",
     "I've been keeping a life list of all the bird species I've seen, and as of now, I'm up to 43 species.", 0.12),
    # someone else quitting, and a noun of the fact, end nothing of it
    ("I'm planning a summer party and want to serve some refreshing drinks.",
     "In addition, many people embraced the idea of temperance and chose to drink less or quit drinking altogether.", 0.25),
    ("I've not finished a 3D motion design video that I was working on as part of a course in 2020.",
     "I’d say these fears held me back from completing a 3D motion design video that I was working on as part of a course in 2020.", 0.74),
]

UPDATES = [
    ("Your king is still on e1.", "Your king is already on d1.", 0.72),
    ("The deadline is June 8th.", "The deadline is June 15th.", 0.90),
    ("The release is planned for the week after next.", "The release is planned for March 3.", 0.70),
    ("I don't eat meat.", "I eat meat again.", 0.80),
    ("I've completed 4 projects since starting painting classes, and I'm feeling pretty confident about my skills.",
     "I just finished my 5th project since starting painting classes, and I'm feeling pretty accomplished!", 0.80),
]


@pytest.mark.parametrize(("earlier", "later", "cosine"), NOT_UPDATES)
@pytest.mark.parametrize("with_cosine", [True, False])
def test_conversation_pairs_that_are_not_updates(earlier: str, later: str, cosine: float, with_cosine: bool) -> None:
    s = compare(later, earlier, cosine if with_cosine else None)
    assert judge(s, True) not in ("supersede", "dispute"), s.to_dict()


@pytest.mark.parametrize(("earlier", "later", "cosine"), UPDATES)
def test_updates_beside_them_still_supersede(earlier: str, later: str, cosine: float) -> None:
    assert judge(compare(later, earlier, cosine), True) == "supersede"


def test_a_negation_in_a_relative_clause_denies_nothing() -> None:
    assert slots.main_clause("I store items that I don't use often.") == "I store items "
    assert slots.main_clause("I said that I don't eat meat.") == "I said that I don't eat meat."
    assert "negation" not in compare(BINS_NEW, BINS_OLD).differs
    assert "negation" in compare("I don't use the storage bins.", "I use the storage bins.").differs


def test_a_time_said_is_not_a_value_changed() -> None:
    """"about three weeks ago" left out of a retelling is no number changed; a date that is
    the slot's value still is."""
    old, new = NOT_UPDATES[3][:2]
    assert "number" not in compare(new, old).differs
    assert compare("The deadline is June 15th.", "The deadline is June 8th.").slot == "changed"


def test_an_opening_time_with_a_preposition_leaves_the_subject() -> None:
    slot = slots.parse("Speaking of which, the week before last, on June 8th, I went to the Joshua Tree Music Festival.")
    assert slot is not None and slot.holder == "i" and not slot.change


def test_retellings_written_one_after_another_both_stay_current(memory: Memory) -> None:
    """As a conversation's distilled facts reach the curator, one after another, on each backend."""
    for earlier, later, _ in NOT_UPDATES[:1] + NOT_UPDATES[4:6]:
        memory.facts.curator.write({"text": earlier, "valid_from": "2023-05-01"})
        decision = memory.facts.curator.write({"text": later, "valid_from": "2023-06-01"})
        assert decision.action not in ("supersede", "dispute"), decision.reason
    current = {f.text for f in memory.facts.query()}
    assert {BINS_OLD, "Your king is on e1, in check from my rook on e8.", "I have three little kids."} <= current


# friend chat (LoCoMo dev, `bench/supersessions.py`): feelings, cheers and an "even" that were read as one slot changed
FRIEND_CHAT = [
    ("Winning a tough game must have been such an exhilarating experience!", "Winning must have been so thrilling!"),
    ("Meeting him and seeing him play must've been awesome.", "Seeing it was so stunning."),
    ("The official opening night is tomorrow.", "Tomorrow's opening will be so much fun."),
    ("Representing inclusivity and diversity in my art is important to me.", "My art is about expressing my trans experience."),
    ("Keep up the great work, Maria!", "I lost my job at the mechanical engineering company."),
    ("I even found a place with great natural light!", "I won't quit, even when it's hard."),
]


@pytest.mark.parametrize(("earlier", "later"), FRIEND_CHAT)
def test_friend_chat_is_no_update(earlier: str, later: str) -> None:
    assert judge(compare(later, earlier), True) not in ("supersede", "dispute")


def test_a_feeling_is_no_value_and_a_cheer_no_slot() -> None:
    assert slots.parse("Keep up the great work, Maria!") is None
    assert slots.parse("I even found a place with great natural light!").verb == "found"  # type: ignore[union-attr]
    assert judge(compare("The deadline is June 15th.", "The deadline is June 8th."), True) == "supersede"  # a value still changes


def test_another_sentence_of_one_message_is_never_its_earlier_value(memory: Memory) -> None:
    """Found by a life-assistant builder and a team-chat evaluator: "We're moving the v3 release to May 6." retired its own
    message's first sentence, and a correction could end a sibling sentence rather than the fact it corrects."""
    for text, at in (("My cardiology appointment on Friday is with Dr. Ramos.", "2025-03-03T09:00:00Z"),
                     (("Release plan update: the Mailforge migration and v3 both touch the invoice emails. "
                       "We're moving the v3 release to May 6."), "2025-03-05T09:00:00Z")):
        memory.append("s", "user", text, created_at=at)
        memory.append("s", "assistant", "Noted.", created_at=at)
        memory.distiller.close_turn("s", use_llm=False)
    current = {f.text for f in memory.facts.query()}
    assert "Release plan update: the Mailforge migration and v3 both touch the invoice emails." in current
    assert "We're moving the v3 release to May 6." in current
    # two sentences of one message are two facts, and a later message still supersedes either
    d = memory.facts.curator.write({"text": "We're moving the v3 release to May 20 now.", "valid_from": "2025-03-09"})
    assert d.action == "supersede" and d.target is not None and "May 6" in d.target.text
