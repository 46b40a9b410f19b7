"""The streaming section of the reports: what streamed trials measured, per cell.

Shown only when a run has streamed trials (``FORMAT:stream``). Per streamed cell: the
distribution (10th, 50th and 90th percentile, over ``ok`` trials) of time to first token,
time to the first call byte, time to call complete, output tokens per second and the
time text was held back, the stream-leak rate under the run's display policy, the mean
leaked characters and ``stream_consistency`` against the non-streamed twin. The HTML
section adds box plots of the timing distributions and a heatmap of the stream leak;
charts are images of numbers and cell names only, tables go through autoescaping
(HTML) or :func:`~toolbench.report.markdown._md` (Markdown).
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from toolbench.report.charts import heatmap_png
from toolbench.report.metrics import OVERALL, CellStats, TrialTable, fmt_value
from toolbench.stream_option import split_stream

DISTRIBUTIONS: tuple[tuple[str, str, str], ...] = (
    ("ttft_s", "time to first token", "seconds"),
    ("first_call_byte_s", "time to first call byte", "seconds"),
    ("call_complete_s", "time to call complete", "seconds"),
    ("tokens_per_s", "output tokens/s", "number"),
    ("holdback_s", "held back", "seconds"),
)
"""Trial-table column, label, unit of each distribution shown."""
RATES = ("stream_leak_rate", "leaked_chars_mean", "stream_error_rate", "stream_consistency")


def _streamed(df: pd.DataFrame) -> pd.Series[bool]:
    return df["format"].map(lambda f: split_stream(str(f))[1]).astype(bool)


def _quantiles(s: pd.Series[float]) -> tuple[float, float, float] | None:
    s = s.dropna()
    if not len(s):
        return None
    q = s.quantile([0.1, 0.5, 0.9])
    return (float(q.iloc[0]), float(q.iloc[1]), float(q.iloc[2]))


def _fmt(unit: str, v: float) -> str:
    return f"{v:.2f}s" if unit == "seconds" else f"{v:.1f}"


def stream_rows(table: TrialTable, cells: Sequence[CellStats]) -> list[dict[str, Any]]:
    """One row per streamed cell: its distributions (as text) and its streaming metrics."""
    df = table.df
    if not len(df):
        return []
    ok = df[_streamed(df) & (df["status"] == "ok")]
    by_cell = {(str(m), str(f)): g for (m, f), g in ok.groupby(["model", "format"], sort=True)}
    rows = []
    for c in cells:
        if c.model == OVERALL or not split_stream(c.format)[1]:
            continue
        g = by_cell.get(c.key)
        dists = []
        for col, label, unit in DISTRIBUTIONS:
            q = _quantiles(g[col]) if g is not None else None
            text = "n/a" if q is None else " / ".join(_fmt(unit, v) for v in q)
            dists.append({"label": label, "text": text})
        rows.append({
            "label": c.label, "n": 0 if g is None else len(g), "dists": dists,
            "metrics": [{"name": m, "text": fmt_value(m, c.values.get(m)),
                         "n": c.counts.get(m, (0, 0))[1]} for m in RATES],
        })  # fmt: skip
    return rows


def boxplot_png(table: TrialTable, column: str, label: str) -> str | None:
    """Box plots of one timing column per streamed cell (``ok`` trials), as a data URI."""
    df = table.df
    ok = df[_streamed(df) & (df["status"] == "ok")]
    groups = [
        (f"{m} / {f}", [float(x) for x in g[column].dropna() if not math.isnan(float(x))])
        for (m, f), g in ok.groupby(["model", "format"], sort=True)
    ]
    groups = [(name, xs) for name, xs in groups if xs]
    if not groups:
        return None
    fig = Figure(figsize=(1.6 + 1.1 * len(groups), 3.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.boxplot([xs for _, xs in groups])
    ax.set_xticks(range(1, len(groups) + 1), labels=[n for n, _ in groups], fontsize=7)
    ax.tick_params(axis="x", labelrotation=20)
    ax.set_ylabel("seconds", fontsize=8)
    ax.set_title(label, fontsize=10)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def streaming_view(table: TrialTable, cells: Sequence[CellStats]) -> dict[str, Any] | None:
    """The HTML section's context, or None when the run streamed nothing."""
    rows = stream_rows(table, cells)
    if not rows:
        return None
    streamed = [c for c in cells if c.model != OVERALL and split_stream(c.format)[1]]
    plots = [
        (label, uri)
        for col, label, _ in DISTRIBUTIONS[:3]
        if (uri := boxplot_png(table, col, label))
    ]
    leak = heatmap_png(streamed, "stream_leak_rate")
    display = table.info.display if table.info else "careful"
    return {"rows": rows, "plots": plots, "leak_heatmap": leak, "display": display,
            "dist_labels": [d[1] for d in DISTRIBUTIONS], "metrics": list(RATES)}  # fmt: skip


def streaming_markdown(table: TrialTable, cells: Sequence[CellStats], md: Any) -> list[str]:
    """The Markdown section's lines (none when the run streamed nothing); ``md`` escapes."""
    rows = stream_rows(table, cells)
    if not rows:
        return []
    display = table.info.display if table.info else "careful"
    head = ["cell", "n", *(d[1] for d in DISTRIBUTIONS), *RATES]
    lines = [
        "",
        f"### Streaming (display policy: {md(display)}; p10 / p50 / p90)",
        "",
        "| " + " | ".join(head) + " |",
        "|---" * len(head) + "|",
    ]
    for r in rows:
        cols = [md(r["label"]), str(r["n"]), *(d["text"] for d in r["dists"]),
                *(m["text"] for m in r["metrics"])]  # fmt: skip
        lines.append("| " + " | ".join(cols) + " |")
    return lines
