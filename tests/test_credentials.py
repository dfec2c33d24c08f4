"""Credentials said in conversation: one definition (`credentials.SECRET`), no fact of one, none in another's block."""

from __future__ import annotations

import pytest

from palimpsest import Memory
from palimpsest.credentials import WITHHELD, holds_credential, withheld
from palimpsest.facts.local import classify

# found by a Claude Code user (no LLM): each of these became a current fact, and the URL's password was in 16 of 31
# hook blocks of other sessions, as the fact and as the message
SAID = ["btw staging db is postgres://billing:Xk9#mP2vL8qR@staging-db.internal:5432/billing",
        "the stripe key for staging is sk_live_51HxT2eKp0QvA9rZ8yW3nB7c",
        "grafana admin login is admin / hunter2!x, dont share"]
VALUES = ["Xk9#mP2vL8qR", "sk_live_51HxT2eKp0QvA9rZ8yW3nB7c", "hunter2!x"]

SECRETS = [*SAID,
           "use sk_test_4eC39HqLyjWDarjtT1zdp7dc for the sandbox",
           "the restricted key is rk_live_51HxT2eKp0QvA9rZ8yW3nBzz",
           "My GitHub token is ghp_abcdefghijklmnopqrstuvwxyz0123456789",
           "CI uses gho_16C7e42F292c6912E7710c838347Ae178B4a",
           "the fine-grained one: github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
           "bot token xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
           "AWS access key AKIAIOSFODNN7EXAMPLE in the bucket script",
           "gitlab deploy token glpat-xxxxxxxxxxxxxxxxxxxx1",
           "the header was eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
           "-----BEGIN RSA PRIVATE KEY----- MIIEpAIBAAKCAQEA",
           "The OpenAI key is sk-proj-AbCdEfGhIjKlMnOpQrStUv",
           "the db password is hunter2Secret!",
           "wifi password: Tr0ub4dor&3",
           "pwd: s3cr3t-Value",
           "log in with root / Sup3r$ecret to the router",
           "redis://:p4ssw0rd@cache.internal:6379/0"]

ORDINARY = ["We upgraded to Python 3.12.4 and Node v20.11.1 yesterday.",
            "Fixed in commit 3f9a2c1b7e8d4f6a0b2c9d8e7f6a5b4c3d2e1f0a on main.",
            "The request id was 550e8400-e29b-41d4-a716-446655440000.",
            "The password policy is 12 chars.",
            "The password is changed every month.",
            "The token is valid for one hour.",
            "Docs are at https://example.com:8443/api/v2?page=3#auth.",
            "Clone it with git@github.com:acme/billing.git over ssh://git@github.com:22/acme.",
            "The staging db is postgres://staging-db.internal:5432/billing.",
            "The login page is at /auth/login on port 8080.",
            "Read / write access is 2 / 3 of the team.",
            "I keep keys in a password manager.",
            "A monthly pass is cost-effective if you ride daily.",  # LongMemEval's, as the patterns were widened
            "Keep the session secret\n      - UPLOAD_MAX_FILESIZE=10M"]


@pytest.mark.parametrize("text", SECRETS)
def test_a_credential_is_read(text: str) -> None:
    assert holds_credential(text) and WITHHELD in withheld(text)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_no_credential(text: str) -> None:
    assert not holds_credential(text) and withheld(text) == text


def test_withheld_keeps_all_but_the_value() -> None:
    assert withheld(SAID[0]) == ("btw staging db is postgres://billing:[credential withheld]@staging-db.internal:5432/billing")
    assert all(v not in withheld(s) for s, v in zip(SAID, VALUES))


def _said(memory: Memory) -> None:
    for i, s in enumerate(SAID):
        memory.append(f"c{i}", "user", s)
        memory.append(f"c{i}", "assistant", "ok")
        memory.distiller.close_turn(f"c{i}")
    memory.worker().drain()


def test_no_fact_of_a_credential_said_without_an_llm(memory: Memory) -> None:
    """The Claude Code user's three messages, distilled locally: three current facts holding the secrets. Now none."""
    _said(memory)
    assert [f.text for f in memory.facts.query(status="all") if any(v in f.text for v in VALUES)] == []
    assert next(m.content for m in memory.browse(session="c0")) == SAID[0]  # the journal keeps every word


def test_a_message_recalled_into_another_session_withholds_its_credential(memory: Memory) -> None:
    """The message itself, recalled into another session's block, had shown the password; its line says the rest with
    the value withheld (the line's id reads it whole), and its own session's recall still shows it."""
    _said(memory)
    memory.append("elsewhere", "user", "how do I reach the staging db and grafana?")
    block = memory.recall("elsewhere", "what is the staging db url, the stripe key and the grafana admin login?").block
    assert "staging-db.internal" in block and WITHHELD in block
    assert [v for v in VALUES if v in block] == []
    assert VALUES[0] in memory.recall("c0", "what is the staging db url?", live_tail=0).block


def test_a_correction_saying_a_credential_is_no_fact() -> None:
    """The local distiller read a correction before asking for a credential: "Actually, the db password is now …" was
    a correction, a fact recalled into every session."""
    assert classify("Actually, the db password is now hunter2-Secret!") is None
