"""The relevance floor: hits whose evidence is too weak to show are dropped.

Once vectors exist every query has nearest neighbours, so without a floor a query about
nothing stored (`zzqqxx`, a question about a person this memory never met) still returns
`limit` hits and recall fills its budget with them. Three rules, the first two on the raw
cosine between the query and a message (not the per-query stretched `semantic` part):

- **a hit needs evidence**: a keyword match, or a cosine of at least `similarity`. A
  vector neighbour with no query word and a cosine under it is dropped.
- **a query about someone unknown**: when the query names someone or something
  (a capitalised word inside a sentence: "Melanie", "Nate's"; months and weekdays are
  not names) that no message in scope holds, and no message is closer than the
  threshold in meaning, keyword matches on its other words ("paint", "community") are
  not evidence either: the result is empty. The threshold depends on whom the query is
  about. A query in the first or second person ("my trip to Miami", "can you suggest…")
  is about the memory's user, whom every memory knows; a name there is a detail of the
  question, and `unknown` applies. A query about a third party ("What did Nate do…?")
  whose every name is unknown asks about someone this memory never met: it needs a
  message as close as `stranger`, a higher bar — and for it a name is known only when one
  of the first ten hits is said by them or speaks of them and is near the query in meaning
  (`_held`), or when the memory's user goes by it (introduced by it, or greeted by it: "Hi
  Tom!"), so a "John" mentioned in passing somewhere in a large memory does not make a
  question about another John answerable, and a question naming the user is not one about
  a stranger. A query whose every name is a place ("Who lives in Austin?": `only_places`)
  asks of no third party either.
- **a code nobody stored**: a code the query asks for (letters and digits: "TCK-9999") that no message in scope
  holds is asked of as a name nothing speaks of, wherever it stands, and closeness in meaning is no evidence of it:
  the model reads every code of one prefix alike ("Closed TCK-4955." is near "TCK-9999").

A word of the scope the search is asked in (its channel, agent, tag or session: "Tyrell" in channel `tyrell`) is no
name a hit must speak of: every message in the scope is of it. And a query of two asks, one of them its user's own
and naming nothing ("what plan are we on and what is our SLA?"), is not about nothing for the other's unknown name.

Both thresholds are cosines of one embedding model and mean nothing for another, so the
settings default to `auto`: the values measured for the local model (docs/retrieval.md,
"The relevance floor"), and no floor for a model they were not measured on. Without
vectors the floor does nothing (it cannot tell weak from strong); keyword search already
returns nothing for words nobody wrote.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from .. import when
from ..errors import InvalidInput
from ..records import Hit
from ..segment import RUN, fold
from ..tokens import reads_nothing
from .conversation import ABOUT_ASSISTANT, FIRST_PERSON
from .query import CONTRACTIONS, GERMAN_MORE, OTHER_LANGUAGES, STOP_WORDS, elided, inverted, query_terms

# measured on the dev sets (split halves) for the local model; see docs/retrieval.md
MEASURED = {"all-MiniLM-L6-v2-onnx-int8": (0.35, 0.45, 0.55)}
SECOND_PERSON = re.compile(r"\byou(?:r|rs|'re|’re|'ve|’ve)?\b", re.IGNORECASE)
# a team speaking of itself ("For CHF we should use …") asks of its own memory, as "I" does
FIRST_PERSON_PLURAL = re.compile(r"\b(?:[Ww]e|us|[Oo]urs?|[Ll]et's|[Ll]et’s|[Ww]e're|[Ww]e’re|[Ww]e've|[Ww]e’ve)\b")  # ("the US": a country)
# a capitalised word that does not open a sentence; a possessive 's is not part of the name
NAME_RE = re.compile(r"(?<![.?!:]\s)(?<![.?!:])(?<!^)(?<![\w-])([A-Z][\w’'-]*)")  # a word's start: "LEDGER-E4471" holds no name "E4471"
POSSESSIVE_RE = re.compile(r"['’]s$")
# marks that open a sentence before its first word ("¿Dónde vivo?", "¡Hola!"): the word after them opens it still
OPENERS = re.compile(r"[¿¡]+")
# capitalised, but a time and not a name ("in June", "on Sunday"); abbreviations ("Jan")
# can be names and stay
CALENDAR = frozenset(n.lower() for n in [*calendar.month_name, *calendar.day_name] if n)
# a month's abbreviation beside a day's number is a date, not a name ("on Nov 26", "3 Sept")
_ABBR = "|".join([*(a for a in calendar.month_abbr if a), "Sept"])
DATED_ABBR = re.compile(rf"\b(?:{_ABBR})\.?(?=\s+\d)|(?<=\d\s)(?:{_ABBR})\b|(?<=\d(?:st|nd|rd|th)\s)(?:{_ABBR})\b")


@dataclass(frozen=True)
class Floor:
    similarity: float = 0.0  # a hit without a keyword match needs at least this cosine
    unknown: float = 0.0  # a query of the user's naming only what no message holds needs one message this close
    stranger: float = 0.0  # the same for a query about a third party

    @property
    def active(self) -> bool:
        return self.similarity > 0 or self.unknown > 0 or self.stranger > 0

    def for_names(self, query: str) -> float:
        """The closeness a query naming only unknown names needs (0: no such rule)."""
        return self.unknown if personal(query) or only_places(query) else max(self.unknown, self.stranger)


def personal(query: str) -> bool:
    """Whether `query` is asked in the first or second person, of the memory's user or its assistant."""
    return bool(FIRST_PERSON.search(query) or FIRST_PERSON_PLURAL.search(query) or SECOND_PERSON.search(query)
                or ABOUT_ASSISTANT.search(query) or beyond_model(query) and _words(query) & OTHER_FIRST_PERSON)  # ("¿En qué piso vamos a vivir en
    # Valencia?": "vamos" had made it a question about a third party; "¿Qué piso alquiló Nate?" still is one)


