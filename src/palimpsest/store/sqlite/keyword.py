"""Keyword and substring search on SQLite: FTS5 with BM25, bounded per query, and trigrams.

An any-word query is cut by document frequency into rare and common terms so that only
a window of the common terms' matches is scored (`keyword_search` says how); substring
search reads the trigram index, brought up to date lazily (migration 0009). Compaction
merges FTS5 segments and folds a large WAL back into the file.
"""

from __future__ import annotations

from typing import Any

from ...records import Message
from ..base import BM25_WINDOW, RARE_MATCHES, Filters, split_by_rarity
from ..sql.messages import M
from .connection import BUSY_TIMEOUT_MS, SQLiteConnection
from .rows import _TRI_COLUMNS, filter_sql, fts_phrase, row_to_message

CONTEXT_WEIGHT = 0.5
# keyword search: RARE_MATCHES and BM25_WINDOW (store/base.py), and with a filter, of the
# common terms' newest FILTERED_WINDOW matches those that pass it (see keyword_search)
FILTERED_WINDOW = 2000
WAL_FOLD_BYTES = 16 << 20  # compact_index checkpoints a WAL larger than this when it has nothing to merge
FOLD_WAIT_MS = 200  # ... waiting this long at most for readers and other writers


def _fts_source(where: str) -> str:
    """The full-text table, joined to the messages when a filter needs their columns. CROSS
    JOIN keeps the full-text match as the outer loop: with a session filter the planner
    preferred walking the session's rows and probing FTS5 for each."""
    return "messages_fts" if where == "1" else "messages_fts CROSS JOIN messages m ON m.rowid = messages_fts.rowid"


