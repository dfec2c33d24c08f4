"""The local distiller: a turn's facts, corrections and tasks without an LLM, deterministically.

`local_distill(messages)` gives the four fields of the distill schema (`distill.py`) from
the sentences of a turn, each kept as said (an opening "Sorry," or "Actually," aside) —
it does not paraphrase, which is what the model is for; only a person said by a pronoun alone
is named, when the message spoke of one person before ("Sam got a spot at Sunflower. his
teacher will be Miss Priya." keeps "Sam's teacher …", `said_of`). Sentences
end at a full stop before any word, lower-case too ("… config.yaml. we always …"), but not
after an abbreviation; quoted text with a full stop in it (a draft to rewrite) is no
statement of the user's, nor is a pasted letter (from an email's "Subject:" or "From:" header, a
forwarded message's banner or a "Dear …," with a sign-off, to its signature), nor narration under a
chapter's heading (a pasted chapter), a numbered list under one (its outline), a passage after a line that leads to it
("ch 1 first para in new pov:") or a line of dialogue; a list item "NAME — a noun phrase" is read as
"NAME is …", and "new NOUN: VALUE" as "new NOUN is VALUE"; a line cut
where no sentence ends ("… or does the" / "billing client …") goes on with the next. Each
sentence is classified by the first rule that holds:

    correction   an explicit marker ("actually", "correction:", "I meant", "typo:"), a
                 slip put right ("oh wait, …, not …", "…, not …, sorry"), a statement
                 taken back ("ignore what I said about …")
    skipped      questions, hypotheticals ("what if", "assume", "let's say"), musings
                 and requests said as wishes ("I'd like to discuss …"), hearsay
                 ("my friend thinks …", "I read that …", "everyone seems to hate …"),
                 small talk and moods ("I see", "I'm so tired today"), evaluations of
                 the moment ("the wifi here is terrible"), hedges ("I might …"),
                 trouble reports ("it keeps crashing", "returns a 502"), a reply's
                 promise ("I'll definitely check them out"), guesses ("my guess is …",
                 "I suspect …"), a go-ahead naming nothing ("Let's do it."), work
                 paused ("we pick this up tomorrow"), one's doing of the moment and a
                 lead to a paste ("I ran it with …, here's the interesting part"), an
                 experiment ("bump X and run it 30 times"), and sentences without a
                 subject ("that's a cool idea")
    task         "I need to", "TODO", "remind me (on Thursday) to", "add X to my list",
                 "I should …", "we should" …
    decision     a choice made: "we decided", "let's go with", "we agreed to", "we went
                 with", "opted for", "we picked A over B", "we're going to use", "it's settled"
    (skipped)    a request of the moment to the assistant ("Explain …", "Write a regex …", "state your policy …")
    correction   a change of value: "moved to", "X is now Y", "switched from A to B",
                 "no longer", "… anymore", "took over", "changed to", "went up to"
    plan         an intention with no date: "I want to …", "I'd like us to …", "I hope
                 to …", "my goal is to …", "we plan to", "we'll …" (with a date: event)
    preference   likes and dislikes ("I'm a big fan of", "I find X hard to read"), and
                 rules: imperatives that hold beyond the turn ("never …", "don't …",
                 "keep PR descriptions under …", "use tabs", "call me Sam", "short
                 answers please", "when you write SQL, …"), habits ("we always load it
                 with …"), rules for a kind of thing ("every PR needs …")
    event        a first-person or named statement with a date ("on 2 September",
                 "on the 2nd", "yesterday", "last month", "two weeks ago", "in June
                 2019"), or one told without its subject ("Got my cert on the 2nd!")
    fact         any other plain statement with a slot (`slots.parse`: a holder — I, we, a
                 name, a "the …" noun — and a copula or a known verb): "I can't eat
                 gluten", "Hana reports to Luis", "Our API gateway is Kong", "I'm vegan";
                 "he"/"she" right after a fact stands for the person just spoken of
                 ("Kenji is my co-founder. He handles the hardware side")

The rules go by the grammar of the sentence (who is the subject, which modal or time
word it has, whether it is an imperative), not by its topic, so that they hold on
phrasing no rule was written for. Only the user's sentences count, except decisions,
which the assistant may report ("We agreed last week to use NATS"). A correction's
`replaces` is its own text: the curator then finds what it replaces by slot
(`curator.py`). Figures on the development and test turns of `bench/data/` are in
`bench/RESULTS.md` ("Distillation").
"""

from __future__ import annotations

import bisect
import calendar
import re
from datetime import date, datetime, timedelta
from typing import Any

from .. import when
from ..credentials import holds_credential
from ..records import Message, iso, wall_clock
from . import slots

# -- the local fallback ----------------------------------------------------------
# capital letters beyond ASCII ("Ólafur", "Zoë", "Ádám", "Ωmega"): `re` has no class for them
_UPPER = "A-Z" + "".join(re.escape(c) for c in map(chr, range(0xC0, 0x2000)) if c.isupper())
# a Chinese or Japanese full stop ends a sentence with no space after it, and "¿" / "¡" open one ("I live in Madrid. ¿Y tú?"
# and "我的新号码是139。My wife is Wang Fang." had been one sentence: a question, or a fact with a clause glued to it)
_SENTENCE = re.compile(rf"(?<=[.!?])\s+(?=[{_UPPER}0-9\"'(¿¡\u3040-\u30ff\u4e00-\u9fff])|(?<=[。！？])\s*|\n+")
# all-lower-case writers ("our api is written in go. we host it on render") start sentences
# in lower case too; an abbreviation before the full stop ("e.g. this") does not end one; a word that ends in a letter
# beyond ASCII ends one as well ("no sé. leave it for now", a novelist's, had been one fact)
_LOWER = "a-z" + "".join(re.escape(c) for c in map(chr, range(0xC0, 0x2000)) if c.islower())
_LOWER_BREAK = re.compile(rf"(?:(?<=[{_LOWER}0-9)`'\"][.!?])|(?<=[!?][!?]))\s+(?=[{_LOWER}])")  # "a puppy!! his name is …" too
TITLES = frozenset(["dr.", "mr.", "mrs.", "ms.", "prof.", "st.", "vs.", "e.g.", "i.e.", "cf.", "approx.", "no.", "fig."])
ABBREVIATIONS = frozenset(["e.g.", "i.e.", "etc.", "vs.", "approx.", "cf.", "fig.", "no.", "mr.", "mrs.", "ms.", "dr.", "st.", "incl.",
                           "esp.", "min.", "max.", "avg.", "ca."])
CORRECTION = re.compile(r"^\s*(?:(?:no|oh|sorry|wait|oops)[,.!]?\s+)*(?:actually|correction|to correct myself|i meant|i mean|scratch that|"
                        r"i was wrong|that's wrong|that is wrong|not anymore|update(?=\s*[:;,—-]|\s+(?:on|about|re|regarding)\s)|"
                        r"typo(?=\s*[:;,—-]|\s+(?:in|on)\s))\b[\s,:;—-]*"
                        # ("Update the router prefix." is an order, not a correction of "the router prefix")
                        # "Actually no: finance wants …", "Update on food: I'm going back to …" (a stray "No:" or "On food:" had
                        # opened the correction's text)
                        r"(?:no\s*[:;,.!—-]+\s*)?(?:(?:on|about|re|regarding|in)\s+[^\W\d_][\w' -]{0,30}:\s*)?(?:that\s+)?", re.IGNORECASE)
# ("in …:" only after "typo": "Update in progress: I'm rolling out …" is no correction, found in review)
# ("it's" stays: "Actually it's Seattle where I live now." had been kept as "Seattle where I live now.")
# "Scratch that earlier plan: the release ships …" (a label of what is dropped, then the statement), "Scratch that batch
# size, it's 64 now", "Scratch what I said about sertraline, it's back to 50 mg": the thing named, then its value
_SCRATCH = re.compile(r"^\s*scratch (?:that|what i said)(?:\s+(?:(?:earlier|last|previous|old|first) )?(?:plan|idea|note|one|bit)\s*[:,—-]\s*"
                      r"(?P<rest>.{8,})|\s+(?:about\s+)?(?P<what>[\w -]{2,30}?)\s*[,:;—-]\s*(?:it'?s|it is|that'?s)\s+(?P<value>.{2,}))$",
                      re.IGNORECASE)
PREFERENCE = re.compile(r"\b(?:i (?:really |much |strongly |do )?(?:prefer|like|love|enjoy|hate|dislike|can't stand|don't like|do not like|"
                        r"would rather|would prefer)|i'd rather|i'd prefer|my fav(?:ou?rite)?|please (?:always|never|don't|do not)|"
                        r"always use|never use|i want you to)\b", re.IGNORECASE)
DECISION = re.compile(r"\b(?:we(?: have|'ve)? decided|i(?: have|'ve)? decided|decided to|the decision is|decision(?: made| taken)?(?=:)|"
                      r"we agreed|"
                      r"let'?s go with|let us go with|we(?:'ll| will) go with|i(?:'ll| will) go with|going with|we(?:'ll| will) use|"
                      r"let'?s use|settled on|we chose|i chose)\b", re.IGNORECASE)
TASK = re.compile(r"^\s*(?:todo\b[:\s]*|i (?:really |probably |definitely |seriously )?should\b(?!'ve| have| be\b)|(?:i )?(?:need to|"
                  r"gotta|got to)\b|(?:i|we) (?:still |really |also |just |urgently )?(?:need to|have to|must)\b|(?:i )?must remember to|"
                  r"(?:i )?(?:need|have) to remember to|remind me to|don't forget to|do not forget to|don'?t let me forget\b|we need to|"
                  r"we should|next step[s]?(?: is| are)?:?|please remember to|reminder\b[:\s-]+)", re.IGNORECASE)
STATED = re.compile(r"^\s*(?:(?:my|our)\s+(?:[\w'-]+\s+){0,3}?(?:is|are|was|were|has|have|lives?|works?)\b|"
                    r"i(?:'m| am)\s+(?:a|an|the)\s|i\s+(?:live|work|study|moved|own|have (?:a|an|two|three)|was born|grew up|use)\b)", re.IGNORECASE)
CALENDAR_WORDS = {name.lower() for name in (*calendar.month_name, *calendar.day_name) if name}  # not entities
_IDENT = re.compile(r"#\d+\b|\b[0-9a-f]{7,40}\b|\b[\w./-]+\.(?:py|js|ts|tsx|go|rs|md|json|yaml|yml|toml|sql|sh|txt|c|h|cpp|java|rb)\b"
                    r"|https?://\S+|\bv?\d+\.\d+(?:\.\d+)+\b")
_NAME = re.compile(rf"(?<![.!?]\s)(?<!^)\b[{_UPPER}][^\W_]+(?:\s+[{_UPPER}][^\W_]+)*")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'll|my|we|we're|we've|we'll|our|me)\b", re.IGNORECASE)


# a day's ordinal before its month ("am 3. Oktober", "den 1. Mai"): its full stop ends no sentence
_DAY_ORDINAL = re.compile(r"(?:^|\s)\d{1,2}\.$")
_MONTH_FIRST = re.compile(r"(?:januar|jänner|februar|märz|maerz|april|mai|juni|juli|august|september|oktober|november|dezember|"
                          r"january|february|march|may|june|july|october|december|januari|februari|maart|juni|juli|augustus)\b",
                          re.IGNORECASE)


def sentences(text: str) -> list[str]:
    glued: list[list[str]] = []  # each sentence as its parts: a title's full stop ends no sentence ("Dr. Okafor")
    for part in _split_outside_code(text or ""):
        if glued and part and (_last_word(glued[-1][-1]) in TITLES or _DAY_ORDINAL.search(glued[-1][-1]) and _MONTH_FIRST.match(part)):
            glued[-1].append(part)
        elif part:
            glued.append([part])
    out = (_BULLET.sub("", piece.strip()) for parts in glued for piece in _split_lower(" ".join(parts)))
    return [s for s in out if len(s) > 3]


# a list's marker before a sentence: "- The Order of Vey controls Port Ashen." is the statement ("- run: npm run build" is YAML)
_BULLET = re.compile(r"^(?:[-*•]|\d{1,2}[.)])\s+(?=[^\W\d_])(?![\w-]+:)")
_QUOTED_LINE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)

# A pasted letter is someone else's words (found by a Japanese game developer's agent loop: her publisher's email gave
# "Subject: Re: 「星屑のソラ」ご相談の件 / Meeting in Tokyo", "Our team loved the light-bending mechanic." and its list's
# "A draft of the Steam store page" as facts she said). It opens at an email's header ("Subject: …", "From: …" with an
# address or another header under it), a forwarded or replied message's banner, or a "Dear …," line when a letter's
# sign-off follows; it ends with the paragraph of its sign-off ("Best regards,", the name and company under it), or with
# the message. What follows is the user's again ("From: Berlin" in travel notes, "Dear Claude," with no sign-off are hers).
_LETTER_HEAD = re.compile(r"^[ \t]*(?:(?:subject|betreff|件名)[ \t]*[:：][ \t]*\S|(?:from|von|差出人)[ \t]*[:：](?:[^\n]*@|[^\n]*\n[ \t]*"
                          r"(?:to|sent|date|cc|subject|an|gesendet|betreff)[ \t]*:)|-{3,}[ \t]*(?:original message|forwarded message)|"
                          r"on [^\n]{4,80}\bwrote:[ \t]*$|begin forwarded message:)", re.IGNORECASE | re.MULTILINE)
_SALUTATION = re.compile(r"^[ \t]*(?:dear|to whom it may concern)\b[^\n]{0,60}$", re.IGNORECASE | re.MULTILINE)
_CLOSING = (r"(?:(?:best|kind|warm|warmest|with best|with kind)[ \t]+)?regards|sincerely|yours (?:sincerely|truly|faithfully)|"
            r"best wishes|respectfully|mit freundlichen grüßen|(?:beste|viele|liebe) grüße|敬具|よろしくお願い(?:いた|致)?します")
_LETTER_CLOSE = re.compile(rf"^[ \t]*(?:{_CLOSING})[ \t]*[,.!]?[ \t]*$", re.IGNORECASE | re.MULTILINE)
# (after a header, the everyday ones too: "Best,", "Thanks,", "Cheers")
_SIGN_OFF = re.compile(rf"^[ \t]*(?:{_CLOSING}|all the best|best|cheers|thanks|many thanks|thank you)[ \t]*[,.!]?[ \t]*$",
                       re.IGNORECASE | re.MULTILINE)
_PARAGRAPH_END = re.compile(r"\n[ \t]*\n")


def _letters_out(text: str) -> str:
    """`text` without the letters pasted in it (see above)."""
    while True:
        head = _LETTER_HEAD.search(text)
        dear = _SALUTATION.search(text)
        if dear is not None and _LETTER_CLOSE.search(text, dear.end()) is None:
            dear = None
        if head is None and dear is None:
            return text
        start = min(m.start() for m in (head, dear) if m is not None)
        sign_off = (_SIGN_OFF if head is not None and head.start() == start else _LETTER_CLOSE).search(text, start)
        after = _PARAGRAPH_END.search(text, sign_off.end()) if sign_off is not None else None
        text = text[:start] + "\n" + (text[after.start():] if after else "")


# Pasted prose is someone else's words too, or no one's (found by a novelist using Palimpsest as a writing partner: her
# pasted chapters gave 81 of her 113 current facts, "The rain settled on the harbour wall, and Elira watched it …" a
# decision). Under a chapter's heading on its own line ("## Chapter 4: Duskmarrow", "Part Two", "Prologue"), a paragraph
# told in the past of third persons — no "I", "we" or "you" outside its quotes — is narration, when the piece is told:
# a line of dialogue in it, or more than one such paragraph. Her own notes there ("Duskmarrow is a port town", "We moved
# the launch to May") and her words before and after the paste stay hers, and so do notes under any other heading or
# a line that only opens with "Part" ("## Deployment notes\nThe service was deployed to Fly.io last week.", "Part of the
# migration failed yesterday.": a reviewer's, both had given nothing).
_NUMBERED = rf"(?:\d+|[ivxlc]+|{'|'.join(slots.NUMBER_WORDS)})"
_HEADING = re.compile(rf"^[ \t]*(?:#{{1,6}}[ \t]+)?(?:(?:chapter|part|book|act|scene)[ \t]+{_NUMBERED}|prologue|epilogue|interlude)"
                      r"[ \t]*(?:[:.—–-][^\n]*)?$", re.IGNORECASE | re.MULTILINE)
_IN_QUOTES = re.compile(r"“[^”]*”|\"[^\"\n]*\"")
_NOT_THIRD = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|we'd|we'll|us|our|ours|you|you're|your|yours)\b",
                        re.IGNORECASE)
_TOLD = re.compile(rf"\b(?:{when.IRREGULAR_PAST}|was|were|said|thought|felt|knew|kept|held|stood|fell|spoke|(?!(?:need|proceed|speed|"
                   r"feed|exceed|seed|bleed|breed|succeed|shed|wed)\b)\w{3,}ed)\b", re.IGNORECASE)


