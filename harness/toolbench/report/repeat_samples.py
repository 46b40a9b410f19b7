"""What repeated samples of one scenario say: pass@k, pass^k and how often verdicts flip.

A run with ``--samples k`` (k >= 2) asks each model the same scenario k times. A
per-trial rate pools those k trials; it does not say whether a scenario that passed
once passes every time. Per cell, over the scenarios with at least k scored samples:

* **success** of a trial is its ``loop_success`` where the scenario is a loop scenario
  (it has that value), else its ``call_accuracy``; trials where neither applies (a
  no-call scenario) and trials that did not reach the model (status not ``ok``) are
  left out, as every rate leaves them out.
* **pass@k**: the chance at least one of k samples succeeds; **pass^k**: the chance all
  k do. Per scenario with n samples, c of them successes, the unbiased estimators
  ``1 - C(n-c, k) / C(n, k)`` (Chen et al. 2021) and ``C(c, k) / C(n, k)``; per cell,
  their mean over the scenarios.
* **flip rate** of a scenario: the share of its pairs of samples that disagree,
  ``2 c (n - c) / (n (n - 1))`` (0: every sample agrees); of a cell, the share of its
  scenarios whose samples do not all agree.

Intervals are Wilson 95% score intervals over the cell's scenarios, the mean's
successes counted fractionally (``mean * scenarios``): an approximation that, unlike a
normal interval, stays wide when every scenario scored 0 or 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolbench.report.metrics import Z95

if TYPE_CHECKING:
    import pandas as pd

SUCCESS_COLUMNS = ("loop_success", "call_accuracy")
"""The trial values read as a trial's success, first one that applies."""
TOP_FLIPPERS = 10
"""Most flipping scenarios listed in the reports."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of ``c`` successes in ``n`` samples (Chen et al. 2021)."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (every one of k samples succeeds) of ``c`` successes in ``n``."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def flip_rate(n: int, c: int) -> float:
    """The share of pairs of the ``n`` samples that disagree (0 with fewer than 2)."""
    if n < 2:
        return 0.0
    return 2 * c * (n - c) / (n * (n - 1))


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")


def fractional_wilson(mean: float, m: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval of a mean of ``m`` values in [0, 1] (None when ``m`` is 0)."""
    if m <= 0:
        return None
    p = min(1.0, max(0.0, mean))
    denom = 1 + z * z / m
    centre = (p + z * z / (2 * m)) / denom
    half = z * math.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class ScenarioSamples:
    """One scenario's scored samples in one cell."""

    model: str
    format: str
    scenario_id: str
    n: int
    successes: int

    @property
    def flip_rate(self) -> float:
        return flip_rate(self.n, self.successes)

    @property
    def flips(self) -> bool:
        return 0 < self.successes < self.n


@dataclass(frozen=True)
class Estimate:
    """A mean over a cell's scenarios with its interval."""

    value: float | None
    interval: tuple[float, float] | None
    scenarios: int

    def text(self) -> str:
        """``40.0% [21.0, 62.0] s=12`` (s: scenarios), or ``n/a``."""
        if self.value is None:
            return "n/a"
        ci = (
            ""
            if self.interval is None
            else (f" [{100 * self.interval[0]:.1f}, {100 * self.interval[1]:.1f}]")
        )
        return f"{100 * self.value:.1f}%{ci} s={self.scenarios}"


def estimate(values: list[float]) -> Estimate:
    if not values:
        return Estimate(None, None, 0)
    mean = sum(values) / len(values)
    return Estimate(mean, fractional_wilson(mean, len(values)), len(values))


@dataclass(frozen=True)
class CellRepeats:
    """pass@k, pass^k and flips of one ``(model, format)`` cell."""

    model: str
    format: str
    k: int
    scenarios: tuple[ScenarioSamples, ...]
    """Every scenario with at least one scored sample."""

    @property
    def label(self) -> str:
        return f"{self.model} / {self.format}"

    def _counted(self) -> list[ScenarioSamples]:
        return [s for s in self.scenarios if s.n >= self.k]

    @property
    def pass_at_k(self) -> Estimate:
        return estimate([pass_at_k(s.n, s.successes, self.k) for s in self._counted()])

    @property
    def pass_hat_k(self) -> Estimate:
        return estimate([pass_hat_k(s.n, s.successes, self.k) for s in self._counted()])

    @property
    def per_trial(self) -> Estimate:
        """The per-trial success rate over the same scenarios, for reading beside them."""
        counted = self._counted()
        n = sum(s.n for s in counted)
        c = sum(s.successes for s in counted)
        if not n:
            return Estimate(None, None, 0)
        return Estimate(c / n, fractional_wilson(c / n, n), len(counted))

    @property
    def flip_rate(self) -> Estimate:
        """The share of scenarios (with 2 or more samples) whose samples disagree."""
        return estimate([1.0 if s.flips else 0.0 for s in self.scenarios if s.n >= 2])


def success_series(df: pd.DataFrame) -> pd.Series[float]:
    """Each trial's success as 1.0/0.0 (NaN: left out), as the module docstring says."""
    out = df[SUCCESS_COLUMNS[-1]].astype("Float64").astype("float64")
    for col in reversed(SUCCESS_COLUMNS[:-1]):
        if col in df.columns:
            first = df[col].astype("Float64").astype("float64")
            out = first.where(first.notna(), out)
    return out.where(df["status"] == "ok")


def samples_per_scenario(df: pd.DataFrame) -> int:
    """The most samples any scenario of any cell has (the run's ``--samples``)."""
    if not len(df):
        return 0
    return int(df.groupby(["model", "format", "scenario_id"]).size().max())


def repeats(df: pd.DataFrame, k: int | None = None) -> list[CellRepeats]:
    """Per cell, its scenarios' samples, read at ``k`` (default: the run's samples)."""
    kk = k if k is not None else samples_per_scenario(df)
    flo = df[["model", "format", "scenario_id"]].copy()
    flo["success"] = success_series(df)
    flo = flo[flo["success"].notna()]
    grouped = flo.groupby(["model", "format", "scenario_id"], sort=True)["success"]
    counts = grouped.agg(["count", "sum"])
    by_cell: dict[tuple[str, str], list[ScenarioSamples]] = {}
    for (model, fmt, sid), row in counts.iterrows():
        s = ScenarioSamples(str(model), str(fmt), str(sid), int(row["count"]), int(row["sum"]))
        by_cell.setdefault((s.model, s.format), []).append(s)
    return [CellRepeats(m, f, kk, tuple(ss)) for (m, f), ss in sorted(by_cell.items())]


def pooled(cells: list[CellRepeats], model: str, fmt: str) -> CellRepeats:
    """Every scenario of ``cells`` as one cell (the overall cell of a table or a gate)."""
    k = cells[0].k if cells else 1
    return CellRepeats(model, fmt, k, tuple(s for c in cells for s in c.scenarios))


def top_flippers(cells: list[CellRepeats], limit: int = TOP_FLIPPERS) -> list[ScenarioSamples]:
    """The scenarios whose samples disagree most, most first (ties by cell and id)."""
    flipping = [s for c in cells for s in c.scenarios if s.flips]
    flipping.sort(key=lambda s: (-s.flip_rate, s.model, s.format, s.scenario_id))
    return flipping[:limit]
