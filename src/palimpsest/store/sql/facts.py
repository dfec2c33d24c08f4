"""The facts part of the Store contract in SQL both backends run (`store/sql/dialect.py`).

Guarded updates are plain `UPDATE … WHERE <column> IS NULL`: on SQLite one writer at a
time; on PostgreSQL under READ COMMITTED a second writer blocks on the row lock and, once
the first commits, re-checks the WHERE against the new row, matches nothing and gets
`Conflict` — one supersession wins. What differs stays with each backend: how a fact's
entities are kept (`_insert_fact`, `_ENTITY_MATCH`), full text and vectors.
"""

from __future__ import annotations

from abc import abstractmethod
from datetime import datetime
from typing import Any

from ...errors import Conflict, InvalidInput, NotFound
from ...records import iso, utcnow
from ..facts_base import END_COLUMNS, Attestation, FactChange, FactLink, FactQuery, FactRow, FactStoreContract, FactUpdate, FactVault
from .dialect import Runner, SQLBackend

FACT_COLUMNS = (
    "id, vault, text, norm, kind, entities, salience, base_confidence, valid_from, recorded_at, valid_to, ended_at, "
    "invalidated_at, expired_at, supersedes, superseded_by, metadata"
)
F = ", ".join(f"f.{c.strip()}" for c in FACT_COLUMNS.split(","))
BELIEVED = "f.expired_at IS NULL AND f.invalidated_at IS NULL"


