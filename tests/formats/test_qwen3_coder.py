"""qwen3-coder: ``<function=name><parameter=p>value</parameter>`` calls typed by the schema."""
# ruff: noqa: E501  (one table row per line reads better than wrapped rows)

from __future__ import annotations

from typing import Any

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
from templates import render

from toolbench import codes
from toolbench.formats.base import FormatOptions, ModelReply, Requirements, ShotsOptions, ToolCall
from toolbench.formats.qwen3_coder import Qwen3Coder, describe_tools_xml
from toolbench.formats.schema_values import convert_value

F = Qwen3Coder()


def fn(name: str, **params: str) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


W = fn("get_weather", city="Paris", days="3")
PARIS = [("get_weather", {"city": "Paris", "days": 3})]
SEARCH = fn("search", q="x")
AFTER = [codes.STOP_TEXT_AFTER_CALL]

CONTRACT = (ShotsOptions, Requirements(stop_sequences=True))
"""This format's contract row (options model, requirements): its ``Format.test_cases``
module is this one, and the shared contract test reads the row here."""


# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    ("typed_by_schema", W, PARIS, "strict", "", [], []),
    ("string_param_stays_text", fn("search", q="42"), [("search", {"q": "42"})], "strict", "", [], []),
    ("without_tool_call_wrapper", "<function=search>\n<parameter=q>\nx\n</parameter>\n</function>", [("search", {"q": "x"})], "strict", "", [], []),
    ("two_calls", W + "\n" + SEARCH, [*PARIS, ("search", {"q": "x"})], "strict", "", [], []),
    ("prose_before", "Let me check.\n" + W, PARIS, "strict", "Let me check.", [], []),
    ("text_after", W + "\nDone.", PARIS, "strict", "Done.", [], AFTER),
    ("multiline_value", fn("search", q="line1\n\nline2"), [("search", {"q": "line1\n\nline2"})], "strict", "", [], []),
    ("one_layout_newline_each_side", "<function=search>\n<parameter=q>\n\n  x\n\n</parameter>\n</function>", [("search", {"q": "\n  x\n"})], "strict", "", [], []),
    ("unclosed_parameter", "<tool_call>\n<function=search>\n<parameter=q>\nx\n</function>\n</tool_call>", [("search", {"q": "x"})], "repaired", "", [codes.JSON_REPAIRED], []),
    ("unclosed_function", "<tool_call>\n<function=search>\n<parameter=q>\nx\n</parameter>\n", [("search", {"q": "x"})], "repaired", "", [codes.JSON_REPAIRED], []),
    ("cut_in_name", "<tool_call>\n<function=sea", [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("empty_tool_call", "<tool_call>\n</tool_call>", [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("hermes_json_is_not_this_format", '<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n</tool_call>', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("value_not_of_schema_type_stays_text", fn("get_weather", city="Paris", days="three"), [("get_weather", {"city": "Paris", "days": "three"})], "strict", "", [], []),
    # A parameter the schema does not list stays text, as vLLM's qwen3_coder keeps it
    ("unknown_param_stays_text", fn("get_weather", extra='{"a": 1}'), [("get_weather", {"extra": '{"a": 1}'})], "strict", "", [], []),
    ("leading_zero_integer", fn("get_weather", city="Paris", days="007"), [("get_weather", {"city": "Paris", "days": 7})], "strict", "", [], []),
    ("hallucinated_result", W + "\n<tool_response>\n21C\n</tool_response>", PARIS, "strict", "", [], [*AFTER, codes.STOP_HALLUCINATED_RESULT]),
    ("think", "<think>plan</think>" + W, PARIS, "strict", "", [], []),
    ("unknown_tool", fn("fly", to="Mars"), [("fly", {"to": "Mars"})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("plain", "It is sunny.", [], "no_call", "It is sunny.", [], []),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


@pytest.mark.parametrize("name", [*NAMESPACED, "math.gcd"])
@pytest.mark.parametrize(
    "template",
    [
        "<tool_call>\n<function={name}>\n<parameter=title>\nx\n</parameter>\n</function>\n</tool_call>",
        "<function={name}>\n<parameter=title>\nx\n</parameter>\n</function>",
    ],
    ids=["tool_call", "bare_function"],
)
def test_namespaced_names_read_back_exactly(template: str, name: str) -> None:
    """issue 34: a name is whatever the tool list offered, read back exactly."""
    check_name_read_back(F, template.format(name=name), name)


S_INT: dict[str, Any] = {"type": "integer"}
S_NUM: dict[str, Any] = {"type": "number"}
S_STR: dict[str, Any] = {"type": "string"}
S_BOOL: dict[str, Any] = {"type": "boolean"}
S_NULLABLE_STR: dict[str, Any] = {"type": ["string", "null"]}
S_NULLABLE_INT: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
S_UNION: dict[str, Any] = {"anyOf": [{"type": "object"}, {"type": "string"}]}
S_ENUM: dict[str, Any] = {"enum": [1, 2]}


@pytest.mark.parametrize(
    ("raw", "schema", "expected"),
    [
        ("42", S_INT, 42),
        ("4.0", S_INT, 4),
        ("4.5", S_INT, "4.5"),
        ("3.5", S_NUM, 3.5),
        ("42", S_STR, "42"),
        ('"quoted"', S_STR, '"quoted"'),
        ("true", S_BOOL, True),
        ("null", S_NULLABLE_STR, None),
        ("hello world", S_NULLABLE_STR, "hello world"),
        ('{"a": 1}', S_UNION, {"a": 1}),
        ("2 dollars", S_UNION, "2 dollars"),
        ("{not valid json", S_UNION, "{not valid json"),
        ("2", S_ENUM, 2),
        ("7", None, 7),
        ('"foo"', None, '"foo"'),
        ("[1, 2]", None, [1, 2]),
        ("plain text", None, "plain text"),
        # vLLM qwen3_coder _convert_param_value: booleans and null in any case, int("007")
        ("True", S_BOOL, True),
        ("FALSE", S_BOOL, False),
        ("yes", S_BOOL, "yes"),
        ("NULL", S_NULLABLE_STR, None),
        ("Null", S_NULLABLE_INT, None),
        ("null", S_STR, "null"),
        ("007", S_INT, 7),
        ("-042", S_INT, -42),
        ("+5", S_INT, 5),
        ("007.50", S_NUM, 7.5),
        ("12", S_NUM, 12),
        ("1e999", S_NUM, "1e999"),
        ("9" * 5000, S_INT, "9" * 5000),  # past int()'s digit limit: text, no exception
        ("07", S_NULLABLE_INT, 7),
        ("True", S_UNION, "True"),
        # vLLM test_qwen3_xml_coder_shared.py: an object written as a Python repr
        ("{'key': 'value'}", S_UNION, {"key": "value"}),
        ("[1, True, None]", {"type": "array"}, [1, True, None]),
        ("{'a': __import__('os')}", S_UNION, "{'a': __import__('os')}"),
        ("{'key': 'value'}", S_STR, "{'key': 'value'}"),
    ],
)
def test_values_are_typed_by_the_json_schema(
    raw: str, schema: dict[str, Any] | None, expected: Any
) -> None:
    got = convert_value(raw, schema)
    assert got == expected
    assert type(got) is type(expected)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1", "1"), ("true", "true"), ('{"a": 1}', '{"a": 1}'), ("NULL", None), ("null", None)],
)
def test_values_without_a_schema_stay_text_in_qwen3_coder(raw: str, expected: Any) -> None:
    """vLLM's and llama.cpp's Qwen3-Coder parsers keep an untyped value as written (null
    aside); the reply without tools gives the same value."""
    assert convert_value(raw, None, untyped_json=False) == expected
    got = F.parse(f"<function=f>\n<parameter=a>\n{raw}\n</parameter>\n</function>")
    assert got.calls[0].arguments == {"a": expected}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sure.\n" + W, "Sure."),
        ("ok <tool_response>x</tool_response>", "ok"),
        ("stray <function=x> tag </parameter>", "stray"),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_tools_described_exactly_as_the_qwen3_coder_template_does() -> None:
    system = F.render(TOOLS, USER_Q).messages[0]["content"]
    listing = describe_tools_xml(TOOLS)
    assert listing in system
    template = render(
        "Qwen3-Coder.jinja", [{"role": "user", "content": "q"}], tools=[t.openai() for t in TOOLS]
    )
    assert listing in template
    assert (
        "If you choose to call a tool ONLY reply in the following format with NO suffix" in system
    )


def test_calls_and_results_are_written_as_the_template_writes_them() -> None:
    call = ToolCall(name="get_weather", arguments={"city": "Paris"})
    reply = F.call_text("get_weather", {"city": "Paris"})
    out = F.continue_conversation(USER_Q, ModelReply(text=reply), [(call, '{"temp": 21}')])
    assert out[-1] == {"role": "user", "content": '<tool_response>\n{"temp": 21}\n</tool_response>'}
    template = render(
        "Qwen3-Coder.jinja",
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                    }
                ],
            },
            {"role": "tool", "content": '{"temp": 21}'},
        ],
    )
    assert reply in template
    assert out[-1]["content"] in template
    assert F.render(TOOLS, USER_Q).stop == ["<tool_response>"]


def test_call_text_round_trips_through_the_schema() -> None:
    args = {"city": "Paris", "days": 2}
    got = F.parse(F.call_text("get_weather", args), TOOLS)
    assert [(c.name, c.arguments) for c in got.calls] == [("get_weather", args)]
    system = Qwen3Coder(FormatOptions(shots=1)).render(TOOLS, USER_Q).messages[0]["content"]
    assert "<function=get_local_time>\n<parameter=city>\nTokyo\n</parameter>" in system