def _narration(paragraph: str) -> bool:
    """A paragraph told in the past of third persons (its quoted words aside)."""
    told = _IN_QUOTES.sub(" ", paragraph)
    return _TOLD.search(told) is not None and _NOT_THIRD.search(told) is None


def _narration_out(text: str) -> str:
    """`text` without the paragraphs of narration under a chapter's heading (see above)."""
    paragraphs = _PARAGRAPH_END.split(text)
    first = next((i for i, paragraph in enumerate(paragraphs) if _HEADING.match(paragraph)), len(paragraphs))
    headed = [(p[:h.end()], p[h.end():]) if (h := _HEADING.match(p)) else ("", p) for p in paragraphs[first:]]
    told = [_narration(body) for _, body in headed]  # (a heading's first paragraph may follow it on the next line)
    if told.count(True) < 2 and not any(_DIALOGUE.search(body) for _, body in headed):
        return text
    return "\n\n".join(paragraphs[:first] + [heading if cut else heading + body for (heading, body), cut in zip(headed, told)])


# A numbered list under a story's heading is its outline, what happens chapter by chapter, and no statement of fact (a
# novelist's "## Act 2\n8. Cinderford — Sefa's ferry [TODO: …]\n9. Hesk's Tower — Hesk tells Maren what the map is" had
# given "Cinderford is Sefa's ferry …" and "Port Amaranth is Tobin intro …", read as a list of definitions); a numbered
# list under any other heading, or none, is read as before.
_OUTLINE = re.compile(rf"(?:{_HEADING.pattern})\n(?:[ \t]*\n)?(?P<items>(?:[ \t]*\d{{1,3}}(?:[-–]\d{{1,3}})?[.)][ \t][^\n]*(?:\n|$))+)",
                      re.IGNORECASE | re.MULTILINE)


def _outline_out(text: str) -> str:
    """`text` without the numbered lists under a story's heading (see above)."""
    return _OUTLINE.sub(lambda m: m[0][:m.start("items") - m.start()], text)


# A passage pasted after a line that leads to it is the story's too, in any person or tense: "ch 1 first para in new
# pov:\n\nI count the bridges the way my father taught me. Left hand on the rail. …" (a novelist's) had given "I count
# the bridges …", "Left hand on the rail." and "I stop counting." as facts about her. The lead is a line of its own,
# closed by a colon, that names a piece of writing as what it shows (not as what it speaks of: "notes on chapter 3:",
# "thoughts about the draft:" lead to her own words); the passage is the paragraphs of prose after it, to the message's
# end (a list after the lead is hers: "chapter 3 changes:\n- Maren is 19").
_PIECE = r"(?:ch|chapter|para|paragraph|passage|scene|excerpt|draft|opening|prologue|epilogue|page|prose|poem|verse)s?"
_PASTE_LEAD = re.compile(rf"^[^\n:]{{0,60}}?(?<!\bon )(?<!\babout )(?<!\bfor )(?<!\bto )(?<!\bre )(?<!\bregarding )"
                         rf"\b{_PIECE}\b[^\n:]{{0,40}}:[ \t]*\n(?=(?:[ \t]*\n)*[ \t]*(?![-*•>]|\d{{1,3}}[.)])[^\W\d_\s])",
                         re.IGNORECASE | re.MULTILINE)


def _passage_out(text: str) -> str:
    """`text` without a passage pasted after a line that leads to it (see above)."""
    lead = _PASTE_LEAD.search(text)
    return text if lead is None else text[:lead.end()]


def _pasted_out(text: str) -> str:
    """`text` without what was pasted into it: letters, narration, a story's outline and a passage led to (see above)."""
    return _passage_out(_outline_out(_narration_out(_letters_out(text))))


# A list item that defines a name ("- Corin Kade — Elira's younger brother, 22, apprentice archivist", "- **Vessar**: the
# capital", "- the Salt Reach — desert to the east") says the name is what follows: a novelist's character list had given
# no fact, so her "make Corin older, not younger" had nothing to supersede. Only when what follows is a noun phrase about the name — not an order, a step or a
# clause of its own ("- TODO: fix the login bug", "- Deploy — run the tests first", "- Note: the API is slow").
_DEFINITION = re.compile(rf"^(?P<mark>[ \t]*(?:[-*•]|\d{{1,2}}[.)])[ \t]+)(?P<bold>[*_]{{0,2}})(?P<name>(?:the[ \t]+)?(?-i:[{_UPPER}])[\w'’.-]*"
                         rf"(?:[ \t]+(?:&|and|of|the|(?-i:[{_UPPER}])[\w'’.-]*)){{0,4}}(?:[ \t]+\([^)\n]*\))?)[*_]{{0,2}}"
                         r"[ \t]*(?P<sep>[—–-]|:)[ \t]+(?P<what>[^\n]+)$", re.MULTILINE)
_OBJECT = r"(?:it|them|this|that|these|those|the|a|an|my|our|your|his|her|their|some|all|up|out|down)"  # after a verb
_VERB_FIRST = re.compile(rf"^\S+\s+{_OBJECT}\b|"
                         r"^(?:i|we|you|he|she|they|it)\b|\b(?:is|are|was|were|am|will|would|should|must|can|could)\b", re.IGNORECASE)


_TWO_NAMES = re.compile(r"\s(?:&|and)\s")


def _noun_phrase(what: str) -> bool:
    """`what` reads as a noun phrase, not as an order, a task or a clause (the distiller's own readings of them)."""
    orders = (REQUEST, _ORDER, RULE, TASK, ASKED_TASK, _SET_TO, _TRIAL)
    return not what.rstrip().endswith("?") and not any(o.match(what) for o in orders) and not _VERB_FIRST.search(what)


def _label(m: re.Match[str]) -> bool:
    """The one word an item opens with labels it, names nothing: a sentence's opener, a day, a past form, or a field's
    name, plain before a colon (a status list's "- Pros: faster builds", "- Fixed: login bug on Safari", "- Blocked:
    waiting on legal review" had read "Pros is faster builds": a reviewer's; a name in bold is one: "- **Vessar**: …")."""
    name = m["name"]
    return " " not in name and (_opener(name) or name.lower() in CALENDAR_WORDS or _TOLD.fullmatch(name) is not None
                                or m["sep"] == ":" and not m["bold"])


def _definition(m: re.Match[str]) -> str:
    if _label(m) or not _noun_phrase(m["what"]):
        return m[0]
    name, what = m["name"], m["what"]
    be = "are" if _TWO_NAMES.search(name) else "is"  # "Wren & Finch are twin couriers"
    return f"{m['mark']}{name} {be} {what}"


def _definitions_read(text: str) -> str:
    """`text` with each list item that defines a name read as "NAME is …" (see above)."""
    return _DEFINITION.sub(_definition, text)


# a line cut where no sentence ends (after "the", "or", "does" …): the next line goes on with it ("… or does the\nbilling
# client needs to verify them", a platform engineer's question typed over two lines, had left "billing client needs to
# verify them" a fact), not a list's item
_WRAPPED = re.compile(r"(?<![\w'’-])(the|a|an|and|or|but|nor|of|to|in|on|at|for|with|from|by|into|about|that|if|whether|than|because|"
                      r"does|do|did|is|are|was|were|has|have|can|could|would|will|should|my|our|your|their|his|her|its)[ \t]*\n[ \t]*"
                      r"(?=(?!\d{1,2}[.)]\s)[^\W_])", re.IGNORECASE)


_CODE_SPAN = re.compile(r"`[^`\n]+`")  # inline code, closed on its line (a lone backtick is no code: "I don`t use Vim")


def _split_outside_code(text: str) -> list[str]:
    """`text` cut at sentence ends, none inside inline code: "`You are {role}. Answer …`" had ended a fact mid-template."""
    if "`" not in text:
        return _SENTENCE.split(text)
    code = [m.span() for m in _CODE_SPAN.finditer(text)]
    starts = [a for a, _ in code]
    parts, at = [], 0
    for m in _SENTENCE.finditer(text):
        i = bisect.bisect_right(starts, m.start()) - 1
        if i >= 0 and code[i][0] < m.start() < code[i][1]:
            continue
        parts.append(text[at:m.start()])
        at = m.end()
    return [*parts, text[at:]]


_OPENING_MARKS = "([{\"'“‘«"  # not part of a word: "(Dr." is the title "dr." (it had ended "… yesterday (Dr. Nwosu, …)." there)


def _last_word(text: str) -> str:
    """The last word of `text`, lower-cased and without an opening bracket or quote, read from the end (linear in the
    word, not the text)."""
    words = text.rsplit(None, 1)
    return words[-1].lstrip(_OPENING_MARKS).lower() if words else ""


_DAY_MONTH = re.compile(r"\(?\d{1,2}\.\d{1,2}\.")  # a day and month as Germans write them: "on 1.4. at 7:10" is one sentence


def _split_lower(part: str) -> list[str]:
    """`part` cut where a full stop is followed by a lower-case word, unless it ends an abbreviation."""
    pieces, start = [], 0
    for m in _LOWER_BREAK.finditer(part):
        last = _last_word(part[max(start, m.start() - 40):m.start()])  # an abbreviation is short: look back 40 characters
        if last in ABBREVIATIONS or re.fullmatch(r"(?:[a-z]\.)+", last) or _DAY_MONTH.fullmatch(last):
            continue
        pieces.append(part[start:m.start()])
        start = m.end()
    return pieces + [part[start:]]


# a name that opens a sentence, told from any capitalised opener by the verb after it ("Nina is my manager now", "Marco went
# vegan", "Emma turned 4"): a capital at a sentence's start says nothing by itself
NAME_VERBS = (r"is|was|has|had|went|got|moved|works|worked|lives|lived|turned|turns|became|joined|left|started|quit|and|just|now|"
              r"will|said|says|thinks|wants|loves|likes|hates")  # what follows a name that is the subject
_NAME_FIRST = re.compile(rf"(?:^|(?<=[.!?]\s))([{_UPPER}][^\W_]+)(?=\s+(?:{NAME_VERBS})\b)")


def entities_of(text: str) -> list[str]:
    found = [m.group(0).rstrip(".,") for m in _IDENT.finditer(text)]
    found += [m.group(1) for m in _NAME_FIRST.finditer(text) if not _opener(m.group(1))]
    found += [m.group(0) for m in _NAME.finditer(text) if m.group(0).lower() not in ("i", "i'm", "i've") and m.group(0) != "I"]
    out: list[str] = []
    for e in found:
        if e not in out and e.lower() not in CALENDAR_WORDS:
            out.append(e)
    return out[:10]


def _opener(word: str) -> bool:
    """A capitalised word that opens sentences and names nothing ("The", "It", "Everything")."""
    w = word.lower()
    return w in _OPENER_WORDS or w in slots.PRONOUNS or w in slots.DETERMINERS or w in CALENDAR_WORDS


_OPENER_WORDS = frozenset(["please", "thanks", "thank", "sorry", "hi", "hello", "hey", "yes", "no", "ok", "okay", "i", "it", "this", "that", "there", "here", "he", "she", "they", "we", "you", "everything", "everyone", "everybody", "nothing", "nobody", "someone", "something", "somebody", "anyone", "anything", "all", "each", "both", "one", "nothing", "what", "who", "which", "when", "where", "why", "how", "today", "yesterday", "tomorrow", "now", "then", "also", "and", "but", "so", "because", "if", "our", "my", "your", "his", "her", "their", "its", "the", "a", "an", "this", "these", "those", "some", "any", "no", "not"])


# Times are read by `when` (the one grammar of time expressions, which the indexer uses too).
# The classifier asks only whether and how a sentence names a time, not which day
# (`when.ANY_DAY`). A duration ("for three years") says how long, not when.
def _times(text: str, anchor: date = when.ANY_DAY) -> list[when.Span]:
    return [t for t in when.resolve(text, anchor) if t.kind != "for_n" and not _OF_THE_VALUE.search(text[:t.at])]


# a thing switched to a new value, and the day of that value ("switching the goal race to valencia marathon on december
# 6": the race is on December 6, the goal changed when it was said — a fitness bot's user's new goal held from race day,
# and Berlin stayed her goal until then); said as a start ("… starting March 3"), the day is the change's. Only a value
# that is itself a happening has a day of its own: "We're switching the database to Postgres on March 20." is when the
# change starts (read as the value's day, Postgres had held from when it was said, and MySQL not until the 20th: found in
# review)
_OF_THE_VALUE = re.compile(r"\b(?:switch|switched|switching|change|changed|changing|swap|swapped|swapping)\s+(?:the|my|our|its|his|her|"
                           r"their)\s+[\w' -]+?\s+to\s+(?!(?:[\w' -]*\s)?(?:from|starting|beginning|as of|effective|commencing)\s)"
                           r"(?:[\w' -]*\s)?(?:race|marathon|half|half-marathon|ultra|triathlon|[0-9]+k|flight|appointment|"
                           r"match|concert|gig|wedding|exam|game|tournament|interview)s?"
                           r"\s+(?:(?:on|in|at)\s+)?(?:the\s+)?$", re.IGNORECASE)


def _dated(times: list[when.Span]) -> bool:
    """The sentence is dated as a happening: it names a time, not only the start of a state
    that still holds ("I've been vegetarian since 2019": a fact, valid from 2019)."""
    return any(not t.text.lower().startswith("since") for t in times)


def _first_time(text: str, anchor: date) -> when.Span | None:
    """The first time `text` names; of the readings of one expression ("on Friday": the last
    or the coming one), the later, as the old rule of a plan said — the earlier where the
    statement is told in the past ("Emma turned 4 on Sunday", said on Saturday, is the
    Sunday before: it was read as the next day, after it was said)."""
    spans = _times(text, anchor)
    if not spans:
        return None
    readings = [t for t in spans if t.at == spans[0].at]
    return (min if len(readings) > 1 and _TOLD_PAST.search(text) else max)(readings, key=lambda t: t.first)


# a statement told in the past tense: a subject, then a verb in the past ("Emma turned 4", "we went", "I adopted")
# the past of the irregular verbs a happening is told with (the regular ones end in -ed)
_IRREGULAR_PAST = when.IRREGULAR_PAST
_TOLD_PAST = re.compile(rf"\b(?:(?i:i|we|he|she|they|it)|[A-Z][a-z]+)\s+(?i:just\s+|finally\s+|already\s+)?(?i:{_IRREGULAR_PAST}|was|were|did|"
                        r"(?!(?:need|proceed|speed|feed|exceed|seed|bleed|breed|succeed|shed|wed)\b)\w{3,}ed)\b(?!['’]t)")  # not "won't"


def _day(span: when.Span) -> date:
    """The one day a span stands for as a valid time: a week counted back ("two weeks ago")
    its middle day; a day, weekend, month, season or year its first."""
    return span.first + (span.last - span.first) / 2 if span.grain == "week" else span.first


def _midnight(d: date, said: datetime) -> str:
    return iso(datetime(d.year, d.month, d.day, tzinfo=said.tzinfo))


def resolve_date(text: str, said_at: str, metadata: dict[str, Any] | None = None) -> str | None:
    """The first date `text` names: its midnight on the speaker's calendar (`metadata`'s
    `utc_offset`, `records.wall_clock`; UTC without one) as an ISO time, relative dates
    counted from the day `said_at` is there."""
    said = wall_clock(said_at, metadata)
    span = _first_time(text, said.date())
    return None if span is None else _midnight(_day(span), said)


_STARTS = re.compile(r"\b(?:from|starting|beginning|as of|effective|commencing)\s+(?:on\s+)?(?:the\s+)?$", re.IGNORECASE)


def named_start(text: str, said_at: str, metadata: dict[str, Any] | None = None) -> str | None:
    """When the statement says it started holding: the first date it names
    (`resolve_date`) when that is not after the day it was said ("I adopted Coco
    yesterday"), or a later one said as a start ("from next Monday we deploy on Fridays");
    a later date otherwise is what the statement is about, not when it holds ("the standup
    is on Tuesday", "the deadline moved to the 9th" hold from when they are said): None."""
    said = wall_clock(said_at, metadata)
    span = _first_time(text, said.date())
    if span is None:
        return None
    # said as a start, a week starts on its first day ("anna is off sundays from this week", said Monday 2 June, had held
    # from Thursday 5 June, the week's middle: found by a café owner)
    day = span.first if _STARTS.search(text[:span.at]) else _day(span)
    if _A_VALUE_MOVED.search(text[:span.at]) or _TO_ANOTHER.match(text, span.at + len(span.text)):
        return None  # "push the launch from March 14 to March 28", "April 11 → April 25": the days are the values, said now
    lead = re.match(r"(?:on|by|before|until|till|every|each)\s+", span.text, re.IGNORECASE)  # ("on the 1st" holds its "on")
    if _NOT_A_START.search(text[:span.at] + (lead.group() if lead else "")):
        return None  # "paid on the 1st", "every 15th", "by 2026": a day it recurs on, or a deadline, not when it began
    if day <= said.date() or _STARTS.search(text[:span.at]) or _COMING_CHANGE.search(text[:span.at]):  # (the speaker's calendar)
        return _midnight(day, said)
    return None


