"""react: Thought / Action / Action Input / Observation / Final Answer."""
# ruff: noqa: E501  (one table row per line reads better than wrapped rows)

from __future__ import annotations

import pytest
from fmt_helpers import (
    ParseCase,
    calls_of,
    case_ids,
    check_parse,
    check_sanitize,
    system_prompt,
)
from test_pythonic import NAMESPACED, check_with

from toolbench import codes
from toolbench.formats.base import FormatOptions, ModelReply, Requirements, ToolCall
from toolbench.formats.prompt_axes import StyleOptions
from toolbench.formats.react import React

F = React()
A = 'Thought: I need the weather.\nAction: get_weather\nAction Input: {"city": "Paris"}'
PARIS = [("get_weather", {"city": "Paris"})]

CONTRACT = (StyleOptions, Requirements(stop_sequences=True))
"""This format's contract row (options model, requirements): its ``Format.test_cases``
module is this one, and the shared contract test reads the row here."""


# (id, reply, calls, status, final answer, error codes, stop signals)
CASES: list[ParseCase] = [
    ("single", A, PARIS, "strict", None, [], []),
    (
        "no_thought",
        'Action: get_weather\nAction Input: {"city": "Paris"}',
        PARIS,
        "strict",
        None,
        [],
        [],
    ),
    ("prose_before", "Okay.\n" + A, PARIS, "strict", None, [], []),
    (
        "tricky_strings",
        'Action: search\nAction Input: {"q": "a {b}\\n \\"c\\" ü\\nAction: x"}',
        [("search", {"q": 'a {b}\n "c" ü\nAction: x'})],
        "strict",
        None,
        [],
        [],
    ),
    (
        "multiline_input",
        'Action: search\nAction Input: {\n  "q": "x"\n}\n',
        [("search", {"q": "x"})],
        "strict",
        None,
        [],
        [],
    ),
    (
        "fenced_input",
        'Action: search\nAction Input: ```json\n{"q": "x"}\n```',
        [("search", {"q": "x"})],
        "strict",
        None,
        [],
        [],
    ),
    ("think", "<think>Action: search</think>" + A, PARIS, "strict", None, [], []),
    (
        "two_actions",
        A + '\nAction: search\nAction Input: {"q": "x"}',
        PARIS,
        "strict",
        None,
        [],
        [codes.STOP_MULTIPLE_ACTIONS, codes.STOP_TEXT_AFTER_CALL],
    ),
    (
        "hallucinated_observation",
        A + "\nObservation: sunny\nThought: done\nFinal Answer: Sunny.",
        PARIS,
        "strict",
        "Sunny.",
        [],
        [codes.STOP_HALLUCINATED_RESULT, codes.STOP_TEXT_AFTER_CALL],
    ),
    (
        "unbalanced_not_at_end",
        'Action: search\nAction Input: {"q": {"x": 1}\nThought: wait',
        [("search", {"q": {"x": 1}})],
        "repaired",
        None,
        [codes.JSON_REPAIRED],
        [codes.STOP_TEXT_AFTER_CALL],
    ),
    (
        "truncated",
        'Action: get_weather\nAction Input: {"city": "Pa',
        [],
        "failed",
        None,
        [codes.CALL_TRUNCATED],
        [],
    ),
    (
        "unknown_tool",
        "Action: launch\nAction Input: {}",
        [("launch", {})],
        "strict",
        None,
        [codes.CALL_UNKNOWN_TOOL],
        [],
    ),
    (
        "repaired",
        "Action: get_weather\nAction Input: {'city': 'Paris',}",
        PARIS,
        "repaired",
        None,
        [codes.JSON_REPAIRED],
        [],
    ),
    (
        "hopeless",
        "Action: get_weather\nAction Input: Paris please",
        [],
        "failed",
        None,
        [codes.ARGS_NOT_OBJECT],
        [],
    ),
    (
        "missing_name",
        "Action:\nAction Input: {}",
        [],
        "failed",
        None,
        [codes.CALL_MISSING_NAME],
        [],
    ),
    ("no_input_means_no_args", "Action: search", [("search", {})], "strict", None, [], []),
    (
        "final_answer",
        "Thought: I know this.\nFinal Answer: Paris is the capital.",
        [],
        "no_call",
        "Paris is the capital.",
        [],
        [],
    ),
    ("plain_text", "Just text.", [], "no_call", None, [], []),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case, "final_answer")


# Tool names read back exactly as the tool list offered them, and the Action line written
# the ways models write it (issue 34): (id, reply, calls, status, final answer, error
# codes, stop signals), read with test_pythonic's NAMESPACED tools.
NAME_CASES: list[ParseCase] = [
    ("dotted", 'Thought: gcd first.\nAction: math.gcd\nAction Input: {"num1": 36, "num2": 48}', [("math.gcd", {"num1": 36, "num2": 48})], "strict", None, [], []),
    ("slashed_in_backticks", 'Action: `fs/read_file`\nAction Input: {"path": "notes.md"}', [("fs/read_file", {"path": "notes.md"})], "strict", None, [], []),
    ("colon", 'Action: calendar:add_event\nAction Input: {"title": "Standup", "date": "2025-03-04"}', [("calendar:add_event", {"title": "Standup", "date": "2025-03-04"})], "strict", None, [], []),
    ("hyphenated", 'Action: weather-forecast\nAction Input: {"city": "Lima"}', [("weather-forecast", {"city": "Lima"})], "strict", None, [], []),
    ("unoffered_dotted_is_unknown", "Action: os.path.join\nAction Input: {}", [("os.path.join", {})], "strict", None, [codes.CALL_UNKNOWN_TOOL], []),
    ("action_written_as_a_call", "Thought: gcd.\nAction: math.gcd(num1=36, num2=48)", [("math.gcd", {"num1": 36, "num2": 48})], "repaired", None, [codes.CALL_LENIENT], []),
    ("action_call_with_json_literal", "Action: spotify.play(artist='Adele', shuffle=true)", [("spotify.play", {"artist": "Adele", "shuffle": True})], "repaired", None, [codes.CALL_LENIENT, codes.CALL_LENIENT], []),
    ("action_call_not_literal", "Action: fs/read_file(path=os.getcwd())", [], "failed", None, [codes.ARGS_NOT_LITERAL], []),
    ("action_call_positional", 'Action: search("llamas")', [], "failed", None, [codes.CALL_BAD_SHAPE], []),
    ("action_with_empty_parens", 'Action: get_weather()\nAction Input: {"city": "Oslo"}', [("get_weather", {"city": "Oslo"})], "repaired", None, [codes.CALL_LENIENT], []),
    ("markdown_escaped", 'Action: get\\_weather\nAction Input: {"city": "Oslo"}', [("get_weather", {"city": "Oslo"})], "repaired", None, [codes.CALL_LENIENT], []),
]  # fmt: skip


