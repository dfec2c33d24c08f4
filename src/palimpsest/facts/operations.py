"""Fact operations: vaults, writing, confirming, revising, superseding, closing,
retracting, disputing, review, and the commit every one of them goes through — journaled
as a decision first (`decisions.DecisionLog`), then applied in one store transaction,
then the snapshot refreshed. See `model.py` for the model and its vocabulary."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..decisions import DecisionLog
from ..errors import Conflict, InvalidInput, NotFound, PalimpsestError, StoreUnavailable
from ..records import check_text, iso, utcnow
from ..search import Weights
from ..store.facts_base import Attestation, FactChange, FactLink, FactRow, FactUpdate, FactVault, ReviewUpdate
from .curator import Curator
from .model import (
    BELIEVED,
    DEFAULT_VAULT,
    DOMAIN,
    OPEN,
    SETTLEMENTS,
    VAULT_RE,
    VAULT_TYPES,
    Clock,
    Fact,
    JournaledDecision,
    _entities,
    _kind,
    _new_id,
    _text,
    _time,
    _unit,
    normalise,
    operation,
    parse_source,
)
from .reads import FactReads
from .snapshot import FactSnapshots

log = logging.getLogger(__name__)
FACT_WEIGHTS = Weights(fts=0.3, semantic=0.3, temporal=0.3, importance=0.1)


class Facts(FactReads, FactSnapshots):
    """Fact vaults of one memory: operations, queries, history, snapshot and replay.

    Reach it as `memory.facts`; the curator is `memory.facts.curator`."""

    def __init__(self, store: Any, home: Path, *, embedder: Callable[[], Any] | None = None, clock: Clock = utcnow,
                 snapshot: bool = True, weights: Weights | None = None, decisions: DecisionLog | None = None,
                 llm: Callable[[], Any] | None = None, pair_model: bool = True,
                 owners: tuple[str, ...] = ("channel", "user", "project")) -> None:
        self.store = store
        self.pair_model = pair_model  # the curator's pair model on (`pairs`), else its rules alone
        self.owners = owners  # what tells whose a statement is (setting `fact_owners`; `curator._same_owner`)
        self.home = Path(home)
        self.decisions = decisions or DecisionLog(self.home)
        self.clock = clock
        self.snapshot_on_change = snapshot
        self._embedder = embedder or (lambda: None)
        self._llm = llm or (lambda: None)
        self.weights = weights or FACT_WEIGHTS
        self._curator: Any = None
        self._local = threading.local()
        self._snapshot_cache: tuple[tuple[int, int, int] | None, dict[tuple[str, str], str], int] | None = None
        self.needs_replay = False  # a decision was journaled but the store went away before it was applied
        # a store with no fact and no fact operation beside a journal that has some was
        # rebuilt or replaced: bring the facts back from the journal (principle 2)
        # (how many decisions that applied: `facts restore --journal` right after is then done, not refused)
        self.restored_on_open = self.decisions.restore_if_lost(
            DOMAIN, lambda: not store.fact_stats()["facts"] and not store.fact_ops_applied(), self.replay)

    @property
    def embedder(self) -> Any:
        """The embedder, or None when there is none or it cannot load: facts never fail
        for want of vectors (keyword search and the lexical gate still work)."""
        try:
            return self._embedder()
        except Exception as exc:
            log.warning("facts without embedder: %s", exc)
            return None

    @property
    def llm(self) -> Any:
        """The chat endpoint for the curator's undecided band, or None (the deterministic path)."""
        try:
            return self._llm()
        except Exception as exc:
            log.warning("curating without the LLM: %s", exc)
            return None

    @property
    def curator(self) -> Any:
        if self._curator is None:
            self._curator = Curator(self)
        return self._curator

    def now(self) -> str:
        """The current operation's moment, or the clock's time outside one."""
        return getattr(self._local, "now", None) or iso(self.clock())

    # -- vaults --------------------------------------------------------------
    @operation
    def init_vault(self, name: str, type: str = "episodic", description: str | None = None) -> FactVault:
        """Register a fact vault (idempotent when it exists with the same type)."""
        if not isinstance(name, str) or not VAULT_RE.fullmatch(name):
            raise InvalidInput("vault names are 1–64 letters, digits and ._- (not starting with punctuation)")
        if type not in VAULT_TYPES:
            raise InvalidInput(f"fact vaults are of type {', '.join(VAULT_TYPES)}; got {type!r}")
        existing = {v.name: v for v in self.store.fact_vaults()}
        if name in existing:
            if existing[name].type != type:
                raise Conflict(f"vault {name!r} exists with type {existing[name].type!r}")
            return existing[name]
        vault = FactVault(name, type, self.now(), check_text(description, "description"))
        self._commit("init_vault", FactChange(vaults=[vault]), name)
        return vault

    def vaults(self) -> list[FactVault]:
        return self.store.fact_vaults()

    def _vault(self, name: str | None, change: FactChange) -> str:
        name = name or DEFAULT_VAULT
        if name in {v.name for v in self.store.fact_vaults()}:
            return name
        if name != DEFAULT_VAULT:
            raise NotFound(f"no fact vault named {name!r}; create it with `palimpsest vault init {name} --type episodic`")
        change.vaults.append(FactVault(DEFAULT_VAULT, "episodic", self.now(), "facts the system writes"))
        return name

    # -- writing -------------------------------------------------------------
    @operation
    def write(self, text: str, *, vault: str | None = None, kind: str = "fact", entities: Any = None,
              salience: float = 0.5, confidence: float = 0.7, valid_from: Any = None, valid_to: Any = None,
              source: Any = None, at: Any = None, metadata: dict[str, Any] | None = None) -> Fact:
        """A new fact, open-ended unless `valid_to` is given (world time; default: now)."""
        change = FactChange()
        row = self._new_row(change, text, vault=vault, kind=kind, entities=entities, salience=salience,
                            confidence=confidence, valid_from=valid_from, valid_to=valid_to, metadata=metadata)
        change.attestations.append(self._attestation(row.id, source, at or row.valid_from))
        self._commit("write", change, row.id)
        return self.get(row.id)

    def _new_row(self, change: FactChange, text: Any, *, vault: str | None, kind: Any, entities: Any, salience: Any,
                 confidence: Any, valid_from: Any, valid_to: Any = None, metadata: Any = None,
                 supersedes: str | None = None) -> FactRow:
        now = self.now()
        text = _text(text)
        start = _time(valid_from, "valid_from") if valid_from is not None else now
        end = _time(valid_to, "valid_to") if valid_to is not None else None
        if end is not None and end <= start:
            raise InvalidInput(f"valid_to ({end}) must be after valid_from ({start})")
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInput("metadata must be an object")
        try:
            metadata = json.loads(json.dumps(metadata or {}, ensure_ascii=False, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"metadata must be plain JSON (no NaN, no objects of other types): {exc}") from None
        row = FactRow(
            id=_new_id(), vault=self._vault(vault, change), text=text, norm=normalise(text), kind=_kind(kind),
            entities=_entities(entities), salience=_unit(salience, "salience"), base_confidence=_unit(confidence, "confidence"),
            valid_from=start, recorded_at=now, valid_to=end, ended_at=now if end else None, supersedes=supersedes,
            metadata=metadata,
        )
        change.facts.append(row)
        return row

    def _attestation(self, fact_id: str, source: Any, at: Any = None, note: str | None = None) -> Attestation:
        kind, ref = parse_source(self.cited(source))
        when = _time(at, "at") if at is not None else self.now()
        return Attestation(fact_id, kind, ref, when, self.now(), check_text(note, "note"))

    @operation
    def confirm(self, fact_id: str, *, source: Any = None, at: Any = None, note: str | None = None) -> Fact:
        """Heard again: one more attestation (confidence and `last_seen` go up), no new fact."""
        row = self._row(fact_id)
        self._need(row, BELIEVED, "confirm")
        heard = self._attestation(row.id, source, at, note)
        if heard.source_type == "event" and any(a.source_type == "event" and a.source == heard.source for a in row.attestations):
            return self.get(row.id)  # one message is one hearing: remembered, then distilled, it had raised the confidence twice
        change = FactChange(attestations=[heard],
                            updates=[FactUpdate(row.id, {}, BELIEVED)])
        self._commit("confirm", change, row.id)
        return self.get(row.id)

    @operation
    def revise(self, fact_id: str, text: str, *, entities: Any = None, kind: str | None = None, source: Any = None) -> Fact:
        """The same statement said better: a new version with the new text, the same valid
        time and every attestation; the old version is kept, expired, and linked."""
        row = self._row(fact_id)
        self._need(row, ("expired_at", "invalidated_at", "superseded_by"), "revise")
        change = FactChange()
        new = self._new_row(change, text, vault=row.vault, kind=kind or row.kind,
                            entities=row.entities if entities is None else entities, salience=row.salience,
                            confidence=row.base_confidence, valid_from=row.valid_from, valid_to=row.valid_to,
                            metadata=row.metadata, supersedes=row.id)
        new.ended_at = row.ended_at
        now = new.recorded_at
        change.attestations += [Attestation(new.id, a.source_type, a.source, a.at, a.recorded_at, a.note) for a in row.attestations]
        if source is not None:
            change.attestations.append(self._attestation(new.id, source))
        change.updates.append(FactUpdate(row.id, {"expired_at": now, "superseded_by": new.id}, ("invalidated_at",)))
        change.links.append(FactLink(new.id, row.id, "revises", now))
        change.links += self._carried_links(row, new.id, now)
        self._commit("revise", change, new.id)
        return self.get(new.id)

    @staticmethod
    def _carried_links(row: FactRow, new_id: str, now: str) -> list[FactLink]:
        out = []
        for x in row.links:
            if x.type in ("related_to", "disputed_with") and x.review != "same":
                other = x.dst if x.src == row.id else x.src
                out.append(FactLink(new_id, other, x.type, now, "pending" if x.review == "pending" else x.review,
                                    None if x.review == "pending" else now))
        return out

    @operation
    def supersede(self, fact_id: str, text: str | None = None, *, by: str | None = None, valid_from: Any = None,
                  kind: str | None = None, entities: Any = None, salience: float | None = None,
                  confidence: float = 0.7, source: Any = None, at: Any = None, metadata: dict[str, Any] | None = None,
                  reason: str | None = None) -> Fact:
        """A correction: the old fact ends exactly where the new one starts (`valid_from`; default: the time its
        `source` message names, else when that message was said; now without one); both are kept and linked. Give the new `text`, or `by` an existing fact. `reason`: why, journaled
        with the decision (the curator's: "the same slot (primary db) with another value: an update")."""
        row = self._row(fact_id)
        if (text is None) == (by is None):
            raise InvalidInput("supersede needs the new text or `by` (the id of the fact that replaces it), not both")
        if by is not None:
            return self._supersede_by(row, by, reason)
        self._need(row, OPEN, "supersede")
        text, source = _text(text), self.cited(source)
        start, at = self.heard(text, source, valid_from, at)
        if valid_from is None and start is not None and _time(start, "valid_from") <= row.valid_from:
            start = None  # a message older than the fact it corrects (written by hand, holding from then): from now, as it was
        change = FactChange()
        new = self._new_row(change, text, vault=row.vault, kind=kind or row.kind,
                            entities=row.entities if entities is None else entities,
                            salience=row.salience if salience is None else salience, confidence=confidence,
                            valid_from=start, metadata=metadata, supersedes=row.id)
        if new.valid_from <= row.valid_from:
            raise InvalidInput(f"the correction must start after the fact it supersedes ({row.valid_from}); "
                               "to say the old fact was never true, retract it")
        change.attestations.append(self._attestation(new.id, source, at or new.valid_from))
        self._end_by(change, row, new.id, new.valid_from, new.recorded_at)
        self._commit("supersede", change, new.id, _why(reason))
        return self.get(new.id)

    def _supersede_by(self, row: FactRow, by: str, reason: str | None = None) -> Fact:
        new = self._row(by)
        self._commit("supersede", self._superseding(row, new), new.id, _why(reason))
        return self.get(new.id)

    def _superseding(self, row: FactRow, new: FactRow) -> FactChange:
        """The change by which `new`, a fact already written, supersedes `row`."""
        if new.id == row.id or row.id in self._ancestors(new) or new.id in self._ancestors(row):
            raise InvalidInput(f"{new.id} superseding {row.id} would make a cycle of supersessions")
        self._need(row, OPEN, "supersede")
        self._need(new, OPEN, "supersede with")
        if new.supersedes:
            raise Conflict(f"{new.id} already supersedes {new.supersedes}")
        if new.valid_from <= row.valid_from:
            raise InvalidInput(f"{new.id} starts at {new.valid_from}, not after {row.id} ({row.valid_from})")
        change = FactChange()
        now = self.now()
        self._end_by(change, row, new.id, new.valid_from, now)
        change.updates.append(FactUpdate(new.id, {"supersedes": row.id}, OPEN))
        return change

    @staticmethod
    def _end_by(change: FactChange, row: FactRow, new_id: str, at: str, now: str) -> None:
        change.updates.append(FactUpdate(row.id, {"valid_to": at, "ended_at": now, "superseded_by": new_id}, OPEN))
        change.links.append(FactLink(new_id, row.id, "supersedes", now))

    def _ancestors(self, row: FactRow) -> set[str]:
        seen: set[str] = set()
        current: FactRow | None = row
        while current is not None and current.supersedes and current.supersedes not in seen:
            seen.add(current.supersedes)
            found = self.store.get_facts([current.supersedes])
            current = found[0] if found else None
        return seen

    @operation
    def close(self, fact_id: str, *, at: Any = None, source: Any = None, reason: str | None = None) -> Fact:
        """The fact stopped holding at `at` (default now). Not a retraction: it was true until then. `reason`: as supersede's."""
        row = self._row(fact_id)
        self._need(row, OPEN, "close")
        end = _time(at, "at") if at is not None else self.now()
        if end <= row.valid_from:
            raise InvalidInput(f"a fact cannot end ({end}) before or when it starts ({row.valid_from}); retract it instead")
        change = FactChange(updates=[FactUpdate(row.id, {"valid_to": end, "ended_at": self.now()}, OPEN)])
        if source is not None:
            change.attestations.append(self._attestation(row.id, source, note="closed"))
        self._commit("close", change, row.id, _why(reason))
        return self.get(row.id)

    @operation
    def retract(self, fact_id: str, *, reason: str | None = None, source: Any = None) -> Fact:
        """It was never true: `invalidated_at` is set; the fact stays, out of every query
        except `known_at` before the retraction and `history`."""
        row = self._row(fact_id)
        self._need(row, ("expired_at", "invalidated_at", "superseded_by"), "retract")
        retracted = {"invalidated_at": self.now()}
        change = FactChange(updates=[FactUpdate(row.id, retracted, ("expired_at", "superseded_by"))])
        extra = {"reason": check_text(reason, "reason"), "source": self.cited(source)}
        back = self._reinstating(change, row)
        if back is not None:
            retracted["superseded_by"] = back.id
            extra["reinstated"] = back.id
            extra["reinstated_reason"] = f"{row.id}, which had superseded {row.supersedes}, was retracted: its supersession never happened"
        self._commit("retract", change, row.id, extra)
        return self.get(row.id)

    def _predecessor(self, row: FactRow) -> FactRow | None:
        found = self.store.get_facts([row.supersedes]) if row.supersedes else []
        return found[0] if found else None

    def _reinstating(self, change: FactChange, row: FactRow) -> FactRow | None:
        """The fact `row` superseded, written again as holding on from its own start, when `row` is retracted: a
        retracted fact never held, so neither did the end it gave. A bot's user retracted a wrong "75 mg" correction of
        "I take sertraline 100mg …" and was left with no dose at all. Ends are set once (`known_at` must still see the
        supersession as believed before the retraction), so the superseded version is not reopened in place: a new
        version with its text, start and attestations follows the retracted one in the chain, and the old version
        expires ("revised": it lives on in the new one)."""
        cur, old = row, self._predecessor(row)
        while old is not None and old.superseded_by == cur.id and old.expired_at and not old.invalidated_at:
            # a revision's predecessor is the same statement, retracted with it: what it superseded holds again ("75mg",
            # revised, then retracted, had left no dose at all: a review's)
            cur, old = old, self._predecessor(old)
        if old is None or old.superseded_by != cur.id or old.expired_at or old.invalidated_at:
            return None
        back = self._new_row(change, old.text, vault=old.vault, kind=old.kind, entities=old.entities, salience=old.salience,
                             confidence=old.base_confidence, valid_from=old.valid_from, metadata=old.metadata,
                             supersedes=row.id)
        now = back.recorded_at
        change.attestations += [Attestation(back.id, a.source_type, a.source, a.at, a.recorded_at, a.note) for a in old.attestations]
        change.updates.append(FactUpdate(old.id, {"expired_at": now}, ("invalidated_at",)))
        change.links += [FactLink(back.id, old.id, "reinstates", now), FactLink(back.id, row.id, "supersedes", now),
                         *self._carried_links(old, back.id, now)]
        return back

    @operation
    def dispute(self, fact_id: str, other_id: str) -> list[Fact]:
        """Two open facts that cannot both hold: both stay, flagged with each other until one
        is superseded, closed or retracted."""
        a, b = self._row(fact_id), self._row(other_id)
        if a.id == b.id:
            raise InvalidInput("a fact cannot dispute itself")
        self._need(a, OPEN, "dispute")
        self._need(b, OPEN, "dispute")
        if not any(x.type == "disputed_with" and {x.src, x.dst} == {a.id, b.id} for x in a.links):
            change = FactChange(links=[FactLink(a.id, b.id, "disputed_with", self.now())],
                                updates=[FactUpdate(a.id, {}, OPEN), FactUpdate(b.id, {}, OPEN)])
            self._commit("dispute", change, a.id)
        return [self.get(a.id), self.get(b.id)]

    @operation
    def relate(self, fact_id: str, other_id: str, *, review: bool = True, reason: str | None = None) -> None:
        """Link two facts `related_to` (listed for review unless `review=False`); `reason`: as supersede's."""
        a, b = self._row(fact_id), self._row(other_id)
        if a.id == b.id:
            raise InvalidInput("a fact cannot relate to itself")
        now = self.now()
        link = FactLink(a.id, b.id, "related_to", now, "pending" if review else None)
        self._commit("relate", FactChange(links=[link]), a.id, _why(reason))

    # -- review --------------------------------------------------------------
    def reviews(self, vault: str | None = None, limit: int | None = None) -> tuple[list[dict[str, Any]], int]:
        """The first `limit` pairs the curator linked `related_to` and left for a person to
        settle, as JSON objects ({new, existing, recorded_at}), and how many wait in all."""
        page, total = self.review_page(vault, limit)
        return [{"new": p["new"].to_dict(), "existing": p["existing"].to_dict(), "recorded_at": p["recorded_at"]} for p in page], total

    def review_page(self, vault: str | None = None, limit: int | None = None) -> tuple[list[dict[str, Any]], int]:
        """The first `limit` pairs to review (all without one), and how many wait in all."""
        every = self.store.pending_reviews(vault)
        links = every[:limit]
        facts = {f.id: f for f in self._views(self.store.get_facts(list(dict.fromkeys(i for x in links for i in (x.src, x.dst)))))}
        return [{"new": facts[x.src], "existing": facts[x.dst], "recorded_at": x.recorded_at}
                for x in links if x.src in facts and x.dst in facts], len(every)

    @operation
    def settle(self, new_id: str, existing_id: str, decision: str) -> Fact:
        """`same`: the new fact is merged into the existing one (its attestations move over,
        it expires, linked `merged_into`); `replaces`: the new fact supersedes the existing one
        (a value that changed: "marisol has a new number: 555-0199." of "… 555-0142."); `keep`:
        both stay, the link is kept."""
        if decision not in SETTLEMENTS:
            raise InvalidInput("decision is `same` (merge), `replaces` (the new fact supersedes the existing one) or `keep` (keep both)")
        new, old = self._row(new_id), self._row(existing_id)
        now = self.now()
        review = ReviewUpdate(new.id, old.id, "related_to", {"same": "same", "replaces": "replaced", "keep": "kept"}[decision], now)
        if decision == "replaces":
            if new.valid_from <= old.valid_from:  # (a pair said in one message, or of one day named in both)
                raise InvalidInput(f"{new.id} holds from {new.valid_from}, not after {old.id} ({old.valid_from}): it cannot replace "
                                   f"it from its own start; `palimpsest facts supersede {old.id} TEXT --valid-from WHEN` writes the "
                                   f"new value from a later time, `palimpsest facts retract {old.id}` says the old one never held")
            change = self._superseding(old, new)
            change.reviews.append(review)
            self._commit("review", change, new.id)
            return self.get(new.id)
        change = FactChange(reviews=[review])
        if decision == "same":
            self._need(new, BELIEVED + ("superseded_by",), "merge")
            self._need(old, BELIEVED, "merge into")
            change.attestations += [Attestation(old.id, a.source_type, a.source, a.at, now, a.note) for a in new.attestations]
            change.updates.append(FactUpdate(new.id, {"expired_at": now, "superseded_by": old.id}, ("invalidated_at",)))
            change.links.append(FactLink(new.id, old.id, "merged_into", now))
        self._commit("review", change, old.id if decision == "same" else new.id)
        return self.get(old.id if decision == "same" else new.id)

    # -- committing ----------------------------------------------------------
    def _commit(self, op: str, change: FactChange, subject: str, extra: dict[str, Any] | None = None) -> None:
        """Journal the decision, apply it in one transaction, then refresh the snapshot."""
        key = change.op_key = _new_id("op")
        self.decisions.record(DOMAIN, op, change.to_dict(), subject=subject, key=key, created_at=self.now(), **(extra or {}))
        try:
            self.store.apply_fact_change(change)
        except StoreUnavailable as exc:
            self.needs_replay = True
            # The outcome is unknown (the store may have committed and then gone away): the
            # decision stays journaled and `replay()` applies it exactly once (`fact_ops`).
            raise JournaledDecision(f"{exc}; decision {key} is journaled and will be applied by replay "
                                    "when the store is back", key) from exc
        except BaseException as exc:
            self.decisions.reject(DOMAIN, key, exc)
            raise
        self._embed([f.id for f in change.facts])
        if self.snapshot_on_change:
            touched = {f.id for f in change.facts} | {u.fact_id for u in change.updates} | {a.fact_id for a in change.attestations}
            touched |= {x.src for x in change.links} | {r.src for r in change.reviews}
            self.snapshot(touched=touched)

    def _embed(self, ids: list[str]) -> int:
        """Vectors for new facts, best effort: a fact never fails for want of a vector
        (`embed_missing` catches up)."""
        embedder = self.embedder
        if embedder is None or not ids:
            return 0
        rows = [r for r in self.store.get_facts(ids)]
        try:
            vectors = embedder.checked([r.text for r in rows])
            self.store.put_fact_vectors(embedder.model_id, [(r.id, v) for r, v in zip(rows, vectors)])
        except PalimpsestError:
            return 0
        return len(rows)

    def embed_missing(self, batch: int = 256) -> int:
        """Embed every believed fact that has no vector of the current model."""
        embedder = self.embedder
        total = 0
        while embedder is not None:
            todo = self.store.facts_without_vectors(embedder.model_id, batch)
            if not todo:
                break
            vectors = embedder.checked([t for _, t in todo])
            self.store.put_fact_vectors(embedder.model_id, [(i, v) for (i, _), v in zip(todo, vectors)])
            total += len(todo)
        return total



def _why(reason: str | None) -> dict[str, Any] | None:
    """A decision's reason as the journal keeps it (an on-call lead could not tell from the decision log, the history or
    the panel why "The primary DB is pg-atlas-01." was retired: the curator had said why, and nothing kept it)."""
    return {"reason": check_text(reason, "reason")} if reason else None
