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


def test_leaked_template_is_content_not_a_call() -> None:
    text = '<tool_call>{"name": "search", "arguments": {}}</tool_call>'
    got = F.parse_reply(ModelReply(text=text))
    assert got.calls == [] and got.status == "no_call"
    assert got.raw_content == text
    assert any(m.search(got.raw_content) for m in F.markers)
    assert not any(m.search(got.content) for m in F.markers)


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
