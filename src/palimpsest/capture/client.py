"""The capture client: posts batches to `POST /api/capture` and never loses one.

When the server cannot be reached or answers 5xx, 408 or 429 (later, it says) the batch is spooled as a private file
(0600) under `<home>/capture-spool/`; before each write the 50 oldest spooled batches are
replayed in order; a batch the server rejects with 4xx is moved to `capture-spool/dead/`
with the server's answer beside it (`palimpsest capture --requeue-dead` puts them back
after the cause is fixed); a spool file that cannot be read is reported and moved to
`capture-spool/corrupt/`. Replays are safe because the server dedupes by event key.
A server that refuses this client — its writes off (no capture route: 404, or 403
`write_disabled`), a token missing or wrong (401), a host name it does not answer to (403
`forbidden_host`) — is not a bad batch: it is spooled like an unreachable server, counted as
`refused`, the message says what to set (`WRITES_OFF`, `NO_TOKEN`) and the spool keeps it for
`palimpsest doctor` (`Spool.refusal`); the batches replay once the setting is fixed. A 403 in
other words (a WAF or proxy in front of the server objecting to one batch) goes to dead/.
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
NO_TOKEN = ("the server at {url} wants its token and {sent}: set PALIMPSEST_TOKEN to the server's token where the harness "
            "runs (setup writes no token into any file); the batch is spooled and replays at the next capture after that")
REFUSED = "the server at {url} refuses this client ({answer}); the batch is spooled and replays at the next capture once that is fixed"


class Spool:
    """Batches waiting for the server: one private JSON file each, oldest first by name."""

    def __init__(self, home: Path) -> None:
        self.root = Path(home) / "capture-spool"
        self.dead = self.root / "dead"
        self.corrupt = self.root / "corrupt"
        self.refusal_file = self.root / "refused.reason"

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
        _write_private(folder / (path.name + ".reason"), reason)
        return target

    def refused(self, reason: str | None) -> None:
        """Keep why the server refuses this client's batches (None: it took one): the hook's note shows once, in the
        harness, while `doctor` is where one looks later."""
        if reason is None:
            self.refusal_file.unlink(missing_ok=True)
            return
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        _write_private(self.refusal_file, reason)

    def refusal(self) -> str | None:
        """Why the server refused the last batch, while it has taken none since."""
        try:
            return self.refusal_file.read_text(encoding="utf-8").strip()
        except OSError:
            return None

    def erase(self, sessions: set[str]) -> int:
        """Remove the batches of these sessions — waiting, dead or corrupt — with their reasons (`palimpsest erase`): a
        customer's words had stayed in this home's spool after her erasure. A file that is not a batch is hers when it
        holds one of the ids as JSON writes it (`"cus_lnovak-1"`): a corrupt file cannot be read any other way."""
        quoted = [json.dumps(s, ensure_ascii=False).encode("utf-8") for s in sessions]
        removed = 0
        for folder in (self.root, self.dead, self.corrupt):
            for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
                try:
                    hers = self.read(path)["session"] in sessions
                except InvalidInput:
                    hers = any(q in path.read_bytes() for q in quoted)
                if hers:
                    path.unlink()
                    (folder / (path.name + ".reason")).unlink(missing_ok=True)
                    removed += 1
        return removed

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


class _Refused(_Retry):
    """The server refuses this client until a setting is fixed (its writes, the token): spool, and say what to set."""


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
        self.token_sent = bool(token)
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
                self._not_now(exc, report)
                self.spool.put(batch)
                report.spooled += 1
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
                self._not_now(exc, report)
                return False
            except _Rejected as exc:
                report.errors.append(str(exc))
                self.spool.set_aside(path, self.spool.dead, str(exc))
                report.dead += 1
                continue
            path.unlink(missing_ok=True)
            report.replayed += 1
        return True

    def _not_now(self, exc: _Retry, report: Report) -> None:
        report.errors.append(str(exc))
        if isinstance(exc, _Refused):
            report.refused += 1
            self.spool.refused(str(exc))

    def _post(self, batch: dict[str, Any], report: Report) -> None:
        try:
            response = self.http.post(self.url, json=batch)
        except httpx.HTTPError as exc:
            raise _Retry(f"server unreachable: {type(exc).__name__}: {exc}") from None
        except (UnicodeEncodeError, ValueError, TypeError) as exc:  # no request could carry it: kept in dead/, never a traceback
            raise _Rejected(f"the batch cannot be sent as JSON: {exc}") from None
        _refusal(response, self.url.removesuffix("/api/capture"), self.token_sent)
        if response.status_code >= 500 or response.status_code in (408, 429):  # a timeout or too many requests: later
            raise _Retry(f"server answered {response.status_code}: {response.text[:300]}")
        if response.status_code >= 400:
            raise _Rejected(f"server refused the batch with {response.status_code}: {response.text[:1000]}")
        result = response.json().get("result", {})
        self.spool.refused(None)
        report.posted += 1
        report.stored += int(result.get("stored", 0))
        report.duplicates += int(result.get("duplicates", 0))


# the 403s our server answers about the client, never about a batch (server/guard.py, errors.WriteDisabled): a 403 in
# any other words comes from something in front of it — a WAF objecting to one transcript's content — and is that
# batch's (read as the client's, it had held every later batch in the spool for good: the replay stops at a refusal)
WRITES_OFF_CODE, CLIENT_403_CODES = "write_disabled", ("forbidden_host",)


def _refusal(response: httpx.Response, url: str, token_sent: bool) -> None:
    """Raise `_Refused` when the server refuses this client rather than the batch: a missing or wrong token had sent
    each turn to dead/ with a bare `401 … unauthorized`, naming neither PALIMPSEST_TOKEN nor `--requeue-dead` (a
    platform engineer's shared server), while the batch was fine and only the client's setting was wrong."""
    status, code = response.status_code, _error_code(response)
    if status == 404 or (status == 403 and code == WRITES_OFF_CODE):
        raise _Refused(WRITES_OFF.format(url=url))
    if status == 401:  # (credentials: never one batch's)
        raise _Refused(NO_TOKEN.format(url=url, sent="the one sent is not it" if token_sent else "none was sent"))
    if status == 403 and code in CLIENT_403_CODES:
        raise _Refused(REFUSED.format(url=url, answer=f"403: {response.text[:300]}"))


def _error_code(response: httpx.Response) -> str | None:
    """The code of our server's error answer (`{"ok": false, "error": {"code": …}}`), None for any other body."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return None
    return error.get("code") if isinstance(error, dict) else None


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text + "\n")


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
