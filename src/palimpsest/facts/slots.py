"""Slots: what a statement is about (holder and attribute) and what it says of it (value).

Two statements about the same slot with different values cannot both hold now, whatever
their word overlap ("We deploy to Heroku." / "We now deploy to Fly.io."); the same value
said differently is the same statement ("I live in Lisbon." / "My home is in Lisbon.").
The curator compares slots besides words and vectors (see `curator.py`), and the local
distiller uses them to tell a plain statement from chatter (`local.py`).

The parse is deterministic and small — no tagger, no model. A sentence is cleaned first:
opening markers ("Correction:", "Actually,") and time adverbs ("now", "these days",
"from now on") go, each noted (`change`), as do "also"/"too" (`additive`: another value
beside the old one) and "no longer"/"not" (`negated`); a state said by its opposite is
the state denied ("closed" → not open: `ANTONYMS`), and a few common rewordings are
rewritten ("I have a peanut allergy" → "I am allergic to peanut"). Change phrasings are rewritten to
their slot: "Marco took over as project lead" → (project lead = marco); "X moved to Y",
"S was pushed to Y", "we switched from A to B" (B, and A as the old value); "A is the new
B". Then a copula splits subject and value ("My deploy target is Heroku" → holder i,
attribute deploy target, value heroku; "Kai is our designer" → designer = kai: a name
given a definite role); otherwise the first verb of a list does ("We host the site on
Netlify" → holder we, attribute host site, value netlify). Holders: i, we, a name, or
none ("the …", which matches i or we). Attributes match when their stems overlap
(Dice ≥ 0.67) or fall in one synonym group (home / live / reside …).

Another value for the same slot replaces the old one only where a slot holds one value at
a time: a named attribute ("my deploy target is"), a state of `SINGLE_STATES` ("based
in"), a verb of `SINGLE` ("live", "deploy", "work", "last"), or a statement that says it
changed. Likes, skills, possessions, thoughts, unknown verbs and a bare "I am …" hold many
values at once ("I'm thinking of X" does not retire "I'm thinking of Y"), a copula's
subject must be a noun phrase, and a value of more than `MAX_VALUE_WORDS` words is a
description, not a value: on real conversations (the LongMemEval haystacks) a looser
rule retired true statements by the dozen.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise

from .. import when
from ..search.query import CONTRACTIONS, STOP_WORDS
from ..segment import SPELLED, fold

_DISCOURSE_WORDS = r"oh|ok|okay|so|well|anyway|anyways|honestly|speaking of (?:which|that)"  # words that open chat, saying nothing
_OPENERS = re.compile(rf"^\s*(?:(?:no|sorry|wait|oops|fyi|btw|hey|{_DISCOURSE_WORDS})[,.!:]?\s+)*(?:actually|correction|update|to correct myself|"
                      r"i meant|i mean|scratch that|just so you know|by the way|(?:just )?for the record|heads up|note|decision(?=\s*:)|"
                      r"(?:(?:as )?it )?(?:turns|turned) out(?: that)?)?[\s,:;—-]*", re.IGNORECASE)
_CHANGE_ADVERBS = re.compile(r",?\s*\b(?:now|these days|nowadays|from now on|going forward|from here on|anymore|any more|instead|as of (?:today|now)|"
                             r"at the moment|currently|lately|"
                             # "… since the migration", "… after the reorg": the change named by what made it
                             r"(?:since|after) (?:the|our) (?:[\w-]+ )?(?:migration|move|upgrade|reorg|reorganis?z?ation|restructure|"
                             r"restructuring|cleanup|clean-up|switch|rewrite|merger|acquisition|rebrand|redesign|refactor|re-org))\b,?",
                             re.IGNORECASE)
_NEW_ONE = re.compile(r"^(my |our |the )new (?=[\w -]+? (?:is|are) )")
_A_NEW_NAME = re.compile(r"\bNew\s+[A-Z]")
_ADDITIVE = re.compile(r"\s*\b(?:also|too|as well|additionally|in addition)\b,?", re.IGNORECASE)
_DISCOURSE = re.compile(rf"^\s*(?:(?:{_DISCOURSE_WORDS})[,.!:]?\s+)+", re.IGNORECASE)
# "not-so-great", "a not-for-profit": a hyphened "not" is part of a word, it denies nothing
HEDGED = re.compile(r"\bnot(?:-[^\W\d_]+)+", re.IGNORECASE)
# what a subordinate clause says ("…, so that we don't want to sin anymore", "because it was not ready")
# is not said of the statement's own slot: its markers of change and negation are its own
_SUBCLAUSE = re.compile(r"[,;]?\s*\b(?:because|so that|although|though|whereas|unless|which|who)\b.*$", re.IGNORECASE)
# "items that I don't use", "the car that we sold": a clause about a noun, not the statement's
# own ("I said that I don't eat meat" and "I think that we're moving" are the statement's)
_THAT = re.compile(r"\b(?P<head>[\w']+)\s+(?P<that>that)\s+(?:i|we|you|he|she|they)\b", re.IGNORECASE)
_SAYING = frozenset(["say", "said", "says", "think", "thought", "know", "knew", "believe", "hope", "feel", "felt", "realise", "realize",
                     "realised", "realized", "mean", "meant", "guess", "decided", "noticed", "found", "sure", "told", "tell", "agree",
                     "agreed", "wish", "figured", "learned", "learnt", "heard", "seems", "seemed", "is", "was", "so", "now", "and", "but"])


def _subordinate_at(s: str) -> int:
    """Where the statement's subordinate clause starts ("because …", "which …", "items that
    I …"), or the end of `s`."""
    sub = _SUBCLAUSE.search(s)
    that = next((m for m in _THAT.finditer(s) if m.group("head").lower() not in _SAYING), None)
    return min(sub.start() if sub else len(s), that.start("that") if that else len(s))


def main_clause(text: str) -> str:
    """`text` without its subordinate clause: what it says of its own subject."""
    cut = _subordinate_at(text)
    return text[:cut] if cut > 0 else text


_NO_LONGER = re.compile(r"\b(?:no longer|not any ?more|stopped|quit)\b\s*", re.IGNORECASE)
_INSTEAD_OF = re.compile(r",?\s*\b(?:instead of|rather than|in place of)\s+(?P<old>[^,.;]+)", re.IGNORECASE)
_NOT_X = re.compile(r",\s*not\s+(?P<old>[^,.;]+)$", re.IGNORECASE)
# what held before, said after the new value: "I'm vegan now, I used to be vegetarian." (its "used to be" clause had run on
# into the value, "vegan i used to be vegetarian", which then held "vegetarian": a confirm — found by a travel bot's builder)
_USED_TO = re.compile(r"[,;]\s*(?:and\s+|but\s+)?(?:i|we|it|they|he|she)\s+used to\s+(?:be|\w+)\s+(?P<old>[^,.;]+)$", re.IGNORECASE)
_CONTRACTIONS = [(r"\bcan't\b", "cannot"), (r"\bwon't\b", "will not"), (r"n't\b", " not"), (r"'m\b", " am"), (r"'re\b", " are"),
                 (r"'ve\b", " have"), (r"'ll\b", " will"), (r"'d\b", " would"), (r"\bit's\b", "it is"), (r"\bthat's\b", "that is")]
COPULA = ("is", "are", "am", "was", "were", "has been", "have been", "will be", "remains", "stays", "became", "becomes")
_ROLE_TAKEN = re.compile(r"^(?P<val>.+?)\s+(?:has\s+|have\s+)?(?:took over as|takes over as|taken over as|is the new|are the new|became|becomes|"
                         r"has become|was named|was appointed|is now|replaced (?P<old>.+?) (?:as|on|at))\s+"
                         # a likeness or a degree is no role taken ("Writing has become like an escape", "… so much more fun")
                         r"(?!(?:like|so|more|less|much|really|very|quite|too|such|kind of|sort of|a bit|a lot|a way)\b)"
                         r"(?:the\s+|our\s+|my\s+)?(?P<attr>.+?)"
                         r"(?:\s+from\s+(?P<prev>[^,;]+))?$")  # "Marcus took over as QA lead from Ana"
_TOOK_OVER = re.compile(r"^(?P<val>.+?)\s+(?:has\s+)?(?:took|takes|taken) over\s+(?P<attr>.+?)(?:\s+from\s+(?P<old>.+))?$")
# (said as to come too: "Our weekly meetings move to Tuesdays at 10am from next week.", "… will move to …" had no slot, and
# the Thursday meetings stayed current: found keeping a lab notebook)
_SWITCH = re.compile(r"^(?P<subj>.+?)\s+(?:have\s+|has\s+|had\s+|are\s+|is\s+|was\s+|were\s+|got\s+|has been\s+|have been\s+|"
                     r"will\s+|is going to\s+|are going to\s+)?"
                     r"(?P<verb>switched|switching|moved|moving|migrated|migrating|changed|changing|shifted|pushed|postponed|"
                     r"(?:move|moves|switch|switches|shift|shifts)(?=\s+(?:to|from)\b)|"
                     r"rescheduled|raised|lowered|increased|decreased|reduced|bumped|cut|went|upgraded|downgraded|swapped|replaced|renamed|"
                     r"relocated|transferred|promoted|slipped|ported|traded|converted|extended|reverted|reverting|(?:rolled|rolling)(?=\s+back\b))"
                     r"(?:\s+(?!from\b|back\b)(?P<obj>.+?))?(?:\s+from\s+(?P<old>.+?))?\s+(?:back\s+)?(?:to|for|with|by)\s+(?P<val>.+)$")
# a number with its unit or written short, no name: "is it still 5mg?" asks of the dose, and "10mg" is its newer value
# ("5mg", "4tb", "3e-4", "6k", "7am" had been kinds of names, and a question quoting the old value lost its mark: review).
# (The curator still reads "50mg" as a name: read as a quantity, "he upped the metoprolol to 50mg" / "… starting
# losartan 25mg … instead" lost its change.)
QUANTITY = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+|k|m|g|kg|mg|mcg|ml|l|km|cm|mm|tb|gb|mb|kb|ms|s|h|hrs?|mins?|am|pm|x|st|nd|"
                      r"rd|th|mph|w|kw|kwh|hz|ghz|mhz|px|pt|fps|rpm|psi|ft|lbs?|oz|%)")
_PRESENT_MOVES = frozenset(["move", "moves", "switch", "switches", "shift", "shifts"])
_HABIT = re.compile(r"\b(?:every|each|usually|always|often|sometimes|whenever|most days|on weekends|on weekdays)\b", re.IGNORECASE)
_REBUILT = re.compile(r"^(?P<subj>.+?)\s+(?:have\s+|has\s+|had\s+)?(?:rebuilt|rewrote|rewritten|reimplemented|re-implemented|redid)\s+"
                      r"(?P<obj>.+?)\s+(?:in|on|with|using)\s+(?P<val>.+)$")  # "We rewrote the web app in Svelte"
_REPLACED = re.compile(r"^(?P<subj>.+?)\s+(?:have\s+|has\s+)?(?:replaced|swapped)\s+(?P<old>.+?)\s+(?:with|for)\s+(?P<val>.+)$")
FAMILY = ("sister", "brother", "daughter", "son", "mother", "father", "mom", "dad", "mum", "wife", "husband", "partner", "child",
          "children", "kid", "kids", "parent", "parents", "grandmother", "grandfather", "grandma", "grandpa", "aunt", "uncle", "cousin",
          "niece", "nephew")
_CLOSE = ("friend", "colleague", "boss", "manager", "neighbour", "neighbor", "roommate", "flatmate", "teammate", "coworker", "co-worker",
          "cat", "dog")  # named by the speaker as family is: "my colleague Priya", "our cat Miso"
PRONOUNS = {"i": "i", "me": "i", "my": "i", "mine": "i", "we": "we", "us": "we", "our": "we", "ours": "we"}
DETERMINERS = frozenset(["the", "a", "an", "our", "my", "this", "that", "their", "his", "her", "its", "your", "some"])
_PREPS = frozenset(["in", "at", "to", "on", "for", "with", "from", "into", "onto", "by", "under", "of", "as", "via", "through"])
_FILLER = frozenset(["the", "a", "an", "is", "are", "am", "was", "were", "be", "been", "of", "to", "in", "on", "at", "for", "with", "by",
                     "as", "every", "each", "it", "that", "this", "do", "does", "did", "will", "would", "have", "has", "had", "called",
                     "named", "my", "our", "your", "their"])
VERBS = frozenset(["depart", "arrive", "purchase", "live", "work", "lead", "manage", "report", "host", "deploy", "store", "ship", "release", "run", "use", "go", "close", "open", "last", "happen", "start", "begin", "end", "take", "need", "cost", "meet", "sit", "stay", "own", "have", "speak", "like", "love", "enjoy", "prefer", "hate", "dislike", "play", "drive", "eat", "drink", "write", "read", "review", "call", "return", "require", "send", "keep", "sleep", "study", "teach", "build", "handle", "support", "belong", "come", "depend", "contain", "include", "hold", "serve", "point", "pay", "earn", "spend", "weigh", "measure", "expire", "renew", "visit", "attend", "join", "leave", "learn", "practise", "practice", "plan", "want", "wear", "ride", "fly", "travel", "commute", "sync", "back", "rotate", "cover", "mean", "know", "think", "teach", "lend", "borrow", "sell", "buy", "rent", "book"])
# verbs whose object is one value at a time ("we deploy to", "I live in", "the sprint lasts");
# any other verb — tastes, skills, possessions, thoughts, unknown verbs — holds many at once
SINGLE = frozenset(["live", "work", "report", "host", "deploy", "store", "run", "cost", "last", "start", "begin", "end", "close",
                    "open", "meet", "sit", "stay", "move", "belong", "point", "pay", "earn", "weigh", "measure", "expire", "commute",
                    "go", "sleep", "sync", "back", "rotate", "lead", "manage", "drive", "ship", "release", "return", "send", "serve"])
