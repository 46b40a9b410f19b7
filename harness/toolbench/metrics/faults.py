"""Rates of trials that never reached the model or never got an answer, over all trials.

They are not model failures, so every model rate leaves them out; these two count them,
split by whose fault it was.
"""

from __future__ import annotations

import pandas as pd

from toolbench.metrics.registry import Metric

HARNESS_STATUSES = frozenset({"harness_error"})
"""Statuses that are toolbench's own faults (the rest of the non-``ok`` ones are infra)."""


def _infra(df: pd.DataFrame) -> pd.Series[float]:
    ok = df["status"] == "ok"
    return (~ok & ~df["status"].isin(HARNESS_STATUSES)).astype("float64")


def _harness(df: pd.DataFrame) -> pd.Series[float]:
    return df["status"].isin(HARNESS_STATUSES).astype("float64")


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
    ),
    Metric(
        "harness_error_rate",
        "trials toolbench itself failed (`harness_error`)",
        _harness,
        "trial `status`, all trials",
        direction="lower",
        summary=70,
        markdown=70,
    ),
)
