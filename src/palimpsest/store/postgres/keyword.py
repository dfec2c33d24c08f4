"""Keyword search on PostgreSQL: BM25 as SQLite's FTS5 computes it, over a tsvector.

Full text is a generated, weighted `tsvector` (GIN). Each user term becomes its own
`phraseto_tsquery`, so no user text is ever parsed as query syntax. A cheap rank picks
the best `_CANDIDATES` matches, which get FTS5's exact BM25 (`_bm25`) from the
tsvector's positions; `keyword_search` says which of SQLite's shortcuts are mirrored.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import psycopg

from ...records import Message
from ..base import BM25_WINDOW, RARE_MATCHES, Filters, split_by_rarity
from ..sql.messages import M
from .connection import PostgresConnection
from .rows import _row_to_message, _words, filter_sql

_TS_WEIGHTS = "{0.1, 0.5, 0.5, 1.0}"  # D, C (context), B (tool name/result), A (content): as SQLite's bm25


# BM25 as FTS5's bm25(): k1, b, and its column weights by tsvector weight label
# (content 1.0, tool_name and tool_result 0.5, context 0.5 = sqlite/keyword.py CONTEXT_WEIGHT)
_K1, _B = 1.2, 0.75


_COLUMN_WEIGHTS = {"A": 1.0, "B": 0.5, "C": 0.5, "D": 0.0}


_CANDIDATES = 300  # matches given the exact BM25, the best by the cheap rank (at least 4 × limit)


_RARE_MATCHES = RARE_MATCHES  # any-word, unfiltered: the rarest terms' matches, up to this many, all ranked


_BM25_WINDOW = BM25_WINDOW  # and of the other terms, about the newest this many matches (store/base.py)


_BM25_EXACT = 5000  # up to this many messages, N, avgdl and every document frequency are exact


_BM25_COMMON = 0.01  # above _BM25_EXACT, lexemes ANALYZE saw in >= 1 % of rows take its frequency


class PostgresKeywordMixin(PostgresConnection):
    # set by the store
    _bm25_cache: _Bm25Stats | None = None

    def keyword_search(self, terms: list[str], filters: Filters, limit: int, match_all: bool) -> list[tuple[Message, float]]:
        """BM25 as SQLite's FTS5 computes it (`_bm25`: same IDF, k1, b, column weights, phrase
        counts from the tsvector's positions, document length in tokens), given to the best
        `_CANDIDATES` matches by a cheap rank (the IDF of the terms held, then `ts_rank`).
        SQLite's shortcuts are mirrored: terms in more than half the messages are dropped
        from an any-word query (their IDF is ~0; when every term is that common, the newest
        matches come back, scored alike), and an unfiltered any-word query ranks every match
        of its rarest terms but only about the newest `_BM25_WINDOW` of the others."""
        terms = _words(terms)
        if not terms or limit <= 0:
            return []
        where, params = filter_sql(filters)
        with self._read() as conn:
            # each term's tokens in order: (lexeme, offset from the first), a phrase when several
            rows = conn.execute(
                """SELECT t, ARRAY(SELECT u.lexeme FROM unnest(to_tsvector('palimpsest', t)) AS u, unnest(u.positions) AS p
                                  ORDER BY p),
                          ARRAY(SELECT p FROM unnest(to_tsvector('palimpsest', t)) AS u, unnest(u.positions) AS p ORDER BY p),
                          (SELECT coalesce(max(rowid), 0) FROM messages)
                   FROM unnest(%s::text[]) AS t""", (terms,)).fetchall()
            phrases = {t: [(lx, pos - ps[0]) for lx, pos in zip(lxs, ps)] for t, lxs, ps, _ in rows if lxs}
            lexemes = {t: sorted({lx for lx, _ in phrases.get(t, [])}) for t in terms}
            terms = [t for t in terms if lexemes[t]]  # a term of punctuation alone is no word
            if not terms:
                return []
            stats = self._bm25_stats(conn, rows[0][3])
            df = self._doc_freqs(conn, stats, terms, lexemes)
            informative = terms if stats.n < 1000 else [t for t in terms if df[t] <= 0.5 * stats.n]
            if informative and not match_all:
                terms = informative
            # Each term is its own phrase query: user text is a value, never tsquery syntax.
            query = (" && " if match_all else " || ").join(["phraseto_tsquery('palimpsest', %s)"] * len(terms))
            if not informative:
                sql = f"""WITH q AS (SELECT {query} AS q) SELECT {M}, 1e-6 FROM messages m, q
                          WHERE m.fts @@ q.q AND {where} ORDER BY m.rowid DESC LIMIT %s"""
                rows = conn.execute(sql, (*terms, *params, limit)).fetchall()
                return [(_row_to_message(r), float(r[-1])) for r in rows]
            idf = {t: _idf(stats.n, df[t]) for t in terms}
            match, match_params = "m.fts @@ q.q", []
            if not match_all and where == "true" and stats.n >= 1000:
                # As SQLite: the rarest terms, together at most _RARE_MATCHES matches, are
                # scored in every match; of the others, only about the newest _BM25_WINDOW
                # matches: those above the rowid that many are expected above (their matches
                # spread evenly over the rowids). Spelt as rare OR (common AND rowid > edge),
                # the planner ORs the rare terms' GIN bitmap with the common terms' ANDed
                # with the primary key's range, so no row outside the window is read.
                rare, common = split_by_rarity(terms, df, _RARE_MATCHES)
                matches = sum(df[t] for t in common)
                if matches > _BM25_WINDOW:
                    edge = stats.max_rowid - int(_BM25_WINDOW * stats.max_rowid / matches)
                    newest = " || ".join(["phraseto_tsquery('palimpsest', %s)"] * len(common))
                    match, match_params = f"(m.fts @@ ({newest}) AND m.rowid > %s)", [*common, edge]
                    if rare:
                        either = " || ".join(["phraseto_tsquery('palimpsest', %s)"] * len(rare))
                        match, match_params = f"(m.fts @@ ({either}) OR {match})", [*rare, *match_params]
            # The cheap rank: the IDF of the terms a message holds, then ts_rank with the
            # column weights, length-normalised; its best candidates get the exact BM25.
            cheap = " + ".join(["%s * (m.fts @@ phraseto_tsquery('palimpsest', %s))::int"] * len(terms))
            cheap_params = [x for t in terms for x in (idf[t], t)]
            wanted = sorted({lx for t in terms for lx in lexemes[t]})
            sql = f"""WITH q AS (SELECT {query} AS q),
                      c AS (SELECT m.rowid, m.fts FROM messages m, q WHERE {match} AND {where}
                            ORDER BY {cheap} DESC, ts_rank('{_TS_WEIGHTS}', m.fts, q.q, 1) DESC, m.rowid DESC LIMIT %s),
                      d AS (SELECT c.rowid, c.fts, (SELECT sum(cardinality(x.positions))::int FROM unnest(c.fts) AS x) AS dl FROM c)
                      SELECT d.rowid, d.dl, u.lexeme, u.positions, u.weights
                      FROM d CROSS JOIN LATERAL unnest(d.fts) AS u WHERE u.lexeme = ANY(%s)"""
            rows = conn.execute(sql, (*terms, *match_params, *params, *cheap_params,
                                      max(_CANDIDATES, 4 * limit), wanted)).fetchall()
            found: dict[int, tuple[int, dict[str, dict[int, str]]]] = {}
            for rowid, dl, lexeme, positions, labels in rows:
                found.setdefault(rowid, (dl or 1, {}))[1][lexeme] = dict(zip(positions, labels))
            scored = [(_bm25({t: _phrase_freq(phrases[t], at) for t in terms}, idf, dl, stats.avgdl), rowid)
                      for rowid, (dl, at) in found.items()]
            scored.sort(key=lambda x: (-x[0], -x[1]))
            top = scored[:limit]
            if not top:
                return []
            by_rowid = {r[0]: r[1:] for r in conn.execute(f"SELECT m.rowid, {M} FROM messages m WHERE m.rowid = ANY(%s)",
                                                          ([r for _, r in top],))}
        return [(_row_to_message(by_rowid[r]), score) for score, r in top if r in by_rowid]

    def count_matches(self, terms: list[str], filters: Filters, cap: int) -> int:
        terms = _words(terms)
        if not terms:
            return 0
        where, params = filter_sql(filters)
        query = " && ".join(["phraseto_tsquery('palimpsest', %s)"] * len(terms))
        sql = f"SELECT count(*) FROM (SELECT 1 FROM messages m WHERE m.fts @@ ({query}) AND {where} LIMIT %s) x"
        return self._all(sql, (*terms, *params, cap))[0][0]

    def _bm25_stats(self, conn: psycopg.Connection[Any], max_rowid: int) -> _Bm25Stats:
        """N, the average document length and the newest rowid, with a cache of document
        frequencies. Recomputed when messages were added (under 5,000 messages: exact;
        above: when the count moved by a tenth or a minute passed, the average length
        from a sample of ~5,000 rows) or removed by this store."""
        s = self._bm25_cache
        if s is not None and (s.max_rowid == max_rowid or (
                s.n >= _BM25_EXACT and max_rowid <= 1.1 * s.max_rowid and time.monotonic() - s.at < 60)):
            return s
        n = conn.execute("SELECT count(*) FROM messages").fetchone()[0]  # type: ignore[index]
        sample = "" if n <= _BM25_EXACT else f"TABLESAMPLE SYSTEM ({min(100.0, 100.0 * _BM25_EXACT / n):.4f}) REPEATABLE (1)"
        avgdl = conn.execute(
            f"SELECT avg((SELECT sum(cardinality(u.positions)) FROM unnest(m.fts) AS u)) FROM messages m {sample}"
        ).fetchone()[0]  # type: ignore[index]
        common: dict[str, float] = {}
        if n > _BM25_EXACT:  # ANALYZE's most common lexemes: their frequencies, instead of counting
            row = conn.execute(
                """SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats
                   WHERE tablename = 'messages' AND attname = 'fts' AND schemaname = current_schema()"""
            ).fetchone()
            if row and row[0] and row[1]:
                common = {lx: f for lx, f in zip(row[0], row[1]) if f >= _BM25_COMMON}
        self._bm25_cache = _Bm25Stats(n=n, avgdl=float(avgdl or 1.0), max_rowid=max_rowid, at=time.monotonic(), common=common)
        return self._bm25_cache

    @staticmethod
    def _doc_freqs(conn: psycopg.Connection[Any], stats: _Bm25Stats, terms: list[str],
                   lexemes: dict[str, list[str]]) -> dict[str, int]:
        """How many messages hold each term (cached with the stats; counted up to half the
        messages, beyond which FTS5's IDF is ~0 anyway). A single lexeme that ANALYZE found
        in at least 1 % of its sample takes that frequency: counting it exactly would read
        tens of thousands of rows, and its IDF hardly moves with a sampling error."""
        for t in terms:
            if t not in stats.df and len(lexemes[t]) == 1 and lexemes[t][0] in stats.common:
                stats.df[t] = round(stats.common[lexemes[t][0]] * stats.n)
        missing = [t for t in terms if t not in stats.df]
        if missing:
            stats.df.update(conn.execute(
                """SELECT t, (SELECT count(*) FROM (SELECT 1 FROM messages
                                                    WHERE fts @@ phraseto_tsquery('palimpsest', t) LIMIT %s) x)
                   FROM unnest(%s::text[]) AS t""", (stats.n // 2 + 1, missing)).fetchall())
        return {t: stats.df[t] for t in terms}


@dataclass
class _Bm25Stats:
    n: int
    avgdl: float
    max_rowid: int
    at: float
    common: dict[str, float]
    df: dict[str, int] = field(default_factory=dict)


def _idf(n: int, df: int) -> float:
    """FTS5's IDF: log((N - n + 0.5) / (n + 0.5)), and 1e-6 where that is not positive."""
    value = math.log((n - df + 0.5) / (df + 0.5)) if n else 0.0
    return value if value > 0 else 1e-6


def _bm25(freqs: dict[str, float], idf: dict[str, float], length: int, avgdl: float) -> float:
    """FTS5's bm25() of one row: Σ idf · f·(k1+1) / (f + k1·(1 − b + b·|D|/avgdl)), f being the
    term's weighted count over the columns and |D| the row's tokens in all columns."""
    norm = _K1 * (1 - _B + _B * length / (avgdl or 1.0))
    return sum(idf[t] * f * (_K1 + 1) / (f + norm) for t, f in freqs.items() if f > 0)


def _phrase_freq(phrase: list[tuple[str, int]], at: dict[str, dict[int, str]]) -> float:
    """A term's weighted count in one row: its occurrences (a phrase: its lexemes at their
    offsets from a position of the first), each weighted by the column it is in."""
    first, rest = phrase[0], phrase[1:]
    total = 0.0
    for pos, label in at.get(first[0], {}).items():
        if all(pos + off in at.get(lx, {}) for lx, off in rest):
            total += _COLUMN_WEIGHTS.get(label, 0.0)
    return total
