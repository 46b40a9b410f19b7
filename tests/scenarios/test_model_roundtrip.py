"""A scenario dumped to JSON reads back equal (runs and rescoring may store scenarios)."""

from __future__ import annotations

import pytest

from toolbench.scenarios.loader import bundled_dir, load_scenarios
from toolbench.scenarios.model import ArgMatcher, Scenario


@pytest.mark.parametrize("sc", load_scenarios([bundled_dir()]), ids=lambda sc: sc.id)
def test_bundled_scenario_round_trips(sc: Scenario) -> None:
    back = Scenario.model_validate_json(sc.model_dump_json())
    back.source = sc.source  # not part of the schema
    assert back == sc


@pytest.mark.parametrize(
    "raw",
    [None, "x", 0, {"exact": [1]}, {"regex": "a+"}, {"absent": True}, {"any_of": ["a", ""]}],
)
def test_matcher_round_trips(raw: object) -> None:
    m = ArgMatcher.model_validate(raw)
    dumped = m.model_dump()
    assert ("exact" in dumped) is m.has_exact
    assert ArgMatcher.model_validate(dumped) == m
