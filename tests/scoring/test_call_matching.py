"""Matching one reply's calls against an expected round: order, pairing, error codes."""

from __future__ import annotations

from typing import Any

import pytest
from scoring_helpers import call

from toolbench import codes
from toolbench.formats.base import ToolCall
from toolbench.scenarios.model import Round
from toolbench.scoring.call_match import match_round, max_matching


def rnd(order: str, *calls: dict[str, Any]) -> Round:
    return Round.model_validate({"order": order, "calls": list(calls)})


W_PARIS = {"name": "get_weather", "arguments": {"city": "Paris"}}
W_OSLO = {"name": "get_weather", "arguments": {"city": "Oslo"}}
T_UTC = {"name": "get_time", "arguments": {"timezone": "UTC"}}
W_ANY = {"name": "get_weather", "arguments": {"city": {"type": "string"}}}

CASES: list[tuple[str, Round, list[ToolCall], list[str]]] = [
    ("single-ok", rnd("sequence", W_PARIS), [call("get_weather", city="Paris")], []),
    (
        "wrong-tool",
        rnd("sequence", W_PARIS),
        [call("get_time", timezone="UTC")],
        [codes.CALL_WRONG_TOOL],
    ),
    ("missing", rnd("sequence", W_PARIS), [], [codes.CALL_MISSING]),
    (
        "extra",
        rnd("sequence", W_PARIS),
        [call("get_weather", city="Paris"), call("get_time", timezone="UTC")],
        [codes.CALL_EXTRA],
    ),
    (
        "arg-mismatch",
        rnd("sequence", W_PARIS),
        [call("get_weather", city="Lyon")],
        [codes.ARGS_MISMATCH],
    ),
    ("arg-missing", rnd("sequence", W_PARIS), [call("get_weather")], [codes.ARGS_MISSING_REQUIRED]),
    (
        "arg-unexpected",
        rnd("sequence", W_PARIS),
        [call("get_weather", city="Paris", unit="celsius")],
        [codes.ARGS_UNEXPECTED],
    ),
    (
        "extra-args-allowed",
        rnd("sequence", {**W_PARIS, "allow_extra_args": True}),
        [call("get_weather", city="Paris", unit="celsius")],
        [],
    ),
    (
        "sequence-ok",
        rnd("sequence", W_PARIS, T_UTC),
        [call("get_weather", city="Paris"), call("get_time", timezone="UTC")],
        [],
    ),
    (
        "sequence-wrong-order",
        rnd("sequence", W_PARIS, T_UTC),
        [call("get_time", timezone="UTC"), call("get_weather", city="Paris")],
        [codes.CALL_WRONG_ORDER],
    ),
    (
        "any-order-ok",
        rnd("any", W_PARIS, T_UTC),
        [call("get_time", timezone="UTC"), call("get_weather", city="Paris")],
        [],
    ),
    (
        "any-same-tool-swapped",
        rnd("any", W_PARIS, W_OSLO),
        [call("get_weather", city="Oslo"), call("get_weather", city="Paris")],
        [],
    ),
    (
        # Greedy would give the loose matcher the first call (Oslo) and leave Paris's
        # strict matcher with nothing; a bipartite matching pairs them correctly.
        "any-needs-matching-not-greedy",
        rnd("any", W_ANY, W_OSLO),
        [call("get_weather", city="Oslo"), call("get_weather", city="Paris")],
        [],
    ),
    (
        "any-one-wrong-arg",
        rnd("any", W_PARIS, W_OSLO),
        [call("get_weather", city="Oslo"), call("get_weather", city="Rome")],
        [codes.ARGS_MISMATCH],
    ),
    (
        "any-missing-one",
        rnd("any", W_PARIS, W_OSLO, T_UTC),
        [call("get_time", timezone="UTC"), call("get_weather", city="Oslo")],
        [codes.CALL_MISSING],
    ),
    (
        "sequence-skipped-first",
        rnd("sequence", W_PARIS, T_UTC),
        [call("get_time", timezone="UTC")],
        [codes.CALL_MISSING],
    ),
]


@pytest.mark.parametrize(
    ("expected", "calls", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_match_round(expected: Round, calls: list[ToolCall], want: list[str]) -> None:
    assert [code for code, _ in match_round(expected, calls)] == want


def test_reasons_name_the_call() -> None:
    problems = match_round(
        rnd("any", W_PARIS, W_OSLO),
        [call("get_weather", city="Oslo"), call("get_weather", city="Rome")],
    )
    assert problems == [
        (codes.ARGS_MISMATCH, "call 2: argument 'city': expected 'Paris', got 'Rome'")
    ]


def test_wrong_order_reason_lists_both_orders() -> None:
    problems = match_round(
        rnd("sequence", W_PARIS, T_UTC),
        [call("get_time", timezone="UTC"), call("get_weather", city="Paris")],
    )
    assert problems == [
        (
            codes.CALL_WRONG_ORDER,
            "calls made in the order get_time, get_weather; expected get_weather, get_time",
        )
    ]


def test_max_matching_finds_augmenting_path() -> None:
    # left 0 can take right 0 or 1; left 1 only right 0: the matching must be complete.
    ok = [[True, True], [True, False]]
    assert max_matching(ok, 2) == {0: 1, 1: 0}
