"""``native``'s knobs: strict schemas (formats/strict.py), ``tool_choice`` and ``parallel``
as format options: the spec, what is rendered, what is refused, how a strict reply reads."""

from __future__ import annotations

from typing import Any

import pytest

from toolbench import codes
from toolbench.formats.base import ModelReply
from toolbench.formats.format_registry import get_format
from toolbench.formats.strict import drop_optional_nulls, strict_schema, why_not_strict
from toolbench.tools import ToolDef

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "days": {"type": ["integer"]},
        "when": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "where": {"$ref": "#/$defs/place"},
        "opts": {
            "type": "object",
            "properties": {"hourly": {"type": "boolean"}},
            "required": [],
        },
    },
    "required": ["city"],
    "$defs": {"place": {"type": "object", "properties": {"lat": {"type": "number"}}}},
}


def test_strict_schema_makes_every_property_required_and_optional_ones_nullable() -> None:
    got, changes = strict_schema(WEATHER)
    props = got["properties"]
    assert got["required"] == ["city", "unit", "days", "when", "where", "opts"]
    assert got["additionalProperties"] is False
    assert props["city"] == {"type": "string"}
    assert props["unit"] == {"type": ["string", "null"], "enum": ["c", "f", None]}
    assert props["days"] == {"type": ["integer", "null"]}
    assert props["when"] == {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
    assert props["where"] == {"anyOf": [{"$ref": "#/$defs/place"}, {"type": "null"}]}
    nested = props["opts"]
    assert nested["type"] == ["object", "null"]
    assert nested["required"] == ["hourly"] and nested["additionalProperties"] is False
    assert nested["properties"]["hourly"] == {"type": ["boolean", "null"]}
    place = got["$defs"]["place"]
    assert place["required"] == ["lat"] and place["additionalProperties"] is False
    assert "parameters.unit: optional, sent as required and nullable" in changes
    assert "parameters: additionalProperties set to false" in changes
    assert "parameters.$defs.place: additionalProperties set to false" in changes
    assert WEATHER["required"] == ["city"]  # the scenario's own schema is left alone


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"type": "object", "properties": {}, "additionalProperties": True},
         "parameters: an open object (additionalProperties is not false)"),
        ({"type": "object", "properties": {"f": {"type": "object"}}},
         "parameters.f: an object without properties (strict mode takes no open object)"),
        ({"type": "object", "properties": {"f": {"type": "object", "properties": {},
                                                  "additionalProperties": {"type": "string"}}}},
         "parameters.f: an open object (additionalProperties is not false)"),
        ({"type": "object", "patternProperties": {"^x": {}}, "properties": {}},
         "parameters: 'patternProperties' is not allowed in strict mode"),
        ({"type": "object", "properties": {"v": {"oneOf": [{"type": "string"}]}}},
         "parameters.v: 'oneOf' is not allowed in strict mode"),
        ({"type": "object", "properties": {"v": {"type": "array", "items": {"allOf": []}}}},
         "parameters.v.items: 'allOf' is not allowed in strict mode"),
    ],
)  # fmt: skip
def test_what_cannot_be_made_strict(schema: dict[str, Any], why: str) -> None:
    assert why_not_strict(schema) == why


def test_what_can_be_made_strict() -> None:
    assert why_not_strict(WEATHER) is None
    assert why_not_strict({"type": "object", "properties": {}}) is None


def test_optional_nulls_are_read_as_left_out_at_every_level() -> None:
    args = {"city": "Paris", "unit": None, "opts": {"hourly": None}, "extra": None}
    assert drop_optional_nulls(args, WEATHER) == {"city": "Paris", "opts": {}, "extra": None}
    assert drop_optional_nulls({"city": None}, WEATHER) == {"city": None}  # required: kept
    assert drop_optional_nulls("not an object", WEATHER) == "not an object"


@pytest.mark.parametrize(
    ("spec", "canonical"),
    [
        ("native", "native"),
        ("native:strict", "native:strict"),
        ("native:strict=true", "native:strict"),
        ("native:strict=false", "native"),
        ("native:tool_choice=required,strict", "native:strict,tool_choice=required"),
        ("native:parallel=false", "native:parallel=false"),
        ("native:parallel=False,tool_choice=get_weather",
         "native:parallel=false,tool_choice=get_weather"),
    ],
)  # fmt: skip
def test_spec_round_trips(spec: str, canonical: str) -> None:
    fmt = get_format(spec)
    assert fmt.spec == canonical
    assert get_format(fmt.spec).spec == canonical


TOOL = ToolDef(name="get_weather", parameters=WEATHER)
HI = [{"role": "user", "content": "Weather in Paris?"}]


@pytest.mark.parametrize(
    ("spec", "tool_choice", "params"),
    [
        ("native", "auto", {}),
        ("native:tool_choice=required", "auto", {"tool_choice": "required"}),
        ("native:tool_choice=none", "auto", {"tool_choice": "none"}),
        ("native:tool_choice=get_weather", "auto",
         {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}),
        ("native:parallel=false", "auto", {"parallel_tool_calls": False}),
    ],
)  # fmt: skip
def test_render_puts_knobs_in_params(spec: str, tool_choice: str, params: dict[str, Any]) -> None:
    r = get_format(spec).render([TOOL], HI)
    assert (r.tool_choice, r.params) == (tool_choice, params)
    assert r.tools is not None and "strict" not in r.tools[0]["function"]
    assert get_format(spec).render([], HI).params == {}  # no tools: no knob to send


def test_render_strict_sends_strict_schemas() -> None:
    fmt = get_format("native:strict")
    (tool,) = fmt.render([TOOL], HI).tools or []
    assert tool["function"]["strict"] is True
    assert tool["function"]["parameters"] == strict_schema(WEATHER)[0]
    (note,) = fmt.notes([TOOL])
    assert note.startswith("native:strict: tool 'get_weather': parameters.unit: optional,")
    assert get_format("native").notes([TOOL]) == []


def test_strict_reply_reads_null_optionals_as_left_out() -> None:
    args = '{"city": "Paris", "unit": null}'
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": args}}
    reply = ModelReply(tool_calls=[call])
    (strict,) = get_format("native:strict").parse_reply(reply, [TOOL]).calls
    assert (strict.arguments, strict.notes) == ({"city": "Paris"}, [codes.ARGS_STRICT_NULL])
    (plain,) = get_format("native").parse_reply(reply, [TOOL]).calls
    assert plain.arguments == {"city": "Paris", "unit": None}


@pytest.mark.parametrize(
    ("spec", "tools", "why"),
    [
        ("native:tool_choice=get_time", [TOOL],
         "offers no tool 'get_time' (it offers: get_weather)"),
        ("native:tool_choice=get_time", [], "offers no tool 'get_time' (it offers: none)"),
        ("native:strict", [ToolDef(name="f", parameters={"type": "object", "properties": {},
                                                           "additionalProperties": True})],
         "tool 'f' cannot be made strict: parameters: an open object (additionalProperties is"
         " not false)"),
        ("native:strict:stream", [ToolDef(name="f", parameters={"type": "object"})],
         "tool 'f' cannot be made strict: parameters: an object without properties (strict"
         " mode takes no open object)"),
        ("native:tool_choice=required", [], None),
        ("native:tool_choice=get_weather,strict", [TOOL], None),
    ],
)  # fmt: skip
def test_refuses(spec: str, tools: list[ToolDef], why: str | None) -> None:
    assert get_format(spec.replace(":stream", ",stream")).refuses(tools) == why