MAX_VALUE_WORDS = 5
# a state said by its opposite is the state denied: "closed" is "not open", "off" is "not on";
# so "not open" / "closed" is one statement, and "open" / "closed" one slot denied now
ANTONYMS = {"closed": "open", "shut": "open", "off": "on", "disabled": "enabled", "unlocked": "locked", "private": "public",
            "inactive": "active", "unavailable": "available", "offline": "online", "broken": "fixed", "unpaid": "paid",
            "invisible": "visible", "hidden": "visible", "unresolved": "resolved", "unfinished": "finished", "incomplete": "complete",
            "absent": "present", "false": "true", "empty": "full", "vacant": "occupied", "unsupported": "supported"}
# "on" and "off" are states only at the end of a statement ("the heating is off"); elsewhere "on" is a preposition
_ANTONYMS_AT_END = frozenset(["on", "off"])
# … and not after a verb they make another verb of ("the backup job kicks off", "the plane took off", "we signed off")
_PHRASAL = frozenset("""kick kicks kicked kicking take takes took taken taking set sets setting head heads headed heading start starts
    started starting pay pays paid paying show shows showed shown sign signs signed signing doze dozes dozed nod nods nodded tee tees
    teed cool cools cooled sell sells sold call calls called drop drops dropped dropping go goes went going carry carries carried
    catch catches caught hold holds held log logs logged""".split())
SINGLE_STATES = frozenset(["based", "located", "married", "engaged", "employed", "stationed", "enrolled", "headquartered"])
SYNONYMS = [frozenset(g.split()) for g in (
    "home live reside based residence stay house", "work employ job employer", "manager report boss", "car drive vehicle",
    "name call named called", "close shut", "ci build pipeline continuous integration", "editor ide", "allergic allergy", "begin start",
    "leave depart", "buy bought purchase purchased", "main primary biggest largest top chief principal")]
# words of one meaning in a value ("learning Japanese" / "studying Japanese"); the attribute groups above are
# not for values: "the main floor" is not "the top floor"
VALUE_SYNONYMS = [frozenset(g.split()) for g in ("learn learning study studying",
                                                 # a unit said two ways ("I weigh 82 kg." / "I weigh 82 kilos." had been a change)
                                                 "kg kgs kilo kilos kilogram kilograms", "lb lbs pound pounds",
                                                 "km kms kilometre kilometres kilometer kilometers")]
_STEM_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ies", "ied", "es", "ed", "ly", "s")
# what may follow an age said with "turned": "years old", then the end or when ("yesterday", "last week", "on Sunday")
_AGE_TAIL = r"(?: years? old)?(?:$| (?:yesterday|today|tonight|recently|last|this|on|in|earlier|over|a|an|two|three|few)\b.*$)"
# a statement said with another common wording, rewritten to the wording the parse knows
_REWRITES = [# a decision is its content: "we decided to ship dark mode" is "we ship dark mode", a slot of its own (every
             # decision had been one slot, "decided to": dark mode at launch retired the switch to Stripe)
             (re.compile(r"^.*?\b(?:decided|agreed|settled on the plan|resolved)\s*(?::|[-—–]+|that\b)\s*"), ""),
             (re.compile(r"^(.+?)\s+(?:have |has |had )?(?:decided|agreed|chose|opted|voted|resolved|planned)\s+to\s+"), r"\1 "),
             # "Deadline is June 30." said as a note: the deadline (its capital read it as a person's name)
             (re.compile(r"^(deadline|launch|release|demo|standup|stand-up|meeting|budget|rent|salary|flight|kickoff|kick-off|"
                         r"cutover|go-live|retro|offsite|interview|appointment|exam|due date|start date|end date|target date) "),
              r"the \1 "),
             (re.compile(r"^(i|we) (?:have|has) an? ([\w -]+?) allergy$"), r"\1 am allergic to \2"),
             # chat's way of saying a change (a life-assistant bot's user): "going vegetarian starting today" is being one
             # from then on; "moved to berlin this week!!" said with no "I" is mine (both had stayed beside the newer value)
             # (from now only: "going vegan from next month" holds later, and was said to hold at once)
             (re.compile(r"^(i|we) (?:am|are) (?:going|turning) (vegetarian|vegan|pescatarian|freelance|remote|part-time|full-time)"
                         r"(?:\s+(?:starting|from|as of|beginning) (?:today|now|this morning|tonight))?$"), r"\1 am \2"),
             (re.compile(r"^(?=(?:moved|relocated|switched|started|joined|quit|left|became)\b)"), "i "),
             (re.compile(r"^i was born on (.+)$"), r"my birthday is on \1"),
             (re.compile(r"^(.+?)'s name is (.+)$"), r"\1 is called \2"),
             # "my wife's name is Ingrid" / "I'm married to Ingrid": who my spouse is
             (re.compile(r"^my (?:wife|husband|spouse) is called (.+)$"), r"my spouse is called \1"),
             (re.compile(r"^(?!(?:i|we|you|he|she|they|it|who|this|that|there)\b)([\w'-]+) is my (?:wife|husband|spouse)$"), r"my spouse is called \1"),
             (re.compile(r"^i am married to (?!(?:a|an|the|my|someone|somebody|him|her|them|you|it)\b)(.+)$"), r"my spouse is called \1"),
             # "the Japanese language" is Japanese
             (re.compile(r"\bthe (\w+) language$"), r"\1"),
             # "I use VS Code as my main editor": my main editor is VS Code (the role is the slot, the tool its value)
             (re.compile(r"^(?:i|we) (?:use|run|have) (.+?) as (my|our|the) (.+)$"), r"\2 \3 is \1"),
             # "Marta leads the payments team": the lead of the payments team is Marta (the role is the slot)
             (re.compile(r"^(?!(?:i|we|you|he|she|they|it|who|this|that)\b)(\w+) (?:leads|heads) (the|our|their|my) (.+)$"),
              r"the lead of \2 \3 is \1"),
             # "Deploys go to Fly.io", "releases go out on Thursdays": what we do, said by its noun
             (re.compile(r"^(?:our |the )?(deploy|release|backup)(?:s|ments) (?:go|goes|went|happen|run)( to| out| on)? (.+)$"),
              r"we \1\2 \3"),
             # "Björn owns the payments service", "the payments service belongs to Aisha's team": its owner is the slot
             # ... and a thing named with no article: "Priya owns notify-svc" (a handover had left both owners current)
             (re.compile(r"^(?!(?:i|we|you|he|she|they|it|who|this|that)\b)([\w' ]+?) (?:owns|maintains) (the|our|their) (.+)$"),
              r"the owner of \2 \3 is \1"),
             (re.compile(r"^(?!(?:i|we|you|he|she|they|it|who|this|that)\b)([\w']+) (?:owns|maintains) ((?=[\w.-]*[-.])[\w.-]++)$"),
              r"the owner of \2 is \1"),
             (re.compile(r"^(the|our|their) (.+?) (?:belongs|belong) to (.+)$"), r"the owner of \1 \2 is \3"),
             # "we use Jenkins for CI" is what CI runs on ("CI runs on GitLab CI")
             (re.compile(r"^(?:we|i) use (.+?) for (?:our |the |my )?(ci|continuous integration|builds|hosting|monitoring|logging|deploys|"
                         r"deployments|backups|chat|email|analytics|payments|auth|search|caching|storage)$"), r"our \2 runs on \1"),
             # "the launch has slipped to September": the launch date is now September
             (re.compile(r"^(the|our|my) ((?:[\w-]+ )?(?:launch|release|deadline|meeting|demo|review|interview|appointment|wedding|"
                         r"party|trip|flight|exam|presentation|kickoff|kick-off|go-live|cutover|migration|offsite|retro|event)) "
                         r"(?:has |have |was |were |got |has been |have been )?(?:slipped|pushed(?: back)?|postponed|delayed|"
                         r"brought forward|rescheduled) to (.+)$"), r"\1 \2 date is \3"),
             # "piano lessons for my daughter" are my daughter's
             (re.compile(rf"^(?:the )?([\w ]+?) for (my|our) ({'|'.join(FAMILY)}) (is|are|was|were|start|starts|cost|costs) (.+)$"),
              r"\2 \3's \1 \4 \5"),
             # "I drink my coffee black", "I take oat milk in my coffee": how I take my coffee is one thing at a time
             (re.compile(r"^i (?:take|drink|have|like) my (coffee|tea) ((?:black|white|with|without|strong|weak|sweet|plain|iced|decaf|no)\b.*)$"),
              r"my \1 order is \2"),
             (re.compile(r"^i (?:take|have) (.+?) in my (coffee|tea)$"), r"my \2 order is with \1"),
             # "my gym days are Mondays and Wednesdays": when I go to the gym
             (re.compile(r"^(?:my|our) (gym|office|yoga class|dance class|swimming pool) days are (.+)$"), r"i go to the \1 on \2"),
             # "I'm at 77 kg", "I'm down to 80 kilos": what I weigh
             (re.compile(r"^(i|we) (?:am|are) (?:at|down to|up to) ([\d.,]+ ?(?:kg|kgs|kilos?|kilograms?|lbs?|pounds|stone))$"),
              r"\1 weigh \2"),
             # "I turned 35 yesterday", "I'm 34 years old": my age (a number alone after "I am" is one); "my son turned 8
             # last week" is "my son is 8"
             (re.compile(rf"^i (?:just |recently |finally )?turned (\d{{1,3}}){_AGE_TAIL}"), r"my age is \1"),
             (re.compile(r"^i am (\d{1,3})(?: years? old| years of age)?(?: now| today)?$"), r"my age is \1"),
             (re.compile(rf"^(my [\w ]+?|(?!(?:it|this|that|there|he|she|they|we|you)\b)[\w'-]+) (?:just |recently |finally )?"
                         rf"turned (\d{{1,3}}){_AGE_TAIL}"), r"\1 is \2"),
             (re.compile(r"^(my [\w ]+?|[\w'-]+) is (\d{1,3}) years? old$"), r"\1 is \2"),
             # "I joined Klarna as a data engineer": where I work now
             (re.compile(r"^(i|we) (?:have |has )?joined (.+?) as (an?|the) (.+)$"), r"\1 work at \2 as \3 \4")]


@lru_cache(maxsize=1 << 16)  # a recall block stems every sentence of its snippets: the same words again and again
def stem(word: str) -> str:
    for suffix in _STEM_SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


_SYNONYM_STEMS = [frozenset(stem(w) for w in g) for g in SYNONYMS]
_SYNONYM_OF = {w: i for i, g in enumerate(_SYNONYM_STEMS) for w in g}  # a stem → its group's number
_LIGHT_VERBS = frozenset(stem(w) for w in ("be", "have", "is", "are", "has"))  # (the verb a parse adds to an attribute)
# words that say which of one's own, or how, not what: "my current employer" is "where I work", "my direct manager" "my boss"
_QUALIFIERS = frozenset(stem(w) for w in ("current", "present", "permanent", "direct", "immediate", "here", "remotely", "full-time",
                                          "part-time", "daily", "usual", "actual", "own", "real")) | next(
    g for g in _SYNONYM_STEMS if stem("main") in g)  # and a rank: "our main customer" / "our biggest customer"
_VALUE_CANONICAL = {stem(w): min(stem(x) for x in g) for g in VALUE_SYNONYMS for w in g}


def _words(text: str) -> list[str]:
    return re.findall(r"[\w@.+:/-]*\w|'s\b", text)


@dataclass
class Slot:
    """One statement's slot; `attribute` and `value` are lists of lower-cased words."""

    holder: str
    attribute: list[str]
    value: list[str]
    negated: bool = False
    additive: bool = False
    change: bool = False
    old_value: list[str] = field(default_factory=list)
    verb: str = ""
    actor: str = ""  # who made the change, when not its holder: "the doctor" of "the doctor lowered my dose to 10mg"

    @property
    def single(self) -> bool:
        """Holds one value at a time: a named attribute ("my deploy target is"), or a verb of
        `SINGLE`; not "I am …" (one is many things at once), nor tastes, skills, possessions."""
        if self.verb == "be":
            return bool(content(self.attribute))
        return self.verb in SINGLE or self.verb == "change"

    def key(self) -> tuple[str, str]:
        return self.holder, " ".join(content(self.attribute))


