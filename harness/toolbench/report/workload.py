"""Which (model, format) pair to use for a workload, and whether the suite can tell.

A *workload* is a selection of the run's scenarios (ids, tags, scenario files or folders,
opt-in suites, as ``run --scenarios`` names them and as the run recorded them; default:
every scenario of the run) and weights of rates (default: ``call_accuracy`` x1). Each
(model, format) cell of the run gets a *workload score*: the weighted mean of its
weighted rates over the selected trials, a rate where lower is better counted as
``1 - rate``; a weighted rate that applies to some cells but not to this one counts as
0 (a cell that never produced a call has no parse success to show), and one that
applies to no cell is dropped with a note.

The ranking rule, stated in the output: highest workload score, then lowest cost per
trial (``cost_total / n_trials``), then lowest ``latency_p50``, then model and format
name (so the answer is deterministic). Cost and latency only break ties.

**Can the suite separate the top two?** Their trials are paired on (scenario, sample);
each trial's own score is the weighted mean of the weighted flags that apply to it. An
exact sign test on the pairs whose scores differ (McNemar's test when one 0/1 rate is
weighted) gives p; with p >= 0.05 the output says the suite is too small to separate them.

It also gives the smallest difference the suite could detect at its size: the ``delta``
that solves Connor's (1987) sample size formula for McNemar's test,

    n = (z(1 - alpha/2) * sqrt(psi) + z(power) * sqrt(psi - delta^2))^2 / delta^2,

with ``n`` the paired trials of the top two, ``psi`` the share of discordant pairs (the
observed share, and at least ``delta``: a difference of ``delta`` needs that many
discordant pairs), alpha 0.05 two-sided and power 0.8. For one 0/1 rate, ``delta`` is a
difference of rates; for a weighted score it is approximate (the sign test counts which
side is better per pair, not by how much).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from toolbench.errors import UnknownNameError, UserError
from toolbench.metrics import get_metric
from toolbench.report.metrics import CellStats, TrialTable, aggregate, fmt_value
from toolbench.report.paired_stats import ALPHA, POWER, detectable_difference, mcnemar_exact
from toolbench.report.text_table import text_table

DEFAULT_WEIGHTS = {"call_accuracy": 1.0}
TIE_BREAKERS = ("cost per trial (cost_total / n_trials)", "latency_p50")
ALL_SCENARIOS = "all"
"""The selector of every scenario (as ``run --scenarios all``): here, all of the run's."""


# --------------------------------------------------------------------------- workload


@dataclass
class Workload:
    """The scenarios and weights a ranking is for."""

    selectors: list[str] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))

    def describe(self) -> str:
        sel = ", ".join(self.selectors) if self.selectors else "every scenario of the run"
        w = ", ".join(f"{m} x{_num(v)}" for m, v in self.weights.items())
        return f"workload: {sel}; weights: {w}"


def _num(v: float) -> str:
    return f"{v:g}"


def parse_weights(items: Sequence[str]) -> dict[str, float]:
    """``--weight METRIC=W`` (repeatable or comma-separated): rates with weights > 0."""
    out: dict[str, float] = {}
    for item in (p.strip() for raw in items for p in raw.split(",")):
        if not item:
            continue
        name, eq, value = item.partition("=")
        if not eq:
            raise UserError(f"--weight: '{item}' is not METRIC=WEIGHT (e.g. call_accuracy=2)")
        metric = get_metric(name.strip())
        if metric.kind != "rate" or metric.direction == "none":
            raise UserError(
                f"--weight: {metric.name} is not a rate with a better direction; weights "
                "apply to rates (cost and latency are the tie-breakers)"
            )
        try:
            w = float(value)
        except ValueError:
            w = math.nan
        if not (math.isfinite(w) and w > 0):
            raise UserError(f"--weight: {metric.name}: '{value}' is not a number above 0")
        out[metric.name] = w
    return out or dict(DEFAULT_WEIGHTS)


def select_trials(table: TrialTable, selectors: Sequence[str]) -> TrialTable:
    """Only the trials of the workload's scenarios, read from what the run recorded
    (its trials and ``run.json``), never from scenario files that may have changed since.

    A selector is a scenario id of the run, ``all``, a tag of the run's scenarios
    (``scenario_tags``), or a scenario file or folder the run read (``scenario_files``:
    its path, or a folder's name, such as an opt-in suite's ``bfcl-smoke``). One the run
    knows nothing of is refused in one line (with a did-you-mean)."""
    if not selectors:
        return table
    ids: set[str] = set()
    for sel in selectors:
        ids |= _scenarios_of(table, sel)
    df = table.df[table.df["scenario_id"].isin(ids)].reset_index(drop=True)
    if df.empty:
        raise UserError(
            f"--scenarios: no trial of run '{table.run_id}' is in the workload "
            f"({', '.join(selectors)})"
        )
    return TrialTable(table.run_dir, table.path, df, table.info, table.duplicates, table.line_of)


