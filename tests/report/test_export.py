from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from toolbench.cli.app import run_cli
from toolbench.report.metrics import load_table, trial_columns
from toolbench.report.outputs import ReportInput, render_output, write


@pytest.mark.parametrize("to", ["csv", "parquet", "jsonl"])
def test_export_round_trip(run_dir: Path, tmp_path: Path, to: str) -> None:
    table = load_table(run_dir)
    path = write(tmp_path / f"t.{to}", render_output(to, ReportInput(table)))
    back = {
        "csv": lambda p: pd.read_csv(p),
        "parquet": pd.read_parquet,
        "jsonl": lambda p: pd.read_json(p, lines=True),
    }[to](path)
    assert list(back.columns) == list(trial_columns())
    assert len(back) == 24
    assert back["scenario_id"].tolist() == table.df["scenario_id"].tolist()
    # 13 passes, 2 failures, 9 not applicable (no-call scenarios and the infra error).
    assert back["call_accuracy"].isna().sum() == 9
    assert int(back["call_accuracy"].eq(1).sum()) == 13
    assert (back["errors"].fillna("") == "infra.error").sum() == 1


def test_export_unknown_format(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["export", str(run_dir), "--to", "xlsx", "-o", str(tmp_path / "t")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown export format 'xlsx'. Available: csv, jsonl, parquet")
    assert not (tmp_path / "t").exists()
