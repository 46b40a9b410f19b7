"""The built-in metrics, in table order: the one list of them.

``pyproject.toml`` registers this tuple as the single built-in entry point of the
``toolbench.metrics`` group (plugins add their own entry points), so a new built-in group
is its module and one line here.
"""

from __future__ import annotations

from toolbench.metrics import fallback, faults, latency, loops, scores, streaming, usage, volume
from toolbench.metrics.registry import Metric

METRICS: tuple[Metric, ...] = (
    *scores.METRICS,
    *faults.METRICS,
    *latency.METRICS,
    *usage.METRICS,
    *volume.METRICS,
    *fallback.METRICS,
    *streaming.METRICS,
    *loops.METRICS,
)
