"""Metrics as registered objects: each one defined once, every view derived from here.

A :class:`Metric` says what it is computed from (a per-trial series over the trial
table, usually a :class:`~toolbench.results.TrialScores` flag), whether it is a *rate*
(a share of 0/1 trial values, with successes and denominator, hence a Wilson interval)
or a *value* (a reduction such as a percentile, a mean or a sum), which direction is
better, how it is shown, a one-line description, and where it appears: the headline
heatmaps, the terminal summary, the Markdown summary, the paired tests of ``compare``
and the ranking rule of ``recommend``. The terminal table, HTML, Markdown, JUnit,
export, gate, compare, recommend and the README's metric reference all read this
registry, so adding a metric is one module (and its test).

Built-in metrics and plugins come through the same door: the entry-point group
``toolbench.metrics`` (see :func:`load_metrics`); the built-ins are one entry point,
:mod:`toolbench.metrics.builtin_metrics`, declared in ``pyproject.toml`` only. An entry point
names a :class:`Metric` or a sequence of them. A plugin that fails to import is named in one
warning line on stderr and the other metrics still work.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import TYPE_CHECKING, Any, Literal

from toolbench.errors import UnknownNameError
from toolbench.registry import DuplicateNameError, Registry, instances_of

if TYPE_CHECKING:  # pandas is imported by whoever builds a trial table (slow to import)
    import pandas as pd

ENTRY_POINT_GROUP = "toolbench.metrics"

Kind = Literal["rate", "value"]
Direction = Literal["higher", "lower", "none"]
Unit = Literal["percent", "count", "usd", "seconds", "number"]
PerTrial = Callable[["pd.DataFrame"], "pd.Series[float]"]
"""Trial table -> one float per trial (NaN: the trial is left out of this metric)."""
Reduce = Callable[["pd.Series[float]"], float | None]
"""A value metric's per-trial series of one cell -> its value (None: not applicable)."""
PerRow = Callable[[Mapping[str, Any]], float | None]
"""One trial-table row (column name -> value) -> the rate's per-trial value, as
:data:`PerTrial` gives it for that row (None for its NaN: left out)."""

RESERVED = frozenset({"model", "format"})
_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")


@dataclass(frozen=True)
class Metric:
    """One metric. Views list the metrics whose position for them is set, in that order.

    ``headline``: heatmaps and short summaries; ``summary``: the terminal table after
    ``run``; ``markdown``: the Markdown summary's columns; ``paired``: McNemar tests in
    ``compare`` (rates only); ``ranking``: the criteria of ``recommend``'s rule, ranked
    by :attr:`direction`.
    """

    name: str
    description: str
    per_trial: PerTrial
    source: str
    """What it is computed from, in words (the README's reference shows it)."""
    kind: Kind = "rate"
    reduce: Reduce | None = None
    direction: Direction = "higher"
    unit: Unit = "percent"
    flag: str | None = None
    """The trial-table column (a ``TrialScores`` field) it reads, if any: registering
    the metric adds that column to the trial table (and so to ``export``)."""
    headline: int | None = None
    summary: int | None = None
    markdown: int | None = None
    paired: int | None = None
    ranking: int | None = None
    per_row: PerRow | None = None
    """The rate's per-trial value from one row, without pandas (optional; the same value
    :attr:`per_trial` gives, a test holds it). When every metric of the run summary has
    one, ``toolbench run`` prints its summary without importing pandas, which was a
    large share of the CPU of replaying 1,000 trials (:mod:`toolbench.report.summary_rows`)."""

    def __post_init__(self) -> None:
        if not _NAME.match(self.name) or self.name in RESERVED:
            raise ValueError(
                f"metric name {self.name!r}: expected [a-z][a-z0-9_]*, not model/format"
            )
        if self.kind == "value" and self.reduce is None:
            raise ValueError(f"metric {self.name!r}: a value metric needs a reduce function")
        if self.per_row is not None and self.kind != "rate":
            raise ValueError(f"metric {self.name!r}: only a rate has a per-row value")
        if self.kind == "rate" and self.unit != "percent":
            raise ValueError(f"metric {self.name!r}: a rate is shown as a percent")
        if self.paired is not None and self.kind != "rate":
            raise ValueError(f"metric {self.name!r}: only rates can be paired")
        if self.ranking is not None and self.direction == "none":
            raise ValueError(f"metric {self.name!r}: a ranking metric needs a direction")

    def value(self, series: pd.Series[float]) -> tuple[float | None, tuple[int, int] | None]:
        """This metric over one cell's per-trial series: (value, (successes, n) for rates)."""
        if self.kind == "rate":
            n = int(series.count())
            k = int(series.sum()) if n else 0
            return (k / n if n else None), (k, n)
        assert self.reduce is not None
        return self.reduce(series), None

    def fmt(self, v: float | None) -> str:
        """The value for tables: rates as percentages, the rest by unit."""
        return fmt_unit(self.unit, v)

    def fmt_delta(self, d: float | None) -> str:
        """A difference of two values (``+1.0 pp`` for rates)."""
        if d is None:
            return "n/a"
        if self.unit == "percent":
            return f"{100 * d:+.1f} pp"
        if self.unit == "count":
            return f"{int(d):+d}"
        return f"{d:+.3g}"

    def worse_by(self, value: float, baseline: float) -> float:
        """How much worse ``value`` is than ``baseline`` (positive = regression)."""
        return value - baseline if self.direction == "lower" else baseline - value


