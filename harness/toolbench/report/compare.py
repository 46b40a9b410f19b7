"""Comparing two runs, two formats, or models and providers, with paired significance tests.

Per-cell deltas are plain differences of the metrics in :mod:`toolbench.report.metrics`.
For trials present on both sides (paired by model/format/scenario/sample across runs, by
model/scenario/sample across formats of one run, by format/scenario/sample across models;
a model string names its provider, so ``openai/x`` vs ``groq/x`` compares providers) an
exact McNemar test (the exact sign test on the discordant pairs) asks whether
the discordant pairs lean one way more than chance would: ``b`` pairs where only side A
succeeded, ``c`` where only side B did, two-sided exact binomial p-value on ``b + c``
trials with p = 1/2. Only ``ok`` trials where the flag applies on both sides are paired.
Each test also says the smallest difference its pairs could detect (alpha 0.05, power
0.8; :func:`~toolbench.report.paired_stats.detectable_difference`). ``--by variant`` pairs
the variants of one model (``MODEL@NAME``, :mod:`toolbench.model_names`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Literal

import pandas as pd

from toolbench.errors import UserError
from toolbench.metrics import get_metric, metric_names, view
from toolbench.model_names import bare_model
from toolbench.report.metrics import (
    CellStats,
    TrialTable,
    aggregate,
    cell_map,
    fmt_delta,
    fmt_value,
)
from toolbench.report.paired_stats import ALPHA, detectable_difference, mcnemar_exact
from toolbench.report.run_noise import RunNoise, render_noise, run_noise
from toolbench.report.text_table import text_table


@dataclass(frozen=True)
class PairedTest:
    """McNemar result for one metric over paired trials of one group."""

    group: str
    metric: str
    n_pairs: int
    a_rate: float | None
    b_rate: float | None
    only_a: int
    only_b: int
    p_value: float

    @property
    def significant(self) -> bool:
        return self.p_value < ALPHA

    @property
    def detectable(self) -> float | None:
        """The smallest difference these pairs could detect (alpha 0.05, power 0.8), so a
        "no significant difference" is read against what the test could have seen."""
        if not self.n_pairs:
            return None
        return detectable_difference(self.n_pairs, (self.only_a + self.only_b) / self.n_pairs)


def paired_metrics() -> tuple[str, ...]:
    """The rates ``compare`` tests pairwise (registered with a ``paired`` position)."""
    return view("paired")


def _bool_col(df: pd.DataFrame, metric: str) -> pd.Series[float]:
    """The metric's per-trial 0/1 values (NaN where it does not apply or not ``ok``)."""
    return get_metric(metric).per_trial(df)


def paired_tests(
    a: pd.DataFrame, b: pd.DataFrame, keys: list[str], group: list[str]
) -> list[PairedTest]:
    """McNemar per group for each paired metric; ``keys`` pair rows, ``group`` splits them."""
    cols = [*dict.fromkeys([*keys, *group])]
    left = a[cols].copy()
    right = b[cols].copy()
    paired = paired_metrics()
    for m in paired:
        left[m] = _bool_col(a, m)
        right[m] = _bool_col(b, m)
    merged = left.merge(right, on=keys, suffixes=("_a", "_b"))
    gcols = [g if g in keys else f"{g}_a" for g in group]
    out: list[PairedTest] = []
    if merged.empty:
        return out
    for gkey, g in merged.groupby(gcols, sort=True):
        label = " / ".join(str(x) for x in (gkey if isinstance(gkey, tuple) else (gkey,)))
        for m in paired:
            pa, pb = g[f"{m}_a"], g[f"{m}_b"]
            both = pa.notna() & pb.notna()
            pa, pb = pa[both], pb[both]
            n = int(both.sum())
            only_a = int(((pa == 1) & (pb == 0)).sum())
            only_b = int(((pa == 0) & (pb == 1)).sum())
            out.append(
                PairedTest(
                    label,
                    m,
                    n,
                    float(pa.mean()) if n else None,
                    float(pb.mean()) if n else None,
                    only_a,
                    only_b,
                    mcnemar_exact(only_a, only_b),
                )
            )
    return out


@dataclass
class Comparison:
    """Everything ``toolbench compare`` prints."""

    title: str
    a_name: str
    b_name: str
    cells: list[tuple[str, CellStats | None, CellStats | None]]
    tests: list[PairedTest]
    noise: RunNoise | None = field(default=None)
    """Run against run only: how much the two runs disagree (:mod:`.run_noise`)."""