def _threshold(value: object, measured: float, name: str) -> float:
    if value in ("auto", None, ""):
        return measured
    if value in ("off", "0"):
        return 0.0
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InvalidInput(f"{name} must be auto, off or a cosine from 0 to 1, got {value!r}") from None
    if not 0.0 <= number <= 1.0:
        raise InvalidInput(f"{name} must be auto, off or a cosine from 0 to 1, got {value!r}")
    return number


def floor_for(model: str, similarity: object = "auto", unknown: object = "auto", stranger: object = "auto") -> Floor:
    """The floor for vectors of `model`: each setting `auto` (the measured value, or off
    for a model not measured), `off`, or a cosine."""
    sim, unk, stra = MEASURED.get(model, (0.0, 0.0, 0.0))
    return Floor(_threshold(similarity, sim, "floor_similarity"), _threshold(unknown, unk, "floor_unknown"),
                 _threshold(stranger, stra, "floor_stranger"))


def query_names(query: str) -> list[str]:
    """The names a query uses, lower-cased and without accents: capitalised words that do not open a sentence (nor follow "¿" or "¡" there),
    possessive dropped ("What did Nate's dog eat?" → ["nate"]); stop words, months and
    weekdays are not names, nor words in capitals where the query has several ("DROP
    TABLE users": code or shouting, not an acronym)."""
    out: list[str] = []
    words = NAME_RE.findall(DATED_ABBR.sub(" ", OPENERS.sub("", fold(_no_holidays(query)))))
    shouted = len(_acronyms(query)) > 1  # ("CHF … 'CHF'": one acronym)
    german = _german(query)
    for word in words:
        capitals = word.isupper() or acronym(word) is not None
        if shouted and capitals or german and not capitals:
            continue
        name = acronym(word) or POSSESSIVE_RE.sub("", word).strip("'’-").lower().replace("’", "'")
        if name and name not in STOP_WORDS and name not in CONTRACTIONS and name not in CALENDAR and name.removesuffix("s") not in CALENDAR and name not in out:
            # ("Mondays" too: as a seed it found every message said on a Monday, by the date in its keyword text)
            out.append(name)
    return out


# the words a holiday's name may hold: only a text with one is read for holidays (`query_names` reads every hit's text)
_HOLIDAY_WORDS = re.compile(r"\b(?:christmas|xmas|boxing|valentines?|halloween|easter|thanksgiving|patrick|independence|new year)",
                            re.IGNORECASE)  # (not "year" alone: many hits' texts say it, and each was read for dates)


