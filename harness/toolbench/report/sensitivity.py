"""Format sensitivity: how far one model's accuracy moves across a grid of one format.

A *grid* is a set of cells that share a model and a base format and differ only in the
format's prompt axes (``prompt-json:doc=python``, ``prompt-json:doc=json``, ...; issue 37),
grouped by the stored spec alone (:mod:`toolbench.grid_axes`: the report reads the store,
nothing below it): the spec without its axes is the grid's base (``shots=2`` or
``:stream`` make another base), and an axis a spec does not write is at the format's
default (the run's canonical specs write only what differs from it).
The question it answers is the one BFCL's format-sensitivity table asks: does the model
know the task, or only one way of being asked? For each grid this module gives every
point's call accuracy with its Wilson 95% interval, the *spread* (best point minus worst,
the points with a value), and the axis that *moves it most*: for each axis, the mean
accuracy of the points at each of its values, and the axis whose means lie furthest apart
(ties by name). Shown only when the run holds a grid; a run of unrelated formats, or of
one format with and without worked examples, has no sensitivity to report.

The chart is drawn by matplotlib's Agg backend into a PNG ``data:`` URI (as
:mod:`toolbench.report.charts`): only numbers and the run's own model and format names
reach it, and as an image it cannot carry markup. The table beside it reaches the page
through the autoescaping template like every other value.
"""

from __future__ import annotations

import base64
import io
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from toolbench.grid_axes import DEFAULT, grid_base, grid_point, writes_axes
from toolbench.report.metrics import OVERALL, CellStats

METRIC = "call_accuracy"
"""The rate the chart shows: a correct call is what a format exists to get."""
_SAME = 1e-12
"""Accuracies closer than this are level (means of the same counts can differ by rounding)."""


@dataclass(frozen=True)
class GridPoint:
    """One cell of a grid: its format spec, its axis values, its accuracy."""

    format: str
    axes: dict[str, str]
    value: float | None
    """Call accuracy (None: no trial it applies to)."""
    k: int
    n: int
    interval: tuple[float, float] | None


@dataclass(frozen=True)
class AxisEffect:
    """How far the mean accuracy at each value of one axis lies apart."""

    axis: str
    means: dict[str, float]
    """Axis value -> mean accuracy of the points at it (points with a value only)."""

    @property
    def range(self) -> float:
        return max(self.means.values()) - min(self.means.values())


@dataclass(frozen=True)
class Grid:
    """One model's points of one base format, and what moves them."""

    model: str
    base: str
    points: list[GridPoint]

    def _valued(self) -> list[GridPoint]:
        return [p for p in self.points if p.value is not None]

    @property
    def best(self) -> GridPoint | None:
        valued = self._valued()
        return max(valued, key=lambda p: (p.value, p.format)) if valued else None

    @property
    def worst(self) -> GridPoint | None:
        valued = self._valued()
        return min(valued, key=lambda p: (p.value, p.format)) if valued else None

    @property
    def spread(self) -> float | None:
        """Best point minus worst point (None with fewer than two valued points)."""
        if len(self._valued()) < 2:
            return None
        best, worst = self.best, self.worst
        assert best is not None and worst is not None and best.value is not None
        assert worst.value is not None
        return best.value - worst.value

    def effects(self) -> list[AxisEffect]:
        """Every axis that takes two values or more among valued points, the largest
        range first (ties by name)."""
        keys = sorted({k for p in self.points for k in p.axes})
        out: list[AxisEffect] = []
        for key in keys:
            groups: dict[str, list[float]] = defaultdict(list)
            for p in self._valued():
                assert p.value is not None
                groups[p.axes.get(key, DEFAULT)].append(p.value)
            if len(groups) >= 2:
                means = {v: sum(xs) / len(xs) for v, xs in sorted(groups.items())}
                out.append(AxisEffect(key, means))
        return sorted(out, key=lambda e: (-e.range, e.axis))

    @property
    def top_axis(self) -> AxisEffect | None:
        """The axis that moves accuracy most; None when no axis moves it at all."""
        effects = self.effects()
        return effects[0] if effects and effects[0].range > _SAME else None

    @property
    def ends(self) -> tuple[GridPoint, GridPoint] | None:
        """``(best, worst)``, or None when every valued point is level (no best to name)."""
        spread = self.spread
        if spread is None or spread <= _SAME or self.best is None or self.worst is None:
            return None
        return self.best, self.worst


