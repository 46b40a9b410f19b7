"""Tools and small helpers shared by the format tests."""

from __future__ import annotations

from typing import Any

from toolbench.formats.base import ParseResult
from toolbench.tools import ToolDef

WEATHER = ToolDef(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
            "days": {"type": "integer", "description": "Forecast days"},
        },
        "required": ["city"],
    },
)
SEARCH = ToolDef(
    name="search",
    description="Search the web.",
    parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
)
TOOLS = [WEATHER, SEARCH]


def calls_of(result: ParseResult) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.arguments) for c in result.calls]