NUMBER_WORDS = {w: str(i) for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"])}
ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
NUMBER_WORDS.update({w: str(i) for i, w in enumerate(ORDINAL_WORDS, 1)})  # "the third floor" is "floor 3"
ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")  # "4th", "21st": whole words (`fullmatch`)


def unordinal(word: str) -> str:
    """A number said as an ordinal as its number ("3rd" is "3", "the 3rd floor" is "floor 3"); any other word as it is."""
    m = ORDINAL.fullmatch(word)
    return m.group(1) if m else word


def content(words: list[str], keep_preps: bool = False) -> list[str]:
    """Stems of the words that carry meaning (fillers out, number words as digits);
    `keep_preps` keeps prepositions ("works at" is not "works on")."""
    return [NUMBER_WORDS.get(w) or unordinal(stem(w)) for w in words
            if (w not in _FILLER or keep_preps and w in _PREPS and w not in ("of", "to")) and w not in PRONOUNS]


_NOW_SO = re.compile(r"\b(?:(?<!day )(?<!days )(?<!week )(?<!weeks )(?<!month )(?<!months )(?<!year )(?<!years )(?<!while )"
                     r"(?<!hours )(?<!decades )(?<!ages )(?<!time )(?<!right )(?<!Right )(?<!just )(?<!Just )(?<!for )now(?! that\b)"
                     r"(?!,? (?i:i'm |i am |we're |we are )?(?i:considering|thinking|planning|wondering|trying|going to|looking))"
                     r"|(?i:nowadays|these days|from now on|going forward|from here on)|instead(?! of\b))\b")
_NOT_ANY_MORE = re.compile(r"(?:\b(?:not|no|never|nobody|nothing)\b|n't)[^.;!?]*?\bany ?more\b", re.IGNORECASE)


def change_adverb(text: str) -> str:
    """The adverb by which `text` says that what it states holds now in place of something
    ("… is Ravi's job now", "these days", "from now on", "not … any more", "instead"), or "":
    not "currently", "lately", "right now" or "just now" (a state, not a change), not "Now, …"
    opening a sentence (chat's "so"), not "now that …", "for six weeks now" (how long it has
    held), "now I'm considering …" (a plan), "The Power of Now" (a name), "any more" without a
    negation ("any more questions?"), nor "instead of X" (`said_instead`: the slot reading
    weighs that), nor "now" after a count of what one has done ("I've been to three runs now")."""
    if said_instead(text):
        return ""
    flat = text.strip().replace("’", "'")
    if (m := _NOT_ANY_MORE.search(flat)) is not None:
        return "any more" if m.group(0).lower().endswith("any more") else "anymore"
    return next((m.group(0) for m in _NOW_SO.finditer(flat) if m.start() > 0 or m.group(0) != "now"
                 if m.group(0) != "now" or not _COUNTED_SO_FAR.search(flat[_clause_start(flat, m.start()):m.start()])), "")


def _clause_start(text: str, at: int) -> int:
    """Where the clause holding `at` starts (after the last ". ", ", ", "; ", "! " or "? " before it), at most 300 back."""
    start = max(0, at - 300)
    cut = max(text.rfind(p, start, at) for p in (". ", ", ", "; ", "! ", "? "))
    return cut + 2 if cut >= 0 else start


# "now" after a count of what one has done: how far one has got ("I've been to three Thursday runs now"), no change of a
# value (it had retired "I'll go to RunCity on Saturday", found by a life-assistant builder)
_COUNTED_SO_FAR = re.compile(r"\b(?:'ve|have|has|'s)\s+(?:been|had|done|seen|run|ridden|swum|made|read|won|attended|visited|watched|played|finished|completed)\s+(?:\w+\s+){0,2}?(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|"
                             r"a few|several|many|a dozen|dozens of)\s+(?:\w+\s+){0,3}$", re.IGNORECASE)


def said_instead(text: str) -> bool:
    """Whether `text` names what it replaces by "instead of", "rather than", "in place of"."""
    return _INSTEAD_OF.search(text) is not None


def clean(text: str) -> tuple[str, dict[str, object]]:
    """The sentence without markers, lower-cased, contractions expanded; and what was noted."""
    notes: dict[str, object] = {"change": False, "additive": False, "negated": False, "old": []}
    s = _MARKUP.sub("", text).strip().rstrip(".!;")  # ("Decision: **we move from zod to valibot** (`valibot@0.36.0`)." had no slot)
    opener = _OPENERS.match(s)
    if opener and opener.group(0).strip(" ,:;—-"):
        notes["change"] = bool(re.search(r"actually|correction|update|meant|scratch|turn(?:s|ed) out", opener.group(0), re.IGNORECASE))
        s = s[opener.end():]
    s = unhedged(s.lower().replace("’", "'"))
    cut = _subordinate_at(s)
    tail = s[cut:] if 0 < cut < len(s) else ""  # read for the slot's words, not for its markers
    s = s[: len(s) - len(tail)]
    if _NO_LONGER.search(s):
        notes["negated"] = notes["change"] = True
        s = _NO_LONGER.sub("", s)
    for pattern in (_INSTEAD_OF, _NOT_X, _USED_TO):
        m = pattern.search(s)
        if m:
            notes["old"] = _words(m.group("old"))
            notes["change"] = True
            s = s[: m.start()] + s[m.end():]
    if _CHANGE_ADVERBS.search(s):
        notes["change"] = True
        s = _CHANGE_ADVERBS.sub("", s)
    if (m := _NEW_ONE.match(s)) is not None and not _A_NEW_NAME.search(text):  # "the New York office"
        notes["change"] = True  # "my new number is 555-0199": the number changed
        s = m.group(1) + s[m.end():]
    if _ADDITIVE.search(s):
        notes["additive"] = True
        s = _ADDITIVE.sub("", s)
    s = _expanded(re.sub(r"\b(\d+(?::\d+)?)\s+([ap]m)\b", r"\1\2", s))  # "6 am" is a time, not "I am"
    for pattern, wording in _REWRITES:  # "I have a peanut allergy": "I am allergic to peanut"
        s = pattern.sub(wording, s)
    if re.search(r"\b(?:not|never|cannot)\b", s):
        notes["negated"] = not notes["negated"]
        s = re.sub(r"\b(?:do|does|did)\s+not\b|\bnot\b|\bnever\b", "", s)
        s = s.replace("cannot", "can")
    return " ".join(f"{s} {_expanded(tail)}".split()).strip(" ,"), notes


_MARKUP = re.compile(r"\*\*|__|`")  # markdown's bold and code marks: an assistant's decisions come in them


def _expanded(s: str) -> str:
    for contraction, expanded in _CONTRACTIONS:
        s = re.sub(contraction, expanded, s)
    return s


def unhedged(text: str) -> str:
    """`not-so-great` as one word (`notsogreat`): no negation of the sentence; a time of day written apart from its half
    of the day as one word ("4 pm", "4 p.m." → "4pm": "Soundcheck is at 4 pm." and "… at 4pm." had been two values)."""
    text = clocks(HEDGED.sub(lambda m: m.group(0).replace("-", ""), text))
    return text


def clocks(text: str) -> str:
    """Times of day written apart from their half of the day, as one word: "at 4 pm", "4 p.m." after a word of time, "9:30
    am", "at ten in the evening" → "4pm", "9:30am", "10pm" ("… at 4 pm." and "… at 4pm." had been two values); a number
    that is no time is left alone ("2 PM hires", "I take two in the morning", "Room 2 in the afternoon": found in review)."""
    if not _CLOCKISH.search(text):
        return text
    # ("6.30pm" is "6:30pm", "2-4pm" "2pm-4pm": "induction is at 18:30" / "… 6.30pm" and "office hours wednesdays 2-4pm" /
    # "… wed 14:00-16:00" had been changes of value, found by a skeptical evaluator)
    text = _DOTTED_CLOCK.sub(r"\1:\2\3m", text)
    text = _CLOCK_RANGE.sub(lambda m: f"{m[1]}{m[3].lower()}m-{m[2]}{m[3].lower()}m" if int(m[1]) < int(m[2]) < 12 else m[0], text)
    text = _MINUTES_CLOCK.sub(r"\1\2m", text)
    text = _SPACED_CLOCK.sub(r"\1 \2\3m", text)
    return _HALF_OF_DAY.sub(_half_of_day, text)


_CLOCKISH = re.compile(r"\d\s*[ap]\.?m\b|\bin\s+the\s+(?:morning|afternoon|evening)\b", re.IGNORECASE)
_TIME_WORD = r"(?:at|by|until|till|from|around|before|after|past|to|between|and|or)"
_DOTTED_CLOCK = re.compile(r"\b(\d{1,2})\.(\d\d)\s*([ap])\.?m\b\.?", re.IGNORECASE)
_CLOCK_RANGE = re.compile(r"\b(\d{1,2})\s*[-–]\s*(\d{1,2})\s*([ap])\.?m\b\.?", re.IGNORECASE)
_MINUTES_CLOCK = re.compile(r"\b(\d{1,2}:\d\d)\s+([ap])\.?m\b\.?", re.IGNORECASE)  # "9:30 am": a time whatever comes before
_SPACED_CLOCK = re.compile(rf"\b({_TIME_WORD})\s+(\d{{1,2}})\s+([ap])\.?m\b\.?", re.IGNORECASE)  # "at 4 pm", "until 4 p.m."
_HOURS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
# "at ten in the evening", "past two in the afternoon": the hour with its half of the day, as "10pm"
_HALF_OF_DAY = re.compile(rf"\b({_TIME_WORD}\s+)({'|'.join(_HOURS)}|\d{{1,2}})(?:\s+o'clock)?\s+in\s+the\s+(morning|afternoon|evening)\b",
                          re.IGNORECASE)


def _half_of_day(m: re.Match[str]) -> str:
    hour = m.group(2).lower()
    number = _HOURS.index(hour) + 1 if hour in _HOURS else int(hour)
    return f"{m.group(1)}{number}{'am' if m.group(3).lower() == 'morning' else 'pm'}"


def _holder_attr(phrase: str) -> tuple[str, list[str]]:
    """`my deploy target` → (i, [deploy, target]); `sara's email` → (sara, [email]); `the team lead` → ('', …)."""
    words = _words(phrase)
    holder = ""
    if words and words[0] in PRONOUNS:
        holder = PRONOUNS[words.pop(0)]
        if "'s" in words[1:]:  # "my wife's birthday": the wife's, not mine
            i = words.index("'s")
            collective = holder == "we" and words[:i] in (["team"], ["company"], ["group"], ["family"], ["household"])
            holder, words = (holder if collective else f"{holder}'s {' '.join(words[:i])}"), words[i + 1:]  # "our team's budget" is ours
    elif len(words) > 1 and "'s" in words:
        i = words.index("'s")  # "the mobile app's product manager": product manager of the mobile app
        words = words[i + 1:] + words[:i]
    return holder, [w for w in words if w not in DETERMINERS and w != "'s"]


def _is_name(phrase: str, original: str) -> bool:
    words = phrase.split()
    if not 1 <= len(words) <= 3 or any(w in PRONOUNS or w in DETERMINERS for w in words):
        return False
    return all(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", original, re.IGNORECASE) and  # ("Dr. Patel": a title's stop)
               re.search(rf"\b{re.escape(w[0].upper() + w[1:])}", original) for w in words)


# "My sister Léa lives in Lyon", "Zoë, my daughter, is 7": the named person is the holder
_NAMED_KIN = re.compile(rf"^(?:(?i:(?:my|our)\s+(?:\w+\s+)?(?:{'|'.join(FAMILY + _CLOSE)}))\s+(?P<name>[^\W\d_][\w'-]*)(?=\s)"
                        r"|(?P<first>[^\W\d_][\w'-]*),\s+(?i:my|our)\s+[\w' -]{2,30}?,\s+)")


def _named_holder(m: re.Match[str]) -> str:
    """The name for "my sister Léa", "Zoë, my daughter,"; the text as it was where the word is no name."""
    name = m.group("name") or m.group("first")
    if not name[0].isupper() or name.lower() in _COMMON:  # "Yesterday, my sister, Ana and I …"
        return m.group(0)
    return name if m.group("name") else name + " "


_CHEER = re.compile(r"^(?:keep (?:it )?up|keep going|keep at it|good luck|best of luck|congrats|congratulations|well done|"
                    r"thanks(?! to)|thank you|have fun)\b|^take care(?: of yourself)?$")  # not "Take care not to run …", "Thanks to the cache, …"
# a value that is a feeling about the thing, not what it is: two feelings hold together ("must have been awesome" /
# "was so stunning", "is important to me" / "is about expressing my experience")
_FEELINGS = frozenset(stem(w) for w in re.findall(r"\w+", """awesome amazing great good nice fun thrilling exciting excited stunning beautiful important
    interesting hard tough difficult easy incredible fantastic wonderful cool inspiring exhilarating infectious special meaningful
    rewarding tiring exhausting scary lovely perfect terrible awful sad happy proud glad grateful thankful blast worth"""))
_INTENSIFIERS = frozenset(["so", "such", "very", "really", "pretty", "super", "quite", "much", "a", "an", "the", "to", "me", "us", "for",
                           "particularly", "truly", "absolutely", "totally", "incredibly", "kind", "of", "experience", "time"])


def _a_feeling(value: list[str], text: str) -> bool:
    """Nothing in the value but how the speaker feels about it ("such an exhilarating experience", "important to me"),
    none of it a name (the city in "I live in Nice now")."""
    words = [w for w in value if w not in _INTENSIFIERS]
    return bool(words) and all(stem(w) in _FEELINGS for w in words) and not set(words) & names(text)


@lru_cache(maxsize=1 << 14)  # a curator write compares the candidate with up to ten neighbours, each parsed; slots are only read
def parse(text: str) -> Slot | None:
    """The slot of one statement, or None when it has no subject to speak of."""
    times = when.resolve(text, when.ANY_DAY)
    text = _after_opening_time(text, times)
    text = _NAMED_KIN.sub(_named_holder, text, count=1)
    s, notes = clean(text)
    if not s:
        return None
    if re.match(r"^(?:it|that|this|there|here|these|those|they|he|she|you|which|what|who)\b", s):
        return None  # no subject to speak of: whom "it" or "she" names is for the model to say
    if _CHEER.match(s):
        return None  # "Keep up the great work, Maria!", "good luck with the move": said to someone, of no slot
    slot = _structural(s, text) or _copular(s, text) or _verbal(s)
    if slot is None:
        return None
    slot.negated, slot.additive = bool(notes["negated"]), bool(notes["additive"])
    slot.change = slot.change or bool(notes["change"])
    _untimed(slot, times)
    _state(slot)
    old = notes["old"]
    slot.old_value = slot.old_value or (list(old) if isinstance(old, list) else [])
    return slot


def _after_opening_time(text: str, times: list[when.Span]) -> str:
    """`text` without the time expression it opens with ("Last month, I moved to Munich",
    "Starting today I'm going fully vegan"): the subject comes after it."""
    opener = _DISCOURSE.match(text)  # "Speaking of which, the week before last, on June 8th, I went …"
    start = pos = opener.end() if opener else len(text) - len(text.lstrip())
    for t in times:  # in the order they are said
        if t.at < pos:
            continue
        if t.at != pos and not re.fullmatch(r"(?:on|in|at|during|by|starting|beginning|from|as of|effective)\s+", text[pos:t.at],
                                            re.IGNORECASE):
            break  # "…, on June 8th, I went": the preposition opens the time expression
        pos = t.at + len(t.text)
        while pos < len(text) and text[pos] in " ,":
            pos += 1
    rest = text[pos:]
    return rest if pos > start and rest.strip() else text


def _untimed(slot: Slot, times: list[when.Span]) -> None:
    """When a statement says a thing happened is not what it is about: the words of its time
    expressions leave the attribute ("Last week I went to a parade" and "we had a picnic last
    week" share a week, not a slot). The value keeps them ("the deadline moved to Monday")."""
    timed = {w for span in times for w in re.findall(r"[\w']+", span.text.lower())}
    if timed:
        slot.attribute = [w for w in slot.attribute if w not in timed]
    if timed and slot.change:
        # … nor is when a change starts part of its value: "raised to 3,000 GPU-hours/month from May 15" is 3,000 (its
        # "may 15" had made two values of numbers apart, and the quota it raised stayed current: found keeping a lab notebook)
        for i, w in enumerate(slot.value):
            if i and w in _STARTS and slot.value[i + 1:] and set(slot.value[i + 1:]) - {"of", "on", "the"} <= timed:
                slot.value = slot.value[:i]
                break


_STARTS = frozenset(["from", "starting", "as", "effective", "beginning"])


def opposite(words: list[str], i: int) -> str | None:
    """The state word `words[i]` denies ("closed" → "open"), or None; "off" only at the end."""
    w = words[i]
    if w not in ANTONYMS or w in _ANTONYMS_AT_END and (i != len(words) - 1 or i and words[i - 1] in _PHRASAL):
        return None
    return ANTONYMS[w]


def _state(slot: Slot) -> None:
    """A value that opens with a state said by its opposite is that state denied."""
    if slot.value and (positive := opposite(slot.value, 0)) is not None:
        slot.value = [positive] + slot.value[1:]
        slot.negated = not slot.negated


STRUCTURAL_CHARS = 300  # longer than any statement of one slot; the patterns' backtracking grows with the cube of the length


def _structural(s: str, original: str) -> Slot | None:
    if len(s) > STRUCTURAL_CHARS:
        return None
    m = _ROLE_TAKEN.match(s)
    if m and _is_name(m.group("val"), original):
        holder, attr = _holder_attr(m.group("attr"))
        old = m.group("old") or m.group("prev") or ""
        return Slot(holder, attr, _words(m.group("val")), change=True, old_value=_words(old), verb="change")
    m = _TOOK_OVER.match(s)
    if m:
        holder, attr = _holder_attr(m.group("attr"))
        return Slot(holder, attr, _words(m.group("val")), change=True, old_value=_words(m.group("old") or ""), verb="change")
    m = _REPLACED.match(s) or _SWITCH.match(s)
    if m is None and (rebuilt := _REBUILT.match(s)) is not None and _is_name(rebuilt.group("val"), original):
        m = rebuilt  # "… in Svelte": a name; "… in a weekend", "… with my cofounder" say how, not what
    if m and _a_visit(m):
        m = None  # "I went to Paris", "we went to a concert": a happening, not a value replaced
    if m and m.groupdict().get("verb") in _PRESENT_MOVES and _HABIT.search(s):
        m = None  # "We move to Lisbon every summer", "I switch to decaf after 2pm on weekdays": a habit, not a change
    if m:
        subj = m.group("subj")
        obj = m.groupdict().get("obj") or ""
        holder, attr = _holder_attr(subj)
        actor = ""
        if obj and subj not in PRONOUNS and obj.split()[0] in DETERMINERS - {"a", "an", "some"}:
            holder, attr = _holder_attr(obj)  # "The airline moved my flight to May 4": what moved is my flight, not the airline
            actor = subj
        if subj in PRONOUNS:
            holder, attr = PRONOUNS[subj], _holder_attr(obj)[1] if obj else []
            if not attr and m.groupdict().get("verb") in ("moved", "moving"):
                attr = ["live"]  # "I moved to Munich": where I live
        value = _words(m.group("val"))
        old = m.groupdict().get("old") or ""
        if m.groupdict().get("verb") == "renamed":
            if obj and not old:
                old, attr = obj, []  # "we renamed master to main": master was the name
            elif attr:
                # what the thing is called, nothing else said of it: "The billing service was renamed to ledger." had
                # retired "The billing service is written in Go."
                attr = attr + ["name"]
        # "… to Discord for team chat": the purpose after the value names the attribute too
        purpose = re.search(r"\b(?:for|as|in|on)\b\s+(.+)$", m.group("val"))
        if purpose and len(value) > 1:
            attr = attr + _words(purpose.group(1))
            value = _words(m.group("val")[: purpose.start()])
        return Slot(holder, attr, value, change=True, old_value=_words(old), verb="change", actor=actor)
    return None


def _a_visit(m: re.Match[str]) -> bool:
    """A person went somewhere, said with no earlier value ("I went to Paris" / "I went to
    Rome" are two trips; "we went from Jenkins to GitHub Actions", "we went with Postgres" and
    "the price went to $20" change a value)."""
    return (m.groupdict().get("verb") == "went" and not m.group("old") and not m.groupdict().get("obj")
            and m.group("subj") in PRONOUNS and re.search(r"\bwent\s+to\b", m.group(0)) is not None)


_SUBORDINATE = frozenset(["since", "because", "when", "if", "while", "after", "before", "although", "though", "as", "remember", "so",
                          "and", "but", "then", "once", "until", "unless", "whether"])


def _noun_phrase(subj: str, original: str = "") -> bool:
    """A copula's subject is a noun phrase: no clause ("since I've been reading", "I want to
    make sure she"), no comma, no pronoun or auxiliary after its first word. "To" before a
    name is a preposition ("my flight to Lisbon"), before anything else the mark of a verb."""
    words = _words(subj)
    if not words or "," in subj or words[0] in _SUBORDINATE or words[0] in _PREPS:
        return False
    if len(words) > 1 and words[0] in ("i", "we", "you", "he", "she", "they"):
        return False  # "I get up at 6" is a clause
    return not any((w in PRONOUNS and not (w in ("my", "our") and words[i] in _PREPS))  # "the default branch in our repo"
                   or w == "to" and not (i + 2 < len(words) and _is_name(words[i + 2], original))
                   or w in ("will", "would", "can", "could", "should", "have", "has", "had", "been", "that")
                   for i, w in enumerate(words[1:]))


def _copular(s: str, original: str) -> Slot | None:
    m = re.match(rf"^(?P<subj>.+?)\s+(?:{'|'.join(COPULA)})\s+(?P<val>.+)$", s)
    if m is None:
        return None
    subj, val = m.group("subj"), m.group("val")
    if len(subj.split()) > 8 or not _noun_phrase(subj, original):
        return None
    if _is_name(subj, original) and re.match(r"^(?:the|our|my|their|his|her)\s+", val):
        holder, attr = _holder_attr(val)  # "Kai is our designer": the role is the slot, Kai its value
        return Slot(holder, attr, _words(subj), verb="be")
    holder, attr = _holder_attr(subj)
    value = _words(val)
    scope = next((i for i, w in enumerate(value) if w == "for"), 0)
    if 0 < scope <= 3 and scope < len(value) - 1 and any(c.isdigit() for w in value[:scope] for c in w) and not value[scope + 1][0].isdigit():
        # "the line length limit is 100 for the legacy module", "… 5000 euros for Q3": a number and what it holds for, which
        # narrows the attribute ("for 20 years" is how long, not for what)
        attr, value = attr + value[scope:], value[:scope]
    if subj in PRONOUNS:
        holder, attr = PRONOUNS[subj], []
        if len(value) > 2 and value[1] in _PREPS:  # "allergic to shellfish", "based in Cairo"
            attr, value = value[:2], value[2:]
            # where one is based holds one value; what one is allergic to, thinking of or
            # interested in holds many
            return Slot(holder, attr, value, verb="be" if attr[0] in SINGLE_STATES else attr[0])
    elif holder == "" and _is_name(subj, original):
        holder, attr = subj, []
        if len(value) > 2 and value[0] in SINGLE_STATES and value[1] in _PREPS:  # "Marta is employed by Airbus"
            return Slot(holder, value[:2], value[2:], verb="be")
    elif len(value) > 2 and _participle(value[0]) and value[1] in _PREPS:
        # "the main service is written in Go" / "… is deployed on Kubernetes": two things said of
        # one service, not one value replaced ("… is hosted on Render" / "… on Fly.io now" is)
        return Slot(holder, attr + value[:2], value[2:], verb="be")
    return Slot(holder, attr, value, verb="be")


_WHERE = frozenset(["located", "based", "situated", "placed", "settled"])
# participles that say a state a thing is in, one of several it passes through ("the pool is closed for the winter" / "… is open
# again"), not a thing done to it that stands beside what it is ("capped at fifteen minutes")
_STATE_PARTICIPLES = frozenset(["closed", "opened", "locked", "unlocked", "booked", "cancelled", "canceled", "delayed", "postponed",
                                "finished", "started", "married", "engaged", "divorced", "separated", "employed", "retired",
                                "paused", "suspended", "frozen", "broken", "fixed", "sold", "rented", "shut"])


def _done_to(word: str) -> bool:
    return _participle(word) and word not in _STATE_PARTICIPLES  # "is based in Leeds" says "is in Leeds"


def _subject(attribute: list[str]) -> list[str]:
    """The words of a slot before the participle `_copular` joined to it ("main service" of
    "main service written in")."""
    i = next((i for i, w in enumerate(attribute) if _participle(w)), len(attribute))
    return attribute[:i]


def _participle(word: str) -> bool:
    return word not in _WHERE and (word.endswith(("ed", "en", "wn")) or word in ("built", "run", "kept", "held", "made", "led", "done", "set"))


_ADVERBS = frozenset(["usually", "often", "always", "sometimes", "normally", "mostly", "generally", "still", "really", "just", "rarely",
                      "actually", "currently", "mainly", "basically", "honestly", "definitely", "only", "typically", "primarily",
                      "even", "finally", "totally", "literally"])
MODALS = frozenset(["can", "could", "will", "would", "should", "must", "might", "may", "shall"])


def _verbal(s: str) -> Slot | None:
    words = _words(s)
    role = re.match(r"^(i|we)\s+(?:work|works|worked|am working|are working)\s+as\s+(.+)$", s)
    if role:  # "I work as a nurse": what one is, as "I'm a nurse"
        return Slot(PRONOUNS[role.group(1)], [], _words(role.group(2)), verb="be")
    for i, w in enumerate(words[:7]):
        base = _base(w)
        before = [x for x in words[:i] if x not in _ADVERBS]
        modal = [before.pop()] if before[1:] and before[-1] in MODALS else []  # "I can relate": the verb follows the modal
        if base is None and before in (["i"], ["we"]) and w not in _ADVERBS and w not in MODALS and len(words) > i + 1:
            base = w  # after "I" or "we" comes a verb, known or not ("I usually wake up at 6")
        if base is None or i == 0 and w not in ("use", "deploy", "host") or words[:i] and all(x in DETERMINERS for x in words[:i]):
            continue  # "the build server": a determiner is followed by a noun
        if _a_compound(words[:i], w, s):
            continue  # "easy run 6 km, 36 min, felt fine": a run logged, not a verb of a holder "easy" (a training log's runs had
            # each retired the one before, as one slot's values)
        subj = " ".join(x for x in words[:i] if not (modal and x == modal[0]) and x not in _ADVERBS)
        rest = words[i + 1:]
        if not rest:
            return None
        holder, attr = _holder_attr(subj)
        if subj in PRONOUNS or (holder == "" and subj and subj.split()[0] not in DETERMINERS and len(subj.split()) <= 2):
            holder = PRONOUNS.get(subj, subj)
            # the verb, and what it acts on up to its first preposition: "host the site on | netlify"
            cut = next((j for j, x in enumerate(rest[:-1]) if x in _PREPS), -1)
            attr = modal + [base] + [x for x in rest[: cut + 1] if x not in DETERMINERS]
            value = rest[cut + 1:]
            # "we use Sentry for error tracking": the tool for a purpose. A purpose that holds one tool at a time ("for CI",
            # "for hosting") was rewritten before ("our CI runs on X", `_REWRITES`); any other may hold several ("use")
            if base == "use" and 0 < cut and rest[cut] == "for":
                attr, value = modal + [base, "for"] + [x for x in rest[cut + 1:] if x not in DETERMINERS], rest[:cut]
        else:
            value = rest
        # where one went is a trip, many over time ("I go to Lincoln High" is one school at a time)
        return Slot(holder, attr, value, verb="went" if w == "went" and subj in PRONOUNS else base)
    return None


def _a_compound(before: list[str], word: str, original: str) -> bool:
    """A verb's bare form after one word that is no subject of it — no pronoun, no plural, no name — is a noun named by
    that word ("easy run", "long ride"): "Frank takes …" agrees, "frank take …" is not said."""
    if len(before) != 1 or word != _base(word) or word in ("use", "deploy", "host"):
        return False
    subject = before[0]
    return subject not in PRONOUNS and subject not in ("you", "they", "he", "she") and not subject.endswith("s") \
        and not _is_name(subject, original)


def _base(word: str) -> str | None:
    if word in VERBS:
        return word
    for suffix, add in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("d", ""), ("ing", ""), ("ing", "e")):
        if word.endswith(suffix) and word[: -len(suffix)] + add in VERBS:
            return word[: -len(suffix)] + add
    irregular = {"went": "go", "goes": "go", "ran": "run", "led": "lead", "kept": "keep", "took": "take", "met": "meet", "wrote": "write",
                 "drove": "drive", "ate": "eat", "drank": "drink", "spoke": "speak", "sat": "sit", "held": "hold", "paid": "pay",
                 "spent": "spend", "left": "leave", "flew": "fly", "rode": "ride", "sold": "sell", "bought": "buy", "has": "have", "had": "have"}
    return irregular.get(word)


