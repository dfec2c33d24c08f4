"""Queries: the words a query searches for, and the checks every search applies.

User text is never parsed as search syntax: the query is cut into words here and each
backend quotes every word before it reaches FTS5 or tsquery, so quotes, `NEAR`, `*`, `-`
and parentheses are just text.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import InvalidInput
from ..segment import emoji_words, fold, folded, has_runs, kana_grammar, pieces

WORD_RE = re.compile(r"[\w][\w'’.-]*[\w]|[\w]", re.UNICODE)
MAX_QUERY_CHARS = 10_000
MAX_TERMS = 64

STOP_WORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "aren't", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "i'm", "if", "in", "into", "is", "isn't", "it", "it's", "its", "itself", "just", "let's", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "that's", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "what's", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves"]
)


# the other contractions of the stop words: no keyword of a question, and no name ("I've" mid-question was a name no
# message spoke of, and the relevance floor emptied "List every contractor I've hired this year.": found by a new user)
# (not stop words where those read messages: as those, they moved the conversation stages' rankings, none for the better)
CONTRACTIONS = frozenset("""i've i'll i'd you're you've you'll you'd he's he'd he'll she's she'd she'll we're we've we'll we'd
    they're they've they'll they'd there's here's who's where's how's when's why's wasn't weren't haven't hasn't hadn't
    won't wouldn't can't couldn't shouldn't""".split())  # noqa: SIM905 (a list of words)

# German's question words, auxiliaries and particles that are no English words (one list: `floor.GERMAN` reads them too)
GERMAN_MORE = frozenset("""welche welcher welches welchen wann warum haben hatte wurde werden wird kann können muss soll uns unser
    unsere unseren unserem euch ihre ihren schon erst nach seit dass weil wenn dann nur sehr mehr zum zur vom beim doch nochmal
    kein keine wieder heute gestern bitte danke sich""".split())  # noqa: SIM905 (a list of words)

# the short words of other languages the local model was not trained on (English ones left out): a message made of
# them is one whose cosine with an English question says little ("Meine Kollegin Sabine arbeitet jetzt bei Bosch")
OTHER_LANGUAGES = (frozenset("""der die das und ist nicht ich du er sie wir ihr mit auf für bei jetzt ein eine einen zu von im
    am den dem des auch noch aber oder wie wo wer meine mein sind habe hat le la les et est une un des du je tu il elle nous vous
    avec pour dans chez pas que qui où mais ou ma mon mes ce cette el los las y es una del en con por para pero yo él ella mi mis
    ahora está son lo de se al gli è di che non ma io lui lei mio mia os é um em não eu ele meu minha het een niet ik jij hij zij wij
    op voor nu van och att är jag hon han vi med på för inte
    qué cuál cuáles cuándo dónde cómo quién cuánto cuánta cuántos cuántas nos nuestro nuestra nuestros nuestras vamos hemos
    tenemos tiene tengo muy más también porque cuando donde como entre hasta desde este esta estos estas eso esto fue ser
    estar estamos unos unas aquí hoy ayer mañana
    quel quelle quels quelles quand pourquoi avons avez sont notre votre vos leur leurs aussi très être avoir été
    était sommes ces ça déjà hier demain à au quoi combien est-ce
    quale quando perché abbiamo nostro nostra sono siamo anche delle degli sul sulla oggi ieri domani
    você nós nosso nossa temos também onde qual muito já hoje ontem amanhã
    waar wanneer hebben heeft onze ons ook maar zijn wordt naar""".split()) | GERMAN_MORE) - STOP_WORDS  # noqa: SIM905
# (English words and names stay out: "sin", "ya", "hay", "sus", "come", "dove", "also", "per", "plus", "ab", "comment",
# "encore", "aux", "sur", "su", "les", "seine", "della", "nella", "hoe" — found in review: a German message
# had read as English, its "am 28.6." a value, and a Spanish question's "nos" and "hemos" had matched every message)


# the auxiliaries of those languages ("have", "be": present, imperfect, participle) and the pronouns an inverted French verb
# carries: in a question asked in one of them they are no keyword ("combien j'ai payé pour l'escalade ?" had kept "ai", and
# "quels livres ai-je lus ?" "ai-je": each matched every "j'ai", found by a French-speaking user). Read only in such a
# question, never to tell its language: many are English words too ("war", "bin", "tens", "era", "ha"). (The closed
# paradigm of two verbs, not a stop-word list: PyPI's `stop-words` and `stopwords` lists hold "trabajo", "tiempo", "valor",
# "lavoro", "nome", "mot", "personne", and lack "ai"; the Snowball lists ship only as NLTK data downloaded apart.)
AUXILIARIES = frozenset("""ai as avons avez ont avais avait avions aviez avaient eu suis es est sommes êtes sont étais était
    étions étiez étaient été on ils elles y en lui leur
    he has ha hemos habéis han había habían soy eres es somos sois son era eran fue estoy estás está estamos están estaba
    me te le les
    bin bist ist sind seid war waren habe hast hat haben habt hatte hatten
    ho hai ha abbiamo avete hanno sono sei è siamo siete era
    tenho tens tem temos têm sou és é somos são estou estás está estamos estão foi
    ben bent is zijn heb hebt heeft hebben was""".split()) - STOP_WORDS  # noqa: SIM905 (a list of words)


