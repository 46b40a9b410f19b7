"""Property tests: no input makes any registered format raise, and sanitize removes markers."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.formats.base import ModelReply, ParseResult
from toolbench.formats.format_registry import format_names, get_format

FRAGMENTS = [
    "{", "}", "[", "]", '"', "\\", ":", ",", "\n", " ", "```", "```json\n",
    '{"tool": ', '"arguments": ', '{"name": ', '"get_weather"', "null", "1",
    "<tool_call>", "</tool_call>", "<tool_response>", "<tools>", "<think>", "</think>",
    "Thought:", "Action:", "Action Input:", "Observation:", "Final Answer:",
    "Tool Result (", "<|python_tag|>", "[TOOL_CALLS]", "<function=", "ü", "東",
    # the model-family dialects (issue 11)
    '{"name": "f", "parameters": ', "[ARGS]", "[CALL_ID]", "[TOOL_RESULTS]", "[THINK]",
    "[/THINK]", "[f(", "g(a=", "=1", "'x'", "lambda: 0", "os.environ", ")]", "<|python_start|>",
    "<|python_end|>", "<function_calls>", "</function_calls>", "<function=f>", "</function>",
    "<parameter=a>", "</parameter>", '<invoke name="f">', "</invoke>", '<parameter name="a">',
    "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
    "<｜DSML｜function_calls>", '<｜DSML｜invoke name="f">',
    '<｜DSML｜parameter name="a" string="false">',
    "<|tool_calls_section_begin|>", "<|tool_call_begin|>", "functions.f:0",
    "<|tool_call_argument_begin|>", "<|tool_call_end|>", '<|open|>call tool="f"<|sep|>',
    "<|channel|>", "analysis", "commentary to=functions.f", "final", "<|message|>", "<|call|>",
    "<|end|>", "<|start|>", "<|constrain|>json",
]  # fmt: skip

marker_text = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=40).map("".join)
any_text = st.text(max_size=300) | marker_text

FORMATS = [get_format(name) for name in format_names()]


def _check(result: ParseResult) -> None:
    assert isinstance(result, ParseResult)
    assert not any("parser error" in e.message for e in result.errors), result.errors
    assert (result.status == "no_call") == (not result.attempted)
    assert bool(result.calls) == (result.status in ("strict", "repaired"))


@settings(max_examples=300, deadline=None)
@given(text=any_text)
def test_parse_never_raises(text: str) -> None:
    for fmt in FORMATS:
        _check(fmt.parse(text))
        _check(fmt.parse_reply(ModelReply(text=text)))


@settings(max_examples=300, deadline=None)
@given(text=any_text)
def test_sanitize_never_raises_and_removes_markers(text: str) -> None:
    for fmt in FORMATS:
        out = fmt.sanitize(text)
        assert isinstance(out, str)
        survivors = [m.pattern for m in fmt.markers if m.search(out)]
        assert not survivors, (fmt.name, out)


@settings(max_examples=100, deadline=None)
@given(
    calls=st.lists(
        st.fixed_dictionaries(
            {"id": st.text(max_size=3), "function": st.dictionaries(st.text(max_size=9), st.text())}
        )
        | st.dictionaries(st.text(max_size=5), st.integers()),
        max_size=3,
    )
)
def test_native_reply_never_raises(calls: list[dict[str, object]]) -> None:
    _check(get_format("native").parse_reply(ModelReply(tool_calls=calls)))


TAIL_FRAGMENTS = [
    "<|im_end|>", "<tool_response>", "</tool_response>", "{", "}", '"', "\n", " ", "```",
    "Thought:", "ok", "<think>", "</think>", "<tool_", "call>",
]  # fmt: skip
CALL_JSON = '{"name": "get_weather", "arguments": {"city": "Paris"}}'


@settings(max_examples=300, deadline=None)
@given(
    tail=st.lists(st.sampled_from(TAIL_FRAGMENTS) | st.text(max_size=3), max_size=20)
    .map("".join)
    .filter(lambda t: "<tool_call>" not in t and "</tool_call>" not in t)
)
def test_xml_unclosed_final_call_reads_as_if_closed(tail: str) -> None:
    """Whatever follows an unclosed final call is seen as it would be with the tag added,
    except strictness: only the end of the turn after it keeps the call strict (Hermes'
    strict reading, ``test_xml_strict_reader.py``); other text adds one ``call.lenient``."""
    xml = get_format("xml")
    unclosed = xml.parse(f"<tool_call>\n{CALL_JSON}\n{tail}")
    closed = xml.parse(f"<tool_call>\n{CALL_JSON}\n</tool_call>{tail}")
    assert [(c.name, c.arguments) for c in unclosed.calls] == [
        (c.name, c.arguments) for c in closed.calls
    ]
    lenient = [e for e in unclosed.errors if e.message == UNCLOSED_THEN_TEXT]
    assert [e for e in unclosed.errors if e not in lenient] == closed.errors
    if _END_OF_TURN.fullmatch(tail):
        assert lenient == []
    assert len(lenient) <= 1
    repaired = lenient and closed.status == "strict"
    assert unclosed.status == ("repaired" if repaired else closed.status)
    assert unclosed.stop_signals == closed.stop_signals
    assert unclosed.content == closed.content


UNCLOSED_THEN_TEXT = "<tool_call>: no </tool_call> and text after the call"
_END_OF_TURN = re.compile(r"\s*(?:<\|im_end\|>|<\|endoftext\|>|<\|eot_id\|>)?\s*")