def _no_holidays(text: str) -> str:
    """`text` without the holidays `when` reads as days: "Valentine's day" is a date, not a name no message speaks of (a
    question asking of it had found nothing: the floor emptied it; found by a researcher's lab notebook)."""
    if not _HOLIDAY_WORDS.search(text):
        return text
    for span in when.resolve(text, when.ANY_DAY):
        if span.kind == "holiday":
            text = text.replace(span.text, " ")
    return text


TOP = 10  # a third party is known to a query when one of its first hits names them
WORD_RE = re.compile(r"[\w’'-]+")
def _words(text: str) -> set[str]:
    """The words of a text, lower-cased, accents dropped, possessives dropped."""
    return {acronym(w) or POSSESSIVE_RE.sub("", w.lower()).strip("'’-") for w in WORD_RE.findall(fold(text))}


def beyond_model(text: str) -> bool:
    """Whether a message is in a language the local (English) model does not read: most of
    its words outside the Latin script (Cyrillic, Chinese, Arabic, …; each character of Chinese
    or Japanese a word, as the keyword index cuts them), or more short words of another language
    than of English; or nothing the model reads at all (emoji alone: `tokens.reads_nothing`)."""
    words = script_words(text[:2000])
    if words and sum(1 for w in words if w[0] > "\u024f") * 2 > len(words):
        return True
    if not words:
        return reads_nothing(text[:2000])
    said = WORD_RE.findall(text[:2000].replace("’", "'"))
    words = [w.lower() for w in said]
    other = sum(1 for s, w in zip(said, words) if OTHER_LANGUAGES.intersection(inverted(w)) or "'" in w and _elision_counts(s))
    return other >= 2 and other > sum(1 for w in words if w in STOP_WORDS)


LETTERED = re.compile(r"[^\W\d_][\w’'-]*")  # a word with a letter: "GPUParticles2D", not "2027"


def script_words(text: str) -> list[str]:
    """The words of `text` that have letters, each character of a run of Chinese or Japanese one of them. Counted by
    letters, "パーティクルのメモリリーク、GPUParticles2D の process_material が解放されてない" (22 kana and kanji, 27
    Latin letters) had read as English, and so had a Chinese colleague's turn naming the same class: their cosines were
    weighed as evidence, and a game developer's search and recall had no hits."""
    return [*(ch for run in RUN.findall(text) for ch in run), *LETTERED.findall(RUN.sub(" ", text))]


def _elision_counts(word: str) -> bool:
    """An elided article or pronoun before a little word or a word of its own ("c'est", "l'amiante"; not "D'Souza")."""
    article, rest = elided(word)
    return bool(article) and (rest in OTHER_LANGUAGES or len(word) > 3)


# a place's name follows "in" ("Who lives in Austin?"; not "to", "from" or "at": "reports to Dana", "a mail from Jonas")
PLACE_RE = re.compile(r"\b(?:[Ii]n|[Nn]ear|[Aa]round)\s+([A-Z][\w’'-]*(?:\s+[A-Z][\w’'-]*)*)")  # ("in New York")


def only_places(query: str) -> bool:
    """Whether every name of `query` is a place it asks of ("Who lives in Austin?", "anyone in Toronto"): such a query
    asks of no third party. A recruiter's "Who lives in Austin?" had no hits (the stranger's bar: her note "Ben Alvarez
    (Austin, SRE, kubernetes)" was far in meaning, 0.17) while "who is in Austin" had it: 13 of her 27 cities came back
    empty. A question also naming a person ("Which hotel did Nate book in Austin?") is still about them."""
    names = query_names(query)
    places = {POSSESSIVE_RE.sub("", w).strip("'’-").lower() for p in PLACE_RE.findall(fold(query)) for w in p.split()}
    return bool(names) and set(names) <= places