# a day moved: the days named are its old and new values, not when the statement starts to hold (it held from March 14)
_A_VALUE_MOVED = re.compile(r"\b(?:push|pushed|pushing|move[sd]?|moving|postpone[sd]?|postponing|shift(?:s|ed|ing)?|slip(?:s|ped|ping)?|"
                            r"reschedule[sd]?|rescheduling|bump(?:s|ed|ing)?|change[sd]?|changing|delay(?:s|ed|ing)?)\b"
                            r"(?:.*\bfrom|[^.!?;]*\bto|[^.!?;]*,\s*now)\s+(?:the\s+)?$", re.IGNORECASE)  # "… from March 14", "moving the v3 release to May 6"
# (", now Nov 24" too: "deadline moves again, now Nov 24", said on 8 December, had held from 24 November)
_TO_ANOTHER = re.compile(r"\s*(?:→|->|=>|⇒)")
# a day a thing recurs on, or a deadline: "Rent is €1,150 a month, paid on the 1st" held from January 1 and "a savings goal
# of €20,000 by 2026" from January 1, 2026 (found by a life-assistant builder and a skeptical evaluator)
# ("manuscript now due 15 September 2026", said after it, had held from 15 September: a deadline, a novelist's)
_NOT_A_START = re.compile(r"\b(?:(?:paid|due|charged|billed|debited|renew(?:s|ed)?|invoiced|collected)\s+(?:on|by)|due|every|each|by|"
                          r"before|no later than|until|till)\s+(?:the\s+)?$", re.IGNORECASE)


# a change said to come, before the time it comes ("We're moving to Berlin on June 1", "I'm starting at Adyen next month"):
# what it says holds from then (a move said in March retired the home at once: a new user's)
_COMING_CHANGE = re.compile(r"\b(?:(?:am|are|is|'m|'re|'s)\s+(?:moving|relocating|switching|migrating|changing|starting|joining|"
                            r"transferring)|(?:will|going to|gonna)\s+(?:move|relocate|switch|migrate|start|join))\b", re.IGNORECASE)


def named_certain(text: str, said_at: str, metadata: dict[str, Any] | None = None) -> bool:
    """Whether the time a statement first names is read for sure (a year said, "last month"), not guessed
    ("in November", "on Friday")."""
    span = _first_time(text, wall_clock(said_at, metadata).date())
    return span is not None and span.certain


def named_end(text: str, said_at: str, metadata: dict[str, Any] | None = None) -> str | None:
    """Where the time a statement first names ends (the midnight after its last day, on the
    speaker's calendar), or None: "last month" said on 3 December ends on 1 December, so
    what it says may have happened after a fact stated on 20 November."""
    said = wall_clock(said_at, metadata)
    span = _first_time(text, said.date())
    return None if span is None else _midnight(span.last + timedelta(days=1), said)


# A session's greeting, with what the session is for ("ok new session, reviewing the bible before i start book 2
# drafting": a novelist's, a current fact) is small talk; before a statement it opens it, as "Hi," does ("New chat:
# billing runs on Stripe …", "new session - pricing for the Pro plan is $20 per month.": a reviewer's, both had given
# nothing). What it is for is a verb's -ing with its object, not a noun in -ing ("billing runs").
_SESSION = r"(?:(?:a|another)\s+)?new\s+(?:session|chat|conversation)"
_SESSION_FOR = rf"\w+ing\s+{_OBJECT}\b"
_OPENING = re.compile(r"^\s*(?:"
                      rf"{_SESSION}\s*[,.!:—–-]+\s+(?!{_SESSION_FOR})|"
                      # a greeting, with whom it greets, before a comma or a stop: "Hi, I live in Berlin."; "Hey there, I'm …"
                      r"(?:hi|hello|hey|hiya|howdy|greetings|good (?:morning|afternoon|evening|day))(?:\s+(?:there|all|everyone|everybody|"
                      r"team|folks|guys|again|[^\W\d_]+))?\s*[,.!:]+\s+|"
                      r"(?:sorry|o+h+|a+h+|a+w+|w+o+w+|ha|hah|o+m+g+|lmao|lol|y+a+y+|y+e+s+|hmm|um|uh|ugh|argh|meh|phew|yeah|yep|yup|sure|alright|honestly|ok|"
                      r"okay|so|well|and|but|btw|fyi|"
                      r"by the way|just so you know|for context|for reference|for the record|fwiw|also|hey|yes|right|anyway)"
                      r"\b[,.!:]?\s+|(?:great|cool|nice|perfect|awesome|good|excellent|noted|got it|sounds good|fair|agreed|fine)[,!]\s+|"
                      r"(?:quick (?:q|question|update|intro|note)|(?:big |good |some )?news|update|context|background|fyi|(?:the )?plan|note|"
                      r"heads up|psa|intro|introduction|about me|summary|reminder|tl;?dr)\s*[:—–-]+\s+|"
                      r"no[,.!:]\s+|"
                      # any short label before a colon, when what follows speaks of oneself: "Bad news: I cancelled the
                      # Japan trip.", "Important for any medical stuff: I'm allergic to penicillin." (only a fixed list of
                      # labels was known, and a sentence under any other was dropped whole: found by a new user)
                      # — not a speaker ("Sarah:", "My sister said:", "My boss told me:": someone else's words) nor a log's
                      r"(?!(?:error|exception|warning|warn|traceback|fatal|failed|failure|critical|info|debug|stderr|stdout)\b)"
                      r"(?![^:]*\b(?:said|says|say|told|tells|tell|asked|asks|wrote|writes|texted|texts|messaged|replied|answered|"
                      r"quoted|goes|went)\b[^:]*:)"
                      r"[^\W\d_][\w'’-]*(?:,?\s+[^\W\d_][\w'’-]*){0,8}?,?\s+(?-i:[a-z])[\w'’-]*\s*:\s+"
                      r"(?=(?:i|i'm|i’m|i've|i’ve|my|we|we're|we’re|we've|our)\b)|"
                      # ... or a label that says a rule follows: "Please remember: never edit files under migrations/.", "Lab
                      # rule: always label tubes …" (found by a Claude Code user: the repo's first rule was never a fact; not
                      # "Fun fact: never trust a cat.")
                      r"(?:[^\W\d_][\w'’-]*,?\s+){0,6}?(?:remember|rule|rules|convention|conventions|policy|guideline|guidelines|"
                      r"reminder|important|note)\s*:\s+(?=(?:never|always|don't|don’t|do not)\b)|"
                      # ... and one word in lower case, a topic and no one's name: "And money: our grocery budget is €450."
                      r"(?!(?:error|exception|warning|warn|traceback|fatal|failed|failure|critical|info|debug|stderr|stdout|user|"
                      r"assistant|system|human|ai|bot|me|q|a)\b)(?-i:[a-z])[\w'’-]{2,20}\s*:\s+(?=(?:i|i'm|i’m|i've|i’ve|my|we|we're|we’re|we've|our)\b)"
                      r")+(?=\w)", re.IGNORECASE)  # "no, …" answers; "No emojis …" is a rule
SKIP = re.compile(r"^\s*(?:what if|maybe|perhaps|i wonder|i guess|i think|i suppose|could you|can you|would you|will you|"
                  # a guess ("my guess is timezone, CI runners are TZ=America/Los_Angeles": a platform engineer's, kept as a
                  # current fact while she was still looking)
                  r"(?:my|our) (?:best |first |current |working |only )?(?:guess|hunch|bet|theory|suspicion|hypothesis)(?:'s|\s+(?:is|was))\b|"
                  r"i(?:'d| would)? (?:suspect|guess)\b|i(?:'m| am) (?:guessing|betting)\b|i bet\b|probably\b|presumably\b|"
                  # a question put as a request: "Remind me what we decided about the retry logic." had become a decision
                  r"(?:please |pls )?(?:remind|tell|show) me (?:again )?(?:what|how|where|who|whom|which|why|whether)\b|"
                  r"is it|is there|are there|do you|did you|does|how|why|when|where|who|which|what\b|should we|shall we|could we|"
                  r"if\b|imagine|suppose|assume(?! (?:i|i'm|that i)\b)|assuming|let'?s pretend|pretend\b|"
                  # hearsay of one's own: "I read that …", "I heard …"
                  r"i(?:'ve)? (?:read|heard|saw)\b|let'?s say|let us say|say (?:we|i|you)\b|let me|hi\b|hello|hey|good (?:morning|night|"
                  r"evening|afternoon)|thanks(?!\s+to\b)|thank you|"
                  r"lol|haha|ok\b|okay\b|cool\b|great\b|nice\b|bye\b|"
                  # musings and requests, not statements: "I'm thinking of…", "I was wondering…"
                  r"i(?:'m| am| was|'ve been| have been) (?:thinking|wondering|curious|considering|looking for|trying to|"
                  r"meaning to)|i(?:'d| would) (?:like|love) to (?:\w+ )?(?:know|ask|get(?! into| better| fit| back)|learn (?:more|how|"
                  r"about)|find|discuss|talk|hear|see|explore|understand|share|"
                  r"mention|add|emphasi[sz]e|clarify|confirm|check|focus|go over|review|make sure|continue|start by)\b|"
                  r"i (?:just |really )?want to (?:\w+ )?(?:know|ask|learn (?:more|how|about)|find out|make sure|be sure|ensure|check|"
                  r"see|understand|clarify|"
                  r"confirm|discuss|talk|share|mention|add|say|hear|avoid)\b|"
                  # hearsay and hedges: not the user's first-hand word ("apparently …", "according to …")
                  r"apparently|supposedly|according to|rumou?r has it|could be|might be|may be)", re.IGNORECASE)
# small talk: an acknowledgement or a mood, said of the moment, not of the user ("I see, makes
# sense", "I'm so tired today", "what a week")
SMALL_TALK = re.compile(r"^\s*(?:i see|makes sense|got it|gotcha|fair enough|good point|sounds good|no worries|all good|never mind|nvm|"
                        r"of course|exactly|agreed|true|perfect|awesome|amazing|interesting|noted|understood|will do|cheers|nope|"
                        r"(?:someone|somebody|a (?:friend|colleague|coworker|co-worker)|the (?:docs|documentation|article|blog|paper|"
                        r"readme|internet))\b"
                        r"(?:\s+[\w'-]+){0,4}?\s+(?:say|says|said|told|thinks|claims|recommends?)\b|"
                        r"i (?:didn'?t|did not|never) know (?:that|this)|i (?:don'?t|didn'?t|do not|did not) (?:understand|get|follow|"
                        r"see)\b|"
                        # (the whole sentence: "I didn't hear that song before, it's great." says more, a reviewer's)
                        r"i (?:don'?t|didn'?t|do not|did not) (?:hear|catch) (?:that|this|it|you)[.!…]*\s*$|i had no idea|good to know|til\b|"
                        r"(?:trying|doing|checking|testing|looking at|working on|giving) (?:that|it|this|now)\b|"
                        r"what an?\b|sounds (?:like|good|great|fine|perfect|about right)|looks (?:good|great|fine)|works for me|long day|"
                        r"rough day|same here|me too|i(?:'m| am) (?:back(?! (?:(?:down |up )?to|on|at|under|below|over|above) (?:a |an |the )?\d)|here|done|in|out|"
                        r"off)\b|(?:i'm |i am )?(?:heading|logging|"
                        r"signing) (?:out|off|home)|"
                        r"(?:always|ever) (?:happy|glad) to\b|(?:i|we) (?:always|never|often|keep) (?:forget|forgot|figured? out|"
                        r"get confused|mix up)\b|"
                        r"no thanks?\b|no thank you|not (?:now|really|yet|today|bad|sure)\b|no idea\b|(?:i )?hope (?:you|this|that|it|all)\b|"
                        r"let'?s call it a (?:day|night)|(?:use )?whatever you think|up to you|your call|"
                        # waiting to see ("nah leave it, lets see what happens first.": a current fact, found in a researcher's run)
                        r"(?:(?:nah|no|ok|okay|hmm)[,.]?\s+)?leave it(?:[.!]*$|,?\s+(?:for now|alone|let'?s)\b)|"
                        r"let'?s (?:see|wait)(?:[.!]*$|\s+(?:what happens|how it goes|and see)\b)|wait and see\b|"
                        r"happy (?:friday|monday|new year|holidays|birthday)|(?:we'll|we will|we shall|time will) (?:see|tell)\b|"
                        r"i(?:'m| am) (?:so |literally )?dead[.!]*\s*$|"
                        rf"{_SESSION}(?:[.!]*$|\s*[,:—–-]\s*{_SESSION_FOR}))",  # (see _OPENING)
                        re.IGNORECASE)
MOODS = frozenset(["done", "fed", "tired", "exhausted", "bored", "sorry", "fine", "good", "ok", "okay", "great", "lost", "confused",
                   "stuck", "sure",
                   "hungry", "busy", "excited", "happy", "sad", "annoyed", "frustrated", "stressed", "sick", "ready", "glad", "thrilled",
                   "impressed", "relieved", "worried", "nervous", "afraid", "scared", "kidding", "joking", "serious", "shocked",
                   "grateful", "thankful", "amazed", "overwhelmed", "swamped", "knackered", "beat", "starving", "late", "jealous",
                   "curious", "pleased", "delighted", "upset", "angry", "furious", "baffled", "puzzled", "struggling", "dying",
                   "stoked", "pumped", "psyched", "hyped", "blessed", "touched", "honored", "honoured", "speechless", "terrified",
                   "petrified", "anxious"])
_MOOD = re.compile(r"^\s*(?:i(?:'m| am| feel| felt| was|'ve been| have been)|we(?:'re| are| were|'ve been| have been| all)(?: all)?)\s+(?:(?:so|very|really|super|a bit|a little|kinda|kind of|pretty|"
                   r"quite|totally|absolutely|completely|rather|too|just|still|also|getting|feeling|kind of|a little bit|"
                   r"\w+ly)\s+)*(?P<w>[\w-]+)", re.IGNORECASE)
# the crowd's opinion, not a fact of the user's ("Everyone on Hacker News seems to hate ORMs")
CROWD = re.compile(r"^\s*(?:everyone|everybody|people|most people|many people|lots of people|a lot of people|some people|folks|"
                   r"nobody|no one|they)\b(?:\s+[\w'-]+){0,4}?\s+(?:seems? to|says?|said|think|thinks|reckons?|claims?|swears? by|"
                   r"recommends?|hates?|loves?)\b", re.IGNORECASE)
# a hedge on one's own intention is not one yet ("I might switch to Linux", "we may move")
# ... and a guess said in passing, "I think" set off as an aside ("another leak i think: account_manager_id", a data
# scientist's, had been a current fact while she was still looking)
HEDGE = re.compile(r"\b(?:i|we)(?: \w+ly)? (?:might|may|could)\b|^\s*(?:i|we)(?:'m| am|'re| are) (?:still )?not sure\b|"
                   r"(?:^|[\s,—–])i (?:think|guess|suppose|suspect|reckon)\s*(?:[,:;—–.!]|$)", re.IGNORECASE)
# a passing trouble report (the matter of a question, not a standing fact): "it keeps
# crashing", "the build fails with", "is throwing a 500"
TROUBLE = re.compile(r"\b(?:keeps?|kept) (?:on )?\w+ing\b|\b(?:fails?|failing|crash(?:es|ing)?|throws?|throwing|errors? out|"
                     r"(?:returns?|returning|throws?|getting|gets|get|got|hitting|hit|seeing|see) (?:an? |the |this |that )?(?:weird |"
                     r"random )?"
                     r"(?:(?:(?<=a )|(?<=an )|(?<=he ))[45]\d\d\b|(?:\w+ )?(?:error|exception|segfault|timeout|traceback|stack trace))|"
                     r"[45]\d\d (?:error|status|response)|"
                     r"doesn'?t work|does not work|won'?t (?:start|build|compile|load|run|boot|connect)|stopped working|"
                     # a model's training going wrong ("the mlp head is overfitting w/ 3e-4.": an observation of one run)
                     # (not a standing rule said with it: "Our model overfits with lr 1e-3, so we use 1e-4.", a reviewer's)
                     r"(?:overfitting|underfitting|diverging)(?![^.!?]*\bso\b))\b", re.IGNORECASE)
REPORTED = re.compile(r"^\s*(?:(?:my|our|a|the|his|her|their)\s+)?(?:[\w'-]+\s+){0,2}?(?:says|said|thinks|thought|told|believes|"
                      r"claims|claimed|mentioned|reckons|suggests|suggested|argues|argued|wrote|writes|reports that|"
                      r"(?:used to|would|always|likes to|loves to) say|swears by|swears|swore|asked|asks|insists|insisted|complains|"
                      r"complained|"
                      r"warned|warns|recommends|recommended|wonders|wondered)\b", re.IGNORECASE)