# -- comparing ------------------------------------------------------------------
def dice(a: Iterable[Hashable], b: Iterable[Hashable]) -> float:
    """Dice overlap of two collections taken as sets (1.0 when both are empty)."""
    x, y = set(a), set(b)
    return 2 * len(x & y) / (len(x) + len(y)) if x or y else 1.0


def synonyms(a: list[str], b: list[str]) -> bool:
    """Words of one synonym group on both sides, not the same word alone ("home" / "live";
    not "start" / "start", which a parse may leave in an attribute and a verb), and nothing
    else said of one side only: a group's word beside another word names another thing ("the
    quarterly report" / "my password manager", "I work at" / "my job title", "my manager" /
    "the status report": each had retired the other's fact)."""
    x, y = {stem(w) for w in a} - _LIGHT_VERBS, {stem(w) for w in b} - _LIGHT_VERBS
    if not any(x & g and y & g and (x & g) ^ (y & g) for g in _SYNONYM_STEMS):
        return False
    x, y = x - _PREPS - _QUALIFIERS, y - _PREPS - _QUALIFIERS  # ("live in" / "home"; "my current employer" / "work at")
    return {_SYNONYM_OF.get(w, w) for w in x} == {_SYNONYM_OF.get(w, w) for w in y}


_HABITUAL = frozenset([*(d + "s" for d in when.WEEKDAYS), "mornings", "afternoons", "evenings", "nights", "weekends", "weekdays",
                        "every", "each", "daily", "weekly"])  # said of every week: "on Tuesdays", "every Friday"
