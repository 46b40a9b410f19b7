"""The provider's time per trial (``latency_s``: request written to last byte, summed
over the turns; queueing and the harness's own time are not in it): median and 95th
percentile over the ``ok`` trials."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from toolbench.metrics.metric_registry import Metric, Reduce

if TYPE_CHECKING:
    import pandas as pd


def _latency(df: pd.DataFrame) -> pd.Series[float]:
    return df["latency_s"].where(df["status"] == "ok")


def quantile(q: float) -> Reduce:
    def reduce(s: pd.Series[float]) -> float | None:
        s = s.dropna()
        if not len(s):
            return None
        v = float(s.quantile(q))
        return None if math.isnan(v) else v

    return reduce


METRICS: tuple[Metric, ...] = (
    Metric(
        "latency_p50",
        "median provider time per trial in seconds",
        _latency,
        "`latency_s`, `ok` trials, median",
        kind="value",
        reduce=quantile(0.5),
        direction="lower",
        unit="seconds",
        markdown=80,
    ),
    Metric(
        "latency_p95",
        "95th percentile of provider time per trial in seconds",
        _latency,
        "`latency_s`, `ok` trials, 95th percentile",
        kind="value",
        reduce=quantile(0.95),
        direction="lower",
        unit="seconds",
    ),
)