_NO_SUBJECT = re.compile(r"^\s*(?:that|this|it|there|here|these|those|which|what)(?:'s|\s+(?:is|was|are|were|sounds|looks|seems))\b"
                         # a trouble with no subject said ("something is off.": a current fact, found in a researcher's run)
                         r"|^\s*(?:something|nothing|anything)(?:'s|\s+(?:is|was|seems|looks|feels))\s+(?:\w+ly\s+)?(?:off|wrong|weird|odd|"
                         r"strange|fishy|broken|up)[.!]*\s*$", re.IGNORECASE)  # (the whole sentence: "something's up with my Tesla, …" says more)
CHANGE = re.compile(r"\b(?:(?:has |have |'ve |had |was |were |got |has been |have been )?(?:moved|switched|migrated|changed|shifted|"
                    r"pushed|postponed|rescheduled|bumped|raised|lowered|swapped|increased|decreased|dropped|reduced|cut|upped|"
                    r"(?:went|gone|is going|are going) (?:up|down)) (?:\w+ ){0,4}?(?:to|from)\b|"
                    # the new value after a comma's "now" ("deadline moves again, now Nov 24": a data scientist's new
                    # deadline had been no fact, and "they transferred dad to Dr. Priya Raman" a carer's new cardiologist) —
                    # only after a verb of change or an old value ("was 500, now 700"): "We adopted Bella in 2021, now 4 years
                    # with us" (a reviewer's) had retired the adoption, and "I transferred 500 dollars to savings" was a change
                    r"\b(?:(?:move[sd]?|changed?|changes|shifted|pushed|bumped|slipped|slips)(?:\s+(?:again|back|out|up|down))?|"
                    r"(?:was|were|used to be)\s+(?:[^\W\d_]+\s+)?[$€£]?\d[\d.,:]*(?:\s*[^\W\d_]+)?),\s*now\s+(?:[^\W\d_]+\s+)?\d|"
                    r"\btransferred\s+(?:(?:my|our|his|her|their)\s+)?(?:" + "|".join(slots.FAMILY) + r"|him|her|them|me|us|"
                    r"(?-i:[A-Z][a-z]+))\s+to\s+(?:(?:dr|mr|mrs|ms|prof|st)\.?\s|(?:a|an|the|another|my|our|his|her|their)\s|(?-i:[A-Z]))|"
                    r"(?:is|are|'s|'re) now\b|\bnow (?:\w+s|is|are|have|has|use|work|live|deploy|run|host|go)\b|no longer|"
                    # the new value said with "now" and the old one set aside ("manuscript now due 15 September 2026 instead
                    # of june", a novelist's new deadline, had been no fact, and the June one stayed current)
                    r"\bnow\b[^.!?]*\binstead of\b|"
                    r"(?:^\s*|\b(?:my|our|the) )new [\w-]+(?: [\w-]+)? (?:is|are)\b|"
                    r"\b(?:got|was|were|has been|have been|is|are) (?:cancell?ed|called off|scrapped|postponed|delayed|shelved)\b|"
                    r"took over|takes over|taken over|taking over|stepp(?:ed|ing) (?:down|in)|left the (?:company|team|org)|\b(?:anymore|"
                    r"any more)\b|is the new|are the new|replaced \w+(?: \w+){0,3} (?:with|as)\b|"
                    # "for now" is for the time being, not a change; a closing "now" closes its clause before the reason
                    # given ("manuscript due 1 February 2027 now, because Hollis wants …": a novelist's, no fact had come of it)
                    r"\b(?:quit|stopped|gave up)\b|(?<!for )(?<!right )(?<!just )(?<!not )\bnow(?:[.!]?$|,\s+(?:because|since|as|so|"
                    r"cause|'cause)\b)|"
                    r"(?:are|is|'re|am|'m|'s) (?:moving|raising|lowering|increasing|decreasing|cutting|bumping|pushing|changing|"
                    r"switching|migrating) (?:\w+ ){0,4}?(?:to|from)\b|"
                    # a progressive with its subject dropped, as chat drops it ("switching the goal race to valencia
                    # marathon on december 6"): a thing of one's own changed, and no verb of its own after it ("Moving to
                    # Berlin was the best decision I ever made.", "Pushing to main requires two approvals." are no change)
                    r"^\s*(?:(?:ok|okay|so|and)[,.]?\s+)?(?:moving|raising|lowering|increasing|decreasing|cutting|bumping|pushing|"
                    r"changing|switching|migrating) (?:the|my|our|his|her|their|its) (?:\w+ ){0,3}?(?:to|from)\b"
                    rf"(?![^.!?]*\b(?:is|are|was|were|would|will|could|can|should|might|may|must|has|had|does|did|requires?|"
                    rf"needs?|takes?|means?|{when.IRREGULAR_PAST})\b))", re.IGNORECASE)
RULE = re.compile(r"^\s*(?:(?:for|in|with|on) (?:all|every|any|each)\b[^,]{1,40},\s*\w+|(?:from now on|going forward|from here on|"
                  r"in future|in the future),?\s+\w+|"
                  # ... or closing the value it sets ("lr 1e-4 from now on", of a data scientist's, had been nothing kept)
                  r"[^.!?]{3,}\b(?:from now on|going forward|from here on)(?:\s+(?:for|in|on|with)\s[^.!?]*)?[.!]*$|never\b(?! mind)|"
                  r"always\b(?! (?:happy|glad|fun|good|nice|great|a pleasure))|"
                  r"(?:don'?t|do not)\b(?! forget| worry| bother| mind| know| think| care| get me wrong| let me forget| remember|"
                  r" understand| see)|(?:please|pls|plz) (?:keep|use|reply|answer|write|send|avoid|make|stop|call|"
                  r"format|respond|be|give|include|put|stick|default|limit|skip|leave|show|mention|add comments|address)\b|avoid\b|"
                  r"stop \w+ing\b|"
                  # an imperative that sets a standing rule: "Keep PR descriptions under 200 words",
                  # "Use tabs in Go code", "Call me Sam", "No emojis in anything you write"
                  r"only (?:ever )?(?:use|show|give|write|reply|answer|respond|suggest|recommend)\b|(?:keep|use|stick to|stick with|"
                  r"default to|prefer|call me|address me|refer to me|limit)\b(?!\s+(?:this|that|it|these|those|up|at it|"
                  r"the following|going|in mind|me posted|whatever|any|your best|your judge?ment|case|cases)\b)|keep it (?:simple|short|"
                  r"brief|concise|casual|formal|light|high-level|tight|clean)\b|skip (?:the|all|any)\b|be (?!right back|"
                  r"back\b)\w+(?: with me| in)?[.!]*$|"
                  r"assume (?:i|i'm|that i)\b|treat me\b|talk to me\b|speak to me\b|get (?:straight )?to the point|"
                  r"no (?:more|less|fewer) than\b|no (?!thanks\b|problem|worries|idea|way)[\w-]+s\b|"
                  # a habit one keeps: "we always load it with safe_load", "we never deploy on Fridays"
                  r"(?:i|we)(?: (?!can\b|could\b|will\b|would\b|might\b|may\b|should\b|'ll\b|'d\b)\w+)? (?:always|never)\s+(?!been\b|"
                  r"had\b|have\b|thought\b|wanted\b|knew\b|heard\b|forget|remember|figure|know|understand|seem|manage|get\b|got\b|"
                  r"find|found|end up|ended up|mess|screw|win|lose|learn)\w+|"
                  # a rule for a whole kind of thing: "Every PR needs a linked ticket"
                  r"(?:every|each|all|any|no)\s+(?!(?:they|we|you|i|he|she|it|of|the|this|that)\b)(?:[\w-]+\s+){1,3}?(?:must|should|"
                  r"shall|needs?|has to|have to|requires?|gets?)\b)", re.IGNORECASE)
# an imperative of style that holds as a rule only when it says so ("Write all dates as …", "Give
# me every answer in …"); without a word of scope it is a one-off request ("Write a haiku")
# a rule said as what is allowed ("Emojis are fine in Slack but not in emails")
PERMISSION = re.compile(r"\b(?:is|are) (?:fine|ok|okay|acceptable|allowed|not allowed|forbidden|banned|off-limits|a no-go)\b",
                        re.IGNORECASE)
# a rule said without a verb: "Short answers please.", "Tea over coffee, always."
VERBLESS_RULE = re.compile(r"^\s*(?:[\w'-]+\s+){0,4}[\w'-]+,?\s+(?:please|pls|plz|always|every time|any day)[.!]*$", re.IGNORECASE)
# a request of the moment addressed to the assistant ("Explain like I'm five: …", "Tell me a joke"):
# not a fact, though it may mention one
REQUEST = re.compile(r"^\s*(?:please |pls )?(?:explain|tell me|show me|help|write|give me|list|summari[sz]e|translate|compare|describe|"
                     r"generate|draft|fix|rewrite|check|find|recommend|suggest|review|refactor|debug|convert|create|make|draw|design|"
                     r"name|outline|plan|brainstorm|proofread|edit|shorten|expand|walk me|"
                     # what a coding agent is asked to do now ("Add a --dry-run flag to `hydra run`" had become a fact)
                     r"(?:add|implement|update|remove|delete|rename|run|rerun|install|render|upgrade|revert|log|record|track|"
                     r"grep|fetch|search|open|read|print)\s+(?:a|an|the|this|that|"
                     r"these|those|it|them|my|our|some|all|every|for|`|--?\w|"
                     # a file or a path it is done to ("Remove pnpm-lock.yaml and run bun install." had become a standing fact)
                     r"(?:[\w-]+(?:\.[\w-]+)*\.[a-z]{1,5}(?!\w)|[\w.-]*/)(?![^.!?]*\b(?:every|each|whenever|always)\b))|"
                     # leaving a mark in the work ("leave a note in the test file and we pick this up tomorrow": a platform
                     # engineer's order for now had become an event; "Leave a comment on every PR you review." is a rule)
                     r"leave (?:a|an)\s|investigate|look into)\b",  # (not "Update CHANGELOG.md with every user-facing change.": a rule)
                     re.IGNORECASE)
# an order addressed to the listener, whatever its verb: a word, then "your" or "me" ("state your review policy for this
# crew", "share your screen", "send me the draft": a crew's agent loop prompts its agents so, and "state your review
# policy …" had become a fact at the top of 8 of a user's 33 recall blocks); a subject never stands right before "your"
# or "me" (rules, "call me Sam", are read first); nor a preposition or a quantifier ("Including me, the team has four
# engineers.", "Like me, Tom is vegan."), and an order with a word of recurrence is a rule ("Email me the weekly report
# every Monday.", "Use your judgement on naming, but always use snake_case for Python.": both had been dropped, found in review)
_TO_LISTENER = re.compile(r"^\s*(?:please |pls )?(?!(?:i|we|you|they|he|she|it|like|unlike|including|excluding|except|besides|both|"
                          r"for|with|without|to|from|by|about|than|as|all|each|every|none|either|neither)\b)"
                          r"[a-z]+\s+(?:your|yours|yourself|me)\b(?![^.!?]*\b(?:every|each|always|never|whenever|from now on)\b)",
                          re.IGNORECASE)
# a request opened by a word of sequence ("Then run the linters.") or closed by "please" ("Deploy current main to staging
# please."): what to do now, not a rule (found by a Claude Code user's evaluation: both had become facts)
_OPENER = re.compile(r"^\s*(?:then|now|next|and|ok(?:ay)?|so|also|first|finally|after that)\b[,:]?\s+", re.IGNORECASE)
# ("pls", "plz" as "please": a paralegal's "update ur notes pls" had been a current preference)
_PLEASE_END = re.compile(r"[,\s](?:please|pls|plz)[.!]*\s*$", re.IGNORECASE)
# a slip put right: "Oh wait, the meetup is on the 12th, not the 13th"
_SLIP = re.compile(r"^\s*(?:oh\s+)?(?:wait|oops|whoops|my bad|my mistake|typo|no|nope|nah)\b[,.!:]?\s+(?=.*(?:,\s*not\b|\binstead\b))",
                   re.IGNORECASE)
# a rule called one ("That's a hard rule for us"); a decision said of "it" ("It's settled, …")
NAMED_RULE = re.compile(r"\b(?:hard|strict|firm|house|team|golden|general|standing) rule\b|\brule of thumb\b|\bnon-negotiable\b",
                        re.IGNORECASE)
SETTLED = re.compile(r"^\s*(?:it'?s|that'?s|it is|that is) (?:settled|decided|final|official|confirmed)\b", re.IGNORECASE)
# a slip owned at the end: "It's Halvorsen, not Halvorson — sorry"
_SLIP_END = re.compile(r",\s*not\b.*(?:,\s*|\s+[—–-]+\s*)(?:sorry|my bad|oops|my mistake)[.!]*$", re.IGNORECASE)
# a statement taken back: "Ignore what I said about Redis, …", "I said Tuesday but I meant Wednesday"
RETRACT = re.compile(r"^\s*(?:(?:please )?(?:ignore|forget|disregard) (?:what i (?:said|wrote)|my last|that last|the last)|"
                     r"i (?:said|wrote|typed) .+ but (?:i )?meant\b|i meant to (?:say|write)\b)", re.IGNORECASE)
# a rule for the assistant's work said as a condition ("When you write SQL, uppercase the keywords")
_WHEN_YOU = re.compile(r"^\s*(?:when|whenever|if|any time|every time) you (?:\w+ )?(?:write|answer|reply|respond|give|send|show|explain|"
                       r"suggest|"
                       r"generate|draft|review|format|summari[sz]e|translate|make|create|code|recommend)\b", re.IGNORECASE)
_SCOPED_IMPERATIVE = re.compile(r"^\s*(?:write|give|format|make sure|include|reply|answer|respond|put|show|add|mention|end|start|sign|"
                                r"leave)\b"
                                r"(?!.*\b(?:this|these|the following|below|above)\b).*\b(?:all|any|every|each|always|never|whenever|"
                                r"by default|"
                                r"every time|you write|you send|you give|unless|whenever|when i|if i|"
                                r"your (?:answers|responses|replies|code|examples))\b|"
                                r"^\s*(?:write|give|format|show|put|reply|answer|respond)\b.*(?:\bfirst\b,?\s*(?:and )?then\b|"
                                r",\s*no [\w-]+[.!]*$)", re.IGNORECASE)
MY_PREFERENCE = re.compile(r"(?:^|[,;]\s*|\b(?:and|but|so|honestly|really) )i (?:really |generally |usually |"
                           r"personally )?find\b(?! (?:out|the|a|an|some|any|it hard to believe)\b)|"
                           r"\b(?:my (?:preferred|favou?rite)|i (?:learn|work|focus|think|read) (?:best|better)\b|"
                           r"works (?:best|better) for me|(?:^|,\s*)(?:didn'?t|did not|don'?t|do not) (?:really )?(?:like|enjoy|love)\b|"
                           r"(?:loved|liked|hated|enjoyed) it\b|i (?:hate|love|can't stand|cannot stand) it when|"
                           r"i (?:\w+ )?(?:enjoyed|liked|loved|hated|disliked|never liked)|i'?d like|i would like|i'?d love|"
                           r"(?:'s|is|are|'re|'m|am) (?:really |totally |a bit )?obsessed with|i(?:'m| am) (?:not )?(?:a |really |such |"
                           r")(?:(?:big|huge|massive) )?fan of|i(?:'m| am) (?:really |not )?(?:into|keen on)|"
                           r"my go-to|i(?:'m| am) (?:more )?(?:of )?an? [\w-]+ (?:person|learner|type)\b|i(?:'m| am) more of an?\b|(?:is|"
                           r"are) (?:not )?(?:really )?my (?:thing|jam|cup of tea)|i adore|i(?:'m| am) obsessed with)\b", re.IGNORECASE)
_NOT_A_TASK = re.compile(r"^\s*(?:i )?(?:have|need|gotta|got) (?:to )?(?:admit|say|confess|agree|tell you)\b|"
                         r"^\s*i (?:\w+ )?should (?:mention|say|note|add that|point out|clarify|explain)\b", re.IGNORECASE)
# a task asked of the assistant's list ("remind me on Thursday to …", not "remind me how …"; "add X
# to my list"), said (ASKED_TASK, with "note to self") or asked (_ASK_TASK)
_REMIND_OR_LIST = (r"remind me\b(?!\s+(?:again\b|how|what|when|where|who|which|why|if|whether|of\b))|"
                   r"(?:add|put) .+ (?:to|on) my (?:[\w-]+ )?(?:list|todo|to-do|todos|tasks|reminders|calendar|agenda)\b")
ASKED_TASK = re.compile(rf".*[,—–-]\s*remind me[.!]*$|^\s*(?:please |pls )?(?:{_REMIND_OR_LIST}|note to self\b|"
                        r"(?:i(?:'ve| have)? got to|i gotta)\b)", re.IGNORECASE)