class SQLiteKeywordMixin(SQLiteConnection):
    # set by the store
    _df_cache: dict[str, int]
    _df_total: int

    def keyword_search(self, terms: list[str], filters: Filters, limit: int, match_all: bool) -> list[tuple[Message, float]]:
        """BM25 over the FTS5 index, with a bounded amount of scoring work per query.

        FTS5 computes BM25 for every match (~1 µs each, more with a filter, which reads each
        match's row), so a common word over 100,000 messages cost tens of milliseconds. An
        any-word query is therefore cut by document frequency into rare terms (together at
        most RARE_MATCHES matches) and common ones, and run as three parts: messages with a
        rare term, and with a rare and a common one — both scored in full, so a rare word is
        found however old its message — and with a common term, of which only the newest
        BM25_WINDOW are scored. A message in several parts keeps its best score, which is
        its score in the plain any-word query (FTS5 counts each term's IDF over the whole
        table, and a term a message lacks adds nothing to its BM25).
        An all-words query is one part, windowed the same way when it matches more."""
        if not terms:
            return []
        freq = self._doc_freqs(terms)
        half = self._df_total // 2
        informative = [t for t in terms if freq.get(t, 0) <= half]
        where, params = filter_sql(filters)
        if match_all:
            # all terms in more than half the messages: BM25 cannot tell the matches apart
            # (every IDF clamps to ~0); take the newest matches, scored alike
            parts = [(" ".join(fts_phrase(t) for t in terms), True, bool(informative))]
        elif not informative or not freq:
            parts = [(" OR ".join(fts_phrase(t) for t in (informative or terms)), bool(freq), bool(informative))]
        else:
            rare, common = split_by_rarity(informative, freq, RARE_MATCHES)
            r = "(" + " OR ".join(fts_phrase(t) for t in rare) + ")"
            c = "(" + " OR ".join(fts_phrase(t) for t in common) + ")"
            if rare and common:
                # overlapping parts, each message kept at its best (= full) score: `r` alone
                # scores messages without common words exactly, and the others below their
                # score in `r AND c`; the window of `c` alone likewise. This way only one
                # part pays bm25()'s statistics pass over the long match lists of both.
                parts = [(r, False, True), (f"{r} AND {c}", False, True), (c, True, True)]
            else:
                parts = [(r if rare else c, not rare, True)]
        rows = self._ranked_messages(parts, where, params, limit, windowed=True)
        if len(rows) < limit and where != "1" and any(w for _, w, _ in parts):
            rows = self._ranked_messages(parts, where, params, limit, windowed=False)  # a filter left the window short
        return [(row_to_message(r), -float(r[-1])) for r in rows]

    def count_matches(self, terms: list[str], filters: Filters, cap: int) -> int:
        # no BM25: counting all-word matches skips the per-term statistics FTS5's bm25()
        # gathers first (a pass over every term's whole match list)
        where, params = filter_sql(filters)
        sql = f"SELECT count(*) FROM (SELECT 1 FROM {_fts_source(where)} WHERE messages_fts MATCH ? AND {where} LIMIT ?)"
        return self._reader.execute(sql, (" ".join(fts_phrase(t) for t in terms), *params, cap)).fetchone()[0]

    def _ranked_messages(self, parts: list[tuple[str, bool, bool]], where: str, params: list[Any], limit: int, windowed: bool) -> list[Any]:
        """The best `limit` rows over the parts (FTS5 expression, windowed?, scored?), with
        their BM25 rank (negative: lower is better), in one statement."""
        source = _fts_source(where)
        selects, args = [], []
        for expr, window, scored in parts:
            cond = f"messages_fts MATCH ? AND {where}"
            edge = None
            if window and windowed:
                # with a filter, the window is the newest FILTERED_WINDOW matches, of which
                # only those passing the filter are read and scored (the caller widens to
                # every match when that leaves fewer than `limit`)
                size = BM25_WINDOW if where == "1" else FILTERED_WINDOW
                edge = self._reader.execute(
                    "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?", (expr, size)
                ).fetchone()
            if edge is not None:  # more matches than the window: the newest ones only
                cond += f" AND messages_fts.rowid > {int(edge[0])}"
            rank = f"bm25(messages_fts, 1.0, 0.5, 0.5, {CONTEXT_WEIGHT})" if scored else "-1e-6"
            order = "rank, messages_fts.rowid DESC" if scored else "messages_fts.rowid DESC"
            # rank and cut on (rowid, score) alone, then fetch the few rows kept: sorting whole
            # rows (content up to 16,000 characters) of every match made common words slow
            selects.append(f"SELECT * FROM (SELECT messages_fts.rowid AS rowid, {rank} AS rank FROM {source} WHERE {cond} ORDER BY {order} LIMIT ?)")
            args += [expr, *params, limit]
        best = f"SELECT rowid, min(rank) AS rank FROM ({' UNION ALL '.join(selects)}) GROUP BY rowid"
        sql = f"""SELECT {M}, r.rank FROM ({best}) r JOIN messages m ON m.rowid = r.rowid
                  ORDER BY r.rank, r.rowid DESC LIMIT ?"""
        return self._reader.execute(sql, (*args, limit)).fetchall()

    def _doc_freqs(self, terms: list[str]) -> dict[str, int]:
        """Messages holding each term, counted up to half the index (more cannot matter:
        FTS5's BM25 gives such a term an IDF of ~0, clamped to 1e-6), or {} while the index
        is small enough to score every match. Counted once per term, recounted when the
        index has grown or shrunk by a tenth; a stale count only moves a term between the
        rare and common parts, which together always cover every match."""
        total = self._reader.execute("SELECT coalesce(max(rowid), 0) FROM messages").fetchone()[0]
        if total < 1000:
            return {}
        if not 0.9 * self._df_total <= total <= 1.1 * self._df_total:
            self._df_cache, self._df_total = {}, total
        sql = "SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?)"
        for term in terms:
            if term not in self._df_cache:
                self._df_cache[term] = self._reader.execute(sql, (fts_phrase(term), self._df_total // 2 + 1)).fetchone()[0]
        return {t: self._df_cache[t] for t in terms}

    def compact_index(self, budget: int = 500) -> bool:
        # FTS5's 'merge' command: about `budget` pages of merging on levels holding at least
        # four segments (writers merge only at sixteen, migration 0014); it made changes,
        # counted as two or more, exactly when there was work to do
        with self._tx() as conn:
            before = conn.total_changes
            conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('merge', ?)", (budget,))
            if conn.total_changes - before >= 2:
                return True
        # Nothing left to merge: fold a large WAL back into the file. Pages still in the WAL
        # are read with read() through the page cache, not from the memory map, and after a
        # bulk load or a merge that is most of the index: keyword p95 6.9 ms folded against
        # 10.4 ms not, at 100,000 messages (bench/search.py). TRUNCATE waits for the readers
        # of older snapshots and holds off writers meanwhile, so it waits FOLD_WAIT_MS at
        # most (a long scan may be reading): busy, it is simply tried next time.
        wal = self.path.with_name(self.path.name + "-wal")
        if wal.exists() and wal.stat().st_size > WAL_FOLD_BYTES:
            with self._write_lock:
                self._writer.execute(f"PRAGMA busy_timeout = {FOLD_WAIT_MS}")
                try:
                    self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                finally:
                    self._writer.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return False

    def _catch_up_trigrams(self) -> None:
        """Bring the trigram index up to the newest message (migration 0009 says why)."""
        upto, newest = self._reader.execute("SELECT upto, (SELECT coalesce(max(rowid), 0) FROM messages) FROM trigram_cursor").fetchone()
        if newest <= upto:
            return
        with self._tx() as conn:
            upto = conn.execute("SELECT upto FROM trigram_cursor").fetchone()[0]
            conn.execute(f"INSERT INTO messages_tri (rowid, {_TRI_COLUMNS}) SELECT rowid, {_TRI_COLUMNS} FROM messages WHERE rowid > ?", (upto,))
            conn.execute("UPDATE trigram_cursor SET upto = (SELECT coalesce(max(rowid), 0) FROM messages)")

    def substring_search(self, fragment: str, filters: Filters, limit: int) -> list[Message]:
        where, params = filter_sql(filters)
        if len(fragment) >= 3:
            self._catch_up_trigrams()
            sql = f"""SELECT {M} FROM messages_tri JOIN messages m ON m.rowid = messages_tri.rowid
                      WHERE messages_tri MATCH ? AND {where} ORDER BY m.created_at DESC LIMIT ?"""
            return [row_to_message(r) for r in self._reader.execute(sql, (fts_phrase(fragment), *params, limit))]
        # SQLite's lower() folds ASCII only, so the fragment is folded by it too: Python's
        # "À".lower() is "à", which SQLite's lower("À") never equals (a short "À" found nothing)
        sql = f"""SELECT {M} FROM messages m WHERE (instr(lower(m.content), lower(?)) > 0
                  OR instr(lower(coalesce(m.tool_result, '')), lower(?)) > 0)
                  AND {where} ORDER BY m.created_at DESC LIMIT ?"""
        return [row_to_message(r) for r in self._reader.execute(sql, (fragment, fragment, *params, limit))]