def asked_names(query: str, scope: Iterable[str] = ()) -> list[str]:
    """`query_names`, a full name said whole ("Does Ben Carter know Kubernetes?" → ["ben carter", "kubernetes"]): what
    stands beside an emptied search (`names_any`) names the person asked of, not another "Ben" (a recruiter's recall
    block had held three facts about Ben Okafor and Ben Alvarez for a question about Ben Carter); the codes it asks for
    too (`query_codes`), and no word of the values of the search's `scope` (`scope_words`)."""
    scoped = scope_words(scope)
    names = [n for n in query_names(query) if n not in scoped]
    fulls = full_names(query, names)
    parts = {part for full in fulls for part in full.split()}
    codes = [c.lower() for c in query_codes(query) if c.lower() not in scoped]
    return list(dict.fromkeys([*fulls, *(n for n in names if n not in parts), *codes]))


def names_any(unknown: list[str], text: str) -> bool:
    """Whether `text` may stand beside what a message search found when the query asked about names no message speaks
    of (`unknown`, from `asked_names`): only a text naming one may (facts, summaries and wiki statements of other things
    had filled a block the floor had emptied: "What did we decide about the TV advertising campaign?")."""
    return not unknown or any(re.search(rf"\b{re.escape(n)}\b", fold(text), re.IGNORECASE) for n in unknown)


# the first person of the other languages users write in (their words, accents folded as `_words` reads them): "we go",
# "we have", "our", "my", "I" (found by a German–Spanish couple: a question about their own flat was held to a stranger's bar)
OTHER_FIRST_PERSON = frozenset("""vamos hemos tenemos estamos somos nos nuestro nuestra nuestros nuestras yo mis wir uns unser unsere
    unseren unserem unserer ich mich mir mein meine meinen meinem meiner nous notre je moi mes noi nostro nostra nostri
    nostre abbiamo siamo mio mia miei mie nosso nossa nossos nossas temos meu minha meus minhas wij ons onze ik mijn jag
    """.split())  # noqa: SIM905 (a list of words; not "io", "eu", "vi", "mon", "var": words of English text and code too)
# German's short words that English does not also use ("die", "was", "am", "war" are both): German capitalises every noun
GERMAN = frozenset("""der das und ist nicht ich du wir ihr mit auf für bei jetzt ein eine einen zu von im den dem des auch
    noch aber oder wie wo wer meine mein meinen meiner sind habe hat gibt heißt seine""".split()) | GERMAN_MORE  # noqa: SIM905


def _german(query: str) -> bool:
    """Whether a query reads as German, where a capital says a noun, not a name: "In welcher Stadt wohne ich?" had
    asked for a "Stadt" no message names, and its recall came back empty."""
    words = WORD_RE.findall(query.lower())
    german = sum(1 for w in words if w in GERMAN)
    return german > 0 and german >= sum(1 for w in words if w in STOP_WORDS and w not in GERMAN)


def _acronyms(query: str) -> set[str]:
    """The words of `query` written in capitals ("CHF", "AWS", "PRs"), as `acronym` reads them."""
    return {a for w in WORD_RE.findall(fold(query)) if (a := acronym(w))}


# an acronym's plural or possessive: its capitals and a small "s" ("PRs", "APIs", "IDs", "URLs", "PR's")
ACRONYM_ENDING = re.compile(r"(?<=[A-Z\d])['’]?s$")


def acronym(word: str) -> str | None:
    """`word` as an acronym, lower-cased and singular, when it is one: two capitals or more ("CHF" → "chf"), with an
    ending of plural or possessive ("PRs", "PR's" → "pr"); else None. "PRs" had been read as a name "prs" no message
    speaks of, and the floor emptied "list the rejected PRs" beside "PR 42 rejected: …" (found by a new user)."""
    bare = ACRONYM_ENDING.sub("", word.strip("'’-"))
    return bare.lower() if len(bare) > 1 and bare.isupper() else None


# words that ask what someone said or where they stand, not about a thing they spoke of: "what did Raj say" asks of Raj
# alone, and a message naming him is its evidence (a founder's "tues: sequoia w raj. he liked the wedge …" had been no
# evidence of it, since it does not say "say", and "what did Raj say", "status of Initialized" had no hits)
SPEECH = frozenset("""say says said saying tell tells told think thinks thought mention mentions mentioned status update
    updates news""".split())  # noqa: SIM905 (a list of words)