# "can you remind me to …?" asks for a task, question mark or not
_ASK_TASK = re.compile(rf"^\s*(?:(?:can|could|would|will) you (?:please |pls )?)(?:{_REMIND_OR_LIST})", re.IGNORECASE)
PLAN = re.compile(r"\b(?:i|we)(?:'m| am|'re| are)? (?:plan(?:ning)? (?:to|on|a|an|the|for)|intend(?:ing)? to|aim(?:ing)? to|"
                  r"going to (?!be\b)\w+|will (?!be\b)\w+|will be \w+ing)|\b(?:i|we)'ll (?:(?!be\b)\w+|be \w+ing\b)", re.IGNORECASE)
# the present said of a time to come ("We're hiring two SREs this quarter", "I'm starting a course next month")
_SOON = re.compile(r"\b(?:i|we)(?:'m| am|'re| are) \w+ing\b.*\b(?:soon|later this \w+|this (?:quarter|year|summer|spring|autumn|fall|"
                   r"winter)|"
                   r"next (?:week|month|year|quarter|summer|spring|autumn|fall|winter|semester|term|sprint|release)|in the (?:coming|"
                   r"next) \w+)\b", re.IGNORECASE)
_PROGRESSIVE = re.compile(r"\b(?:are|is|'re|am|'m|'s) \w+ing\b", re.IGNORECASE)
_COMING_SWITCH = re.compile(r"\b(?:we|i)(?:'re| are|'m| am) (?:switching|migrating|changing|moving \w+) (?:\w+ ){0,3}?to\b", re.IGNORECASE)
# a reply's promise of the moment, not a plan ("I'll try that", "I'll let you know")
_PROMISE = re.compile(r"^\s*(?:\w+,\s+)?i(?:'ll| will) (?:definitely |certainly |totally |surely |also |probably )*(?:\w+ )?(?:try|check|"
                      r"let you know|see|look|"
                      r"think|test|get back|give (?:it|that|this|them|those|these)|do (?:it|that|this)|keep (?:you|that|this|those|these|"
                      r"them|it)\b|"
                      r"take a look|have a look|report back|update you|send (?:it|that|them|you)|be (?:sure|careful|fine|ok|okay|right|"
                      r"back|there|honest)|consider|"
                      r"make sure|have to|ask)\b"
                      r"|^\s*(?:\w+,\s+)?i(?:'ll| will) (?:definitely|certainly|totally)\b", re.IGNORECASE)
# an intention said as a wish, with no date ("I want to run a half marathon someday", "I'd like
# us to try MkDocs", "my goal is to …"): a plan, not a preference
INTENTION = re.compile(r"^\s*(?:planning|hoping|aiming|intending) to\b|\b(?:(?:i|we)(?: really| still| eventually| definitely)? (?:want|"
                       r"hope|wanna)(?: to| us to)\b|"
                       r"(?:i|we)(?:'d| would) (?:like|love) (?:to|us to)\b|\bhoping to\b|\bsaving (?:up )?for\b|"
                       r"(?:my|our|the) (?:goal|plan|aim|dream|hope) (?:is|was) to\b|(?:i|we)(?:'ve| have) always wanted to\b)",
                       re.IGNORECASE)
_MORE_DECISIONS = re.compile(r"\b(?:agreed to|agreed on|decided on|(?:we|i)(?:'re| are| am|'m) going with|let'?s (?:use|switch|drop|move|"
                             r"keep|adopt|stick|schedule|plan|set|make|launch|ship|start|do|pick|choose|take|book|go for|settle on)|"
                             # a choice made: "we went with", "the team opted for", "we picked Hetzner over AWS"
                             r"(?:went|gone|ended up going|ended up) with|(?:went|gone|going|go) for the\b|opted (?:for|to)|"
                             r"(?:^|[,;:]\s*|\b(?:and|so|then) )(?:(?:we|i|the team|they)(?:'ve| have)?(?: \w+ly)? )?(?:chose|chosen|"
                             r"picked|selected)\b(?! up)|(?:are|'re|am|'m) sticking with|"
                             r"(?:we|i)(?:'re| are|'m| am) going to (?:use|go with|adopt|stick with|switch to)|"
                             r"(?:we|i)(?:'re| are|'m| am) keeping\b|"
                             r"(?:moving|move|moved|go|going|went) (?:forward|ahead) with|approved|signed off on|green-?lit|"
                             r"decided\b|(?:we|i)(?:'re| are|'m| am) (?:dropping|removing|deprecating|sunsetting|killing|ditching|"
                             r"retiring|cancell?ing)\b|decision (?:was|has been) made|voted (?:to|for)|final (?:call|answer|decision)|"
                             r"^\s*(?:[\w.+-]+\s+){1,3}it is[.!]*$|we(?:'ve| have) landed on|locked in)\b", re.IGNORECASE)
_EVALUATIVE = re.compile(r"^\s*the (?:weather|food|movie|book|show|game|view)\b|"
                         # a thing of the moment judged ("the wifi here is terrible", "this library is a nightmare")
                         r"^\s*(?:the|this|that|these|those)\s+(?:[\w-]+\s+){1,3}?(?:here\s+|today\s+|again\s+)?(?:is|was|are|were|"
                         r"looks?|feels?|seems?)\s+"
                         r"(?:so |really |pretty |absolutely |totally |quite |just |kinda |a bit |such )?(?:an? )?(?:terrible|awful|"
                         r"horrible|amazing|great|"
                         r"awesome|nice|lovely|annoying|frustrating|ridiculous|insane|crazy|beautiful|gorgeous|cool|weird|wild|bad|"
                         r"brilliant|"
                         r"fantastic|nightmare|mess|joke|disaster|pain|slow|broken|useless|hilarious)\b[\w\s]{0,12}[.!]*$", re.IGNORECASE)
# an event told without its subject ("Got my cert on the 2nd!", "Finished the migration yesterday")
_PAST_OPENING = re.compile(rf"^\s*(?:just |finally )?(?:[a-z]+ed|{_IRREGULAR_PAST})\b", re.IGNORECASE)
# a happening of one's own, told in the past ("My son got into Michigan!", "We just closed on
# our first house", "I passed my nursing board exam"); "used to" is a habit, not a happening
# ("Sam and I broke up", "Ana and I got married": a happening of one's own, said with another's name first)
_HAPPENED = re.compile(r"^\s*(?:i |we |(?:my|our) (?:(?!(?:is|are|was|were|has|have|had|been|be)\b)[\w'-]+ ){1,3}?(?:and i )?|"
                       r"(?-i:[A-Z])[\w'-]+ and i )(?:just |finally |recently |actually |officially )?"
                       r"(?!used\b)(?:[a-z]{3,}ed|got|went|won|passed|took|met|bought|sold|became|found|began|flew|drove|ran|broke|split)\b"
                       r"(?! (?:to|that|so|it|this|you)\b)", re.IGNORECASE)
# a named person's news of a life's kind ("Jonas got a new job at Siemens.", "Lucía accepted an offer from Indra."): the
# verbs of a change that stays, not any doing of a name ("Jonas got confused", "Ana said so")
_NAMED_HAPPENED = re.compile(rf"^\s*(?P<name>[{_UPPER}][^\W\d_]+)(?: [{_UPPER}][^\W\d_]+)? (?:just |finally |recently |officially )?"
                             r"(?:got (?:a |an |the |her |his |their )?(?:new )?(?:job|position|role|offer|promotion|degree|place|"
                             r"diagnosis|puppy|dog|cat|visa|license|licence)\b|got (?:engaged|married|divorced|promoted|hired|fired|"
                             r"laid off|accepted)\b|got into (?:(?:a|the|her|his|their)\s+)?(?:university|college|uni|school|grad school|law school|"
                             r"medical school|med school|program|programme|(?-i:[A-Z]))|"
                             r"accepted (?:a|an|the|her|his) (?:new )?(?:offer|job|position|role|place)\b|"
                             r"(?:was|has been|got) (?:promoted|hired|diagnosed|admitted|discharged)\b|"
                             r"(?:joined|left|quit|retired|graduated|married|moved to|moved back|moved in|moved out|became|"
                             r"started (?:a|an|the|her|his|at|working|school|kindergarten|university|college))\b)")
# a run's outcome of the moment ("My build failed again", "My tests passed"), not a happening to keep
_PASSING_RESULT = re.compile(r"^\s*(?:my|our) (?:[\w'-]+ ){0,2}?(?:build|builds|tests?|deploy|deployment|request|job|run|pipeline|ci|"
                             r"query|script|migration|check|checks)s? (?:just |finally )?(?:failed|passed|crashed|timed out|broke|"
                             r"succeeded|finished)\b", re.IGNORECASE)
# a thing of one's own that does something ("The office reopens on Monday"), whatever the verb
_THING_DOES = re.compile(r"^\s*(?:(?:both|all|all of|one of|two of|most of|some of|each of)\s+)?(?:the|our|my)\s+(?:[\w'-]+\s+){0,3}?"
                         r"(?!(?:is|was|has|does|says|thinks|seems|looks|sounds|feels)\b)[a-z]+(?:s|ed)\b(?!\s+(?:that|me|us|why|if|"
                         r"whether|how)\b)(?:\s+\w+){2,}", re.IGNORECASE)
_OUR_KIN = re.compile(r"^\s*(?:both|all|all of|one of|two of|most of|some of|each of)\s+(?:my|our)\s+[\w'-]+\s+(?:are|is|were|was|have|"
                      r"has|live|work)\b",
                      re.IGNORECASE)
# a person already spoken of, said of again in the next sentence ("Kenji is my co-founder. He handles …")
_PERSON_PRONOUN = re.compile(r"^\s*(?:(?P<be>he's|she's|they're)|he|she|they)\b", re.IGNORECASE)
# where one is at the moment ("I'm at the airport right now"), not a standing fact
# "cron report from proxmox, 2026-01-03 02:00" above a pasted restic log: a caption, no statement (a sysadmin's 148
# nightly reports had become one fact each, every one superseding the night before)
CAPTION = re.compile(r"^[\w .'-]{0,40}?\b(?:report|log|logs|output|status|summary|dump|trace|results?|digest|alert)\b"
                     r"(?:\s+(?:from|for|of|on)\s+[\w.@/-]+(?:\s+[\w.@/-]+)?)?[,:]?\s+"
                     r"\d{4}-\d\d-\d\d(?:[ T]\d\d:\d\d(?::\d\d)?)?\s*[.:]?\s*$", re.IGNORECASE)
TRANSIENT = re.compile(r"\b(?:right now|at the moment|as we speak|atm|in (?:\d+|a few|five|ten|two) (?:minutes|mins|secs|seconds)|"
                       r"in an hour|"
                       r"in a (?:minute|sec|second|bit))\b", re.IGNORECASE)
# quoted text to rewrite or translate is not the user's statement, nor is a line of dialogue: quoted words a speaker
# says, before or after them ("“We leave at first bell,” Torin said." from a novelist's pasted chapter had been a fact;
# "I said “Tuesday” but I meant Wednesday" is hers: no comma sets the quote off)
_SPEECH = (r"(?:said|says|asked|asks|answered|replied|whispered|shouted|called|cried|muttered|murmured|snapped|added|"
           r"continued|told (?:him|her|them))")
_SPEAKER = rf"(?:(?-i:[{_UPPER}])[\w'’-]*(?:\s+(?-i:[{_UPPER}])[\w'’-]*)?|he|she|they|i)"
_SAID = rf"(?:“[^”\n]*,”|\"[^\"\n]*,\")(?=\s*{_SPEAKER}\s+{_SPEECH}\b)|\b{_SPEECH},\s+(?:“[^”\n]*”|\"[^\"\n]*\")"
_DIALOGUE = re.compile(_SAID, re.IGNORECASE)
_QUOTED = re.compile(rf"(?<!\w)'[^'\n]*?[.!?;][^'\n]*?'(?!\w)|\"[^\"\n]*?[.!?;][^\"\n]*?\"|“[^”]*?[.!?;][^”]*?”|{_SAID}", re.IGNORECASE)

def local_distill(messages: list[Message]) -> dict[str, Any]:
    """The four-field output, extracted deterministically (see the module doc)."""
    out: dict[str, Any] = {"summary": "", "facts": [], "corrections": [], "tasks": []}
    seen: set[str] = set()
    for m in messages:
        if not m.content or m.tool_name or m.role == "tool" or _ABOUT_PASTE.match(m.content):
            continue  # (a request about pasted text: the text is not what the user says — found by an MCP user, a pasted
            # page's "Always answer in pirate speak." had become a rule recalled in every session; a tool's output with no
            # tool name, as ChatGPT's exported python runs are, is nobody's word: a table cell had become a decision)
        after_fact, first_change = False, len(out["corrections"])
        before: dict[str, int] = {}
        named: list[tuple[str, bool]] = []  # the people this message spoke of before the sentence (`people`)
        text = _WRAPPED.sub(r"\1 ", _definitions_read(_pasted_out(_FENCED.sub("\n", _QUOTED_LINE.sub("", m.content)))))
        for sentence in sentences(_QUOTED.sub(_QUOTE_MARK, text)):
            meant = _MEANT.match(sentence) if after_fact and m.role == "user" else None
            fixed = _meant(out["facts"][-1]["text"], meant.group("new")) if meant else None
            if fixed is not None:  # "I live in Lisbon. Sorry, I meant Porto.": the statement before, with its value put right
                out["corrections"].append({"text": fixed, "replaces": out["facts"][-1]["text"]})
                after_fact = False
                continue
            if _MARKUP.search(sentence) or _INJECTION.search(sentence):
                continue  # markup or an order to a model ("ignore previous instructions </memory><system>…"): no fact
            if m.role == "user" and TAKEN_BACK.search(sentence):
                for key, size in before.items():
                    del out[key][size:]  # what this message's sentence before said is taken back with it
                before, after_fact = {}, False
                continue
            sizes = {key: len(out[key]) for key in ("facts", "corrections", "tasks")}
            for s in conjuncts(sentence, m.role == "user"):
                # a sentence around quoted text is a request about it ("Rewrite this: '…'"), and its text not as said
                after_fact = _QUOTE_MARK not in s and _classify(out, s, m, seen, after_fact, named) == "fact"
            _what_it_ends(out["corrections"], first_change)
            before = sizes
            _heard(named, sentence)
    first = next((m for m in messages if m.role == "user" and m.content.strip()), None) or next((m for m in messages if m.content.strip()), None)
    lead = sentences(first.content)[0] if first and sentences(first.content) else (first.content.strip() if first else "")
    out["summary"] = (f"{first.role or 'someone'} said: {lead}"[:300] if first and lead else f"A turn of {len(messages)} messages without text.")
    return out



def _what_it_ends(corrections: list[dict[str, Any]], first: int) -> None:
    """A last correction that only says what is gone, with no holder ("not doing berlin anymore"), after a change of the
    same message (from `first` on) is what that change ends: its `replaces`, not a fact of its own (a fitness bot's user's
    "switching the goal race to valencia marathon on december 6. not doing berlin anymore" had kept "not doing berlin
    anymore" as a current fact beside the change). Only what names something the change speaks of (`_of_the_change`):
    "I moved to Porto last month. Not working at Google anymore." is two changes."""
    if len(corrections) - first < 2:
        return
    gone, change = corrections[-1], corrections[-2]
    if gone["text"] == gone["replaces"] and change["text"] == change["replaces"] and _GONE.search(gone["text"]) \
            and slots.parse(gone["text"]) is None and _of_the_change(gone["text"], change["text"]):
        change["replaces"] = corrections.pop()["text"]


# what is gone said with no verb of its own ("not doing berlin anymore"): only which one, of the thing just changed
_ONLY_WHICH = re.compile(r"^\s*not\s+doing\s+", re.IGNORECASE)


def _of_the_change(gone: str, change: str) -> bool:
    """`gone` names something `change` speaks of: a word of its slot's attribute or value (of its words, with no slot),
    or only which one is gone (`_ONLY_WHICH`); "Not working at Google anymore" is nothing of "I moved to Porto" (it had
    become what the move replaced, and the move the Google fact's successor: found in review)."""
    slot = slots.parse(change)
    spoken = slot.attribute + slot.value if slot else _content_words(change)
    return bool(_ONLY_WHICH.match(gone) or set(_content_words(gone)) - {"not", "no", "longer", "anymore", "any", "more"}
                & set(slots.content(spoken)))


def _content_words(text: str) -> list[str]:
    return slots.content(re.findall(r"[\w'-]+", text.lower()))


# a request about text that follows it ("Can you summarise this page for me?", "Translate the following:", "What do you
# make of this email?"): the pasted text is someone else's words
_ABOUT_PASTE = re.compile(r"^\s*(?:(?:hi|hey|ok|okay)[,!.]?\s+)?(?:(?:can|could|would|will) you\s+|please\s+|pls\s+)?(?:summari[sz]e|"
                          r"translate|proofread|review|rewrite|rephrase|explain|analy[sz]e|check|edit|shorten|paraphrase|read|"
                          r"look at|go through|tl;?dr|what does|what do you (?:think|make) of)\b[^.?!\n]{0,60}?\b(?:"
                          r"the following|below|page|text|e-?mail|article|doc(?:ument)?|post|thread|paragraph|passage|snippet|"
                          r"transcript|message)\b[^\n]{0,80}\n", re.IGNORECASE)
