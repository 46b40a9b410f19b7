"""How many trials a cell holds, whatever their status (never a regression)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbench.metrics.metric_registry import Metric

if TYPE_CHECKING:
    import pandas as pd


def _one(df: pd.DataFrame) -> pd.Series[float]:
    import pandas as pd  # slow to import: loaded only when a trial table is built

    return pd.Series(1.0, index=df.index, dtype="float64")


def _count(s: pd.Series[float]) -> float | None:
    return float(len(s))


METRICS: tuple[Metric, ...] = (
    Metric(
        "n_trials",
        "number of trials in the cell, whatever their status",
        _one,
        "every trial, count",
        kind="value",
        reduce=_count,
        direction="none",
        unit="count",
        markdown=90,
    ),
)
