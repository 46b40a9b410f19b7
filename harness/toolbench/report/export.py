"""``toolbench export``: the trial table, one row per trial, as CSV, Parquet or JSONL.

The columns are :data:`toolbench.report.metrics.TRIAL_COLUMNS`; score flags are nullable
booleans (empty in CSV, null in JSONL/Parquet when not applicable).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from toolbench.errors import UnknownNameError, UserError
from toolbench.outpath import prepare_file
from toolbench.report.metrics import TRIAL_COLUMNS, TrialTable

EXPORT_FORMATS = ("csv", "parquet", "jsonl")


def trial_frame(table: TrialTable) -> pd.DataFrame:
    """The public trial table (internal columns dropped)."""
    return table.df[list(TRIAL_COLUMNS)]


def export(table: TrialTable, to: str, out: str | Path) -> Path:
    if to not in EXPORT_FORMATS:
        raise UnknownNameError("export format", to, EXPORT_FORMATS)
    path = Path(out)
    prepare_file(path)
    df = trial_frame(table)
    try:
        if to == "csv":
            df.to_csv(path, index=False)
        elif to == "parquet":
            df.to_parquet(path, index=False)
        else:
            df.to_json(path, orient="records", lines=True)
    except OSError as exc:  # a parent that is a file, a directory as -o, no permission
        raise UserError(f"{path}: cannot write: {exc.strerror}") from None
    return path
