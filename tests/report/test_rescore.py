from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from synthetic_runs import make_trial, scores, write_run

from toolbench.errors import UserError
from toolbench.formats.base import Format, ModelReply, ParseResult, ToolCall
from toolbench.report.metrics import load_table
from toolbench.results import TrialScores, TurnRecord
from toolbench.runner.rescore import rescore_run
from toolbench.scenarios.model import Scenario
from toolbench.store import load_results


def scenario(sid: str, no_call: bool = False) -> Scenario:
    expect: dict[str, Any] = {"no_call": True} if no_call else {"calls": [{"name": "get_weather"}]}
    return Scenario.model_validate(
        {
            "id": sid,
            "tools": [{"name": "get_weather"}],
            "messages": [{"role": "user", "content": "hi"}],
            "expect": expect,
        }
    )


class FakeFormat:
    """Reads a call when the reply mentions get_weather."""

    def parse_reply(self, reply: ModelReply, tools: Sequence[Any] | None = None) -> ParseResult:
        if "get_weather" in reply.text:
            return ParseResult(
                calls=[ToolCall(name="get_weather")], status="strict", attempted=True
            )
        return ParseResult(content=reply.text, status="no_call")


def fake_scorer(sc: Scenario, fmt: Format, turns: Sequence[TurnRecord]) -> TrialScores:
    called = any(t.parsed.calls for t in turns)
    kind = "no_call" if sc.expect.no_call else "calls"
    return scores(kind, ok=(not called) if kind == "no_call" else called)


SCENARIOS = [
    scenario("weather_basic"),
    scenario("chitchat_nocall", no_call=True),
    scenario("trip_multi"),
]


def test_rescore_with_fake_scorer(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs" / "r1-new"
    summary = rescore_run(
        run_dir, out, SCENARIOS, fake_scorer, lambda spec: cast(Format, FakeFormat())
    )
    assert (summary.total, summary.rescored, summary.copied) == (24, 23, 1)
    # The stored failures of m-beta/xml: the fake scorer sees no get_weather in sample 0's
    # hostile reply (still a failure) but one in sample 1 (now a pass). The no-call
    # scenario's replies mention get_weather, so the fake scorer fails those 8 trials.
    assert summary.fail_to_pass == 1
    assert summary.pass_to_fail == 8
    assert summary.outcome_changed == 9
    assert (out / "run.json").read_bytes() == (run_dir / "run.json").read_bytes()
    new = {t.key: t for t in load_results(out)}
    infra = new[("m-alpha", "xml", "trip_multi", 1)]
    assert infra.status == "infra_error" and infra.scores is None
    assert "rescored 23 of 24 trials" in summary.render()
    assert len(load_table(out).df) == 24


def test_rescore_unknown_scenario_copied(run_dir: Path, tmp_path: Path) -> None:
    summary = rescore_run(
        run_dir, tmp_path / "o", SCENARIOS[:1], fake_scorer, lambda s: cast(Format, FakeFormat())
    )
    assert summary.unknown_scenario == 15  # 16 other-scenario trials, minus the infra error


def test_rescore_refuses_to_overwrite(run_dir: Path) -> None:
    with pytest.raises(UserError, match="is the run being rescored"):
        rescore_run(run_dir, run_dir, SCENARIOS, fake_scorer)


def test_rescore_missing_run(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no results file"):
        rescore_run(tmp_path / "nope", tmp_path / "o", SCENARIOS, fake_scorer)


def test_rescore_with_real_formats_and_scorer(tmp_path: Path) -> None:
    """The real prompt-json parser and scorer over stored replies of a bundled scenario."""
    scoring = pytest.importorskip("toolbench.scoring")
    from toolbench.formats.format_registry import get_format
    from toolbench.scenarios.loader import load_scenarios

    assert callable(scoring.score_trial)
    sc = next(s for s in load_scenarios() if s.id == "weather-paris")
    good = '{"tool": "get_weather", "arguments": {"city": "Paris"}}'
    bad = '{"tool": "get_stock_price", "arguments": {"symbol": "AAPL"}}'
    # Stored with deliberately wrong scores (as if scored by an older, buggy scorer).
    trials = [
        make_trial("m", "prompt-json", "weather-paris", 0, reply=good, ok=False),
        make_trial("m", "prompt-json", "weather-paris", 1, reply=bad, ok=True),
    ]
    run = write_run(tmp_path / "runs" / "old", trials)
    summary = rescore_run(run, tmp_path / "runs" / "new", [sc])
    assert summary.rescored == 2
    new = {t.sample: t for t in load_results(tmp_path / "runs" / "new")}
    s0, s1 = new[0].scores, new[1].scores
    assert s0 is not None and s1 is not None
    assert s0.get("call_accuracy") is True and s0.get("parse_strict_ok") is True
    assert s1.get("call_accuracy") is False
    assert [c.name for c in new[0].turns[0].parsed.calls] == ["get_weather"]
    assert summary.fail_to_pass == 1 and summary.pass_to_fail == 1
    assert get_format("prompt-json").name == "prompt-json"