def compare_runs(a: TrialTable, b: TrialTable) -> Comparison:
    """RUN_A vs RUN_B: same cells, trials paired by model/format/scenario/sample."""
    ca, cb = cell_map(aggregate(a.df)), cell_map(aggregate(b.df))
    keys = sorted(set(ca) | set(cb), key=lambda k: (k[0] == "overall", k))
    cells = [(_label(k), ca.get(k), cb.get(k)) for k in keys]
    tests = paired_tests(
        a.df, b.df, ["model", "format", "scenario_id", "sample"], ["model", "format"]
    )
    noise = run_noise(a.df, b.df)
    return Comparison(f"{a.run_id} -> {b.run_id}", a.run_id, b.run_id, cells, tests, noise)


def compare_formats(t: TrialTable, fmt_a: str, fmt_b: str) -> Comparison:
    """Format A vs format B in one run, per model, trials paired by scenario and sample."""
    known = sorted(set(t.df["format"]))
    for f in (fmt_a, fmt_b):
        if f not in known:
            raise UserError(
                f"--formats: format '{f}' is not in run '{t.run_id}' (run has: {', '.join(known)})"
            )
    da = t.df[t.df["format"] == fmt_a]
    db = t.df[t.df["format"] == fmt_b]
    ca = {c.model: c for c in aggregate(da)}
    cb = {c.model: c for c in aggregate(db)}
    models = sorted(set(ca) | set(cb), key=lambda m: (m == "overall", m))
    cells = [(m, ca.get(m), cb.get(m)) for m in models]
    tests = paired_tests(da, db, ["model", "scenario_id", "sample"], ["model"])
    return Comparison(f"{fmt_a} vs {fmt_b} in {t.run_id}", fmt_a, fmt_b, cells, tests)


By = Literal["model", "format", "variant"]
BY_CHOICES: tuple[By, ...] = ("model", "format", "variant")
POOLED = {"model": "all formats", "format": "all models", "variant": "all formats"}
"""The label of the test pooled over the other dimension (more pairs, more power)."""


def compare_by(t: TrialTable, by: By, picks: list[str] | None = None) -> list[Comparison]:
    """Every pair of ``by`` values (models, or formats) of one run, or the two ``picks``.

    Cells are the values of the other dimension; trials pair on it plus scenario and
    sample, so a pair compares like with like. Each pair also gets a test pooled over
    the other dimension (``all formats`` / ``all models``).

    With ``by="variant"`` the values are the run's models, and only the variants of one
    model (``openai/x@low`` and ``openai/x@high``, or ``openai/x`` itself) are paired.
    """
    col = "format" if by == "format" else "model"
    other = "model" if by == "format" else "format"
    known = sorted(set(t.df[col]))
    option = f"--{col}s"
    for p in picks or ():
        if p not in known:
            raise UserError(f"{option}: {col} '{p}' is not in run '{t.run_id}' (run has: "
                            f"{', '.join(known)})")  # fmt: skip
    values = list(dict.fromkeys(picks)) if picks else known
    pairs = list(combinations(values, 2))
    if by == "variant":
        pairs = _variant_pairs(t.run_id, values, pairs, bool(picks))
    elif len(values) < 2:
        raise UserError(
            f"compare --by {by}: run '{t.run_id}' has one {by} ({', '.join(values)}); "
            f"nothing to compare"
        )
    out: list[Comparison] = []
    for a, b in pairs:
        da = t.df[t.df[col] == a].assign(_pool=POOLED[by])
        db = t.df[t.df[col] == b].assign(_pool=POOLED[by])
        ca = {getattr(c, other): c for c in aggregate(da, overall=False)}
        cb = {getattr(c, other): c for c in aggregate(db, overall=False)}
        cells = [(k, ca.get(k), cb.get(k)) for k in sorted(set(ca) | set(cb))]
        keys = [other, "scenario_id", "sample"]
        tests = paired_tests(da, db, keys, [other]) + paired_tests(da, db, keys, ["_pool"])
        out.append(Comparison(f"{a} vs {b} in {t.run_id}", a, b, cells, tests))
    return out


