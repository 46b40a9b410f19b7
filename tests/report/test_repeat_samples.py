"""pass@k, pass^k and flip rates on constructed data, checked against brute-force
enumeration of the k-subsets and pairs of samples (not the closed forms under test)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pytest
from synthetic_runs import make_trial, write_run

from toolbench.report.html import render_html
from toolbench.report.markdown import markdown_summary
from toolbench.report.metrics import load_table
from toolbench.report.paired_stats import detectable_difference, pairs_needed, samples_needed
from toolbench.report.repeat_samples import flip_rate as flip
from toolbench.report.repeat_samples import (
    fractional_wilson,
    pass_at_k,
    pass_hat_k,
    repeats,
    top_flippers,
)


def _subsets(outcomes: list[bool], k: int) -> list[tuple[bool, ...]]:
    return list(itertools.combinations(outcomes, k))


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_estimators_equal_enumeration(n: int) -> None:
    for c in range(n + 1):
        outcomes = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            subsets = _subsets(outcomes, k)
            any_pass = sum(any(s) for s in subsets) / len(subsets)
            all_pass = sum(all(s) for s in subsets) / len(subsets)
            assert pass_at_k(n, c, k) == pytest.approx(any_pass)
            assert pass_hat_k(n, c, k) == pytest.approx(all_pass)
        pairs = _subsets(outcomes, 2)
        assert flip(n, c) == pytest.approx(sum(a != b for a, b in pairs) / len(pairs))


def test_known_values() -> None:
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert pass_hat_k(4, 3, 2) == pytest.approx(0.5)  # C(3,2)/C(4,2)
    assert pass_hat_k(3, 2, 3) == 0.0 and pass_at_k(3, 0, 3) == 0.0
    assert flip(4, 2) == pytest.approx(4 / 6) and flip(4, 4) == 0.0 and flip(1, 1) == 0.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_interval_is_wilson_and_wide_at_the_edges() -> None:
    low, high = fractional_wilson(0.0, 10) or (1.0, 0.0)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)  # Wilson 0/10
    assert fractional_wilson(0.5, 0) is None


@pytest.fixture
def three_samples(tmp_path: Path) -> Path:
    """m / xml, 3 samples: s_all passes 3/3, s_two 2/3, s_none 0/3, chitchat_nocall is
    left out (no call accuracy), s_infra 2 answered samples of 3 (one infra error)."""
    plan = {"s_all": [1, 1, 1], "s_two": [1, 0, 1], "s_none": [0, 0, 0]}
    trials = [
        make_trial("m", "xml", sid, i, ok=bool(v))
        for sid, vs in plan.items()
        for i, v in enumerate(vs)
    ]
    trials += [make_trial("m", "xml", "chitchat_nocall", i) for i in range(3)]
    trials += [make_trial("m", "xml", "s_infra", i, ok=i == 0) for i in range(2)]
    trials.append(make_trial("m", "xml", "s_infra", 2, status="infra_error"))
    return write_run(tmp_path / "runs" / "k3", trials)


def test_cell_values(three_samples: Path) -> None:
    (cell,) = repeats(load_table(three_samples).df)
    assert cell.k == 3
    by_id = {s.scenario_id: (s.n, s.successes) for s in cell.scenarios}
    assert by_id == {"s_all": (3, 3), "s_two": (3, 2), "s_none": (3, 0), "s_infra": (2, 1)}
    # pass@3 and pass^3 over the 3 scenarios with 3 scored samples (s_infra has 2).
    assert cell.pass_at_k.value == pytest.approx((1 + 1 + 0) / 3)
    assert cell.pass_hat_k.value == pytest.approx((1 + 0 + 0) / 3)
    assert cell.pass_at_k.scenarios == 3
    assert cell.per_trial.value == pytest.approx(5 / 9)
    # Flipping: s_two and s_infra of the 4 scenarios with 2 or more samples.
    assert cell.flip_rate.value == pytest.approx(2 / 4)
    assert [s.scenario_id for s in top_flippers([cell])] == ["s_infra", "s_two"]
    (cell2,) = repeats(load_table(three_samples).df, k=2)
    assert cell2.pass_hat_k.value == pytest.approx((1 + 1 / 3 + 0 + 0) / 4)


def test_markdown_section(three_samples: Path, run_dir: Path) -> None:
    text = markdown_summary(load_table(three_samples))
    assert "**Repeated samples (k = 3).**" in text
    assert "| m / xml | 55.6% [" in text
    assert "- m / xml / s\\_infra: 100% (1/2 passed)" in text
    # The standard run has 2 samples; one sample per scenario has no section.
    one = write_run(
        run_dir.parent / "one", [make_trial("m", "xml", "s", 0), make_trial("m", "xml", "t", 0)]
    )
    assert "Repeated samples" not in markdown_summary(load_table(one))


def test_samples_needed_closed_form() -> None:
    za, zb = 1.959963984540054, 0.8416212335729143
    # Connor (1987) with psi = 0.2, delta = 0.1: (za sqrt(.2) + zb sqrt(.2 - .01))^2 / .01
    want = (za * math.sqrt(0.2) + zb * math.sqrt(0.19)) ** 2 / 0.01
    assert pairs_needed(0.1, 0.2) == pytest.approx(want)
    assert samples_needed(0.1, 0.2, 10) == math.ceil(want / 10)
    assert samples_needed(0.1, 0.2, 0) is None
    # The detectable difference at n pairs is the smallest delta needing at most n.
    d = detectable_difference(200, 0.2)
    assert d is not None
    assert pairs_needed(d, 0.2) <= 200 < pairs_needed(d - 1e-4, 0.2)


def test_html_section(three_samples: Path) -> None:
    page = render_html(load_table(three_samples))
    assert '<section id="repeats">' in page and "<h2>Repeated samples (k = 3)</h2>" in page
    assert '<td class="l">m / xml</td><td class="l">s_infra</td><td>100%</td>' in page
    assert "<h2>Repeated samples (k = 2)</h2>" in render_html(load_table(three_samples), None, 2)
