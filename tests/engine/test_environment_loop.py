"""The engine with environments: results by running the calls, user turns, held-out tools."""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

import pytest

from tests.environments.toy import FAULTY, RELEASE
from toolbench.engine import Conversation, TurnReply, converse, effective_settings
from toolbench.environments import (
    Environment,
    EnvironmentFault,
    EnvironmentKind,
    execute,
    register_environment,
    unregister_environment,
)
from toolbench.formats import ModelReply, RenderedRequest, get_format
from toolbench.results import TrialResult
from toolbench.scenarios.model import Scenario

FMT = get_format("prompt-json")
ADD = {
    "name": "add_task",
    "parameters": {"type": "object", "properties": {"title": {"type": "string"}}},
}
DONE = {
    "name": "complete_task",
    "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}},
}


def j(tool: str, **args: Any) -> str:
    return json.dumps({"tool": tool, "arguments": args})


def loop_scenario(max_turns: int = 4) -> Scenario:
    return Scenario.model_validate(
        {
            "id": "todo-loop",
            "tools": [ADD],
            "messages": [{"role": "user", "content": "Add milk and eggs."}],
            "environment": {"name": "todo", "state": {"tasks": []}},
            "turns": [
                {"messages": [{"role": "user", "content": "Mark milk done."}], "tools": [DONE]}
            ],
            "expect": {
                "max_turns": max_turns,
                "turns": [
                    {"calls": [{"name": "add_task", "arguments": {"title": "milk"}},
                               {"name": "add_task", "arguments": {"title": "eggs"}}]},
                    {"calls": [{"name": "complete_task", "arguments": {"id": 1}}]},
                ],
            },
        }
    )  # fmt: skip


def play(sc: Scenario, replies: list[str]) -> Conversation:
    conv = Conversation(FMT, sc, effective_settings(sc))
    for text in replies:
        if conv.done:
            break
        conv.feed(TurnReply(reply=ModelReply(text=text), request=conv.request().model_dump()))
    return conv


def test_a_loop_runs_calls_in_order_across_user_turns() -> None:
    conv = play(
        loop_scenario(),
        [j("add_task", title="milk"), j("add_task", title="eggs"), "Added both.",
         j("complete_task", id=1), "Done."],
    )  # fmt: skip
    assert conv.done
    envs = [t.environment for t in conv.turns]
    assert all(e is not None for e in envs)
    assert [e.user_turn for e in envs if e] == [0, 0, 0, 1, 1]
    assert [len(e.runs) for e in envs if e] == [1, 1, 0, 1, 0]
    # the state is kept on the last exchange of each user turn only
    assert [e.state is not None for e in envs if e] == [False, False, True, False, True]
    last = envs[-1]
    assert last is not None
    assert last.state == {
        "todo": {"tasks": [{"title": "milk", "done": True}, {"title": "eggs", "done": False}]}
    }
    # what the model was told is what the environment returned
    assert [text for _, text in conv.fed] == ['{"id": 1}', '{"id": 2}', '{"id": 1, "done": true}']


def test_held_out_tools_join_at_their_turn_and_the_history_is_kept() -> None:
    sc = loop_scenario()
    conv = play(sc, [j("add_task", title="milk"), "Added."])
    req = conv.request()
    first = conv.turns[0].request
    assert "complete_task" not in json.dumps(first)
    assert "complete_task" in json.dumps(req.messages[0])  # prompt-json: the system prompt
    texts = [m["content"] for m in req.messages]
    assert texts[-1] == "Mark milk done." and "Added." in texts
    assert any("milk" in str(t) for t in texts[1:-1])


def test_a_call_to_a_held_out_tool_is_an_error_before_its_turn() -> None:
    conv = play(loop_scenario(), [j("complete_task", id=1), "Sorry."])
    env = conv.turns[0].environment
    assert env is not None and env.runs[0].error == "tool.unknown"


def test_step_limit_ends_a_user_turn_and_the_loop_goes_on() -> None:
    replies = [j("add_task", title="a"), j("add_task", title="b"), j("add_task", title="c"),
               j("complete_task", id=1), "ok"]  # fmt: skip
    conv = play(loop_scenario(max_turns=2), replies)
    # two steps that call, then a third that still calls is run and ends the user turn
    assert [t.environment.user_turn for t in conv.turns if t.environment] == [0, 0, 0, 1, 1]
    third = conv.turns[2].environment
    assert third is not None and len(third.runs) == 1
    assert conv.done


def test_turn_records_round_trip_through_the_results_model() -> None:
    conv = play(loop_scenario(), [j("add_task", title="milk"), "Added.", "Nothing to do."])
    line = TrialResult(run_id="r", toolbench_version="0", model="m", format="prompt-json",
                       scenario_id="todo-loop", turns=conv.turns).model_dump_json()  # fmt: skip
    back = TrialResult.model_validate_json(line)
    assert back.turns == conv.turns
    assert '"environment"' in line


def test_a_scripted_scenario_records_no_environment() -> None:
    sc = Scenario.model_validate(
        {"id": "s", "tools": [ADD], "messages": [{"role": "user", "content": "x"}],
         "expect": {"calls": [{"name": "add_task"}]}}
    )  # fmt: skip
    conv = play(sc, [j("add_task", title="milk")])
    assert conv.turns[0].environment is None
    assert "environment" not in conv.turns[0].model_dump_json()


