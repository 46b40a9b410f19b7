"""claude-xml: ``<function_calls><invoke name=...><parameter name=...>`` prompt-based calls."""
# ruff: noqa: E501  (one table row per line reads better than wrapped rows)

from __future__ import annotations

import pytest
from fmt_helpers import (
    NAMESPACED,
    TOOLS,
    USER_Q,
    ParseCase,
    case_ids,
    check_name_read_back,
    check_parse,
    check_sanitize,
)

from toolbench import codes
from toolbench.formats.base import FormatOptions, ModelReply, Requirements, ShotsOptions, ToolCall
from toolbench.formats.claude_xml import ClaudeXml

F = ClaudeXml()
W = '<function_calls>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n<parameter name="days">3</parameter>\n</invoke>\n</function_calls>'
PARIS = [("get_weather", {"city": "Paris", "days": 3})]
AFTER = [codes.STOP_TEXT_AFTER_CALL]

CONTRACT = (ShotsOptions, Requirements(stop_sequences=True))
"""This format's contract row (options model, requirements): its ``Format.test_cases``
module is this one, and the shared contract test reads the row here."""


# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    ("typed_by_schema", W, PARIS, "strict", "", [], []),
    ("two_invokes", '<function_calls>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>\n<invoke name="search">\n<parameter name="q">x</parameter>\n</invoke>\n</function_calls>', [("get_weather", {"city": "Paris"}), ("search", {"q": "x"})], "strict", "", [], []),
    ("string_param_stays_text", '<function_calls><invoke name="search"><parameter name="q">42</parameter></invoke></function_calls>', [("search", {"q": "42"})], "strict", "", [], []),
    ("layout_newlines", '<function_calls><invoke name="search"><parameter name="q">\nx y\n</parameter></invoke></function_calls>', [("search", {"q": "x y"})], "strict", "", [], []),
    ("prose_before", "Let me check.\n" + W, PARIS, "strict", "Let me check.", [], []),
    ("text_after", W + "\nDone.", PARIS, "strict", "Done.", [], AFTER),
    ("no_params", '<function_calls><invoke name="search"></invoke></function_calls>', [("search", {})], "strict", "", [], []),
    ("unclosed_parameter", '<function_calls><invoke name="search"><parameter name="q">x</invoke></function_calls>', [("search", {"q": "x"})], "repaired", "", [codes.JSON_REPAIRED], []),
    ("unclosed_block", '<function_calls><invoke name="search"><parameter name="q">x</parameter></invoke>', [("search", {"q": "x"})], "strict", "", [], []),
    ("cut_in_invoke_tag", '<function_calls><invoke name="sea', [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("empty_block", "<function_calls></function_calls>", [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("missing_name", '<function_calls><invoke name=""><parameter name="q">x</parameter></invoke></function_calls>', [], "failed", "", [codes.CALL_MISSING_NAME], []),
    ("hallucinated_results", W + "\n<function_results>\n<result>\n<tool_name>get_weather</tool_name>\n<stdout>\n21C\n</stdout>\n</result>\n</function_results>", PARIS, "strict", "", [], [*AFTER, codes.STOP_HALLUCINATED_RESULT]),
    ("unknown_tool", '<function_calls><invoke name="fly"></invoke></function_calls>', [("fly", {})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("plain", "It is sunny.", [], "no_call", "It is sunny.", [], []),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


@pytest.mark.parametrize("name", [*NAMESPACED, "math.gcd"])
@pytest.mark.parametrize(
    "template",
    [
        '<function_calls>\n<invoke name="{name}">\n<parameter name="title">x</parameter>\n</invoke>\n</function_calls>'
    ],
    ids=["invoke"],
)
def test_namespaced_names_read_back_exactly(template: str, name: str) -> None:
    """issue 34: a name is whatever the tool list offered, read back exactly."""
    check_name_read_back(F, template.format(name=name), name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sure.\n" + W, "Sure."),
        ("ok <function_results>x</function_results>", "ok"),
        ('stray <invoke name="x"> </invoke>', "stray"),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_prompt_describes_tools_and_the_call_syntax() -> None:
    system = F.render(TOOLS, USER_Q).messages[0]["content"]
    assert "<tool_description>\n<tool_name>get_weather</tool_name>" in system
    assert '<invoke name="$TOOL_NAME">' in system
    assert "<type>integer</type>" in system
    assert F.render(TOOLS, USER_Q).stop == ["<function_results>"]


def test_results_and_round_trip() -> None:
    call = ToolCall(name="get_weather", arguments={"city": "Paris"})
    out = F.continue_conversation(USER_Q, ModelReply(text=W), [(call, "21C")])
    assert out[-1]["content"] == (
        "<function_results>\n<result>\n<tool_name>get_weather</tool_name>\n<stdout>\n21C\n"
        "</stdout>\n</result>\n</function_results>"
    )
    args = {"city": "Paris", "days": 2}
    got = F.parse(F.call_text("get_weather", args), TOOLS)
    assert [(c.name, c.arguments) for c in got.calls] == [("get_weather", args)]
    system = ClaudeXml(FormatOptions(shots=1)).render(TOOLS, USER_Q).messages[0]["content"]
    assert '<invoke name="get_local_time">\n<parameter name="city">Tokyo</parameter>' in system
