"""Which trials score quickly enough for the event loop (:mod:`toolbench.scoring.quick`):
any pattern of the scenario's author, a plugin's scorer or a long reply keeps the
worker thread."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.scoring.scoring_helpers import TIME, WEATHER, scenario, turn

from toolbench.formats.base import ModelReply
from toolbench.scoring import scorer
from toolbench.scoring.quick import QUICK_REPLY_CHARS, replies_are_short, scenario_scores_quickly
from toolbench.scoring.scorer import Scored, Scorer, register_scorer

CITY = {"name": "get_weather", "arguments": {"city": "Paris"}}
PATTERNED_TOOL = {
    "name": "get_code",
    "parameters": {"type": "object", "properties": {"code": {"type": "string",
                                                               "pattern": "^[A-Z]{3}$"}}},
}  # fmt: skip
KEYED_TOOL = {
    "name": "get_code",
    "parameters": {"type": "object", "patternProperties": {"^x-": {"type": "string"}}},
}


@pytest.mark.parametrize(
    ("expect", "tools", "quick"),
    [
        ({"calls": [CITY]}, None, True),
        ({"no_call": True, "final_answer": {"contains": ["sun"]}}, None, True),
        ({"calls": [{"name": "get_weather", "arguments": {"city": {"regex": "Par.*"}}}]},
         None, False),
        ({"no_call": True, "final_answer": {"regex": "sun+"}}, None, False),
        ({"calls": [CITY]}, [WEATHER, TIME, PATTERNED_TOOL], False),
        ({"calls": [CITY]}, [WEATHER, KEYED_TOOL], False),
    ],
    ids=["plain call", "answer contains", "argument regex", "answer regex",
         "schema pattern", "schema patternProperties"],
)  # fmt: skip
def test_an_authors_pattern_keeps_the_thread(
    expect: dict[str, Any], tools: list[dict[str, Any]] | None, quick: bool
) -> None:
    assert scenario_scores_quickly(scenario(expect, tools)) is quick


@pytest.fixture
def registry() -> Iterator[None]:
    scorer.SCORERS.load()
    saved = dict(scorer._REGISTRY)
    yield
    scorer._REGISTRY.clear()
    scorer._REGISTRY.update(saved)


@pytest.mark.usefixtures("registry")
def test_a_scorer_that_is_not_toolbenchs_keeps_the_thread() -> None:
    plain = scenario({"calls": [CITY]})
    assert scenario_scores_quickly(plain)
    register_scorer(Scorer("mine", {"v": "number"}, lambda inp: Scored()))
    assert not scenario_scores_quickly(plain)


def _replied(text: str = "", arguments: str | None = None) -> Any:
    t = turn(text=text)
    calls = (
        []
        if arguments is None
        else [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}]
    )
    return t.model_copy(update={"reply": ModelReply(text=text, tool_calls=calls)})


@pytest.mark.parametrize(
    ("turns", "short"),
    [
        ([], True),
        ([_replied("x" * QUICK_REPLY_CHARS)], True),
        ([_replied("x" * (QUICK_REPLY_CHARS + 1))], False),
        ([_replied("x" * (QUICK_REPLY_CHARS // 2)), _replied("x" * (QUICK_REPLY_CHARS // 2 + 1))],
         False),
        ([_replied("", "a" * QUICK_REPLY_CHARS)], True),
        ([_replied("x", "a" * QUICK_REPLY_CHARS)], False),
    ],
    ids=["none", "at the bound", "one over", "over in two turns", "arguments at the bound",
         "arguments and text over"],
)  # fmt: skip
def test_replies_are_short_counts_text_and_arguments_over_all_turns(
    turns: list[Any], short: bool
) -> None:
    assert replies_are_short(turns) is short


def test_a_scenario_json_cannot_hold_keeps_the_thread() -> None:
    built = scenario({"calls": [CITY]})
    assert built.expect.calls is not None
    built.expect.calls[0].arguments["city"].exact = object()  # built in code, not JSON
    assert scenario_scores_quickly(built) is False
