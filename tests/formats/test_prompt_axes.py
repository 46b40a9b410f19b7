"""The prompt axes per format x axis value: what each renders, and that a call written the
way the prompt asks for it is read back (strictly), while hostile replies never raise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fmt_helpers import TOOLS, USER_Q, WEATHER
from stream_corpus import read_all

from toolbench import codes
from toolbench.formats.format_registry import get_format
from toolbench.formats.prompt_axes import AXES, AxisOptions, StyleOptions, tool_doc
from toolbench.formats.prompted import PromptedFormat
from toolbench.formats.shots import EXAMPLE_TOOL, SHOTS
from toolbench.tools import ToolDef

AXIS_FORMATS = ("prompt-json", "pythonic", "react")
TAGGED = ("prompt-json", "pythonic")
"""The formats that take ``tag`` (ReAct's labels are delimiters of their own)."""
SHARED = [a for a in AXES if a.name != "form"]
"""The axes these formats share (``form`` is prompt-xml's: tests/formats/test_prompt_xml.py)."""
POINTS = [(f, a.name, v) for f in AXIS_FORMATS for a in SHARED for v in a.values
          if a.name != "tag" or f in TAGGED]  # fmt: skip
PARIS = ("get_weather", {"city": "Paris", "days": 3})


def fmt(spec: str) -> PromptedFormat:
    got = get_format(spec)
    assert isinstance(got, PromptedFormat)
    return got


def system(spec: str, tools: list[ToolDef] | None = None) -> str:
    return str(fmt(spec).render(tools or TOOLS, USER_Q).messages[0]["content"])


@pytest.mark.parametrize("name", AXIS_FORMATS)
def test_every_axis_value_is_an_option_and_its_default_renders_as_without_it(name: str) -> None:
    """Naming an axis's default value changes neither the spec nor one byte of the prompt."""
    options = fmt(name).options
    assert isinstance(options, StyleOptions)
    assert isinstance(options, AxisOptions) == (name in TAGGED)
    for axis in SHARED if name in TAGGED else [a for a in SHARED if a.name != "tag"]:
        default = getattr(options, axis.name)
        assert default in axis.values
        assert fmt(f"{name}:{axis.name}={default}").spec == name
        assert system(f"{name}:{axis.name}={default}") == system(name)


@pytest.mark.parametrize(("name", "axis", "value"), POINTS)
def test_render_then_parse_round_trip(name: str, axis: str, value: str) -> None:
    """The call as the prompt's own example writes it (``shots``) parses to the call,
    strictly, at every point of every axis."""
    f = fmt(f"{name}:{axis}={value},shots=1")
    example = f.shot_call_text(EXAMPLE_TOOL.name, SHOTS[0].arguments)
    assert f"Assistant: {example}\n" in system(f.spec)  # the worked example's syntax
    reply = f.shot_call_text(*PARIS)
    got = f.parse(reply, TOOLS)
    assert [(c.name, c.arguments) for c in got.calls] == [PARIS]
    assert got.status == "strict", got.errors
    shown = "I should use get_weather." if name == "react" else ""  # ReAct's Thought shows
    assert got.content == shown
    # The incremental reader agrees with the parser, cut at every character.
    events = read_all(f.reader(TOOLS), list(reply))
    assert events[-1].kind == "final"
    # What a user is shown is what the format shows without the axes (the tag hidden).
    assert f.sanitize(reply).strip() == fmt(name).sanitize(fmt(name).call_text(*PARIS)).strip()


@pytest.mark.parametrize("name", TAGGED)
def test_tag_on_asks_for_the_tag_and_reads_calls_inside_it(name: str) -> None:
    f = fmt(f"{name}:tag=on")
    text = system(f.spec)
    assert "<TOOLCALL>" in text and "<TOOLCALL>" not in system(name)
    bare = f.call_text(*PARIS)
    inside = f.parse(f"Sure.\n<TOOLCALL>{bare}</TOOLCALL>", TOOLS)
    assert [(c.name, c.arguments) for c in inside.calls] == [PARIS]
    assert "TOOLCALL" not in inside.content + inside.raw_content
    # Without the tag the call is still read, but leniently: the tag's absence shows.
    outside = f.parse(bare, TOOLS)
    assert [(c.name, c.arguments) for c in outside.calls] == [PARIS]
    assert outside.status == "repaired" and codes.CALL_LENIENT in outside.codes()
    assert all(c.repaired for c in outside.calls)
    # tag=off reads the same bare call strictly, as before the axes.
    assert fmt(name).parse(bare, TOOLS).status == "strict"


DOC_MARKS = {
    "text": "- get_weather: Current weather for a city.",
    "json": '"name": "get_weather"',
    "python": "# Function: get_weather",
    "xml": '<function name="get_weather">',
}


@pytest.mark.parametrize("name", AXIS_FORMATS)
@pytest.mark.parametrize("doc", sorted(DOC_MARKS))
def test_doc_writes_the_tools_in_that_form(name: str, doc: str) -> None:
    text = system(f"{name}:doc={doc}")
    assert DOC_MARKS[doc] in text
    assert all(DOC_MARKS[o] not in text for o in DOC_MARKS if o != doc)


def test_doc_python_and_xml_follow_bfcl() -> None:
    """BFCL's generators (bfcl_eval/model_handler/utils.py), for one tool, by hand."""
    assert tool_doc([WEATHER], "python") == (
        "# Function: get_weather\n"
        '    """\n'
        "    Current weather for a city.\n\n"
        "    Args:\n"
        "        city (str): City name\n"
        "        unit (str, default='celsius'):  Enum values: ['celsius', 'fahrenheit'].\n"
        "        days (int): Forecast days\n"
        '    """\n'
        "\n\n\n"
    )
    assert tool_doc([WEATHER], "xml") == (
        '<function name="get_weather">\n'
        "  <desc>Current weather for a city.</desc>\n"
        "  <params>\n"
        '    <param name="city" type="string" required="true">\n'
        "      <desc>City name</desc>\n"
        "    </param>\n"
        '    <param name="unit" type="string" required="false" default="\'celsius\'">\n'
        "      <desc> Enum values: ['celsius', 'fahrenheit'].</desc>\n"
        "    </param>\n"
        '    <param name="days" type="integer" required="false">\n'
        "      <desc>Forecast days</desc>\n"
        "    </param>\n"
        "  </params>\n"
        "</function>\n"
    )
    assert json.loads(tool_doc([WEATHER], "json"))[0]["parameters"] == WEATHER.parameters


@pytest.mark.parametrize("name", AXIS_FORMATS)
def test_markup_and_style_follow_bfcls_templates(name: str) -> None:
    markdown = system(f"{name}:markup=markdown")
    for head in ("## Task\n", "## Tool Call Format\n", "## Multi-turn Behavior\n",
                 "## Available Tools\n"):  # fmt: skip
        assert head in markdown and head not in system(name)
    classic = system(f"{name}:style=classic")
    assert classic.startswith("You are an expert in composing functions.You are given a question")
    assert "You should only return the function calls in your response." in classic
    tag = ",tag=on" if name in TAGGED else ""
    experimental = system(f"{name}:style=experimental,markup=markdown{tag}")
    assert experimental.startswith("You are an expert in generating structured function calls.")
    asked = "Return only the function calls enclosed in <TOOLCALL> tags."
    assert (asked in experimental) == (name in TAGGED)
    assert fmt(name).call_shape in experimental  # the format's own call syntax
    # Every style still tells the model how results come back (toolbench's loop feeds them).
    for text in (classic, experimental, markdown):
        assert fmt(name).results_note in text


def test_prompt_json_constrained_keeps_its_answer_shape_on_every_style() -> None:
    for style in ("own", "classic", "experimental"):
        text = system(f"prompt-json:constrained,style={style}")
        assert '{"answer": "<your answer>"}' in text
    with pytest.raises(Exception, match="no tag=on"):
        get_format("prompt-json:constrained,tag=on")


def test_specs_are_canonical() -> None:
    assert fmt("prompt-json:tag=on,shots=2,doc=python,constrained=false").spec == (
        "prompt-json:doc=python,shots=2,tag=on"
    )
    assert (
        fmt("prompt-json:style=classic,constrained").spec == "prompt-json:constrained,style=classic"
    )
    assert fmt("pythonic:doc=json,markup=markdown").spec == "pythonic:markup=markdown"
    assert fmt("pythonic:doc=text").spec == "pythonic:doc=text"


HOSTILE = [
    "",
    "<TOOLCALL>",
    "</TOOLCALL>",
    "<TOOLCALL><TOOLCALL></TOOLCALL>",
    "<TOOL<TOOLCALL>CALL>[get_weather(city='Paris')]</TOOL</TOOLCALL>CALL>",
    "<TOOLCALL>" * 5000,
    "<TOOLCALL>{" * 3000,
    "<TOOLCALL>[" * 3000 + "get_weather(",
    '<TOOLCALL>{"tool": "get_weather", "arguments": {"city": "Pa',
    "<TOOLCALL>[get_weather(city='Paris')",
    "text <TOOLCALL>not a call</TOOLCALL> text",
    "\x00<TOOLCALL>\ud800</TOOLCALL>",
]


HOSTILE_SPECS = [
    *(f"{n}:{a}" for n in TAGGED for a in ("tag=on", "tag=on,doc=xml,style=classic")),
    *(f"{n}:markup=markdown" for n in AXIS_FORMATS),
    "react:doc=python,style=experimental",
]


@pytest.mark.parametrize("spec", HOSTILE_SPECS)
@pytest.mark.parametrize("reply", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_replies_never_raise(spec: str, reply: str) -> None:
    f = fmt(spec)
    got = f.parse(reply, TOOLS)
    assert got.status in ("strict", "repaired", "failed", "no_call")
    assert "<TOOLCALL>" not in f.sanitize(reply) or "tag=on" not in spec
    assert read_all(f.reader(TOOLS), [reply[:7], reply[7:]])[-1].kind == "final"


HOSTILE_SCHEMAS: list[Any] = [
    {"type": "object", "properties": {"a": "not a schema", "b": None, "c": []}},
    {"type": "object", "properties": "nope", "required": "x"},
    {"type": ["string", "null"], "items": "x", "additionalProperties": 3},
    {"type": "object", "properties": {"x": {"type": "array", "items": {"type": "array"}}}},
]


def _deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "array", "items": {"type": "object", "properties": {"n": schema}}}
    return schema


@pytest.mark.parametrize("doc", ["text", "json", "python", "xml"])
@pytest.mark.parametrize("schema", [*HOSTILE_SCHEMAS, _deep(60)], ids=range(5))
def test_hostile_tool_schemas_document_without_raising(doc: str, schema: Any) -> None:
    tool = ToolDef.model_construct(name="t", description="d", parameters=schema)
    text = tool_doc([tool], doc)  # type: ignore[arg-type]
    if doc == "json":  # the schema as given (the scenario loader bounds its depth)
        assert json.loads(text)[0]["parameters"] == schema
    else:  # documented to a bounded depth, whatever the schema's
        assert "t" in text and len(text) < 5_000


def test_docs_list_every_axis_and_value() -> None:
    """docs/formats.md's axis table is written by hand: it must name what the code takes."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text()
    rows = {
        line.split("|")[1].strip(): line for line in page.splitlines() if line.startswith("| `")
    }
    for axis in AXES:
        row = rows[f"`{axis.name}`"]
        assert ", ".join(f"`{v}`" for v in axis.values) in row and f"`{axis.bfcl}`" in row