_WHEN_WORDS = frozenset([*when.WEEKDAYS, *_HABITUAL, *when.MONTHS, "morning", "afternoon", "evening", "night", "noon", "midday",
                         "midnight", "weekend", "weekday"])
_CLOCK = re.compile(r"\d{1,2}(?::\d{2}(?:am|pm)?|am|pm)")  # "9:30", "6pm": a bare number is no time
_TIME_FILLER = frozenset(["on", "at", "in", "every", "each", "around", "about", "by", "from", "until", "till", "to", "and", "or",
                          "the", "a", "other", "most", "early", "late", "o'clock", "sharp"])


def _times_apart(x: list[str], y: list[str]) -> bool:
    """Two values of a habit that differ only in when ("the gym on Tuesdays" / "the gym on Mondays");
    not two happenings ("a meeting on Monday" / "on Friday", "yoga in May" / "in June")."""
    shared = set(x) & set(y) - _TIME_FILLER
    rest_x, rest_y = [w for w in x if w not in shared], [w for w in y if w not in shared]
    return bool(rest_x and rest_y) and _a_time(rest_x) and _a_time(rest_y) and bool(_HABITUAL & {*x, *y})


def _role_at(x: list[str], y: list[str]) -> bool:
    """"a senior backend engineer at Monzo" / "a staff engineer at Monzo": the same employer, another grade of one role."""
    if "at" not in x or "at" not in y:
        return False
    i, j = len(x) - 1 - x[::-1].index("at"), len(y) - 1 - y[::-1].index("at")
    role_x, role_y = content(x[:i]), content(y[:j])
    return content(x[i + 1:]) == content(y[j + 1:]) != [] and bool(role_x) and bool(role_y) and role_x != role_y \
        and role_x[-1] == role_y[-1] and len(role_x) <= 3 and len(role_y) <= 3  # "… engineer" / "… engineer", not "student" / "TA"


def _a_time(value: list[str]) -> bool:
    """The value is when something happens and nothing else: a weekday, a part of the day, a
    month or a clock time ("on Tuesday evenings", "at 9:30", "every other Friday")."""
    timed = [w for w in value if w in _WHEN_WORDS or _CLOCK.fullmatch(w)]
    return bool(timed) and all(w in _WHEN_WORDS or w in _TIME_FILLER or w in timed for w in value)


def same_holder(a: Slot, b: Slot) -> bool:
    return a.holder == b.holder or "" in (a.holder, b.holder) and {a.holder, b.holder} <= {"", "i", "we"} \
        or {a.holder, b.holder} == {"i", "we"} and _a_home(a) and _a_home(b)


_HOME = frozenset(["live", "reside", "home", "based", "stay"])


def _a_home(slot: Slot) -> bool:
    """Where one lives: "I live in Chicago" and "We live in Denver now" are one household's
    home (a new user's move never retired the old one); what "I" and "we" use or work at stay two."""
    return slot.verb in _HOME or any(w in _HOME for w in slot.attribute[:2])


def same_attribute(a: Slot, b: Slot) -> bool:
    x, y = content(a.attribute, True), content(b.attribute, True)
    if a.verb != b.verb and "change" not in (a.verb, b.verb) and not (b.change and "be" in (a.verb, b.verb) and "have" not in (a.verb, b.verb)):
        # "our office has a gym" says nothing of where the office is; "uses" is not "is
        # written in"; but "my home is in" is where "I live in"
        return synonyms(x + [a.verb], y + [b.verb])
    if not x and not y:
        return a.verb == b.verb or {a.verb, b.verb} <= {"be"}
    if not x or not y:
        return False
    if _qualified_apart(x, y) or _an_occurrence(x) != _an_occurrence(y):
        return False
    if any(_done_to(w) for w in a.attribute) != any(_done_to(w) for w in b.attribute) and a.verb == b.verb == "be":
        return False  # "the standup is at 9:30" / "… is capped at fifteen minutes": what it is, and a thing done to it
    if a.verb == b.verb and (_another_of(a.attribute, b.attribute) or _another_of(b.attribute, a.attribute)):
        return False  # (one verb: a parse that took a verb for a noun, "the Pro plan costs" / "the Pro plan is", is no other thing)
    return dice(x, y) >= 0.67 or _within(x, y) or _within(y, x) or synonyms(x, y)


_OCCURRENCES = frozenset(["next", "upcoming", "previous"])


def _an_occurrence(attribute: list[str]) -> bool:
    """An attribute that names one occurrence of a thing ("next GP is aug 5": the next visit), not the thing itself ("his
    GP is Dr. Okafor …", which the visit's date had retired)."""
    return bool(set(attribute) & _OCCURRENCES)


# what a thing's own value is said as, named after it: "the standup" / "the standup time" are one slot
_VALUE_KINDS = frozenset("""time times date day days hour hours schedule slot location place venue spot room address""".split())  # noqa: SIM905


def _another_of(x: list[str], y: list[str]) -> bool:
    """`y` names what `x` names and another thing of it after it, in nouns ("the primary DB" / "the primary DB failover
    target", "the API gateway" / "… timeout": "The primary DB failover target is pg-atlas-02." had retired "The primary
    DB is pg-atlas-01.", found by an on-call team's lead) — not its own value said as a kind ("the standup time"), nor a
    parse that ran on into the predicate ("pool closed for")."""
    x, y = [w.lower() for w in x], [w.lower() for w in y]
    extra = y[len(x):]
    return bool(x) and bool(extra) and y[:len(x)] == x and extra[-1] not in _VALUE_KINDS and x[-1] not in _ROLES \
        and all(w.replace("-", "").isalpha() and w not in _PREPS and not w.endswith(("ed", "ing")) for w in extra)


# a person's role in a thing, named after it: "the office" / "the office manager" are two things
_ROLES = frozenset("""manager managers secretary lead leads head director chair chairman chairwoman chairperson captain coach
    owner president treasurer coordinator organiser organizer officer administrator admin supervisor editor instructor
    teacher tutor founder ceo cto cfo coo vp steward caretaker keeper""".split())  # noqa: SIM905 (a list of words)


def _within(x: list[str], y: list[str]) -> bool:
    """`x`'s words are all `y`'s, and `y` is not a person's role in what `x` names ("office" is not "office manager":
    "Maria took over as office manager." had retired "Our office is in the town hall.", found by a skeptical evaluator)."""
    return set(x) <= set(y) and (x[-1] == y[-1] or y[-1] not in _ROLES or x[-1] in _ROLES)


def two_things(a: Slot, b: Slot) -> bool:
    """Two slots said of two things named by their subjects, not one thing's two values: "the
    staging server" / "the production server", "the cache TTL" / "the session TTL", "the
    frontend" / "the admin panel", "the rate limit" / "… for paid users", "my work laptop" /
    "my home laptop" (one holder: "we" / "production" may be one thing); a change said of one of them too ("Class 5A's field
    trip was moved to May 21" of "Class 4B's field trip is on May 14", "We upgraded the NAS" of "Our Proxmox host has 64 GB")."""
    if a.holder != b.holder or a.verb != b.verb and "change" not in (a.verb, b.verb):
        return False  # one predicate of two subjects ("… runs Ubuntu"), not "we use" / "we upgraded"
    x, y = content(a.attribute, True), content(b.attribute, True)
    if not x or not y:
        return False
    only_x, only_y = set(x) - set(y), set(y) - set(x)
    changed = "change" in (a.verb, b.verb)
    # one word each, a name of a kind ("staging" / "production"): not "favourite restaurant" / "go-to spot" (a paraphrase),
    # nor "watched 10 videos" / "watched 15" (the value itself, parsed into the attribute)
    one_word_each = len(only_x) == len(only_y) == 1 and all(w.isalpha() and w not in _RANKS and not (changed and w in _QUALIFIERS)
                                                            for w in only_x | only_y)  # (a change of "the daily stand-up")
    apart = not set(x) & set(y) and (not changed or not (set(y) & set(content(a.value)) or set(x) & set(content(b.value)))
                                     and all(set(w) - VERBS for w in (x, y)))
    # (a change said of what the other has as its value is of the same thing: "I take 20 mg of atorvastatin" / "My doctor
    # lowered my atorvastatin to 10 mg")
    # ("our first team" / "our second team", "… reserve team": one of a series is another thing, where "first" beside no
    # other is a rank, as "main" is; its division had retired the first team's: found by a skeptical evaluator)
    said_x, said_y = set(a.attribute) - set(b.attribute), set(b.attribute) - set(a.attribute)
    ordinal = len(said_x) == len(said_y) == 1 and bool((said_x | said_y) & _ORDINALS) and not (said_x | said_y) & (_RANKS - _ORDINALS)
    return apart or x[-1] == y[-1] and (one_word_each or ordinal or _modifiers_apart(only_x, only_y)) \
        or _qualifiers_apart(x, y) or _codes_apart(only_x, only_y)



_ORDINALS = frozenset([*ORDINAL_WORDS, "last"])


def _modifiers_apart(only_x: set[str], only_y: set[str]) -> bool:
    """Each names its thing by words the other lacks, before one head noun: "the website redesign deadline" / "the mobile
    app launch deadline" (not a rank or a qualifier: "our main customer" / "our biggest customer")."""
    return bool(only_x) and bool(only_y) and all(w.isalpha() and w not in _RANKS and w not in _QUALIFIERS for w in only_x | only_y)


def _codes_apart(only_x: set[str], only_y: set[str]) -> bool:
    """Each names its thing by a code of letters and digits the other lacks: "Class 4B" / "Class 5A", "room B12" / "room C3"."""
    return all(any(re.fullmatch(r"(?=\w*\d)(?=\w*[a-z])\w+", w) for w in only) for only in (only_x, only_y))


# a rank names one thing of its kind at a time: "our main customer" / "our biggest customer" is one slot said two ways
_RANKS = frozenset(stem(w) for w in ("main", "biggest", "largest", "primary", "top", "favourite", "favorite", "best", "preferred",
                                     "usual", "current", "default", "principal", "chief", "key", "only", "first", "last", "latest",
                                     "newest"))


# states one holds one of at a time: whatever else one is, one eats one way
EXCLUSIVE = (frozenset(["vegetarian", "vegan", "pescatarian", "pescetarian", "omnivore", "carnivore", "flexitarian", "keto",
                         "paleo"]),
              frozenset(["single", "married", "divorced", "widowed", "separated", "engaged"]),
              frozenset(["employed", "unemployed", "retired", "self-employed", "freelance", "freelancing"]))


def _one_of_a_kind(x: list[str], y: list[str]) -> bool:
    """Two values, each one word of one kind that holds one at a time, and not the same."""
    a, b = ([w for w in v if w not in _VALUE_ADVERBS and w not in DETERMINERS] for v in (x, y))
    return len(a) == len(b) == 1 and a != b and any(a[0] in kind and b[0] in kind for kind in EXCLUSIVE)


def _qualified_apart(x: list[str], y: list[str]) -> bool:
    """Two attributes that differ in what qualifies them are two slots, however many words
    they share: "locker at site 1" / "at site 2" (a number apart), "deploy target for
    staging" / "for prod" (what follows the preposition apart)."""
    if any(any(c.isdigit() for c in w) for w in set(x) ^ set(y)):
        return True
    return _qualifiers_apart(x, y)


def _qualifiers_apart(x: list[str], y: list[str]) -> bool:
    """What qualifies them apart: "for staging" / "for prod", or "for admins" in one alone."""
    qx, qy = _qualifiers(x), _qualifiers(y)
    if ("for" in x) != ("for" in y) and (set(x) <= set(y) or set(y) <= set(x)) and (qx | qy) and not (qx | qy) & set(x) & set(y):
        return True  # "the max upload size" / "… for admins": the rule, and its exception for some ("the budget for Q3" is "Q3's budget")
    return bool(qx and qy and not qx & qy)


