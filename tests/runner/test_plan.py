"""A run's plan decides, once per trial and before any is driven, how the trial reaches
its model (:func:`toolbench.runner.plan.replay_policy`); the provider kinds are asked to
be ready only for the trials planned live."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.providers.litellm_api import LiteLLMAPI
from toolbench.runner.options import RunOptions
from toolbench.runner.plan import Plan, replay_policy
from toolbench.runner.run import plan_run

SCENARIOS = "\n".join(
    f"""\
- id: s{i}
  tools:
    - name: get_weather
      parameters: {{type: object, properties: {{city: {{type: string}}}}, required: [city]}}
  messages:
    - {{role: user, content: "Weather in city {i}?"}}
  expect:
    calls:
      - name: get_weather
        arguments: {{city: Paris}}
"""
    for i in range(2)
)

pytestmark = pytest.mark.usefixtures("openai_key")


def test_the_policy_follows_the_record_mode_and_the_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "c.json"
    assert replay_policy("none", cassette) == "replay"
    assert replay_policy("new", cassette) == "live"
    assert replay_policy("all", cassette) == "live"
    cassette.write_text("{}", encoding="utf-8")
    assert replay_policy("none", cassette) == "replay"
    assert replay_policy("new", cassette) == "replay_then_live"
    assert replay_policy("all", cassette) == "live"


def _plan(tmp_path: Path, record: str, out: str) -> Plan:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SCENARIOS, encoding="utf-8")
    plan = plan_run(
        RunOptions(models=["openai/fake"], formats=["xml"], scenarios=[str(suite)],
                   record=record, out=tmp_path / out, cassette_dir=tmp_path / "cas")  # type: ignore[arg-type]
    )  # fmt: skip
    assert plan.lock is not None
    plan.lock.release()
    return plan


def test_each_trial_is_planned_with_its_policy(tmp_path: Path) -> None:
    first = _plan(tmp_path, "new", "a")
    assert [t.policy for t in first.trials] == ["live", "live"]
    # A trial whose cassette exists is replayed first under --record new.
    recorded = first.trials[0].spec.cassette
    recorded.parent.mkdir(parents=True)
    recorded.write_text("{}", encoding="utf-8")
    again = _plan(tmp_path, "new", "b")
    assert {t.spec.scenario.id: t.policy for t in again.trials} == {
        first.trials[0].spec.scenario.id: "replay_then_live",
        first.trials[1].spec.scenario.id: "live",
    }
    assert {t.policy for t in _plan(tmp_path, "none", "c").trials} == {"replay"}
    assert {t.policy for t in _plan(tmp_path, "all", "d").trials} == {"live"}


def test_a_replayed_plan_asks_no_kind_to_be_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[list[str]] = []
    monkeypatch.setattr(LiteLLMAPI, "ready", lambda _self, models: asked.append(models))
    _plan(tmp_path, "none", "r")
    assert asked == []
    planned = _plan(tmp_path, "new", "n")
    assert asked == [["openai/fake"]]
    for trial in planned.trials:  # every cassette there: each trial is replayed first
        trial.spec.cassette.parent.mkdir(parents=True, exist_ok=True)
        trial.spec.cassette.write_text("{}", encoding="utf-8")
    assert {t.policy for t in _plan(tmp_path, "new", "m").trials} == {"replay_then_live"}
    assert asked == [["openai/fake"]]
