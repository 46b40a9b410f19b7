"""The trial table as ``toolbench export`` writes it, one row per trial (the CSV, Parquet
and JSONL outputs of :mod:`toolbench.report.outputs` render it).

The columns are :func:`toolbench.report.metrics.trial_columns` (every registered metric's
trial flag among them); score flags are nullable
booleans (empty in CSV, null in JSONL/Parquet when not applicable).
"""

from __future__ import annotations

import pandas as pd

from toolbench.redaction import redact, secret_values
from toolbench.report.metrics import TrialTable, trial_columns


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
