"""llama3-json: Llama 3.1/3.3 ``{"name": ..., "parameters": ...}`` calls, ``ipython`` results."""
# ruff: noqa: E501  (one table row per line reads better than wrapped rows)

from __future__ import annotations

import json

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
from toolbench.formats.llama3_json import Llama3Json

F = Llama3Json()
W = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
PARIS = [("get_weather", {"city": "Paris"})]
AFTER = [codes.STOP_TEXT_AFTER_CALL]

CONTRACT = (ShotsOptions, Requirements())
"""This format's contract row (options model, requirements): its ``Format.test_cases``
module is this one, and the shared contract test reads the row here."""


# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    ("single", W, PARIS, "strict", "", [], []),
    ("python_tag", "<|python_tag|>" + W, PARIS, "strict", "", [], []),
    ("arguments_key", '{"name": "search", "arguments": {"q": "x"}}', [("search", {"q": "x"})], "strict", "", [], []),
    ("prose_around", "Let me check. " + W + " One moment.", PARIS, "strict", "Let me check.  One moment.", [], AFTER),
    ("semicolon_pair", W + '; {"name": "search", "parameters": {"q": "x"}}', [*PARIS, ("search", {"q": "x"})], "strict", "", [], []),
    ("plain_json_answer", 'The config is {"name": "prod", "size": 3}.', [], "no_call", 'The config is {"name": "prod", "size": 3}.', [], []),
    ("no_parameters_key", '{"name": "get_weather"}', [], "no_call", '{"name": "get_weather"}', [], []),
    ("truncated", '{"name": "get_weather", "parameters": {"city": "Par', [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("repaired", '{"name": "get_weather", "parameters": {"city": "Paris",}}', PARIS, "repaired", "", [codes.JSON_REPAIRED], []),
    ("tag_without_call", "<|python_tag|>hmm", [], "failed", "hmm", [codes.CALL_BAD_SHAPE], []),
    ("unknown_tool", '{"name": "fly", "parameters": {}}', [("fly", {})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("hallucinated_result", W + '<|start_header_id|>ipython<|end_header_id|>\n\n{"temp": 3}', PARIS, "strict", 'ipython\n\n{"temp": 3}', [], [*AFTER, codes.STOP_HALLUCINATED_RESULT]),
    ("think", "<think>plan</think>" + W, PARIS, "strict", "", [], []),
    ("plain", "It is sunny.", [], "no_call", "It is sunny.", [], []),
    # issue 20: Meta's documented Llama 3.1 custom-tool form <function=name>{...}</function>
    ("function_tag", '<function=get_weather>{"city": "Paris"}</function>', PARIS, "strict", "", [], []),
    ("function_tag_eom", 'Sure. <function=search>{"q": "x"}</function><|eom_id|>', [("search", {"q": "x"})], "strict", "Sure.", [], []),
    ("function_tags_two", '<function=get_weather>{"city": "Paris"}</function>\n<function=search>{"q": "x"}</function>', [*PARIS, ("search", {"q": "x"})], "strict", "", [], []),
    ("function_tag_unclosed_whole_json", '<function=get_weather>{"city": "Paris"}<|eot_id|>', PARIS, "repaired", "", [codes.JSON_REPAIRED], []),
    ("function_tag_cut", '<function=get_weather>{"city": "Pa', [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("function_tag_cut_mid_token", "Sure. <functi", [], "failed", "Sure.", [codes.CALL_TRUNCATED], []),
    ("function_tag_args_with_name_key", '<function=search>{"q": "x", "name": "n", "parameters": {}}</function>', [("search", {"q": "x", "name": "n", "parameters": {}})], "strict", "", [], []),
    ("function_tag_in_prose_is_text", "Use <function=x> tags", [], "no_call", "Use <function=x> tags", [], []),
    # llama.cpp tests/test-chat.cpp (as vendored in llama-cpp-python 0.3.36, MIT) L5934:
    # Functionary v3.1, a Llama 3.1 fine-tune, in the same documented form
    ("llamacpp_functionary_v31_L5934", '<function=special_function>{"arg1": 1}</function>', [("special_function", {"arg1": 1})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


@pytest.mark.parametrize("name", [*NAMESPACED, "math.gcd"])
@pytest.mark.parametrize(
    "template",
    [
        '{{"name": "{name}", "parameters": {{"title": "x"}}}}',
        '<|python_tag|>{{"name": "{name}", "arguments": {{"title": "x"}}}}',
        '<function={name}>{{"title": "x"}}</function>',
    ],
    ids=["json", "python_tag", "function_tag"],
)
def test_namespaced_names_read_back_exactly(template: str, name: str) -> None:
    """issue 34: a name is whatever the tool list offered, read back exactly."""
    check_name_read_back(F, template.format(name=name), name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<|python_tag|>" + W, ""),
        ("Sure. " + W, "Sure."),
        ('Broken {"name": "x", "parameters": {', "Broken"),
        ("plain <|eot_id|>", "plain"),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_tools_listed_as_the_llama31_template_lists_them() -> None:
    """The system prompt carries each tool exactly as the template's ``tojson(indent=4)``."""
    system = F.render(TOOLS, USER_Q).messages[0]["content"]
    template = render(
        "meta-llama-Llama-3.1-8B-Instruct.jinja",
        [{"role": "user", "content": "q"}],
        tools=[t.openai() for t in TOOLS],
        tools_in_user_message=False,
    )
    for tool in TOOLS:
        listed = json.dumps(tool.openai(), indent=4)
        assert listed in system
        assert listed in template
    assert '{"name": function name, "parameters": dictionary of argument name' in system


def test_results_go_back_in_the_ipython_role() -> None:
    call = ToolCall(name="get_weather", arguments={"city": "Paris"})
    out = F.continue_conversation(USER_Q, ModelReply(text=W), [(call, '{"temp": 21}'), (call, "2")])
    assert out[1:] == [
        {"role": "assistant", "content": W},
        {"role": "ipython", "content": '{"temp": 21}'},
        {"role": "ipython", "content": "2"},
    ]
    rendered = render("meta-llama-Llama-3.1-8B-Instruct.jinja", out)
    assert "<|start_header_id|>ipython<|end_header_id|>" in rendered


def test_shots_show_the_call_and_the_ipython_result() -> None:
    system = Llama3Json(FormatOptions(shots=1)).render(TOOLS, USER_Q).messages[0]["content"]
    assert '{"name": "get_local_time", "parameters": {"city": "Tokyo"}}' in system
    assert 'ipython: {"time": "14:05"}' in system


def test_a_call_past_the_scan_budget_is_a_typed_failure() -> None:
    """Behind more bracket runs than one scan reads, a call is said to be unread."""
    got = F.parse('{"name": 1] ' * 10_000 + '{"name": "get_weather", "parameters": {}}')
    assert (got.calls, [e.code for e in got.errors]) == ([], [codes.CALL_BAD_SHAPE])