def _scenarios_of(table: TrialTable, sel: str) -> set[str]:
    """The scenario ids of the run ``sel`` names (refused when it names none)."""
    in_run = set(table.df["scenario_id"])
    if sel in in_run:
        return {sel}
    if sel == ALL_SCENARIOS:
        return in_run
    info = table.info
    tags = info.scenario_tags if info is not None else {}
    ids = {sc for sc, got in tags.items() if sel in got}
    given = Path(sel).resolve()
    for f in info.scenario_files if info is not None else []:
        path = Path(f.path)
        if given == path or given in path.parents or sel == path.parent.name:
            ids |= set(f.ids)
    if ids:
        return ids
    names = sorted({t for got in tags.values() for t in got})
    listing = (
        f"Tags of the run: {', '.join(names)}; or a scenario id, file or folder of the run"
        if names
        else "The run recorded no tags: give a scenario id, file or folder of the run"
    )
    choices = in_run | set(names) | {ALL_SCENARIOS}
    raise UnknownNameError(f"scenario or tag of run '{table.run_id}'", sel, choices, listing)


# --------------------------------------------------------------------------- scoring


def _utility(metric: str, v: float | None) -> float | None:
    if v is None:
        return None
    return 1.0 - v if get_metric(metric).direction == "lower" else v


def cell_score(cell: CellStats, weights: dict[str, float]) -> float:
    """The cell's workload score (a weighted metric it lacks counts as 0)."""
    total = sum(weights.values())
    return sum(w * (_utility(m, cell.values.get(m)) or 0.0) for m, w in weights.items()) / total


def trial_scores(df: pd.DataFrame, weights: dict[str, float]) -> pd.Series[float]:
    """Each trial's own score: the weighted mean of the weighted flags that apply to it
    (NaN when none does, or the trial did not reach the model)."""
    num = pd.Series(0.0, index=df.index)
    den = pd.Series(0.0, index=df.index)
    for m, w in weights.items():
        x = get_metric(m).per_trial(df)
        if get_metric(m).direction == "lower":
            x = 1.0 - x
        num = num + (w * x).fillna(0.0)
        den = den + w * x.notna()
    return (num / den).where(den > 0)


# --------------------------------------------------------------------------- ranking


@dataclass
class RankedCell:
    cell: CellStats
    score: float

    @property
    def cost_per_trial(self) -> float | None:
        cost, n = self.cell.values.get("cost_total"), self.cell.values.get("n_trials")
        return cost / n if cost is not None and n else None

    @property
    def latency(self) -> float | None:
        return self.cell.values.get("latency_p50")

    def key(self) -> tuple[float, float, float, str, str]:
        return (
            -self.score,
            math.inf if self.cost_per_trial is None else self.cost_per_trial,
            math.inf if self.latency is None else self.latency,
            self.cell.model,
            self.cell.format,
        )


@dataclass
class TopTwo:
    """The sign test and the power computation of the winner vs the runner-up."""

    pairs: int
    only_a: int
    """Pairs where the winner's trial scored higher."""
    only_b: int
    p_value: float
    detectable: float | None

    @property
    def significant(self) -> bool:
        return self.pairs > 0 and self.p_value < ALPHA and self.only_a > self.only_b


@dataclass
class PairRanking:
    workload: Workload
    trials: int
    weights: dict[str, float]
    """The weights used (metrics that apply to no cell dropped)."""
    dropped: list[str]
    ranked: list[RankedCell]
    top: TopTwo | None

    @property
    def decided_by(self) -> str:
        if len(self.ranked) < 2:
            return "only pair"
        names = ["workload score", *TIE_BREAKERS, "model and format name"]
        a, b = self.ranked[0].key(), self.ranked[1].key()
        pairs = zip(names, (a[0], a[1], a[2], a[3:]), (b[0], b[1], b[2], b[3:]), strict=True)
        return next((n for n, x, y in pairs if x != y), names[-1])


