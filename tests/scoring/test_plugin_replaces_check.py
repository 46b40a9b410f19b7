"""A plugin replaces a built-in check with no other edit: the one-file plugin
:mod:`tests.scoring.strict_calls`, found through the ``toolbench.scorers`` entry-point
group, takes the place of the built-in ``calls`` scorer. The same recorded replies then
store its ``call_accuracy`` in ``results.jsonl``, and the HTML report, ``gate``,
pass/fail and ``rescore`` read that value."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from toolbench.cli.app import run_cli
from toolbench.providers.fake import FakeServer, by_last_user
from toolbench.scoring import scorer

SCENARIOS = """\
scenarios:
  - id: weather
    tools:
      - name: get_weather
        description: Get the weather for a city.
        parameters: {type: object, properties: {city: {type: string}}, required: [city]}
    messages:
      - {role: user, content: "Weather in Paris?"}
    expect:
      calls:
        - name: get_weather
          arguments: {city: Paris}
  - id: time
    tools:
      - name: get_time
        description: The time in a timezone.
        parameters: {type: object, properties: {tz: {type: string}}, required: [tz]}
    messages:
      - {role: user, content: "Time in UTC?"}
    expect:
      calls:
        - name: get_time
          arguments: {tz: UTC}
"""
REPLIES = {
    # read only after repair (a trailing comma): accurate for the built-in, not the plugin
    "Weather in Paris?": '{"tool": "get_weather", "arguments": {"city": "Paris",}}',
    "Time in UTC?": '{"tool": "get_time", "arguments": {"tz": "UTC"}}',
}


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run recorded against a fake server with the built-in scorers only."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret-0000")
    monkeypatch.chdir(tmp_path)
    Path("s.yaml").write_text(SCENARIOS, encoding="utf-8")
    with FakeServer(by_last_user(REPLIES)) as fake:
        argv = [*_run("base"), "--api-base", fake.base_url]
        assert run_cli(argv) == 0
    return tmp_path / "base"


def _run(out: str) -> list[str]:
    return ["run", "--models", "openai/fake", "--formats", "prompt-json", "--scenarios",
            "s.yaml", "--cassettes", "cas", "--out", out, "--quiet", "--no-report"]  # fmt: skip


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The plugin installed: the group's entry points are the real ones plus its own."""
    mine = EntryPoint("strict_calls", "tests.scoring.strict_calls:SCORER", scorer.ENTRY_POINT_GROUP)
    with scorer.SCORERS.installing(mine):
        yield


def _values(run: Path, name: str) -> dict[str, object]:
    lines = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    return {d["scenario_id"]: d["scores"]["values"][name] for d in lines}


def test_without_the_plugin_the_built_in_check_accepts_the_repaired_call(recorded: Path) -> None:
    assert _values(recorded, "call_accuracy") == {
        "weather": {"value": True}, "time": {"value": True}
    }  # fmt: skip
    assert run_cli(["gate", str(recorded), "--min", "call_accuracy=1"]) == 0


def test_the_plugin_replaces_the_value_in_results_report_and_gate(
    recorded: Path, plugin: None, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert run_cli([*_run("strict"), "--record", "none"]) == 0  # the same replies, replayed
    assert "warning: scorer 'strict_calls' replaces scorer 'calls'" in capsys.readouterr().err
    run = recorded.parent / "strict"
    assert _values(run, "call_accuracy") == {
        "weather": {"value": False, "reason": "the call was repaired"},
        "time": {"value": True},
    }
    # the other values of the replaced scorer are still given, and the rest untouched
    assert _values(run, "no_call_correct") == {"weather": {"value": None}, "time": {"value": None}}
    assert _values(run, "parse") == _values(recorded, "parse")

    assert run_cli(["report", str(run), "-o", "strict.html"]) == 0
    assert run_cli(["report", str(recorded), "-o", "base.html"]) == 0
    strict, base = Path("strict.html").read_text(), Path("base.html").read_text()
    assert 'title="call_accuracy: n=2">50.0%' in strict
    assert 'title="call_accuracy: n=2">100.0%' in base
    assert "the call was repaired" in strict and "the call was repaired" not in base  # drill-down

    assert run_cli(["gate", str(run), "--min", "call_accuracy=1"]) == 1
    assert "call_accuracy" in capsys.readouterr().out
    assert run_cli(["gate", str(run), "--min", "call_accuracy=0.5"]) == 0


def test_rescoring_under_the_plugin_fails_the_repaired_trial(
    recorded: Path, plugin: None, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert run_cli(["rescore", str(recorded), "-o", "re"]) == 0
    out = capsys.readouterr().out
    assert "1 trial(s) changed scores, 1 changed outcome (0 fail->pass, 1 pass->fail)" in out
    assert _values(recorded.parent / "re", "call_accuracy")["weather"] == {
        "value": False, "reason": "the call was repaired"
    }  # fmt: skip
