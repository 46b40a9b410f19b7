"""The metrics every analysis command uses, defined once.

A run is read into a *trial table* (pandas, one row per trial, flat columns) and then
aggregated per ``(model, format)`` cell, plus an ``overall`` cell over every trial.

Trial columns: ``model``, ``format``, ``scenario_id``, ``sample``, ``status``, the score
flags ``parse_strict_ok``, ``parse_ok``, ``call_accuracy``, ``args_schema_valid``,
``stop_compliant``, ``leak_sanitized``, ``leak_raw``, ``no_call_correct``,
``final_answer_ok``, ``retry_recovered`` (nullable booleans), ``latency_s``,
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
* Every rate carries a Wilson 95% score interval (reports show it when samples repeat).

Per-cell metrics:

``parse_success``
    share of trials whose call attempts all decoded strictly (no JSON repair).
``parse_success_repaired``
    the same, allowing the lenient repair layer.
``call_accuracy``
    share of call scenarios where the expected calls were made with matching arguments.
``schema_validity``
    share of trials whose call arguments validate against the tools' JSON Schemas.
``stop_compliance``
    share of trials that stopped cleanly (no text after the call, no invented
    Observation, no extra actions, not cut by the length limit).
``leak_rate``
    share of trials whose user-visible text still shows raw format markers after
    sanitizing (lower is better).
``leak_rate_raw``
    the same before sanitizing: how often the model writes markers outside calls.
``no_call_accuracy``
    share of no-call scenarios answered in text without calling.
``final_answer_accuracy``
    share of multi-turn scenarios whose final answer passes the scenario's check.
``retry_recovery``
    share of retried trials (``--retry-on-parse-error``) that the retry fixed.
``infra_error_rate``
    trials the provider or its recording failed, over all trials (lower is better).
``harness_error_rate``
    trials toolbench itself failed (``harness_error``), over all trials (lower is better).
``latency_p50``, ``latency_p95``
    median and 95th percentile of trial wall time in seconds (``ok`` trials).
``prompt_tokens_mean``, ``completion_tokens_mean``
    mean tokens per trial over ``ok`` trials that report usage.
``cost_total``
    summed provider cost (USD) over all trials that report one.
``n_trials``
    number of trials in the cell, whatever their status.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from toolbench import codes
from toolbench.errors import UnknownNameError
from toolbench.outcome import trial_outcome
from toolbench.results import RunInfo, TrialResult
from toolbench.store import read_info, read_projected, read_trials_at

OVERALL = "overall"
"""Model and format label of the cell that pools every trial."""

Z95 = 1.959963984540054

SCORE_FLAGS: tuple[str, ...] = (
    "parse_strict_ok",
    "parse_ok",
    "call_accuracy",
    "args_schema_valid",
    "stop_compliant",
    "leak_sanitized",
    "leak_raw",
    "no_call_correct",
    "final_answer_ok",
    "retry_recovered",
)

TRIAL_COLUMNS: tuple[str, ...] = (
    "model",
    "format",
    "scenario_id",
    "sample",
    "status",
    *SCORE_FLAGS,
    "latency_s",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "errors",
    "outcome",
)

RATE_SOURCES: dict[str, str] = {
    "parse_success": "parse_strict_ok",
    "parse_success_repaired": "parse_ok",
    "call_accuracy": "call_accuracy",
    "schema_validity": "args_schema_valid",
    "stop_compliance": "stop_compliant",
    "leak_rate": "leak_sanitized",
    "leak_rate_raw": "leak_raw",
    "no_call_accuracy": "no_call_correct",
    "final_answer_accuracy": "final_answer_ok",
    "retry_recovery": "retry_recovered",
}
"""Each model rate and the trial flag it averages."""

RATES: tuple[str, ...] = (*RATE_SOURCES, "infra_error_rate", "harness_error_rate")
VALUES: tuple[str, ...] = (
    "latency_p50",
    "latency_p95",
    "prompt_tokens_mean",
    "completion_tokens_mean",
    "cost_total",
    "n_trials",
)
METRICS: tuple[str, ...] = (*RATES, *VALUES)

LOWER_IS_BETTER = frozenset(
    {
        "leak_rate",
        "leak_rate_raw",
        "infra_error_rate",
        "harness_error_rate",
        "latency_p50",
        "latency_p95",
        "prompt_tokens_mean",
        "completion_tokens_mean",
        "cost_total",
    }
)
"""Metrics where a rise is a regression; for the rest (``n_trials`` aside) a fall is."""

HEADLINE: tuple[str, ...] = (
    "call_accuracy",
    "parse_success",
    "no_call_accuracy",
    "stop_compliance",
    "leak_rate",
)
"""The metrics drawn as heatmaps and shown in short summaries."""

STATUS_CODES: dict[str, str] = {
    "infra_error": codes.INFRA_ERROR,
    "unsupported": codes.UNSUPPORTED,
    "cassette_missing": codes.CASSETTE_MISSING,
    "cassette_unreadable": codes.CASSETTE_UNREADABLE,
    "harness_error": codes.HARNESS_ERROR,
}
HARNESS_STATUSES = frozenset({"harness_error"})
"""Statuses that are toolbench's own faults (the rest of the non-``ok`` ones are infra)."""


def check_metric(name: str) -> str:
    """Return ``name`` if it is a metric, else raise a did-you-mean error."""
    if name not in METRICS:
        raise UnknownNameError("metric", name, METRICS)
    return name


