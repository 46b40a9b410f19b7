"""Tool descriptions generated from JSON Schema."""

from __future__ import annotations

from toolbench.formats.describe import describe_tool, describe_tools, merge_system, type_name
from toolbench.tools import ToolDef


def test_nested_schema() -> None:
    tool = ToolDef(
        name="book",
        description="Book a trip.",
        parameters={
            "type": "object",
            "properties": {
                "who": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                    "required": ["name"],
                },
                "stops": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
                "seats": {"type": "integer", "minimum": 1, "default": 1},
                "note": {"type": ["string", "null"]},
            },
            "required": ["who"],
        },
    )
    assert describe_tool(tool).splitlines() == [
        "- book: Book a trip.",
        "  Parameters:",
        "    - who (object, required)",
        "      fields:",
        "      - name (string, required)",
        "      - age (integer, optional)",
        "    - stops (array of object, optional)",
        "      item fields:",
        "      - city (string, optional)",
        "    - seats (integer, optional, default: 1, min: 1)",
        "    - note (string or null, optional)",
    ]


def test_no_parameters_and_no_tools() -> None:
    assert describe_tool(ToolDef(name="ping")) == "- ping\n  Parameters: none"
    assert describe_tools([]) == "(no tools are available)"


def test_type_names() -> None:
    assert type_name({"anyOf": [{"type": "string"}, {"type": "integer"}]}) == "string or integer"
    assert type_name({"enum": [1]}) == "enum"
    assert type_name("junk") == "any"


def test_merge_system() -> None:
    assert merge_system([{"role": "user", "content": "q"}], "T") == [
        {"role": "system", "content": "T"},
        {"role": "user", "content": "q"},
    ]
    assert merge_system([{"role": "system", "content": "Own. "}], "T") == [
        {"role": "system", "content": "Own.\n\nT"}
    ]