@pytest.mark.parametrize("case", NAME_CASES, ids=case_ids(NAME_CASES))
def test_tool_names_read_back_as_offered(case: ParseCase) -> None:
    check_with(F, case, NAMESPACED, "final_answer")


# Final answers as real models write them (issue 7).
# (id, reply, calls, status, final answer, error codes, stop signals)
FINAL_CASES: list[ParseCase] = [
    (
        "mid_line_after_thought",
        "Thought: I know this. Final Answer: Paris is the capital.",
        [],
        "no_call",
        "Paris is the capital.",
        [],
        [],
    ),
    (
        "mid_line_after_prose",
        "So the answer is clear Final Answer:  42  ",
        [],
        "no_call",
        "42",
        [],
        [],
    ),
    (
        "later_thought_does_not_cut",
        "Final Answer: Paris is the capital.\nThought: It has 2.1 million people.",
        [],
        "no_call",
        "Paris is the capital.\nIt has 2.1 million people.",
        [],
        [],
    ),
    (
        "multi_line_answer_with_thought_line",
        "Thought: easy\nFinal Answer: Steps:\n1. a\nThought: then b\n2. c",
        [],
        "no_call",
        "Steps:\n1. a\nthen b\n2. c",
        [],
        [],
    ),
    (
        "last_final_answer_wins",
        "Final Answer: draft\nThought: better\nFinal Answer: Paris.",
        [],
        "no_call",
        "Paris.",
        [],
        [],
    ),
    (
        "observation_ends_the_answer",
        "Final Answer: Paris.\nObservation: invented",
        [],
        "no_call",
        "Paris.",
        [],
        [],
    ),
    (
        "label_inside_action_input_is_no_answer",
        'Action: search\nAction Input: {"q": "Final Answer: x"}',
        [("search", {"q": "Final Answer: x"})],
        "strict",
        None,
        [],
        [],
    ),
    ("input_null", "Action: search\nAction Input: null", [("search", {})], "strict", None, [], []),
    (
        "input_null_string",
        'Action: search\nAction Input: "null"',
        [("search", {})],
        "strict",
        None,
        [],
        [],
    ),
]


@pytest.mark.parametrize("case", FINAL_CASES, ids=case_ids(FINAL_CASES))
def test_final_answer(case: ParseCase) -> None:
    check_parse(F, case, "final_answer")
    got = F.parse(case[1])
    if case[4] is not None:
        assert got.content == case[4]  # the label is never visible
        assert "Final Answer" not in got.content


@pytest.mark.parametrize(
    "reply", ["Action: search\nAction Input: null", 'Action: search\nAction Input: "null"']
)
def test_null_input_is_noted(reply: str) -> None:
    assert [c.notes for c in F.parse(reply).calls] == [[codes.ARGS_NULL]]


def test_content() -> None:
    assert F.parse(A).content == "I need the weather."
    assert F.parse(A).raw_content == "Thought: I need the weather."
    assert F.parse("Thought: sure\nFinal Answer: 42").content == "42"
    assert F.parse("Just text.").content == "Just text."
    got = F.parse("<think>deep</think>Final Answer: 42")
    assert (got.reasoning, got.content) == ("deep", "42")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Thought: a\nFinal Answer: b", "a\nb"),
        ("Thought: Action: Observation: x", "x"),
        ("  Final Answer:   42", "42"),
        ("<think>t</think>Action Input: {}", "{}"),
        ("not a label: Thought: inline", "not a label: Thought: inline"),
        ("so the Final Answer: 42", "so the 42"),
        ("x\nThFinal Answer: ought: y", "x\ny"),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_render() -> None:
    req, system = system_prompt(F)
    assert "Action: the tool to use, exactly one of [get_weather, search]" in system
    assert "city (string, required): City name" in system
    assert 'one of: "celsius", "fahrenheit"' in system
    assert req.stop == ["\nObservation:"]
    assert req.tools is None


def test_shots() -> None:
    _, system = system_prompt(React(FormatOptions(shots=3)))
    assert "Example 3:" in system and "Example 4:" not in system
    example = system.split("Example 1:")[1].split("Observation:")[0]
    assert calls_of(F.parse(example)) == [("get_local_time", {"city": "Tokyo"})]
    assert "Final Answer: It is 14:05 in Tokyo." in system


def test_continue_conversation() -> None:
    out = F.continue_conversation(
        [{"role": "user", "content": "q"}],
        ModelReply(text=A),
        [(ToolCall(name="get_weather", arguments={"city": "Paris"}), "sunny")],
    )
    assert out[1:] == [
        {"role": "assistant", "content": A},
        {"role": "user", "content": "Observation: sunny"},
    ]
