"""The capture client: posts batches to `POST /api/capture` and never loses one.

When the server cannot be reached or answers 5xx, 408 or 429 (later, it says) the batch is spooled as a private file
(0600) under `<home>/capture-spool/`; before each write the 50 oldest spooled batches are
replayed in order; a batch the server rejects with 4xx is moved to `capture-spool/dead/`
with the server's answer beside it (`palimpsest capture --requeue-dead` puts them back
after the cause is fixed); a spool file that cannot be read is reported and moved to
`capture-spool/corrupt/`. Replays are safe because the server dedupes by event key.
A server whose writes are off (no capture route: 404, or 403 `write_disabled`) is not a
bad batch: it is spooled like an unreachable server, counted as `refused`, and the
message says what to set (`WRITES_OFF`); the batches replay once writes are on.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import asdict, dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import Any

import httpx

from ..errors import InvalidInput
from ..records import OFFSET_KEY, parse_time, speaker_offset, utcnow
from ..settings import private_home

REPLAY_LIMIT = 50
BATCH_EVENTS = 500
BATCH_BYTES = 8 * 1024 * 1024
WRITES_OFF = ("the server at {url} refuses capture: its writes are off (capture is a write). Restart it with "
              "PALIMPSEST_ENABLE_WRITE=1 (e.g. `PALIMPSEST_ENABLE_WRITE=1 make run`); the batch is spooled and replays then")


class Spool:
    """Batches waiting for the server: one private JSON file each, oldest first by name."""

    def __init__(self, home: Path) -> None:
        self.root = Path(home) / "capture-spool"
        self.dead = self.root / "dead"
        self.corrupt = self.root / "corrupt"

    def put(self, batch: dict[str, Any]) -> Path:
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        name = f"{time.time_ns():020d}-{secrets.token_hex(4)}.json"
        tmp = self.root / f".{name}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(json.dumps(batch, ensure_ascii=False).encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.root / name)
        return self.root / name

    def oldest(self, n: int = REPLAY_LIMIT) -> list[Path]:
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.glob("*.json") if p.is_file())[:n]

    def pending(self) -> int:
        return len(list(self.root.glob("*.json"))) if self.root.is_dir() else 0

    def read(self, path: Path) -> dict[str, Any]:
        try:
            batch = json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"{path.name}: unreadable spool file: {exc}") from None
        if not isinstance(batch, dict) or not isinstance(batch.get("session"), str) or not isinstance(batch.get("events"), list):
            raise InvalidInput(f"{path.name}: not a capture batch")
        return batch

    def set_aside(self, path: Path, folder: Path, reason: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        target = folder / path.name
        os.replace(path, target)
        fd = os.open(folder / (path.name + ".reason"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(reason + "\n")
        return target

    def requeue_dead(self) -> int:
        """Put dead batches back in the spool (after the cause of their rejection was fixed)."""
        moved = 0
        for path in sorted(self.dead.glob("*.json")) if self.dead.is_dir() else []:
            os.replace(path, self.root / path.name)
            (self.dead / (path.name + ".reason")).unlink(missing_ok=True)
            moved += 1
        return moved


@dataclass
class Report:
    """What one `send` did: batches posted, spooled, sent to dead/, spool files set aside."""

    posted: int = 0
    stored: int = 0
    duplicates: int = 0
    spooled: int = 0
    replayed: int = 0
    dead: int = 0
    refused: int = 0
    corrupt: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def merge(self, part: Report) -> None:
        """Add what another `send` did to this report."""
        for name in ("posted", "stored", "duplicates", "spooled", "replayed", "dead", "refused"):
            setattr(self, name, getattr(self, name) + getattr(part, name))
        self.corrupt += part.corrupt
        self.errors += part.errors


class _Retry(Exception):
    """The server could not take the batch now (unreachable, 5xx): spool and retry later."""


class _WritesOff(_Retry):
    """The server takes no capture until its writes are enabled: spool, and say what to set."""


class _Rejected(Exception):
    """The server refused the batch (4xx): retrying will not help."""


class CaptureClient:
    """Posts capture batches to a Palimpsest server; spools what it could not deliver."""

    def __init__(self, url: str, home: Path, *, token: str = "", timeout: float = 10.0, http: httpx.Client | None = None,
                 zone: tzinfo | None = None) -> None:
        """`zone`: this machine's time zone (`Settings.zone`; None: the system's), which
        each message sent keeps as its `utc_offset` (see `with_offsets`)."""
        self.url = url.rstrip("/") + "/api/capture"
        self.zone = zone
        private_home(home)  # (the hook may be the first to write in it: the spool, the transcript cursors)
        self.spool = Spool(home)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = http or httpx.Client(timeout=timeout, headers=headers, trust_env=False)

    def close(self) -> None:
        self.http.close()

    def send(self, batches: list[dict[str, Any]]) -> Report:
        """Replay the oldest spooled batches, then post these; nothing is dropped."""
        report = Report()
        reachable = self.replay(report)
        for batch in batches:
            with_offsets(batch.get("events"), self.zone)
            if not reachable:
                self.spool.put(batch)
                report.spooled += 1
                continue
            try:
                self._post(batch, report)
            except _Retry as exc:
                report.errors.append(str(exc))
                self.spool.put(batch)
                report.spooled += 1
                report.refused += isinstance(exc, _WritesOff)
                reachable = False
            except _Rejected as exc:
                report.errors.append(str(exc))
                self.spool.set_aside(self.spool.put(batch), self.spool.dead, str(exc))
                report.dead += 1
        return report

    def replay(self, report: Report, limit: int = REPLAY_LIMIT) -> bool:
        """Post up to `limit` spooled batches, oldest first; False when the server is unreachable."""
        for path in self.spool.oldest(limit):
            try:
                batch = self.spool.read(path)
            except InvalidInput as exc:
                self.spool.set_aside(path, self.spool.corrupt, str(exc))
                report.corrupt.append(path.name)
                continue
            try:
                self._post(batch, report)
            except _Retry as exc:
                report.errors.append(str(exc))
                report.refused += isinstance(exc, _WritesOff)
                return False
            except _Rejected as exc:
                report.errors.append(str(exc))
                self.spool.set_aside(path, self.spool.dead, str(exc))
                report.dead += 1
                continue
            path.unlink(missing_ok=True)
            report.replayed += 1
        return True

    def _post(self, batch: dict[str, Any], report: Report) -> None:
        try:
            response = self.http.post(self.url, json=batch)
        except httpx.HTTPError as exc:
            raise _Retry(f"server unreachable: {type(exc).__name__}: {exc}") from None
        except (UnicodeEncodeError, ValueError, TypeError) as exc:  # no request could carry it: kept in dead/, never a traceback
            raise _Rejected(f"the batch cannot be sent as JSON: {exc}") from None
        if response.status_code == 404 or (response.status_code == 403 and "write_disabled" in response.text):
            raise _WritesOff(WRITES_OFF.format(url=self.url.removesuffix("/api/capture")))
        if response.status_code >= 500 or response.status_code in (408, 429):  # a timeout or too many requests: later
            raise _Retry(f"server answered {response.status_code}: {response.text[:300]}")
        if response.status_code >= 400:
            raise _Rejected(f"server refused the batch with {response.status_code}: {response.text[:1000]}")
        result = response.json().get("result", {})
        report.posted += 1
        report.stored += int(result.get("stored", 0))
        report.duplicates += int(result.get("duplicates", 0))


def with_offsets(events: Any, zone: tzinfo | None) -> None:
    """Give each event the UTC offset of this machine's clock when it was said
    (`metadata.utc_offset`, `records.speaker_offset`) where it has none: a server in
    another zone then reads "yesterday" said here as this machine's yesterday. An event
    the server will refuse anyway (no readable time, metadata not an object) is left as it is."""
    for event in events if isinstance(events, list) else []:
        meta = event.get("metadata") if isinstance(event, dict) else None
        if not isinstance(event, dict) or not isinstance(meta, dict | None) or OFFSET_KEY in (meta or {}):
            continue
        created = event.get("created_at")
        try:
            moment = parse_time(created) if created not in (None, "") else utcnow()
        except InvalidInput:
            continue
        offset = speaker_offset(created, moment, zone)
        if offset:
            event["metadata"] = {**(meta or {}), OFFSET_KEY: offset}


def split(batch: dict[str, Any], max_events: int = BATCH_EVENTS, max_bytes: int = BATCH_BYTES) -> list[dict[str, Any]]:
    """One batch cut into several of bounded size (same session attributes on each)."""
    head = {k: v for k, v in batch.items() if k != "events"}
    out: list[dict[str, Any]] = []
    current: list[dict[str, Any]] = []
    size = 0
    for event in batch["events"]:
        n = len(json.dumps(event, ensure_ascii=False, default=str))
        if current and (len(current) >= max_events or size + n > max_bytes):
            out.append({**head, "events": current})
            current, size = [], 0
        current.append(event)
        size += n
    if current:
        out.append({**head, "events": current})
    return out