def rank_pairs(table: TrialTable, workload: Workload) -> PairRanking:
    """Rank every (model, format) cell of the workload's trials by the rule above."""
    t = select_trials(table, workload.selectors)
    cells = aggregate(t.df, overall=False)
    weights = {
        m: w for m, w in workload.weights.items() if any(c.values.get(m) is not None for c in cells)
    }
    dropped = [m for m in workload.weights if m not in weights]
    if not weights:
        raise UserError(
            f"--weight: none of {', '.join(workload.weights)} applies to a trial of the workload"
        )
    ranked = sorted((RankedCell(c, cell_score(c, weights)) for c in cells), key=RankedCell.key)
    top = _top_two(t.df, ranked, weights) if len(ranked) >= 2 else None
    return PairRanking(workload, len(t.df), weights, dropped, ranked, top)


def _top_two(df: pd.DataFrame, ranked: list[RankedCell], weights: dict[str, float]) -> TopTwo:
    sides = []
    for r in ranked[:2]:
        part = df[(df["model"] == r.cell.model) & (df["format"] == r.cell.format)]
        sides.append(part.assign(_s=trial_scores(part, weights))[["scenario_id", "sample", "_s"]])
    both = sides[0].merge(sides[1], on=["scenario_id", "sample"], suffixes=("_a", "_b")).dropna()
    n = len(both)
    only_a = int((both["_s_a"] > both["_s_b"]).sum())
    only_b = int((both["_s_a"] < both["_s_b"]).sum())
    psi = (only_a + only_b) / n if n else 0.0
    return TopTwo(n, only_a, only_b, mcnemar_exact(only_a, only_b), detectable_difference(n, psi))


# --------------------------------------------------------------------------- output


def rule_text(weights: dict[str, float]) -> str:
    w = " + ".join(f"{m} x{_num(v)}" for m, v in weights.items())
    return (
        f"rule: highest workload score (weighted mean of {w}; a lower-is-better rate counts "
        f"as 1 - rate), then lowest {TIE_BREAKERS[0]}, then lowest {TIE_BREAKERS[1]}, "
        "then model and format name"
    )


def verdict(r: PairRanking) -> list[str]:
    """What the top two mean: separated, tied, or the suite too small (with power)."""
    if r.top is None or len(r.ranked) < 2:
        return []
    a, b, t = r.ranked[0], r.ranked[1], r.top
    name_a, name_b = _name(a.cell), _name(b.cell)
    stats = (
        f"{t.pairs} paired trials, {t.only_a} vs {t.only_b} where one scored higher, "
        f"exact sign test p={t.p_value:.3g}"
    )
    lines = [f"top two: {name_a} vs {name_b}: {stats}"]
    if t.significant:
        lines.append(f"{name_a} is better than {name_b} on this workload (p < {ALPHA})")
        return lines
    power = (
        f"{t.pairs} paired trials are too few to detect even a 100-point difference"
        if t.detectable is None
        else f"at {t.pairs} paired trials it could detect a difference of "
        f"{100 * t.detectable:.1f} points or more (alpha {ALPHA}, power {POWER})"
    )
    lines.append(
        f"warning: the suite is too small to separate {name_a} and {name_b} "
        f"(observed {100 * (a.score - b.score):.1f} points, p={t.p_value:.3g}); {power}"
    )
    if r.decided_by != "workload score":
        lines.append(f"note: they tie on the workload score; {r.decided_by} decided")
    return lines


def _name(c: CellStats) -> str:
    return f"{c.model} / {c.format}"


def render(r: PairRanking) -> str:
    weighted = list(r.weights)
    lines = [r.workload.describe() + f" ({r.trials} trials)"]
    if r.dropped:
        lines.append(f"note: {', '.join(r.dropped)} applies to no trial of the workload; left out")
    rows = [
        [
            str(i),
            x.cell.model,
            x.cell.format,
            f"{100 * x.score:.1f}",
            *(fmt_value(m, x.cell.values.get(m)) for m in weighted),
            "n/a" if x.cost_per_trial is None else f"${x.cost_per_trial:.5f}",
            fmt_value("latency_p50", x.latency),
        ]
        for i, x in enumerate(r.ranked, 1)
    ]
    headers = ["rank", "model", "format", "score", *weighted, "cost/trial", "latency_p50"]
    lines += [text_table(headers, rows), ""]
    lines.append(f"{_name(r.ranked[0].cell)} ranks first (decided by {r.decided_by})")
    lines += verdict(r)
    lines += ["", rule_text(r.weights)]
    return "\n".join(lines)
