"""The child process that runs regex matches for `literal.RegexPool` (run as a script).

It imports nothing of Palimpsest (the package takes seconds to import) and only the
standard library and `regex`. It reads one JSON request per line on stdin and answers one
JSON line on stdout:

    {"pattern": "..."}                      → {"ok": true} | {"error": "..."}
    {"texts": [[content, tool_result], …]}  → {"matches": [index, …]} | {"error": "..."}

A match may run as long as it likes: the parent kills this process at its deadline, so no
pattern can hold the server (a match in the server's process would hold the GIL, and the
`regex` module's own timeout is not honoured for long literal scans). Memory is capped
(`MEMORY_BYTES`), so a pattern that explodes (`(?R)`) fails here, not in the server.
"""

from __future__ import annotations

import json
import resource
import sys
import unicodedata
from typing import Any

MEMORY_BYTES = 768 * 1024 * 1024


def _compile(pattern: Any) -> Any:
    import regex

    try:
        return regex.compile(_nfc_outside_sets(pattern) if isinstance(pattern, str) else pattern)
    except regex.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None
    except RecursionError:
        raise ValueError("invalid regular expression: nested too deeply") from None


def _matches(rx: Any, texts: list[list[str | None]]) -> list[int]:
    return [i for i, (content, result) in enumerate(texts) if rx.search(_nfc(content or "")) or (result and rx.search(_nfc(result)))]


def _nfc(text: Any) -> Any:
    """A pattern and a text compared composed (NFC), as neither was kept: "está" typed with a combining accent never
    matched "está" typed composed."""
    return unicodedata.normalize("NFC", text) if isinstance(text, str) and not text.isascii() else text


def _nfc_outside_sets(pattern: str) -> str:
    """The pattern composed (NFC) but for its character sets, kept as typed: composing rewrote them ("[e\u0301]", an e
    or a combining accent, became "[é]")."""
    out, start, i = [], 0, 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
        elif pattern[i] == "[":
            end = _set_end(pattern, i)
            out += [_nfc(pattern[start:i]), pattern[i:end]]
            start = i = end
        else:
            i += 1
    return "".join(out) + _nfc(pattern[start:])


def _set_end(pattern: str, i: int) -> int:
    """Where the character set opening at `i` ends: past its "]" (a "]" first in it is a member; a nested set, as the
    regex module's version 1 reads one, counts); the pattern's end when none closes it (kept as typed)."""
    j, depth = i + 1, 1
    j += pattern.startswith("^", j)
    j += pattern.startswith("]", j)
    while j < len(pattern):
        if pattern[j] == "\\":
            j += 1
        elif pattern[j] == "[":
            depth += 1
        elif pattern[j] == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return len(pattern)


def serve(lines: Any, out: Any) -> None:
    rx = None
    for line in lines:
        request = json.loads(line)
        try:
            if "pattern" in request:
                rx = _compile(request["pattern"])
                reply: dict[str, Any] = {"ok": True}
            else:
                reply = {"matches": _matches(rx, request["texts"])}
        except ValueError as exc:
            reply = {"error": str(exc)}
        except MemoryError:
            reply = {"error": "the regular expression needs more memory than a search may use"}
        except RecursionError:
            reply = {"error": "the regular expression recurses too deeply"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    except (ValueError, OSError):  # a lower hard limit already holds
        pass
    serve(sys.stdin, sys.stdout)
