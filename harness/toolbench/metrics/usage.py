"""What a trial consumed: tokens (the format's prompt overhead) and provider cost."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from toolbench.metrics.metric_registry import Metric, PerTrial

if TYPE_CHECKING:
    import pandas as pd


def _ok_floats(column: str) -> PerTrial:
    def per_trial(df: pd.DataFrame) -> pd.Series[float]:
        return df[column].astype("Float64").astype("float64").where(df["status"] == "ok")

    return per_trial


def _mean(s: pd.Series[float]) -> float | None:
    v = s.mean()
    return None if v is None or math.isnan(v) else float(v)


def _cost(df: pd.DataFrame) -> pd.Series[float]:
    return df["cost"].astype("float64")


def _total(s: pd.Series[float]) -> float | None:
    s = s.dropna()
    return float(s.sum()) if len(s) else None


METRICS: tuple[Metric, ...] = (
    Metric(
        "prompt_tokens_mean",
        "mean prompt tokens per trial (the format's overhead)",
        _ok_floats("prompt_tokens"),
        "`prompt_tokens`, `ok` trials that report usage, mean",
        kind="value",
        reduce=_mean,
        direction="lower",
        unit="number",
        ranking=40,
    ),
    Metric(
        "completion_tokens_mean",
        "mean completion tokens per trial",
        _ok_floats("completion_tokens"),
        "`completion_tokens`, `ok` trials that report usage, mean",
        kind="value",
        reduce=_mean,
        direction="lower",
        unit="number",
    ),
    Metric(
        "cost_total",
        "summed provider cost in USD",
        _cost,
        "`cost`, all trials that report one, sum",
        kind="value",
        reduce=_total,
        direction="lower",
        unit="usd",
    ),
)
