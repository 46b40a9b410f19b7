"""``toolbench export``: the trial table, one row per trial, as CSV, Parquet or JSONL.

The columns are :func:`toolbench.report.metrics.trial_columns` (every registered metric's
trial flag among them); score flags are nullable
booleans (empty in CSV, null in JSONL/Parquet when not applicable).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from toolbench.errors import UnknownNameError
from toolbench.redaction import redact, secret_values
from toolbench.report.metrics import TrialTable, trial_columns
from toolbench.report.outputs import ReportInput, render_output, report_names, write


def trial_frame(table: TrialTable) -> pd.DataFrame:
    """The public trial table (internal columns dropped)."""
    return table.df[list(trial_columns())]


def redact_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Every text cell with known secret values redacted (Parquet is compressed: a byte
    scan of the file would not even see them)."""
    values = secret_values()
    if not values:
        return df
    df = df.copy()
    for col in df.columns:
        if pd.api.types.is_object_dtype(df[col]) or pd.api.types.is_string_dtype(df[col]):
            df[col] = df[col].map(lambda x: redact(x, values) if isinstance(x, str) else x)
    return df


def export(table: TrialTable, to: str, out: str | Path) -> Path:
    """Write the trial table as ``to`` (a registered trial-table output:
    :mod:`toolbench.report.outputs`) to ``out``; return the path."""
    names = report_names(table=True)
    if to not in names:
        raise UnknownNameError("export format", to, names)
    return write(out, render_output(to, ReportInput(table)))
