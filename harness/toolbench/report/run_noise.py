"""How much two runs of the same matrix disagree: the noise floor under a delta.

Models are not deterministic, so two runs of one matrix differ even when nothing
changed. Before a team gates on a delta it should know how large a delta its noise
makes. ``compare RUN_A RUN_B`` pairs their trials (model, format, scenario, sample) and
reads each trial's success as :mod:`toolbench.report.repeat_samples` does
(``loop_success`` on loop scenarios, else ``call_accuracy``; ``ok`` trials where it
applies on both sides). Per cell:

* **disagreement**: the share of paired trials whose success differs between the runs;
* **beyond noise**: whether the difference exceeds its interval, read as the exact
  McNemar test on the discordant pairs rejecting "no difference" at p < 0.05 (the
  test's acceptance region is the interval of the paired difference).

Over the run, the share of cells beyond noise: for two runs of an unchanged matrix about
one cell in twenty is expected there by chance; many more say the runs are not alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolbench.report.paired_stats import ALPHA, mcnemar_exact
from toolbench.report.repeat_samples import SUCCESS_COLUMNS, success_series
from toolbench.report.text_table import text_table

if TYPE_CHECKING:
    import pandas as pd

KEYS = ["model", "format", "scenario_id", "sample"]


@dataclass(frozen=True)
class CellNoise:
    """One cell's paired trials across the two runs."""

    model: str
    format: str
    pairs: int
    only_a: int
    """Pairs where only run A's trial succeeded."""
    only_b: int

    @property
    def label(self) -> str:
        return f"{self.model} / {self.format}"

    @property
    def disagreement(self) -> float | None:
        return (self.only_a + self.only_b) / self.pairs if self.pairs else None

    @property
    def p_value(self) -> float:
        return mcnemar_exact(self.only_a, self.only_b)

    @property
    def beyond_noise(self) -> bool:
        return self.pairs > 0 and self.p_value < ALPHA


@dataclass(frozen=True)
class RunNoise:
    cells: tuple[CellNoise, ...]

    @property
    def tested(self) -> list[CellNoise]:
        return [c for c in self.cells if c.pairs]

    @property
    def beyond(self) -> list[CellNoise]:
        return [c for c in self.cells if c.beyond_noise]

    @property
    def share_beyond(self) -> float | None:
        n = len(self.tested)
        return len(self.beyond) / n if n else None

    @property
    def disagreement(self) -> float | None:
        """The share of all paired trials whose success differs."""
        pairs = sum(c.pairs for c in self.cells)
        return sum(c.only_a + c.only_b for c in self.cells) / pairs if pairs else None


def run_noise(a: pd.DataFrame, b: pd.DataFrame) -> RunNoise:
    """Per cell, the paired trials of two runs and how many disagree each way."""
    left = a[KEYS].copy()
    left["ok_a"] = success_series(a)
    right = b[KEYS].copy()
    right["ok_b"] = success_series(b)
    merged = left.merge(right, on=KEYS)
    merged = merged[merged["ok_a"].notna() & merged["ok_b"].notna()]
    cells: list[CellNoise] = []
    for (model, fmt), g in merged.groupby(["model", "format"], sort=True):
        only_a = int(((g["ok_a"] == 1) & (g["ok_b"] == 0)).sum())
        only_b = int(((g["ok_a"] == 0) & (g["ok_b"] == 1)).sum())
        cells.append(CellNoise(str(model), str(fmt), len(g), only_a, only_b))
    return RunNoise(tuple(cells))


def render_noise(noise: RunNoise, a_name: str, b_name: str) -> str:
    """The run-to-run section of ``compare RUN_A RUN_B``."""
    lines = [
        f"run-to-run noise (a trial's success: {SUCCESS_COLUMNS[0]} on loop scenarios, "
        f"else {SUCCESS_COLUMNS[1]}; paired trials):"
    ]
    rows = [
        [
            c.label,
            str(c.pairs),
            str(c.only_a),
            str(c.only_b),
            "n/a" if c.disagreement is None else f"{100 * c.disagreement:.1f}%",
            f"{c.p_value:.4g}",
            "yes" if c.beyond_noise else "no",
        ]
        for c in noise.cells
    ]
    if not rows:
        return lines[0] + "\nno paired trials"
    headers = ["cell", "pairs", f"only {a_name}", f"only {b_name}", "disagree", "p"]
    lines.append(text_table([*headers, "beyond noise"], rows))
    share, dis = noise.share_beyond, noise.disagreement
    lines.append(
        f"{len(noise.beyond)} of {len(noise.tested)} cells differ beyond noise "
        f"(exact McNemar p < {ALPHA}; about 1 in 20 by chance)"
        + ("" if share is None else f": {100 * share:.0f}%")
        + ("" if dis is None else f"; {100 * dis:.1f}% of paired trials disagree")
    )
    return "\n".join(lines)
