"""The CI gate: check a run's metrics against bounds, exit 1 listing every violation.

Bounds come from the command line (``--min metric=v``, ``--max metric=v``,
``--max-drop metric=v`` against ``--baseline``) and from a config file: ``--config FILE``,
else ``toolbench.toml`` (``[gate]`` table) or ``pyproject.toml``
(``[tool.toolbench.gate]``) in the current directory. Keys: ``min``, ``max``,
``max_drop`` (tables of metric -> number), ``per_cell`` (bool) and ``significant``
(bool, ``--significant``: a ``max_drop`` bound on a rate fails only when the drop is
also significant, :mod:`toolbench.report.drop_tests`). Command-line values override file
values metric by metric.

Without ``per_cell`` only the overall cell is checked; with it every (model, format) cell
is checked too. Metric names are those of the registry (:mod:`toolbench.metrics`, plugins
included; an unknown one gets a did-you-mean). A drop is measured in the metric's bad
direction, as registered (a fall for accuracies, a rise for leak, infra-error, latency,
token and cost metrics). A metric that does not apply to a cell (no denominator) is not
checked there.

**Repeated samples.** ``pass_hat_k`` (pass^k: every one of k samples of a scenario
succeeds) and ``pass_at_k`` (pass@k: at least one does) take ``min`` and ``max`` bounds
like a rate, on a run with ``--samples`` 2 or more; a sample's success is its
``loop_success`` on a loop scenario, else its ``call_accuracy``
(:mod:`toolbench.report.repeat_samples`). k is ``--pass-k`` (toml: ``pass_k``), else the
run's samples. They are values per scenario averaged over a cell's scenarios, not
per-trial rates, so they are computed here from the trials rather than registered as
metrics; a drop bound on them is refused (a pass^k difference has no paired test here).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolbench.errors import UserError
from toolbench.metrics import get_metric
from toolbench.report.drop_tests import CellKey, DropTest
from toolbench.report.gate_config import REPEAT_BOUNDS as REPEAT_BOUNDS
from toolbench.report.gate_config import GateConfig as GateConfig
from toolbench.report.gate_config import from_options as from_options
from toolbench.report.gate_config import load_config as load_config
from toolbench.report.gate_config import parse_bound as parse_bound
from toolbench.report.metrics import (
    OVERALL,
    CellStats,
    TrialTable,
    fmt_delta,
    fmt_value,
)
from toolbench.report.repeat_samples import CellRepeats, Estimate, pooled, repeats
from toolbench.report.text_table import text_table


@dataclass(frozen=True)
class Violation:
    cell: str
    metric: str
    kind: str
    value: float
    bound: float
    baseline: float | None = None
    p_value: float | None = None
    """With ``significant``: the drop's exact McNemar p-value."""


RepeatEstimates = dict[tuple[str, str], Estimate]
"""(cell label, pass_hat_k or pass_at_k) -> the estimate with its interval."""


def apply_repeat_bounds(
    cfg: GateConfig, table: TrialTable, cells: list[CellStats]
) -> RepeatEstimates:
    """Put the pass^k / pass@k values the bounds ask for into ``cells``' values (None
    where no scenario has k scored samples), and return their estimates. A run with one
    sample, or a k beyond its samples, is the user's error."""
    if not cfg.repeat_bounds:
        if cfg.pass_k is not None:
            raise UserError(f"{cfg.pass_k_from}: no pass_hat_k or pass_at_k bound to apply it to")
        return {}
    samples = table.info.samples if table.info is not None else None
    if samples is None:
        samples = int(table.df.groupby(["model", "format", "scenario_id"]).size().max())
    if samples < 2:
        raise UserError(
            f"gate: {cfg.repeat_bounds[0]} needs 2 or more samples per scenario; run "
            f"'{table.run_id}' has 1 (toolbench run --samples K)"
        )
    k = cfg.pass_k if cfg.pass_k is not None else samples
    if k > samples:
        raise UserError(
            f"{cfg.pass_k_from}: expected a k from 2 to {samples}, the run's samples (got {k})"
        )
    per_cell = repeats(table.df, k)
    by_key: dict[tuple[str, str], CellRepeats] = {(c.model, c.format): c for c in per_cell}
    by_key[(OVERALL, OVERALL)] = pooled(per_cell, OVERALL, OVERALL)
    out: RepeatEstimates = {}
    for cell in cells:
        rep = by_key.get(cell.key)
        for name in cfg.repeat_bounds:
            if rep is None:
                est = Estimate(None, None, 0)
            else:
                est = rep.pass_hat_k if name == "pass_hat_k" else rep.pass_at_k
            cell.values[name] = est.value
            out[(cell.label, name)] = est
    return out


def evaluate(
    cfg: GateConfig,
    cells: Sequence[CellStats],
    baseline: Sequence[CellStats] | None = None,
    tests: dict[tuple[CellKey, str], DropTest] | None = None,
) -> list[Violation]:
    """Every bound that does not hold, in cell order. With ``cfg.significant``, ``tests``
    (:func:`~toolbench.report.drop_tests.drop_tests`) decide the drops of rates."""
    if cfg.max_drop and baseline is None:
        raise UserError("--max-drop needs --baseline RUN")
    base = {c.key: c for c in baseline or ()}
    checked = [c for c in cells if cfg.per_cell or c.model == OVERALL]
    out: list[Violation] = []
    for c in checked:
        for m, bound in cfg.min.items():
            v = c.values.get(m)
            if v is not None and v < bound:
                out.append(Violation(c.label, m, "min", v, bound))
        for m, bound in cfg.max.items():
            v = c.values.get(m)
            if v is not None and v > bound:
                out.append(Violation(c.label, m, "max", v, bound))
        b = base.get(c.key)
        for m, bound in cfg.max_drop.items():
            v = c.values.get(m)
            bv = b.values.get(m) if b else None
            if v is None or bv is None or get_metric(m).worse_by(v, bv) <= bound + 1e-12:
                continue
            t = (tests or {}).get((c.key, m)) if cfg.significant else None
            tested = cfg.significant and get_metric(m).kind == "rate"
            if tested and (t is None or not t.significant):
                continue
            p = t.p_value if t is not None else None
            out.append(Violation(c.label, m, "max_drop", v, bound, bv, p))
    return out


def render_violations(
    violations: Sequence[Violation], estimates: RepeatEstimates | None = None
) -> str:
    """The violations as a table; a pass^k / pass@k value with its interval and the
    scenarios it is over (``s=``)."""
    rows = []
    for v in violations:
        est = (estimates or {}).get((v.cell, v.metric))
        if v.kind == "max_drop":
            bound = f"drop <= {fmt_delta(v.metric, v.bound).lstrip('+')}"
        elif est is not None:
            bound = f"{'>=' if v.kind == 'min' else '<='} {100 * v.bound:.1f}%"
        else:
            bound = f"{'>=' if v.kind == 'min' else '<='} {fmt_value(v.metric, v.bound)}"
        if v.p_value is not None:
            bound += f", significant (p={v.p_value:.3g})"
        base = fmt_value(v.metric, v.baseline) if v.baseline is not None else "-"
        value = est.text() if est is not None else fmt_value(v.metric, v.value)
        rows.append([v.cell, v.metric, value, bound, base])
    return text_table(["cell", "metric", "value", "bound", "baseline"], rows)
