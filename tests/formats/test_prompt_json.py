"""prompt-json: bare ``{"tool": ..., "arguments": ...}`` objects anywhere in the reply."""
# ruff: noqa: E501  (one table row per line reads better than wrapped rows)

from __future__ import annotations

import pytest
from fmt_helpers import TOOLS, ParseCase, case_ids, check_parse, check_sanitize, system_prompt
from test_pythonic import NAMESPACED, check_with

from toolbench import codes
from toolbench.formats.base import FormatOptions, ModelReply, Requirements, ToolCall
from toolbench.formats.prompt_json import PromptJson, PromptJsonOptions

F = PromptJson()
W = '{"tool": "get_weather", "arguments": {"city": "Paris"}}'

CONTRACT = (PromptJsonOptions, Requirements())
"""This format's contract row (options model, requirements): its ``Format.test_cases``
module is this one, and the shared contract test reads the row here."""


# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    ("single", W, [("get_weather", {"city": "Paris"})], "strict", "", [], []),
    (
        "prose_before",
        "Let me check.\n" + W,
        [("get_weather", {"city": "Paris"})],
        "strict",
        "Let me check.",
        [],
        [],
    ),
    (
        "prose_after",
        W + "\nI will wait.",
        [("get_weather", {"city": "Paris"})],
        "strict",
        "I will wait.",
        [],
        [codes.STOP_TEXT_AFTER_CALL],
    ),
    (
        "two_calls",
        W + '\n{"tool": "search", "arguments": {"q": "x"}}',
        [("get_weather", {"city": "Paris"}), ("search", {"q": "x"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "tricky_strings",
        '{"tool": "search", "arguments": {"q": "a {b} \\"c\\" }{ \\\\ line\\nnext ü 東京"}}',
        [("search", {"q": 'a {b} "c" }{ \\ line\nnext ü 東京'})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "code_fence",
        "Calling:\n```json\n" + W + "\n```",
        [("get_weather", {"city": "Paris"})],
        "strict",
        "Calling:",
        [],
        [],
    ),
    (
        "think_block",
        '<think>maybe {"tool": "search", "arguments": {}}</think>' + W,
        [("get_weather", {"city": "Paris"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "truncated",
        'Sure. {"tool": "get_weather", "arguments": {"city": "Par',
        [],
        "failed",
        "Sure.",
        [codes.CALL_TRUNCATED],
        [],
    ),
    (
        "unknown_tool",
        '{"tool": "launch", "arguments": {}}',
        [("launch", {})],
        "strict",
        "",
        [codes.CALL_UNKNOWN_TOOL],
        [],
    ),
    (
        "repaired_single_quotes",
        "{'tool': 'get_weather', 'arguments': {'city': 'Paris'}}",
        [("get_weather", {"city": "Paris"})],
        "repaired",
        "",
        [codes.JSON_REPAIRED],
        [],
    ),
    (
        "repaired_trailing_comma",
        '{"tool": "get_weather", "arguments": {"city": "Paris",},}',
        [("get_weather", {"city": "Paris"})],
        "repaired",
        "",
        [codes.JSON_REPAIRED],
        [],
    ),
    (
        "hopeless",
        '{"tool": }}}',
        [],
        "failed",
        "}}",
        [codes.JSON_DECODE_FAILED],
        [codes.STOP_TEXT_AFTER_CALL],
    ),
    (
        "malformed_then_good",
        '{"tool": "search", "arguments": {"q": "a"}\n{"tool": "search", "arguments": {"q": "b"}}',
        [("search", {"q": "a"}), ("search", {"q": "b"})],
        "repaired",
        "",
        [codes.JSON_REPAIRED],
        [],
    ),
    (
        "stray_brace_and_quote_in_prose",
        'Use {city" as input: {"tool": "search", "arguments": {"q": "x"}}',
        [("search", {"q": "x"})],
        "strict",
        'Use {city" as input:',
        [],
        [],
    ),
    ("no_call", "Paris is sunny today.", [], "no_call", "Paris is sunny today.", [], []),
    (
        "plain_json_is_text",
        'The record is {"name": "Bob", "age": 3}.',
        [],
        "no_call",
        'The record is {"name": "Bob", "age": 3}.',
        [],
        [],
    ),
    (
        "name_arguments_shape",
        '{"name": "search", "arguments": {"q": "x"}}',
        [("search", {"q": "x"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "arguments_as_json_string",
        '{"tool": "search", "arguments": "{\\"q\\": \\"x\\"}"}',
        [("search", {"q": "x"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "missing_name",
        '{"tool": "", "arguments": {}}',
        [],
        "failed",
        "",
        [codes.CALL_MISSING_NAME],
        [],
    ),
    (
        "args_not_object",
        '{"tool": "search", "arguments": [1, 2]}',
        [],
        "failed",
        "",
        [codes.ARGS_NOT_OBJECT],
        [],
    ),
    (
        "hallucinated_result",
        W + "\nTool Result (get_weather):\nsunny",
        [("get_weather", {"city": "Paris"})],
        "strict",
        "sunny",
        [],
        [codes.STOP_TEXT_AFTER_CALL, codes.STOP_HALLUCINATED_RESULT],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


# Tool names read back exactly as the tool list offered them (issue 34): (id, reply,
# calls, status, content, error codes, stop signals), read with test_pythonic's NAMESPACED.
NAME_CASES: list[ParseCase] = [
    ("dotted", '{"tool": "math.gcd", "arguments": {"num1": 36, "num2": 48}}', [("math.gcd", {"num1": 36, "num2": 48})], "strict", "", [], []),
    ("slashed_named_in_fence", 'Reading it.\n```json\n{"name": "fs/read_file", "arguments": {"path": "a.txt"}}\n```', [("fs/read_file", {"path": "a.txt"})], "strict", "Reading it.", [], []),
    ("colon_and_hyphen", '{"tool": "calendar:add_event", "arguments": {"title": "x"}}\n{"tool": "weather-forecast", "arguments": {"city": "Lima"}}', [("calendar:add_event", {"title": "x"}), ("weather-forecast", {"city": "Lima"})], "strict", "", [], []),
    ("list_with_unoffered_dotted", '[{"tool": "github.create_issue", "arguments": {"repo": "a/b", "title": "t"}}, {"tool": "os.remove", "arguments": {"path": "/"}}]', [("github.create_issue", {"repo": "a/b", "title": "t"}), ("os.remove", {"path": "/"})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("array_of_calls_cut_whole", 'Both: [{"tool": "math.gcd", "arguments": {"num1": 4, "num2": 6}}, {"tool": "fs/read_file", "arguments": {"path": "x"}}] then I wait.', [("math.gcd", {"num1": 4, "num2": 6}), ("fs/read_file", {"path": "x"})], "strict", "Both:  then I wait.", [], [codes.STOP_TEXT_AFTER_CALL]),
    ("only_unoffered_is_a_call_not_an_abstention", '{"tool": "scipy.stats.ttest_ind", "arguments": {"a": [1], "b": [2]}}', [("scipy.stats.ttest_ind", {"a": [1], "b": [2]})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
]  # fmt: skip


@pytest.mark.parametrize("case", NAME_CASES, ids=case_ids(NAME_CASES))
def test_tool_names_read_back_as_offered(case: ParseCase) -> None:
    check_with(F, case, NAMESPACED)


def test_think_is_reasoning_and_final_answer_is_content() -> None:
    got = F.parse("<think>easy</think>It is 4.")
    assert got.reasoning == "easy"
    assert got.final_answer == "It is 4."
    assert F.parse(W).final_answer is None


def test_unclosed_think_is_all_reasoning() -> None:
    got = F.parse("<think>" + W)
    assert got.calls == []
    assert got.status == "no_call"
    assert got.reasoning == W


def test_raw_content_keeps_markers_content_does_not() -> None:
    got = F.parse(W + "\nTool Result (get_weather): sunny")
    assert "Tool Result (" in got.raw_content
    assert "Tool Result (" not in got.content


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hi " + W + " there", "Hi  there"),
        ("Tool Result (x): 3", "3"),
        ('<think>t</think>ok {"tool": "a", "arguments": {', "ok"),
        ('{ {"tool": "a"', ""),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_render_describes_tools_and_merges_system() -> None:
    req, system = system_prompt(
        F, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    )
    assert system.startswith("Be brief.\n\n")
    assert "- get_weather: Current weather for a city." in system
    assert "city (string, required): City name" in system
    assert 'unit (string, optional, one of: "celsius", "fahrenheit", default: "celsius")' in system
    assert "days (integer, optional): Forecast days" in system
    assert '{"tool": "<tool name>", "arguments":' in system
    assert req.messages[1:] == [{"role": "user", "content": "hi"}]
    assert req.stop is None and req.tools is None
    assert "Example" not in system


def test_render_adds_system_when_missing() -> None:
    req, _ = system_prompt(F)
    assert [m["role"] for m in req.messages] == ["system", "user"]


def test_shots_add_examples_with_neutral_tool() -> None:
    _, text = system_prompt(PromptJson(FormatOptions(shots=2)))
    assert "Example 1:" in text and "Example 2:" in text and "Example 3:" not in text
    assert '{"tool": "get_local_time", "arguments": {"city": "Tokyo"}}' in text
    assert "Tool Result (get_local_time):" in text
    # the examples parse with the format's own parser
    assert PromptJson().parse(text.split("Example 1:")[1]).calls[0].name == "get_local_time"


def test_continue_conversation() -> None:
    msgs = [{"role": "user", "content": "weather?"}]
    reply = ModelReply(text=W)
    out = F.continue_conversation(
        msgs, reply, [(ToolCall(name="get_weather", arguments={"city": "Paris"}), "sunny")]
    )
    assert out == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": W},
        {"role": "user", "content": "Tool Result (get_weather):\nsunny"},
    ]
    two = F.continue_conversation(
        msgs, reply, [(ToolCall(name="a"), "1"), (ToolCall(name="b"), "2")]
    )
    assert two[-1] == {"role": "user", "content": "Tool Result (a):\n1\n\nTool Result (b):\n2"}


@pytest.mark.parametrize(
    ("reply", "notes"),
    [
        ('{"tool": "search", "arguments": null}', [codes.ARGS_NULL]),
        ('{"tool": "search", "arguments": "null"}', [codes.ARGS_NULL]),
        ('{"tool": "search", "arguments": {}}', []),
        ('{"tool": "search"}', []),
    ],
)
def test_null_arguments_become_empty_and_are_noted(reply: str, notes: list[str]) -> None:
    got = F.parse(reply, TOOLS)
    assert [(c.name, c.arguments, c.notes) for c in got.calls] == [("search", {}, notes)]
    assert (got.status, got.errors) == ("strict", [])


@pytest.mark.parametrize(
    ("reply", "calls", "content", "errors"),
    [
        # 129 calls: 128 read, the rest neither read nor shown (as xml's call blocks).
        ((W + "\n") * 129 + "done", 128, "", [codes.CALL_BAD_SHAPE]),
        ((W + "\n") * 128 + "done", 128, "done", []),
        # A call behind more bracket runs than one scan reads: a typed failure, not a call.
        ("{] " * 20_000 + W, 0, None, [codes.CALL_BAD_SHAPE]),
    ],
    ids=["129_calls", "128_calls", "call_after_budget"],
)
def test_bounded_reading(reply: str, calls: int, content: str | None, errors: list[str]) -> None:
    """The work per reply is bounded; what is not read is said, with a typed code."""
    got = F.parse(reply)
    assert len(got.calls) == calls
    assert [e.code for e in got.errors] == errors
    if content is not None:
        assert got.content == content
    assert got.status == ("failed" if calls == 0 else "repaired" if errors else "strict")