def _preps_apart(a: Slot, b: Slot) -> bool:
    """One verb with other prepositions says another thing of the same holder: "works at"
    (the employer) / "works on" (the team) / "works as" (the role) hold together."""
    px, py = ({_SAME_PREP.get(w, w) for w in set(s.attribute) & _PREPS} for s in (a, b))
    return bool(px and py and not px & py) or a.verb == b.verb != "be" and _led_by_prep(a) != _led_by_prep(b) \
        and not (_a_time(a.value) or _a_time(b.value))  # ("The gym opens at 6am." / "… opens 7am now.": one time, review)


def _led_by_prep(s: Slot) -> bool:
    """Whether a verb's value is said through a preposition ("runs in Asics Novablast shoes", "drives to work") rather than
    as its object ("ran the Potsdam half marathon in 1:41:05", "drives a Civic"): the one verb then says two things of
    its holder (a fitness bot's "The athlete ran the Potsdam half…" had retired "The athlete runs in Asics Novablast 5
    shoes.", and no shoe was current)."""
    return bool(set(s.attribute) & _PREPS) or bool(s.value) and s.value[0] in _PREPS


_SAME_PREP = {"of": "for"}  # "the tech lead for the payments team" is "the tech lead of the payments team"


def _qualifiers(words: list[str]) -> set[str]:
    return {words[i + 1] for i, w in enumerate(words[:-1]) if w in _PREPS and words[i + 1] not in _PREPS}


def _canonical(stems: list[str]) -> list[str]:
    """Each stem of a value as its `VALUE_SYNONYMS` group's first: "learning" and "studying" one word; a time of day
    on the 24-hour clock ("10:00", "10am" and "10" one time, "10pm" another)."""
    return [clock(w) or _VALUE_CANONICAL.get(w, w) for w in stems]


_CLOCK = re.compile(r"(\d{1,2})(?::(\d{2}))?(am|pm)?")


def clock(word: str) -> str | None:
    """A time of day on the 24-hour clock ("10:00", "10am" → "10"; "2pm" → "14"; "9:30pm" → "21:30"), or None for a
    word that says no time ("10" alone is a number)."""
    m = _CLOCK.fullmatch(word)
    if m is None or not (m.group(2) or m.group(3)) or int(m.group(1)) > 24:
        return None
    hour = int(m.group(1)) % 12 + (12 if m.group(3) == "pm" else 0) if m.group(3) else int(m.group(1))
    return str(hour) if m.group(2) in (None, "00") else f"{hour}:{m.group(2)}"


_OVER = frozenset(["over", "than", "rather", "instead"])  # "tabs over spaces", "tea more than coffee": what is preferred comes first


def _preferred(value: list[str]) -> list[str]:
    """A value that sets one thing above another, as the thing chosen ("tabs over spaces": tabs); any other as it is."""
    cut = next((i for i, w in enumerate(value) if w in _OVER), None)
    return value[:cut] if cut else value


def same_value(a: Slot, b: Slot) -> bool:
    if (_OVER & set(a.value)) != (_OVER & set(b.value)) and _preferred(a.value) != _preferred(b.value):
        return False  # "I prefer tabs over spaces" / "I prefer spaces now": the choice turned, whatever words they share
    x_labels, y_labels = _labels(a.value), _labels(b.value)
    if x_labels and y_labels and x_labels != y_labels:
        return False  # "in Building A" / "in Building C": a letter after its noun is a name, not an article
    x, y = (_canonical([fold(w).translate(SPELLED) for w in content(v.value) if w not in ("year", "old")])  # Köln, Koln
            for v in (a, b))
    if not x or not y:
        return x == y
    if _initials(a.value, b.value) or _initials(b.value, a.value):
        return True  # "IBM" / "International Business Machines"
    if set(x) == set(y) and len(x) > 2:
        return x == y  # "tea more than coffee" is not "coffee more than tea" (but "third floor" is "floor 3")
    return dice(x, y) >= 0.8 or (set(x) <= set(y) or set(y) <= set(x)) and min(len(x), len(y)) >= 1 and dice(x, y) >= 0.5


# a number naming one of a series ("Floor 4", "book 1", "Rack 2", "sprint 14"), unless where something is, reached or moved
# to ("in room 12", "is room 14", "moved to room 4", "I'm on chapter 11": a value that changes); a version ("Node 18",
# "Python 3.12") is a value, and no series; an experiment's run too ("bf16 … on run 26" had been an earlier value of "comparing
# run 17 and run 23" for "launching run 24 with the current best settings": found by an ML researcher using Codex); and a
# piece of work's number ("PR 42", "ticket 7", "build 12": "PR 42 rejected" had been an earlier value of "PR 57 rejected",
# found by a multi-agent crew's builder)
_SERIES_NOUNS = (r"(book|chapter|act|part|volume|vol|section|scene|phase|stage|step|room|building|floor|gate|platform|track|ward|bed|"
                 r"lane|unit|season|level|appendix|figure|table|rack|shelf|bay|dock|zone|worker|server|machine|host|shard|replica|"
                 r"sprint|site|plot|row|tank|locker|desk|seat|suite|apartment|apt|flat|team|group|cohort|batch|run|"
                 r"pr|mr|ticket|issue|bug|build|incident)")
SERIES = re.compile(r"(?<!\bon )(?<!\bat )(?<!\bto )(?<!\bin )(?<!\bis )(?<!\bwas )(?<!'s )(?<!’s )(?<!\binto )(?<!\bthrough )"
                    r"(?<!\bpast )(?<!\breached )(?<!\bnow )"
                    # (a noun of the list said as a verb, after its doer, is no series: "we run 8 gpus", "I book 2 tables")
                    r"(?<!\bi )(?<!\bwe )(?<!\byou )(?<!\bthey )(?<!\bhe )(?<!\bshe )(?<!\bwill )(?<!\bcan )(?<!'ll )(?<!\bdo )"
                    rf"\b{_SERIES_NOUNS}\s+(\d{{1,3}})\b(?![.,:]\d)", re.IGNORECASE)
# ... as the subject a statement opens with ("Floor 4 has 2 meeting rooms."): whose the rest is ("My flight leaves from gate
# 12" / "… from gate 14 now" is one flight's gate changed, found in review)
_SUBJECT_SERIES = re.compile(rf"^\s*(?:the\s+|our\s+|my\s+)?{_SERIES_NOUNS}\s+(\d{{1,3}})\b(?![.,:]\d)", re.IGNORECASE)


# ... or an identifier, of any length ("PR 142", "issue #4411", "T-7", "INC-2231"): a multi-agent crew's "PR 157 was rejected by
# the reviewer for a missing migration test." had superseded "PR 142 was rejected …" (a number changed), and its recall lost PR 142
_SUBJECT_ID = re.compile(r"^\s*(?:the\s+)?(?:(?i:(pr|pull request|mr|merge request|issue|ticket|bug|incident|order|invoice|case|build|"
                         r"job|story|task|epic|request|pipeline|deploy(?:ment)?))\s*#?\s*(\d+)|([A-Z][A-Z0-9]{0,9})-(\d+))\b(?![.,:]\d)")


def two_of_a_series(a: str, b: str) -> bool:
    """Two statements each of another one of a series, or another identified thing, said as their subjects ("Floor 4 has
    2 meeting rooms." / "Floor 2 has 6 meeting rooms.", "Rack 2 …" / "Rack 1 …", "PR 142 …" / "PR 157 …"): two things,
    whatever else they share."""
    x, y = _SUBJECT_SERIES.match(a), _SUBJECT_SERIES.match(b)
    if x and y:
        return x.group(1).lower() == y.group(1).lower() and x.group(2) != y.group(2) and not (_THE_ONE.search(a) or _THE_ONE.search(b))
    i, j = _SUBJECT_ID.match(a), _SUBJECT_ID.match(b)
    return bool(i and j) and _identified(i) != _identified(j) and _identified(i)[0] == _identified(j)[0] \
        and not (_THE_ONE.search(a) or _THE_ONE.search(b))


# "Build 1450 is the current production release now.", "Deploy 91 is live on prod": which one holds a role is its value,
# not another thing (review: "Build 1432 …" had stayed current beside it)
_THE_ONE = re.compile(r"\b(?:is|are|was|'s)\s+(?:now\s+)?(?:(?:the\s+)?(?:current|latest|newest|active|new)\b|live\b)", re.IGNORECASE)


def _identified(m: re.Match[str]) -> tuple[str, str]:
    """An identifier's kind and number: ("pr", "142"), ("T", "7")."""
    return (m.group(1).lower(), m.group(2)) if m.group(1) else (m.group(3), m.group(4))


def _labels(value: list[str]) -> set[str]:
    """The one-letter names of a value: a letter after a word of substance ("building a", "plan c"), not an article."""
    return {w for before, w in pairwise(value) if len(w) == 1 and w.isalpha() and before not in _FILLER and before.isalpha()}


def _initials(short: list[str], long: list[str]) -> bool:
    """`short` is one word spelled by the initials of `long`'s words (an acronym)."""
    return len(short) == 1 and len(long) == len(short[0]) > 1 and short[0] == "".join(w[0] for w in long)


def mentions(words: list[str], text: str) -> bool:
    """`text` says each content word of `words` (the old value a change names)."""
    c = content(words)
    said = _words(text.lower())
    # (and a package by its name: "Decision: add zod@3.23.8 …" names zod, which "we move from zod to valibot" ends)
    have = {stem(w) for w in said} | {stem(w.partition("@")[0]) for w in said if w.partition("@")[2][:1].isdigit()}  # (not an email: review)
    return bool(c) and all(w in have for w in c)


# a clause saying a named thing is gone: "I sold the Civic", "ditched the pixel", "we dropped Redis", "he left Hillcrest"
_RETIRED = re.compile(r"\b(?:sold|ditched|dumped|dropped|left|(?:after|since) leaving|quit|abandoned|got rid of|gave up(?: on)?|said goodbye to|bye|"
                      r"(?:(?:am|are|is|'m|'re|'s)\s+)(?:dropping|ditching|dumping|abandoning|phasing out|getting rid of)|phased out|"
                      r"broke up with|split up with|split from|divorced|separated from)\s+"
                      r"(?:(?:the|my|our|his|her|their|its|that|old)\s+){0,2}(?P<old>[\w+#-]+(?:\.\w+)*(?:\s+(?!(?:to|for|with|at|in|on|and|"
                      r"before|after|when|because|since|until|while|as|so|but|once|if)\b)[\w+#-]+){0,2})",  # ("left Aldric before Kael …")
                      re.IGNORECASE)


_TWO_NAMES = re.compile(r"\b([A-Z][\w-]*) ([A-Z][\w-]*)\b")
# "The Japan trip is cancelled", "our Lisbon offsite got called off": a plan of what it names is gone
# ("Anna is off tomorrow", "Ben is off sick", "… off on Sundays": a day off, not a plan called off — it had retired "Anna
# Kowalski is our head barista": found by a café owner)
_CALLED_OFF = re.compile(r"\b(?P<old>[A-Z][\w-]+(?:\s+[\w-]+){0,2}?)\s+(?:is|was|got|has been|have been|'s)\s+(?:now\s+)?"
                         r"(?:cancell?ed|called off|scrapped|off(?!\s+(?:tomorrow|tmrw|today|tonight|sick|work|duty|shift|"
                         r"(?:on\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)days?|this (?:week|weekend)|next (?:week|weekend)|"
                         # a day off on a date: "bernadette is off oct 17 (sat), agency sending a sub" had retired her start
                         rf"(?:on\s+|until\s+|till\s+)?(?:the\s+)?(?:\d+(?:st|nd|rd|th)?|(?i:{'|'.join(when.MONTHS)})\b))\b))\b")
# "Sam and I broke up", "Ana and I split up": the name before the ending
_PARTED = re.compile(r"\b(?P<old>[A-Z][\w-]+)\s+and\s+I\s+(?:have\s+|had\s+)?(?:broke(?:n)?\s+up|split\s+up|separated|divorced|parted ways)\b")
# "I quit smoking", "I've stopped eating meat", "gave up running": an activity of the fact ended
_QUIT = re.compile(r"\b(?:i|we)(?:'ve|'d|\s+have|\s+had)?\s+(?:just\s+|finally\s+|recently\s+|completely\s+)?"
                   r"(?:quit|stopped|gave up|given up)\s+(?P<doing>[a-z]{3,}ing)\b(?P<what>(?:\s+(?!(?:in|on|at|for|since|last|this|"
                   r"a|an|and|but|because|after|when)\b)[\w'-]+){0,3})", re.IGNORECASE)


def retired(new_text: str, old_text: str, was: Slot | None = None) -> bool:
    """`new_text` says a thing `old_text` names is gone ("I drive a Honda Civic" / "I sold the
    Civic; …", "I'm dating Sam." / "Sam and I broke up."), or an activity it says has ended
    ("I smoke five a day." / "I quit smoking in May."). Only a name or the fact's own verb
    counts: "I left the office early", "got rid of my old dresser" say nothing of "Our office is
    in Dublin" or "a system for old people"."""
    said = {w for w in _words(old_text.lower())}
    called_off = [m for m in _CALLED_OFF.finditer(new_text)  # of a plan the fact names: "the Japan trip" of "a trip to Japan",
                  if set(content(_words(m.group("old").lower()))) - names(new_text) <= said]  # not "the Berlin meetup" of Anna's home
    gone = [*_RETIRED.finditer(new_text), *_PARTED.finditer(new_text), *called_off]
    if gone:
        named = names(old_text) | {a.lower() + b.lower() for a, b in _TWO_NAMES.findall(old_text)}  # "VS Code" is "vscode"
        if any(_named_in(set(_words(m.group("old").lower())), named)
               and not _another_named(new_text[_clause_start(new_text, m.start()):m.start()], old_text) for m in gone):
            return True
    quits = list(_QUIT.finditer(new_text))
    if not quits:
        return False
    was = was or parse(old_text)  # the fact's own verb: "I smoke …", not a noun of it ("some drinks")
    return was is not None and was.holder in ("i", "we") and any(
        stem(was.verb) in _verbs_of(m.group("doing").lower())
        and (not content(_words(m.group("what").lower())) or set(content(_words(m.group("what").lower()))) & set(content(was.value)))
        for m in quits)