def _held(hits: list[Hit], cosines: dict[str, float], query: str, names: list[str], near: float,
          mention: float) -> set[str]:
    """The words of the hits that speak of someone, for a query about a third party: a
    hit's speaker (`Message.speaker`) always, and a full name the query says when the hit
    says it too (`full_names`: "Misaki Tanaka"); its words when it is near the query in
    meaning (cosine ≥ `near`), or when the query asks nothing but the names ("Who is
    Anthony?"; "what did Raj say", `SPEECH` alone, of a hit naming every one asked of in its
    prose, `_in_prose`: a mention is all the evidence there is). A "John" in a code sample of a large memory, far from the question, does not make a question about another John
    answerable — sharing one topic word ("book", "game") with it does not either, unless
    it is as close as any hit must be (`mention`, the `similarity` floor: "Priya said the
    deploy is blocked", typed without speaker metadata, answers "What did Priya say about
    the deploy?" at a cosine of 0.42), or it says two things asked, or the one thing the
    question asks beside the name ("What is Sophie's order?": a far hit naming Sophie and an
    order answers it)."""
    asked = {w for w in _words(query) if w not in STOP_WORDS and w not in names and len(w) > 2}
    if asked and asked <= SPEECH:  # asking nothing but what they said: a hit naming every one of them speaks of them —
        # as its speaker, near the question, or in its prose (not `User(name='John')` in a code sample, nor "Mom's birthday
        # cake recipe": "what did John say?" had held both and the hits beside them)
        return _words(" ".join(text for h in hits if set(names) <= _words(text := f"{h.message.content} {h.message.context}")
                               and all(n in _words(h.message.speaker) or cosines.get(h.message.id, -1.0) >= mention
                                       or _in_prose(n, text) for n in names)))
    if not asked:
        return _words(" ".join(f"{h.message.content} {h.message.context}" for h in hits))
    held: set[str] = set()
    unread = beyond_model(query)
    fulls = full_names(query, names)
    for h in hits:
        held |= _words(h.message.speaker)
        held |= {w for full in fulls if re.search(rf"\b{re.escape(full)}\b", fold(h.message.content).lower()) for w in full.split()}
        cosine = cosines.get(h.message.id)
        if cosine is not None and (unread or beyond_model(h.message.content)):  # its cosine says little: the name it holds
            # speaks for it; and so with a query the model does not read ("… GPUParticles2D の process_material …")
            held |= _words(h.message.content)
            continue
        if cosine is None:  # no vector yet (a turn captured a moment ago): its words speak for it when they hold what is asked
            words = _words(f"{h.message.content} {h.message.context}")
            if words & asked:
                held |= words
            continue  # (as cosine −1, a fresh "the Quuxrelay58 gateway rotates its TLS certificate" was no hit of "… TLS certificate")
        if cosine >= min(near, mention):
            words = _words(f"{h.message.content} {h.message.context}")
            if cosine >= near or _kin(asked, words):  # near the query, or as close as any hit must be and on what is asked
                # (a word's other form counted: "ruled by Queen Sabine III" answers "Who rules Telmarch?")
                held |= words
        elif len(_kin(asked, words := _words(f"{h.message.content} {h.message.context}"))) >= min(2, len(asked)) and words & set(names):
            # far in meaning but naming whom it asks of and saying two things it asks, a word's other form counted ("Mat,
            # can you babysit the recon cron while Dan is out sick?" for "… the job Mat babysat while Dan was sick?"), or
            # all it asks when that is one thing: "paypal worked! order #ES-21140" after "Hi Sophie, … Try PayPal" for
            # "What is Sophie's order?" (cosine 0.26; eight other customers' "my order number is …" were nearer)
            held |= words
    return held


