"""The metrics every analysis command uses, defined once.

A run is read into a *trial table* (pandas, one row per trial, flat columns) and then
aggregated per ``(model, format)`` cell, plus an ``overall`` cell over every trial.

Trial columns (:func:`trial_columns`): ``model``, ``format``, ``scenario_id``,
``sample``, ``status``, the trial flags the registered metrics read (``parse_strict_ok``,
``parse_ok``, ``call_accuracy``, ... as nullable booleans), ``latency_s``,
``prompt_tokens``, ``completion_tokens``, ``cost``, ``errors`` (error codes joined by
``;``) and ``outcome`` (``pass``/``fail`` for trials that reached the model, else the
status). A trial *passes* when none of ``call_accuracy``, ``no_call_correct``,
``final_answer_ok`` and ``parse_ok`` is false.

Rules shared by every rate:

* ``None`` means "not applicable" and leaves the denominator (``call_accuracy`` on a
  no-call scenario, ``parse_*`` when no turn tried to call, ...).
* Trials whose ``status`` is not ``ok`` never reached the model or never got an
  answer: they are not model failures, so they are left out of every model rate. Those
  the provider or its recording caused (``infra_error``, ``unsupported``,
  ``cassette_missing``, ``cassette_unreadable``) are counted in ``infra_error_rate``;
  toolbench's own faults (``harness_error``) in ``harness_error_rate``.
* A trial written twice (two processes resuming one run before runs were locked) is
  counted once, the first line kept, with a warning on stderr.
* Every rate carries a Wilson 95% score interval and its denominator, shown beside it
  in the terminal table, the HTML report and the Markdown summary
  (``23.1% [15.2, 33.4] n=52``, :func:`fmt_with_interval`).

The per-cell metrics are registered objects, each defined once in
:mod:`toolbench.metrics` (name, source, rate or value, direction, unit, description);
``python -m toolbench.metrics.metrics_doc`` prints them as a table.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolbench import codes
from toolbench.metrics import metric_registry as registry
from toolbench.metrics.metric_registry import score_flags
from toolbench.metrics.stream_metrics import STREAM_COLUMNS, stream_row, stream_types
from toolbench.outcome import trial_outcome
from toolbench.results import RunInfo, TrialResult, named_value
from toolbench.scoring.scorer import value_kind
from toolbench.store import read_info, read_projected, read_trials_at

if TYPE_CHECKING:  # imported where a trial table is built: the run summary may not need it
    import pandas as pd

OVERALL = "overall"
"""Model and format label of the cell that pools every trial."""

Z95 = 1.959963984540054

STATUS_CODES: dict[str, str] = {
    "infra_error": codes.INFRA_ERROR,
    "unsupported": codes.UNSUPPORTED,
    "cassette_missing": codes.CASSETTE_MISSING,
    "cassette_unreadable": codes.CASSETTE_UNREADABLE,
    "harness_error": codes.HARNESS_ERROR,
}

_BASE_COLUMNS = ("model", "format", "scenario_id", "sample", "status")
_TAIL_COLUMNS = ("latency_s", "prompt_tokens", "completion_tokens", "cost", "errors", "outcome")


_DTYPES = {"boolean": "boolean", "number": "Float64", "label": "string"}
"""The column type of a named value of each kind (nullable: None is "not applicable")."""


KNOB_PARAMS = ("tool_choice", "parallel_tool_calls", "response_format")
"""The request parameters a format option sends (``native:tool_choice=required``)."""
_PRIVATE_COLUMNS = ("_knobs",)
"""Columns one analysis reads and no export shows: ``_knobs``, the knobs a trial asked
for that were not sent, and why (:mod:`toolbench.report.knobs`; None: none)."""


def trial_columns() -> tuple[str, ...]:
    """The trial table's public columns: keys, status, every named value a registered
    metric reads (its ``flag``: a core check or a registered scorer's value), latency,
    tokens, cost, error codes, outcome and the streamed-trial columns
    (:data:`~toolbench.metrics.stream_metrics.STREAM_COLUMNS`, empty for other trials)."""
    return (*_BASE_COLUMNS, *score_flags(), *_TAIL_COLUMNS, *STREAM_COLUMNS)


def table_columns() -> tuple[str, ...]:
    """What :func:`trial_row` gives: the public columns, then the private ones."""
    return (*trial_columns(), *_PRIVATE_COLUMNS)


def check_metric(name: str) -> str:
    """Return ``name`` if it is a metric, else raise a did-you-mean error."""
    return registry.get_metric(name).name


def worse_by(metric: str, value: float, baseline: float) -> float:
    """How much worse ``value`` is than ``baseline`` (positive = regression)."""
    return registry.get_metric(metric).worse_by(value, baseline)


# --------------------------------------------------------------------------- reading


@dataclass
class TrialTable:
    """A run read for analysis: the trial table plus where each trial's full record is."""

    run_dir: Path
    path: Path
    df: pd.DataFrame
    info: RunInfo | None = None
    duplicates: int = 0
    """Lines that repeated an earlier trial's key and were left out."""
    line_of: dict[int, int] = field(default_factory=dict)
    """Each row's line number (from 1) by its byte offset, for the errors of drill-downs."""

    @property
    def run_id(self) -> str:
        return self.info.run_id if self.info else self.run_dir.name

    def trials(self, offsets: Iterable[int]) -> list[TrialResult]:
        """The full records at these byte offsets (for drill-downs and rescoring)."""
        picked = list(offsets)
        return read_trials_at(self.path, picked, [self.line_of.get(o, 0) for o in picked])


def dropped_knobs(d: dict[str, Any]) -> dict[str, str] | None:
    """The knobs a raw results line asked for and was not sent, with why (None: none).

    A knob counts when the trial asked for it (``params.asked``) and it was dropped
    (``params.dropped``): the cell then measured the provider's default, not the knob."""
    params = d.get("params")
    if not isinstance(params, dict):
        return None
    asked, dropped = params.get("asked") or {}, params.get("dropped") or {}
    out = {k: str(dropped[k]) for k in KNOB_PARAMS if k in dropped and k in asked}
    return out or None


def trial_row(d: dict[str, Any]) -> tuple[Any, ...]:
    """Project one raw results line (already JSON-decoded) onto :func:`table_columns`."""
    status = d.get("status", "ok")
    scores = d.get("scores") or {}
    flags = [named_value(scores, f) for f in score_flags()]
    if status != "ok":
        errs = [d.get("error_code") or STATUS_CODES.get(status, status)]
    else:
        errs = list(scores.get("errors") or ())
    return (
        d["model"],
        d["format"],
        d["scenario_id"],
        int(d.get("sample", 0)),
        status,
        *flags,
        float("nan") if d.get("latency_s") is None else float(d["latency_s"]),
        d.get("prompt_tokens"),
        d.get("completion_tokens"),
        d.get("cost"),
        ";".join(errs),
        trial_outcome(status, lambda name: named_value(scores, name)),
        *stream_row(d),
        dropped_knobs(d),
    )


def frame(rows: Sequence[tuple[Any, ...]], offsets: Sequence[int] | None = None) -> pd.DataFrame:
    """Build the typed trial table from projected rows."""
    import pandas as pd

    df = pd.DataFrame.from_records(list(rows), columns=list(table_columns()))
    for col in ("model", "format", "scenario_id", "status", "errors", "outcome"):
        df[col] = df[col].astype(str)
    df["sample"] = df["sample"].astype("int64")
    for col in score_flags():
        df[col] = df[col].astype(_DTYPES[value_kind(col) or "boolean"])
    df["latency_s"] = df["latency_s"].astype("float64")
    for col in ("prompt_tokens", "completion_tokens"):
        df[col] = df[col].astype("Int64")
    df["cost"] = df["cost"].astype("Float64")
    stream_types(df)
    if offsets is not None:
        df["_offset"] = pd.Series(offsets, dtype="int64")
    return df


def load_table(run: str | Path) -> TrialTable:
    """Read ``runs/<id>/results.jsonl`` into a :class:`TrialTable`.

    Through the store's projected reader: lines are decoded with :mod:`json`, validated
    as every command validates them, and projected by :func:`trial_row`. A torn last
    line (a killed run) is skipped; a trial written twice is counted
    once (the first line) and a warning names the file; older schemas are migrated.
    """
    read = read_projected(run, trial_row)
    run_dir = read.path.parent
    df = frame(read.rows, read.offsets)
    line_of = dict(zip(read.offsets, read.lines, strict=True))
    return TrialTable(run_dir, read.path, df, read_info(run_dir), read.duplicates, line_of)


# --------------------------------------------------------------------------- statistics


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval for ``k`` successes out of ``n`` (None when ``n`` is 0)."""
    if n <= 0:
        return None
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class CellStats:
    """Every metric of one ``(model, format)`` cell (or the overall cell)."""

    model: str
    format: str
    values: dict[str, float | None]
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per rate: (successes, denominator)."""

    @property
    def label(self) -> str:
        if self.model == OVERALL and self.format == OVERALL:
            return OVERALL
        return f"{self.model} / {self.format}"

    @property
    def key(self) -> tuple[str, str]:
        return (self.model, self.format)

    def interval(self, metric: str) -> tuple[float, float] | None:
        if metric not in self.counts:
            return None
        return wilson(*self.counts[metric])


def _per_trial(df: pd.DataFrame, metrics: list[registry.Metric]) -> pd.DataFrame:
    """Each metric's per-trial series (floats, NaN = left out), for fast grouped work."""
    import pandas as pd

    out = pd.DataFrame({"model": df["model"], "format": df["format"]})
    for m in metrics:
        out[m.name] = m.per_trial(df)
    return out


def _cell(model: str, fmt: str, g: pd.DataFrame, metrics: list[registry.Metric]) -> CellStats:
    values: dict[str, float | None] = {}
    counts: dict[str, tuple[int, int]] = {}
    for m in metrics:
        v, kn = m.value(g[m.name])
        values[m.name] = v
        if kn is not None:
            counts[m.name] = kn
    return CellStats(model, fmt, values, counts)


def aggregate(df: pd.DataFrame, overall: bool = True) -> list[CellStats]:
    """Metrics per ``(model, format)`` cell, sorted, then the overall cell."""
    metrics = registry.all_metrics()
    flo = _per_trial(df, metrics)
    cells = [
        _cell(str(m), str(f), g, metrics)
        for (m, f), g in flo.groupby(["model", "format"], sort=True)
    ]
    if overall and len(df):
        cells.append(_cell(OVERALL, OVERALL, flo, metrics))
    return cells


def cell_map(cells: Iterable[CellStats]) -> dict[tuple[str, str], CellStats]:
    return {c.key: c for c in cells}


def fmt_value(metric: str, v: float | None) -> str:
    """A metric value for tables, as its registered unit says (plain for unknown names)."""
    m = registry.find_metric(metric)
    return m.fmt(v) if m is not None else registry.fmt_unit("number", v)


def interval_text(cell: CellStats, metric: str, sep: str = " ") -> str:
    """``[low, high] n=N`` (Wilson 95%, in percent) for a rate with a denominator, else "".

    ``n`` is the rate's denominator: the ``ok`` trials where the metric applies."""
    if metric not in cell.counts:
        return ""
    n = cell.counts[metric][1]
    ci = cell.interval(metric)
    if ci is None:
        return f"n={n}"
    return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]{sep}n={n}"


def fmt_with_interval(cell: CellStats, metric: str, sep: str = " ") -> str:
    """The value, then for rates its interval and its denominator, ``sep`` between the
    three (the terminal table stacks them on three lines of a narrow column)."""
    text = fmt_value(metric, cell.values.get(metric))
    ci = interval_text(cell, metric, sep)
    return f"{text}{sep}{ci}" if ci else text


def fmt_delta(metric: str, d: float | None) -> str:
    """A difference of two values of ``metric`` (``+1.0 pp`` for rates)."""
    m = registry.find_metric(metric)
    if m is None:
        return "n/a" if d is None else f"{d:+.3g}"
    return m.fmt_delta(d)
