"""Hermes ``xml``: ``strict`` only where an independent strict reader reads the same calls.

The reader below is written from the Hermes format alone (NousResearch's function-calling
prompt, Qwen2.5's chat template) and shares no code with ``toolbench.formats.xml``: a
reply is strict when every ``<tool_call>`` is closed by the next ``</tool_call>``, no
closing tag is left over, and each block holds exactly one JSON object with a string
``name`` and an object ``arguments`` (nothing else). The one documented exception, a
complete final block the reply left unclosed (the server stopped on ``</tool_call>``),
is read as if closed. Every reply ``xml`` calls strict, from the tests' tables, the
cassettes, the conformance vectors and generated replies, must be read the same by it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from stream_corpus import corpus

from toolbench.formats.xml import Xml

F = Xml()
OPEN, CLOSE = "<tool_call>", "</tool_call>"
_THINK = re.compile(r"^(?:(?!<think>).)*?</think>|<think>.*?</think>", re.DOTALL)
"""Reasoning: a leading block (its opener may be in the prompt) and any closed block."""

Call = tuple[str, Any]


def strict_calls(reply: str) -> list[Call] | None:
    """The calls of a strictly well-formed Hermes reply, or None when it is not one.

    A block is ``<tool_call>``, optional whitespace, one JSON value (where it ends is the
    JSON's business: a ``</tool_call>`` inside a string is not the closing tag), optional
    whitespace, ``</tool_call>``. The value is an object with exactly a non-empty string
    ``name`` and an object ``arguments``. Text outside blocks is text, it holds no call;
    a ``</tool_call>`` in it closes nothing, so the reply is not strictly well formed.
    """
    text = _THINK.sub("", reply) if "</think>" in reply else reply
    calls: list[Call] = []
    pos = 0
    while (start := text.find(OPEN, pos)) >= 0:
        if CLOSE in text[pos:start]:
            return None  # a closing tag left over before this block
        at = _skip_space(text, start + len(OPEN))
        try:
            obj, end = _JSON.raw_decode(text, at)
        except ValueError:
            return None
        if not (
            isinstance(obj, dict)
            and set(obj) == {"name", "arguments"}
            and isinstance(obj["name"], str)
            and obj["name"]
            and isinstance(obj["arguments"], dict)
        ):
            return None
        calls.append((obj["name"], obj["arguments"]))
        end = _skip_space(text, end)
        if text.startswith(CLOSE, end):
            pos = end + len(CLOSE)
        elif _END_OF_TURN.fullmatch(text, end):
            return calls  # the documented exception: the final block left unclosed
        else:
            return None
    return None if calls and CLOSE in text[pos:] else calls


_JSON = json.JSONDecoder()
_END_OF_TURN = re.compile(r"(?:<\|im_end\|>|<\|endoftext\|>|<\|eot_id\|>)?\s*")


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _agrees(reply: str) -> bool:
    got = F.parse(reply)
    if got.status != "strict":
        return True
    return strict_calls(reply) == [(c.name, c.arguments) for c in got.calls]


def test_every_strict_reply_of_the_corpus_is_read_the_same() -> None:
    replies = [r.text for r in corpus() if r.fmt == "xml"]
    assert len(replies) > 100  # tables, cassettes and (when present) conformance vectors
    strict = [r for r in replies if F.parse(r).status == "strict"]
    disagree = [r for r in strict if not _agrees(r)]
    assert strict
    assert disagree == []


BLOCK = st.sampled_from(
    [
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
        '<tool_call>\n{"name": "search", "arguments": {}}\n</tool_call>',
        '<tool_call>{"name": "f", "arguments": {"a": [1, {"b": "</tool_call>"}]}}</tool_call>',
        '<tool_call>{"name": "get_weather", "city": "Paris"}</tool_call>',
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Par</tool_call>',
        '<tool_call>{"name": "f", "arguments": {}}',
        '{"name": "orphan", "arguments": {}}\n</tool_call>',
        "<tool_call>\nI will check that.",
        "</tool_call>",
        '<tool_call>{"name": "_error", "message": "boom"}</tool_call>',
        '<tool_call>{"name": "f", "description": "d", "parameters": {}}</tool_call>',
        "<tool_call>[1, 2]</tool_call>",
        "\n</tool_call>\n",
    ]
)
PROSE = st.sampled_from(["", "\n", "Let me check. ", "Done.", "<think>hm</think>", " {x} "])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(PROSE, BLOCK), max_size=4), PROSE)
def test_generated_replies_strict_only_where_the_reader_agrees(
    parts: list[tuple[str, str]], tail: str
) -> None:
    reply = "".join(p + b for p, b in parts) + tail
    assert _agrees(reply), (reply, F.parse(reply))
