"""A terminal's colour and cursor codes in stored text (a pasted build log, a tool's coloured output): the words they
paint are found by keyword on both backends ("\\x1b[31mERROR" was the token "31merror" to both tokenizers, and a red
ERROR was found by no query), and the recall block shows the words, not the codes (a pasted "\\x1b[2J" cleared the
screen `palimpsest recall` printed to, and every code cost a model's tokens)."""

from __future__ import annotations

from palimpsest import Memory

LOG = "pytest run:\n\x1b[1m\x1b[31mFAILED\x1b[0m tests/test_api.py::test_login - \x1b[31mAssertionError\x1b[0m\n\x1b[32m3 passed\x1b[0m"


def test_painted_words_are_the_words_the_terminal_showed() -> None:
    from palimpsest.segment import painted_words, unpainted

    assert painted_words("build \x1b[31mERROR\x1b[0m ok") == "ERROR"
    assert painted_words("\x1b]0;title\x07\x1b[2Jcleared \x1b(Bdone") == "cleared done"
    assert painted_words("no codes at all: [31m is text") == ""
    assert unpainted(LOG) == "pytest run:\nFAILED tests/test_api.py::test_login - AssertionError\n3 passed"


def test_a_painted_word_is_found_in_a_message_and_in_a_tool_output(memory: Memory) -> None:
    said = memory.append("dev", "user", f"CI is red again, here is the log:\n{LOG}")["id"]
    ran = memory.append("dev", "tool", tool_name="Bash", tool_args={"command": "cargo build"},
                        tool_result="\x1b[0m\x1b[1m\x1b[38;5;9merror[E0382]\x1b[0m\x1b[1m: borrow of moved value: `config`")["id"]
    memory.append("dev", "user", "Something unrelated about lunch plans.")
    assert said in [h.message.id for h in memory.search("FAILED AssertionError").hits]
    assert ran in [h.message.id for h in memory.search("error E0382").hits]
    assert "\x1b[31mFAILED" in memory.get_full(said)["content"]  # stored as said, codes and all


def test_the_recall_block_shows_the_words_not_the_codes(memory: Memory) -> None:
    memory.append("dev", "user", f"CI is red again, here is the log:\n{LOG}\n\x1b]0;title\x07\x1b[2J")
    memory.append("dev", "assistant", "The login test fails on an assertion; I'll look at it.")
    block = memory.recall("other", "why did the login test fail").block
    assert "FAILED tests/test_api.py::test_login" in block
    assert "\x1b" not in block and "\x07" not in block


def test_a_colour_code_with_colons_is_a_code_too() -> None:
    """Found in review: true colour and curly underlines write their parameters with colons ("\\x1b[38:2::255:0:0m")."""
    from palimpsest.segment import painted_words, plain

    assert plain("\x1b[38:2::255:0:0mERROR\x1b[0m build \x1b[4:3mwarning\x1b[0m") == "ERROR build warning"
    assert painted_words("\x1b[38:2::255:0:0mERROR\x1b[0m") == "ERROR"
