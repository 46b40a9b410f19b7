"""native: provider tool calling; structured calls in, raw message echoed back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fmt_helpers import TOOLS, calls_of

from toolbench import codes
from toolbench.formats.base import ModelReply, Requirements, ToolCall
from toolbench.formats.native import DEFAULT_SYSTEM, Native, NativeOptions

F = Native()


def call(name: str, args: str, call_id: str = "c1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


CONTRACT = (NativeOptions, Requirements(native_tools=True))
"""This format's contract row (options model, requirements): its ``Format.test_cases``
module is this one, and the shared contract test reads the row here."""


CASES: list[tuple[str, ModelReply, list[tuple[str, dict[str, Any]]], str, list[str]]] = [
    (
        "single",
        ModelReply(tool_calls=[call("get_weather", '{"city": "Paris"}')]),
        [("get_weather", {"city": "Paris"})],
        "strict",
        [],
    ),
    (
        "two",
        ModelReply(tool_calls=[call("search", '{"q": "a"}'), call("search", '{"q": "b"}', "c2")]),
        [("search", {"q": "a"}), ("search", {"q": "b"})],
        "strict",
        [],
    ),
    (
        "dict_arguments",
        ModelReply(tool_calls=[{"id": "x", "function": {"name": "search", "arguments": {"q": 1}}}]),
        [("search", {"q": 1})],
        "strict",
        [],
    ),
    (
        "empty_arguments",
        ModelReply(tool_calls=[call("search", "")]),
        [("search", {})],
        "strict",
        [],
    ),
    (
        "repaired",
        ModelReply(tool_calls=[call("search", '{"q": "a",}')]),
        [("search", {"q": "a"})],
        "repaired",
        [codes.JSON_REPAIRED],
    ),
    (
        "arguments_not_object",
        ModelReply(tool_calls=[call("search", "[1]")]),
        [],
        "failed",
        [codes.ARGS_NOT_OBJECT],
    ),
    (
        "unknown_tool",
        ModelReply(tool_calls=[call("launch", "{}")]),
        [("launch", {})],
        "strict",
        [codes.CALL_UNKNOWN_TOOL],
    ),
    (
        "missing_name",
        ModelReply(tool_calls=[call("", "{}")]),
        [],
        "failed",
        [codes.CALL_MISSING_NAME],
    ),
    ("text_only", ModelReply(text="Hello"), [], "no_call", []),
]


@pytest.mark.parametrize(
    ("reply", "calls", "status", "errors"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_parse_reply(
    reply: ModelReply, calls: list[tuple[str, dict[str, Any]]], status: str, errors: list[str]
) -> None:
    got = F.parse_reply(reply, TOOLS)
    assert calls_of(got) == calls
    assert got.status == status
    assert got.codes() == errors


def test_ids_and_content() -> None:
    got = F.parse_reply(
        ModelReply(text="<think>hm</think>Let me look.", tool_calls=[call("search", "{}", "abc")])
    )
    assert got.calls[0].id == "abc"
    assert (got.content, got.reasoning, got.final_answer) == ("Let me look.", "hm", None)
    assert F.parse_reply(ModelReply(text="Hi")).final_answer == "Hi"


LEAKED = '<tool_call>{"name": "search", "arguments": {"q": "x"}}</tool_call>'

# A server that failed to parse its model's call leaves it in the content (issue 7):
# an attempted call that failed to decode, never an abstention; no raw JSON stays visible.
# (id, reply, calls, status, error codes, visible content)
LEAK_CASES: list[tuple[str, ModelReply, list[tuple[str, dict[str, Any]]], str, list[str], str]] = [
    ("tagged_call_only", ModelReply(text=LEAKED), [], "failed", [codes.CALL_IN_CONTENT], ""),
    (
        "prose_around",
        ModelReply(text=f"Let me check.\n{LEAKED}\nOne moment."),
        [],
        "failed",
        [codes.CALL_IN_CONTENT],
        "Let me check.\n\nOne moment.",
    ),
    (
        "unclosed_tag",
        ModelReply(text='<tool_call>\n{"name": "search", "arguments": {}}\n<|im_end|>'),
        [],
        "failed",
        [codes.CALL_IN_CONTENT],
        "<|im_end|>",
    ),
    (
        "beside_a_structured_call",
        ModelReply(text=LEAKED, tool_calls=[call("get_weather", '{"city": "Paris"}')]),
        [("get_weather", {"city": "Paris"})],
        "repaired",
        [codes.CALL_IN_CONTENT],
        "",
    ),
    (
        "mistral_marker",
        ModelReply(text='[TOOL_CALLS][{"name": "search", "arguments": {}}]'),
        [],
        "failed",
        [codes.CALL_IN_CONTENT],
        "",  # the call is cut as mistral's own parser reads it, not only its marker
    ),
    (
        "closing_tag_alone_is_no_attempt",
        ModelReply(text="done</tool_call>"),
        [],
        "no_call",
        [],
        "done",
    ),
]


@pytest.mark.parametrize(
    ("reply", "calls", "status", "errors", "content"),
    [c[1:] for c in LEAK_CASES],
    ids=[c[0] for c in LEAK_CASES],
)
def test_call_left_in_content_is_a_failed_attempt(
    reply: ModelReply,
    calls: list[tuple[str, dict[str, Any]]],
    status: str,
    errors: list[str],
    content: str,
) -> None:
    got = F.parse_reply(reply, TOOLS)
    assert calls_of(got) == calls
    assert (got.status, got.codes(), got.content) == (status, errors, content)
    assert got.attempted is (status != "no_call")
    assert got.raw_content == reply.text.strip()
    assert any(m.search(got.raw_content) for m in F.markers)  # a raw leak
    if "<tool_call>" in reply.text:  # the whole block goes, not only its tags
        assert '"search"' not in got.content
    assert not any(m.search(got.content) for m in F.markers)


@pytest.mark.parametrize(
    ("arguments", "notes"),
    [("null", [codes.ARGS_NULL]), (None, [codes.ARGS_NULL]), ("{}", []), ("", [])],
)
def test_null_arguments_become_empty_and_are_noted(arguments: str | None, notes: list[str]) -> None:
    tc = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": arguments}}
    got = F.parse_reply(ModelReply(tool_calls=[tc]), TOOLS)
    assert [(c.name, c.arguments, c.notes) for c in got.calls] == [("search", {}, notes)]
    assert (got.status, got.errors) == ("strict", [])
    # stored calls carry "notes" only where one applies (results stay as they were)
    assert got.calls[0].model_dump().get("notes") == (notes or None)


def test_missing_arguments_key_is_no_null_note() -> None:
    got = F.parse_reply(ModelReply(tool_calls=[{"id": "c", "function": {"name": "search"}}]))
    assert [(c.arguments, c.notes) for c in got.calls] == [({}, [])]


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        (
            json.dumps(
                {"role": "assistant", "content": None, "tool_calls": [call("search", "{}")]}
            ),
            [("search", {})],
        ),
        (
            json.dumps([call("get_weather", '{"city": "Oslo"}')]),
            [("get_weather", {"city": "Oslo"})],
        ),
        ("plain words", []),
        ("[1, 2]", []),
    ],
)
def test_parse_text(text: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
    assert calls_of(F.parse(text)) == calls


def test_render_adds_system_tools_and_tool_choice() -> None:
    req = F.render(TOOLS, [{"role": "user", "content": "q"}])
    assert req.messages == [
        {"role": "system", "content": DEFAULT_SYSTEM},
        {"role": "user", "content": "q"},
    ]
    assert req.tools == [t.openai() for t in TOOLS]
    assert req.tool_choice == "auto"
    assert req.stop is None
    own = [{"role": "system", "content": "Mine."}, {"role": "user", "content": "q"}]
    assert F.render(TOOLS, own).messages == own


def test_continue_echoes_raw_message_unchanged() -> None:
    raw = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("search", '{"q": "a"}', "id-1")],
        "provider_specific_fields": {"thought_signature": "sig=="},
    }
    reply = ModelReply(tool_calls=raw["tool_calls"], raw_message=raw)
    out = F.continue_conversation(
        [{"role": "user", "content": "q"}], reply, [(ToolCall(name="search", id="id-1"), "res")]
    )
    assert out[1] is raw or out[1] == raw
    assert out[2] == {"role": "tool", "tool_call_id": "id-1", "content": "res"}


def test_continue_builds_message_when_raw_missing() -> None:
    reply = ModelReply(
        text="", tool_calls=[{"function": {"name": "search", "arguments": {"q": "a"}}}]
    )
    out = F.continue_conversation([], reply, [(ToolCall(name="search"), "res")])
    assert out[0] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "search", "arguments": '{"q": "a"}'},
            }
        ],
    }
    assert out[1] == {"role": "tool", "tool_call_id": "call_0", "content": "res"}


# Issue 11: every dialect's own call syntax left in a native reply's content is a call the
# server failed to parse (an attempt and a leak), read with that dialect's own markers.
# (id, content, the opener the error names, what a user still sees)
DIALECT_LEAKS: list[tuple[str, str, str, str]] = [
    ("mistral_v11", 'Sure. [TOOL_CALLS]search[ARGS]{"q": "x"}', "[TOOL_CALLS]", "Sure."),
    (
        "llama3_tag",
        '<|python_tag|>{"name": "search", "parameters": {"q": "x"}}',
        "<|python_tag|>",
        "",
    ),
    (
        "llama3_bare_json",
        'I will search. {"name": "search", "parameters": {"q": "x"}}',
        '{"name": "search", "parameters":',
        "I will search.",
    ),
    ("pythonic_list", '[search(q="x"), get_weather(city="Paris")]', "[search(q=", ""),
    (
        "qwen3_coder",
        "<tool_call>\n<function=search>\n<parameter=q>\nx\n</parameter>\n</function>\n</tool_call>",
        "<tool_call>",
        "",
    ),
    (
        "deepseek",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>search\n```json\n"
        '{"q": "x"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        "<｜tool▁calls▁begin｜>",
        "",
    ),
    (
        "kimi_k2",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0"
        '<|tool_call_argument_begin|>{"q": "x"}<|tool_call_end|><|tool_calls_section_end|>',
        "<|tool_calls_section_begin|>",
        "",
    ),
    (
        "harmony",
        '<|channel|>commentary to=functions.search <|constrain|>json<|message|>{"q": "x"}<|call|>',
        "<|channel|>",
        "",
    ),
    (
        "claude_xml",
        'Checking. <function_calls><invoke name="search"><parameter name="q">x</parameter>'
        "</invoke></function_calls>",
        "<function_calls>",
        "Checking.",
    ),
]


@pytest.mark.parametrize(
    ("text", "opener", "content"), [c[1:] for c in DIALECT_LEAKS], ids=[c[0] for c in DIALECT_LEAKS]
)
def test_dialect_syntax_in_content_is_an_attempt_and_a_leak(
    text: str, opener: str, content: str
) -> None:
    from toolbench.scoring.leakage import find_marker, installed_markers

    got = F.parse_reply(ModelReply(text=text), TOOLS)
    assert (got.status, got.attempted, got.calls) == ("failed", True, [])
    assert got.codes() == [codes.CALL_IN_CONTENT]
    assert f"content holds {opener!r} call syntax" in got.errors[0].message
    assert got.content == content
    markers = installed_markers()
    assert find_marker(got.raw_content, markers) is not None  # a raw leak
    assert find_marker(got.content, markers) is None  # nothing raw left for the user


@pytest.mark.parametrize(
    "text",
    [
        "The list [a, b] has two items.",
        "Use d[f(x)] in code.",
        "Call me at [09:00].",
        "I used the search tool earlier.",
    ],
)
def test_prose_that_only_resembles_a_dialect_is_an_abstention(text: str) -> None:
    got = F.parse_reply(ModelReply(text=text), TOOLS)
    assert (got.status, got.attempted, got.codes(), got.content) == ("no_call", False, [], text)
