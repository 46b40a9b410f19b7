"""Environment trials through ``toolbench run``: recorded, replayed to the same results,
and a scenario whose environment cannot open failing only its own trial."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.runner.conftest import run_fake, trials_by_id
from toolbench.cli.app import app
from toolbench.providers.fake import FakeServer

LOOP = """\
scenarios:
  - id: todo-loop
    tools:
      - name: add_task
        parameters: {type: object, properties: {title: {type: string}}, required: [title]}
    messages:
      - {role: user, content: "Add milk to my list."}
    environment: {name: todo, state: {tasks: []}}
    turns:
      - messages: [{role: user, content: "Mark it done."}]
        tools:
          - name: complete_task
            parameters: {type: object, properties: {id: {type: integer}}, required: [id]}
    expect:
      turns:
        - calls: [{name: add_task, arguments: {title: milk}}]
        - calls: [{name: complete_task, arguments: {id: 1}}]
  - id: bad-state
    tools:
      - name: add_task
        parameters: {type: object, properties: {title: {type: string}}}
    messages:
      - {role: user, content: "Add milk to my list."}
    environment: {name: todo, state: {tasks: 5}}
    expect:
      turns:
        - calls: [{name: add_task, arguments: {title: milk}}]
"""

NOWHERE = """\
  - id: nowhere
    tools:
      - name: add_task
        parameters: {type: object, properties: {title: {type: string}}}
    messages:
      - {role: user, content: "Add milk to my list."}
    environment: {name: no-such-environment}
    expect:
      turns:
        - calls: [{name: add_task, arguments: {title: milk}}]
"""

REPLIES = {
    '"done": true': "Done, milk is checked off.",
    '"id": 1': "Added milk.",
    "Add milk": '{"tool": "add_task", "arguments": {"title": "milk"}}',
    "Mark it done": '{"tool": "complete_task", "arguments": {"id": 1}}',
}


def test_environment_trials_record_replay_and_fail_alone(fake: FakeServer, tmp_path: Path) -> None:
    scen = tmp_path / "loop.yaml"
    scen.write_text(LOOP)
    assert run_fake(fake, tmp_path, scen, out="first") == 0
    first = trials_by_id(tmp_path / "first")
    loop = first["todo-loop"]
    assert loop.status == "ok" and loop.scores is not None
    assert loop.scores.get("loop_success") is True
    assert loop.scores.get("turn_verdicts") == "pass,pass"
    states = [t.environment.state for t in loop.turns if t.environment]
    assert states[-1] == {"todo": {"tasks": [{"title": "milk", "done": True}]}}
    assert (first["bad-state"].status, first["bad-state"].error_code) == (
        "harness_error", "environment.state_invalid")  # fmt: skip
    served = len(fake.received)
    assert run_fake(fake, tmp_path, scen, out="again") == 0
    assert len(fake.received) == served  # replayed from the cassettes
    again = trials_by_id(tmp_path / "again")
    assert again["todo-loop"].turns == loop.turns
    assert again["todo-loop"].scores == loop.scores


def test_validate_refuses_an_environment_nobody_registered(tmp_path: Path) -> None:
    scen = tmp_path / "loop.yaml"
    scen.write_text(LOOP + NOWHERE)
    done = CliRunner().invoke(app, ["scenarios", "validate", str(scen)])
    assert done.exit_code == 2
    assert "environment[0].name" in done.output and "no-such-environment" in done.output


def test_run_refuses_an_environment_nobody_registered_before_any_trial(
    fake: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scen = tmp_path / "loop.yaml"
    scen.write_text(LOOP + NOWHERE)
    assert run_fake(fake, tmp_path, scen, out="refused") == 2
    err = capsys.readouterr().err
    assert "no-such-environment" in err and "environment[0].name" in err
    assert not fake.received and not (tmp_path / "refused" / "results.jsonl").exists()
