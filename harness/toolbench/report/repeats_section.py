"""The reports' section on repeated samples: pass@k, pass^k and flips per cell.

Shown only when the run has at least two samples per scenario (``run --samples K``):
with one sample pass@1 and pass^1 repeat the per-trial rate and nothing can flip. What
the numbers mean is :mod:`toolbench.report.repeat_samples`; this module lays them out for
the HTML page (a view of plain values, autoescaped by the template) and the Markdown
summary (through the caller's escaping function: scenario ids come from the user's
files).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolbench.report.metrics import TrialTable
from toolbench.report.repeat_samples import (
    SUCCESS_COLUMNS,
    CellRepeats,
    repeats,
    samples_per_scenario,
    top_flippers,
)

SUCCESS_TEXT = (
    f"A trial succeeds by its {SUCCESS_COLUMNS[0]} on loop scenarios, else by its "
    f"{SUCCESS_COLUMNS[1]}; values are means over scenarios, Wilson 95% interval, "
    "s = scenarios."
)


def cells_for(table: TrialTable, k: int | None = None) -> list[CellRepeats] | None:
    """The section's cells, or None when the run has fewer than two samples."""
    if samples_per_scenario(table.df) < 2:
        return None
    return repeats(table.df, k)


def repeats_view(table: TrialTable, k: int | None = None) -> dict[str, Any] | None:
    """What the HTML section shows (None: no section)."""
    cells = cells_for(table, k)
    if cells is None:
        return None
    return {
        "k": cells[0].k if cells else k,
        "note": SUCCESS_TEXT,
        "cells": [
            {
                "label": c.label,
                "per_trial": c.per_trial.text(),
                "pass_at_k": c.pass_at_k.text(),
                "pass_hat_k": c.pass_hat_k.text(),
                "flip_rate": c.flip_rate.text(),
            }
            for c in cells
        ],
        "flippers": [
            {
                "cell": f"{s.model} / {s.format}",
                "scenario": s.scenario_id,
                "flip_rate": f"{100 * s.flip_rate:.0f}%",
                "passed": f"{s.successes}/{s.n}",
            }
            for s in top_flippers(cells)
        ],
    }


def repeats_markdown(
    table: TrialTable, md: Callable[[str], str], k: int | None = None
) -> list[str]:
    """The Markdown section's lines (none when the run has one sample)."""
    view = repeats_view(table, k)
    if view is None:
        return []
    k = view["k"]
    lines = [
        "",
        f"**Repeated samples (k = {k}).** {SUCCESS_TEXT}",
        "",
        f"| cell | per trial | pass@{k} | pass^{k} | flipping scenarios |",
        "|---|---|---|---|---|",
    ]
    for c in view["cells"]:
        row = [md(c["label"]), c["per_trial"], c["pass_at_k"], c["pass_hat_k"], c["flip_rate"]]
        lines.append("| " + " | ".join(row) + " |")
    if view["flippers"]:
        lines += ["", "Scenarios that flip most (share of sample pairs that disagree):", ""]
        lines += [
            f"- {md(f['cell'])} / {md(f['scenario'])}: {f['flip_rate']} ({f['passed']} passed)"
            for f in view["flippers"]
        ]
    return lines
