"""native: provider tool calling; structured calls in, raw message echoed back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fmt_helpers import TOOLS, calls_of

from toolbench import codes
from toolbench.formats.base import ModelReply, ToolCall
from toolbench.formats.native import DEFAULT_SYSTEM, Native

F = Native()


def call(name: str, args: str, call_id: str = "c1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


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
        '[{"name": "search", "arguments": {}}]',
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
