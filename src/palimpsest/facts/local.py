"""The local distiller: a turn's facts, corrections and tasks without an LLM, deterministically.

`local_distill(messages)` gives the four fields of the distill schema (`distill.py`) from
the sentences of a turn, each kept as said (an opening "Sorry," or "Actually," aside) —
it does not paraphrase or resolve pronouns, which is what the model is for. Each sentence
is classified by the first rule that holds, in this order:

    skipped      questions, hypotheticals ("what if", "maybe", "I wonder"), reported
                 speech ("my friend thinks …", "the article says …"), small talk, and
                 sentences without a subject ("that's a cool idea")
    correction   an explicit marker ("actually", "correction:", "I meant") or a change
                 of value: "moved to", "X is now Y", "switched from A to B", "no
                 longer", "took over", "changed to", "was pushed to", "replaced A with B"
    task         "I need to", "TODO", "remind me to", "we should" …
    decision     "we decided", "let's go with", "we agreed to", "decided on" …
    preference   likes and dislikes, and rules: "never …", "always …", "don't …",
                 "please keep …", "from now on, …", "going forward, …"
    plan         "we plan to", "I'm planning to", "we will" (with a date: event)
    event        a first-person or named statement with a date ("on 2 September", "yesterday")
    fact         any other plain statement with a slot (`slots.parse`: a holder — I, we, a
                 name, a "the …" noun — and a copula or a known verb): "I can't eat
                 gluten", "Hana reports to Luis", "Our API gateway is Kong"

Only the user's sentences count, except decisions, which the assistant may report
("We agreed last week to use NATS"). A correction's `replaces` is its own text: the
curator then finds what it replaces by slot (`curator.py`). Figures on the development
and test turns of `bench/data/` are in `bench/RESULTS.md` ("Distillation").
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from ..errors import InvalidInput
from ..records import Message, iso, parse_time
from . import slots

# -- the local fallback ----------------------------------------------------------
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\n+")
CORRECTION = re.compile(r"^\s*(?:(?:no|oh|sorry|wait|oops)[,.!]?\s+)*(?:actually|correction|to correct myself|i meant|i mean|scratch that|"
                        r"i was wrong|that's wrong|that is wrong|not anymore|update)\b[\s,:;—-]*(?:it'?s\s+|that\s+)?", re.IGNORECASE)
PREFERENCE = re.compile(r"\b(?:i (?:really |much |strongly |do )?(?:prefer|like|love|enjoy|hate|dislike|can't stand|don't like|do not like|"
                        r"would rather)|i'd rather|my fav(?:ou?rite)?|please (?:always|never|don't|do not)|always use|never use|i want you to)\b", re.IGNORECASE)
DECISION = re.compile(r"\b(?:we(?: have|'ve)? decided|i(?: have|'ve)? decided|decided to|the decision is|decision:|we agreed|"
                      r"let'?s go with|let us go with|we(?:'ll| will) go with|i(?:'ll| will) go with|going with|we(?:'ll| will) use|"
                      r"let'?s use|settled on|we chose|i chose)\b", re.IGNORECASE)
TASK = re.compile(r"^\s*(?:todo\b[:\s]*|i need to|i have to|i must|remind me to|don't forget to|do not forget to|we need to|"
                  r"we should|next step[s]?(?: is| are)?:?|please remember to)", re.IGNORECASE)
STATED = re.compile(r"^\s*(?:(?:my|our)\s+(?:[\w'-]+\s+){0,3}?(?:is|are|was|were|has|have|lives?|works?)\b|"
                    r"i(?:'m| am)\s+(?:a|an|the)\s|i\s+(?:live|work|study|moved|own|have (?:a|an|two|three)|was born|grew up|use)\b)", re.IGNORECASE)
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
DATE = re.compile(
    rf"\b(?P<iso>\d{{4}}-\d{{2}}-\d{{2}})\b|\b(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{_MONTH})\b(?:,?\s+(?P<y1>\d{{4}}))?"
    rf"|\b(?P<m2>{_MONTH})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y2>\d{{4}}))?"
    r"|\b(?P<rel>yesterday|today|tomorrow)\b|\b(?P<dir>next|last|this|on)\s+(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
    re.IGNORECASE)
_IDENT = re.compile(r"#\d+\b|\b[0-9a-f]{7,40}\b|\b[\w./-]+\.(?:py|js|ts|tsx|go|rs|md|json|yaml|yml|toml|sql|sh|txt|c|h|cpp|java|rb)\b"
                    r"|https?://\S+|\bv?\d+\.\d+(?:\.\d+)+\b")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z0-9]+(?:\s+[A-Z][a-zA-Z0-9]+)*")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'll|my|we|we're|we've|we'll|our|me)\b", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text or "") if s and len(s.strip()) > 3]


def entities_of(text: str) -> list[str]:
    found = [m.group(0).rstrip(".,") for m in _IDENT.finditer(text)]
    found += [m.group(0) for m in _NAME.finditer(text) if m.group(0).lower() not in ("i", "i'm", "i've") and m.group(0) != "I"]
    out: list[str] = []
    for e in found:
        if e not in out and e.lower() not in MONTHS + WEEKDAYS:
            out.append(e)
    return out[:10]


def resolve_date(text: str, said_at: str) -> str | None:
    """The first date `text` names, absolute (ISO, midnight UTC), relative ones counted from `said_at`."""
    m = DATE.search(text)
    if m is None:
        return None
    base = parse_time(said_at)
    day = base.replace(hour=0, minute=0, second=0, microsecond=0)
    try:
        if m.group("iso"):
            return iso(parse_time(m.group("iso")))
        if m.group("rel"):
            return iso(day + timedelta(days={"yesterday": -1, "today": 0, "tomorrow": 1}[m.group("rel").lower()]))
        if m.group("wd"):
            target = WEEKDAYS.index(m.group("wd").lower())
            delta = (target - day.weekday()) % 7
            if m.group("dir").lower() == "last":
                delta = delta - 7 if delta else -7
            elif m.group("dir").lower() == "next" and delta == 0:
                delta = 7
            return iso(day + timedelta(days=delta))
        month_text, d, y = (m.group("m1"), m.group("d1"), m.group("y1")) if m.group("m1") else (m.group("m2"), m.group("d2"), m.group("y2"))
        month = next(i for i, name in enumerate(MONTHS, 1) if name.startswith(month_text.lower()[:3]))
        return iso(datetime(int(y) if y else base.year, month, int(d), tzinfo=base.tzinfo))
    except (ValueError, InvalidInput, StopIteration):
        return None


_OPENING = re.compile(r"^\s*(?:(?:sorry|oh|ah|wow|hmm|um|uh|yeah|yep|yup|sure|alright|honestly|ok|okay|so|well|and|but|btw|fyi|by the way|just so you know|also|hey|yes|no|right)"
                      r"\b[,.!:]?\s+)+(?=\w)", re.IGNORECASE)
SKIP = re.compile(r"^\s*(?:what if|maybe|perhaps|i wonder|i guess|i think|i suppose|could you|can you|would you|will you|"
                  r"is it|is there|are there|do you|did you|does|how|why|when|where|who|which|should we|shall we|could we|"
                  r"if\b|imagine|suppose|let me|hi\b|hello|hey|good (?:morning|night|evening|afternoon)|thanks|thank you|"
                  r"lol|haha|ok\b|okay\b|cool\b|great\b|nice\b|bye\b|"
                  # musings and requests, not statements: "I'm thinking of…", "I was wondering…"
                  r"i(?:'m| am| was|'ve been| have been) (?:thinking|wondering|curious|hoping|considering|looking for|trying to|"
                  r"meaning to)|i'd like to (?:know|ask|get|learn|find)|i want to (?:know|ask|learn|find))", re.IGNORECASE)
REPORTED = re.compile(r"^\s*(?:(?:my|our|a|the|his|her|their)\s+)?(?:[\w'-]+\s+){0,2}?(?:says|said|thinks|thought|told|believes|"
                      r"claims|claimed|mentioned|reckons|suggests|suggested|argues|argued|wrote|writes|reports that)\b", re.IGNORECASE)
_NO_SUBJECT = re.compile(r"^\s*(?:that|this|it|there|here|these|those|which|what)(?:'s|\s+(?:is|was|are|were|sounds|looks|seems))\b", re.IGNORECASE)
CHANGE = re.compile(r"\b(?:(?:has |have |'ve |had |was |were |got |has been |have been )?(?:moved|switched|migrated|changed|shifted|"
                    r"pushed|postponed|rescheduled|bumped|raised|lowered|swapped) (?:\w+ ){0,4}?(?:to|from)\b|"
                    r"(?:is|are|'s|'re) now\b|\bnow (?:\w+s|is|are|have|has|use|work|live|deploy|run|host|go)\b|no longer|"
                    r"took over|takes over|taken over|is the new|are the new|replaced \w+(?: \w+){0,3} (?:with|as)\b|"
                    r"\b(?:quit|stopped|gave up)\b|\bnow[.!]?$|"
                    r"(?:are|is|'re|am|'m) moving (?:\w+ ){0,4}?(?:to|from)\b)", re.IGNORECASE)
RULE = re.compile(r"^\s*(?:(?:from now on|going forward|from here on|in future|in the future),?\s+\w+|never\b|always\b|"
                  r"don'?t\b(?! forget)|do not\b(?! forget)|please (?:keep|use|reply|answer|write|send|avoid|make|stop|call|"
                  r"format|respond|be)\b|avoid\b|stop\b)", re.IGNORECASE)
MY_PREFERENCE = re.compile(r"\b(?:my (?:preferred|favou?rite)|i (?:hate|love|can't stand|cannot stand) it when|"
                           r"i (?:\w+ )?(?:enjoyed|liked|loved|hated|disliked|never liked)|i'?d like|i would like|i'?d love)\b", re.IGNORECASE)
_NOT_A_TASK = re.compile(r"^\s*i (?:have|need) to (?:admit|say|confess|agree|tell you)\b", re.IGNORECASE)
PLAN = re.compile(r"\b(?:i|we)(?:'m| am|'re| are)? (?:plan(?:ning)? to|intend(?:ing)? to|aim(?:ing)? to|going to (?!be\b)\w+|"
                  r"will (?!be\b)\w+|'ll (?!be\b)\w+)", re.IGNORECASE)
_MORE_DECISIONS = re.compile(r"\b(?:agreed to|agreed on|decided on|(?:we|i)(?:'re| are| am|'m) going with|let'?s (?:use|switch|drop|move|"
                             r"keep|adopt|stick|schedule|plan|set|make|launch|ship|start))\b", re.IGNORECASE)
_EVALUATIVE = re.compile(r"^\s*the (?:weather|food|movie|book|show|game|view)\b", re.IGNORECASE)


def local_distill(messages: list[Message]) -> dict[str, Any]:
    """The four-field output, extracted deterministically (see the module doc)."""
    out: dict[str, Any] = {"summary": "", "facts": [], "corrections": [], "tasks": []}
    seen: set[str] = set()
    for m in messages:
        if not m.content or m.tool_name:
            continue
        for s in sentences(m.content):
            _classify(out, s, m, seen)
    first = next((m for m in messages if m.role == "user" and m.content.strip()), None) or next((m for m in messages if m.content.strip()), None)
    lead = sentences(first.content)[0] if first and sentences(first.content) else (first.content.strip() if first else "")
    out["summary"] = (f"{first.role or 'someone'} said: {lead}"[:300] if first and lead else f"A turn of {len(messages)} messages without text.")
    return out


MAX_SENTENCE = 400  # longer is pasted text (a transcript, a document), not a statement


def classify(s: str, user: bool = True) -> tuple[str, str, str] | None:
    """(category, kind, text) of one sentence, or None (see the module doc)."""
    if s.rstrip().endswith("?") or len(s) > MAX_SENTENCE:
        return None
    corr = CORRECTION.match(s)
    if user and corr and len(s) - corr.end() > 8:
        text = s[corr.end():].strip()
        return "correction", "correction", text[0].upper() + text[1:]
    opening = _OPENING.match(s)
    if opening:
        s = s[opening.end():]
        s = s[0].upper() + s[1:]
    if SKIP.match(s) or REPORTED.match(s) or _NO_SUBJECT.match(s) or _EVALUATIVE.match(s):
        return None
    if user and TASK.match(s) and not _NOT_A_TASK.match(s):
        return "task", "task", s
    if DECISION.search(s) or _MORE_DECISIONS.search(s):
        return "fact", "decision", s
    if not user:
        return None
    if CHANGE.search(s) and not RULE.match(s):
        return "correction", "correction", s
    if PREFERENCE.search(s) or RULE.match(s) or MY_PREFERENCE.search(s):
        return "fact", "preference", s
    dated = DATE.search(s) is not None
    if PLAN.search(s) and not dated:
        return "fact", "plan", s
    slot = slots.parse(s)
    if dated and (_FIRST_PERSON.search(s) or slot is not None):
        return "fact", "event", s
    if slot is not None and (slot.value or slot.attribute) and len(s.split()) >= 3:
        return "fact", "fact", s
    return None


def _classify(out: dict[str, Any], s: str, m: Message, seen: set[str]) -> None:
    key = s.lower()
    if key in seen:
        return
    found = classify(s, m.role == "user")
    if found is None:
        return
    category, kind, text = found
    if category == "correction":
        out["corrections"].append({"text": text, "replaces": text})
    elif category == "task":
        out["tasks"].append(text)
    else:
        out["facts"].append(_fact(text, kind, m))
    seen.add(key)


def _fact(s: str, kind: str, m: Message) -> dict[str, Any]:
    return {"text": s, "kind": kind, "entities": entities_of(s), "valid_from": resolve_date(s, m.created_at)}


