"""prompt-xml: BFCL's verbose_xml and concise_xml return formats (issue 37)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fmt_helpers import TOOLS, USER_Q, ParseCase, calls_of, case_ids, check_parse, check_sanitize
from hypothesis import given, settings
from hypothesis import strategies as st
from stream_corpus import read_all

from toolbench import codes, grid_axes
from toolbench.formats.base import ModelReply, Requirements, ToolCall
from toolbench.formats.bfcl_xml_reader import MAX_PARAMS
from toolbench.formats.format_registry import get_format
from toolbench.formats.prompt_axes import AXES
from toolbench.formats.prompt_xml import PARAM_TYPES, SHAPES, PromptXml, PromptXmlOptions, call_text
from toolbench.formats.prompted import PromptedFormat
from toolbench.formats.shots import EXAMPLE_TOOL, SHOTS
from toolbench.runner.format_grid import axes_of, base_of, expand_spec
from toolbench.tools import ToolDef

V = get_format("prompt-xml")
C = get_format("prompt-xml:form=concise")
PARIS3 = [("get_weather", {"city": "Paris", "days": 3})]
L1 = [codes.CALL_LENIENT]
AFTER = [codes.STOP_TEXT_AFTER_CALL]

CONTRACT = (PromptXmlOptions, Requirements())
"""This format's contract row (options model, requirements): no stop sequences."""

VERBOSE_PARIS = (
    '<functions><function name="get_weather"><params><param name="city" value="Paris" '
    'type="string"/><param name="days" value="3" type="integer"/></params></function></functions>'
)
CONCISE_PARIS = (
    '<functions><function name="get_weather"><param name="city" type="string">Paris</param>'
    '<param name="days" type="integer">3</param></function></functions>'
)

