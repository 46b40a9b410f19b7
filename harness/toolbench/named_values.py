"""A trial's named value as stored, and how a stored ``scores`` record is read by name.

A leaf beside :mod:`toolbench.trial_scores` (the pydantic models that hold the values),
so a metric that reads a stored record by name loads no pydantic: the metric registry
is read to check a ``gate`` bound, before any run is.
"""

from __future__ import annotations

from typing import Any

Value = bool | int | float | str | None
"""A named value (None: not applicable to this trial, left out of every metric over it)."""


def named_value(scores: dict[str, Any], name: str) -> Value:
    """The value called ``name`` in a stored (JSON-decoded) ``scores`` record:
    ``values[name].value``; None when absent. Reports read raw lines through this."""
    entry = (scores.get("values") or {}).get(name)
    if isinstance(entry, dict):
        v = entry.get("value")
        return v if isinstance(v, bool | int | float | str) else None
    return None