class SQLFactsMixin(SQLBackend, FactStoreContract):
    _ENTITY_MATCH = ""  # a condition on `f` with two `?`: the fact lists this (lower-cased) entity, or its words hold it
    _CONCURRENT: tuple[type[BaseException], ...] = ()  # what a lost race between writers raises (a Conflict)

    # -- writing -------------------------------------------------------------
    def apply_fact_change(self, change: FactChange) -> bool:
        c = self.dialect.clean
        try:
            with self._writing() as run:
                if change.op_key is not None and not run("INSERT INTO fact_ops VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING 1",
                                                         (change.op_key, iso(utcnow()))):
                    return False
                for v in change.vaults:
                    run("INSERT INTO fact_vaults (name, type, description, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                        (v.name, v.type, c(v.description), v.created_at))
                for f in change.facts:
                    if not run("SELECT 1 FROM fact_vaults WHERE name = ?", (f.vault,)):
                        raise NotFound(f"no fact vault named {f.vault!r}")
                    self._insert_fact(run, f)
                for u in change.updates:
                    self._update_fact(run, u)
                for a in change.attestations:
                    self._need_fact(run, a.fact_id)
                    run("INSERT INTO fact_attestations VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                        (a.fact_id, a.source_type, c(a.source), a.at, a.recorded_at, c(a.note)))
                for x in change.links:
                    self._need_fact(run, x.src)
                    self._need_fact(run, x.dst)
                    run("INSERT INTO fact_links VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                        (x.src, x.dst, x.type, x.recorded_at, x.review, x.reviewed_at))
                for r in change.reviews:
                    if not run.count("UPDATE fact_links SET review = ?, reviewed_at = ? WHERE src = ? AND dst = ? AND type = ? "
                                     "AND review = 'pending'", (r.review, r.reviewed_at, r.src, r.dst, r.type)):
                        raise Conflict(f"no pending review links {r.src} and {r.dst} (already settled?)")
        except self._CONCURRENT as exc:
            raise Conflict(f"a concurrent change won: {exc}") from exc
        return True

    @staticmethod
    @abstractmethod
    def _entity_phrase(entity: str) -> str:
        """`entity` as the full-text phrase `_ENTITY_MATCH` asks the fact's words for."""

    @abstractmethod
    def _insert_fact(self, run: Runner, f: FactRow) -> None:
        """Insert the row and its entities; `Conflict` if its id exists."""

    @staticmethod
    def _update_fact(run: Runner, u: FactUpdate) -> None:
        cols = set(u.set) | set(u.require_null)
        if not cols <= set(END_COLUMNS):
            raise InvalidInput(f"fact updates may only set {END_COLUMNS}")
        sets = ", ".join(f"{c} = ?" for c in u.set) or "id = id"
        guard = "".join(f" AND {c} IS NULL" for c in sorted(cols))
        if not run.count(f"UPDATE facts SET {sets} WHERE id = ?{guard}", (*u.set.values(), u.fact_id)):
            rows = run(f"SELECT {', '.join(END_COLUMNS)} FROM facts WHERE id = ?", (u.fact_id,))
            if not rows:
                raise NotFound(f"no fact with id {u.fact_id!r}")
            state = {c: (iso(v) if isinstance(v, datetime) else v) for c, v in zip(END_COLUMNS, rows[0]) if v is not None and c in cols}
            raise Conflict(f"fact {u.fact_id} changed meanwhile: {state}")

    @staticmethod
    def _need_fact(run: Runner, fact_id: str) -> None:
        if not run("SELECT 1 FROM facts WHERE id = ?", (fact_id,)):
            raise NotFound(f"no fact with id {fact_id!r}")

    # -- reading -------------------------------------------------------------
    def fact_vaults(self) -> list[FactVault]:
        rows = self._fetch("SELECT name, type, created_at, description FROM fact_vaults ORDER BY name")
        return [FactVault(r[0], r[1], self.dialect.load_time(r[2]), r[3]) for r in rows]

    def get_facts(self, ids: list[str]) -> list[FactRow]:
        if not ids:
            return []
        by_id = {f.id: f for f in self.query_facts(FactQuery(ids=ids))}
        return [by_id[i] for i in ids if i in by_id]

    def query_facts(self, q: FactQuery) -> list[FactRow]:
        where, params = self._fact_where(q)
        b = self.dialect.bytewise
        sql = f"SELECT {F} FROM facts f WHERE {where} ORDER BY f.vault{b}, f.id{b}"
        if q.limit is not None:
            sql += f" LIMIT {int(q.limit)}"
        rows = [self._fact(r) for r in self._fetch(sql, params)]
        self._attach(rows)
        return rows

    def _fact_where(self, q: FactQuery) -> tuple[str, list[Any]]:
        """The query's conditions on facts `f`, written with `?`."""
        clauses: list[str] = []
        params: list[Any] = []
        for column, values in (("vault", q.vaults), ("id", q.ids)):
            if values is not None:
                sql, param = self.dialect.in_list(f"f.{column}", values)
                clauses.append(sql)
                params.append(param)
        for column, value in (("kind", q.kind), ("norm", q.norm)):
            if value is not None:
                clauses.append(f"f.{column} = ?")
                params.append(value)
        if q.entity is not None:
            clauses.append(self._ENTITY_MATCH)
            params += [q.entity.lower(), self._entity_phrase(q.entity)]
        if q.source is not None:  # one source, or any of several (a turn's messages, in one query)
            # every source type named, so the (source_type, source) index answers (facts.model.SOURCE_TYPES)
            among, param = (("source = ?", q.source) if isinstance(q.source, str)
                            else self.dialect.in_list("source", list(q.source)))
            clauses.append("f.id IN (SELECT fact_id FROM fact_attestations WHERE source_type IN ('event', 'document', 'person', "
                           f"'system') AND {among})")
            params.append(param)
        if q.recorded_by is not None:
            clauses.append("f.recorded_at <= ?")
            params.append(q.recorded_by)
        if q.believed:
            clauses.append(BELIEVED)
        if q.open_at is not None:
            clauses.append("f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?)")
            params += [q.open_at, q.open_at]
        if q.during is not None:
            since, until = q.during
            clauses += [*(["f.valid_from < ?"] if until else []), *(["(f.valid_to IS NULL OR f.valid_to > ?)"] if since else [])]
            params += [t for t in (until, since) if t]
        if q.open_after is not None:
            # (a fact whose successor starts later is open until then: "we're moving on June 1" leaves the home current)
            clauses.append("(f.superseded_by IS NULL OR f.valid_to > ?) AND (f.valid_to IS NULL OR f.valid_to > ?)")
            params += [q.open_after, q.open_after]
        return " AND ".join(clauses) or self.dialect.true, params

    def _fact(self, r: tuple[Any, ...]) -> FactRow:
        j, t = self.dialect.load_json, self.dialect.load_time
        return FactRow(
            id=r[0], vault=r[1], text=r[2], norm=r[3], kind=r[4], entities=list(j(r[5])), salience=r[6],
            base_confidence=r[7], valid_from=t(r[8]), recorded_at=t(r[9]), valid_to=t(r[10]), ended_at=t(r[11]),
            invalidated_at=t(r[12]), expired_at=t(r[13]), supersedes=r[14], superseded_by=r[15], metadata=dict(j(r[16])),
        )

    def _attach(self, rows: list[FactRow]) -> None:
        if not rows:
            return
        by_id = {f.id: f for f in rows}
        t, b = self.dialect.load_time, self.dialect.bytewise
        ids, param = self.dialect.in_list("fact_id", list(by_id))
        src, _ = self.dialect.in_list("src", list(by_id))
        dst, _ = self.dialect.in_list("dst", list(by_id))
        for r in self._fetch(f"SELECT * FROM fact_attestations WHERE {ids} ORDER BY at, recorded_at, source_type{b}, source{b}", (param,)):
            by_id[r[0]].attestations.append(Attestation(r[0], r[1], r[2], t(r[3]), t(r[4]), r[5]))
        for r in self._fetch(f"SELECT * FROM fact_links WHERE {src} OR {dst} ORDER BY recorded_at, src{b}, dst{b}, type{b}", (param, param)):
            link = FactLink(r[0], r[1], r[2], t(r[3]), r[4], t(r[5]))
            for end in {link.src, link.dst}:
                if end in by_id:
                    by_id[end].links.append(link)

    def pending_reviews(self, vault: str | None) -> list[FactLink]:
        t = self.dialect.load_time
        only = "" if vault is None else "AND f.vault = ?"
        # both still open: a pair whose side was superseded, merged or retracted since cannot be settled (it answered 409)
        both = " AND ".join(f"{a}.expired_at IS NULL AND {a}.invalidated_at IS NULL AND {a}.superseded_by IS NULL" for a in ("f", "g"))
        sql = f"""SELECT l.* FROM fact_links l JOIN facts f ON f.id = l.src JOIN facts g ON g.id = l.dst
                  WHERE l.review = 'pending' AND {both} {only}
                  ORDER BY l.recorded_at, l.src{self.dialect.bytewise}"""
        return [FactLink(r[0], r[1], r[2], t(r[3]), r[4], t(r[5])) for r in self._fetch(sql, () if vault is None else (vault,))]

    def facts_without_vectors(self, model: str, limit: int) -> list[tuple[str, str]]:
        sql = f"""SELECT f.id, f.text FROM facts f WHERE {BELIEVED} AND NOT EXISTS
                  (SELECT 1 FROM fact_vectors v WHERE v.model = ? AND v.fact_rowid = f.rowid) ORDER BY f.rowid LIMIT ?"""
        return [(r[0], r[1]) for r in self._fetch(sql, (model, limit))]

    def fact_ops_applied(self) -> set[str]:
        return {r[0] for r in self._fetch("SELECT op_key FROM fact_ops")}

    def fact_ops_count(self) -> int:
        return int(self._fetch("SELECT count(*) FROM fact_ops")[0][0])

    def fact_stats(self) -> dict[str, Any]:
        def count(sql: str) -> int:
            return int(self._fetch(sql)[0][0])

        total, live = self._fetch(f"SELECT count(*), sum(CASE WHEN {BELIEVED} AND f.valid_to IS NULL THEN 1 ELSE 0 END) FROM facts f")[0]
        return {
            "vaults": count("SELECT count(*) FROM fact_vaults"),
            "facts": total,
            "open": live or 0,
            "attestations": count("SELECT count(*) FROM fact_attestations"),
            "pending_reviews": len(self.pending_reviews(None)),
        }