def test_environment_beside_scripted_results_in_rounds() -> None:
    other = {"name": "weather", "parameters": {"type": "object", "properties": {}}}
    sc = Scenario.model_validate(
        {
            "id": "beside",
            "tools": [ADD, other],
            "messages": [{"role": "user", "content": "x"}],
            "environment": {"name": "todo"},
            "expect": {"max_turns": 3, "rounds": [{"calls": [
                {"name": "weather", "result": {"sunny": True}}, {"name": "add_task"}]}]},
        }
    )  # fmt: skip
    calls = json.dumps([{"tool": "weather", "arguments": {}},
                        {"tool": "add_task", "arguments": {"title": "umbrella"}}])  # fmt: skip
    conv = play(sc, [calls, "done"])
    assert [t for _, t in conv.fed] == ['{"sunny": true}', '{"id": 1}']
    env = conv.turns[0].environment
    assert env is not None and [r.name for r in env.runs] == ["add_task"]
    assert conv.turns[-1].environment is not None


def test_a_tool_error_goes_back_to_the_model_and_the_trial_goes_on() -> None:
    register_environment(FAULTY, replace=True)
    try:
        tool = {"name": "explode", "parameters": {"type": "object", "properties": {}}}
        sc = Scenario.model_validate(
            {"id": "f", "tools": [tool], "messages": [{"role": "user", "content": "x"}],
             "environment": {"name": "faulty"},
             "expect": {"turns": [{"calls": [{"name": "explode"}]}]}}
        )  # fmt: skip
        conv = play(sc, [j("explode"), "It failed."])
        assert conv.done and conv.fed[0][1] == '{"error": "RuntimeError: the tool blew up"}'
        env = conv.turns[0].environment
        assert env is not None and env.runs[0].error == "tool.raised"
    finally:
        RELEASE.set()
        unregister_environment("faulty")


@pytest.mark.parametrize(
    ("env", "code"),
    [({"name": "nowhere"}, "environment.unknown"),
     ({"name": "todo", "state": {"tasks": 3}}, "environment.state_invalid")],
)  # fmt: skip
def test_an_environment_that_cannot_open_is_a_typed_fault(env: dict[str, Any], code: str) -> None:
    sc = loop_scenario().model_dump()
    sc["environment"] = [env]
    with pytest.raises(EnvironmentFault) as err:
        Conversation(FMT, Scenario.model_validate(sc), effective_settings(loop_scenario()))
    assert err.value.code == code


def test_converse_drives_a_loop() -> None:
    replies = iter([j("add_task", title="milk"), "ok", j("complete_task", id=1), "ok"])

    async def complete(req: RenderedRequest, turn: int) -> TurnReply:
        return TurnReply(reply=ModelReply(text=next(replies)), request=req.model_dump())

    sc = loop_scenario()
    turns = asyncio.run(converse(FMT, sc, effective_settings(sc), complete))
    assert len(turns) == 4


def test_a_hung_tool_does_not_hold_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    RELEASE.clear()
    register_environment(FAULTY, replace=True)
    try:
        tool = {"name": "hang", "parameters": {"type": "object", "properties": {}}}
        sc = Scenario.model_validate(
            {"id": "h", "tools": [tool], "messages": [{"role": "user", "content": "x"}],
             "environment": {"name": "faulty"},
             "expect": {"turns": [{"calls": [{"name": "hang"}]}]}}
        )  # fmt: skip
        replies = iter([j("hang"), "gave up"])
        ticks: list[int] = []

        async def complete(req: RenderedRequest, turn: int) -> TurnReply:
            return TurnReply(reply=ModelReply(text=next(replies)), request={})

        async def ticker() -> None:
            for i in range(20):
                ticks.append(i)
                await asyncio.sleep(0.01)

        async def both() -> list[Any]:
            return await asyncio.gather(
                converse(FMT, sc, effective_settings(sc), complete), ticker()
            )

        monkeypatch.setattr(execute, "TOOL_TIMEOUT_S", 0.3)
        turns, _ = asyncio.run(both())
        assert len(ticks) == 20  # the loop kept running while the tool hung
        env = turns[0].environment
        assert env is not None and env.runs[0].error == "tool.timeout"
    finally:
        RELEASE.set()
        unregister_environment("faulty")


class _Closing(Environment):
    closed: ClassVar[list[str]] = []

    def load(self, state: dict[str, Any]) -> None:
        self.n = 0

    def snapshot(self) -> dict[str, Any]:
        return {"n": self.n}

    def close(self) -> None:
        _Closing.closed.append("closed")

    def tick(self) -> int:
        self.n += 1
        return self.n


def test_converse_closes_the_environments_however_the_trial_ends() -> None:
    register_environment(EnvironmentKind("closing", _Closing), replace=True)
    try:
        tool = {"name": "tick", "parameters": {"type": "object", "properties": {}}}
        sc = Scenario.model_validate(
            {"id": "c", "tools": [tool], "messages": [{"role": "user", "content": "x"}],
             "environment": {"name": "closing"},
             "expect": {"turns": [{"calls": [{"name": "tick"}]}]}}
        )  # fmt: skip

        async def fine(req: RenderedRequest, turn: int) -> TurnReply:
            return TurnReply(reply=ModelReply(text=j("tick") if turn == 0 else "ok"), request={})

        async def broken(req: RenderedRequest, turn: int) -> TurnReply:
            raise RuntimeError("the provider went away")

        _Closing.closed.clear()
        asyncio.run(converse(FMT, sc, effective_settings(sc), fine))
        assert _Closing.closed == ["closed"]
        with pytest.raises(RuntimeError):
            asyncio.run(converse(FMT, sc, effective_settings(sc), broken))
        assert _Closing.closed == ["closed", "closed"]
    finally:
        unregister_environment("closing")
