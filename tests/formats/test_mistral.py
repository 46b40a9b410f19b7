"""mistral: ``[TOOL_CALLS]`` (v3 JSON list and v11 ``name[ARGS]{...}``), ``[TOOL_RESULTS]``."""
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
from toolbench.formats.mistral import Mistral

F = Mistral()
W = '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
PARIS = [("get_weather", {"city": "Paris"})]
BOTH = [*PARIS, ("search", {"q": "x"})]
AFTER = [codes.STOP_TEXT_AFTER_CALL]

CONTRACT = (ShotsOptions, Requirements(stop_sequences=True))
"""This format's contract row (options model, requirements): its ``Format.test_cases``
module is this one, and the shared contract test reads the row here."""


# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    ("v11", W, PARIS, "strict", "", [], []),
    ("v11_call_id", '[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Paris"}', PARIS, "strict", "", [], []),
    ("v11_two", W + '[TOOL_CALLS]search[ARGS]{"q": "x"}', BOTH, "strict", "", [], []),
    ("v11_without_args_token", '[TOOL_CALLS]search{"q": "x"}', [("search", {"q": "x"})], "strict", "", [], []),
    ("v11_bare_name", "[TOOL_CALLS]search", [("search", {})], "strict", "", [], []),
    ("v3_list", '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "search", "arguments": {"q": "x"}}]', BOTH, "strict", "", [], []),
    ("v3_string_arguments", '[TOOL_CALLS][{"name": "search", "arguments": "{\\"q\\": \\"x\\"}"}]', [("search", {"q": "x"})], "strict", "", [], []),
    ("prose_before", "Checking." + W, PARIS, "strict", "Checking.", [], []),
    ("text_after", W + " then more", PARIS, "strict", "then more", [], AFTER),
    ("repaired_args", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris",}', PARIS, "repaired", "", [codes.JSON_REPAIRED], []),
    ("truncated_args", '[TOOL_CALLS]get_weather[ARGS]{"city": "Pa', [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("cut_mid_token", "[TOOL_CALLS]get_weather[AR", [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("args_not_object", "[TOOL_CALLS]get_weather[ARGS][1, 2]", [], "failed", "", [codes.ARGS_NOT_OBJECT], []),
    ("missing_name", '[TOOL_CALLS][ARGS]{"city": "Paris"}', [], "failed", "", [codes.CALL_MISSING_NAME], []),
    ("not_json", "[TOOL_CALLS] not json", [], "failed", "not json", [codes.CALL_BAD_SHAPE], []),
    ("token_inside_string", '[TOOL_CALLS]search[ARGS]{"q": "[TOOL_CALLS]x"}', [("search", {"q": "[TOOL_CALLS]x"})], "strict", "", [], []),
    ("think", "[THINK]plan[/THINK]" + W, PARIS, "strict", "", [], []),
    ("hallucinated_result", W + "[TOOL_RESULTS]get_weather[TOOL_CONTENT]21C[/TOOL_RESULTS]", PARIS, "strict", "", [], [*AFTER, codes.STOP_HALLUCINATED_RESULT]),
    ("unknown_tool", "[TOOL_CALLS]fly[ARGS]{}", [("fly", {})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("plain", "It is sunny.", [], "no_call", "It is sunny.", [], []),
    # issue 20: repair must not turn a bare word into a name
    ("v3_bare_word_name", '[TOOL_CALLS] [{"name": invalid}]', [], "failed", "", [codes.CALL_MISSING_NAME], []),
    ("v3_bare_word_beside_a_call", '[TOOL_CALLS] [{"name": invalid, "arguments": {}}, {"name": "search", "arguments": {"q": "x",}}]', [("search", {"q": "x"})], "repaired", "", [codes.CALL_MISSING_NAME, codes.JSON_REPAIRED], []),
    ("v3_single_quoted_name_kept", "[TOOL_CALLS] [{'name': 'search', 'arguments': {'q': 'x'}}]", [("search", {"q": "x"})], "repaired", "", [codes.JSON_REPAIRED], []),
    ("object_bare_word_name", '[TOOL_CALLS]{"name": search, "arguments": {}}', [], "failed", "", [codes.CALL_MISSING_NAME], []),
    # issue 34: [/TOOL_CALLS] ends the list and is never visible; an extra closing bracket belongs to the call
    ("closing_token", W + "[/TOOL_CALLS]", PARIS, "strict", "", [], []),
    ("closing_token_then_text", W + "[/TOOL_CALLS] Done.", PARIS, "strict", "Done.", [], AFTER),
    ("v3_closing_token", '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}] [/TOOL_CALLS]', PARIS, "strict", "", [], []),
    ("object_closing_token", '[TOOL_CALLS]{"name": "get_weather", "arguments": {"city": "Paris"}}[/TOOL_CALLS]', PARIS, "strict", "", [], []),
    ("closing_token_between_calls", W + '[/TOOL_CALLS][TOOL_CALLS]search[ARGS]{"q": "x"}[/TOOL_CALLS]', BOTH, "strict", "", [], []),
    ("stray_closing_token_in_prose", "Sure [/TOOL_CALLS] thing.", [], "no_call", "Sure  thing.", [], []),
    ("extra_brace", W + "}", PARIS, "repaired", "", [codes.JSON_REPAIRED], []),
    ("extra_brace_then_next_call", W + '}[TOOL_CALLS]search{"q": "x"}', BOTH, "repaired", "", [codes.JSON_REPAIRED], []),
    ("v3_extra_brace", '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]}', PARIS, "repaired", "", [codes.JSON_REPAIRED], []),
    ("extra_brace_then_text", W + "} Done.", PARIS, "repaired", "Done.", [codes.JSON_REPAIRED], AFTER),
]  # fmt: skip


@pytest.mark.parametrize("name", NAMESPACED)
@pytest.mark.parametrize(
    "template",
    [
        '[TOOL_CALLS]{name}[ARGS]{{"title": "x"}}',
        '[TOOL_CALLS]{name}{{"title": "x"}}',
        '[TOOL_CALLS] [{{"name": "{name}", "arguments": {{"title": "x"}}}}]',
        '[TOOL_CALLS]{name}[CALL_ID]c1[ARGS]{{"title": "x"}}',
    ],
    ids=["v11", "v11_no_args_token", "v3", "v11_call_id"],
)
def test_namespaced_names_read_back_exactly(template: str, name: str) -> None:
    check_name_read_back(F, template.format(name=name), name)


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


def test_reasoning_is_split_out() -> None:
    assert F.parse("[THINK]plan[/THINK]" + W).reasoning == "plan"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sure." + W, "Sure."),
        ("[TOOL_CALLS] not json", "not json"),
        ("ok [TOOL_RESULTS]x[TOOL_CONTENT]y[/TOOL_RESULTS]", "ok"),
        ("[THINK]hm[/THINK]Hi [ARGS]", "Hi"),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_tools_offered_in_available_tools_as_the_templates_do() -> None:
    system = F.render(TOOLS, USER_Q).messages[0]["content"]
    block = f"[AVAILABLE_TOOLS]{tools_json(TOOLS)}[/AVAILABLE_TOOLS]"
    assert block in system
    template = render(
        "Mistral-Small-3.2-24B-Instruct-2506.jinja",
        [{"role": "user", "content": "q"}],
        tools=[t.openai() for t in TOOLS],
    )
    assert block in template
    assert F.render(TOOLS, USER_Q).stop == ["[TOOL_RESULTS]"]


def test_results_are_written_as_the_v11_template_writes_tool_messages() -> None:
    call = ToolCall(name="get_weather", arguments={"city": "Paris"}, id="abc123def")
    out = F.continue_conversation(USER_Q, ModelReply(text=W), [(call, '{"temp": 21}')])
    ours = out[-1]["content"]
    assert ours == '[TOOL_RESULTS]abc123def[TOOL_CONTENT]{"temp": 21}[/TOOL_RESULTS]'
    template = render(
        "Mistral-Small-3.2-24B-Instruct-2506.jinja",
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "abc123def",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "abc123def", "content": '{"temp": 21}'},
        ],
        tools=[t.openai() for t in TOOLS],
    )
    assert ours in template
    assert '[TOOL_CALLS]get_weather[CALL_ID]abc123def[ARGS]{"city": "Paris"}' in template


def test_result_without_call_id_names_the_tool_and_shots_use_v11_syntax() -> None:
    call = ToolCall(name="get_weather", arguments={})
    out = F.continue_conversation(USER_Q, ModelReply(text=W), [(call, "21")])
    assert out[-1] == {
        "role": "user",
        "content": "[TOOL_RESULTS]get_weather[TOOL_CONTENT]21[/TOOL_RESULTS]",
    }
    system = Mistral(FormatOptions(shots=1)).render(TOOLS, USER_Q).messages[0]["content"]
    assert '[TOOL_CALLS]get_local_time[ARGS]{"city": "Tokyo"}' in system