# (id, reply, calls, status, content, error codes, stop signals), read as form=verbose
CASES: list[ParseCase] = [
    ("canonical", VERBOSE_PARIS, PARIS3, "strict", "", [], []),
    ("no_params_wrapper", VERBOSE_PARIS.replace("<params>", "").replace("</params>", ""),
     PARIS3, "strict", "", [], []),
    ("fenced_with_prose", f"Sure.\n```xml\n{VERBOSE_PARIS}\n```", PARIS3, "strict", "Sure.",
     [], []),
    ("text_after", f"{VERBOSE_PARIS}\nDone.", PARIS3, "strict", "Done.", [], AFTER),
    ("concise_shape", CONCISE_PARIS, PARIS3, "repaired", "", L1, []),
    ("two_calls", '<functions><function name="search"><params><param name="q" value="a"/>'
     '</params></function><function name="search"/></functions>',
     [("search", {"q": "a"}), ("search", {})], "strict", "", [], []),
    ("untyped_by_schema", '<functions><function name="get_weather"><params><param name="days" '
     'value="4"/></params></function></functions>', [("get_weather", {"days": 4})],
     "strict", "", [], []),
    ("bad_type_by_schema", '<functions><function name="get_weather"><params><param name="days" '
     'value="four" type="integer"/></params></function></functions>',
     [("get_weather", {"days": "four"})], "repaired", "", L1, []),
    ("entities", '<functions><function name="search"><params><param name="q" value="a &amp; '
     '&lt;b&gt; &quot;c&quot; &#233;"/></params></function></functions>',
     [("search", {"q": 'a & <b> "c" \u00e9'})], "strict", "", [], []),
    ("quote_in_single_quotes", "<functions><function name=\"search\"><params><param name='q' "
     "value='say \"hi\" > now'/></params></function></functions>",
     [("search", {"q": 'say "hi" > now'})], "strict", "", [], []),
    ("array_and_dict", '<functions><function name="search"><params><param name="q" '
     "value=\"['a', 1]\" type=\"array\"/><param name=\"o\" value='{\"k\": true}' type=\"dict\"/>"
     "</params></function></functions>",
     [("search", {"q": ["a", 1], "o": {"k": True}})], "strict", "", [], []),
    ("bare_function", '<function name="search"><params><param name="q" value="x"/></params>'
     "</function>", [("search", {"q": "x"})], "repaired", "", L1, []),
    ("unclosed_block", f"{VERBOSE_PARIS[: -len('</functions>')]}\nok", PARIS3, "repaired",
     "ok", L1, AFTER),
    ("unclosed_function", '<functions><function name="search"><params><param name="q" value="x"/>'
     '</params><function name="search"/></functions>',
     [("search", {"q": "x"}), ("search", {})], "repaired", "", L1, []),
    ("truncated_in_function", '<functions><function name="search"><params><param name="q" val',
     [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("truncated_in_value", '<functions><function name="search"><param name="q">abc',
     [], "failed", "", [codes.CALL_TRUNCATED], []),
    ("missing_name", '<functions><function><params/></function></functions>',
     [], "failed", "", [codes.CALL_MISSING_NAME], []),
    ("unknown_tool", '<functions><function name="nope"/></functions>', [("nope", {})], "strict",
     "", [codes.CALL_UNKNOWN_TOOL], []),
    ("prose_mention", "XML has <function> and <functions/> tags.", [], "no_call",
     "XML has <function> and <functions/> tags.", [], []),
    ("invented_result", f"{VERBOSE_PARIS}\nTool Result (get_weather):\nsunny", PARIS3, "strict",
     "sunny", [], [*AFTER, codes.STOP_HALLUCINATED_RESULT]),
    ("think", f"<think>use <functions></think>{VERBOSE_PARIS}", PARIS3, "strict", "", [], []),
]  # fmt: skip

CONCISE_CASES: list[ParseCase] = [
    ("canonical", CONCISE_PARIS, PARIS3, "strict", "", [], []),
    ("value_stripped", CONCISE_PARIS.replace(">3<", ">\n 3 \n<"), PARIS3, "strict", "", [], []),
    ("verbose_shape", VERBOSE_PARIS, PARIS3, "repaired", "", L1 * 2, []),  # <params>, value=
    ("params_wrapper", CONCISE_PARIS.replace('">', '"><params>', 1).replace(
        "</function>", "</params></function>"), PARIS3, "repaired", "", L1, []),
    ("text_in_string", '<functions><function name="search"><param name="q" type="string">'
     "a &lt; b</param></function></functions>", [("search", {"q": "a < b"})], "strict", "", [], []),
    ("boolean_case", '<functions><function name="search"><param name="q" type="boolean">TRUE'
     "</param></function></functions>", [("search", {"q": True})], "strict", "", [], []),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_parse_verbose(case: ParseCase) -> None:
    check_parse(V, case)


@pytest.mark.parametrize("case", CONCISE_CASES, ids=case_ids(CONCISE_CASES))
def test_parse_concise(case: ParseCase) -> None:
    check_parse(C, case)


def fmt(spec: str) -> PromptedFormat:
    got = get_format(spec)
    assert isinstance(got, PromptedFormat)
    return got


def system(spec: str) -> str:
    return str(fmt(spec).render(TOOLS, USER_Q).messages[0]["content"])


POINTS = [(form, a.name, v) for form in ("verbose", "concise") for a in AXES for v in a.values
          if a.name != "form"]  # fmt: skip
ARGS = {"city": "Paris & <Co> \"x\"", "days": 3, "flags": [1, "a"], "opt": None, "hot": True,
        "temp": 21.5, "meta": {"k": "v"}}  # fmt: skip


@pytest.mark.parametrize(("form", "axis", "value"), POINTS)
def test_render_then_parse_round_trip(form: str, axis: str, value: str) -> None:
    """At every form x axis point, the worked example shows the form's syntax and a call
    written that way is read back strictly, to the same values, by parser and stream."""
    f = fmt(f"prompt-xml:form={form},{axis}={value},shots=1")
    example = f.shot_call_text(EXAMPLE_TOOL.name, SHOTS[0].arguments)
    assert f"Assistant: {example}\n" in system(f.spec)
    assert ("<params>" in example) == (form == "verbose")
    reply = f.shot_call_text("get_weather", ARGS)
    got = f.parse(reply, TOOLS)
    assert calls_of(got) == [("get_weather", ARGS)]
    assert got.status == "strict", got.errors
    assert got.content == ""
    events = read_all(f.reader(TOOLS), list(reply))
    assert events[-1].kind == "final"
    assert f.sanitize(reply).strip() == ""


@pytest.mark.parametrize("form", ["verbose", "concise"])
@pytest.mark.parametrize("style", ["classic", "experimental"])
def test_prompt_is_bfcls_template_word_for_word(form: str, style: str) -> None:
    """BFCL's output format and parameter-type sentence, inside its own style's template."""
    text = system(f"prompt-xml:form={form},style={style}")
    lead = ("If you decide to invoke any of the function(s), you MUST put it in the format of "
            if style == "classic" else "You MUST format it exactly as ")  # fmt: skip
    assert f"{lead}{SHAPES[form]}. {PARAM_TYPES} " in text
    assert SHAPES["concise" if form == "verbose" else "verbose"] not in text
    assert '<function name="get_weather">\n  <desc>' in text  # doc=xml by default
    tagged = system(f"prompt-xml:form={form},style={style},tag=on")
    assert f"<TOOLCALL>{SHAPES[form]}</TOOLCALL>. {PARAM_TYPES}" in tagged


def test_defaults_are_bfcls_classic_verbose_xml() -> None:
    assert V.spec == "prompt-xml" and C.spec == "prompt-xml:form=concise"
    assert system("prompt-xml") == system("prompt-xml:doc=xml,form=verbose,style=classic")
    assert system("prompt-xml:style=own").startswith("You can call tools. Available tools:")


def test_a_grid_over_the_form_is_one_base() -> None:
    cells = expand_spec("prompt-xml:form=verbose|concise,tag=off|on")
    assert cells == ["prompt-xml", "prompt-xml:tag=on", "prompt-xml:form=concise",
                     "prompt-xml:form=concise,tag=on"]  # fmt: skip
    assert {base_of(c) for c in cells} == {"prompt-xml"}
    assert axes_of("prompt-xml:form=concise")["form"] == "concise"
    assert axes_of("prompt-xml")["form"] == "verbose"
    assert "form" not in axes_of("prompt-json")
    # The report groups the stored specs the same way, and names form as an axis.
    assert {grid_axes.grid_base(c) for c in cells} == {"prompt-xml"}
    assert grid_axes.grid_point("prompt-xml:form=concise")["form"] == "concise"
    assert grid_axes.writes_axes("prompt-xml:form=concise")


def test_calls_past_the_bounds_are_not_read() -> None:
    params = "".join(f'<param name="p{i}" value="{i}"/>' for i in range(MAX_PARAMS + 5))
    (call,) = V.parse(f'<functions><function name="search">{params}</function></functions>').calls
    assert len(call.arguments) == MAX_PARAMS
    many = V.parse("<functions>" + '<function name="search"/>' * 200 + "</functions>", TOOLS)
    assert len(many.calls) == 128 and codes.CALL_BAD_SHAPE in many.codes()


def test_without_the_tool_list_values_follow_their_type_attribute() -> None:
    got = V.parse('<functions><function name="f"><params><param name="n" value="3" type="float"/>'
                  '<param name="s" value="3"/></params></function></functions>')  # fmt: skip
    assert calls_of(got) == [("f", {"n": 3.0, "s": 3})]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"Here.\n{VERBOSE_PARIS}\nTool Result (get_weather): hi", "Here.\n\nhi"),
        ("a <func<functions>tions> b", "a  b"),
        ("x <function name=", "x"),
    ],
)
def test_sanitize(text: str, expected: str) -> None:
    check_sanitize(V, text, expected)


