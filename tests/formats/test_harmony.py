"""harmony: gpt-oss channels, calls as ``<|channel|>commentary to=functions.name``."""
# ruff: noqa: E501  (one table row per line reads better than wrapped rows)

from __future__ import annotations

import pytest
from fmt_helpers import (
    NAMESPACED,
    TOOLS,
    USER_Q,
    ParseCase,
    calls_of,
    case_ids,
    check_name_read_back,
    check_parse,
    check_sanitize,
    named_tool,
)
from templates import render

from toolbench import codes
from toolbench.formats.base import FormatOptions, ModelReply, Requirements, ShotsOptions, ToolCall
from toolbench.formats.harmony import Harmony, describe_namespace

F = Harmony()
W = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>'
PARIS = [("get_weather", {"city": "Paris"})]

CONTRACT = (ShotsOptions, Requirements())
"""This format's contract row (options model, requirements): its ``Format.test_cases``
module is this one, and the shared contract test reads the row here."""


# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    ("single", W, PARIS, "strict", "", [], []),
    ("recipient_in_start_header", '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>', PARIS, "strict", "", [], []),
    ("analysis_then_call", "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant" + W, PARIS, "strict", "", [], []),
    ("final_only", "<|channel|>final<|message|>It is sunny.", [], "no_call", "It is sunny.", [], []),
    ("analysis_then_final", "<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>", [], "no_call", "It is sunny.", [], []),
    ("builtin_tool_not_offered", "<|channel|>commentary to=python <|constrain|>code<|message|>print(1)<|call|>", [], "failed", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("call_stopped_before_terminator", '<|channel|>commentary to=functions.search<|message|>{"q": "x"}', [("search", {"q": "x"})], "strict", "", [], []),
    ("repaired", '<|channel|>commentary to=functions.search<|message|>{"q": "x",}<|call|>', [("search", {"q": "x"})], "repaired", "", [codes.JSON_REPAIRED], []),
    ("object_left_open_before_call_token", '<|channel|>commentary to=functions.search<|message|>{"q": "x<|call|>', [], "failed", "", [codes.JSON_DECODE_FAILED], []),
    ("invalid_json", "<|channel|>commentary to=functions.search<|message|>not json at all<|call|>", [], "failed", "", [codes.JSON_DECODE_FAILED], []),
    ("cut_in_header", "<|channel|>commentary to=functions.sea", [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("cut_after_call", W + "<|start|>assistant", PARIS, "strict", "", [], []),
    ("prose_then_header", 'Let me see.<|channel|>commentary to=functions.search<|message|>{"q": "x"}<|call|>', [("search", {"q": "x"})], "strict", "Let me see.", [], []),
    ("final_after_call", W + "<|start|>assistant<|channel|>final<|message|>Done.", PARIS, "strict", "Done.", [], [codes.STOP_TEXT_AFTER_CALL]),
    ("hallucinated_tool_message", W + '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"21C"<|end|>', PARIS, "strict", "", [], [codes.STOP_HALLUCINATED_RESULT]),
    ("unknown_function", "<|channel|>commentary to=functions.fly<|message|>{}<|call|>", [("fly", {})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("plain", "It is sunny.", [], "no_call", "It is sunny.", [], []),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


@pytest.mark.parametrize("name", [*NAMESPACED, "math.gcd", "functions_helper"])
def test_namespaced_names_read_back_exactly(name: str) -> None:
    reply = f'<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{{"title": "x"}}<|call|>'
    check_name_read_back(F, reply, name)
    assert F.parse(reply, [named_tool(name)]).status == "strict"


def _to(recipient: str) -> str:
    return (
        f'<|channel|>commentary to={recipient} <|constrain|>json<|message|>{{"title": "x"}}<|call|>'
    )


# issue 34: a recipient outside ``functions`` is resolved against the offered tools
# (recipient, offered tool names, calls read, status, codes)
RECIPIENTS = [
    ("api.users.create", ["api.users.create"], ["api.users.create"], "repaired", [codes.CALL_LENIENT]),
    ("api.users.create", ["users.create", "create"], ["users.create"], "repaired", [codes.CALL_LENIENT]),
    ("tools.calculator.add", ["add", "search"], ["add"], "repaired", [codes.CALL_LENIENT]),
    ("api.users.create", ["get_weather"], [], "failed", [codes.CALL_UNKNOWN_TOOL]),
    ("browser.search", ["search"], ["search"], "repaired", [codes.CALL_LENIENT]),
    ("container.exec", ["get_weather"], [], "failed", [codes.CALL_UNKNOWN_TOOL]),
    ("functions.math.gcd", ["math.gcd", "gcd"], ["math.gcd"], "strict", []),
    ("functions.math.gcd", ["gcd"], ["math.gcd"], "strict", [codes.CALL_UNKNOWN_TOOL]),
]  # fmt: skip


@pytest.mark.parametrize(("recipient", "offered", "names", "status", "errors"), RECIPIENTS)
def test_recipients_resolve_against_the_offered_tools(
    recipient: str, offered: list[str], names: list[str], status: str, errors: list[str]
) -> None:
    got = F.parse(_to(recipient), [named_tool(n) for n in offered])
    assert calls_of(got) == [(n, {"title": "x"}) for n in names]
    assert got.status == status
    assert got.codes() == errors
    assert got.attempted
    assert F.parse(_to(recipient)).attempted  # no tool list: still an attempt, never silent


def test_analysis_is_reasoning() -> None:
    got = F.parse("<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant" + W)
    assert got.reasoning == "Need weather."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<|channel|>final<|message|>Hi<|return|>", "Hi"),
        (W, ""),
        ("stray to=functions.x", "stray"),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_tools_rendered_as_the_gpt_oss_template_namespace() -> None:
    system = F.render(TOOLS, USER_Q).messages[0]["content"]
    namespace = describe_namespace(TOOLS)
    assert namespace in system
    template = render(
        "openai-gpt-oss-120b.jinja",
        [{"role": "user", "content": "q"}],
        tools=[t.openai() for t in TOOLS],
    )
    assert namespace in template
    assert "Calls to these tools must go to the commentary channel: 'functions'." in system


def test_results_written_as_the_template_writes_tool_messages() -> None:
    call = ToolCall(name="get_weather", arguments={"city": "Paris"})
    out = F.continue_conversation(USER_Q, ModelReply(text=W), [(call, '{"temp": 21}')])
    ours = out[-1]["content"]
    assert (
        ours
        == '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"{\\"temp\\": 21}"<|end|>'
    )
    template = render(
        "openai-gpt-oss-120b.jinja",
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                    }
                ],
            },
            {"role": "tool", "content": '{"temp": 21}'},
        ],
        tools=[t.openai() for t in TOOLS],
    )
    assert ours in template


def test_call_text_round_trips_and_shots_use_it() -> None:
    got = F.parse(F.call_text("search", {"q": "x"}))
    assert [(c.name, c.arguments) for c in got.calls] == [("search", {"q": "x"})]
    system = Harmony(FormatOptions(shots=1)).render(TOOLS, USER_Q).messages[0]["content"]
    assert (
        'to=functions.get_local_time <|constrain|>json<|message|>{"city": "Tokyo"}<|call|>'
        in system
    )
