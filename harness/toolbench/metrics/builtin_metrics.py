"""The built-in metrics, in table order: the one list of them.

``pyproject.toml`` registers this tuple as the single built-in entry point of the
``toolbench.metrics`` group (plugins add their own entry points), so a new built-in group
is its module and one line here.
"""

from __future__ import annotations

from toolbench.metrics import (
    fault_rates,
    latency,
    loops,
    rescue_rates,
    scores,
    stream_metrics,
    usage,
    volume,
)
from toolbench.metrics.metric_registry import Metric

METRICS: tuple[Metric, ...] = (
    *scores.METRICS,
    *fault_rates.METRICS,
    *latency.METRICS,
    *usage.METRICS,
    *volume.METRICS,
    *rescue_rates.METRICS,
    *stream_metrics.METRICS,
    *loops.METRICS,
)
