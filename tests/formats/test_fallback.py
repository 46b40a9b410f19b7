"""Fallback compositions (``native|xml``): which part reads a reply, and what it records."""

from __future__ import annotations

from typing import Any

import pytest
from fmt_helpers import TOOLS, calls_of
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench import codes
from toolbench.errors import UnknownNameError, UserError
from toolbench.formats.base import ModelReply, ToolCall
from toolbench.formats.format_registry import get_format

XML = '<tool_call>{"name": "search", "arguments": {"q": "x"}}</tool_call>'
NATIVE_CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "search", "arguments": '{"q": "y"}'},
}
PJ = '{"tool": "search", "arguments": {"q": "z"}}'

# (id, spec, reply, calls, via, status, error codes)
CASES: list[tuple[str, str, ModelReply, list[tuple[str, dict[str, Any]]], str, str, list[str]]] = [
    ("native_call_wins", "native|xml", ModelReply(tool_calls=[NATIVE_CALL], text=""),
     [("search", {"q": "y"})], "primary", "strict", []),
    ("xml_in_content_rescued", "native|xml", ModelReply(text=f"Sure. {XML}"),
     [("search", {"q": "x"})], "fallback", "strict", []),
    ("plain_answer_stays_primary", "native|xml", ModelReply(text="It is sunny."),
     [], "primary", "no_call", []),
    ("unreadable_in_both_keeps_primary_failure", "native|xml",
     ModelReply(text="<tool_call>no json here</tool_call>"),
     [], "primary", "failed", [codes.CALL_IN_CONTENT]),
    ("dialect_to_generic", "mistral|prompt-json", ModelReply(text=f"Here: {PJ}"),
     [("search", {"q": "z"})], "fallback", "strict", []),
    ("dialect_itself", "mistral|prompt-json",
     ModelReply(text='[TOOL_CALLS][{"name": "search", "arguments": {"q": "m"}}]'),
     [("search", {"q": "m"})], "primary", "strict", []),
    ("chain_second_fallback", "native|xml|prompt-json", ModelReply(text=PJ),
     [("search", {"q": "z"})], "fallback", "strict", []),
]  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "reply", "calls", "via", "status", "errors"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_which_part_reads_the_reply(
    spec: str,
    reply: ModelReply,
    calls: list[tuple[str, dict[str, Any]]],
    via: str,
    status: str,
    errors: list[str],
) -> None:
    got = get_format(spec).parse_reply(reply, TOOLS)
    assert calls_of(got) == calls
    assert (got.via, got.status, got.codes()) == (via, status, errors)


@pytest.mark.parametrize(
    ("spec", "shown"),
    [
        ("native|xml", "native|xml"),
        (" native | prompt-json:shots=2 ", "native|prompt-json:shots=2"),
        ("mistral:shots=1|xml", "mistral:shots=1|xml"),
    ],
)
def test_spec_round_trips(spec: str, shown: str) -> None:
    fmt = get_format(spec)
    assert fmt.spec == shown
    assert get_format(fmt.spec).spec == shown


def test_the_request_is_the_primarys_and_markers_are_both_parts() -> None:
    fmt = get_format("native|xml")
    native, xml = get_format("native"), get_format("xml")
    msgs = [{"role": "user", "content": "hi"}]
    from toolbench.tools import ToolDef

    tools = [ToolDef(name="search", parameters={"type": "object", "properties": {}})]
    assert fmt.render(tools, msgs) == native.render(tools, msgs)
    assert fmt.native and fmt.requirements.native_tools
    assert {p.pattern for p in type(fmt).markers} == {
        p.pattern for p in (*type(native).markers, *type(xml).markers)
    }


def test_results_go_back_the_way_of_the_part_that_read_the_calls() -> None:
    fmt = get_format("native|xml")
    call = ToolCall(name="search", arguments={"q": "x"})
    rescued = fmt.continue_conversation([], ModelReply(text=XML), [(call, "found")])
    assert rescued[-1] == {"role": "user", "content": "<tool_response>\nfound\n</tool_response>"}
    native = ModelReply(tool_calls=[NATIVE_CALL], raw_message={"role": "assistant",
                        "content": None, "tool_calls": [NATIVE_CALL]})  # fmt: skip
    direct = fmt.continue_conversation([], native, [(call.model_copy(update={"id": "c1"}), "r")])
    assert direct[-1] == {"role": "tool", "tool_call_id": "c1", "content": "r"}


def test_a_plain_format_records_no_path() -> None:
    got = get_format("xml").parse(XML, TOOLS)
    assert got.via is None and "via" not in got.model_dump()


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("native|nope", UnknownNameError),
        ("nope|xml", UnknownNameError),
        ("native|", UserError),
        ("|xml", UserError),
    ],
)
def test_both_parts_must_be_known_formats(spec: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        get_format(spec)


PIECES = st.sampled_from(
    ["<tool_call>", "</tool_call>", "[TOOL_CALLS]", '{"name": "search", "arguments": {',
     '"q": "x"}}', "[search(q=", ")]", "<|python_tag|>", "text ", "\n", '{"tool": "search"'],
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(PIECES, max_size=12).map("".join), st.sampled_from(["native|xml", "xml|native",
       "mistral|prompt-json", "native|pythonic|llama3-json"]))  # fmt: skip
def test_a_composition_never_raises_and_always_says_its_path(text: str, spec: str) -> None:
    fmt = get_format(spec)
    got = fmt.parse_reply(ModelReply(text=text), TOOLS)
    assert got.via in ("primary", "fallback")
    assert got.via == "primary" or got.calls
    fmt.sanitize(text)
    fmt.continue_conversation([], ModelReply(text=text), [])
