"""The run summary counted without pandas gives the cells the pandas trial table gives,
and the unmeasured cells the full read gives; a summary metric without a per-row value
sends the summary back to the pandas table."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from toolbench.errors import UserError
from toolbench.metrics import Metric, register_metric, unregister_metric, view
from toolbench.report.metrics import aggregate, load_table
from toolbench.report.summary_rows import summary_rows
from toolbench.runner.measured import unmeasured, unmeasured_in

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs"


def _same_cells(run: Path) -> None:
    shown = view("summary")
    quick = summary_rows(run, shown)
    assert quick is not None
    table = load_table(run)
    full = aggregate(table.df)
    assert quick.trials == len(table.df)
    assert quick.run_id == table.run_id
    assert [c.key for c in quick.cells] == [c.key for c in full]
    for q, f in zip(quick.cells, full, strict=True):
        assert q.values == {m: f.values[m] for m in shown}, q.key
        assert q.counts == {m: f.counts[m] for m in shown}, q.key
    assert unmeasured(quick.seen) == unmeasured_in(run)


def test_the_synthetic_run_with_failures_and_infra_errors(run_dir: Path) -> None:
    _same_cells(run_dir)


def test_the_regressed_run(regressed_run: Path) -> None:
    _same_cells(regressed_run)


@pytest.mark.parametrize("version", ["v4", "v5"])
def test_runs_of_older_schemas(version: str, tmp_path: Path) -> None:
    run = tmp_path / version
    shutil.copytree(RUNS / version, run)
    _same_cells(run)


def test_a_summary_metric_without_a_per_row_value_takes_the_pandas_table(run_dir: Path) -> None:
    import pandas as pd

    def per_trial(df: pd.DataFrame) -> pd.Series[float]:
        return (df["status"] == "ok").astype("float64")

    register_metric(Metric("toy_ok_rate", "toy", per_trial, "status", summary=99))
    try:
        assert "toy_ok_rate" in view("summary")
        assert summary_rows(run_dir, view("summary")) is None
    finally:
        unregister_metric("toy_ok_rate")


def test_only_a_rate_has_a_per_row_value() -> None:
    with pytest.raises(ValueError, match="only a rate has a per-row value"):
        Metric("toy_mean", "toy", lambda df: df["latency_s"], "latency", kind="value",
               reduce=lambda s: 0.0, unit="seconds", per_row=lambda row: 1.0)  # fmt: skip


def test_the_lines_this_process_wrote_are_read_unchecked_and_the_earlier_checked(
    run_dir: Path,
) -> None:
    """``written_from``: the lines from that byte on (what ``toolbench run`` just wrote
    itself) give the same cells unvalidated; a line before it is still validated."""
    shown = view("summary")
    checked = summary_rows(run_dir, shown)
    assert checked is not None
    for start in (0, (run_dir / "results.jsonl").stat().st_size // 2):
        trusted = summary_rows(run_dir, shown, written_from=start)
        assert trusted is not None
        assert (trusted.trials, trusted.cells, trusted.seen) == (
            checked.trials, checked.cells, checked.seen)  # fmt: skip
    results = run_dir / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    weird = lines[0].replace('"status":"ok"', '"status":"weird"', 1)
    results.write_text(weird + "".join(lines[1:]))
    assert '"status":"weird"' in results.read_text()
    with pytest.raises(UserError, match=r"results.jsonl:1: status: "):
        summary_rows(run_dir, shown, written_from=len(lines[0]))
