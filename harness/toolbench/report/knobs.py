"""Cells whose knob was not applied: a format option the provider does not take.

``native:tool_choice=required`` on a provider without ``tool_choice`` (or
``native:parallel=false`` without ``parallel_tool_calls``) is dropped before the request
is sent, as any parameter a model does not take, and each trial records it
(``params.asked`` and ``params.dropped``). The cell then measured the provider's default,
not the knob: the report says so next to it, so no comparison pretends the knob was
tested. Read from the trial table (:func:`~toolbench.report.metrics.dropped_knobs`), as
the run stored it: no format is built again.
"""

from __future__ import annotations

from toolbench.report.metrics import TrialTable


def not_applied(table: TrialTable) -> dict[tuple[str, str], dict[str, str]]:
    """Per ``(model, format)`` cell, each knob dropped on some trial and why."""
    df = table.df
    if "_knobs" not in df or not len(df):
        return {}
    hit = df[df["_knobs"].notna()]
    out: dict[tuple[str, str], dict[str, str]] = {}
    for model, fmt, knobs in zip(hit["model"], hit["format"], hit["_knobs"], strict=True):
        out.setdefault((str(model), str(fmt)), {}).update(knobs)
    return out


def not_applied_lines(table: TrialTable) -> list[str]:
    """One line per cell whose knob was not applied (for the reports' notes)."""
    return [
        f"{model} / {fmt}: not applied ({'; '.join(f'{k}: {why}' for k, why in knobs.items())})"
        for (model, fmt), knobs in sorted(not_applied(table).items())
    ]
