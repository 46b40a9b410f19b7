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

import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.errors import UserError
from toolbench.metrics import get_metric
from toolbench.report.drop_tests import CellKey, DropTest
from toolbench.report.metrics import (
    OVERALL,
    CellStats,
    TrialTable,
    fmt_delta,
    fmt_value,
)
from toolbench.report.repeat_samples import CellRepeats, Estimate, pooled, repeats
from toolbench.report.text_table import text_table

_KINDS = ("min", "max", "max_drop")
_FLAGS = ("per_cell", "significant")
REPEAT_BOUNDS = {"pass_hat_k": "pass^k", "pass_at_k": "pass@k"}
"""Bounds on repeated samples (gate name -> the name the reports print)."""


@dataclass
class GateConfig:
    """Bounds per kind: ``min``/``max``/``max_drop`` -> metric -> number."""

    min: dict[str, float] = field(default_factory=dict)
    max: dict[str, float] = field(default_factory=dict)
    max_drop: dict[str, float] = field(default_factory=dict)
    per_cell: bool = False
    source: str | None = None
    significant: bool = False
    """A ``max_drop`` on a rate fails only when the drop is significant."""
    pass_k: int | None = None
    """The k of ``pass_hat_k`` / ``pass_at_k`` bounds (None: the run's samples)."""
    pass_k_from: str = "--pass-k"
    """Where ``pass_k`` was given, for the error that refuses it."""

    def merged(self, other: GateConfig, per_cell: bool) -> GateConfig:
        """``other`` (the command line) on top of ``self`` (the file)."""
        cli_k = other.pass_k is not None
        return GateConfig(
            {**self.min, **other.min},
            {**self.max, **other.max},
            {**self.max_drop, **other.max_drop},
            self.per_cell or per_cell,
            self.source,
            self.significant or other.significant,
            other.pass_k if cli_k else self.pass_k,
            other.pass_k_from if cli_k else self.pass_k_from,
        )

    @property
    def repeat_bounds(self) -> list[str]:
        """The pass^k / pass@k bounds asked for."""
        return sorted(m for m in {*self.min, *self.max} if m in REPEAT_BOUNDS)

    @property
    def empty(self) -> bool:
        return not (self.min or self.max or self.max_drop)


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


def parse_bound(option: str, text: str) -> tuple[str, float]:
    """``metric=value`` from the command line; errors name the option."""
    name, eq, raw = text.partition("=")
    name, raw = name.strip(), raw.strip()
    if not eq or not name or not raw:
        raise UserError(f"{option} '{text}': expected metric=value (e.g. call_accuracy=0.9)")
    if name in REPEAT_BOUNDS and option == "--max-drop":
        raise UserError(f"{option} '{text}': {name} takes --min or --max bounds, not a drop")
    if name not in REPEAT_BOUNDS:
        get_metric(name)
    try:
        value = float(raw)
    except ValueError:
        raise UserError(f"{option} '{text}': value '{raw}' is not a number") from None
    if not math.isfinite(value):
        raise UserError(f"{option} '{text}': value '{raw}' is not a finite number")
    why = out_of_range(name, value)
    if why is not None:
        raise UserError(f"{option} '{text}': {why}")
    return name, value


def out_of_range(metric: str, value: float) -> str | None:
    """Why a bound cannot mean anything (a rate is a fraction: ``call_accuracy=2`` would
    gate on nothing, or on everything), or None."""
    rate = metric in REPEAT_BOUNDS or get_metric(metric).kind == "rate"
    if rate and not 0 <= value <= 1:
        return f"{metric} is a rate from 0 to 1 (got {value:g})"
    return None


def from_options(
    mins: Sequence[str],
    maxs: Sequence[str],
    drops: Sequence[str],
    per_cell: bool,
    pass_k: int | None = None,
) -> GateConfig:
    if pass_k is not None and pass_k < 2:
        raise UserError(f"--pass-k: expected a k of 2 or more (got {pass_k})")
    return GateConfig(
        dict(parse_bound("--min", t) for t in mins),
        dict(parse_bound("--max", t) for t in maxs),
        dict(parse_bound("--max-drop", t) for t in drops),
        per_cell,
        pass_k=pass_k,
    )


def _table_from_file(path: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: cannot read: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: invalid TOML: {exc}") from None
    tool = data.get("tool", {})
    nested = tool.get("toolbench", {}).get("gate") if isinstance(tool, dict) else None
    table = data.get("gate") if path.name != "pyproject.toml" else None
    found = table if table is not None else nested
    if found is not None and not isinstance(found, dict):
        raise UserError(f"{path}: gate: expected a table")
    return found


def load_config(config: str | Path | None = None, cwd: Path | None = None) -> GateConfig:
    """Thresholds from ``--config`` or the current directory's toolbench.toml/pyproject.toml."""
    if config is not None:
        path = Path(config)
        if not path.is_file():
            raise UserError(f"--config: {path}: no such file")
        table = _table_from_file(path)
        if table is None:
            raise UserError(f"{path}: no [gate] or [tool.toolbench.gate] table")
        return _parse_table(path, table)
    base = cwd if cwd is not None else Path()
    for name in ("toolbench.toml", "pyproject.toml"):
        path = base / name
        if path.is_file():
            table = _table_from_file(path)
            if table is not None:
                return _parse_table(path, table)
    return GateConfig()


def _parse_table(path: Path, table: dict[str, Any]) -> GateConfig:
    prefix = "tool.toolbench.gate" if path.name == "pyproject.toml" else "gate"
    cfg = GateConfig(source=str(path))
    for key, val in table.items():
        where = f"{path}: {prefix}.{key}"
        if key in _FLAGS:
            if not isinstance(val, bool):
                raise UserError(f"{where}: expected true or false")
            setattr(cfg, key, val)
            continue
        if key == "pass_k":
            if isinstance(val, bool) or not isinstance(val, int) or val < 2:
                raise UserError(f"{where}: expected a whole number of samples, 2 or more")
            cfg.pass_k, cfg.pass_k_from = val, where
            continue
        if key not in _KINDS:
            raise UserError(
                f"{where}: unknown key (expected one of min, max, max_drop, per_cell, "
                "significant, pass_k)"
            )
        if not isinstance(val, dict):
            raise UserError(f"{where}: expected a table of metric = number")
        bounds: dict[str, float] = getattr(cfg, key)
        for metric, num in val.items():
            if metric in REPEAT_BOUNDS and key == "max_drop":
                raise UserError(f"{where}.{metric}: takes min or max bounds, not a drop")
            try:
                if metric not in REPEAT_BOUNDS:
                    get_metric(metric)
            except UserError as exc:
                raise UserError(f"{where}.{metric}: {exc}") from None
            if isinstance(num, bool) or not isinstance(num, int | float):
                raise UserError(f"{where}.{metric}: expected a number")
            why = out_of_range(metric, float(num))
            if why is not None:
                raise UserError(f"{where}.{metric}: {why}")
            bounds[metric] = float(num)
    return cfg


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
