"""Every rate is shown with its Wilson 95% interval and its denominator, in the terminal
table, the HTML report and the Markdown summary (also when samples do not repeat)."""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic_runs import make_trial, write_run

from toolbench.cli.run_view import print_summary
from toolbench.report import render_report
from toolbench.report.metrics import (
    aggregate,
    cell_map,
    fmt_with_interval,
    interval_text,
    load_table,
    wilson,
)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """One sample per scenario: 3 of 4 calls right on xml, 1 of 4 on react."""
    trials = [
        make_trial("m", fmt, f"weather_{i}", 0, ok=i < n_ok)
        for fmt, n_ok in (("xml", 3), ("react", 1))
        for i in range(4)
    ]
    return write_run(tmp_path / "r", trials)


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [(3, 4, 0.3006, 0.9544), (0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (1, 1, 0.2065, 1.0)],
)
def test_wilson_matches_the_textbook_values(k: int, n: int, low: float, high: float) -> None:
    ci = wilson(k, n)
    assert ci is not None
    assert ci == pytest.approx((low, high), abs=5e-5)


def test_interval_text_and_value(run: Path) -> None:
    cell = cell_map(aggregate(load_table(run).df))[("m", "xml")]
    assert interval_text(cell, "call_accuracy") == "[30.1, 95.4] n=4"
    assert fmt_with_interval(cell, "call_accuracy") == "75.0% [30.1, 95.4] n=4"
    assert fmt_with_interval(cell, "latency_p50") == "0.50s"  # a value: no interval
    assert fmt_with_interval(cell, "no_call_accuracy") == "n/a n=0"  # no denominator


def test_terminal_table_shows_interval_and_n_under_each_rate(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    print_summary(run, write_report=False, quiet=True)
    lines = capsys.readouterr().out.splitlines()
    row = next(i for i, line in enumerate(lines) if "m / xml" in line)
    assert "75.0%" in lines[row] and "[30.1, 95.4]" in lines[row + 1] and "n=4" in lines[row + 2]
    react = next(i for i, line in enumerate(lines) if "m / react" in line)
    assert "25.0%" in lines[react] and "[4.6, 69.9]" in lines[react + 1]


def test_html_shows_interval_and_n_with_one_sample(run: Path) -> None:
    page = render_report(run, "html")
    assert '75.0%<span class="ci">[30.1, 95.4] n=4</span>' in page
    assert "Wilson 95% interval" in page


def test_markdown_shows_interval_and_n(run: Path) -> None:
    md = render_report(run, "md")
    row = next(line for line in md.splitlines() if line.startswith("| m / xml |"))
    assert "75.0% [30.1, 95.4] n=4" in row
    assert "Wilson 95%" in md