def worse_by(metric: str, value: float, baseline: float) -> float:
    """How much worse ``value`` is than ``baseline`` (positive = regression)."""
    return value - baseline if metric in LOWER_IS_BETTER else baseline - value


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

    @property
    def run_id(self) -> str:
        return self.info.run_id if self.info else self.run_dir.name

    def trials(self, offsets: Iterable[int]) -> list[TrialResult]:
        """The full records at these byte offsets (for drill-downs and rescoring)."""
        return read_trials_at(self.path, list(offsets))


def trial_row(d: dict[str, Any]) -> tuple[Any, ...]:
    """Project one raw results line (already JSON-decoded) onto :data:`TRIAL_COLUMNS`."""
    status = d.get("status", "ok")
    scores = d.get("scores") or {}
    flags = [scores.get(f) for f in SCORE_FLAGS]
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
        trial_outcome(status, scores),
    )


def frame(rows: Sequence[tuple[Any, ...]], offsets: Sequence[int] | None = None) -> pd.DataFrame:
    """Build the typed trial table from projected rows."""
    df = pd.DataFrame.from_records(list(rows), columns=list(TRIAL_COLUMNS))
    for col in ("model", "format", "scenario_id", "status", "errors", "outcome"):
        df[col] = df[col].astype(str)
    df["sample"] = df["sample"].astype("int64")
    for col in SCORE_FLAGS:
        df[col] = df[col].astype("boolean")
    df["latency_s"] = df["latency_s"].astype("float64")
    for col in ("prompt_tokens", "completion_tokens"):
        df[col] = df[col].astype("Int64")
    df["cost"] = df["cost"].astype("Float64")
    if offsets is not None:
        df["_offset"] = pd.Series(offsets, dtype="int64")
    return df


def load_table(run: str | Path) -> TrialTable:
    """Read ``runs/<id>/results.jsonl`` into a :class:`TrialTable`.

    Through the store's projected reader: lines are decoded with :mod:`json` and
    projected by :func:`trial_row`, never validated in full, which keeps a 50,000-trial
    run fast. A torn last line (a killed run) is skipped; a trial written twice is counted
    once (the first line) and a warning names the file; older schemas are migrated.
    """
    read = read_projected(run, trial_row)
    run_dir = read.path.parent
    df = frame(read.rows, read.offsets)
    return TrialTable(run_dir, read.path, df, read_info(run_dir), read.duplicates)


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


def _flag_floats(df: pd.DataFrame) -> pd.DataFrame:
    """Score flags as floats (1/0/NaN) over ``ok`` trials, for fast grouped sums."""
    ok = df["status"] == "ok"
    out = pd.DataFrame({"model": df["model"], "format": df["format"]})
    for rate, col in RATE_SOURCES.items():
        out[rate] = df[col].astype("Float64").astype("float64").where(ok)
    harness = df["status"].isin(HARNESS_STATUSES)
    out["infra_error_rate"] = (~ok & ~harness).astype("float64")
    out["harness_error_rate"] = harness.astype("float64")
    out["latency_s"] = df["latency_s"].where(ok)
    out["prompt_tokens"] = df["prompt_tokens"].astype("Float64").astype("float64").where(ok)
    out["completion_tokens"] = df["completion_tokens"].astype("Float64").astype("float64").where(ok)
    out["cost"] = df["cost"].astype("float64")
    return out


def _opt(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _cell(model: str, fmt: str, g: pd.DataFrame) -> CellStats:
    values: dict[str, float | None] = {}
    counts: dict[str, tuple[int, int]] = {}
    for rate in RATES:
        col = g[rate]
        n = int(col.count())
        k = int(col.sum()) if n else 0
        counts[rate] = (k, n)
        values[rate] = k / n if n else None
    lat = g["latency_s"].dropna()
    values["latency_p50"] = _opt(lat.quantile(0.5)) if len(lat) else None
    values["latency_p95"] = _opt(lat.quantile(0.95)) if len(lat) else None
    values["prompt_tokens_mean"] = _opt(g["prompt_tokens"].mean())
    values["completion_tokens_mean"] = _opt(g["completion_tokens"].mean())
    cost = g["cost"].dropna()
    values["cost_total"] = float(cost.sum()) if len(cost) else None
    values["n_trials"] = float(len(g))
    return CellStats(model, fmt, values, counts)


def aggregate(df: pd.DataFrame, overall: bool = True) -> list[CellStats]:
    """Metrics per ``(model, format)`` cell, sorted, then the overall cell."""
    flo = _flag_floats(df)
    cells = [_cell(str(m), str(f), g) for (m, f), g in flo.groupby(["model", "format"], sort=True)]
    if overall and len(df):
        cells.append(_cell(OVERALL, OVERALL, flo))
    return cells


def cell_map(cells: Iterable[CellStats]) -> dict[tuple[str, str], CellStats]:
    return {c.key: c for c in cells}


def fmt_value(metric: str, v: float | None) -> str:
    """A metric value for tables: rates as percentages, the rest plainly."""
    if v is None:
        return "n/a"
    if metric in RATES:
        return f"{100 * v:.1f}%"
    if metric == "n_trials":
        return str(int(v))
    if metric == "cost_total":
        return f"${v:.4f}"
    if metric.startswith("latency"):
        return f"{v:.2f}s"
    return f"{v:.1f}"


def fmt_delta(metric: str, d: float | None) -> str:
    if d is None:
        return "n/a"
    if metric in RATES:
        return f"{100 * d:+.1f} pp"
    if metric == "n_trials":
        return f"{int(d):+d}"
    return f"{d:+.3g}"