def _another_named(subject: str, old_text: str) -> bool:
    """The words before a thing is said gone name another holder than the earlier statement's: "Project Borealis dropped
    Redis" says nothing of "Project Atlas uses Redis" (each names one the other does not)."""
    theirs, ours = names(subject), names(old_text)
    return bool(theirs - ours) and bool(ours - _named_values(old_text) - theirs)


def _named_values(text: str) -> set[str]:
    """The names a statement gives as what it uses or has ("Redis" of "Project Atlas uses Redis"), not as who does."""
    slot = parse(text)
    return set(slot.value) if slot is not None else set()


def _of_another(a: Slot | None, b: Slot, old_text: str, new_text: str) -> bool:
    """A change said of a thing it names that the earlier statement does not speak of: "The team moved its away game from
    Porto to Braga" says nothing of "My sister Ana lives in Porto", nor "We're moving the shop's stock count from Fridays to
    Mondays" of "I work remotely on Mondays and Fridays" (found by a skeptical evaluator: each had retired the fact). Only
    words the change says count ("we moved from Jenkins" is read as where we "live"); a word's kin ("linter" of "linting")
    and its synonyms are the same thing; what it turns from may be the earlier statement's thing itself ("… through
    Tailscale instead of a VPN" of "Our VPN is Cisco AnyConnect")."""
    if a is not None and set(content(b.old_value)) & set(content(a.attribute)):
        return False
    if _another_possessor(old_text, new_text):
        return True
    if b.holder in ("i", "we") and not re.search(r"\b(?!(?:it|that|there|here|what|who|he|she)\b)\w+'s\b", new_text.replace("’", "'"), re.IGNORECASE):
        return False  # "I switched my membership from FitLab to …", "We moved the newsletter from …": our own thing's change
        # (only a thing of another's — "the shop's stock count" — or one the change names as its subject is another)
    new = {stem(w) for w in _words(new_text.lower())}
    said = [w for w in content(b.attribute) if w.isalpha() and len(w) > 2 and w not in _LIGHT_VERBS and w in new]
    if b.holder not in ("", "i", "we"):
        said += content(b.holder.split())
    if not said:
        return False  # "We switched from Slack to Discord": the change is of whatever held the old value
    have = {stem(w) for w in _words(old_text.lower())}
    kin = {h[:4] for h in have if len(h) >= 4}
    return not any(w in have or len(w) >= 4 and w[:4] in kin or any(stem(x) in have for x in _synonyms(w)) for w in said)


# a person's part in a piece of work or a deal, the way one speaks of a named person ("the client", "the landlord")
_PARTS = frozenset("""client clients customer customers patient tenant landlord landlady buyer seller supplier vendor contractor
    employer employee candidate applicant student pupil lawyer accountant agent broker""".split())  # noqa: SIM905 (a list of words)


def _called_by_role(a: Slot, b: Slot, new_text: str) -> bool:
    """The earlier statement is of a person named ("Ferreira wants all notices by registered post."), the change of one
    called by their part ("The client now wants all notices by email, not registered post.") and it says again all the
    earlier said of them but the value: one person named two ways — or two ("The tenant now wants …" when Ferreira is the
    landlord). Which, only the user knows: the pair is listed for review (it had been no pair at all, and Ferreira's
    registered post stayed current unseen: found by a law firm's paralegal)."""
    said = content(b.attribute)
    if a.holder in ("", "i", "we") or not said or not all(w in _PARTS or w in _PERSON for w in said):
        return False
    new = {stem(w) for w in _words(new_text.lower())}
    return all(stem(w) in new for w in content(a.attribute) if w.isalpha())


def _synonyms(word: str) -> frozenset[str]:
    """The words of the group a stem is in (`SYNONYMS`: "chat" is "messaging"), none if in none."""
    i = _SYNONYM_OF.get(word)
    return SYNONYMS[i] if i is not None else frozenset()


def _named_in(words: set[str], named: set[str]) -> bool:
    """A word of `words` is one of the names, or a name's short form ("Postgres" of "PostgreSQL", six letters at least)."""
    return bool(words & named) or any(len(w) >= 6 and n.startswith(w) or len(n) >= 6 and w.startswith(n) for w in words for n in named)


def _verbs_of(gerund: str) -> set[str]:
    """The stems the verb of a gerund may have: "smoking" is smoke's, "running" run's, "eating" eat's."""
    base = gerund[:-3]
    forms = {base, base + "e"} | ({base[:-1]} if len(base) > 2 and base[-1] == base[-2] else set())
    return {stem(f) for f in forms}


def _set_aside(words: list[str], text: str) -> bool:
    """`text` itself puts `words` aside ("I prefer tea over coffee" / "… tea rather than a
    coffee" say one thing): what a later statement turns from is not its value."""
    c = content(words)
    return bool(c) and re.search(rf"\b(?:over|than|instead of|not)\s+(?:\w+\s+){{0,2}}{re.escape(c[0])}", text.lower()) is not None


_CLAUSE = re.compile(r"\s*(?:;|\s[—–-]\s|,\s+(?=(?:i|we|he|she|they|my|our)\b)|"
                     # "… and Lena is the head chef": another named subject's clause
                     r",?\s+and\s+(?=(?-i:[A-Z])[\w'’-]+\s+(?:is|was|are|has|had|will|takes|took)\b))\s*", re.IGNORECASE)


def clauses(text: str) -> list[str]:
    """The clauses of a statement that each have a subject ("I'm no longer vegetarian, I eat
    fish again": two), for a change said in one of them."""
    return [c for c in _CLAUSE.split(text) if c.strip()]


_POSSESSOR = re.compile(r"^\s*(?:(?P<pronoun>(?i:his|her|their|its))\s|(?P<name>[A-Z][\w-]*)['’]s\s)")


def _another_possessor(old_text: str, new_text: str) -> bool:
    """The change is of a thing of someone the earlier statement does not name, and that statement is of someone it does
    name (or of mine): "Elira's eyes are grey now, not green" says nothing of "mara has green eyes" (a novelist's series
    bible had Mara's eyes retired). Whose "her eyes" are, the words do not say: that stays a change."""
    new = _POSSESSOR.match(new_text)
    if not new or not new.group("name"):
        return False
    old = _POSSESSOR.match(old_text)
    if old and old.group("pronoun"):
        return False
    return stem(new.group("name").lower()) not in {stem(w) for w in _words(old_text.lower())}


def _possessors_apart(old_text: str, new_text: str, b: Slot) -> bool:
    """One statement's subject is someone's by a pronoun, the other's by a name, and no change is said ("Her father is
    Aldric Varrow." / "Hestia's father is a fisherman."): whose "her" is, the words do not say (it had retired a true fact
    of another); "His cardiologist is Dr. Kowalczyk." / "Dad's cardiologist is Dr. Patel now." says the change."""
    x, y = _POSSESSOR.match(old_text), _POSSESSOR.match(new_text)
    return bool(x and y) and bool(x.group("pronoun")) != bool(y.group("pronoun")) and not b.change


def relation(a: Slot | None, b: Slot | None, old_text: str, new_text: str) -> str | None:
    """How the later statement `b` stands to the earlier `a` by slot: `same` (one slot, one
    value), `changed` (one slot, another value: it replaces it), `negated` (one slot, the
    value denied or affirmed), `beside` (one slot, another value that can hold alongside),
    `topic` (another slot of the same person or thing), or None (different slots, or no slot)."""
    if a is not None and b is not None and b.old_value and mentions(b.old_value, old_text) and _called_by_role(a, b, new_text):
        return "beside"  # one person named two ways, or two people: listed for review, never decided here (`_called_by_role`)
    if b is not None and b.old_value and mentions(b.old_value, old_text) and not mentions(b.value, " ".join(a.value) if a else old_text) \
            and not _set_aside(b.old_value, old_text) and not _of_another(a, b, old_text, new_text):
        return "changed"  # "switched from Slack to …", "instead of Elena", "not Braga"
    if retired(new_text, old_text, a) and not retired(old_text, new_text, b):
        return "changed"  # "I sold the Civic", "we dropped Redis": the old value is gone
    if a is None or b is None:
        return None
    if _undone(a, b) and not _A_TRIP.search(new_text):
        return "changed"  # "we're reverting to JWT." of "We're moving auth from JWT to PASETO.": the value it left is back
    if not same_holder(a, b) or not same_attribute(a, b) or _possessors_apart(old_text, new_text, b):
        return "topic" if _same_topic(a, b, old_text, new_text) else None
    if _grew(a, b) and a.negated == b.negated:
        return "changed"  # "I'm allergic to peanuts and shellfish." of "… to peanuts.": the list holds more now
    if same_value(a, b):
        return "negated" if a.negated != b.negated else "same"
    if b.additive or a.additive or _preps_apart(a, b) or _a_feeling(a.value, old_text) or _a_feeling(b.value, new_text):
        return "beside"
    if _times_apart(a.value, b.value):
        return "changed"  # "I do yoga on Tuesday evenings" / "on Thursday evenings": when a habit happens, one time at a time
    if a.verb == b.verb == "be" and content(a.attribute) and content(b.attribute) and _kinds_apart(a.value, b.value, old_text, new_text):
        return "topic"  # "my partner is a chef" / "… is allergic to cats", "the Louvre is in Paris" / "… is the most visited museum"
    if _extends(a.value, b.value) or _extends(b.value, a.value) or _details_apart(a.value, b.value):
        return "beside"  # "we deploy to Fly.io" / "… to Fly.io on Tuesdays and Thursdays only": the same value, said more narrowly
    if a.verb == b.verb == "be" and not content(a.attribute) and not content(b.attribute) and _role_at(a.value, b.value):
        return "changed"  # "I'm a senior engineer at Monzo" / "I'm a staff engineer at Monzo": one role at one employer
    if a.verb == b.verb == "be" and _one_of_a_kind(a.value, b.value):
        return "changed"  # "I'm vegetarian now" / "I'm pescatarian now": one diet at a time (a new user's)
    if not content(a.value) or not content(b.value):
        return None
    if max(len(_worded(a.value)), len(_worded(b.value))) > MAX_VALUE_WORDS:
        return "topic"  # a slot's value is short (a name, a number, a place); a long one is a description
    if not content(a.attribute) and not content(b.attribute) and a.verb == b.verb == "be":
        if b.change and _one_word_apart(a, b) and (a.holder not in ("", "i", "we") or _one_at_a_time(a.value, b.value)):
            return "changed"  # "Omar is an engineer at Adobe" / "Omar is a manager at Adobe now": a named role changed, and
            # "I am on the Free plan." / "I am on the Pro plan now." (a support bot's customer): one plan at a time (not
            # "… member of the book club now" of the chess club, found in review: one is in many clubs)
        if _next_of_one(a.value, b.value):
            return "changed"  # "Leo is in 3rd grade" / "Leo is in 4th grade": one grade, level or year at a time
        if all(len(v) == 1 and v[0].isdigit() and len(v[0]) <= 3 for v in (a.value, b.value)):
            return "changed"  # "Maria is 40" / "Maria is 41 now", "Rex is 3 years old" / "Rex turned 4": one age at a time
        if b.change and all(len(c := content(v)) == 1 and clock(c[0]) is not None for v in (a.value, b.value)):
            return "changed"  # "Induction is at 6:30pm." / "… at 7:30pm now.": one time of day, a change said (a skeptic's)
        return "beside"  # "I'm in Chicago" / "I'm going to look into it now": one is many things at once
    if a.single or b.change or _count_changed(a, b):
        return "changed"
    return "beside"


_JOINS = frozenset(["and", "&", "plus"])


def _grew(a: Slot, b: Slot) -> bool:
    """`b`'s value is `a`'s with a few more items joined on ("peanuts" / "peanuts and shellfish", "… chicken" / "… chicken,
    beef and lamb": confirmed as the same value, it had hidden the shellfish for good, found by a life-assistant bot's
    builder); not `a`'s value said more narrowly ("Fly.io on Tuesdays and Thursdays only") nor a clause of its own
    joined on ("works remotely and visits the London office once a quarter")."""
    old, new = [w.lower() for w in a.value], [w.lower() for w in b.value]
    rest = new[len(old):]
    joined = bool(rest) and rest[0] in _JOINS or len(rest) >= 3 and rest[-2] in _JOINS
    return bool(content(old)) and new[:len(old)] == old and joined and len(rest) <= 4 \
        and not any(w in _PREPS or _base(w) is not None for w in rest)


# going back somewhere for a reason or a while: "I went back to Porto for Christmas" is a visit, not a move back (it had
# retired "I moved from Porto to Berlin.": a review's)
_A_TRIP = re.compile(r"\b(?:went|go|goes|going|flew|fly|flying|drove|travelled|traveled|headed)\s+back\b.*\bfor\b", re.IGNORECASE)


def _undone(a: Slot, b: Slot) -> bool:
    """`b` changes back to the value `a` said it changed from, said by the same holder of no other thing ("we're reverting
    to JWT." had left "We're moving auth from JWT to PASETO." current, and first in recall: found by a platform team)."""
    return bool(a.change and a.old_value and b.change and content(b.value)) and same_holder(a, b) \
        and (not content(b.attribute) or same_attribute(a, b)) and same_value(Slot(b.holder, [], a.old_value), b)