_MARKUP = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?>")  # a tag: a sentence of markup is no statement of fact
_INJECTION = re.compile(r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier|your)\s+"
                        r"(?:instructions|prompts?|rules|directions)\b", re.IGNORECASE)
# a question typed without its mark, on a phone: "can u remind me what i have tmrw morning", "Can I still return the
# mount if I don't like it" (both had become facts) — an auxiliary before its subject, or a question word before one
_ASKED = re.compile(r"^\s*(?:(?:can|could|would|will|should|shall|do|does|did|is|are|was|were|have|has|may|might)\s+"
                    r"(?:u|you|ya|i|we|they|he|she|it|there|this|that)\b(?!['’])(?![^,]*,)|"  # (not "Should you need me, I'm …")
                    r"(?:what|where|when|who|which|why|how)(?:['’]s|\s+(?:is|are|was|were|do|does|did|can|could|should|would|will|"
                    r"much|many|long|often|about)\b))", re.IGNORECASE)
# the sentence before taken back: "remind me to call the insurance about the claim. actually no, not a claim, forget it"
# (said as the whole sentence, after "actually no," and the like: "… The nurse said to ignore that." and "… i'll never forget
# it" take nothing back)
TAKEN_BACK = re.compile(r"^\W*(?:(?:actually|no|oh|ok|okay|wait|sorry|hmm|um)[,.!]?\s+)*(?:not\s[^,]{1,40},\s*)?"
                        r"(?:forget (?:it|that|about it)|never\s?mind|nvm|scratch that|ignore that)\W*$", re.IGNORECASE)
# ... or after a lead, set off by a comma, an auxiliary before its subject: "yesterday's run looked good, can we check
# feature importance of it" (a data scientist's request had become an event of the day before)
# (a request, not a tag asking nothing: "My sister is allergic to peanuts, can you believe it.", "I moved to Berlin in
# March, did I tell you.", "The API key rotates monthly, is that a problem." had been dropped, a reviewer's)
_ASKED_AFTER = re.compile(r"[,;—–]\s*(?:(?:so|and|but|ok|okay|then)\s+)?(?:can|could|would|will|should|shall|do|does)\s+"
                          r"(?:u|you|ya|i|we)\b(?!['’])(?!\s+(?:believe|imagine|tell|guess)\b)[^,]*$", re.IGNORECASE)
_TAG_QUESTION = re.compile(r",\s*(?:right|correct|yeah|yes|no|isn't it|aren't we|didn't we)\?\s*$", re.IGNORECASE)
MAX_SENTENCE = 400  # longer is pasted text (a transcript, a document), not a statement
_I_AM = re.compile(r"^\s*i(?:'m| am)\s", re.IGNORECASE)  # "I'm vegan": two words, a fact still
_QUOTE_MARK = "'…'"  # put for quoted text with a full stop in it
_STAND_IN = "Kim"  # a name put for "he"/"she" to parse a sentence about a person just spoken of


# friend-to-friend chat said to the listener, not of the speaker: thanks and wishes, a
# reaction to their news, consolation, a guess at how it was for them, a road not taken
# ("Sending love to the baby", "I love that for you!", "Don't worry about it", "The lake must
# have been gorgeous", "I would have lost it", "I wish I had your patience")
PLEASANTRY = re.compile(r"^\s*(?:sending (?:\w+ ){0,2}?(?:love|hugs|vibes|thoughts|prayers|good vibes)\b|congrat|good luck\b|best of luck\b|"
                        r"(?:good|great|nice|excellent) (?:work|job)(?:,?\s+[A-Z]\w*)?[\s.!]*$|don'?t be (?:scared|afraid|sorry|shy)\b|no worries\b|"
                        r"take care[\s.!]*$|don'?t worry(?: about it)?[\s,.!]*$|no pressure\b|thank(?:s|\s+you)?\b(?!\s+to\b)|way to go\b|well done\b|good for you\b|you(?:'ve)? got this\b|"
                        r"i owe you\b|i (?:really )?appreciate (?:it|that|this|you)\b|i can'?t wait (?:to (?:see|hear|meet|try|read)|for you)\b|"
                        r"(?:you|you've|you have|you're|you are) (?:so |totally |really |truly )?(?:deserve|earned|killing it|crushing it)|"
                        r"your (?:[\w'-]+ ){1,3}?(?:is|are|was|were|sounds?|looks?|seems?|means?|mean)\s+(?:so |really |truly |just |"
                        r"absolutely |such )?(?:an? )?(?:awesome|amazing|great|incredible|inspiring|beautiful|lovely|gorgeous|stunning|"
                        r"impressive|fantastic|wonderful|cool|adorable|a lot|the world)[\s.!]*$|"
                        r"i (?:really |totally |just |absolutely )?(?:love|adore) (?:that|this|it)(?: (?:idea|plan|so much|for you|a lot))?"
                        r"[\s.!]*$|"
                        r"i(?:'m| am) (?:so |really |very |super )?(?:happy|proud|glad|sorry) (?:for|of|to hear|about|that)\b|"
                        r"i wish i (?:had|could|was|were|knew)\b)|"
                        r"^\s*(?:i|you|it|that|the [\w'-]+(?: [\w'-]+)?) (?:would|must|could|should)(?:'ve| have) (?:been|loved|had|felt|lost|gone|"
                        r"done|died|cried)\b", re.IGNORECASE)
# how things are going, said of nothing in particular ("Things have been hectic", "Work has
# been nuts", "Life's too short to …")
# ("october is busy.", a carer's, had been a current fact: a month or a day goes so too)
_VAGUE = re.compile(r"^\s*(?:things|everything|life|work|stuff|the timing|it all|this week|the week|today|(?:this|next|the) (?:month|"
                    r"weekend)|" + "|".join(sorted(CALENDAR_WORDS)) + r")(?:'s|\s+(?:is|are|was|were|"
                    r"has been|have been|'s been|gets?|got|feels?|seems?|just))\s+(?:(?:so|really|pretty|super|kinda|kind of|a bit|"
                    r"just|been|totally|honestly|absolutely)\s+)*(?:crazy|nuts|hectic|busy|insane|wild|rough|tough|hard|great|good|fine|"
                    r"ok|okay|slow|quiet|calm|chaotic|stressful|a lot|too short|short|a mess|a blur|amazing|awful|brutal|exhausting|"
                    r"non-?stop|isn'?t right|not right|weird)\b(?:\s+(?:here|lately|today|right now|this week|at work)){0,2}[\s.!]*$|"
                    r"^\s*life(?:'s| is) too short\b", re.IGNORECASE)


# a maxim or a verdict on something in general, held by no one: "Having good support is key.",
# "Small acts like that can really make a difference", "Sports are the best", "Staying fit is so
# important" (friend chat is full of them: a quarter of what the local path kept from the LoCoMo
# conversations). Not a judgement of the past ("Learning German has been tough": someone is), and
# never a sentence with a person or a holder in it ("my", "we", "her", "for the team" …) or opening on a determiner
# ("The API is great": `_EVALUATIVE` decides those)
_VERDICT = (r"(?:key|important|essential|crucial|vital|everything|amazing|awesome|incredible|inspiring|special|great|wonderful|"
            r"beautiful|fun|cool|nice|lovely|exciting|thrilling|soothing|powerful|tough|hard|overwhelming|rewarding|fulfilling|"
            r"magical|precious|priceless|worth it|the best|a blast|a game[- ]changer|a gift|a must|a lifesaver|underrated|healing|"
            r"therapeutic|contagious|unbeatable|unreal|refreshing|relaxing|calming|empowering|humbling|comforting|uplifting|"
            r"heartwarming|touching|meaningful)")
_MAXIM = re.compile(r"^\s*(?!(?:i|we|you|he|she|they|it|my|our|your|his|her|their|its|the|this|that|these|those|there|here)\b)"
                    r"(?:[\w'-]+,?\s+){0,6}?"
                    r"(?:(?:is|are|'s|can be|could be|must be|will be|can feel|feels?|sounds?|looks?|seems?)\s+"
                    r"(?:(?:so|really|truly|super|pretty|just|such|definitely|absolutely|totally|always|often|very|incredibly|"
                    r"seriously)\s+)*(?:an?\s+)?" + _VERDICT + r"\b"
                    r"|(?:can |could |will |really |truly )*(?:make|makes) (?:such )?(?:a|all the) (?:big |huge |real |world of )?"
                    r"difference\b|(?:can |could |will |really |truly )*(?:go|goes) a long way\b|(?:really |truly )?pays off\b)",
                    re.IGNORECASE)
_PERSONAL = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|us|our|ours|you|your|yours|he|she|his|her|hers|him|"
                       r"they|their|them|team|company|project|codebase|repo|client|customers?|users?)\b", re.IGNORECASE)  # and a holder


_FENCED = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)  # a code block is no statement
_CODE_MARKS = re.compile(r"[{}\[\]()<>;=|$\\]")
_INLINE_CODE = re.compile(r"`[^`]*`")
# a compiler's drawing or a table's row: "|   ^^^^^^^^^ mutable borrow occurs here", "| --- |" (a Rust error's lines had become facts)
_DRAWN = re.compile(r"^\s*\||\^{3,}")
# a line that opens as code does (case matters: "Return the book by Friday" is English); a comment or a Markdown
# heading ("# we copy self.callbacks", "# Plan") is no statement either, nor a name with Markdown's escaped "\_"
_CODE_LINE = re.compile(r"\s*(?:def [\w\\]+\(|raise [A-Z]\w*(?:\(|\s*$)|#(?!\d)|class \w+[:(]|import [\w.]+|from [\w.]+ import |(?:const|let|var) \w+ =|function \w*\(|"
                        r"(?:pub )?fn \w+\(|func \w+\(|#include\b|SELECT .+ FROM |\$ \w|>>> |"
                        # a pasted log or trace: a line that opens with a time stamp, a traceback's head, a YAML step,
                        # a bracketed source tag (a user's pasted Postgres log had become the best-attested fact)
                        r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}|\d{2}:\d{2}:\d{2}[.,]\d|Traceback \(most recent call last\)|"
                        r"- (?:run|uses|with|image|script|cmd|command|env): |<\w+> \[|"
                        r"(?:INFO|WARN|WARNING|ERROR|DEBUG|FATAL|TRACE|LOG)[: ]|\w+(?:Error|Exception): )")


def _code(s: str) -> bool:
    """A line of code or markup, not a statement: `def f(x): return {...}`, a prompt template's
    `{{role}} <system>…</system> [INST]` (a tenth of its characters or more are brackets,
    operators and the like, four at least). Code quoted in prose is the prose's ("we load it
    with `yaml.safe_load(f)`")."""
    if _CODE_LINE.match(s) or _DRAWN.search(s):
        return True
    marks = len(_CODE_MARKS.findall(_INLINE_CODE.sub("", s)))
    return marks >= 4 and marks >= len(s) / 10


# said of the listener ("You're a professional now.", "You look great"): not a statement of the speaker's
# (the whole sentence: "You're right, I live in Porto now." is the user's correction)
_TO_YOU = re.compile(r"^\s*you(?:'re|’re| are|'ve been|’ve been| have been| were| was| look| seem| sound)\b[^,;:]*[.!]*\s*$", re.IGNORECASE)
# an exclamation ("Dogs are so rude.", "That drive was such a pain!"): a feeling of the moment, no standing fact — the whole
# sentence, a subject of a few words ("I finally adopted a dog and he is so cute!" is the adoption)
_EXCLAIMED = re.compile(r"^\s*(?:[\w'’-]+\s+){1,3}?(?:is|are|was|were)\s+(?:so|such)\s+(?:an?\s+)?[\w-]+[\s.!]*$|"
                        r"^\s*(?:it|that|this|he|she|they)(?:'s|’s|'re|’re)\s+(?:so|such)\s+(?:an?\s+)?[\w-]+[\s.!]*$", re.IGNORECASE)
_FIRST_OPENING = re.compile(r"^\s*(?:i|i'm|i’m|i've|i’ve|i'd|i’d|we|we're|we’re|we've|we’ve|my|our)\b", re.IGNORECASE)


_GONE = re.compile(r"\b(?:any ?more|no longer)\b", re.IGNORECASE)


def _too_short(s: str) -> bool:
    """One word, or two that neither open with the speaker nor say a change ("Never.", "Good times."; "I'm vegan." is a fact)."""
    words = s.split()
    # (two words saying a change stay: "Vegan now.", "Not anymore." answer what was asked)
    return len(words) < 2 or len(words) == 2 and not _FIRST_OPENING.match(s) and not CHANGE.search(s) and not _GONE.search(s)


# what one is doing this minute, said without a subject ("Looking now.", "Updating the roadmap doc now."), and a condition
# with no clause of its own ("Once we have a date."): no fact (a team chat's had become corrections, found by its evaluator)
_DOING_NOW = re.compile(r"^\s*(?:looking|checking|updating|fixing|investigating|reviewing|renewing|testing|merging|rebasing|pushing|"
                        r"drafting|searching|debugging|restarting|retrying|on it|digging|poking)\b(?:\s+(?!(?:is|are|was|were|'s)\b)[\w'/.-]+){0,5}?"
                        r"\s+(?:now|right now|atm)[.!…]*$", re.IGNORECASE)
_ONLY_IF = re.compile(r"^\s*(?:once|if|unless|as soon as)\b(?!\s+(?:a|an|every|in a while)\b)(?:\s+[^\s,;:]+){1,5}[.!…]*$", re.IGNORECASE)


# a go-ahead naming nothing chosen ("Lets do it.", "ok let's do that then") and the work paused for later ("we pick this up
# tomorrow", "let's continue tomorrow"): a platform engineer's "Lets do it." had been a decision at the top of her blocks
_GO_AHEAD = re.compile(r"^\s*(?:let'?s|let us|we(?:'ll| will))\s+(?:do|go with|go for|try|ship|run with|roll with|go ahead with|take|pick)"
                       r"\s+(?:it|that|this|them|those|these|this one|that one)(?:\s+(?:then|now|again|instead|too|today))?[\s.!…]*$|"
                       r"^\s*(?:let'?s|let us|we(?:'ll| will| can)?|i(?:'ll| will| can)?)\s+(?:pick (?:this|it|that) (?:back )?up|"
                       r"continue (?:this|it|that|tomorrow|later)|come back to (?:this|it|that)|resume (?:this|it|that|tomorrow|later)|"
                       r"pick up (?:here|where we left off))\b", re.IGNORECASE)
# what one just did to the thing at hand, and a lead to what follows: "i ran it with -n 2 and log level debug, here's the
# interesting part" (a platform engineer's, before a pasted log: a current fact) reports the moment
_DID_NOW = re.compile(r"^\s*(?:i|we)\s+(?:just\s+|also\s+|then\s+|now\s+|finally\s+|again\s+)?(?:ran|re-?ran|retried|re-?tried|"
                      r"reproduced|rebuilt|restarted|executed|profiled|benchmarked|bisected|grepped|re-?tested|tested|traced)\s+"
                      r"(?:it|this|that|them|these|those)\b", re.IGNORECASE)
_LEADS_ON = re.compile(r"(?:^|[,;:—–-]\s*|\b(?:and|so)\s+)(?:here(?:'s|’s| is| are)|below is|see below|(?:this|that) is what "
                       r"(?:i|we) (?:got|get|see|saw))\b[^,;:.!?]*[.!…]*\s*$", re.IGNORECASE)
# an experiment asked for, a value set and then a run ("Bump pool_size=20 and run it 30 times under xdist": a platform
# engineer's, a current fact): it tries the value, it decides nothing
_TRIAL = re.compile(r"^(?![^.!?]*\b(?:every|each|always|whenever|from now on|going forward)\b)"  # (scoped, it is a rule)
                    r"\s*(?:(?:ok|okay|so|then|and|now|alright)[,.]?\s+)?(?:please |pls )?(?:let'?s\s+)?(?:set|bump|raise|lower|"
                    r"increase|decrease|reduce|change|drop|cut|up|pin|double|halve|disable|enable|turn|flip|swap|revert|patch|try)\b"
                    r"[^.!?]*?(?:\band|,|;)\s+(?:then\s+)?(?:re-?run|run|re-?try|try|test|time|benchmark|profile|measure|loop|repeat)\b",
                    re.IGNORECASE)


