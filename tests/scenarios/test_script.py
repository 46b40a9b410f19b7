"""Scripted tool results and when a conversation goes on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbench.formats.base import ParseResult, ToolCall
from toolbench.scenarios.model import Scenario
from toolbench.scenarios.script import should_continue, tool_results

TOOLS = [{"name": n} for n in ("get_weather", "get_time", "calculate")]


def make(expect: dict[str, Any]) -> Scenario:
    return Scenario.model_validate(
        {
            "id": "s",
            "tools": TOOLS,
            "messages": [{"role": "user", "content": "q"}],
            "expect": expect,
        }
    )


MT = make(
    {
        "max_turns": 4,
        "rounds": [
            {
                "order": "any",
                "calls": [
                    {"name": "get_weather", "arguments": {"city": "Oslo"}, "result": {"t": 4}},
                    {"name": "get_weather", "arguments": {"city": "Bergen"}, "result": {"t": 9}},
                ],
            },
            {"calls": [{"name": "get_time", "result": "12:00 in Zürich"}]},
        ],
    }
)


def c(name: str) -> ToolCall:
    return ToolCall(name=name)


def texts(sc: Scenario, round_index: int, names: list[str]) -> list[str]:
    return [text for _, text in tool_results(sc, round_index, [c(n) for n in names])]


def test_results_follow_the_round_in_order() -> None:
    assert texts(MT, 0, ["get_weather", "get_weather"]) == ['{"t": 4}', '{"t": 9}']


def test_a_reused_tool_in_a_round_falls_back_to_any_round() -> None:
    # A third get_weather in round 0 gets the first scripted get_weather result.
    assert texts(MT, 0, ["get_weather"] * 3)[2] == '{"t": 4}'


def test_call_from_another_round_gets_its_result() -> None:
    assert texts(MT, 0, ["get_time"]) == ["12:00 in Zürich"]
    assert texts(MT, 1, ["get_weather"]) == ['{"t": 4}']


def test_round_past_the_end_still_answers() -> None:
    assert texts(MT, 7, ["get_time"]) == ["12:00 in Zürich"]


def test_unknown_and_unscripted_tools_get_json_errors() -> None:
    out = texts(MT, 0, ["get_news", "calculate"])
    assert [json.loads(t) for t in out] == [
        {"error": "unknown tool 'get_news'"},
        {"error": "no result scripted for 'calculate'"},
    ]


def test_results_pair_with_the_calls_given() -> None:
    calls = [ToolCall(name="get_weather", arguments={"city": "Bergen"}, id="x1")]
    assert tool_results(MT, 0, calls)[0][0] is calls[0]


def test_non_ascii_results_are_not_escaped() -> None:
    sc = make({"rounds": [{"calls": [{"name": "get_weather", "result": {"city": "Zürich"}}]}]})
    assert texts(sc, 0, ["get_weather"]) == ['{"city": "Zürich"}']


def test_deterministic() -> None:
    names = ["get_weather", "get_time", "nope", "get_weather"]
    assert texts(MT, 0, names) == texts(MT, 0, names)


CALLED = ParseResult(calls=[c("get_time")], status="strict", attempted=True)
ANSWERED = ParseResult(content="done")


@pytest.mark.parametrize(
    ("sc", "turn_index", "parsed", "go_on"),
    [
        (MT, 0, CALLED, True),
        (MT, 2, CALLED, True),
        (MT, 3, CALLED, False),  # max_turns=4 reached
        (MT, 0, ANSWERED, False),
        (MT, 0, ParseResult(status="failed", attempted=True), False),
        (make({"calls": [{"name": "get_time"}]}), 0, CALLED, False),
        (make({"no_call": True}), 0, CALLED, False),
    ],
)
def test_should_continue(sc: Scenario, turn_index: int, parsed: ParseResult, go_on: bool) -> None:
    assert should_continue(sc, turn_index, parsed) is go_on
