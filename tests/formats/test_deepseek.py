"""deepseek: V3 / V3.1 / R1 ``<｜tool▁calls▁begin｜>`` blocks, V3.2 / V4 DSML read too."""
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
from toolbench.formats.deepseek import DeepSeek

F = DeepSeek()
B, E = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CB, CE, S = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
W = f'{B}{CB}get_weather{S}{{"city": "Paris"}}{CE}{E}'
PARIS = [("get_weather", {"city": "Paris"})]
AFTER = [codes.STOP_TEXT_AFTER_CALL]
DSML = '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>'

CONTRACT = (ShotsOptions, Requirements(stop_sequences=True))
"""This format's contract row (options model, requirements): its ``Format.test_cases``
module is this one, and the shared contract test reads the row here."""


# (id, reply, calls, status, content, error codes, stop signals)
CASES: list[ParseCase] = [
    ("v31", W, PARIS, "strict", "", [], []),
    ("v3_r1_fenced", f'{B}{CB}function{S}get_weather\n```json\n{{"city": "Paris"}}\n```{CE}{E}', PARIS, "strict", "", [], []),
    ("two_calls", f'{B}{CB}get_weather{S}{{"city": "Paris"}}{CE}{CB}search{S}{{"q": "x"}}{CE}{E}', [*PARIS, ("search", {"q": "x"})], "strict", "", [], []),
    ("prose_before", "Let me check." + W, PARIS, "strict", "Let me check.", [], []),
    ("text_after", W + " Done.", PARIS, "strict", "Done.", [], AFTER),
    ("dsml_v32", DSML, [("get_weather", {"city": "Paris", "days": 3})], "strict", "", [], []),
    ("dsml_v4_tool_calls", '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="search">\n<｜DSML｜parameter name="q" string="true">x</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>', [("search", {"q": "x"})], "strict", "", [], []),
    # issue 34: arguments are strict JSON, as every reference parser decodes them
    ("json_needing_repair_refused", f'{B}{CB}get_weather{S}{{"city": "Paris",}}{CE}{E}', [], "failed", "", [codes.JSON_DECODE_FAILED], []),
    ("cut_after_sep", f"{B}{CB}get_weather{S}", [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("cut_mid_json", f'{B}{CB}get_weather{S}{{"city": "Pa', [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("no_separator", f"{B}{CB}get_weather{CE}{E}", [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("r1_reasoning_closed_only", "reasoning here</think>" + W, PARIS, "strict", "", [], []),
    ("hallucinated_output", W + "<｜tool▁output▁begin｜>21C<｜tool▁output▁end｜>", PARIS, "strict", "", [], [*AFTER, codes.STOP_HALLUCINATED_RESULT]),
    ("unknown_tool", f"{B}{CB}fly{S}{{}}{CE}{E}", [("fly", {})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    ("plain", "It is sunny.", [], "no_call", "It is sunny.", [], []),
    # issue 20: a name that runs into its fence or JSON is split (repaired), other text is no name
    ("r1_name_into_fence", f'{B}{CB}function{S}get_weather```json\n{{"city": "Paris"}}\n```{CE}{E}', PARIS, "repaired", "", [codes.CALL_LENIENT], []),
    # issue 34: the V3 form needs its fence and its type word, as the reference parsers do
    ("r1_name_into_json_without_fence", f'{B}{CB}function{S}get_weather{{"city": "Paris"}}{CE}{E}', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("r1_no_fence", f'{B}{CB}function{S}get_weather\n{{"city": "Paris"}}{CE}{E}', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("r1_fence_not_closed", f'{B}{CB}function{S}get_weather\n```json\n{{"city": "Paris"}}{CE}{E}', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("r1_cut_inside_fence_complete_json", f'{B}{CB}function{S}get_weather\n```json\n{{"city": "Paris"}}', PARIS, "strict", "", [], []),
    ("r1_cut_inside_fence", f'{B}{CB}function{S}get_weather\n```json\n{{"city": "Pa', [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("r1_unquoted_keys", f'{B}{CB}function{S}get_weather\n```json\n{{city: Paris}}\n```{CE}{E}', [], "failed", "", [codes.JSON_DECODE_FAILED], []),
    ("r1_bad_call_beside_good", f'{B}{CB}function{S}search\n```json\n{{invalid json}}\n```{CE}{CB}function{S}get_weather\n```json\n{{"city": "Paris"}}\n```{CE}{E}', PARIS, "repaired", "", [codes.JSON_DECODE_FAILED], []),
    ("r1_other_type_word", f'{B}{CB}not_function{S}get_weather\n```json\n{{"city": "Paris"}}\n```{CE}{E}', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("r1_empty_type_word", f'{B}{CB}{S}get_weather```json\n{{"city": "Paris"}}\n```{CE}{E}', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("r1_no_name", f'{B}{CB}function{S}{{"city": "Paris"}}{CE}{E}', [], "failed", "", [codes.CALL_MISSING_NAME], []),
    ("r1_name_padded", f'{B}{CB}function{S}  get_weather  \n```json\n{{"city": "Paris"}}\n```{CE}{E}', PARIS, "strict", "", [], []),
    ("r1_fence_without_newlines", f'{B}{CB}function{S}get_weather```json{{"city": "Paris"}}```{CE}{E}', PARIS, "repaired", "", [codes.CALL_LENIENT], []),
    ("v31_fenced_arguments", f'{B}{CB}get_weather{S}```json\n{{"city": "Paris"}}\n```{CE}{E}', PARIS, "repaired", "", [codes.CALL_LENIENT], []),
    ("v31_name_into_fence", f'{B}{CB}get_weather```json{S}{{"city": "Paris"}}{CE}{E}', PARIS, "repaired", "", [codes.CALL_LENIENT], []),
    ("v31_name_into_json_no_args", f'{B}{CB}search{{"q": "x"}}{S}{CE}{E}', [("search", {"q": "x"})], "repaired", "", [codes.CALL_LENIENT], []),
    ("name_with_prose_is_no_name", f'{B}{CB}call get_weather please{S}{{"city": "Paris"}}{CE}{E}', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("name_into_parens_is_no_name", f'{B}{CB}function{S}get_weather(city="Paris"){CE}{E}', [], "failed", "", [codes.CALL_BAD_SHAPE], []),
    ("namespaced_name_strict", f'{B}{CB}mcp.fs/read-file{S}{{}}{CE}{E}', [("mcp.fs/read-file", {})], "strict", "", [codes.CALL_UNKNOWN_TOOL], []),
    # issue 20: V4 opens a call with the invoke alone; read it (repaired), values do not leak
    ("dsml_v4_bare_invoke", 'Checking.<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Beijing</｜DSML｜parameter>\n</｜DSML｜invoke>', [("get_weather", {"city": "Beijing"})], "repaired", "Checking.", [codes.CALL_LENIENT], []),
    ("dsml_v4_two_bare_invokes", '<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">Rome</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name="search">\n<｜DSML｜parameter name="q" string="true">x</｜DSML｜parameter>\n</｜DSML｜invoke>', [("get_weather", {"city": "Rome"}), ("search", {"q": "x"})], "repaired", "", [codes.CALL_LENIENT], []),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse(case: ParseCase) -> None:
    check_parse(F, case)


@pytest.mark.parametrize("name", NAMESPACED)
@pytest.mark.parametrize(
    "template",
    [
        f'{B}{CB}{{name}}{S}{{{{"title": "x"}}}}{CE}{E}',
        f'{B}{CB}function{S}{{name}}\n```json\n{{{{"title": "x"}}}}\n```{CE}{E}',
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="{name}">\n<｜DSML｜parameter name="title" string="true">x</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
    ],
    ids=["v31", "v3_r1", "dsml"],
)
def test_namespaced_names_read_back_exactly(template: str, name: str) -> None:
    check_name_read_back(F, template.format(name=name), name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Sure." + W, "Sure."),
        ("ok <｜tool▁output▁begin｜>x<｜tool▁output▁end｜>", "ok"),
        ("Hi " + DSML, "Hi"),
        ("stray <｜tool▁sep｜> and <｜DSML｜invoke name=", "stray  and"),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(F, text, expected)


def test_prompt_and_results_follow_the_v31_format() -> None:
    system = F.render(TOOLS, USER_Q).messages[0]["content"]
    assert "### get_weather\nDescription: Current weather for a city." in system
    assert f"{B}{CB}tool_call_name{S}tool_call_arguments{CE}" in system
    call = ToolCall(name="get_weather", arguments={"city": "Paris"})
    out = F.continue_conversation(USER_Q, ModelReply(text=W), [(call, '{"temp": 21}')])
    ours = out[-1]["content"]
    assert ours == '<｜tool▁output▁begin｜>{"temp": 21}<｜tool▁output▁end｜>'
    template = render(
        "deepseek-ai-DeepSeek-V3.1.jinja",
        [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "content": '{"temp": 21}'},
        ],
    )
    assert ours in template
    assert f"{CB}get_weather{S}" in template


def test_call_text_round_trips_and_shots_use_it() -> None:
    got = F.parse(F.call_text("search", {"q": "ü 東京"}))
    assert [(c.name, c.arguments) for c in got.calls] == [("search", {"q": "ü 東京"})]
    system = DeepSeek(FormatOptions(shots=1)).render(TOOLS, USER_Q).messages[0]["content"]
    assert f'{CB}get_local_time{S}{{"city": "Tokyo"}}{CE}' in system
