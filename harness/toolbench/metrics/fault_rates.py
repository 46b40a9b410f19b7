"""Rates of trials that never reached the model or never got an answer, over all trials.

They are not model failures, so every model rate leaves them out; these two count them,
split by whose fault it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from toolbench.metrics.metric_registry import Metric

if TYPE_CHECKING:
    import pandas as pd

HARNESS_STATUSES = frozenset({"harness_error"})
"""Statuses that are toolbench's own faults (the rest of the non-``ok`` ones are infra)."""


def _infra(df: pd.DataFrame) -> pd.Series[float]:
    ok = df["status"] == "ok"
    return (~ok & ~df["status"].isin(HARNESS_STATUSES)).astype("float64")


def _harness(df: pd.DataFrame) -> pd.Series[float]:
    return df["status"].isin(HARNESS_STATUSES).astype("float64")


def _infra_row(row: Mapping[str, Any]) -> float:
    return float(row["status"] != "ok" and row["status"] not in HARNESS_STATUSES)


def _harness_row(row: Mapping[str, Any]) -> float:
    return float(row["status"] in HARNESS_STATUSES)


METRICS: tuple[Metric, ...] = (
    Metric(
        "infra_error_rate",
        "trials the provider or its recording failed (`infra_error`, `unsupported`, "
        "`cassette_missing`, `cassette_unreadable`)",
        _infra,
        "trial `status`, all trials",
        direction="lower",
        summary=60,
        markdown=60,
        per_row=_infra_row,
    ),
    Metric(
        "harness_error_rate",
        "trials toolbench itself failed (`harness_error`)",
        _harness,
        "trial `status`, all trials",
        direction="lower",
        summary=70,
        markdown=70,
        per_row=_harness_row,
    ),
)
