"""A schema-5 run (``tests/data/runs/v5``: plain and streamed trials replayed from the
committed cassettes by toolbench at schema 5) reads as schema 6: each trial's core checks
(fixed ``scores`` fields in schema 5) become the built-in scorers' named values, with the
values they held, ahead of the streaming values schema 5 already stored by name; and
rescoring the migrated trials gives the same scores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolbench.cli.app import run_cli
from toolbench.results import RESULTS_SCHEMA_VERSION
from toolbench.scoring import builtin_scorers as builtin
from toolbench.store import iter_results, read_info
from toolbench.store.schema import upgrade

V5 = Path(__file__).resolve().parents[1] / "data" / "runs" / "v5"
ORDER = [name for s in builtin.SCORERS for name in s.values]
"""The order the built-in scorers give their values in (a migrated trial keeps it)."""


def _lines() -> list[dict[str, Any]]:
    text = (V5 / "results.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_the_fixture_is_schema_5_with_fixed_checks_and_streamed_values() -> None:
    lines = _lines()
    assert {d["schema_version"] for d in lines} == {5}
    assert all("call_accuracy" in d["scores"] for d in lines)
    assert any("ttft_ms" in (d["scores"].get("values") or {}) for d in lines)
    assert {d["scores"]["no_call_correct"] for d in lines} == {True, False, None}
    assert json.loads((V5 / "run.json").read_text())["schema_version"] == 5


def test_trials_5_migrate_their_checks_into_named_values() -> None:
    raw = {(d["format"], d["scenario_id"]): d for d in _lines()}
    trials = list(iter_results(V5))
    assert len(trials) == len(raw) == 9
    for t in trials:
        old = raw[(t.format, t.scenario_id)]["scores"]
        assert t.schema_version == RESULTS_SCHEMA_VERSION and t.scores is not None
        checks = {k: v for k, v in old.items() if k not in ("errors", "reasons", "values")}
        assert {k: t.scores.get(k) for k in checks} == checks and len(checks) >= 14
        streamed = {k: v["value"] for k, v in (old.get("values") or {}).items()}
        assert {k: t.scores.get(k) for k in streamed} == streamed
        assert list(t.scores.values) == [*sorted(checks, key=ORDER.index), *streamed]
        assert (t.scores.errors, t.scores.reasons) == (old["errors"], old["reasons"])
    info = read_info(V5)
    assert info is not None and info.schema_version == RESULTS_SCHEMA_VERSION


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        (None, None),
        ({"parse": "no_call", "call_accuracy": None, "errors": [], "reasons": []},
         {"values": {"parse": {"value": "no_call"}, "call_accuracy": {"value": None}},
          "errors": [], "reasons": []}),
        ({"stop": "length", "fallback_rescued": True, "errors": ["stop.length"],
          "reasons": ["cut"], "values": {"ttft_ms": {"value": 3.0}}},
         {"values": {"stop": {"value": "length"}, "fallback_rescued": {"value": True},
                     "ttft_ms": {"value": 3.0}},
          "errors": ["stop.length"], "reasons": ["cut"]}),
    ],
    ids=["unscored", "plain", "with-values"],
)  # fmt: skip
def test_the_trial_migration(
    scores: dict[str, Any] | None, expected: dict[str, Any] | None
) -> None:
    out = upgrade("trial", {"schema_version": 5, "scores": scores}, "results.jsonl:1")
    assert out["schema_version"] == RESULTS_SCHEMA_VERSION
    assert out["scores"] == expected


def test_rescoring_the_migrated_trials_gives_the_same_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = V5.parents[3] / "scenarios"
    out = tmp_path / "re"
    assert run_cli(["rescore", str(V5), "-o", str(out), "--scenarios", str(scenarios)]) == 0
    assert "0 trial(s) changed scores" in capsys.readouterr().out
    before = {t.key: t.scores for t in iter_results(V5)}
    after = {t.key: t.scores for t in iter_results(out)}
    assert after == before and len(after) == 9
