"""kimi-k2: ``<|tool_calls_section_begin|>`` sections of ``functions.name:0`` calls (and K3)."""
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
from templates import render

from toolbench import codes
from toolbench.formats.base import FormatOptions, ModelReply, Requirements, ShotsOptions, ToolCall
from toolbench.formats.dialect import tools_json
from toolbench.formats.kimi_k2 import KimiK2

F = KimiK2()
S, SE = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
C, A, CE = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
W = f'{S}{C}functions.get_weather:0{A}{{"city": "Paris"}}{CE}{SE}'
PARIS = [("get_weather", {"city": "Paris"})]
AFTER = [codes.STOP_TEXT_AFTER_CALL]
K3 = '<|open|>response<|sep|>On it.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|><|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>'

CONTRACT = (ShotsOptions, Requirements())
"""This format's contract row (options model, requirements): its ``Format.test_cases``
module is this one, and the shared contract test reads the row here."""


# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    ("single", W, PARIS, "strict", "", [], []),
    ("two_calls", f'{S}{C}functions.get_weather:0{A}{{"city": "Paris"}}{CE}{C}functions.search:1{A}{{"q": "x"}}{CE}{SE}', [*PARIS, ("search", {"q": "x"})], "strict", "", [], []),
    ("bare_id", f'{S}{C}search:0 {A}{{"q": "x"}}{CE}{SE}', [("search", {"q": "x"})], "strict", "", [], []),
    ("prose_before", "I'll check. " + W, PARIS, "strict", "I'll check.", [], []),
    ("text_after", W + " Done.", PARIS, "strict", "Done.", [], AFTER),
    ("end_tokens_missing", f'{C}functions.search:0{A}{{"q": "x"}}', [("search", {"q": "x"})], "strict", "", [], []),
    ("cut_mid_json", f'{S}{C}functions.search:0{A}{{"q": "x', [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("repaired", f'{S}{C}functions.search:0{A}{{"q": "x",}}{CE}{SE}', [("search", {"q": "x"})], "repaired", "", [codes.JSON_REPAIRED], []),
    ("no_argument_token", f"{S}{C}functions.search:0{CE}{SE}", [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("empty_section", f"Reasoning. {S}{SE}", [], "failed", "Reasoning.", [codes.CALL_BAD_SHAPE], []),
    ("think_runs_into_calls", "<think>plan" + W, PARIS, "strict", "", [], []),
    ("kimi_k3", K3, [("get_weather", {"city": "Paris", "days": 3})], "strict", "On it.", [], []),
    ("hallucinated_return", W + "## Return of functions.get_weather:0\n21C", PARIS, "strict", "", [], [*AFTER, codes.STOP_HALLUCINATED_RESULT]),
    ("unknown_tool", f"{S}{C}functions.fly:0{A}{{}}{CE}{SE}", [("fly", {})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("plain", "It is sunny.", [], "no_call", "It is sunny.", [], []),
    # issue 34: the id frames the name; a bare counter or an id without :index names no tool
    ("bare_counter", f'{S}{C}functions.0{A}{{"city": "Paris"}}{CE}{SE}', [], "failed", "", [codes.CALL_MISSING_NAME], []),
    ("bare_number", f'{S}{C}0{A}{{"city": "Paris"}}{CE}{SE}', [], "failed", "", [codes.CALL_MISSING_NAME], []),
    ("colon_counter", f'{S}{C}functions.:3{A}{{"city": "Paris"}}{CE}{SE}', [], "failed", "", [codes.CALL_MISSING_NAME], []),
    ("punctuation_id", f'{S}{C}:::0{A}{{"city": "Paris"}}{CE}{SE}', [], "failed", "", [codes.CALL_MISSING_NAME], []),
    ("client_style_id", f'{S}{C}call_3{A}{{"city": "Paris"}}{CE}{SE}', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("uuid_id", f'{S}{C}0b3d1c2e-4f5a-6b7c-8d9e-0f1a2b3c4d5e{A}{{"city": "Paris"}}{CE}{SE}', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("non_digit_index", f'{S}{C}functions.get_weather:abc{A}{{"city": "Paris"}}{CE}{SE}', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("offered_name_without_index", f'{S}{C}functions.get_weather{A}{{"city": "Paris"}}{CE}{SE}', PARIS, "repaired", "", [codes.CALL_LENIENT], []),
    ("bad_id_beside_good_call", f'{S}{C}functions.0{A}{{"q": "x"}}{CE}{C}functions.get_weather:1{A}{{"city": "Paris"}}{CE}{SE}', PARIS, "repaired", "", [codes.CALL_MISSING_NAME], []),
    ("singular_section_tokens", f'<|tool_call_section_begin|>{C}functions.get_weather:0{A}{{"city": "Paris"}}{CE}<|tool_call_section_end|>', PARIS, "strict", "", [], []),
    ("object_left_open_before_end_token", f'{S}{C}functions.get_weather:0{A}{{"city": "Par{CE}{SE}', [], "failed", "", [codes.JSON_DECODE_FAILED], []),
    ("large_counter", f'{S}{C}functions.get_weather:17{A}{{"city": "Paris"}}{CE}{SE}', PARIS, "strict", "", [], []),
]  # fmt: skip


@pytest.mark.parametrize("name", [*NAMESPACED, "math.gcd", "server:tool"])
@pytest.mark.parametrize(
    "template",
    [
        f'{S}{C}functions.{{name}}:0{A}{{{{"title": "x"}}}}{CE}{SE}',
        f'{S}{C}{{name}}:2{A}{{{{"title": "x"}}}}{CE}{SE}',
    ],
    ids=["prefixed", "bare"],
)
def test_namespaced_names_read_back_exactly(template: str, name: str) -> None:
    check_name_read_back(F, template.format(name=name), name)


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


def test_reasoning_ends_where_the_calls_begin_and_ids_are_kept() -> None:
    got = F.parse("<think>plan" + W)
    assert got.reasoning == "plan"
    assert got.calls[0].id == "functions.get_weather:0"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sure. " + W, "Sure."),
        (f"Hi {S}{SE}", "Hi"),
        ("x <|tool_call_end|> y", "x  y"),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_tools_and_results_as_the_kimi_k2_template_writes_them() -> None:
    system = F.render(TOOLS, USER_Q).messages[0]["content"]
    listing = tools_json(TOOLS)
    assert listing in system
    call = ToolCall(name="get_weather", arguments={"city": "Paris"}, id="functions.get_weather:0")
    out = F.continue_conversation(USER_Q, ModelReply(text=W), [(call, '{"temp": 21}')])
    ours = out[-1]["content"]
    assert ours == '## Return of functions.get_weather:0\n{"temp": 21}'
    template = render(
        "moonshotai-Kimi-K2.jinja",
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "functions.get_weather:0",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": '{"temp": 21}'},
        ],
        tools=[t.openai() for t in TOOLS],
    )
    assert f"tool_declare<|im_middle|>{listing}" in template
    assert ours.replace("\n", "\\n") in template  # the template writes a literal backslash-n
    assert W in template


def test_results_without_ids_are_numbered_and_shots_use_the_section_syntax() -> None:
    call = ToolCall(name="search", arguments={})
    out = F.continue_conversation(USER_Q, ModelReply(text=W), [(call, "a"), (call, "b")])
    assert (
        out[-1]["content"]
        == "## Return of functions.search:0\na\n\n## Return of functions.search:1\nb"
    )
    system = KimiK2(FormatOptions(shots=1)).render(TOOLS, USER_Q).messages[0]["content"]
    assert f'{C}functions.get_local_time:0{A}{{"city": "Tokyo"}}{CE}' in system
