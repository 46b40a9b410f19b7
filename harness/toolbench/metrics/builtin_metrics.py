"""The built-in metrics, in table order: the one list of them.

``pyproject.toml`` registers this tuple as the single built-in entry point of the
``toolbench.metrics`` group (plugins add their own entry points), so a new built-in group
is its module and one line here.
"""

from __future__ import annotations

from toolbench.metrics import fault_rates as faults
from toolbench.metrics import latency, loops, scores, usage, volume
from toolbench.metrics import rescue_rates as fallback
from toolbench.metrics import stream_metrics as streaming
from toolbench.metrics.metric_registry import Metric

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