def fmt_unit(unit: Unit, v: float | None) -> str:
    if v is None:
        return "n/a"
    if unit == "percent":
        return f"{100 * v:.1f}%"
    if unit == "count":
        return str(int(v))
    if unit == "usd":
        return f"${v:.4f}"
    if unit == "seconds":
        return f"{v:.2f}s"
    return f"{v:.1f}"


def flag_rate(
    name: str,
    flag: str,
    description: str,
    *,
    direction: Direction = "higher",
    headline: int | None = None,
    summary: int | None = None,
    markdown: int | None = None,
    paired: int | None = None,
    ranking: int | None = None,
) -> Metric:
    """A rate that averages a trial flag over the ``ok`` trials where it applies.

    Trials that did not reach the model (any status but ``ok``) are not model failures
    and stay out of the denominator, as does ``None`` (the flag does not apply).
    """

    def per_trial(df: pd.DataFrame) -> pd.Series[float]:
        col = df[flag].astype("Float64").astype("float64")
        return col.where(df["status"] == "ok")

    def per_row(row: Mapping[str, Any]) -> float | None:
        value = row[flag]
        if row["status"] != "ok" or value is None or value != value:  # None, NA or NaN
            return None
        return float(value)

    return Metric(
        name,
        description,
        per_trial,
        f"trial flag `{flag}`, `ok` trials where it applies",
        direction=direction,
        flag=flag,
        headline=headline,
        summary=summary,
        markdown=markdown,
        paired=paired,
        ranking=ranking,
        per_row=per_row,
    )


# --------------------------------------------------------------------------- the registry

_flags: tuple[str, ...] | None = None
""":func:`score_flags`, kept: the reader asks for it once per results line."""


def changed() -> None:
    """Forget what was derived from the registry (after it is edited in place)."""
    global _flags
    _flags = None


DuplicateMetricError = DuplicateNameError
"""A metric name is registered twice (a plugin may not silently redefine a metric)."""

METRICS: Registry[Metric] = Registry(
    ENTRY_POINT_GROUP, instances_of(Metric), "metric", lambda m: m.name, on_change=changed
)
"""Every metric by name, in table order (built-ins first, then plugins)."""
_REGISTRY = METRICS._items
"""The table itself (tests save and restore it)."""


def register_metric(metric: Metric, *, replace: bool = False) -> Metric:
    """Make ``metric`` known by its name; a name already taken is refused unless
    ``replace`` (so a plugin cannot silently change what a built-in metric means)."""
    return METRICS.register(metric, replace=replace)


def unregister_metric(name: str) -> None:
    """Forget a metric (tests that register toy metrics clean up with this)."""
    METRICS.unregister(name)


def load_entry_points(eps: Iterable[EntryPoint]) -> None:
    """Register the metrics each entry point names; a broken one is one warning line."""
    METRICS.load_entries(eps)


def load_metrics() -> None:
    """Load every installed ``toolbench.metrics`` entry point (once): toolbench's own
    first (the built-ins, in table order), then plugins by name."""
    METRICS.load()


def all_metrics() -> list[Metric]:
    """Every metric, in table order (built-ins first, then plugins, as registered)."""
    return METRICS.values()


def metric_names() -> tuple[str, ...]:
    return tuple(m.name for m in all_metrics())


def find_metric(name: str) -> Metric | None:
    return METRICS.find_item(name)


def get_metric(name: str) -> Metric:
    """The metric called ``name``, else a did-you-mean error listing the metrics."""
    m = find_metric(name)
    if m is None:
        raise UnknownNameError("metric", name, metric_names())
    return m


View = Literal["headline", "summary", "markdown", "paired", "ranking"]


def view(which: View) -> tuple[str, ...]:
    """The metric names shown in one view, in their set order."""
    chosen = [(getattr(m, which), i, m.name) for i, m in enumerate(all_metrics())]
    return tuple(name for pos, _, name in sorted(c for c in chosen if c[0] is not None))


def rates() -> tuple[str, ...]:
    return tuple(m.name for m in all_metrics() if m.kind == "rate")


def score_flags() -> tuple[str, ...]:
    """The trial flags some metric reads, in registration order (trial-table columns)."""
    global _flags
    if _flags is None:
        _flags = tuple(dict.fromkeys(m.flag for m in all_metrics() if m.flag is not None))
    return _flags
