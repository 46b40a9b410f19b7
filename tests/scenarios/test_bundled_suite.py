"""The bundled suite: it loads, covers every category, and is internally consistent."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from toolbench.environments.mcp_tools import recorded_server_tools
from toolbench.scenarios.loader import bundled_dir, load_scenarios
from toolbench.scenarios.model import Scenario

ROOT = Path(__file__).resolve().parents[2]
with contextlib.chdir(ROOT):  # its toolbench.toml names the MCP servers (mcp.yaml)
    SUITE = recorded_server_tools(load_scenarios([bundled_dir()]), ROOT / "cassettes")
REQUIRED_TAGS = {
    "single": 3,
    "easy": 5,
    "multiple-tools": 3,
    "many-tools": 3,
    "parallel": 2,
    "nested": 2,
    "types": 5,
    "optional": 3,
    "strings": 4,
    "irrelevance": 3,
    "multi-turn": 3,
}


def test_suite_size_and_tags() -> None:
    assert len(SUITE) >= 120
    counts = Counter(tag for sc in SUITE for tag in sc.tags)
    short = {t: (counts[t], n) for t, n in REQUIRED_TAGS.items() if counts[t] < n}
    assert not short, f"tags below their minimum (have, want): {short}"
    assert all(sc.tags for sc in SUITE)


def test_kinds_and_shapes_are_covered() -> None:
    kinds = Counter(sc.expect.kind for sc in SUITE)
    assert kinds["no_call"] >= 3 and kinds["multi_turn"] >= 3
    rounds = {len(sc.expect.rounds) for sc in SUITE if sc.expect.rounds}
    assert {2, 3} <= rounds
    assert any(sc.expect.order == "any" and len(sc.expect.calls or []) >= 3 for sc in SUITE)
    assert any(len(sc.tools) >= 15 for sc in SUITE)


def _matchers(sc: Scenario) -> list[Any]:
    return [m for r in sc.expect.expected_rounds() for c in r.calls for m in c.arguments.values()]


def test_every_matcher_kind_is_used() -> None:
    ms = [m for sc in SUITE for m in _matchers(sc)]
    assert any(m.has_exact for m in ms)
    assert any(m.any_of is not None and "" in m.any_of for m in ms)
    assert any(m.regex is not None for m in ms)
    assert any(m.type is not None for m in ms)
    assert any(m.approx is not None for m in ms)
    assert any(m.optional for m in ms)
    assert any(m.absent for m in ms)


def test_hard_strings_are_present() -> None:
    prompts = " ".join(m.content for sc in SUITE for m in sc.messages)
    for needle in ('"hi" {x}', "Zürich", "東京", "\\"):
        assert needle in prompts


@pytest.mark.parametrize("sc", SUITE, ids=lambda sc: sc.id)
def test_expected_values_fit_the_tool_schema(sc: Scenario) -> None:
    """Every exact / any_of value (and approx target) validates against its parameter."""
    for rnd in sc.expect.expected_rounds():
        for call in rnd.calls:
            tool = sc.tool(call.name)
            assert tool is not None
            props = tool.parameters.get("properties", {})
            for name, m in call.arguments.items():
                assert name in props, f"{call.name}: '{name}' is not a parameter"
                values = [m.exact] if m.has_exact else [v for v in m.any_of or [] if v != ""]
                if m.approx is not None:
                    values = [m.approx]
                for v in values:
                    errors = list(Draft202012Validator(props[name]).iter_errors(v))
                    assert not errors, f"{call.name}.{name}={v!r}: {errors[0].message}"


@pytest.mark.parametrize(
    "sc",
    # an environment's results are its own (an MCP server's, mcp.yaml), not the script's
    [s for s in SUITE if s.expect.kind == "multi_turn" and not s.environment],
    ids=lambda sc: sc.id,
)
def test_final_answer_facts_come_from_the_results(sc: Scenario) -> None:
    check = sc.expect.final_answer
    assert check is not None and check.contains
    results = " ".join(c.result_text() for r in sc.expect.rounds or [] for c in r.calls)
    prompt = " ".join(m.content for m in sc.messages)
    for fact in check.contains:
        assert fact in results, f"{fact!r} is not in any scripted result"
        assert fact not in prompt, f"{fact!r} is given away by the prompt"
    for r in sc.expect.rounds or []:
        for c in r.calls:
            assert c.result is not None
            json.loads(c.result_text()) if not isinstance(c.result, str) else None
