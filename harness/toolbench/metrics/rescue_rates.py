"""How often a fallback composition's second parser rescued a reply (``native|xml``).

A composition reads a reply with its primary format first; when that finds no call and
the fallback's parser does, the fallback's calls are used (:mod:`toolbench.formats.composition`).
This rate counts the trials where that happened at least once, over the ``ok`` trials
of compositions (other formats leave it ``n/a``). It has no better direction: a high
rate says the primary path often fails and the fallback is what makes the calls work.
"""

from __future__ import annotations

from toolbench.metrics.metric_registry import Metric, flag_rate

METRICS: tuple[Metric, ...] = (
    flag_rate(
        "fallback_rescue_rate",
        "fallback_rescued",
        "share of trials of a fallback composition (`native|xml`) in which the fallback's "
        "parser produced the calls of a reply the primary found no call in",
        direction="none",
    ),
)
