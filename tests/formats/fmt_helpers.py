"""Tools and small helpers shared by the format tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolbench.formats.base import Format, Message, ParseResult, RenderedRequest
from toolbench.formats.call_objects import DROPPING
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
USER_Q: list[Message] = [{"role": "user", "content": "q"}]


def calls_of(result: ParseResult) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.arguments) for c in result.calls]


Calls = list[tuple[str, dict[str, Any]]]
ParseCase = tuple[str, str, Calls, str, Any, list[str], list[str]]
"""(id, reply, calls, status, expected text, error codes, stop signals): one row of a
text format's parse table; the expected text is ``content`` or ReAct's ``final_answer``."""


def case_ids(cases: Sequence[ParseCase]) -> list[str]:
    return [c[0] for c in cases]


def check_parse(
    fmt: Format,
    case: ParseCase,
    text_field: str = "content",
    tools: Sequence[ToolDef] = TOOLS,
) -> ParseResult:
    """Parse a table row's reply with ``tools`` (the shared ones unless the row has its
    own) and check all that the row says; the result, for further checks."""
    _, reply, calls, status, text, errors, signals = case
    got = fmt.parse(reply, tools)
    assert calls_of(got) == calls
    assert got.status == status
    assert getattr(got, text_field) == text
    assert got.codes() == errors
    assert got.stop_signals == signals
    assert got.attempted == (status != "no_call")
    # repaired: a call needed repair or leniency, or another attempted call was dropped
    lenient = any(c.repaired for c in got.calls) or bool(DROPPING.intersection(got.codes()))
    assert (lenient and bool(got.calls)) == (status == "repaired")
    return got


def check_sanitize(fmt: Format, text: str, expected: str) -> None:
    """Sanitized text is exactly as expected and holds none of the format's markers."""
    out = fmt.sanitize(text)
    assert out == expected
    assert not any(m.search(out) for m in fmt.markers)


def system_prompt(fmt: Format, messages: Sequence[Message] = USER_Q) -> tuple[RenderedRequest, str]:
    """The request a format renders for the shared tools, and its system prompt."""
    req = fmt.render(TOOLS, messages)
    assert req.messages[0]["role"] == "system"
    return req, req.messages[0]["content"]


NAMESPACED = ("github.create_issue", "fs/read_file", "weather-forecast", "mcp__gh__list-issues")
"""Tool names as MCP servers and OpenAPI-derived tool lists write them (issue 34): every
format reads them back exactly as the tool list offered them."""


def named_tool(name: str) -> ToolDef:
    """A tool called ``name`` that takes one string ``title``."""
    return ToolDef(
        name=name,
        description="A namespaced tool.",
        parameters={"type": "object", "properties": {"title": {"type": "string"}}},
    )


def check_name_read_back(fmt: Format, reply: str, name: str) -> None:
    """``reply`` calls ``name`` with ``{"title": "x"}``: offered, the call is read with that
    exact name (no unknown-tool code); not offered, it is still that call, coded
    ``call.unknown_tool`` (never a silent no-call)."""
    offered = fmt.parse(reply, [named_tool(name)])
    assert calls_of(offered) == [(name, {"title": "x"})], offered
    assert "call.unknown_tool" not in offered.codes()
    other = fmt.parse(reply, TOOLS)
    assert calls_of(other) == [(name, {"title": "x"})], other
    assert "call.unknown_tool" in other.codes()
    assert other.attempted
