"""The loop scorers on todo loops: state and results against the ground truth, per turn."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolbench.engine import Conversation, TurnReply, effective_settings
from toolbench.formats import ModelReply, get_format
from toolbench.outcome import trial_outcome
from toolbench.results import TrialScores
from toolbench.scenarios.model import Scenario
from toolbench.scoring import score_trial
from toolbench.scoring.loop import GroundTruthError, ground_truth

FMT = get_format("prompt-json")
ADD = {
    "name": "add_task",
    "parameters": {"type": "object", "properties": {"title": {"type": "string"}}},
}
DONE = {
    "name": "complete_task",
    "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}},
}
LIST = {"name": "list_tasks", "parameters": {"type": "object", "properties": {}}}


def scenario(ask_turn: bool = False, truth: list[list[dict[str, Any]]] | None = None) -> Scenario:
    truth = truth or [
        [{"name": "add_task", "arguments": {"title": "milk"}}],
        [{"name": "complete_task", "arguments": {"id": 1}}],
    ]
    turns: list[dict[str, Any]] = [{"calls": c} for c in truth]
    later = [{"messages": [{"role": "user", "content": "Mark it done."}], "tools": [DONE]}]
    if ask_turn:
        turns.insert(1, {"calls": [], "ask": True})
        later.insert(0, {"messages": [{"role": "user", "content": "Complete the other one."}]})
    return Scenario.model_validate({
        "id": "todo-loop", "tools": [ADD, LIST],
        "messages": [{"role": "user", "content": "Add milk."}],
        "environment": {"name": "todo"}, "turns": later,
        "expect": {"max_turns": 3, "turns": turns},
    })  # fmt: skip


def j(*calls: tuple[str, dict[str, Any]]) -> str:
    return json.dumps([{"tool": n, "arguments": a} for n, a in calls])


def run(sc: Scenario, replies: list[str]) -> TrialScores:
    conv = Conversation(FMT, sc, effective_settings(sc))
    it = iter(replies)
    while not conv.done:
        conv.feed(TurnReply(reply=ModelReply(text=next(it, "Done.")), request={}))
    return score_trial(sc, FMT, conv.turns, conv.settings)


def test_the_ground_truth_trajectory_passes_every_turn() -> None:
    s = run(scenario(), [j(("add_task", {"title": "milk"})), "ok",
                         j(("complete_task", {"id": 1})), "ok"])  # fmt: skip
    assert s.get("loop_success") is True and s.get("call_accuracy") is True
    assert s.get("turn_verdicts") == "pass,pass"
    assert (s.get("turns_passed"), s.get("turns_checked"), s.get("first_failing_turn")) == (
        2,
        2,
        None,
    )
    assert (s.get("steps_taken"), s.get("steps_needed")) == (2, 2)
    assert s.get("state_match") is True and s.get("exec_match") is True
    assert trial_outcome("ok", s.get) == "pass" and s.errors == []


def test_a_wrong_argument_fails_on_state_and_results() -> None:
    s = run(scenario(), [j(("add_task", {"title": "eggs"})), "ok",
                         j(("complete_task", {"id": 1})), "ok"])  # fmt: skip
    assert s.get("loop_success") is False and s.get("call_accuracy") is False
    assert s.get("turn_verdicts") == "fail,fail" and s.get("first_failing_turn") == 0
    assert "loop.state_mismatch" in s.errors and s.get("state_match") is False
    assert trial_outcome("ok", s.get) == "fail"


def test_an_extra_read_only_call_passes_and_a_missing_turn_fails() -> None:
    s = run(scenario(), [j(("list_tasks", {}), ("add_task", {"title": "milk"})), "ok",
                         j(("complete_task", {"id": 1})), "ok"])  # fmt: skip
    assert s.get("loop_success") is True
    s = run(scenario(), [j(("add_task", {"title": "milk"})), "ok", "I won't."])
    assert s.get("turn_verdicts") == "pass,fail" and "loop.empty_turn" in s.errors
    # a turn left empty leaves the state and the results the ground truth's do not
    assert s.get("state_match") is False and s.get("exec_match") is False


def test_a_result_produced_in_an_earlier_turn_counts_but_state_is_per_turn() -> None:
    # the id-1 completion made early: turn 0's state then differs from the ground truth's
    s = run(scenario(), [j(("add_task", {"title": "milk"})), "ok",
                         j(("list_tasks", {})), "ok"])  # fmt: skip
    assert s.get("turn_verdicts") == "pass,fail"
    assert "loop.result_missing" in s.errors or "loop.state_mismatch" in s.errors


def test_tool_errors_and_recovery_are_counted() -> None:
    s = run(scenario(), [j(("add_task", {"name": "milk"})), j(("add_task", {"title": "milk"})),
                         "ok", j(("complete_task", {"id": 1})), "ok"])  # fmt: skip
    assert (s.get("tool_errors"), s.get("tool_errors_recovered")) == (1, 1)
    assert s.get("loop_success") is True
    s = run(
        scenario(),
        [j(("add_task", {"title": "milk"})), "ok", j(("complete_task", {"id": 1})), "ok"],
    )
    assert s.get("tool_errors") == 0 and s.get("tool_errors_recovered") is None


def test_asking_when_something_is_missing() -> None:
    sc = scenario(ask_turn=True)
    asked = run(sc, [j(("add_task", {"title": "milk"})), "ok", "Which one?",
                     j(("complete_task", {"id": 1})), "ok"])  # fmt: skip
    assert asked.get("asked_when_missing") is True and asked.get("loop_success") is True
    assert asked.get("turn_verdicts") == "pass,skip,pass"
    acted = run(sc, [j(("add_task", {"title": "milk"})), "ok", j(("list_tasks", {})), "ok",
                     j(("complete_task", {"id": 1})), "ok"])  # fmt: skip
    assert acted.get("asked_when_missing") is False


def test_the_step_limit_fails_the_turn() -> None:
    many = [j(("list_tasks", {}))] * 4  # max_turns 3: three steps, a fourth still calling
    s = run(scenario(), [j(("add_task", {"title": "milk"})), "ok", *many])
    assert s.get("turn_verdicts") == "pass,fail" and "loop.step_limit" in s.errors
    # the turn is judged on its state too: the task never completed
    assert s.get("state_match") is False and "loop.state_mismatch" in s.errors


def test_scripted_scenarios_get_no_loop_values() -> None:
    sc = Scenario.model_validate({"id": "s", "tools": [ADD],
                                  "messages": [{"role": "user", "content": "x"}],
                                  "expect": {"calls": [{"name": "add_task"}]}})  # fmt: skip
    conv = Conversation(FMT, sc, effective_settings(sc))
    conv.feed(TurnReply(reply=ModelReply(text=j(("add_task", {}))), request={}))
    s = score_trial(sc, FMT, conv.turns, conv.settings)
    assert "loop_success" not in s.values and s.get("call_accuracy") is True


def test_a_ground_truth_that_does_not_run_is_refused() -> None:
    sc = scenario(truth=[[{"name": "complete_task", "arguments": {"id": 9}}], []])
    with pytest.raises(GroundTruthError, match="does not run"):
        ground_truth(sc)
