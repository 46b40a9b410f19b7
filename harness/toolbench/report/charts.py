"""Heatmaps of headline metrics (model x format), rendered by matplotlib's Agg backend to
PNG and embedded as ``data:`` URIs, so the report needs no external asset.

Only numbers and the run's own model/format names reach the chart; model output never
does, and the chart is an image, so it cannot carry markup.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from toolbench.metrics import find_metric
from toolbench.report.metrics import (
    OVERALL,
    CellStats,
    fmt_value,
)

TICK_WIDTH = 12
"""Characters a tick label line holds before it breaks (a format is about 1 inch wide)."""


def tick_label(name: str, width: int = TICK_WIDTH) -> str:
    """A format name broken into lines after its separators (``:`` ``,`` ``|``), so that
    ``prompt-json:shots=2,stream`` does not run over its neighbours' labels."""
    lines: list[str] = []
    line = ""
    for ch in name:
        line += ch
        if (ch in ":,|" and len(line) >= width // 2) or (len(line) >= width and ch in "-_="):
            lines.append(line)
            line = ""
    if line:
        lines.append(line)
    return "\n".join(lines)


def heatmap_figure(cells: Sequence[CellStats], metric: str) -> Figure | None:
    """The heatmap of ``metric`` (model x format), or None when no cell has it."""
    grid = [c for c in cells if c.model != OVERALL]
    models = sorted({c.model for c in grid})
    formats = sorted({c.format for c in grid})
    if not models or not formats:
        return None
    val = {(c.model, c.format): c.values.get(metric) for c in grid}
    if all(v is None for v in val.values()):
        return None
    nan = float("nan")
    data = [[(v if (v := val.get((m, f))) is not None else nan) for f in formats] for m in models]
    width = 1.4 + 1.0 * len(formats)
    height = 0.9 + 0.38 * len(models)
    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    registered = find_metric(metric)
    lower = registered is not None and registered.direction == "lower"
    name = "RdYlGn_r" if lower else "RdYlGn"
    cmap = matplotlib.colormaps[name].with_extremes(bad="#dddddd")
    # A clipped range keeps the extremes light enough for black labels.
    ax.imshow(data, cmap=cmap, vmin=-0.25, vmax=1.25, aspect="auto")
    ax.set_xticks(range(len(formats)), labels=[tick_label(f) for f in formats], fontsize=8)
    ax.set_yticks(range(len(models)), labels=models, fontsize=8)
    ax.tick_params(length=0)
    ax.set_title(metric, fontsize=10)
    for i, m in enumerate(models):
        for j, f in enumerate(formats):
            v = val.get((m, f))
            ax.text(j, i, fmt_value(metric, v), ha="center", va="center", fontsize=8)
    for side in ax.spines.values():
        side.set_visible(False)
    fig.tight_layout()
    return fig


def heatmap_png(cells: Sequence[CellStats], metric: str) -> str | None:
    """A ``data:image/png;base64,...`` heatmap of ``metric``, or None when no cell has it."""
    fig = heatmap_figure(cells, metric)
    if fig is None:
        return None
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
