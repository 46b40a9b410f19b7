"""Metrics as registered objects (see :mod:`toolbench.metrics.metric_registry`).

One module per group of built-in metrics (``scores``, ``faults``, ``latency``, ``usage``,
``volume``), each registered through the entry-point group ``toolbench.metrics`` like a
plugin; ``python -m toolbench.metrics.metrics_doc`` prints the README's metric table.
"""

from toolbench.metrics.metric_registry import (
    ENTRY_POINT_GROUP,
    Metric,
    all_metrics,
    find_metric,
    flag_rate,
    get_metric,
    load_metrics,
    metric_names,
    rates,
    register_metric,
    score_flags,
    unregister_metric,
    view,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Metric",
    "all_metrics",
    "find_metric",
    "flag_rate",
    "get_metric",
    "load_metrics",
    "metric_names",
    "rates",
    "register_metric",
    "score_flags",
    "unregister_metric",
    "view",
]
