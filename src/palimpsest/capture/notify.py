"""Codex's `notify` payload: an older one's session, and one whose session's rollout file is not found.

An older Codex's notify names no thread (`named`): its session is the rollout whose end holds the
turn (`rollout_of_turn`), read as any rollout is; with none, a session of its folder, and the
payload is held as below.

Codex runs `notify` after each turn with `{"type": "agent-turn-complete", "thread-id", "turn-id",
"cwd", "input-messages", "last-assistant-message"}`. The turn is in the session's rollout file,
which holds every word with the time it was said, and capture reads that (`hooks`). When the
rollout is not under `codex_home` (CODEX_HOME names another home), the payload's own words were
posted, and the hooks reading the rollout stored every word a second time, the notify copy with
the capture's time (found by a Codex user). So the payload is held instead, in
`<home>/capture-state/codex-notify/<session>.jsonl`, and nothing is posted:
- a capture that reads the session's rollout drops what is held (the rollout holds the same
  words, with their times) and marks the session (`<session>.read`): a notify of a marked
  session, its rollout not found, holds nothing — the hooks read that rollout;
- what is still held after `HOLD_S` (no hook reads this session's rollout: a setup with notify
  alone) is stored at the next capture, with the time notify came: nothing is lost.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..records import iso, parse_time, utcnow
from .client import CaptureClient, Report, Spool, split

RECENT = 20  # rollouts, most recently written first, an older notify's turn is looked for in
TAIL = 1 << 20  # bytes at the end of a rollout where a turn that just ended is
HOLD_S = 120  # seconds a notify's words wait for a hook to read their rollout (Codex runs both as a turn ends)


def _folder(home: Path) -> Path:
    return Path(home) / "capture-state" / "codex-notify"


def named(hook: dict[str, Any], codex_home: Path | None) -> dict[str, Any]:
    """An older notify, which names no thread (`{"type": "agent-turn-complete", "turn-id", "input-messages",
    "last-assistant-message"}`; it had been refused: "the hook input has no session_id"), with its session: the
    rollout that holds its turn (`rollout_of_turn`), else a session of its folder (`codex-<hash of the cwd>`)."""
    found = rollout_of_turn(hook, codex_home) if codex_home is not None else None
    if found is not None:
        return {**hook, "thread-id": _session_of(found), "transcript_path": str(found)}
    said = hook.get("cwd")
    cwd = said if isinstance(said, str) else os.getcwd()
    return {**hook, "thread-id": f"codex-{hashlib.sha256(cwd.encode('utf-8', 'replace')).hexdigest()[:16]}"}


def rollout_of_turn(hook: dict[str, Any], codex_home: Path) -> Path | None:
    """The rollout, of the `RECENT` last written, whose end holds the turn's last assistant message (else its last
    input message) as Codex writes it in JSON; None when none does."""
    given = hook.get("input-messages")
    messages: list[Any] = given if isinstance(given, list) else []
    text = hook.get("last-assistant-message") or next((m for m in reversed(messages) if isinstance(m, str) and m), None)
    if not isinstance(text, str) or not text.strip():
        return None
    needle = json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8", "surrogatepass")
    try:
        files = sorted((codex_home / "sessions").rglob("rollout-*.jsonl"), key=lambda f: f.stat().st_mtime, reverse=True)
    except OSError:
        return None
    for file in files[:RECENT]:
        try:
            with open(file, "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - TAIL))
                if needle in f.read():
                    return file
        except OSError:
            continue
    return None


_UUID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$")


def _session_of(rollout: Path) -> str:
    """A rollout's session id as the importer reads it: its `session_meta` id (the older first line's `id`), else
    the id its file name ends with."""
    try:
        with open(rollout, "rb") as f:
            first = json.loads(f.readline())
        said = first.get("payload", first).get("id") if isinstance(first, dict) else None
        if isinstance(said, str) and said:
            return said
    except (OSError, ValueError, AttributeError):
        pass
    found = _UUID.search(rollout.name)
    return found.group(1) if found else rollout.stem


def hold(home: Path, head: dict[str, Any], events: list[dict[str, Any]], where: str) -> Report:
    """Keep a notify's events for `head`'s session, unless a hook reads its rollout; say which."""
    report, folder = Report(), _folder(home)
    session = head["session"]
    if (folder / f"{session}.read").exists():
        report.errors.append(f"the rollout of Codex session {session} is not under {where}: nothing of notify's payload "
                             "was stored; the hooks that read this session's rollout store the turn")
        return report
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    said = iso(utcnow())
    line = json.dumps({"head": head, "events": [{**e, "created_at": said} for e in events]}, ensure_ascii=False)
    fd = os.open(folder / f"{session}.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with open(fd, "a", encoding="utf-8") as f:
        f.write(line + "\n")
    report.errors.append(f"the rollout of Codex session {session} is not under {where} (is CODEX_HOME Codex's home?): "
                         f"notify's {len(events)} messages are held; a capture reading the rollout drops them (it holds "
                         f"them), else they are stored at a capture after {HOLD_S} s")
    return report


def rollout_read(home: Path, session: str) -> None:
    """A capture read `session`'s rollout: what notify held of it is there, and later notifies hold nothing."""
    folder = _folder(home)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    (folder / f"{session}.read").touch()
    (folder / f"{session}.jsonl").unlink(missing_ok=True)