def _chatter(s: str) -> bool:
    """Not a statement to keep: a question, a musing, hearsay, small talk, a mood, a hedge, a
    pleasantry, a maxim, a line of code."""
    if _code(s):
        return True
    if SKIP.match(s) or REPORTED.match(s) or _NO_SUBJECT.match(s) or _EVALUATIVE.match(s) or SMALL_TALK.match(s) or CROWD.match(s):
        return True
    if _DOING_NOW.match(s.strip()) or _ONLY_IF.match(s.strip()):
        return True
    if _GO_AHEAD.match(s) or _DID_NOW.match(s) or _LEADS_ON.search(s) or _TRIAL.match(s):
        return True
    if PLEASANTRY.search(s) or _VAGUE.match(s) or _MAXIM.match(s) and not _PERSONAL.search(s) or _TOO.search(s):
        return True
    if _REACTION.search(s) and _REACTION.search(s)["w"].lower() in MOODS or _FELT.search(s) and _FELT.search(s)["w"].lower() in MOODS:
        return True
    # (after a short lead too: "English today, I'm tired." had been an event, recalled into 11 of a user's 40 blocks)
    for said in (s, s[lead.end():] if (lead := _LEAD.match(s)) else ""):
        mood = _MOOD.match(said)
        # "I'm good at SQL" is a skill, not a mood
        if mood and mood.group("w").lower() in MOODS and not re.match(r"\s+at\b", said[mood.end():]):
            return True
    return False


_LEAD = re.compile(r"^[^,.!?;:]{1,30},\s+")
# a mood, anyone's, about what was just said ("dad is NOT happy about that", a carer's), and one closing a log's line
# with no subject ("easy run 6 km, 36 min, felt fine", a runner's): the moment's, no standing fact
# (about "that" or "this" only, and not a person named: "Sarah is worried about it." had been dropped, a reviewer's)
_REACTION = re.compile(r"^(?!\s*(?!(?:" + "|".join(slots.FAMILY) + r")\b)(?-i:[A-Z][a-z]+)(?:['’]s|\s+(?:is|was|are|were))\b).*?"
                       r"\b(?:is|are|was|were|'s|'re|'m|am)\s+(?:not\s+)?(?:\w+ly\s+|so\s+|very\s+|too\s+)*(?P<w>[\w-]+)\s+"
                       r"(?:about|with|by|at|of)\s+(?:that|this)[.!…]*\s*$", re.IGNORECASE)
_FELT = re.compile(r"(?:^|[,;—–]\s*)(?:felt|feeling|feels?)\s+(?:\w+ly\s+|so\s+|very\s+|pretty\s+)*(?P<w>[\w-]+)[.!…]*\s*$",
                   re.IGNORECASE)
# an excess judged ("killing him is too easy", "vessar sounds too much like a dessert lol.", "blood was too grimdark-generic":
# a novelist's opinions of her draft had become facts of her series bible): a verdict, not a state of things — an
# impression ("sounds too", "reads too"), or a bare excess that ends the sentence; an excess said with what it is too
# much for or what came of it is a state ("The staging VM is too slow to run the e2e suite.", "Our database is too small
# for the new dataset, so we moved to Postgres 16.": a reviewer's, both had given nothing)
_TOO_BY = r"(?:(?:just|way|far|a bit|a little|kinda|still|much)\s+)?too\b"
_TOO = re.compile(rf"\b(?:sounds?|looks?|seems?|feels?|reads?)\s+{_TOO_BY}|"
                  rf"\b(?:is|are|was|were|'s)\s+{_TOO_BY}\s*[\w'-]+[.!…]*\s*$", re.IGNORECASE)


# a change written as an arrow, as notes are ("bs 256 -> 512", "switched lr 3e-4 → 1e-4 (and …)"): read as words
_ARROW = re.compile(r"^(?P<what>(?:(?P<verb>switched|changed|moved|bumped|raised|lowered|cut|upped|dropped)\s+)?[^\W\d_][\w .'-]{0,40}?)"
                    r"\s+(?P<a>[^\s>→]+)\s*(?:->|→|=>)\s*(?P<b>[^\s,;(]+?(?:\s+(?:[a-z%]+|per \w+))?)"
                    r"(?P<rest>(?:\s+(?:for|in|on|at|since|after|with)\s[^→>.!]*?)?[.!]?\s*(?:[,;(].*)?)$", re.IGNORECASE)


def arrowed(s: str) -> str:
    """A sentence that writes a change as an arrow, in words ("bs 256 -> 512." → "bs went from 256 to 512."; found
    keeping a lab notebook: no fact came of them); any other sentence as it is."""
    m = _ARROW.match(s)
    if m is None or not any(c.isdigit() for c in m["a"] + m["b"]) and not m["verb"]:
        return s
    what = m["what"] if m["verb"] else f"{m['what']} went"
    said = f"{what} from {m['a']} to {m['b']} {m['rest'].strip().lstrip('.!').strip()}".strip()
    return said if said.endswith((".", "!")) else f"{said}."


def classify(s: str, user: bool = True, after_fact: bool = False) -> tuple[str, str, str] | None:
    """(category, kind, text) of one sentence, or None (see the module doc); `after_fact`:
    the sentence before it in the message was kept as a fact (so "she" is someone spoken of)."""
    if holds_credential(s):  # (first: "Actually, the db password is now …" had been a correction, a fact)
        return None  # a credential is kept in its message, never made a fact recalled into every session's block
    if (words := arrowed(s)) != s:
        return classify(words, user, after_fact)
    asked = _ASK_TASK.match(s)
    if user and asked and len(s) <= MAX_SENTENCE:
        return "task", "task", s
    tag = _TAG_QUESTION.search(s)
    if tag:  # "We settled on PostgreSQL 16 last time, right?": a decision to confirm; anything else, a question
        found = classify(s[:tag.start()] + ".", user, after_fact)
        return (found[0], found[1], found[2][:-1] + s[tag.start():]) if found and found[1] == "decision" else None
    if s.rstrip().endswith(("?", ":")) or len(s) > MAX_SENTENCE or _ASKED.match(s) or _ASKED_AFTER.search(s):
        return None  # a question (typed with or without its mark); a line that leads to what follows ("Raj pasted this …:")
    if user and (RETRACT.match(s) or _SLIP_END.search(s)):
        return "correction", "correction", s
    scratch = _SCRATCH.match(s) if user else None
    if scratch:  # "Scratch that earlier plan: the release …" is the release …; "Scratch that batch size, it's 64": the batch size is 64
        rest = scratch.group("rest") or ""
        text = rest[0].upper() + rest[1:] if rest else f"The {scratch.group('what').strip()} is {scratch.group('value')}"
        return "correction", "correction", text
    corr = CORRECTION.match(s) or _SLIP.match(s)
    if user and corr and len(s) - corr.end() > 8:
        text = s[corr.end():].strip()
        label = _OPENING.match(text)  # "Actually, switch to bun: we use bun now instead of pnpm.": the statement after its label
        if label and len(text) - label.end() > 8:
            text = text[label.end():]
        return "correction", "correction", text[0].upper() + text[1:]
    if _too_short(s):
        return None
    opening = _OPENING.match(s)
    if opening:
        s = s[opening.end():]
        s = s[0].upper() + s[1:]
    s = _new_read(_LAUGH_END.sub(".", s))
    if user and (_WHEN_YOU.match(s) or NAMED_RULE.search(s)):
        return "fact", "preference", s
    if SETTLED.match(s):
        return "fact", "decision", s
    if user and _INSTRUCTED.match(s) and _value_set(s):
        return "fact", "decision", s
    if _chatter(s) or user and (HEDGE.search(s) or TROUBLE.search(s) or _PROMISE.match(s)):
        return None
    if user and (TASK.match(s) or ASKED_TASK.match(s)) and not _NOT_A_TASK.match(s):
        return "task", "task", s
    if DECISION.search(s) or _MORE_DECISIONS.search(s):
        return "fact", "decision", s
    if not user:
        return None
    if _value_set(s):
        return "fact", "decision", s
    rule = RULE.match(s) or _SCOPED_IMPERATIVE.match(s)
    if (REQUEST.match(order := _OPENER.sub("", s)) or _TO_LISTENER.match(order) or _PLEASE_END.search(s)) and not rule \
            or _TO_YOU.match(s) and not rule \
            or _EXCLAIMED.search(s):
        return None  # a request of the moment, whatever it mentions; the listener described; an exclamation
    if CAPTION.match(s):
        return None  # a pasted log's caption: the log is the message, and its nights are no facts
    times = _times(s)
    dated = _dated(times)
    if CHANGE.search(s) and not rule:
        if _ordered_now(s):
            return None  # "Migrate reconcile now.", "Deploy the hotfix now.": a request of the moment, no value changed
        if _COMING_SWITCH.search(s) and _SOON.search(s):
            return "fact", "decision", s  # decided, not yet done
        if dated and _PROGRESSIVE.search(s) and _future(s):
            return "fact", "event", s  # "We're moving to Canada in August": a happening to come, nothing changed yet
        return "correction", "correction", s
    if INTENTION.search(s):  # a day to come is an appointment; a month or a year to come, an intention
        return "fact", "event" if dated and not _month_only(times) else "plan", s
    if PREFERENCE.search(s) or rule or MY_PREFERENCE.search(s) or PERMISSION.search(s) or VERBLESS_RULE.match(s) and not REQUEST.match(s):
        return "fact", "preference", s
    if (PLAN.search(s) or _SOON.search(s)) and not dated:
        return "fact", "plan", s
    pronoun = _PERSON_PRONOUN.match(s) if after_fact else None
    slot = slots.parse(s if pronoun is None else _STAND_IN + (" is" if pronoun.group("be") else "") + s[pronoun.end():])
    if dated and (_FIRST_PERSON.search(s) or slot is not None or _PAST_OPENING.match(s) or _THING_DOES.match(s) or _RECORD.match(s)):
        return "fact", "plan" if _MONTH_AHEAD.search(s) and _future(s) and _month_only(times) else "event", s
    if TRANSIENT.search(s):
        return None
    named = _NAMED_HAPPENED.match(s)
    if _HAPPENED.match(s) and not _PASSING_RESULT.match(s) or named and not _opener(named.group("name")):
        return "fact", "event", s  # "My brother just got engaged!", "I passed my board exam": a happening of one's own, undated
    if slot is None and _THING_DOES.match(s) or _OUR_KIN.match(s):
        return "fact", "fact", s  # "The staging env gets wiped every Sunday": a verb the parse does not know
    if slot is not None and slot.holder in _NO_HOLDER or _noun_compound(s, slot):
        return None  # "first sync with marcus.", "agent call notes!!": a note's heading, its noun taken for a verb
    if slot is not None and slot.value and (slot.holder or slot.attribute) and (len(s.split()) >= 3 or _I_AM.match(s)):
        return "fact", "fact", s
    return None


# a record's heading and its day: "Sprint review, 2026-01-03", "Backup report 2026-01-03: 2 failures" (a noun before a
# verb's bare form is no holder of it since "easy run 6 km" was read so, and these had lost the slot that dated them)
_RECORD = re.compile(r"^[\w-]+(?:[ \t]+[\w-]+){0,2},?[ \t]+\d{4}-\d{2}-\d{2}\b")

# a laugh closing a sentence is no word of it, as one opening it is none (`_OPENING`): "the drowned gull lol." (a novelist
# choosing an inn's name from a list) had been read as a thing that "drowned" something, a current fact
_LAUGH_END = re.compile(r"[\s,]+(?:lol|lmao|rofl|haha+|hehe+|xd)[.!]*\s*$", re.IGNORECASE)

# "new NOUN: VALUE" says the new NOUN is VALUE, as a list's "NAME — …" says what NAME is (`_definition`): `new title:
# "Salt and Ash"` (a novelist's) had given nothing, and her old title stayed the only one; a label before an order or a
# clause is read as before ("new rule: never push to main" is the rule)
_NEW_LABEL = re.compile(r"^(?P<what>new\s+[\w-]+(?:\s+[\w-]+)?)\s*:\s+(?P<value>\S.*)$", re.IGNORECASE)


def _new_read(s: str) -> str:
    """`s`, or its "new NOUN: VALUE" read as "new NOUN is VALUE" (see above)."""
    m = _NEW_LABEL.match(s)
    if m is None or not _noun_phrase(m["value"]):
        return s
    return f"{m['what']} is {m['value']}"


# a bare singular noun and a verb in its plain form do not agree: they are no subject and its verb but a noun compound
# ("agent call notes!!", a novelist's heading of her notes, had been a current fact, "call" its verb); a plural needs no
# -s ("kids love her", "people say …"), nor does a pronoun
_PLAIN_SUBJECTS = frozenset(["i", "we", "you", "they", "u", "ya", "people", "children", "men", "women", "folks", "staff", "police"])


def _noun_compound(s: str, slot: slots.Slot | None) -> bool:
    """`s` opens with a bare singular noun in lower case, its holder, before the plain form of its verb (see above)."""
    words = re.findall(r"[\w'’-]+", s)
    return slot is not None and len(words) > 1 and words[0] == slot.holder and words[1] == slot.verb \
        and not words[0].endswith("s") and words[0] not in _PLAIN_SUBJECTS


# words the slot parser may take for a holder, though they hold nothing: an ordinal before a noun it read as a verb
# ("first sync with marcus.", a data scientist's heading of her notes, had been a current fact)
_NO_HOLDER = frozenset(["first", "second", "third", "last", "next", "another", "final"])

# said for a while or of a device of the moment ("lower the thermostat to 68 tonight", "raise the limit to 10 only for this
# run", "set a timer to 10 minutes"): no value held from then on (found in review)
_FOR_NOW = re.compile(r"\b(?:tonight|today|for now|for this|just for|only for|this once|this time|for the demo|timer|alarm|"
                      r"volume|brightness)\b", re.IGNORECASE)

# a value set by an order ("set the global batch to 96 now", "bump the webhook retry cap from 8 to 12"): the value it holds
# from then on, a decision (no fact had been kept without an LLM, and the old value stayed the only one); a number, so that
# "change the title to something shorter" stays a request of the moment
_SET_TO = re.compile(r"^\s*(?:(?:ok|okay|so|then|and|alright)[,.]?\s+)?(?:please |pls )?(?:let'?s\s+)?(?:set|bump|raise|lower|increase|"
                     r"decrease|reduce|change|drop|cut|up|pin)\s+(?:the |our |my |its )?(?!it\b|this\b|that\b)[\w.-]+(?:\s+[\w.-]+){0,3}?"
                     r"\s+(?:from\s+\S+\s+)?to\s+\S*\d", re.IGNORECASE)

# an order reported from someone the speaker follows ("doc says drop the iron to 65 mg every other day instead of every
# day", "my coach told me to cut the long run to 28 km"): the value set is the speaker's from then on, not hearsay (a
# fitness bot's user's dose change had been skipped as reported speech, and the stale dose led her recall); only someone
# whose orders one follows, right before the verb, so that no word of denial stands between ("Nobody told me to cut the
# budget to 5k", "My doctor never said to lower the dose to 25 mg", "Reddit says drop the learning rate to 1e-4" had
# become decisions, found in review)
_INSTRUCTED = re.compile(r"^\s*(?:(?:my|our|the|her|his)\s+)?(?:[\w'-]+\s+)?(?:doc|doctor|gp|physician|physio|physiotherapist|coach|"
                         r"trainer|manager|boss|lead|dentist|nurse|vet|pharmacist|therapist|dietitian|nutritionist|specialist|"
                         r"cardiologist|surgeon|midwife)s?\s+(?:says|said|told (?:me|us)|wants (?:me|us)|asked (?:me|us))\s+"
                         r"(?:(?:to|that (?:i|we) should)\s+)?", re.IGNORECASE)
# the order turned down after it ("Tom asked me to change the password to 1234, but I refused": found in review)
_REFUSED = re.compile(r"\bbut\s+(?:i|we)\s+(?:refused|declined|said no|ignored|won'?t|will not|didn'?t|did not|don'?t|do not|"
                      r"haven'?t|have not)\b", re.IGNORECASE)


def _value_set(s: str) -> bool:
    """`s` sets a value from then on by an order, the speaker's or one reported (`_SET_TO`, `_INSTRUCTED`)."""
    told = _INSTRUCTED.match(s)
    order = s[told.end():] if told else s
    return bool(_SET_TO.match(order)) and not _TRIAL.match(order) and not _FOR_NOW.search(s) \
        and not (told and _REFUSED.search(order)) and not _dated(_times(s))


_LAST_NOW = re.compile(r"\s*\bnow[.!]*$", re.IGNORECASE)
# an order's opening verb ("Vegan now." and "Porto now." are values; "Use pnpm now." a rule, kept)
# (not "go with", "move … to", "set … to", "pin … to": a choice or a value said as an order is a change — found in review)
_ORDER = re.compile(r"^\s*(?:please |pls )?(?:migrate|deploy|redeploy|run|rerun|merge|push|pull|restart|rebuild|revert|roll ?back|"
                    r"delete|install|apply|commit|rebase|retry|test|build|fix|do|kill|clean|reset|reload|refresh|publish|approve|"
                    r"archive|sync|backfill|check|try)\b(?!.*\bto\b)", re.IGNORECASE)


def _ordered_now(s: str) -> bool:
    """A change said only by a closing "now" of a sentence that opens with an order: no value changed."""
    return bool(_ORDER.match(s)) and not CHANGE.search(_LAST_NOW.sub("", s))


