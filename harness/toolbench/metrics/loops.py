"""Metrics of loop scenarios (tools that run, :mod:`toolbench.scoring.loop`).

Each rate reads one of the ``loop`` scorer's named values over the ``ok`` trials of loop
scenarios; every other trial leaves the denominator (the value is None there).
"""

from __future__ import annotations

from toolbench.metrics.metric_registry import Metric, flag_rate

METRICS: tuple[Metric, ...] = (
    flag_rate(
        "loop_success",
        "loop_success",
        "share of loop scenarios whose every user turn left the state and results the "
        "ground truth leaves (BFCL's multi-turn check)",
    ),
    flag_rate(
        "state_match",
        "state_match",
        "share of loop scenarios whose state after every checked turn equals the ground truth's",
    ),
    flag_rate(
        "exec_match",
        "exec_match",
        "share of loop scenarios whose calls produced every ground-truth result, turn by turn",
    ),
    flag_rate(
        "asked_when_missing",
        "asked_when_missing",
        "share of loop scenarios with a missing parameter or function where the model asked "
        "instead of calling",
    ),
)