# code a message quotes (a fenced block, an inline span), in which a name is a value, not someone spoken of
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]+`", re.DOTALL)


def _in_prose(name: str, text: str) -> bool:
    """Whether `text` speaks of `name` in its prose: a word of its own, not quoted, called or assigned as code is
    (`User(name='John')`), nor only the owner of a thing ("Mom's birthday cake recipe")."""
    prose = _CODE.sub(" ", fold(text))
    return re.search(rf"(?<![\w'’\"=(.\[{{<])\b{re.escape(name)}\b(?![\w'’\"(\[{{])(?!\s*=)", prose, re.IGNORECASE) is not None


# a capitalised word and the name after it: one person's full name ("Misaki Tanaka"), though the first opens the sentence
FULL_NAME = re.compile(r"\b([A-Z][\w’'-]*)\s+(?=([A-Z][\w’'-]*))")


def full_names(query: str, names: list[str]) -> list[str]:
    """The names of `query` said with the capitalised word before them, lower-cased ("misaki tanaka"): a hit saying
    one speaks of that person, near the question in meaning or not. "What is Misaki Tanaka's email?" had found nothing:
    her pasted email (cosine 0.21, saying "メール", not "email") was read as a passing mention of some other Tanaka."""
    pairs = ((first.lower(), POSSESSIVE_RE.sub("", last).lower()) for first, last in FULL_NAME.findall(fold(query)))
    return [f"{first} {last}" for first, last in pairs if last in names and first not in STOP_WORDS]


def _kin(asked: set[str], words: set[str]) -> set[str]:
    """The words asked that `words` says, or says in another form: five letters alike ("babysat" / "babysit"), or one
    stem of four letters or more under an ending ("rules" / "ruled", "needs" / "need", "stopped" / "stop"; not "notes" /
    "not", "planes" / "plan")."""
    stems = {w[:5] for w in words if len(w) >= 5}
    bases = {b for w in words if w not in STOP_WORDS for b in _bases(w)}
    return {w for w in asked if w in words or len(w) >= 5 and w[:5] in stems or _bases(w) & bases}


_ENDINGS = ("ing", "ed", "es", "s", "d")
_NOT_INFLECTED = frozenset(["evening", "morning", "nothing", "something", "anything", "everything", "during", "ceiling", "wedding",
                            "pudding", "sibling", "darling", "thing", "spring", "string", "bring", "king", "ring", "wing"])


def _bases(word: str) -> set[str]:
    """`word` and its stems under an ending of inflection, four letters or more ("ruled" → rule, "stopped" → stop, "boxes"
    → box only after s, x, z, ch or sh: "planes" is "plane")."""
    out = {word}
    for ending in _ENDINGS:
        if not word.endswith(ending):
            continue
        base = word[: -len(ending)]
        if ending == "es" and not base.endswith(("s", "x", "z", "ch", "sh")) or ending == "ing" and word in _NOT_INFLECTED:
            continue  # ("evening" is no "even"; "meeting" is "meet")
        if len(base) >= 4:
            out.add(base)
        if len(base) >= 5 and base[-1] == base[-2] and ending in ("ed", "ing"):
            out.add(base[:-1])  # "stopped" → stop
    return out


def _not_calendar(query: str) -> tuple[set[str], set[str]] | None:
    """The query's words that are not a month, a weekday, a year or a day's number, and those that are, when it has both
    kinds (else None): a message's own date is in its keyword text, so "… in the call on November 18?" matched every
    message of November and "… in 2026?" every one of the year (found by a studio's assistant: the whole memory came
    back)."""
    terms = query_terms(query)
    plain = {t for t in terms if t not in CALENDAR and t not in _MONTH_ABBR and not _DAY_NUMBER.fullmatch(t)}
    return (plain, set(terms) - plain) if plain and len(plain) < len(terms) else None


_MONTH_ABBR = frozenset(a.lower() for a in _ABBR.split("|"))
_DAY_NUMBER = re.compile(r"(?:[12]?\d|3[01])(?:st|nd|rd|th)?|(?:19|20)\d\d")  # a day of a month, a year


def _says_more_than_its_date(h: Hit, said: tuple[set[str], set[str]] | None) -> bool:
    """A keyword hit matched on more than its date's words: one of the query's other words (or another form of it) in its
    text, or a word of the asked time in its own words ("Harriet accepted 15% on the March invoice" for "… the March
    incident?"), not only in the date its keyword text carries."""
    if said is None:
        return True
    plain, calendar_words = said
    return bool(_kin(plain, _words(f"{h.message.content} {h.message.context}")) or calendar_words & _words(h.message.content))


def introduces(text: str, name: str) -> bool:
    """Whether `text` introduces its speaker as `name` ("Hi! I'm Dana", "my name is José")."""
    return re.search(rf"\b(?:i'?m|i am|my name is|my name's|call me)\s+{re.escape(name)}(?=\s*(?:[,.!;:?)]|$))",
                     fold(text[:2000]).lower().replace("’", "'")) is not None


def addresses(text: str, name: str) -> bool:
    """Whether an assistant's `text` opens by speaking to the user as `name`: the name before a "!" in its first
    sentence ("Hi Tom!", "Olá Ana!", "Nice to meet you, Dana!"), or after at most one word and before a comma ("Hi
    Sophie, your card …", "Tom, …")."""
    opening = re.split(r"(?<=[.!?])\s|\n", fold(text[:2000]).lower().replace("’", "'"), maxsplit=1)[0]
    return re.search(rf"\b{re.escape(name)}\s*!|^\W*(?:\w+\s+)?{re.escape(name)}\s*,", opening) is not None


def _about_nothing(hits: list[Hit], cosines: dict[str, float], query: str, floor: Floor, known: Callable[[str], bool],
                   own: Callable[[str], bool], scope: Mapping[str, str]) -> str | None:
    """The note when `query` asks only of what nothing in scope speaks of, else None: every name it asks of is unknown
    and no message is close in meaning, or every code it asks for is stored nowhere in scope (`query_codes`: a message
    holding another code of its prefix is close to it in meaning, not of it) — and it asks nothing of its user alone
    (`_own_ask`). A word of the scope's values is no name asked of (`scope_words`)."""
    best, needed = max(cosines.values()), floor.for_names(query)
    scoped = scope_words(scope.values())
    codes = [c for c in query_codes(query) if c.lower() not in scoped]
    if needed <= 0 or any(known(c.lower()) for c in codes):
        return None
    names = [n for n in query_names(query) if n not in scoped and n not in {c.lower() for c in codes}]
    if not codes and (not names or best >= needed):
        return None
    missing = _missing(hits, cosines, query, names, floor, needed, known, own)
    if len(missing) < len(names) or _own_ask(query, scoped):
        return None
    where = "".join(f" in {kind} {value}" for kind, value in scope.items())
    if codes:
        return f"nothing stored{where} says {', '.join([*codes, *missing])}: no hits"
    said = f"no message{where} close to this query speaks of" if needed > floor.unknown else f"nothing stored{where} mentions"
    return f"{said} {', '.join(missing)}, and no message is close in meaning (best similarity {best:.2f} < {needed:.2f}): no hits"


def _missing(hits: list[Hit], cosines: dict[str, float], query: str, names: list[str], floor: Floor, needed: float,
             known: Callable[[str], bool], own: Callable[[str], bool]) -> list[str]:
    """The names of `names` no message speaks of: for a query about a third party, one none of its best hits speaks of."""
    if needed <= floor.unknown:
        return [n for n in names if not known(n)]
    held = _held(hits[:TOP], cosines, query, names, floor.unknown, floor.similarity)
    # … a thing named by its acronym is no person met in passing: any message holding it knows it ("Which
    # symbol for CHF?" had no hits beside four messages about CHF, none near the question in meaning) — unless
    # the query also names someone nothing stored mentions ("Would Melanie be a member of the LGBTQ community?")
    acronyms = _acronyms(query)
    stranger = any(n not in acronyms and len(n) > 2 and not known(n) for n in names)
    return [n for n in names if n not in held and not (n in acronyms and not stranger and known(n)) and not own(n)]
    # (the user's own name: their turns never say it, the greeting that does is in another chat — "does Tom have
    # travel insurance?" of Tom's memory, answered "Hi Tom!" in one chat and asking of insurance in another, had
    # no hits while "does tom …", in which no name is read, had four)


def scope_words(values: Iterable[str]) -> frozenset[str]:
    """The words that name the scope a search is asked in: each value given, lower-cased and without accents, and a
    tag's value ("user:tyrell" → user:tyrell, tyrell). Within a scope every message is of it: a support bot's "why do
    Tyrell users get 403 after login?" in channel tyrell had no hits ("no message close to this query speaks of tyrell")
    beside the customer's "After Google Workspace SSO login every user gets 403 Forbidden", which never says "Tyrell"."""
    said = [fold(v).lower() for v in values]
    return frozenset([*said, *(v.rpartition(":")[2] for v in said)])


# a word of letters and digits opening with a letter: a code, a ticket's or an error's ("TCK-4812", "AADSTS50011", "W-9")
CODE_RE = re.compile(r"(?<![\w’'-])[^\W\d_][\w-]*\d[\w-]*")


def query_codes(query: str) -> list[str]:
    """The codes `query` asks for, as said, wherever they stand ("TCK-9999" alone opens its sentence: no name). A code
    is asked for exactly: "TCK-9999", stored nowhere, had found "Will do — TCK-4812 stays open…" and "Closed TCK-4955."
    first (cosines over the similarity floor: the model reads every code of one prefix alike) and no note."""
    return list(dict.fromkeys(c.rstrip("-") for c in CODE_RE.findall(fold(query))))


# where one ask of a query ends and another begins: a sentence's end, or "and" / "or" before a question's word
ASK_BREAK = re.compile(r"(?<=[.?!;])\s+|,?\s+(?:and|or)\s+(?=(?:what|who|whom|whose|where|when|why|how|which|is|are|was|were|do|"
                       r"does|did|can|could|should|will|would|have|has)\b)", re.IGNORECASE)


def _own_ask(query: str, scoped: frozenset[str]) -> bool:
    """Whether one ask of `query` is its user's own and names nothing nor any code: asked in the first or second person
    of something ("what plan are we on" of "what plan are we on and what is our SLA?"), it is asked of a memory that knows
    its user, and what is stored for it answers it whatever the other ask names (a support bot's question had no hits,
    "nothing stored mentions sla", beside the customer's "Pro plan with 22 seats"). An ask in the third person ("… and
    what did she find?") is of whom the query names."""
    asks = [a for a in ASK_BREAK.split(query) if a and a.strip()]
    return len(asks) > 1 and any(personal(a) and not query_codes(a) and not set(query_names(a)) - scoped
                                 and set(query_terms(a)) - STOP_WORDS for a in asks)


def apply_floor(hits: list[Hit], cosines: dict[str, float], query: str, floor: Floor,
                known: Callable[[str], bool], dated: bool = False,
                own: Callable[[str], bool] = lambda name: False,
                scope: Mapping[str, str] | None = None) -> tuple[list[Hit], list[str]]:
    """The hits with evidence enough, and a note when the floor emptied the result.
    `cosines`: raw cosine by message id over every candidate; `known(name)`: whether some
    message in scope holds the word; `dated`: the query names a time of a month or less, and a
    message of that time (`parts["when"]` 1: said then, or naming it) is evidence of its own
    ("What are my plans for this weekend?" and "On Saturday Jonas and I are hiking"); `own(name)`: whether the
    memory's user goes by the name (introduced by it, or spoken to by it), whom no question asks of as a stranger;
    `scope`: the values the search is scoped by ({"channel": "tyrell"}), whose words name no one a hit must speak of."""
    if not floor.active or not cosines or not hits:
        return hits, []
    best = max(cosines.values())
    emptied = _about_nothing(hits, cosines, query, floor, known, own, scope or {})
    if emptied:
        return [], [emptied]
    read = not beyond_model(query)  # a question in a language the model does not read: its cosines say nothing (any two
    # Japanese texts are 0.5–0.8 apart), a keyword is its evidence (found by a studio's assistant: every message came back)
    said = _not_calendar(query)
    kept = [h for h in hits if h.parts.get("fts", 0.0) > 0 and _says_more_than_its_date(h, said)
            or read and cosines.get(h.message.id, -1.0) >= floor.similarity or dated and h.parts.get("when", 0.0) >= 1.0]
    if kept or not hits:
        return kept, []
    if not read:
        return [], [("no stored message matches this query: no keyword match (the embedding model does not read the "
                     "query's language, so closeness in meaning is not weighed): no hits")]
    return [], [("no stored message matches this query: no keyword match, and no message is close in meaning "
                 f"(best similarity {best:.2f} < {floor.similarity:.2f}): no hits")]
