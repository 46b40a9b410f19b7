"""Cells whose knob was not applied: a format option the provider does not take.

``native:tool_choice=required`` on a provider without ``tool_choice`` (or
``native:parallel=false`` without ``parallel_tool_calls``) is dropped before the request
is sent, as any parameter a model does not take, and each trial records it
(``params.dropped``). The cell then measured the provider's default, not the knob: the
report says so next to it, so no comparison pretends the knob was tested.
"""

from __future__ import annotations

from toolbench.report.metrics import TrialTable

KNOB_PARAMS = ("tool_choice", "parallel_tool_calls", "response_format")
"""The request parameters a format option sends (:attr:`RenderedRequest.params`)."""


def _has_knobs(spec: str) -> bool:
    """Whether the format ``spec`` sends a knob (a spec that no longer builds: no)."""
    from toolbench.formats.registry import get_format
    from toolbench.tools import ToolDef

    try:
        probe = ToolDef(name="probe")
        return bool(get_format(spec).render([probe], [{"role": "user", "content": ""}]).params)
    except Exception:
        return False


def not_applied(table: TrialTable) -> dict[tuple[str, str], dict[str, str]]:
    """Per ``(model, format)`` cell, each knob dropped on some trial and why. Reads the
    full records of the cells with knobs only."""
    df = table.df
    specs = [f for f in df["format"].unique() if _has_knobs(str(f))]
    if not specs or "_offset" not in df:
        return {}
    out: dict[tuple[str, str], dict[str, str]] = {}
    for r in table.trials(df.loc[df["format"].isin(specs), "_offset"].tolist()):
        dropped = r.params.dropped if r.params is not None else {}
        for knob in KNOB_PARAMS:
            if knob in dropped:
                out.setdefault((r.model, r.format), {})[knob] = dropped[knob]
    return out


def not_applied_lines(table: TrialTable) -> list[str]:
    """One line per cell whose knob was not applied (for the reports' notes)."""
    return [
        f"{model} / {fmt}: not applied ({'; '.join(f'{k}: {why}' for k, why in knobs.items())})"
        for (model, fmt), knobs in sorted(not_applied(table).items())
    ]