def test_continue_conversation_feeds_results_as_prompt_json_does() -> None:
    out = V.continue_conversation(
        [{"role": "user", "content": "q"}],
        ModelReply(text=VERBOSE_PARIS),
        [(ToolCall(name="get_weather", arguments={}), "sunny")],
    )
    assert out[-1] == {"role": "user", "content": "Tool Result (get_weather):\nsunny"}


def test_call_text_is_the_verbose_form() -> None:
    assert call_text("get_weather", {"city": "Paris", "days": 3}) == VERBOSE_PARIS
    assert call_text("get_weather", {"city": "Paris", "days": 3}, "concise") == CONCISE_PARIS
    assert (
        PromptXml.call_text("a", {})
        == '<functions><function name="a"><params></params></function></functions>'
    )


def test_docs_name_the_format_and_its_form_axis() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text()
    assert "`prompt-xml`" in page and "`verbose_xml`" in page and "`concise_xml`" in page


XML_BITS = [
    "<functions>", "</functions>", '<function name="search">', '<function name="', "</function>",
    "<params>", "</params>", '<param name="q" value="', '<param name="q" type="integer">',
    "</param>", "/>", ">", '"', "'", "&amp;", "&#", "=", " ", "\n", "x", "3", "```xml",
    "Tool Result (x):", "<think>", "</think>", "<TOOLCALL>",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(st.sampled_from(XML_BITS) | st.text(max_size=3), max_size=40).map("".join),
    form=st.sampled_from(["verbose", "concise"]),
)
def test_never_raises_and_sanitize_leaves_no_marker(text: str, form: str) -> None:
    f = fmt(f"prompt-xml:form={form}")
    for tools in (TOOLS, None):
        got = f.parse(text, tools)
        assert not any("parser error" in e.message for e in got.errors), got.errors
        assert (got.status == "no_call") == (not got.attempted)
    out = f.sanitize(text)
    assert not any(m.search(out) for m in f.markers), out


@pytest.mark.parametrize(
    "unit",
    [
        '<function name="search"><params><param name="q" value="',
        "<functions><function name=search a=<param b=",
        '<param name="q">' + "x" * 5,
        "<functions><function name='a'>" + '"',
        '<function name="search"/>',
        "<func<functions>",
    ],
)
def test_linear_time(unit: str) -> None:
    """Eight times the text costs at most about eight times the time (not 64)."""
    tools: list[ToolDef] = TOOLS

    def cost(n: int) -> float:
        text = unit * n
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            V.parse(text, tools)
            C.parse(text, tools)
            V.sanitize(text)
            best = min(best, time.perf_counter() - t0)
        return best

    small, big = cost(500), cost(4000)
    assert big < 8 * small * 3 + 0.01, (small, big)