KIN = frozenset(stem(w) for w in FAMILY)
_COMMON = frozenset(["yesterday", "today", "tonight", "tomorrow", "now", "hey", "hi", *re.findall(r"\w+", _DISCOURSE_WORDS),
                     "i", "the", "a", "an", "my", "our", "we", "please", "let", "lets", "don't", "never", "always", "correction",
                     "actually", "so", "also", "and", "but", "then", "this", "that", "it", "on", "in", "at", "from", "since", "every",
                     # the words that open a sentence and name nobody ("Everything's been bumped to Node 20.")
                     *(STOP_WORDS - {"will"}), *CONTRACTIONS, "everything", "everyone", "everybody", "something", "someone",
                     "somebody", "anything", "anyone", "anybody", "nothing", "nobody", "none", "yes", "maybe", "perhaps", "still",
                     "even", "already", "there's", "here's", "until", "unless", "although", "though", "whenever"])


def names(text: str) -> set[str]:
    """Capitalised words that are not common openers ("Priya", "Kubernetes", "AWS")."""
    return {w.lower() for w in re.findall(r"\b[A-Z][\w.-]*\w|\b[A-Z]\b", text) if w.lower() not in _COMMON and w.lower() not in VERBS}


def _same_topic(a: Slot, b: Slot, old_text: str, new_text: str) -> bool:
    """About the same person or thing, saying another thing of it: a name in both, one
    subject with two verbs, an addition ("also") by the same holder, or the same holder
    doing the same verb."""
    if names(old_text) & names(new_text):
        return True
    if a.holder and a.holder != b.holder and a.holder.split("'s")[0] == b.holder.split("'s")[0]:
        return True  # "my birthday" / "my wife's birthday"
    x, y = content(a.attribute), content(b.attribute)
    sx, sy = content(_subject(a.attribute)), content(_subject(b.attribute))
    if a.holder == b.holder and x and (a.verb != b.verb and x == y or x != y and sx == sy != [] and (sx != x or sy != y)):
        return True  # "the backend is written in Go" / "the backend uses PostgreSQL" / "… is hosted on Render": one subject, two things said of it
    if a.holder and a.holder == b.holder and a.verb == b.verb and {*content(a.attribute), *content(b.attribute)} <= KIN:
        return True  # "my daughter is 12" / "my son is 9": the holder's family
    return bool(a.holder and a.holder == b.holder and (b.additive or a.verb == b.verb and a.verb not in ("be", "have", "change")))


_PREDICATES = frozenset(["born", "cut", "made", "held", "built", "kept", "paid", "known", "set", "sold", "bought", "taught", "written",
                         "given", "taken", "left", "allergic", "afraid", "fond", "aware", "capable", "proud", "responsible", "interested",
                         "married", "engaged", "pregnant", "addicted", "immune", "eligible", "due"])


def _kind(value: list[str], text: str = "") -> str:
    """What a value of "X is …" tells of X: who or what it is (a name, "a chef"), where or when ("in Paris", "at 10"), or
    a predicate ("allergic to cats", "born in 1938", "called Isla", "studying for a degree"), named by its word. Two
    kinds are two attributes of X, not two values of one; "what" and "where or when" only where the "what" is described
    ("the most visited museum"): "Pacific Time" / "on Central European Time" is one attribute."""
    words = [w for w in value if w not in _VALUE_ADVERBS]
    if not words:
        return ""
    if _capitalised(words[0], text):
        return "what"  # a name, whatever its ending: "The lead investor of our seed round is Initialized." (a fund)
    first, after = ANTONYMS.get(words[0], words[0]), words[1:2]  # "closed on Sundays" is the state "open on Sundays" denied
    if first in _PREPS:
        return "where or when"
    if first in _PREDICATES or first.endswith("ing") and len(first) > 5 or _ed_participle(first) and (not after or after[0] in _PREPS):
        return stem(first)
    return "what, described" if first in DETERMINERS else "what"


_SHORT_PARTICIPLES = frozenset(["used", "owed", "aged", "tied", "died", "dyed", "iced", "eyed", "fed", "led", "wed"])


def _ed_participle(word: str) -> bool:
    """A word ending in -ed that is a past participle ("based", "married"): not "red",
    "Fred", "bed" or "shed" — "My favourite colour is red now." had been another attribute
    than "… is blue.", and both stayed current."""
    return word.endswith("ed") and (len(word) > 4 or word in _SHORT_PARTICIPLES)


def _capitalised(word: str, text: str) -> bool:
    """Whether `text` writes `word` with a capital inside a sentence (a name), not at its opening."""
    return any(m.group(0)[0].isupper() and not re.search(r"(?:^|[.!?:]\s*)$", text[:m.start()])
               for m in re.finditer(rf"\b{re.escape(word)}\b", text, re.IGNORECASE)) if text and word.isalpha() else False


def _kinds_apart(a: list[str], b: list[str], a_text: str = "", b_text: str = "") -> bool:
    if any(c.isdigit() for w in a for c in w) and any(c.isdigit() for w in b for c in w):
        return False  # "about $4,200" / "running around $6,800 a month": a number for a number
    x, y = sorted((_kind(a, a_text), _kind(b, b_text)))
    return bool(x and y) and x != y and (x, y) not in (("what", "what, described"), ("what", "where or when"))


_VALUE_ADVERBS = frozenset(["now", "still", "also", "currently", "actually", "really", "very", "already", "no", "longer", "not", "just",
                            "too"])


def _extends(a: list[str], b: list[str]) -> bool:
    """`b` is `a` said with a qualifier after it ("fly.io" / "fly.io on tuesdays and thursdays only")."""
    y = [w for w in b if w not in _VALUE_ADVERBS]
    return bool(content(a)) and y[: len(a)] == a and len(y) > len(a) and y[len(a)] in _PREPS


def _details_apart(a: list[str], b: list[str]) -> bool:
    """One value, each said with another detail after it: "berlin with my partner sam" / "berlin near the tiergarten park"
    (the second had retired the first, and recall hid the partner's name: found by a bot builder)."""
    x, y = [w for w in a if w not in _VALUE_ADVERBS], [w for w in b if w not in _VALUE_ADVERBS]
    n = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
    return bool(content(x[:n])) and n < min(len(x), len(y)) and x[n] in _DETAILS and y[n] in _DETAILS


# (not "in" / "on" / "at": "at 9:30 in room 4" / "at 9:30 on Zoom" is where it moved, found in review)
_DETAILS = frozenset({"with", "near", "beside", "behind", "opposite", "outside", "around", "next", "close", "for", "via", "by"})


def _one_word_apart(a: Slot, b: Slot) -> bool:
    """The two values are one frame with one word changed ("engineer at adobe" / "manager at adobe")."""
    x, y = content(a.value), content(b.value)
    return len(x) == len(y) > 1 and sum(p != q for p, q in zip(x, y)) == 1


# what one is on or in one of at a time, named by its kind ("the Pro plan", "the night shift", "the Berlin office")
_ONE_AT_A_TIME = frozenset(["plan", "tier", "subscription", "package", "contract", "shift", "rota", "office", "floor", "desk",
                            "team", "squad", "grade", "level", "class", "year", "stage", "phase", "diet"])


def _one_at_a_time(x: list[str], y: list[str]) -> bool:
    """Two values naming one kind of thing one holds one of at a time, by the word they end on ("on the free plan" /
    "on the pro plan"), the word that differs another ("the Free plan" / "the Pro plan", not "3 weeks" / "4 weeks")."""
    cx, cy = content(x), content(y)
    return bool(cx) and bool(cy) and cx[-1] == cy[-1] and cx[-1] in _ONE_AT_A_TIME and not _count_changed_words(cx, cy)


def _next_of_one(x: list[str], y: list[str]) -> bool:
    """Two values of one kind held one at a time, apart by their number alone ("in 3rd grade" / "in 4th grade", "on
    level 2" / "on level 3"): a step in one series, not two things (`_one_at_a_time` leaves counts to `_count_changed`)."""
    cx, cy = content(x), content(y)
    return bool(cx) and bool(cy) and cx[-1] == cy[-1] and cx[-1] in _ONE_AT_A_TIME and _count_changed_words(cx, cy)


def _count_changed_words(x: list[str], y: list[str]) -> bool:
    return [w for w in x if not w[0].isdigit()] == [w for w in y if not w[0].isdigit()] and x != y


def _worded(value: list[str]) -> list[str]:
    """A value's content words but its numbers and codes: "Calle de Alcalá 45, 28014 Madrid" is a place of three words, not
    a description of five (a support bot's customers' changed shipping addresses had each stayed current beside the old)."""
    return [w for w in content(value) if not any(c.isdigit() for c in w)]


def _count_changed(a: Slot, b: Slot) -> bool:
    """Only a number differs ("I have 2 cats" / "I have 3 cats"): a count, one at a time."""
    return _count_changed_words(content(a.value), content(b.value))


# -- whose statement it is -------------------------------------------------------
# one person under several words: "my mum" is "my mother", "my wife" "my partner"
_SAME_PERSON = (("mother", "mum", "mom", "mummy", "mommy", "mam"), ("father", "dad", "daddy", "papa"),
                ("grandmother", "grandma", "gran", "granny", "nan", "nana", "nanna"), ("grandfather", "grandpa", "grandad", "granddad"),
                ("partner", "wife", "husband", "spouse", "girlfriend", "boyfriend", "fiancé", "fiancée", "fiance", "fiancee"),
                ("child", "kid", "baby", "toddler"), ("children", "kids", "babies"), ("manager", "boss", "supervisor"))
_PERSON = {**{w: w for w in (*FAMILY, *_CLOSE, "grandson", "granddaughter", "stepson", "stepdaughter", "stepmother", "stepfather",
                             "sibling", "siblings", "twin", "in-laws", "landlord", "landlady", "tenant", "doctor", "dentist", "therapist",
                             "housemate", "mentor", "assistant", "teacher", "coach", "client", "cofounder", "co-founder")},
           **{w: group[0] for group in _SAME_PERSON for w in group}}
_SELF = frozenset(["i", "i'm", "i've", "i'd", "i'll", "im", "we", "we're", "we've", "we'd", "we'll", "let's", "lets"])  # ("Let's go with …": ours)
_POSSESSIVE_SELF = frozenset(["my", "our"])
_OPENING = re.compile(r"[\w'’-]+")
_NAMES_THE_ROLE = re.compile(r"\s*(?:is|was|'s)\s+(?:now\s+|still\s+|also\s+)?(?:[A-Z]|Dr\b|Mr|Ms|Mrs)")


@lru_cache(maxsize=1 << 14)  # (as `parse`: a candidate is read against up to ten neighbours)
def whose(text: str) -> str | None:
    """Whose statement it is, read from its opening words: "self" for I, we, my or our (and the
    user), "self:sister" for my sister or my sister's, "rui" for Rui's, "rui:wife" for Rui's
    wife; None where the opening names no person ("Production runs …", "Sam is …", "They …").
    "My manager is Priya" is the speaker's (the role is what is said, Priya its value)."""
    words = [w.replace("’", "'") for w in _OPENING.findall(text[:200])[:6]]
    if not words or len(words) > 1 and words[1].lower() in ("and", "&"):  # "Mum and Dad's home": two, read as neither
        return None
    low = [w.lower() for w in words]
    if low[0] in _SELF:
        return "self"
    if low[0] == "the" and len(low) > 1 and low[1] in ("user", "user's"):
        words, low = words[1:], low[1:]
    if low[0] in _POSSESSIVE_SELF or low[0] in ("user", "user's"):
        owner, rest = "self", 1
    elif low[0].endswith("'s") and words[0][0].isupper() and low[0][:-2] not in _COMMON:  # not "Everything's …"
        base = low[0][:-2]
        if base in _PERSON:
            return f"self:{_PERSON[base]}"  # "Mum's birthday"
        owner, rest = base, 1
    elif low[0] in _PERSON and words[0][0].isupper():
        return f"self:{_PERSON[low[0]]}"  # "Dad quit smoking"
    else:
        return None
    if low[0] == "user":  # "user prefers …" (the user)
        return owner
    for i in range(rest, min(rest + 2, len(low))):  # "my sister", "my younger sister", "my wife's"
        base = "partner" if low[i] == "other" and low[i + 1 : i + 2] in (["half"], ["half's"]) else low[i].removesuffix("'s")
        kin = _PERSON.get(base) or _PERSON.get(base.split("-")[0]) and base  # "my sister-in-law"
        if kin:
            tail = text[_nth_word_end(text, i):]
            if not low[i].endswith("'s") and _NAMES_THE_ROLE.match(tail):
                return owner  # "My manager is Priya": the speaker's manager, named
            return f"{owner}:{kin}"
    return owner


def _nth_word_end(text: str, n: int) -> int:
    for i, m in enumerate(_OPENING.finditer(text)):
        if i == n:
            return m.end()
    return len(text)


def others(a: str, b: str) -> bool:
    """Two statements said of two people ("My sister lives in Braga." / "I live in Braga.",
    "My wife's birthday …" / "My birthday …", "My favourite band …" / "Rui's favourite band …"),
    neither naming the other's person ("My doctor lowered my dose" is mine too; "We switched the
    cat to …" is the cat's; "I'm married to Ingrid" names my wife)."""
    x, y = whose(a), whose(b)
    return x is not None and y is not None and x != y and not _mentions(b, x) and not _mentions(a, y)


_SELF_WORDS = frozenset(["i", "me", "my", "mine", "we", "us", "our", "ours", "myself", "ourselves"])


def _mentions(text: str, person: str) -> bool:
    """The text names `person` (as `whose` says it) anywhere, besides its opening words."""
    words = [w.lower().replace("’", "'").removesuffix("'s") for w in _OPENING.findall(text)]
    if person == "self":
        return bool(_SELF_WORDS & set(words[1:]))
    owner, _, kin = person.partition(":")
    if not kin:
        return owner in words
    return any(_PERSON.get(w) == kin or w == kin for w in words) or kin == "partner" and "married" in words
