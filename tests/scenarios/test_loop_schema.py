"""The loop and environment parts of the scenario schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from toolbench.environments import scenario_problems
from toolbench.scenarios import load_file
from toolbench.scenarios.model import Scenario

TOOL = {"name": "add_task", "parameters": {"type": "object", "properties": {}}}
LATER = {"name": "complete_task", "parameters": {"type": "object", "properties": {}}}


def loop(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "loop",
        "tools": [TOOL],
        "messages": [{"role": "user", "content": "add milk"}],
        "environment": {"name": "todo", "state": {"tasks": []}},
        "turns": [{"messages": [{"role": "user", "content": "done"}], "tools": [LATER]}],
        "expect": {
            "turns": [
                {"calls": [{"name": "add_task", "arguments": {"title": "milk"}}]},
                {"calls": [{"name": "complete_task", "arguments": {"id": 1}}]},
            ]
        },
    }
    data.update(over)
    return data


def test_a_loop_scenario_validates_with_one_environment_as_a_mapping() -> None:
    sc = Scenario.model_validate(loop())
    assert sc.expect.kind == "loop"
    assert [e.name for e in sc.environment] == ["todo"]
    assert [t.name for t in sc.tools_at(0)] == ["add_task"]
    assert [t.name for t in sc.tools_at(1)] == ["add_task", "complete_task"]
    assert sc.expect.expected_rounds() == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"environment": []}, "needs an 'environment'"),
        ({"turns": []}, "needs 1 entries"),
        ({"turns": [{"messages": []}]}, "at least one message"),
        ({"turns": [{"messages": [{"role": "assistant", "content": "x"}]}]}, "the user's"),
        ({"expect": {"turns": [{"calls": [{"name": "nope"}]}, {}]}}, "'nope' is not among"),
        ({"environment": {"name": "todo", "state": {}, "extra": 1}}, "Extra inputs"),
    ],
)
def test_bad_loop_scenarios_are_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Scenario.model_validate(loop(**change))


def test_later_turns_need_expect_turns() -> None:
    data = loop(expect={"calls": [{"name": "add_task"}]})
    with pytest.raises(ValidationError, match=r"needs 'expect\.turns'"):
        Scenario.model_validate(data)


def test_a_held_out_tool_may_not_repeat_an_offered_one() -> None:
    data = loop(turns=[{"messages": [{"role": "user", "content": "x"}], "tools": [TOOL]}])
    with pytest.raises(ValidationError, match="unique"):
        Scenario.model_validate(data)


def test_scripted_scenarios_may_name_an_environment_too() -> None:
    sc = Scenario.model_validate(
        {
            "id": "beside",
            "tools": [TOOL],
            "messages": [{"role": "user", "content": "x"}],
            "environment": [{"name": "todo"}],
            "expect": {"calls": [{"name": "add_task"}]},
        }
    )
    assert sc.expect.kind == "calls" and sc.environment[0].state == {}


def test_loop_file_loads_and_unknown_environments_are_named(tmp_path: Path) -> None:
    f = tmp_path / "loop.yaml"
    f.write_text(yaml.safe_dump(loop(environment={"name": "tood"})))
    [sc] = load_file(f)
    problems = scenario_problems([sc])
    assert len(problems) == 1
    assert "environment[0].name" in problems[0] and "todo" in problems[0]
    assert scenario_problems(load_file(_write(tmp_path, loop()))) == []


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    f = tmp_path / "ok.yaml"
    f.write_text(yaml.safe_dump(data))
    return f
