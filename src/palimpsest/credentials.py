"""Credentials: what a text says that no fact, summary, model or other session should repeat.

`SECRET` is the one definition of a credential, read everywhere: a key of a known shape (OpenAI, Anthropic, Stripe,
GitHub, GitLab, Slack, AWS, Google, a JWT, a private key's head), a password said in a URL (`postgres://user:pw@host`),
a password, passcode, token or secret said with its value, and a login said as "user / password". `holds_credential`
asks it: the local distiller, the model's distillation and the curator's tools make no fact of one. `withheld` takes
one out of what is sent to a configured model (found by an agent-loop builder: a key said in a session went to the
endpoint in eleven prompts, and came back in a summary recalled into another project) and out of a message recalled
into another session's block. The journal keeps every word.

Patterns, not a scanner: detect-secrets (Yelp) was tried on the Claude Code user's three messages and found one (the
Stripe key); its keyword detector reads code (`password = "…"`), not "the db password is hunter2Secret!", and its
entropy detectors flag version strings, commit hashes and UUIDs in prose. It adds requests and PyYAML for that.
"""

from __future__ import annotations

import re

# (a value with a digit or a sign: "The token is valid for one hour." holds none)
_VALUE = r"['\"`]?(?=\S{0,256}?[\d!@#$%^&*+=~_-])\S{6,}"
# a credential: a key of a known shape, or a password, passcode, token or secret said with its value (a heuristic; a PIN or
# a door code stays a fact a user asks back) (found by a security
# review: "my OpenAI key is sk-proj-… and the db password is hunter2Secret!" became two facts, first in other sessions' blocks);
# a URL's password and "login is admin / hunter2!x" (found by a Claude Code user: a staging database's URL, a Stripe
# sk_live_ key and a Grafana login became facts, and the URL's password was in 16 of 31 hook blocks in other sessions)
SECRET = re.compile(
    r"(?P<url>(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+@|"
    r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|"
    r"github_pat_\w{20,}|glpat-[\w-]{20,}|xox[abprs]-[\w-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{30,}|"
    r"eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,})|-----BEGIN [A-Z ]*PRIVATE KEY|"  # (no \b: "-" is no word's start)
    # (no bare "pass": "the pass is cost-effective" in LongMemEval; no line break before the sign: a YAML list's "secret\n - X=10M")
    r"\b(?:password|passwd|passphrase|pass ?code|pw|pwd|secret|api[ _-]?key|access[ _-]?key|token|credentials?)"
    rf"[ \t]*(?:(?:is|was)(?:\s+now)?|=|:|-|to)\s*:?\s*{_VALUE}|"
    r"\b(?:login|log ?in|sign ?in|credentials?|creds)\s*(?:is|are|was|with|=|:)?\s*:?\s*[^\s/]+\s*/\s*"
    r"(?=\S{0,256}?[\d!@#$%^&*+=~_-])\S{4,}",
    re.IGNORECASE)

WITHHELD = "[credential withheld]"


def holds_credential(text: str) -> bool:
    """Whether `text` says a credential `SECRET` reads."""
    return bool(text) and SECRET.search(text) is not None


def withheld(text: str) -> str:
    """`text` with each credential `SECRET` reads replaced by `WITHHELD` (a URL keeps all but its password:
    `postgres://atlas:[credential withheld]@db`)."""
    return SECRET.sub(_withhold, text) if text else text


def _withhold(found: re.Match[str]) -> str:
    return f"{found['url']}{WITHHELD}@" if found["url"] else WITHHELD
