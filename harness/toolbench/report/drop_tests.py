"""Whether a drop against the baseline is significant, for ``gate --significant``.

An absolute bound (``--max-drop call_accuracy=0.02``) fails a run whose cell fell by more
than the bound, even when two runs of an unchanged matrix differ that much by chance
(``compare RUN_A RUN_B`` shows how much: :mod:`toolbench.report.run_noise`). With
``--significant`` (``significant = true`` in the ``[gate]`` table) a ``max_drop`` bound
on a rate fails only when the drop is also significant: the run's trials and the
baseline's, paired by model, format, scenario and sample, lean toward the baseline by an
exact McNemar test at p < 0.05 (only pairs where the metric applies on both sides). A
bound on a value metric (latency, tokens, cost) has no paired test and stays absolute.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolbench.metrics import get_metric
from toolbench.report.metrics import OVERALL
from toolbench.report.paired_stats import ALPHA, mcnemar_exact

if TYPE_CHECKING:
    import pandas as pd

KEYS = ["model", "format", "scenario_id", "sample"]

CellKey = tuple[str, str]


@dataclass(frozen=True)
class DropTest:
    """One cell's paired trials of one rate: baseline against run."""

    pairs: int
    worse: int
    """Pairs where the run's trial is worse than the baseline's."""
    better: int

    @property
    def p_value(self) -> float:
        return mcnemar_exact(self.worse, self.better)

    @property
    def significant(self) -> bool:
        """The run is significantly worse than the baseline."""
        return self.pairs > 0 and self.p_value < ALPHA and self.worse > self.better


def drop_tests(
    run: pd.DataFrame, base: pd.DataFrame, metrics: list[str]
) -> dict[tuple[CellKey, str], DropTest]:
    """Per (cell, rate) of ``metrics``, the paired test; the overall cell pools them."""
    out: dict[tuple[CellKey, str], DropTest] = {}
    for name in metrics:
        metric = get_metric(name)
        if metric.kind != "rate":
            continue
        left = run[KEYS].copy()
        left["v_run"] = metric.per_trial(run)
        right = base[KEYS].copy()
        right["v_base"] = metric.per_trial(base)
        merged = left.merge(right, on=KEYS)
        merged = merged[merged["v_run"].notna() & merged["v_base"].notna()]
        bad = 1.0 if metric.direction == "lower" else 0.0
        good = 1.0 - bad
        worse = (merged["v_run"] == bad) & (merged["v_base"] == good)
        better = (merged["v_run"] == good) & (merged["v_base"] == bad)
        merged = merged.assign(_worse=worse, _better=better)
        for (model, fmt), g in merged.groupby(["model", "format"], sort=True):
            key = (str(model), str(fmt))
            out[(key, name)] = DropTest(len(g), int(g["_worse"].sum()), int(g["_better"].sum()))
        pooled = DropTest(len(merged), int(worse.sum()), int(better.sum()))
        out[((OVERALL, OVERALL), name)] = pooled
    return out