# French (and Italian) elision: "c'est", "l'amiante", "qu'est-ce", "dell'anno" are two words to a reader, one to the query's
# word pattern; the elided article or pronoun is no keyword, and it says the question is in that language
# (a capital after the apostrophe is a name's: "D'Souza", "O'Brien", "L'Oréal" — two had made an English note another
# language's, found in review)
ELISION = re.compile(r"^(?i:[cdjlmnst]|qu|dell|nell|all|dall|sull)'(?=[^\W\d_A-ZÀ-Þ])")


def elided(word: str) -> tuple[str, str]:
    """A word as said (its case kept) as (its elided article or pronoun, the rest), lower-cased: "c'est" → ("c'",
    "est"), "l'amiante" → ("l'", "amiante"); ("", word) for a word without one ("D'Souza" too)."""
    m = ELISION.match(word)
    return (word[:m.end()].lower(), word[m.end():].lower()) if m else ("", word.lower())


# a French verb and the subject pronoun after it ("ai-je", "habite-t-il", "est-ce"): two words to a reader, one to the
# query's word pattern ("on" only after "-t-": "add-on", "carry-on" are English words)
INVERSION = re.compile(r"^([^\W\d_]+)(?:-t-(il|elle|on|ils|elles)|-(je|tu|il|elle|nous|vous|ils|elles|ce))$")


def inverted(word: str) -> list[str]:
    """A lower-cased word as its verb and inverted pronoun ("ai-je" → ["ai", "je"], "a-t-on" → ["a", "on"]), else [word]."""
    m = INVERSION.match(word)
    return [m.group(1), m.group(2) or m.group(3)] if m else [word]


def query_terms(query: str) -> list[str]:
    """Words of a query, lower-cased, stop words dropped (unless nothing else is left): English ones, another language's
    short words in a question asked in it, a pair of hiragana; a run of Chinese or Japanese as its character bigrams, as
    the index holds it (`segment`), an emoji by its index name, compatibility forms folded (NFKC)."""
    words: list[str] = []
    elisions = 0
    for said in WORD_RE.findall(folded(query)):  # "ﬁle" is "file", "ＡＰＩ" "api"
        said = said.strip("'’.-").replace("’", "'")  # (a typographic apostrophe: "I’ll" is "i'll")
        if said.lower().endswith("'s") and said.lower() not in STOP_WORDS:  # "my sister's dog" asks of "my sister Ana"
            said = said[:-2]
        article, w = elided(said)
        elisions += bool(article)
        for piece in (pieces(w) if has_runs(w) else inverted(w)):
            if piece and piece not in words:
                words.append(piece)
    words += [n for n in emoji_words(query).split() if n not in words]  # an emoji, by the name the index gives it
    foreign = elisions + sum(1 for w in words if w in OTHER_LANGUAGES)  # a question in French, Spanish, German, …: their short words
    other = foreign >= 2 and foreign >= sum(1 for w in words if w in STOP_WORDS)  # (as many as English's: German's "was", "am")
    # (an English little word with an accent is one to the keyword index, which drops accents: "à" matched every "a")
    content = [w for w in words if w not in STOP_WORDS and w not in CONTRACTIONS and not (other and (w in OTHER_LANGUAGES or w in AUXILIARIES)) and not kana_grammar(w)
               and not (w.isalpha() and not w.isascii() and fold(w) in STOP_WORDS)]
    return (content or words)[:MAX_TERMS]  # (a pair of hiragana: "リヨン事務所の家賃はいくらですか？" had found "はい、お願いします。")


def check_query(query: Any) -> str:
    """A query is a string; past `MAX_QUERY_CHARS` it is cut, not refused (`cut_note` says so): a recall hook's query is
    the user's prompt as typed, and a prompt holding a pasted log is still a turn to recall for."""
    if not isinstance(query, str):
        raise InvalidInput(f"query must be a string, got {type(query).__name__}")
    if len(query) > MAX_QUERY_CHARS:
        query = query[:MAX_QUERY_CHARS]
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate: bytes that were not UTF-8 (a shell's "\xff")
        raise InvalidInput(f"query holds a lone surrogate at position {exc.start} (bytes that are not UTF-8); send valid Unicode") from None
    return query


def cut_note(query: Any) -> list[str]:
    """The note for a query `check_query` cut, said beside its answer (a 5 MB recall query had been read and echoed
    whole: 11.6 s, and an answer of 5,022,848 bytes)."""
    if not isinstance(query, str) or len(query) <= MAX_QUERY_CHARS:
        return []
    return [f"the query is {len(query):,} characters: only its first {MAX_QUERY_CHARS:,} were read"]


def check_scope(name: str, value: Any) -> None:
    """A scope (`tag`, `agent`, `channel`, `session`, `role`, `project`) given is a non-empty string, never read as none: a
    chat bot's `tag=user_tag or ""` had answered one customer with every customer's memory."""
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise InvalidInput(f"{name} must be a non-empty string (leave it out for no {name} scope), got {value!r}")


def check_limit(limit: Any, most: int = 1000) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= most:
        raise InvalidInput(f"limit must be an integer from 1 to {most}")
    return limit


MAX_PAGE = 1000
MAX_OFFSET = 1_000_000_000  # SQLite integers are 64-bit: a larger offset is an overflow, not a page


def check_page(limit: Any, offset: Any) -> None:
    """A page of results: `limit` from 1 to `MAX_PAGE`, `offset` from 0."""
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
    if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset <= MAX_OFFSET:
        raise InvalidInput(f"offset must be an integer from 0 to {MAX_OFFSET:,}")
