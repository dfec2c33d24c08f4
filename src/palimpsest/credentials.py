"""Credentials: what a text says that no fact, summary or model should repeat.

`SECRET` reads a key of a known shape (OpenAI, Anthropic, GitHub, Slack, AWS, Google, a JWT, a
private key's head) or a password, passcode, token or secret said with its value. The local
distiller and the curator's tools make no fact of one; `withheld` takes one out of what is sent
to a configured model (found by an agent-loop builder: a key said in a session went to the
endpoint in eleven prompts, and came back in a summary recalled into another project).
"""

from __future__ import annotations

import re

# a credential: a key of a known shape, or a password, passcode, token or secret said with its value (a heuristic; a PIN or
# a door code stays a fact a user asks back) (found by a security
# review: "my OpenAI key is sk-proj-… and the db password is hunter2Secret!" became two facts, first in other sessions' blocks)
SECRET = re.compile(r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|xox[abprs]-[\w-]{10,}|"
                    r"AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}|-----BEGIN [A-Z ]*PRIVATE KEY)|"
                    r"\b(?:password|passwd|passphrase|pass ?code|pw|pwd|secret|api[ _-]?key|access[ _-]?key|token|credentials?)"
                    r"\s*(?:(?:is|was)(?:\s+now)?|=|:|-|to)\s*:?\s*['\"`]?(?=\S{0,256}?[\d!@#$%^&*+=~_-])\S{6,}",
                    re.IGNORECASE)  # (a value with a digit or a sign: "The token is valid for one hour." holds none)

WITHHELD = "[credential withheld]"
_URL_PASSWORD = re.compile(r"((?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://[^/\s:@]+:)[^/\s@]+(@)", re.IGNORECASE)  # postgres://user:pw@host


def withheld(text: str) -> str:
    """`text` with each credential `SECRET` reads, and a URL's password, replaced by `WITHHELD`."""
    return _URL_PASSWORD.sub(rf"\g<1>{WITHHELD}\g<2>", SECRET.sub(WITHHELD, text)) if text else text
