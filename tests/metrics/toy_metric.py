"""A metric plugin as a third party would write it: one module, one entry point
(``first_try = "tests.metrics.toy_metric:METRICS"``), nothing else edited."""

from __future__ import annotations

from toolbench.plugin import Metric, flag_rate

METRICS: tuple[Metric, ...] = (
    flag_rate(
        "first_try_rate",
        "first_try_ok",
        "share of trials whose calls parsed without the retry",
        summary=80,
        paired=30,
    ),
)