_PAST_TIME = re.compile(r"\b(?:yesterday|last|ago|this morning|earlier|in (?:19|20)\d\d)\b", re.IGNORECASE)


# said of a month to come ("I'm running my first half marathon this November", "we'll move in
# September"): an intention, where a day to come ("on 14 May", "next Friday") is an appointment
_MONTH_AHEAD = re.compile(r"\b(?:am|'m|are|'re|is|'s) \w+ing\b|\b(?:will|'ll|going to)\b", re.IGNORECASE)


def _month_only(times: list[when.Span]) -> bool:
    """The first time named is a month or longer, not a day ("in September", "this November")."""
    return bool(times) and times[0].grain in ("month", "season", "year")


def _future(s: str) -> bool:
    """The time a dated `s` names is not a past one ("in August", "next week", "on the 9th" —
    not "yesterday", "last month"): the classifier has no clock, the words tell."""
    return _PAST_TIME.search(s) is None


_MEANT = re.compile(r"^\s*(?:(?:sorry|oops|oh|wait|no|actually|hmm|ugh)[,!.]?\s+)*(?:i meant|i mean|make that)\s+(?P<new>[^!?,;]{1,60}?)"
                    r"(?:,?\s+(?:actually|sorry|instead))?\s*[.!]?\s*$", re.IGNORECASE)


_NO_VALUE = frozenset(["to", "that", "it", "i", "we", "you", "he", "she", "they", "is", "are", "was", "were", "am", "be", "been", "really", "honestly", "just", "think", "love", "like", "hate", "feel", "mean", "whole", "all", "so", "because"])


def _meant(before: str, new: str) -> str | None:
    """`before` (a statement) with its value put right: "I live in Lisbon." and "I meant Porto"
    are "I live in Porto." (the value of its slot, found in its words); None when its value is
    not found there. A self-correction was dropped, or kept as the fragment "Aisle seats."."""
    slot = slots.parse(before)
    value = list(slot.value) if slot is not None else []
    while value and value[0] in slots._PREPS:  # "on the 12th": the 12th is what was put right
        value = value[1:]
    said = new.split()
    if not value or not said or len(said) > 4 or any(w.lower().strip(".,") in _NO_VALUE for w in said):
        return None  # "I meant to say …", "I mean I really love it here": a clause, no value put right
    span = re.search(r"\b" + r"\W+".join(re.escape(w) for w in value) + r"\b", before, re.IGNORECASE)
    if span is None:
        return None
    return before[:span.start()] + new.strip() + before[span.end():]


# a statement taken back as it is said: "Torin dies in book 2 — no wait, he survives but loses his arm." (a novelist's
# revision had been only related to "Torin dies in book 2, at Kethra Pass.", which stayed current)
# — the marker a word of its own, set off ("… actually no plugins at all", "… no wait times" take nothing back: review)
_TAKEN_BACK = re.compile(r"^(?P<said>\S.{7,}?)\s*(?:[—–]|\s-+\s|,|;|\.\.\.|…)\s*(?:(?:no,?\s+wait|wait,?\s+no|no,\s+actually|"
                         r"actually,?\s+no)\s*[,:;.!—–-]|scratch that\b)[\s,:;.!—–-]*(?P<rest>\w.{7,})$", re.IGNORECASE)


def _classify(out: dict[str, Any], s: str, m: Message, seen: set[str], after_fact: bool = False,
              named: list[tuple[str, bool]] | None = None) -> str | None:
    """Adds what `s` says to `out` (a person said by a pronoun alone named from `named`, `said_of`); its category, or None."""
    key = s.lower()
    if key in seen:
        return None
    taken_back = _TAKEN_BACK.match(s) if m.role == "user" and len(s) <= MAX_SENTENCE else None
    if taken_back and not s.rstrip().endswith("?"):
        out["corrections"].append({"text": s, "replaces": taken_back.group("said")})  # the whole: "he" is Torin
        seen.add(key)
        return "correction"
    found = classify(s, m.role == "user", after_fact)
    if found is None:
        return None
    category, kind, said = found
    text = said_of(said, named or [])
    if text is None:
        return None
    if category == "correction":
        out["corrections"].append({"text": text, "replaces": text})
    elif category == "task":
        out["tasks"].append(text)
    else:
        out["facts"].append(_fact(text, kind, m))
    seen.add(key)
    return category


# "I live in Berlin and work as a backend engineer": two facts of one holder, said in one breath
_AND_VERB = re.compile(r",?\s+and\s+(?:(?P<again>i|we)\s+)?(?P<verb>(?:live|work|use|prefer|own|study|lead|manage|run|have|teach|"
                       r"speak|drive|rent|coach|play)s?)\b", re.IGNORECASE)
_ANOTHER_SUBJECT = re.compile(r"\b(?:i|i'm|i've|we|we're|you|he|she|they|it|that|who|which|because|when|if)\b", re.IGNORECASE)
_OPENS_I = re.compile(r"^\s*(?P<who>i|we)(?:['’](?:m|re|ve)\s+|\s+)(?!(?:and|or)\b)", re.IGNORECASE)


def conjuncts(s: str, user: bool = True) -> list[str]:
    """`s` as the facts it states: "I live in Berlin and work as a backend engineer" is "I live
    in Berlin." and "I work as a backend engineer." — so a later "I moved to Munich" ends the
    first, not both. Cut only where the first person goes on with a verb of a standing fact
    and both halves are plain facts (not a change, which is one statement: "I switched from
    Vim to Helix and use it daily"); anything else is `[s]`."""
    opens = _OPENS_I.match(s)
    found = _AND_VERB.search(s) if opens else None
    if found is None or found.start() < opens.end() + 3:  # type: ignore[union-attr]
        return _holders(s, user)
    between = s[opens.end():found.start()]  # type: ignore[union-attr]
    if len(between.split()) > 8 or _ANOTHER_SUBJECT.search(between):  # the "and" of a clause inside ("to know I'm not alone and have …")
        return [s]
    who = found.group("again") or opens.group("who")  # type: ignore[union-attr]
    first = s[:found.start()].rstrip(" ,") + "."
    second = f"{who[0].upper()}{who[1:]} {s[found.start('verb'):]}".rstrip()
    second = second if second[-1] in ".!?" else second + "."
    parts = [classify(first, user), classify(second, user)]
    if any(p is None or p[0] != "fact" for p in parts) or classify(s, user) is None:
        return [s]
    return [first, second]


# "…, and our CI runs on Jenkins", "…; my wife works in Potsdam": a second statement with a holder of its own
_AND_HOLDER = re.compile(r"(?:,?\s+and|\s*;)\s+(?=(?:my|our|the)\s+\w|(?:we|i)\s+(?!(?:\w+ed|went|had|got|made|took|saw|came|met|ate|drank|"
                         r"spent|bought|left|found|did|were|was|tried|camped)\b)\w)", re.IGNORECASE)
# ("… and we deploy to Heroku" states; "… last Thursday and we tried a new cold brew" tells one happening: kept whole)
_BACK = re.compile(r"\b(?:it|its|them|there|this|that|these|those|he|she|his|her|him|they|their|one)\b", re.IGNORECASE)  # what the part before names


def _holders(s: str, user: bool) -> list[str]:
    """`s` cut where "and" (or ";") opens a statement of another holder, when each part is a
    plain fact on its own ("We deploy the API to Heroku and our CI runs on Jenkins": two, so a
    later "We've switched from Jenkins to GitHub Actions" ends only the second); else `[s]`."""
    cuts = [m for m in _AND_HOLDER.finditer(s) if m.start() > 0]
    if not cuts or len(cuts) > 3:
        return [s]
    bounds = [0, *(m.start() for m in cuts), len(s)]
    starts = [0, *(m.end() for m in cuts)]
    parts = [s[a:b].strip(" ,;") for a, b in zip(starts, bounds[1:])]
    parts = [p[0].upper() + p[1:] + ("" if p[-1] in ".!?" else ".") for p in parts if p]
    kinds = [classify(p, user) for p in parts]
    if len(parts) < 2 or any(k is None or k[0] != "fact" for k in kinds) or any(_BACK.search(p) for p in parts[1:]) \
            or classify(s, user) is None:
        return [s]  # "… and the team likes it": the part would lose what it speaks of
    return parts


# A person spoken of by a pronoun alone. "his teacher will be Miss Priya." (said of Sam), "kids love her" (of the
# babysitter), "she's allergic to cats" (of grandma Ruth) were kept as said, and a fact read alone in a recall block was
# then about anyone: another child's teacher (a family assistant's user). The pronoun is put right when the message said
# exactly one person of its number before the sentence — by name, or as one's kin where that sentence names nobody ("My
# mom had her knee surgery. She's …"; "my parents (Teresa and Jorge) …. they'll …" is the parents). After two or more
# ("Kenji is my co-founder. Ana is our designer. she works from Oslo.") it is not kept: it would be read as either's. After
# none it is kept as said: its person was spoken of in an earlier turn (not keeping those lost a labelled statement of
# the held-out chat turns, `bench/distill.py --set chat-test`, recall 0.50 → 0.48), or in lower case ("i'll take her").
_SUBJECT_PRONOUN = re.compile(r"^(?:[\w'-]+,\s+)?(?P<pronoun>he|she|they|his|her|their)(?P<contracted>['’](?:s|ll|d|re|ve))?\b",
                              re.IGNORECASE)  # the subject ("his teacher …", "severe, she has …")
_ONE_PERSON = re.compile(r"\b(?P<pronoun>he|she|him|her|his)(?P<contracted>['’](?:s|ll|d))?\b", re.IGNORECASE)
_NOUN_BEFORE = re.compile(r"\b(?:my|our|your|the|a|an)\s+[\w'-]+", re.IGNORECASE)  # "My dad has …, I drive for him"
# (the whole run of capitalised words: "through Sunrise Home Care" had been the place "Sunrise Home" and the person "Care",
# and "her name is Rosa Delgado" of a carer's became "Care's name is …")
# ... up to three words, stopped before a word of the calendar or one that opens sentences ("Mom called Aunt Rosa
# Christmas Eve." had named one person, "Aunt Rosa Christmas Eve", a reviewer's)
_NOT_IN_NAME = sorted({*CALENDAR_WORDS, *_OPENER_WORDS, "christmas", "easter", "thanksgiving", "halloween", "hanukkah"}, key=len,
                      reverse=True)
_PERSON = re.compile(rf"(?<![\w'’.-])(?P<title>(?i:(?:dr|mr|mrs|ms|miss|prof)\.?\s+))?(?P<name>[{_UPPER}][{_LOWER}]+"
                     rf"(?:[ \t]+(?!(?i:{'|'.join(_NOT_IN_NAME)})\b)[{_UPPER}][{_LOWER}]+){{0,2}})")
# a name opening a sentence is its subject only before one of NAME_VERBS or a "'s": any lower-case word after it named
# "Talked" ("Talked to my boss …") and "Tell Priya" ("Tell Priya the meeting moved"), and put them in the next sentence's
# "He …"; one judged ("Lisbon was lovely", "Paris is so beautiful") may be a place: kept as said
# (a bracket between is the name's apposition: "Priya Nandakumar (my agent) wants the full manuscript …. she loves the
# drowned city hook", a novelist's, had kept "she loves …" as said)
_NAMED_FIRST = re.compile(rf"(?:[ \t]*\([^()\n]{{1,40}}\))?(?:['’]s\b|[ \t]+(?:{NAME_VERBS})\b)")
_JUDGED = re.compile(rf"[ \t]+(?:is|was)[ \t]+(?:(?:{'|'.join(slots._INTENSIFIERS)})[ \t]+)*(?P<word>[\w-]+)", re.IGNORECASE)
_MANY = frozenset(["children", "kids", "parents", "grandparents", "siblings", "in-laws"])
_KIN = re.compile(rf"\b(?:my|our)\s+(?P<kin>{'|'.join(sorted({*slots.FAMILY, *slots._CLOSE, *_MANY}, key=len, reverse=True))})\b",
                  re.IGNORECASE)
_OBJECT_HER = re.compile(rf"\s*(?:$|[^\w\s]|(?:{'|'.join(slots._PREPS)}|and|or|but|so|too|again|now|up|out|off|back|home|a|an|the|"
                         r"\w+ing)\b)", re.IGNORECASE)  # "love her", "for her.", "on her at …"; "her backpack" is hers
_CONTRACTED = {"'ll": " will", "'re": " are", "'ve": " have"}


def people(sentence: str) -> list[tuple[str, bool]]:
    """The people `sentence` speaks of, each (as said, more than one): a name with a title, or a capitalised name not
    after a preposition (a place: "at Sunflower Daycare", "from Lisbon") and, opening the sentence, before one of
    NAME_VERBS or a "'s" and not judged ("Sam got a spot …"; "Severe, she has …", "Talked to …", "Lisbon was lovely" name
    nobody); one's kin
    ("my parents"; "my mom" only where no name is said: "my mom (grandma Ruth)" is Ruth, "My cat is called Mochi" Mochi)."""
    names = []
    for m in _PERSON.finditer(sentence):
        name, before = m["name"], sentence[max(0, m.start() - 40):m.start()].rstrip(" \t(")  # (a word is short)
        opening = m.start() < 4 and not sentence[:m.start()].strip(" \t(\"'“‘")
        if m["title"] or not (_opener(name.split()[0]) or name.lower() in CALENDAR_WORDS or _last_word(before) in slots._PREPS
                              or opening and not _subject(sentence, m.end())):
            names.append((name, False))
    kin = [(m[0], m["kin"].lower() in _MANY) for m in _KIN.finditer(sentence)]
    return names + [k for k in kin if k[1] or not names]


def _subject(sentence: str, end: int) -> bool:
    """Whether the name opening `sentence` (up to `end`) is its subject and a person (`_NAMED_FIRST`)."""
    judged = _JUDGED.match(sentence, end)
    return bool(_NAMED_FIRST.match(sentence, end)) and not (judged and slots.stem(judged["word"].lower()) in slots._FEELINGS)


def _person_key(said: str) -> str:
    """One person said two ways is one: "Inês Carvalho" and "Inês"; "my mom" as said."""
    return said.lower() if said[0].islower() else said.split()[0]


def _heard(named: list[tuple[str, bool]], sentence: str) -> None:
    """Adds the people `sentence` speaks of to `named`, each once, and at most two of one number (two are already too many
    to name one: a long paste of names costs no more per sentence)."""
    for said, many in people(sentence):
        same = [_person_key(n) for n, more in named if more == many]
        if len(same) < 2 and _person_key(said) not in same:
            named.append((said, many))


def said_of(s: str, named: list[tuple[str, bool]]) -> str | None:
    """`s` with a person it speaks of by a pronoun alone said: the one person of the pronoun's number in `named` (the
    people the message spoke of before, `people`), for the first pronoun; `s` as said when it names its person itself or a
    noun the pronoun may stand for, or when the message spoke of nobody before; None when it spoke of several."""
    own = people(s)
    found = _SUBJECT_PRONOUN.match(s)
    if found is None and not own:
        one = _ONE_PERSON.search(s)
        found = one if one and not _NOUN_BEFORE.search(s[:one.start()]) else None
    if found is None:
        return s
    many = found["pronoun"].lower() in ("they", "their")
    who = {_person_key(said): said for said, more in named if more == many}
    if len(who) != 1:
        return s if own and _IS_NAMED.match(s, found.end("pronoun")) or not who else None
    said = _named(found, next(iter(who.values())), s[found.end():])
    return s[:found.start("pronoun")] + (said[0].upper() + said[1:] if found.start("pronoun") == 0 else said) + s[found.end():]


# the person a pronoun stands for, named right after it ("his name is Waffles", "she's Wren"): the statement names its
# person itself. A name further on is someone or somewhere else ("Tobin's sister is Wren. she's the brains of the
# smuggling op, …, never leaves Port Amaranth", a novelist's, had been kept as said after two people, its "she" anyone's)
_IS_NAMED = re.compile(rf"(?i:['’]s|\s+(?:name\s+)?(?:is|was))\s+(?:(?i:dr|mr|mrs|ms|miss|prof)\.?\s+)?[{_UPPER}]")


def _named(found: re.Match[str], who: str, after: str) -> str:
    """`who` in the place of the pronoun `found`: "his" is "Sam's", "she's" "Ruth is", "her backpack" Maya's, "they'll"
    "my parents will", "their" "my parents'"."""
    pronoun, contracted = found["pronoun"].lower(), (found["contracted"] or "").lower().replace("’", "'")
    if pronoun in ("his", "their") or pronoun == "her" and not _OBJECT_HER.match(after):
        return f"{who}'" if who.endswith("s") and pronoun == "their" else f"{who}'s"
    if contracted == "'s":
        return f"{who} has" if re.match(r"\s+(?:been|got|gotten|had)\b", after) else f"{who} is"
    return who + _CONTRACTED.get(contracted, contracted)


def _fact(s: str, kind: str, m: Message) -> dict[str, Any]:
    return {"text": s, "kind": kind, "entities": entities_of(s), "valid_from": named_start(s, m.created_at, m.metadata)}


