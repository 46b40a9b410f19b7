"""Bad input every dialect meets: replies cut mid-token, doubled or nested special tokens.

A reply cut inside a call-opening token is an attempt (``call.truncated``) and the partial
token is not visible text; a doubled token is read, but never as a strict parse.
"""
# ruff: noqa: E501  (one table row per line reads better than wrapped rows)

from __future__ import annotations

import pytest
from fmt_helpers import TOOLS, calls_of

from toolbench import codes
from toolbench.formats.format_registry import get_format

CUT_MID_TOKEN = [
    ("mistral", "Sure. [TOOL_CA", "Sure."),
    ("kimi-k2", "<|tool_calls_section_begin|><|tool_call_be", ""),
    ("harmony", "<|channel|>commentary to=functions.search<|mess", ""),
    ("deepseek", "ok <｜tool▁calls▁beg", "ok"),
    ("qwen3-coder", "Let me check. <tool_ca", "Let me check."),
    ("claude-xml", "Hi <function_ca", "Hi"),
    ("llama3-json", "One moment <|python_t", "One moment"),
    ("pythonic", "<|python_sta", ""),
]


@pytest.mark.parametrize(
    ("fmt", "reply", "content"), CUT_MID_TOKEN, ids=[c[0] for c in CUT_MID_TOKEN]
)
def test_reply_cut_mid_token_is_a_truncated_attempt(fmt: str, reply: str, content: str) -> None:
    got = get_format(fmt).parse(reply, TOOLS)
    assert (got.status, got.attempted, got.calls) == ("failed", True, [])
    assert codes.CALL_TRUNCATED in got.codes()
    assert got.content == content
    assert get_format(fmt).sanitize(reply) == content


def test_prose_ending_like_a_short_token_prefix_is_not_an_attempt() -> None:
    """Fewer than four characters of a token are ordinary text."""
    got = get_format("mistral").parse("See [TO", TOOLS)
    assert (got.status, got.content) == ("no_call", "See [TO")


DOUBLED = [
    ("mistral", '[TOOL_CALLS] [TOOL_CALLS] [{"name": "search", "arguments": {"q": "x"}}]'),
    ("kimi-k2", '<|tool_calls_section_begin|><|tool_calls_section_begin|><|tool_call_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{"q": "x"}<|tool_call_end|><|tool_calls_section_end|>'),
    ("deepseek", '<｜tool▁calls▁begin｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜><｜tool▁sep｜>{"q": "x"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'),
    ("harmony", '<|channel|><|channel|>commentary to=functions.search<|message|><|message|>{"q": "x"}<|call|>'),
]  # fmt: skip


@pytest.mark.parametrize(("fmt", "reply"), DOUBLED, ids=[c[0] for c in DOUBLED])
def test_doubled_tokens_are_read_but_not_strictly(fmt: str, reply: str) -> None:
    got = get_format(fmt).parse(reply, TOOLS)
    assert calls_of(got) == [("search", {"q": "x"})]
    assert got.status == "repaired"
    assert got.content == ""
