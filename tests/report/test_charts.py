"""The heatmaps: readable axis labels however long the format names are."""

from __future__ import annotations

from itertools import pairwise

import pytest
from matplotlib.figure import Figure

from toolbench.report.charts import heatmap_figure, tick_label
from toolbench.report.metrics import CellStats

DEFAULT_CELLS = [
    "native", "native,stream", "prompt-json", "prompt-json,stream", "prompt-json:shots=2",
    "prompt-json:shots=2,stream", "react", "react,stream", "xml", "xml,stream",
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("xml", "xml"),
        ("prompt-json", "prompt-json"),
        ("prompt-json:shots=2,stream", "prompt-json:\nshots=2,\nstream"),
        ("llama3-json:stream", "llama3-json:\nstream"),
    ],
)
def test_long_format_names_break_after_their_separators(name: str, label: str) -> None:
    assert tick_label(name) == label


def _x_label_boxes(fig: Figure) -> list[tuple[float, float]]:
    fig.canvas.draw()  # type: ignore[no-untyped-call]
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    ax = fig.axes[0]
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
    return [(b.x0, b.x1) for b in boxes]


def test_the_default_matrix_x_labels_do_not_overlap() -> None:
    cells = [
        CellStats(model=m, format=f, values={"call_accuracy": 0.5})
        for m in ("local/gemma3-270m", "local/smollm2-135m")
        for f in DEFAULT_CELLS
    ]
    fig = heatmap_figure(cells, "call_accuracy")
    assert fig is not None
    boxes = _x_label_boxes(fig)
    assert len(boxes) == len(DEFAULT_CELLS)
    for (_, right), (left, _) in pairwise(boxes):
        assert right <= left, "neighbouring x labels overlap"


def test_unbroken_labels_would_overlap() -> None:
    """The check above can fail: the same chart with the names on one line overlaps."""
    cells = [CellStats(model="m", format=f, values={"call_accuracy": 0.5}) for f in DEFAULT_CELLS]
    fig = heatmap_figure(cells, "call_accuracy")
    assert fig is not None
    ax = fig.axes[0]
    ax.set_xticks(range(len(DEFAULT_CELLS)), labels=sorted(DEFAULT_CELLS), fontsize=8)
    boxes = _x_label_boxes(fig)
    assert any(right > left for (_, right), (left, _) in pairwise(boxes))
