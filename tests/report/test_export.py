from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from toolbench.errors import UserError
from toolbench.report.export import export
from toolbench.report.metrics import load_table, trial_columns


@pytest.mark.parametrize("to", ["csv", "parquet", "jsonl"])
def test_export_round_trip(run_dir: Path, tmp_path: Path, to: str) -> None:
    table = load_table(run_dir)
    path = export(table, to, tmp_path / f"t.{to}")
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


def test_export_unknown_format(run_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="unknown export format 'xlsx'"):
        export(load_table(run_dir), "xlsx", tmp_path / "t.xlsx")
