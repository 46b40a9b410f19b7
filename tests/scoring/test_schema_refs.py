"""A tool schema's ``$ref`` is resolved inside the schema only: scoring never fetches."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from toolbench import codes
from toolbench.formats.base import ToolCall
from toolbench.scoring.arg_schema import schema_problems
from toolbench.tools import ToolDef


def _tool(city: dict[str, Any], defs: dict[str, Any] | None = None) -> ToolDef:
    params: dict[str, Any] = {"type": "object", "properties": {"city": city}}
    if defs:
        params["$defs"] = defs
    return ToolDef(name="get_weather", parameters=params)


@pytest.mark.parametrize(
    "ref", ["http://schemas.invalid/city", "file:///etc/passwd", "#/$defs/missing"]
)
def test_unresolvable_refs_are_a_schema_fault_not_a_crash_or_a_fetch(
    ref: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_network(*_: Any, **__: Any) -> Any:
        raise AssertionError("scoring tried to reach the network")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    call = ToolCall(name="get_weather", arguments={"city": "Paris"})
    problems = schema_problems(call, [_tool({"$ref": ref})])
    assert [code for code, _ in problems] == [codes.ARGS_SCHEMA_INVALID]
    assert "does not resolve" in problems[0][1]


def test_local_refs_still_validate() -> None:
    tool = _tool({"$ref": "#/$defs/city"}, {"city": {"type": "string"}})
    assert schema_problems(ToolCall(name="get_weather", arguments={"city": "Paris"}), [tool]) == []
    bad = schema_problems(ToolCall(name="get_weather", arguments={"city": 3}), [tool])
    assert [code for code, _ in bad] == [codes.ARGS_SCHEMA_INVALID]
