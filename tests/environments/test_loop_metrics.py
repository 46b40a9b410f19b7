"""The loop rates read the loop scorer's values over the ok trials where they apply."""

from __future__ import annotations

import pandas as pd
import pytest

from toolbench.metrics.metric_registry import get_metric


@pytest.mark.parametrize(
    "name", ["loop_success", "state_match", "exec_match", "asked_when_missing"]
)
def test_loop_rates_read_the_loop_values(name: str) -> None:
    df = pd.DataFrame({"status": ["ok", "ok", "ok", "infra_error"],
                       name: [True, False, None, True]})  # fmt: skip
    metric = get_metric(name)
    assert metric.value(metric.per_trial(df)) == (0.5, (1, 2))