def _variant_pairs(
    run_id: str, values: list[str], pairs: list[tuple[str, str]], picked: bool
) -> list[tuple[str, str]]:
    """The pairs of ``values`` that are variants of one model; refused when none are."""
    same = [(a, b) for a, b in pairs if bare_model(a) == bare_model(b)]
    if picked and not same:
        a, b = values
        raise UserError(
            f"compare --by variant: {a} and {b} are not variants of one model"
            f" ({bare_model(a)}, {bare_model(b)})"
        )
    if not same:
        raise UserError(
            f"compare --by variant: run '{run_id}' has no model under two variants"
            f" (models: {', '.join(values)}); name them MODEL@NAME in --models"
        )
    return same


def combine(a: TrialTable, b: TrialTable) -> TrialTable:
    """Two runs read as one (``compare RUN_A RUN_B --by model``: e.g. one model per run).

    A trial key held by both would pair a trial with itself: refused, since those runs
    are compared as runs (without ``--by``)."""
    keys = ["model", "format", "scenario_id", "sample"]
    both = a.df[keys].merge(b.df[keys], on=keys)
    if len(both):
        k = both.iloc[0]
        raise UserError(
            f"compare --by: runs '{a.run_id}' and '{b.run_id}' both hold trial {k['model']} / "
            f"{k['format']} / {k['scenario_id']} #{k['sample']}; compare them without --by"
        )
    df = pd.concat([a.df.drop(columns="_offset", errors="ignore"),
                    b.df.drop(columns="_offset", errors="ignore")], ignore_index=True)  # fmt: skip
    return TrialTable(a.run_dir, a.path, df, None, a.duplicates + b.duplicates)


def render_comparisons(cmps: list[Comparison], by: By) -> str:
    """Each pair's comparison, then how many tests were made (no correction applied)."""
    parts = [render_comparison(c) for c in cmps]
    n = sum(1 for c in cmps for x in c.tests if x.n_pairs)
    parts.append(
        f"{len(cmps)} pair(s) of {by}s, {n} test(s) with pairs; each at alpha {ALPHA}, no "
        "correction for multiple comparisons: expect about 1 in 20 to be significant by chance"
    )
    return "\n\n".join(parts)


def _label(k: tuple[str, str]) -> str:
    return "overall" if k == ("overall", "overall") else f"{k[0]} / {k[1]}"


def delta(metric: str, a: CellStats | None, b: CellStats | None) -> float | None:
    va = a.values.get(metric) if a else None
    vb = b.values.get(metric) if b else None
    return None if va is None or vb is None else vb - va


def render_comparison(cmp: Comparison, metrics: tuple[str, ...] | None = None) -> str:
    """The text ``toolbench compare`` prints: deltas per cell, then the paired tests."""
    if metrics is None:
        metrics = metric_names()
    parts = [f"compare {cmp.title}", ""]
    rows = []
    for label, a, b in cmp.cells:
        for m in metrics:
            va = a.values.get(m) if a else None
            vb = b.values.get(m) if b else None
            if va is None and vb is None:
                continue
            rows.append(
                [label, m, fmt_value(m, va), fmt_value(m, vb), fmt_delta(m, delta(m, a, b))]
            )
    parts.append(text_table(["cell", "metric", cmp.a_name, cmp.b_name, "delta"], rows))
    parts += ["", f"paired McNemar tests (exact; significant when p < {ALPHA}):"]
    trows = [
        [
            t.group,
            t.metric,
            str(t.n_pairs),
            fmt_value(t.metric, t.a_rate),
            fmt_value(t.metric, t.b_rate),
            str(t.only_a),
            str(t.only_b),
            f"{t.p_value:.4g}",
            "n/a" if t.detectable is None else f"{100 * t.detectable:.1f} pts",
            _verdict(t, cmp.a_name, cmp.b_name),
        ]
        for t in cmp.tests
    ]
    if trows:
        headers = ["group", "metric", "pairs", cmp.a_name, cmp.b_name]
        headers += [f"only {cmp.a_name}", f"only {cmp.b_name}", "p", "detectable", "verdict"]
        parts.append(text_table(headers, trows))
    else:
        parts.append("no paired trials")
    if cmp.noise is not None:
        parts += ["", render_noise(cmp.noise, cmp.a_name, cmp.b_name)]
    return "\n".join(parts)


def _verdict(t: PairedTest, a: str, b: str) -> str:
    if t.n_pairs == 0:
        return "n/a"
    if not t.significant:
        return "no significant difference"
    return f"{a} better" if t.only_a > t.only_b else f"{b} better"
