"""Running calls against environments: results, tool errors, time bound, snapshots."""

from __future__ import annotations

import json

import pytest

from toolbench.environments import (
    EnvironmentFault,
    Session,
    StateInvalid,
    environment_names,
    get_environment,
)
from toolbench.environments.env_faults import (
    ENV_STATE_INVALID,
    TOOL_RAISED,
    TOOL_RESULT_NOT_JSON,
    TOOL_TIMEOUT,
    TOOL_UNKNOWN,
    UnknownEnvironmentError,
)
from toolbench.errors import UserError
from toolbench.formats.base import ToolCall


def call(name: str, **args: object) -> ToolCall:
    return ToolCall(name=name, arguments=dict(args))


def test_builtin_todo_is_registered_through_the_entry_point() -> None:
    assert "todo" in environment_names()
    assert get_environment("todo").name == "todo"


def test_unknown_environment_is_a_user_error_naming_the_choices() -> None:
    with pytest.raises(UnknownEnvironmentError) as err:
        get_environment("tood")
    assert isinstance(err.value, UserError)
    assert "todo" in str(err.value)


def test_tools_are_the_public_methods_and_calls_change_state_in_order() -> None:
    s = Session.open([("todo", {"tasks": [{"title": "milk", "done": False}]})])
    env = s.envs[0][1]
    assert env.tool_names() == {"add_task", "complete_task", "list_tasks"}
    ran = s.run([call("add_task", title="eggs"), call("complete_task", id=2)])
    assert [text for _, text, _ in ran] == ['{"id": 2}', '{"id": 2, "done": true}']
    assert all(run.error is None for _, _, run in ran)
    assert s.snapshot() == {
        "todo": {"tasks": [{"title": "milk", "done": False}, {"title": "eggs", "done": True}]}
    }


def test_initial_state_is_copied_not_shared() -> None:
    state = {"tasks": [{"title": "milk", "done": False}]}
    s = Session.open([("todo", state)])
    s.run([call("complete_task", id=1)])
    assert state == {"tasks": [{"title": "milk", "done": False}]}


@pytest.mark.parametrize(
    ("tool", "code"),
    [("explode", TOOL_RAISED), ("unjsonable", TOOL_RESULT_NOT_JSON), ("nan", TOOL_RESULT_NOT_JSON)],
)
def test_a_failing_tool_is_a_tool_error_fed_back(tool: str, code: str) -> None:
    s = Session.open([("faulty", {})])
    text, run = s.run_call(call(tool))
    assert run.error == code
    assert "error" in json.loads(text)
    # the environment goes on serving
    text, run = s.run_call(call("bump"))
    assert (text, run.error) == ("1", None)


def test_raised_message_is_fed_back() -> None:
    s = Session.open([("faulty", {})])
    text, _ = s.run_call(call("explode"))
    assert json.loads(text) == {"error": "RuntimeError: the tool blew up"}


def test_bad_arguments_are_the_tools_error() -> None:
    s = Session.open([("todo", {})])
    text, run = s.run_call(call("add_task", label="x"))
    assert run.error == TOOL_RAISED and "TypeError" in text


def test_unknown_tool_is_told_to_the_model() -> None:
    s = Session.open([("todo", {})])
    text, run = s.run_call(call("delete_everything"))
    assert run.error == TOOL_UNKNOWN
    assert json.loads(text) == {"error": "unknown tool 'delete_everything'"}


def test_a_tool_that_never_returns_is_bounded_and_the_environment_refuses_more() -> None:
    s = Session.open([("faulty", {})])
    s.timeout_s = 0.05
    text, run = s.run_call(call("hang"))
    assert run.error == TOOL_TIMEOUT and "0.05" in text
    _, run = s.run_call(call("bump"))
    assert run.error == TOOL_TIMEOUT  # never races the call still running


def test_state_that_does_not_fit_is_a_typed_fault() -> None:
    with pytest.raises(StateInvalid) as err:
        Session.open([("todo", {"tasks": "milk"})])
    assert err.value.code == ENV_STATE_INVALID
    with pytest.raises(StateInvalid) as err2:
        Session.open([("picky", {})])  # the environment raised KeyError itself
    assert err2.value.code == ENV_STATE_INVALID and "KeyError" in str(err2.value)


def test_snapshot_that_is_not_json_is_a_fault() -> None:
    s = Session.open([("faulty", {})])
    env = s.envs[0][1]
    env.count = {1}  # type: ignore[attr-defined]
    with pytest.raises(EnvironmentFault) as err:
        s.snapshot()
    assert err.value.code == "environment.snapshot_not_json"


def test_calls_go_to_the_environment_that_has_the_tool() -> None:
    s = Session.open([("todo", {}), ("faulty", {"count": 5})])
    s.run([call("bump", by=2), call("add_task", title="x")])
    assert s.snapshot() == {
        "todo": {"tasks": [{"title": "x", "done": False}]},
        "faulty": {"count": 7},
    }
