"""The facts snapshot (`<home>/facts.jsonl`) and replay of the decision log."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable
from pathlib import Path

from ..decisions import Decision
from ..erased import Erased
from ..errors import Conflict, InvalidInput, NotFound
from ..store.facts_base import Attestation, FactChange, FactQuery, FactRow, FactVault
from .model import DEFAULT_VAULT, DOMAIN

_PART_BYTES = 4 * 1024 * 1024  # a restored snapshot is journaled in decisions of about this size (events are capped at 16 MiB)


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class FactSnapshots:
    """The snapshot half of `Facts` (a mixin)."""

    restored_on_open: int | None = None  # decisions applied when opening found the store's facts lost (`Facts`)

    # -- snapshot and replay -------------------------------------------------
    @property
    def snapshot_path(self) -> Path:
        return self.home / "facts.jsonl"

    def export_lines(self) -> list[str]:
        """Vaults, then every fact (sorted by vault and id) with its attestations and the
        links it is the source of: one JSON object per line, keys sorted; `record` says
        which (vault or fact)."""
        return self._vault_lines() + [self._fact_line(r) for r in self.store.query_facts(FactQuery())]

    def _vault_lines(self) -> list[str]:
        return [json.dumps({"record": "vault", **v.to_dict()}, ensure_ascii=False, sort_keys=True) for v in self.store.fact_vaults()]

    @staticmethod
    def _fact_line(row: FactRow) -> str:
        d = row.to_dict()
        d["links"] = [x for x in d["links"] if x["src"] == row.id]
        return json.dumps({"record": "fact", **d}, ensure_ascii=False, sort_keys=True)

    def snapshot(self, path: str | Path | None = None, touched: Iterable[str] | None = None) -> Path:
        """Write the snapshot atomically (a lock serialises writers of one home).

        After a change only the lines of the `touched` facts are rebuilt, as long as the
        file is still the one this process wrote last and the store took no other home's decision since (either makes it
        rebuild all)."""
        target = Path(path) if path else self.snapshot_path
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target.with_name(target.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            own = target == self.snapshot_path
            ops = self.store.fact_ops_count()  # read before the lines: a decision of another home meanwhile is not lost
            lines = self._snapshot_lines(target, touched if own else None, ops)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:  # (outside the home too)
                f.write("".join(line + "\n" for line in self._vault_lines() + [lines[k] for k in sorted(lines)]))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
            if own:
                self._snapshot_cache = (_stat_key(target), lines, ops)
        return target

    def _snapshot_lines(self, target: Path, touched: Iterable[str] | None, ops: int) -> dict[tuple[str, str], str]:
        cached = self._snapshot_cache
        # only this process's one decision since (several homes on one store: another's changes had never reached the file)
        if touched is not None and cached is not None and cached[0] == _stat_key(target) and ops - cached[2] <= 1:
            lines = dict(cached[1])
            lines.update({(r.vault, r.id): self._fact_line(r) for r in self.store.get_facts(sorted(set(touched)))})
            return lines
        return {(r.vault, r.id): self._fact_line(r) for r in self.store.query_facts(FactQuery())}

    def _require_empty(self) -> None:
        if self.store.fact_stats()["facts"]:
            if self.restored_on_open is not None:
                raise Conflict("the store already holds facts: they were restored from this home's system journal when it "
                               "was opened (what `facts restore --journal` does); to load a snapshot instead, restore into a "
                               "home without a system journal")
            raise Conflict("the store already holds facts; restore into an empty store")

    def restore_snapshot(self, path: str | Path | None = None) -> int:
        """Load a snapshot into a store without facts, identical (one transaction)."""
        self._require_empty()
        source = Path(path) if path else self.snapshot_path
        if not source.exists():  # (a traceback had answered a mistyped path, even with --json: found by an auditor)
            raise NotFound(f"no snapshot at {source}" + ("" if path else " (this home has written none yet: `facts restore "
                                                                            "--journal` rebuilds the facts from the journal)"))
        if not source.is_file():
            raise InvalidInput(f"{source} is not a file: give the path of a facts snapshot (facts.jsonl)")
        change = FactChange()
        try:
            self._read_snapshot(source, change)
            change = self._without_erased(change)
        except UnicodeDecodeError as exc:  # (the .db given by mistake had answered with a traceback: found in review)
            raise InvalidInput(f"{source}: not a facts snapshot (not UTF-8 text at byte {exc.start})") from None
        except OSError as exc:
            raise InvalidInput(f"{source}: cannot be read ({exc.strerror or exc})") from None
        # journaled like every decision, in parts an event can carry: the home's journal restores them (it had not: a store
        # moved or lost after a restore lost every fact, found by a team); the snapshot written once, at the end (the
        # source may be this home's own snapshot: rewritten after each part, a restore cut short had lost the rest)
        on_change, self.snapshot_on_change = self.snapshot_on_change, False
        try:
            for part in _parts(change, min(_PART_BYTES, self.decisions.journal.max_event_bytes // 4)):
                self._commit("restore", part, str(source))
        finally:
            self.snapshot_on_change = on_change
        if on_change:
            self.snapshot()
        return len(change.facts)

    def _without_erased(self, change: FactChange) -> FactChange:
        """A snapshot written before an erasure (a copy kept aside) holds the facts it erased: they stay out (`erased.py`)."""
        erased = Erased.of(self.decisions)
        if not erased:
            return change
        return FactChange.from_dict(erased.scrub_change(change.to_dict()) or {})

    @staticmethod
    def _read_snapshot(source: Path, change: FactChange) -> None:
        """The snapshot's vaults and facts into `change`."""
        with open(source, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    d = json.loads(line)
                    kind = d.pop("record")
                    if kind == "vault":
                        change.vaults.append(FactVault(**d))
                    elif kind == "fact":
                        row = FactRow.from_dict(d)
                        change.attestations += row.attestations
                        change.links += row.links
                        row.attestations, row.links = [], []
                        change.facts.append(row)
                except UnicodeDecodeError:
                    raise
                except (ValueError, TypeError, KeyError) as exc:
                    raise InvalidInput(f"{source}:{n}: not a snapshot line ({exc})") from None

    def replay(self) -> int:
        """Apply every journaled decision the store has not applied yet, in journal order
        (idempotent; after a crash between journal and store, this catches up). One that
        lost its race while the store was away is rejected for every later replay."""
        self.needs_replay = False
        vaults = {v.name for v in self.store.fact_vaults()}

        def apply(d: Decision) -> int:
            change = FactChange.from_dict(d.change, d.key)
            for name in sorted({f.vault for f in change.facts} - vaults - {v.name for v in change.vaults}):
                # a vault made by a decision of another home sharing the store (the default one, by its first fact): its
                # facts' decisions are here, its making is not (every one was rejected for good)
                change.vaults.append(FactVault(name, "episodic", d.created_at, "facts the system writes" if name == DEFAULT_VAULT
                                               else "restored: made through another home"))
            applied = self.store.apply_fact_change(change)
            vaults.update(v.name for v in change.vaults)
            return applied

        applied = self.decisions.replay(DOMAIN, self.store.fact_ops_applied(), apply)
        if applied:
            self.embed_missing()
            if self.snapshot_on_change:
                self.snapshot()
        return applied

    def restore_from_journal(self) -> int:
        """Rebuild every fact vault into a store without facts from the system journal (done already
        when opening this store found it lost: then how many decisions that applied, and any left)."""
        if self.restored_on_open is not None:
            return self.restored_on_open + self.replay()
        self._require_empty()
        return self.replay()



def _parts(change: FactChange, size_of_part: int = _PART_BYTES) -> list[FactChange]:
    """A whole snapshot's change in parts a decision each can carry: the vaults and facts (with their attestations) in
    parts of about `size_of_part` bytes, then the links (which name facts of any part)."""
    parts = [FactChange(vaults=change.vaults)]
    size = 0
    by_fact: dict[str, list[Attestation]] = {}
    for a in change.attestations:
        by_fact.setdefault(a.fact_id, []).append(a)
    for fact in change.facts:
        grows = len(json.dumps(fact.to_dict(), ensure_ascii=False)) + sum(len(json.dumps(a.to_dict())) for a in by_fact.get(fact.id, []))
        if size + grows > size_of_part and parts[-1].facts:
            parts.append(FactChange())
            size = 0
        parts[-1].facts.append(fact)
        parts[-1].attestations += by_fact.get(fact.id, [])
        size += grows
    links = [FactChange()]
    for link in change.links:
        if len(links[-1].links) >= 20_000:
            links.append(FactChange())
        links[-1].links.append(link)
    return [p for p in parts if p.vaults or p.facts] + [p for p in links if p.links]
