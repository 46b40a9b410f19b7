"""Progress lines for a run without a terminal (a CI log): when they come and what they say."""

from __future__ import annotations

import io

import pytest

from toolbench.cli.progress_lines import ProgressLines, clock_text


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (12.4, "12s"), (65, "1m05s"), (5940, "1h39m"), (-3, "0s")],
)
def test_clock_text(seconds: float, text: str) -> None:
    assert clock_text(seconds) == text


def test_a_line_after_the_first_trial_then_every_interval_and_at_the_end() -> None:
    clock, out = Clock(), io.StringIO()
    lines = ProgressLines(10, out, every_s=30.0, clock=clock)
    for k in range(10):
        clock.now += 10.0  # a trial every 10 s
        lines.advance(ok=k != 3)
    printed = out.getvalue().splitlines()
    assert printed == [
        "trials 1/10 (10%), not ok 0, elapsed 10s, eta 1m30s",
        "trials 4/10 (40%), not ok 1, elapsed 40s, eta 1m00s",
        "trials 7/10 (70%), not ok 1, elapsed 1m10s, eta 30s",
        "trials 10/10 (100%), not ok 1, elapsed 1m40s",
    ]


def test_a_single_trial_run_prints_one_final_line() -> None:
    clock, out = Clock(), io.StringIO()
    lines = ProgressLines(1, out, clock=clock)
    clock.now += 2.0
    lines.advance(ok=False)
    assert out.getvalue() == "trials 1/1 (100%), not ok 1, elapsed 2s\n"
