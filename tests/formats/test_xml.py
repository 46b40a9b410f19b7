"""xml: Hermes/Qwen ``<tool_call>`` tags."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fmt_helpers import (
    TOOLS,
    ParseCase,
    calls_of,
    case_ids,
    check_parse,
    check_sanitize,
    system_prompt,
)

from toolbench import codes
from toolbench.formats.base import FormatOptions, ModelReply, ToolCall
from toolbench.formats.xml import Xml

F = Xml()


def tc(name: str, args: dict[str, Any]) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


W = tc("get_weather", {"city": "Paris"})
PARIS = [("get_weather", {"city": "Paris"})]

# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    ("single", W, PARIS, "strict", "", [], []),
    ("prose_before", "Checking.\n" + W, PARIS, "strict", "Checking.", [], []),
    ("prose_after", W + " ok?", PARIS, "strict", "ok?", [], [codes.STOP_TEXT_AFTER_CALL]),
    (
        "two_calls",
        W + "\n" + tc("search", {"q": "x"}),
        [*PARIS, ("search", {"q": "x"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "tricky_strings",
        tc("search", {"q": 'a {b} "c" \\ \n ü 東京 }{'}),
        [("search", {"q": 'a {b} "c" \\ \n ü 東京 }{'})],
        "strict",
        "",
        [],
        [],
    ),
    ("code_fence", "```xml\n" + W + "\n```", PARIS, "strict", "", [], []),
    (
        "fence_inside_tag",
        '<tool_call>```json\n{"name": "search", "arguments": {}}\n```</tool_call>',
        [("search", {})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "think",
        "<think>plan " + tc("search", {"q": "no"}) + "</think>" + W,
        PARIS,
        "strict",
        "",
        [],
        [],
    ),
    (
        "open_think_from_template",
        "I should call it\n</think>\n" + W,
        PARIS,
        "strict",
        "",
        [],
        [],
    ),
    (
        "closing_tag_eaten_by_stop",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}',
        PARIS,
        "strict",
        "",
        [],
        [],
    ),
    (
        "truncated",
        'Hi <tool_call>\n{"name": "get_weather", "arguments": {"city": "Par',
        [],
        "failed",
        "Hi",
        [codes.CALL_TRUNCATED],
        [],
    ),
    (
        "unknown_tool",
        tc("launch", {}),
        [("launch", {})],
        "strict",
        "",
        [codes.CALL_UNKNOWN_TOOL],
        [],
    ),
    (
        "repaired",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}</tool_call>',
        PARIS,
        "repaired",
        "",
        [codes.JSON_REPAIRED],
        [],
    ),
    (
        "hopeless",
        "<tool_call>get_weather city=Paris</tool_call>",
        [],
        "failed",
        "",
        [codes.JSON_DECODE_FAILED],
        [],
    ),
    ("no_call", "It is sunny.", [], "no_call", "It is sunny.", [], []),
    (
        "arguments_as_string",
        '<tool_call>{"name": "search", "arguments": "{\\"q\\": \\"x\\"}"}</tool_call>',
        [("search", {"q": "x"})],
        "strict",
        "",
        [],
        [],
    ),
    ("empty_tag", "<tool_call></tool_call>", [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    (
        "missing_name",
        '<tool_call>{"arguments": {}}</tool_call>',
        [],
        "failed",
        "",
        [codes.CALL_MISSING_NAME],
        [],
    ),
    (
        "args_not_object",
        '<tool_call>{"name": "search", "arguments": 5}</tool_call>',
        [],
        "failed",
        "",
        [codes.ARGS_NOT_OBJECT],
        [],
    ),
    (
        "hallucinated_result",
        W + "\n<tool_response>\nsunny\n</tool_response>",
        PARIS,
        "strict",
        "",
        [],
        [codes.STOP_TEXT_AFTER_CALL, codes.STOP_HALLUCINATED_RESULT],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


def test_reasoning_split_out() -> None:
    got = F.parse("<think>\nhmm\n</think>\nAnswer.")
    assert (got.reasoning, got.content, got.final_answer) == ("hmm", "Answer.", "Answer.")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a " + W + " b", "a  b"),
        ("x </tool_call> <tools>y</tools>", "x  y"),
        ("<tool_response>r</tool_response>done", "done"),
        ("keep <tool_call>{cut", "keep"),
        ("<tool_<tool_call>call>", "<tool_"),
        ("<tool_call<tool_call>>", "<tool_call"),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_render() -> None:
    req, system = system_prompt(
        F, [{"role": "system", "content": "Sys."}, {"role": "user", "content": "q"}]
    )
    assert system.startswith("Sys.\n\n")
    listed = system.split("<tools>\n")[1].split("\n</tools>")[0].splitlines()
    assert [json.loads(line) for line in listed] == [t.openai() for t in TOOLS]
    assert "<tool_call>" in system and "<tool_response>" in system
    assert req.stop == ["<tool_response>"]
    assert req.tools is None


def test_shots() -> None:
    _, system = system_prompt(Xml(FormatOptions(shots=1)))
    assert "Example 1:" in system and "Example 2:" not in system
    example = system.split("Example 1:")[1]
    assert calls_of(F.parse(example.split("<tool_response>")[0])) == [
        ("get_local_time", {"city": "Tokyo"})
    ]


def test_continue_conversation() -> None:
    out = F.continue_conversation(
        [{"role": "user", "content": "q"}],
        ModelReply(text=W),
        [(ToolCall(name="get_weather"), "sunny"), (ToolCall(name="search"), "none")],
    )
    assert out[1:] == [
        {"role": "assistant", "content": W},
        {
            "role": "user",
            "content": "<tool_response>\nsunny\n</tool_response>\n"
            "<tool_response>\nnone\n</tool_response>",
        },
    ]
