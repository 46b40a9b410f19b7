"""A run against a baseline run: per-cell deltas, regressions, trials whose outcome changed.

A metric is marked as a *regression* when it moved in its bad direction by more than
1 percentage point (rates) or 10% of the baseline value (latency, tokens, cost).
A metric without a direction (``n_trials``) is never a regression.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from toolbench.metrics import all_metrics, find_metric
from toolbench.report.metrics import (
    CellStats,
    TrialTable,
    aggregate,
    cell_map,
)

RATE_TOLERANCE = 0.01
RELATIVE_TOLERANCE = 0.10


def is_regression(metric: str, value: float | None, base: float | None) -> bool:
    m = find_metric(metric)
    if value is None or base is None or m is None or m.direction == "none":
        return False
    tol = RATE_TOLERANCE if m.kind == "rate" else RELATIVE_TOLERANCE * abs(base)
    return m.worse_by(value, base) > tol + 1e-12


@dataclass
class CellDelta:
    cell: CellStats
    base: CellStats | None

    def delta(self, metric: str) -> float | None:
        v = self.cell.values.get(metric)
        b = self.base.values.get(metric) if self.base else None
        return None if v is None or b is None else v - b

    def regressed(self, metric: str) -> bool:
        b = self.base.values.get(metric) if self.base else None
        return is_regression(metric, self.cell.values.get(metric), b)

    @property
    def regressions(self) -> list[str]:
        return [m.name for m in all_metrics() if self.regressed(m.name)]


@dataclass
class BaselineDiff:
    base_id: str
    cells: list[CellDelta]
    changed: pd.DataFrame
    """Trials in both runs whose outcome differs: key columns, outcome_base, outcome_new,
    and ``_offset_base`` / ``_offset_new`` into each results file."""
    only_new: int
    only_base: int


KEY = ["model", "format", "scenario_id", "sample"]


def diff(new: TrialTable, base: TrialTable) -> BaselineDiff:
    cells = aggregate(new.df)
    bmap = cell_map(aggregate(base.df))
    deltas = [CellDelta(c, bmap.get(c.key)) for c in cells]
    left = new.df[[*KEY, "outcome", "_offset"]]
    right = base.df[[*KEY, "outcome", "_offset"]]
    merged = left.merge(right, on=KEY, how="outer", suffixes=("_new", "_base"), indicator=True)
    both = merged[merged["_merge"] == "both"]
    changed = both[both["outcome_new"] != both["outcome_base"]].drop(columns="_merge")
    changed = changed.sort_values(KEY).reset_index(drop=True)
    only_new = int((merged["_merge"] == "left_only").sum())
    only_base = int((merged["_merge"] == "right_only").sum())
    return BaselineDiff(base.run_id, deltas, changed, only_new, only_base)
