"""nl-tools: calls stated in plain sentences, read back by the offered tools (issue 37)."""

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
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench import codes
from toolbench.formats.base import ModelReply, Requirements, ShotsOptions, ToolCall
from toolbench.formats.format_registry import get_format
from toolbench.formats.nl_tools import MAX_ARGS, NlTools, call_text
from toolbench.tools import ToolDef

F = NlTools()
PARIS = [("get_weather", {"city": "Paris"})]
PARIS3 = [("get_weather", {"city": "Paris", "days": 3})]
L1 = [codes.CALL_LENIENT]
TEXT_AFTER = [codes.STOP_TEXT_AFTER_CALL]

CONTRACT = (ShotsOptions, Requirements())
"""This format's contract row (options model, requirements): no stop sequences."""


# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    (
        "canonical",
        'Use get_weather with city set to "Paris" and days set to 3.',
        PARIS3,
        "strict",
        "",
        [],
        [],
    ),
    ("one_arg", 'Use get_weather with city set to "Paris".', PARIS, "strict", "", [], []),
    ("no_args", "Use search.", [("search", {})], "strict", "", [], []),
    ("no_args_parens", "Use search()", [("search", {})], "strict", "", [], []),
    ("with_no_arguments", "Use search with no arguments.", [("search", {})], "strict", "", [], []),
    (
        "bare_values",
        "Use get_weather with city set to New York and days set to 2",
        [("get_weather", {"city": "New York", "days": 2})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "comma_separator",
        'Use get_weather with city set to "Paris", days set to 3.',
        PARIS3,
        "strict",
        "",
        [],
        [],
    ),
    (
        "comma_and",
        'Use get_weather with city set to "Paris", and days set to 3.',
        PARIS3,
        "strict",
        "",
        [],
        [],
    ),
    (
        "equals_and_colon",
        'Use get_weather with city = "Paris" and days: 3.',
        PARIS3,
        "strict",
        "",
        [],
        [],
    ),
    (
        "quoted_number_typed",
        'Use get_weather with city set to "Paris" and days set to "3".',
        PARIS3,
        "strict",
        "",
        [],
        [],
    ),
    (
        "number_as_text_stays",
        "Use get_weather with city set to Paris and days set to three.",
        [("get_weather", {"city": "Paris", "days": "three"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "quoted_holds_and_and_dots",
        'Use search with q set to "cats and dogs. Also birds".',
        [("search", {"q": "cats and dogs. Also birds"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "escaped_quote",
        'Use search with q set to "say \\"hi\\"".',
        [("search", {"q": 'say "hi"'})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "curly_quotes",
        "Use get_weather with city set to \u201cParis\u201d.",
        PARIS,
        "strict",
        "",
        [],
        [],
    ),
    ("single_quotes", "Use get_weather with city set to 'Paris'.", PARIS, "strict", "", [], []),
    (
        "the_and_backticks",
        'Use the `get_weather` tool with the `city` set to "Paris".',
        PARIS,
        "strict",
        "",
        [],
        [],
    ),
    ("bullet", '- Use get_weather with city set to "Paris".', PARIS, "strict", "", [], []),
    (
        "numbered_two_calls",
        '1. Use get_weather with city set to "Paris".\n2. Use search with q set to "x".',
        [*PARIS, ("search", {"q": "x"})],
        "strict",
        "",
        [],
        [],
    ),
    (
        "prose_before",
        'I will check.\nUse get_weather with city set to "Paris".',
        PARIS,
        "strict",
        "I will check.",
        [],
        [],
    ),
    (
        "trailing_prose_same_line",
        'Use get_weather with city set to "Paris". Then I will tell you.',
        PARIS,
        "strict",
        "Then I will tell you.",
        [],
        TEXT_AFTER,
    ),
    (
        "trailing_prose_next_line",
        'Use get_weather with city set to "Paris".\nThen I will tell you.',
        PARIS,
        "strict",
        "Then I will tell you.",
        [],
        TEXT_AFTER,
    ),
    ("upper_case", 'USE GET_WEATHER WITH CITY SET TO "Paris".', PARIS, "repaired", "", L1, []),
    ("tool_case", 'Use Get_Weather with city set to "Paris".', PARIS, "repaired", "", L1, []),
    (
        "mid_line",
        'Sure, I will use get_weather with city set to "Paris".',
        PARIS,
        "repaired",
        "Sure, I will",
        L1,
        [],
    ),
    (
        "mid_line_unknown_is_prose",
        "You could use an umbrella with the hood set to up.",
        [],
        "no_call",
        "You could use an umbrella with the hood set to up.",
        [],
        [],
    ),
    ("use_caution_is_prose", "Use caution.", [], "no_call", "Use caution.", [], []),
    (
        "use_with_prose",
        "Use sunscreen with care.",
        [],
        "no_call",
        "Use sunscreen with care.",
        [],
        [],
    ),
    (
        "offered_without_args",
        "Use get_weather with care.",
        [],
        "failed",
        "",
        [codes.ARGS_NOT_OBJECT],
        [],
    ),
    ("unclosed_quote", 'Use get_weather with city set to "Paris', PARIS, "repaired", "", L1, []),
    (
        "unknown_tool",
        "Use get_time with zone set to UTC.",
        [("get_time", {"zone": "UTC"})],
        "strict",
        "",
        [codes.CALL_UNKNOWN_TOOL],
        [],
    ),
    (
        "invented_result",
        'Use get_weather with city set to "Paris".\nThe tool get_weather returned: sunny',
        PARIS,
        "strict",
        "",
        [],
        [codes.STOP_TEXT_AFTER_CALL, codes.STOP_HALLUCINATED_RESULT],
    ),
    ("no_tool_answer", "No tool.\nIt is 42.", [], "no_call", "It is 42.", [], []),
    ("plain_answer", "It is 42.", [], "no_call", "It is 42.", [], []),
    (
        "think",
        '<think>Use search with q set to 1</think>Use get_weather with city set to "Paris".',
        PARIS,
        "strict",
        "",
        [],
        [],
    ),
    (
        "json_list_value",
        'Use search with q set to "a" and tags set to ["x", "y"].',
        [("search", {"q": "a", "tags": ["x", "y"]})],
        "strict",
        "",
        [],
        [],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


FLAGS = ToolDef(
    name="set_alarm",
    description="Set an alarm.",
    parameters={
        "type": "object",
        "properties": {
            "hour": {"type": "integer"},
            "loud": {"type": "boolean"},
            "ratio": {"type": "number"},
            "label": {"type": "string"},
        },
    },
)


@pytest.mark.parametrize(
    ("reply", "args"),
    [
        ("Use set_alarm with hour set to 7 and loud set to TRUE.", {"hour": 7, "loud": True}),
        ("Use set_alarm with hour set to 07 and loud set to false.", {"hour": 7, "loud": False}),
        ('Use set_alarm with ratio set to 2.5 and label set to "7".', {"ratio": 2.5, "label": "7"}),
        ("Use set_alarm with label set to 7 and hour set to 1.5.", {"label": "7", "hour": "1.5"}),
        ("Use set_alarm with Hour set to 7.", {"hour": 7}),
    ],
)
def test_values_are_typed_by_the_schema(reply: str, args: dict[str, object]) -> None:
    assert calls_of(F.parse(reply, [FLAGS])) == [("set_alarm", args)]


def test_arguments_past_the_bound_are_text_after_the_call() -> None:
    reply = "Use search with " + " and ".join(f"a{i} set to {i}" for i in range(MAX_ARGS + 5))
    (call,) = F.parse(reply, TOOLS).calls
    assert len(call.arguments) == MAX_ARGS
    repeated = F.parse("Use search with " + "q set to 1 and " * 1000, TOOLS)
    assert calls_of(repeated) == [("search", {"q": "1"})]
    assert repeated.stop_signals == [codes.STOP_TEXT_AFTER_CALL]


def test_without_the_tool_list() -> None:
    assert (
        calls_of(F.parse('Use get_weather with city set to "Paris" and days set to 3.')) == PARIS3
    )
    assert calls_of(F.parse("Use get_time.")) == [("get_time", {})]
    assert calls_of(F.parse("Use caution.")) == []


@pytest.mark.parametrize("name", NAMESPACED)
def test_namespaced_names_read_back(name: str) -> None:
    check_name_read_back(F, f'Use {name} with title set to "x".', name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('Use get_weather with city set to "Paris".\nDone.', "Done."),
        ("No tool.\nIt is 42.", "It is 42."),
        ("ok\nThe tool get_weather returned: sunny\nbye", "ok\nbye"),
        ("<think>x</think>USE a WITH b SET TO 1", ""),
        ("```\n```Use a with b set to 1", ""),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_render() -> None:
    req, system = system_prompt(F)
    assert "Use <tool name> with <argument> set to <value> and <argument> set to <value>." in system
    assert "city (string, required): City name" in system
    assert '"No tool."' in system
    assert req.stop is None and req.tools is None


def test_shots_are_read_back() -> None:
    _, system = system_prompt(get_format("nl-tools:shots=2"))
    example = system.split("Example 1:")[1].split("The tool ")[0].split("Assistant: ")[1]
    assert calls_of(F.parse(example)) == [("get_local_time", {"city": "Tokyo"})]
    assert "Assistant: No tool.\nIt is 14:05 in Tokyo." in system


def test_call_text_round_trips() -> None:
    args = {"city": "Paris", "days": 3, "unit": "celsius"}
    assert calls_of(F.parse(call_text("get_weather", args), TOOLS)) == [("get_weather", args)]


def test_continue_conversation() -> None:
    reply = 'Use get_weather with city set to "Paris".'
    out = F.continue_conversation(
        [{"role": "user", "content": "q"}],
        ModelReply(text=reply),
        [(ToolCall(name="get_weather", arguments={"city": "Paris"}), "sunny")],
    )
    assert out[1:] == [
        {"role": "assistant", "content": reply},
        {"role": "user", "content": "The tool get_weather returned: sunny"},
    ]


SENTENCE_BITS = [
    "Use ", "use ", "USE ", "get_weather", "search", " with ", " set to ", " and ", ", ",
    '"', "'", "\u201c", "Paris", "3", ".", "\n", " ", "=", ":", "No tool.", "the ", "`",
    "The tool ", " returned:", "- ", "1. ", "<think>", "</think>", "\\",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(st.sampled_from(SENTENCE_BITS) | st.text(max_size=3), max_size=40).map("".join)
)
def test_never_raises_and_sanitize_leaves_no_marker(text: str) -> None:
    for tools in (TOOLS, None):
        got = F.parse(text, tools)
        assert not any("parser error" in e.message for e in got.errors), got.errors
        assert (got.status == "no_call") == (not got.attempted)
    out = F.sanitize(text)
    assert not any(m.search(out) for m in F.markers), out


@pytest.mark.parametrize(
    "unit",
    [
        "Use get_weather with city set to ",
        "use get_weather with a = b and ",
        "Use x with y set to " + '"' * 3,
        " " * 7 + "and ",
        "I will use get_weather ",
        "Use get_weather with city set to Paris and days set to 3, ",
    ],
)
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
