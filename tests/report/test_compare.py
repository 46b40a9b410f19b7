from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.errors import UserError
from toolbench.report.compare import compare_formats, compare_runs, render_comparison
from toolbench.report.metrics import load_table
from toolbench.report.paired_stats import mcnemar_exact


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (10, 2, 0.03857),
        (2, 10, 0.03857),
        (0, 0, 1.0),
        (5, 5, 1.0),
        (0, 6, 0.03125),
        (1, 0, 1.0),
        (0, 5, 0.0625),
    ],
)
def test_mcnemar_exact_known_values(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p, abs=1e-5)


def test_compare_runs_pairs_trials(run_dir: Path, regressed_run: Path) -> None:
    cmp = compare_runs(load_table(run_dir), load_table(regressed_run))
    test = next(
        t for t in cmp.tests if t.group == "m-alpha / prompt-json" and t.metric == "call_accuracy"
    )
    # weather_basic x 2 samples passed in r1 and failed in r2; trip_multi x 2 unchanged.
    assert (test.n_pairs, test.only_a, test.only_b) == (4, 2, 0)
    assert test.p_value == pytest.approx(0.5)
    text = render_comparison(cmp)
    assert "m-alpha / prompt-json  call_accuracy           100.0%   50.0%    -50.0 pp" in text


def test_compare_formats_within_run(run_dir: Path) -> None:
    cmp = compare_formats(load_table(run_dir), "prompt-json", "xml")
    t = next(t for t in cmp.tests if t.group == "m-beta" and t.metric == "call_accuracy")
    assert (t.n_pairs, t.only_a, t.only_b) == (4, 2, 0)
    alpha = next(t for t in cmp.tests if t.group == "m-alpha" and t.metric == "call_accuracy")
    assert alpha.n_pairs == 3  # the infra-error trial has no pair


def test_compare_formats_unknown_format(run_dir: Path) -> None:
    with pytest.raises(UserError, match="--formats: format 'react' is not in run 'r1'"):
        compare_formats(load_table(run_dir), "react", "xml")
