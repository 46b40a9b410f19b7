"""reason-then-call: free reasoning, then the calls in one <calls> block (issue 37)."""
# ruff: noqa: E501  (one table row per line reads better than wrapped rows)

from __future__ import annotations

import time

import pytest
from fmt_helpers import (
    NAMESPACED,
    TOOLS,
    ParseCase,
    calls_of,
    case_ids,
    check_name_read_back,
    check_parse,
    check_sanitize,
    system_prompt,
)

from toolbench import codes
from toolbench.formats.base import ModelReply, Requirements, ShotsOptions, ToolCall
from toolbench.formats.format_registry import get_format
from toolbench.formats.reason_then_call import ReasonThenCall, call_text

F = ReasonThenCall()
PARIS = [("get_weather", {"city": "Paris"})]
BLOCK = '<calls>\n[{"tool": "get_weather", "arguments": {"city": "Paris"}}]\n</calls>'
OPEN_ONLY = '<calls>\n[{"tool": "get_weather", "arguments": {"city": "Paris"}}]'

CONTRACT = (ShotsOptions, Requirements(stop_sequences=True))
"""This format's contract row (options model, requirements): stop at ``</calls>``."""


# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    ("reason_then_block", "The user wants Paris.\n" + BLOCK, PARIS, "strict", "", [], []),
    ("block_only", BLOCK, PARIS, "strict", "", [], []),
    ("closer_cut_by_stop", "Paris it is.\n" + OPEN_ONLY, PARIS, "strict", "", [], []),
    (
        "single_object",
        '<calls>{"tool": "search", "arguments": {"q": "x"}}</calls>',
        [("search", {"q": "x"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "name_key",
        '<calls>[{"name": "search", "arguments": {"q": "x"}}]</calls>',
        [("search", {"q": "x"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "fenced",
        '<calls>\n```json\n[{"tool": "search", "arguments": {"q": "x"}}]\n```\n</calls>',
        [("search", {"q": "x"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "two_calls",
        '<calls>[{"tool": "search", "arguments": {"q": "x"}}, {"tool": "get_weather", "arguments": {"city": "Paris"}}]</calls>',
        [("search", {"q": "x"}), *PARIS],
        "strict",
        "",
        [],
        [],
    ),
    (
        "reasoning_mentions_syntax",
        'I could write {"tool": "x"} or Action: y, but\n' + BLOCK,
        PARIS,
        "strict",
        "",
        [],
        [],
    ),
    (
        "repaired_json",
        '<calls>[{"tool": "search", "arguments": {"q": "x",}}]</calls>',
        [("search", {"q": "x"})],
        "repaired",
        "",
        [codes.JSON_REPAIRED],
        [],
    ),
    (
        "truncated",
        'Paris.\n<calls>[{"tool": "get_weather", "arguments": {"city": "Par',
        [],
        "failed",
        "",
        [codes.CALL_TRUNCATED],
        [],
    ),
    ("empty_block", "<calls></calls>", [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    (
        "empty_list_then_answer",
        "Nothing to call.\n<calls>[]</calls>\nAnswer: 42",
        [],
        "no_call",
        "42",
        [],
        [],
    ),
    (
        "text_after_block",
        BLOCK + "\nI will wait.",
        PARIS,
        "strict",
        "I will wait.",
        [],
        [codes.STOP_TEXT_AFTER_CALL],
    ),
    (
        "invented_result",
        BLOCK + '\n<call_result tool="get_weather">\nsunny\n</call_result>\nIt is sunny.',
        PARIS,
        "strict",
        "",
        [],
        [codes.STOP_TEXT_AFTER_CALL, codes.STOP_HALLUCINATED_RESULT],
    ),
    (
        "unknown_tool",
        '<calls>[{"tool": "get_time", "arguments": {}}]</calls>',
        [("get_time", {})],
        "strict",
        "",
        [codes.CALL_UNKNOWN_TOOL],
        [],
    ),
    (
        "answer_label",
        "The result says sunny.\nAnswer: It is sunny in Paris.",
        [],
        "no_call",
        "It is sunny in Paris.",
        [],
        [],
    ),
    ("bold_answer_label", "Thinking.\n**Answer:** 42", [], "no_call", "42", [], []),
    ("plain_answer", "It is sunny.", [], "no_call", "It is sunny.", [], []),
    ("think_then_block", "<think>hmm</think>" + BLOCK, PARIS, "strict", "", [], []),
    (
        "two_blocks",
        BLOCK + '\n<calls>[{"tool": "search", "arguments": {"q": "x"}}]</calls>',
        [*PARIS, ("search", {"q": "x"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "unclosed_before_next",
        '<calls>[{"tool": "search", "arg\n' + BLOCK,
        PARIS,
        "repaired",
        "",
        [codes.CALL_TRUNCATED],
        [],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


def test_reasoning_is_not_content() -> None:
    got = F.parse("<think>a</think>The user wants Paris.\n" + BLOCK, TOOLS)
    assert got.reasoning == "a\nThe user wants Paris."
    assert got.content == "" and got.raw_content == ""
    answer = F.parse("It rains, so:\nAnswer: Take an umbrella.")
    assert (answer.reasoning, answer.content, answer.final_answer) == (
        "It rains, so:",
        "Take an umbrella.",
        "Take an umbrella.",
    )


@pytest.mark.parametrize("name", NAMESPACED)
def test_namespaced_names_read_back(name: str) -> None:
    reply = f'<calls>[{{"tool": "{name}", "arguments": {{"title": "x"}}}}]</calls>'
    check_name_read_back(F, reply, name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Reasoning.\n" + BLOCK + "\nDone.", "Done."),
        ("Think.\nAnswer: 42", "42"),
        ("a </calls> b", "a  b"),
        ("<cal<calls>ls>x", ""),
        ('x <call_res</call_result>ult tool="a">', 'x  tool="a">'),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_render() -> None:
    req, system = system_prompt(F)
    assert (
        '<calls>\n[{"tool": "<tool name>", "arguments": {<argument name>: <value>, ...}}]\n</calls>'
        in system
    )
    assert "First think it through in plain text" in system
    assert "city (string, required): City name" in system
    assert req.stop == ["</calls>"] and req.tools is None


def test_shots_are_read_back() -> None:
    _, system = system_prompt(get_format("reason-then-call:shots=2"))
    example = system.split("Example 1:")[1].split("<call_result")[0]
    assert calls_of(F.parse(example)) == [("get_local_time", {"city": "Tokyo"})]
    assert "Answer: It is 14:05 in Tokyo." in system


def test_call_text_round_trips() -> None:
    got = F.parse(call_text("get_weather", {"city": "Paris", "days": 3}), TOOLS)
    assert calls_of(got) == [("get_weather", {"city": "Paris", "days": 3})]
    assert got.reasoning == "I should use get_weather."


def test_continue_conversation() -> None:
    out = F.continue_conversation(
        [{"role": "user", "content": "q"}],
        ModelReply(text=BLOCK),
        [(ToolCall(name="get_weather", arguments={"city": "Paris"}), "sunny")],
    )
    assert out[1:] == [
        {"role": "assistant", "content": BLOCK},
        {"role": "user", "content": '<call_result tool="get_weather">\nsunny\n</call_result>'},
    ]


@pytest.mark.parametrize("unit", ["<calls>", "<calls>[{", "Answer:\n", "</calls><calls>[", " " * 9])
def test_linear_time(unit: str) -> None:
    """Eight times the text costs at most about eight times the time (not 64)."""

    def cost(n: int) -> float:
        text = unit * n
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            F.parse(text, TOOLS)
            F.sanitize(text)
            best = min(best, time.perf_counter() - t0)
        return best

    small, big = cost(500), cost(4000)
    assert big < 8 * small * 3 + 0.01, (small, big)
