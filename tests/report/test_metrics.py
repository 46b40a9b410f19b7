from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.errors import UserError
from toolbench.metrics import all_metrics
from toolbench.report.metrics import (
    OVERALL,
    aggregate,
    cell_map,
    check_metric,
    fmt_value,
    load_table,
    wilson,
    worse_by,
)


@pytest.mark.parametrize(
    ("k", "n", "lo", "hi"),
    [
        (8, 10, 0.4902, 0.9433),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (50, 100, 0.4038, 0.5962),
        (1, 1, 0.2065, 1.0),
    ],
)
def test_wilson_known_values(k: int, n: int, lo: float, hi: float) -> None:
    ci = wilson(k, n)
    assert ci is not None
    assert ci[0] == pytest.approx(lo, abs=1e-4)
    assert ci[1] == pytest.approx(hi, abs=1e-4)


def test_wilson_empty_denominator_is_none() -> None:
    assert wilson(0, 0) is None


def test_aggregate_excludes_none_and_infra(run_dir: Path) -> None:
    cells = cell_map(aggregate(load_table(run_dir).df))
    beta_xml = cells[("m-beta", "xml")]
    # weather_basic fails twice, trip_multi passes twice; the no-call scenario is n/a.
    assert beta_xml.counts["call_accuracy"] == (2, 4)
    assert beta_xml.values["call_accuracy"] == 0.5
    assert beta_xml.counts["no_call_accuracy"] == (2, 2)
    alpha_xml = cells[("m-alpha", "xml")]
    # one infra error out of 6: out of the model rates, into infra_error_rate.
    assert alpha_xml.counts["call_accuracy"] == (3, 3)
    assert alpha_xml.counts["infra_error_rate"] == (1, 6)
    assert alpha_xml.values["n_trials"] == 6
    assert alpha_xml.values["prompt_tokens_mean"] == 90
    overall = cells[(OVERALL, OVERALL)]
    assert overall.label == OVERALL
    assert overall.values["n_trials"] == 24
    assert overall.counts["call_accuracy"] == (13, 15)
    assert overall.values["retry_recovery"] is None
    assert set(overall.values) == {m.name for m in all_metrics()}


def test_trial_table_columns_and_outcomes(run_dir: Path) -> None:
    df = load_table(run_dir).df
    assert len(df) == 24
    assert sorted(df["outcome"].value_counts().items()) == [
        ("fail", 2),
        ("infra_error", 1),
        ("pass", 21),
    ]
    infra = df[df["status"] == "infra_error"].iloc[0]
    assert infra["errors"] == "infra.error"
    assert infra["call_accuracy"] is None or str(infra["call_accuracy"]) == "<NA>"


def test_missing_results_file_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"no results file \(is '.*nope' a run directory\?\)"):
        load_table(tmp_path / "nope")


def test_torn_last_line_is_skipped(run_dir: Path) -> None:
    path = run_dir / "results.jsonl"
    path.write_text(path.read_text() + '{"model": "m-alpha", "form', encoding="utf-8")
    assert len(load_table(run_dir).df) == 24


def test_bad_line_in_the_middle_names_file_and_line(run_dir: Path) -> None:
    path = run_dir / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = "not json\n"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(UserError, match=r"results\.jsonl:3: "):
        load_table(run_dir)


def test_full_records_by_offset(run_dir: Path) -> None:
    table = load_table(run_dir)
    trials = table.trials(table.df["_offset"].iloc[[0, 5]])
    assert [t.key for t in trials] == [
        tuple(table.df.iloc[i][["model", "format", "scenario_id", "sample"]]) for i in (0, 5)
    ]


def test_check_metric_did_you_mean() -> None:
    with pytest.raises(UserError, match="Did you mean 'parse_success'"):
        check_metric("parse_sucess")


@pytest.mark.parametrize(
    ("metric", "value", "base", "worse"),
    [
        ("call_accuracy", 0.8, 0.9, True),
        ("leak_rate", 0.2, 0.1, True),
        ("leak_rate", 0.0, 0.1, False),
    ],
)
def test_worse_by_direction(metric: str, value: float, base: float, worse: bool) -> None:
    assert (worse_by(metric, value, base) > 0) is worse


@pytest.mark.parametrize(
    ("metric", "value", "text"),
    [
        ("call_accuracy", 0.5, "50.0%"),
        ("n_trials", 6.0, "6"),
        ("latency_p50", 1.234, "1.23s"),
        ("cost_total", 0.5, "$0.5000"),
        ("call_accuracy", None, "n/a"),
    ],
)
def test_fmt_value(metric: str, value: float | None, text: str) -> None:
    assert fmt_value(metric, value) == text