def forget(home: Path, sessions: set[str]) -> int:
    """Remove what notify holds of these sessions, and their marks (`palimpsest erase`): held words are a customer's."""
    folder, removed = _folder(home), 0
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        session = path.name.split(".posting-")[0] if ".posting-" in path.name else path.name.rsplit(".", 1)[0]
        if session in sessions:
            path.unlink()
            removed += 1
    return removed


def settle(client: CaptureClient, home: Path) -> Report:
    """Store what notify held longer than `HOLD_S` of sessions no capture read the rollout of."""
    report, folder = Report(), _folder(home)
    if not folder.is_dir():
        return report
    for orphan in folder.glob("*.posting-*"):  # taken by a capture that died before it had posted all of it
        if not _alive(orphan.name.rsplit("-", 1)[-1]):
            with open(folder / f"{orphan.name.split('.posting-')[0]}.jsonl", "a", encoding="utf-8") as f:
                f.write(orphan.read_text(encoding="utf-8"))  # held again, to be posted (a repeat is a duplicate the store drops)
            orphan.unlink()
    for held in sorted(folder.glob("*.jsonl")):
        if (folder / f"{held.stem}.read").exists():
            held.unlink(missing_ok=True)
            continue
        try:
            # aged by what it held first: each notify of the session appends, and by the file's time a session that kept
            # notifying was never stored (found in review)
            if time.time() - _first_held(held) < HOLD_S:
                continue
            # taken before it is read: a notify appending meanwhile starts a file of its own, not one deleted unposted
            claimed = held.with_name(f"{held.stem}.posting-{os.getpid()}")
            os.replace(held, claimed)
            lines = claimed.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            head = {k: v for k, v in entry["head"].items() if v is not None}
            report.merge(client.send(split({**head, "agent": "codex", "events": entry["events"]})))
        claimed.unlink(missing_ok=True)  # (posted or spooled: safe on disk either way)
    return report


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def _first_held(held: Path) -> float:
    """When `held` was first written: the time its first line says, else its file's."""
    with held.open(encoding="utf-8") as f:
        first = f.readline()
    try:
        return parse_time(json.loads(first)["events"][0]["created_at"]).timestamp()
    except (ValueError, KeyError, IndexError, TypeError, InvalidInput):
        return held.stat().st_mtime


def erase_held(home: Path) -> Any:
    """What `palimpsest erase` takes out of this home's capture files for the erased sessions: spooled batches (waiting,
    dead, corrupt) and Codex notify's held words. A transcript's cursor (`capture-state/<digest>.json`, no words) stays:
    without it the next hook would send the whole transcript again."""
    return lambda sessions: Spool(home).erase(sessions) + forget(home, sessions)