def grids(cells: Sequence[CellStats], metric: str = METRIC) -> list[Grid]:
    """The grids of a run's cells: per model, each base format with two points or more."""
    by: dict[tuple[str, str], list[GridPoint]] = defaultdict(list)
    for c in cells:
        if c.model == OVERALL:
            continue
        k, n = c.counts.get(metric, (0, 0))
        by[(c.model, grid_base(c.format))].append(
            GridPoint(
                c.format, grid_point(c.format), c.values.get(metric), k, n, c.interval(metric)
            )
        )
    return [
        Grid(model, base, sorted(points, key=lambda p: p.format))
        for (model, base), points in sorted(by.items())
        if any(writes_axes(p.format) for p in points)
        and len({tuple(sorted(p.axes.items())) for p in points}) >= 2
    ]


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}%"


def _pp(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f} pp"


def chart_figure(grid: Grid) -> Figure:
    """One panel: each point's accuracy with its interval, best and worst marked."""
    height = 0.9 + 0.32 * len(grid.points)
    fig = Figure(figsize=(6.4, height), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    best, worst = grid.ends or (None, None)
    for i, p in enumerate(grid.points):
        if p.value is None:
            ax.text(0.01, i, "n/a", va="center", fontsize=8, color="#7a8291")
            continue
        low, high = p.interval if p.interval else (p.value, p.value)
        # Wilson's bound at 0 of n (or n of n) can miss the value by a rounding error
        low, high = min(low, p.value), max(high, p.value)
        colour = "#137333" if p is best else ("#b3261e" if p is worst else "#1d2330")
        ax.errorbar(
            100 * p.value, i, xerr=[[100 * (p.value - low)], [100 * (high - p.value)]],
            fmt="o", color=colour, ecolor="#9aa3b2", capsize=3, markersize=5,
        )  # fmt: skip
        ax.text(100 * high + 1.5, i, f"{100 * p.value:.0f}% (n={p.n})", va="center", fontsize=7)
    ax.set_yticks(range(len(grid.points)), labels=[p.format for p in grid.points], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 118)
    ax.set_xticks([0, 25, 50, 75, 100], labels=["0", "25", "50", "75", "100%"], fontsize=8)
    ax.grid(axis="x", color="#eceef2")
    top = grid.top_axis
    moved = f", most by {top.axis} ({_pp(top.range)})" if top else ", no axis moves it"
    ax.set_title(f"{grid.model} · {grid.base}\nspread {_pp(grid.spread)}{moved}", fontsize=9)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


def chart_png(grid: Grid) -> str:
    buf = io.BytesIO()
    chart_figure(grid).savefig(buf, format="png")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def sensitivity_view(cells: Sequence[CellStats]) -> dict[str, Any] | None:
    """What the HTML section shows (None: the run holds no grid)."""
    found = grids(cells)
    if not found:
        return None
    views = []
    for g in found:
        top = g.top_axis
        views.append(
            {
                "model": g.model,
                "base": g.base,
                "chart": chart_png(g),
                "spread": _pp(g.spread),
                "best": g.ends[0].format if g.ends else None,
                "worst": g.ends[1].format if g.ends else None,
                "top_axis": top.axis if top else None,
                "top_range": _pp(top.range) if top else None,
                "effects": [
                    {
                        "axis": e.axis,
                        "range": _pp(e.range),
                        "means": ", ".join(f"{v}: {_pct(m)}" for v, m in e.means.items()),
                    }
                    for e in g.effects()
                ],
                "points": [
                    {
                        "format": p.format,
                        "value": _pct(p.value),
                        "interval": (
                            f"[{100 * p.interval[0]:.1f}, {100 * p.interval[1]:.1f}]"
                            if p.interval
                            else ""
                        ),
                        "n": p.n,
                    }
                    for p in g.points
                ],
            }
        )
    return {"metric": METRIC, "grids": views}
